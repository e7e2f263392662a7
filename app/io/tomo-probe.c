/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Untrusted HDF5 files are first read in a helper process, so that a fault
 * inside libhdf5 kills the helper, not the viewer or the command.
 */
#define G_LOG_DOMAIN "tomo-probe"
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "tomo-error.h"
#include "tomo-memory.h"
#include "tomo-probe.h"

#define DEFAULT_TIMEOUT_S 20.0
#define PROBE_ADDRESS_SPACE ((guint64) 3 << 30)
#define PROBE_BUDGET ((guint64) 2 << 30)

static gboolean
is_hdf5 (const char *path)
{
  static const guchar signature[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
  guchar head[8];
  FILE *f = fopen (path, "rb");
  gboolean ok;

  if (f == NULL)
    return FALSE;
  ok = fread (head, 1, sizeof head, f) == sizeof head && memcmp (head, signature, 8) == 0;
  fclose (f);
  return ok;
}

/* This process when it is tomolive, else $TOMOLIVE (tests), else NULL. */
static char *
find_helper (void)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *base = self ? g_path_get_basename (self) : NULL;
  const char *env = g_getenv ("TOMOLIVE");

  if (base != NULL && g_str_has_prefix (base, "tomolive"))
    return g_steal_pointer (&self);
  if (env != NULL && g_file_test (env, G_FILE_TEST_IS_EXECUTABLE))
    return g_strdup (env);
  return NULL;
}

static rlim_t child_as_limit;

/* AddressSanitizer reserves terabytes of address space for its shadow: a
 * sanitized helper gets no address-space limit (its budget still holds). */
#if defined(__SANITIZE_ADDRESS__)
#define PROBE_LIMIT_AS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PROBE_LIMIT_AS 0
#endif
#endif
#ifndef PROBE_LIMIT_AS
#define PROBE_LIMIT_AS 1
#endif

/* After fork, before exec: only async-signal-safe calls. */
static void
child_setup (gpointer data)
{
  struct rlimit as = { child_as_limit, child_as_limit };
  struct rlimit core = { 0, 0 };

  if (PROBE_LIMIT_AS)
    setrlimit (RLIMIT_AS, &as);
  setrlimit (RLIMIT_CORE, &core);
}

static double
probe_timeout (void)
{
  const char *env = g_getenv ("TOMO_PROBE_TIMEOUT");
  double t;

  if (env == NULL)
    return DEFAULT_TIMEOUT_S;
  t = g_ascii_strtod (env, NULL);
  return isfinite (t) && t > 0 && t <= 3600 ? t : DEFAULT_TIMEOUT_S;
}

/* The last stage line the helper printed: what it was reading. */
static char *
last_stage (int fd)
{
  GString *out = g_string_new (NULL);
  char buf[4096];
  ssize_t n;
  g_auto(GStrv) lines = NULL;
  guint k;

  while ((n = read (fd, buf, sizeof buf)) > 0 && out->len < 65536)
    g_string_append_len (out, buf, n);
  lines = g_strsplit (g_strchomp (out->str), "\n", -1);
  g_string_free (out, TRUE);
  k = g_strv_length (lines);
  return g_strdup (k > 0 && *lines[k - 1] ? lines[k - 1] : "the file's header");
}

gboolean
tomo_probe_hdf5 (const char            *path,
                 const TomoOpenOptions *options,
                 GError               **error)
{
  g_autofree char *helper = NULL;
  g_autofree char *format = NULL, *sino = NULL, *stage = NULL, *name = NULL;
  g_autoptr(GError) spawn_error = NULL;
  const char *argv[6];
  GPid pid;
  int out_fd = -1, status = 0;
  gint64 deadline;
  gboolean timed_out = FALSE;
  unsigned maj = 0, min = 0, rel = 0;
  double timeout;

  if (g_strcmp0 (g_getenv ("TOMO_PROBE"), "off") == 0 || !is_hdf5 (path))
    return TRUE;
  helper = find_helper ();
  if (helper == NULL)
    return TRUE;

  format = g_strdup_printf ("%d", (int) options->format);
  sino = g_strdup_printf ("%d", options->already_sinogram ? 1 : 0);
  argv[0] = helper;
  argv[1] = "probe-hdf5";
  argv[2] = format;
  argv[3] = sino;
  argv[4] = path;
  argv[5] = NULL;
  /* The helper holds one row: 3 GiB of address space, of which its own
   * budget (tomo_probe_hdf5_main) is 2 GiB, so that a header asking
   * libhdf5 for gigabytes fails at once instead of being paged in. */
  child_as_limit = (rlim_t) PROBE_ADDRESS_SPACE;
  if (!g_spawn_async_with_pipes (NULL, (char **) argv, NULL,
                                 G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL,
                                 child_setup, NULL, &pid, NULL, &out_fd, NULL, &spawn_error))
    {
      g_debug ("No HDF5 probe of %s: %s", path, spawn_error->message);
      return TRUE;
    }

  timeout = probe_timeout ();
  deadline = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
  for (;;)
    {
      pid_t r = waitpid (pid, &status, WNOHANG);

      if (r == pid || (r < 0 && errno != EINTR))
        break;
      if (g_get_monotonic_time () > deadline)
        {
          timed_out = TRUE;
          kill (pid, SIGKILL);
          while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
            ;
          break;
        }
      g_usleep (2000);
    }
  stage = last_stage (out_fd);
  close (out_fd);
  g_spawn_close_pid (pid);

  if (!timed_out && !WIFSIGNALED (status))
    return TRUE;
  H5get_libversion (&maj, &min, &rel);
  name = g_filename_display_name (path);
  if (timed_out)
    g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                 "The HDF5 library (libhdf5 %u.%u.%u) hung reading %s of %s (no answer in %g s); "
                 "the file is refused as corrupt (TOMO_PROBE_TIMEOUT sets the limit)",
                 maj, min, rel, stage, name, timeout);
  else
    g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                 "The HDF5 library (libhdf5 %u.%u.%u) crashed (%s) reading %s of %s; "
                 "the file is refused as corrupt",
                 maj, min, rel, g_strsignal (WTERMSIG (status)), stage, name);
  return FALSE;
}

int
tomo_probe_hdf5_main (int    argc,
                      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autofree float *row = NULL;
  TomoOpenOptions options;
  guint64 format, sino;
  guint mid;

  if (argc != 4
      || !g_ascii_string_to_unsigned (argv[1], 10, 0, 64, &format, NULL)
      || !g_ascii_string_to_unsigned (argv[2], 10, 0, 1, &sino, NULL))
    {
      g_printerr ("tomolive probe-hdf5 FORMAT ALREADY_SINOGRAM FILE (used by tomolive itself)\n");
      return 2;
    }
  /* A row beyond this budget is an ordinary error (exit 2): the file is
   * then opened without a full probe, not refused. */
  tomo_memory_set_limit (PROBE_BUDGET);
  tomo_open_options_init (&options);
  options.format = (TomoScanFormat) format;
  options.already_sinogram = sino != 0;
  /* Each line is flushed: after a crash the parent sees where it was. */
  setvbuf (stdout, NULL, _IOLBF, 0);
  printf ("the file's header and datasets\n");
  scan = tomo_scan_open (argv[3], &options, &error);
  if (scan == NULL)
    return 2;
  mid = tomo_scan_get_height (scan) / 2;
  row = g_try_malloc ((gsize) tomo_scan_get_n_projections (scan) * tomo_scan_get_width (scan)
                      * sizeof (float));
  if (row == NULL)
    return 2;
  printf ("sinogram row %u (%u projections × %u columns)\n", mid,
          tomo_scan_get_n_projections (scan), tomo_scan_get_width (scan));
  if (!tomo_scan_read_sinogram (scan, mid, row, NULL, &error))
    return 2;
  printf ("done\n");
  return 0;
}
