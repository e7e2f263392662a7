/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include "tomo-test-util.h"

void
tomo_test_result_clear (TomoTestResult *r)
{
  g_clear_pointer (&r->out, g_free);
  g_clear_pointer (&r->err, g_free);
}

void
tomo_test_run_argv (TomoTestResult *r,
                    const char    **args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  const char *tomolive = g_getenv ("TOMOLIVE");
  int wait_status;

  g_assert_nonnull (tomolive);
  g_ptr_array_add (argv, (char *) tomolive);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                &r->out, &r->err, &wait_status, &error);
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128 + WTERMSIG (wait_status);
  if (r->status != 0)
    g_test_message ("tomolive exited %d: %s", r->status, r->err);
}

void
tomo_test_assert_fails_with (TomoTestResult *r,
                             const char     *words)
{
  g_assert_cmpint (r->status, ==, 1);
  g_assert_nonnull (strstr (r->err, "tomolive: "));
  if (strstr (r->err, words) == NULL)
    g_error ("expected “%s” in the error, got: %s", words, r->err);
}
