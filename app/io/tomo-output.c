/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Outputs written beside their final name and renamed into place when
 * complete.  The live temporary files sit in a fixed table of slots so
 * that a signal handler can remove them with nothing but unlink(2): no
 * locks, no allocation.
 */
#define G_LOG_DOMAIN "tomo-output"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tomo-error.h"
#include "tomo-output.h"

#define N_SLOTS 256
#define SLOT_PATH_MAX 4096

enum { SLOT_FREE = 0, SLOT_CLAIMED, SLOT_LIVE };

typedef struct
{
  volatile gint state;
  char path[SLOT_PATH_MAX];
} Slot;

static Slot slots[N_SLOTS];

struct _TomoOutput
{
  char    *path;        /* as given */
  char    *target;      /* path with a symbolic link resolved */
  char    *temp;        /* NULL when writing in place */
  mode_t   mode;        /* of the file replaced */
  gboolean keep_mode;
  int      slot;        /* -1: not registered */
  gboolean done;
};

static int
slot_claim (const char *path)
{
  if (strlen (path) >= SLOT_PATH_MAX)
    return -1;
  for (int i = 0; i < N_SLOTS; i++)
    if (g_atomic_int_compare_and_exchange (&slots[i].state, SLOT_FREE, SLOT_CLAIMED))
      {
        strcpy (slots[i].path, path);
        g_atomic_int_set (&slots[i].state, SLOT_LIVE);
        return i;
      }
  return -1;
}

static void
slot_release (int i)
{
  if (i >= 0)
    g_atomic_int_set (&slots[i].state, SLOT_FREE);
}

guint
tomo_output_get_n_live (void)
{
  guint n = 0;

  for (int i = 0; i < N_SLOTS; i++)
    n += g_atomic_int_get (&slots[i].state) == SLOT_LIVE;
  return n;
}

static void
on_signal (int signum)
{
  static const char msg_int[] = "\ntomolive: interrupted; incomplete output removed\n";
  static const char msg_term[] = "\ntomolive: terminated; incomplete output removed\n";
  const char *msg = signum == SIGINT ? msg_int : msg_term;
  gsize len = signum == SIGINT ? sizeof msg_int - 1 : sizeof msg_term - 1;

  for (int i = 0; i < N_SLOTS; i++)
    if (slots[i].state == SLOT_LIVE)
      unlink (slots[i].path);
  if (write (STDERR_FILENO, msg, len) < 0)
    { /* nothing left to do */ }
  _exit (1);
}

void
tomo_output_install_signal_handlers (void)
{
  struct sigaction sa;

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset (&sa.sa_mask);
  sigaddset (&sa.sa_mask, SIGINT);
  sigaddset (&sa.sa_mask, SIGTERM);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
}

static gboolean
same_file (const struct stat *a,
           const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

gboolean
tomo_output_check_inputs (const char         *path,
                          const char * const *inputs,
                          GError            **error)
{
  struct stat out_st;

  g_return_val_if_fail (path != NULL, FALSE);

  if (inputs == NULL || g_stat (path, &out_st) != 0)
    return TRUE;   /* a file that does not exist yet is no input */

  for (guint i = 0; inputs[i] != NULL; i++)
    {
      struct stat in_st;

      if (g_stat (inputs[i], &in_st) != 0)
        continue;
      if (same_file (&out_st, &in_st))
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "Output %s is the input %s: refusing to overwrite it", path, inputs[i]);
          return FALSE;
        }
      if (S_ISDIR (out_st.st_mode))
        {
          g_autofree char *parent = g_path_get_dirname (inputs[i]);
          struct stat parent_st;

          if (g_stat (parent, &parent_st) == 0 && same_file (&out_st, &parent_st))
            {
              g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                           "Output folder %s holds the input %s: choose another folder, "
                           "so no input can be overwritten", path, inputs[i]);
              return FALSE;
            }
        }
    }
  return TRUE;
}

TomoOutput *
tomo_output_open (const char         *path,
                  const char * const *inputs,
                  GError            **error)
{
  g_autoptr(TomoOutput) out = NULL;
  struct stat st;
  gboolean exists;
  int fd, saved_errno;

  g_return_val_if_fail (path != NULL, NULL);

  if (path[0] == '\0')
    {
      g_set_error_literal (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "The output path is empty");
      return NULL;
    }
  if (!tomo_output_check_inputs (path, inputs, error))
    return NULL;

  out = g_new0 (TomoOutput, 1);
  out->path = g_strdup (path);
  out->slot = -1;

  /* Replace what a symbolic link points to, not the link. */
  if (g_lstat (path, &st) == 0 && S_ISLNK (st.st_mode))
    {
      char *resolved = realpath (path, NULL);

      if (resolved == NULL)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "Cannot write %s: it is a symbolic link that leads nowhere (%s)",
                       path, g_strerror (errno));
          return NULL;
        }
      out->target = g_strdup (resolved);
      free (resolved);
    }
  else
    out->target = g_strdup (path);

  exists = g_stat (out->target, &st) == 0;
  if (exists && S_ISDIR (st.st_mode))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write %s: it is a folder", path);
      return NULL;
    }
  if (exists && !S_ISREG (st.st_mode))
    {
      /* A device or FIFO: written in place, never replaced or removed. */
      if (access (out->target, W_OK) != 0)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "Cannot write %s: %s", path, g_strerror (errno));
          return NULL;
        }
      return g_steal_pointer (&out);
    }
  if (exists)
    {
      if (access (out->target, W_OK) != 0)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "Cannot overwrite %s: %s", path, g_strerror (errno));
          return NULL;
        }
      out->keep_mode = TRUE;
      out->mode = st.st_mode & 07777;
    }

  /* The name is registered before the file exists, so that a signal at
   * any moment finds every temporary file it must remove. */
  for (guint attempt = 0; ; attempt++)
    {
      static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
      char suffix[7];

      for (guint i = 0; i < 6; i++)
        suffix[i] = chars[g_random_int_range (0, sizeof chars - 1)];
      suffix[6] = '\0';
      g_free (out->temp);
      out->temp = g_strdup_printf ("%s.%s.part", out->target, suffix);
      out->slot = slot_claim (out->temp);
      /* 0666 less the umask, as any new file; an existing file's mode is
       * copied at commit. */
      fd = g_open (out->temp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      saved_errno = errno;
      if (fd >= 0)
        break;
      slot_release (out->slot);
      out->slot = -1;
      if (saved_errno != EEXIST || attempt >= 100)
        {
          g_autofree char *dir = g_path_get_dirname (out->target);

          g_clear_pointer (&out->temp, g_free);
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "Cannot write %s: cannot create a file in folder %s: %s",
                       path, dir, g_strerror (saved_errno));
          return NULL;
        }
    }
  close (fd);
  return g_steal_pointer (&out);
}

const char *
tomo_output_get_write_path (TomoOutput *output)
{
  g_return_val_if_fail (output != NULL, NULL);
  return output->temp != NULL ? output->temp : output->target;
}

static void
remove_temp (TomoOutput *output)
{
  if (output->temp != NULL)
    {
      g_unlink (output->temp);
      slot_release (output->slot);
      output->slot = -1;
      g_clear_pointer (&output->temp, g_free);
    }
}

gboolean
tomo_output_commit (TomoOutput *output,
                    GError    **error)
{
  g_return_val_if_fail (output != NULL, FALSE);
  g_return_val_if_fail (!output->done, FALSE);

  output->done = TRUE;
  if (output->temp == NULL)
    return TRUE;
  if ((output->keep_mode && g_chmod (output->temp, output->mode) != 0) || g_rename (output->temp, output->target) != 0)
    {
      int saved_errno = errno;

      remove_temp (output);
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot put %s in place: %s", output->path, g_strerror (saved_errno));
      return FALSE;
    }
  slot_release (output->slot);
  output->slot = -1;
  g_clear_pointer (&output->temp, g_free);
  return TRUE;
}

void
tomo_output_abort (TomoOutput *output)
{
  g_return_if_fail (output != NULL);

  output->done = TRUE;
  remove_temp (output);
}

void
tomo_output_free (TomoOutput *output)
{
  if (output == NULL)
    return;
  if (!output->done)
    tomo_output_abort (output);
  g_free (output->path);
  g_free (output->target);
  g_free (output);
}
