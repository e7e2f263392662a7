/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Outputs written beside their final name and renamed into place when
 * complete.  The live temporary files and folders sit in a fixed table of
 * slots so that a signal handler can remove them with nothing but
 * unlink(2): no locks, no allocation, no stdio.  A folder of slices takes
 * one slot whatever its size: the slot names the folder, the rows and the
 * run's hidden names, and the handler spells out each file's name itself.
 *
 * The input registry (every file an open scan reads) is a pair of hash
 * tables under a mutex: by the file's identity, and by the identity of the
 * folder that holds it.
 */
#define G_LOG_DOMAIN "tomo-output"
#define _GNU_SOURCE   /* renameat2 (RENAME_NOREPLACE) */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
#define AFFIX_MAX 64
/* Digits of a row in a folder's file names: "%05u". */
#define MIN_DIGITS 5

/* LIVE → DYING: taken by the signal handler, which removes the files;
 * LIVE → COMMITTING: a folder being renamed into place, which the handler
 * leaves alone and waits for. */
enum { SLOT_FREE = 0, SLOT_CLAIMED, SLOT_LIVE, SLOT_DYING, SLOT_COMMITTING };

/* A row of a folder: under its hidden name (STAGED), being moved to its
 * final name, which did not exist (PLACING), there (PLACED: the run made
 * that name, so an abort removes it), or removed by an abort or a signal
 * (GONE: never placed after that).  Only a row PLACING or PLACED whose
 * hidden file is gone has a final name that is the run's own. */
enum { ROW_STAGED = 0, ROW_PLACING, ROW_PLACED, ROW_GONE };

/* A folder's rows are DIR/PREFIX row SUFFIX, written first under the
 * hidden name DIR/.PREFIX row SUFFIX TAIL (TAIL ".tomolive-XXXXXX", one
 * per run) beside it: no second folder, so nothing to remove at the end
 * (an rmdir there waited 1.4 s for the disk's writeback). */
#define TAIL_LEN 16

typedef struct
{
  volatile gint state;
  gboolean folder;        /* path is a folder of rows [first, first + n) */
  volatile gint made_dir; /* the folder: the run made it, so a signal removes it if empty */
  guint    first, n;
  gsize    path_len, prefix_len, suffix_len;
  volatile gint *placed;  /* n ROW_* states (the folder's), or NULL */
  char     path[SLOT_PATH_MAX];
  char     prefix[AFFIX_MAX];
  char     suffix[AFFIX_MAX];
  char     tail[TAIL_LEN + 1];
} Slot;

static Slot slots[N_SLOTS];
/* The signal that arrived while a folder was being committed, or 0. */
static volatile gint pending_signal;
static volatile gint exiting;
static volatile gint any_removed;   /* a signal removed an unfinished output */
static volatile gint removing;      /* handlers (and commits) removing slots now */

struct _TomoOutput
{
  char    *path;        /* as given */
  char    *target;      /* path with a symbolic link resolved */
  char    *temp;        /* NULL when writing in place */
  mode_t   mode;        /* of the file replaced */
  gboolean keep_mode;
  gboolean in_place;    /* not a regular file: written as it is */
  int      slot;        /* -1: not registered */
  gboolean done;
};

struct _TomoOutputFolder
{
  char    *dir;         /* as given */
  char    *prefix, *suffix;
  char     tail[TAIL_LEN + 1];
  guint    first, n;
  volatile gint *placed; /* n ROW_* states, read by the signal handler */
  int      slot;        /* -1: not registered */
  gboolean handler_has; /* the signal handler took the slot: `placed` stays */
  gboolean done;
};

/* The folder's slot, or a file's (prefix == NULL). */
static int
slot_claim_full (const char    *path,
                 const char    *prefix,
                 const char    *suffix,
                 const char    *tail,
                 guint          first,
                 guint          n,
                 volatile gint *placed)
{
  gsize len = strlen (path);

  if (len >= SLOT_PATH_MAX ||
      (prefix != NULL && (strlen (prefix) >= AFFIX_MAX || strlen (suffix) >= AFFIX_MAX ||
                          strlen (tail) > TAIL_LEN)))
    return -1;
  for (int i = 0; i < N_SLOTS; i++)
    if (g_atomic_int_compare_and_exchange (&slots[i].state, SLOT_FREE, SLOT_CLAIMED))
      {
        Slot *slot = &slots[i];

        memcpy (slot->path, path, len + 1);
        slot->path_len = len;
        slot->folder = prefix != NULL;
        slot->made_dir = 0;
        if (slot->folder)
          {
            slot->prefix_len = strlen (prefix);
            slot->suffix_len = strlen (suffix);
            memcpy (slot->prefix, prefix, slot->prefix_len + 1);
            memcpy (slot->suffix, suffix, slot->suffix_len + 1);
            slot->first = first;
            slot->n = n;
            memcpy (slot->tail, tail, strlen (tail) + 1);
            slot->placed = placed;
          }
        g_atomic_int_set (&slot->state, SLOT_LIVE);
        return i;
      }
  return -1;
}

static int
slot_claim (const char *path)
{
  return slot_claim_full (path, NULL, NULL, NULL, 0, 0, NULL);
}

/* FALSE when the signal handler has taken the slot (it is removing what
 * the slot names, and the process is about to exit): then the slot and
 * what it points to must stay. */
static gboolean
slot_release (int i)
{
  return i < 0 || g_atomic_int_compare_and_exchange (&slots[i].state, SLOT_LIVE, SLOT_FREE);
}

guint
tomo_output_get_n_live (void)
{
  guint n = 0;

  for (int i = 0; i < N_SLOTS; i++)
    n += g_atomic_int_get (&slots[i].state) == SLOT_LIVE;
  return n;
}

/* "DIR/" (dir_len > 0) PREFIX ROW SUFFIX into `buf`, the row as "%05u"
 * would write it, or with `tail` (not NULL) the hidden name "DIR/."
 * PREFIX ROW SUFFIX TAIL; its length, or 0 when it does not fit.
 * Async-signal-safe (no locale, no allocation): the signal handler and the
 * writers spell the names with this one function. */
static gsize
format_row_path (char       *buf,
                 gsize       size,
                 const char *dir,
                 gsize       dir_len,
                 const char *prefix,
                 gsize       prefix_len,
                 guint       row,
                 const char *suffix,
                 gsize       suffix_len,
                 const char *tail)
{
  char digits[16];
  gsize n_digits = 0, len = 0, tail_len = tail != NULL ? strlen (tail) : 0;

  do
    {
      digits[n_digits++] = (char) ('0' + row % 10);
      row /= 10;
    }
  while (row > 0);
  while (n_digits < MIN_DIGITS)
    digits[n_digits++] = '0';
  if ((dir_len > 0 ? dir_len + 1 : 0) + (tail != NULL) + prefix_len + n_digits + suffix_len
      + tail_len + 1 > size)
    return 0;
  if (dir_len > 0)
    {
      memcpy (buf, dir, dir_len);
      buf[dir_len] = '/';
      len = dir_len + 1;
    }
  if (tail != NULL)
    buf[len++] = '.';
  memcpy (buf + len, prefix, prefix_len);
  len += prefix_len;
  while (n_digits > 0)
    buf[len++] = digits[--n_digits];
  memcpy (buf + len, suffix, suffix_len);
  len += suffix_len;
  if (tail != NULL)
    {
      memcpy (buf + len, tail, tail_len);
      len += tail_len;
    }
  buf[len] = '\0';
  return len;
}

/* Removes the files of rows [first, first + n) of the folder `dir`: those
 * still under their hidden names (the row is then GONE, so a writer about
 * to place it does not), and the final names the run took: a row PLACING
 * or PLACED whose hidden file was already gone (renamed: the rename is
 * atomic, and it never replaces a file); the number of files removed.
 * Async-signal-safe.  A writer thread may create a file after its name
 * went by: a second pass then finds it. */
static guint
remove_rows (const char    *dir,
             gsize          dir_len,
             const char    *prefix,
             gsize          prefix_len,
             const char    *suffix,
             gsize          suffix_len,
             const char    *tail,
             guint          first,
             guint          n,
             volatile gint *placed)
{
  char buf[SLOT_PATH_MAX + 2 * AFFIX_MAX + TAIL_LEN + 16];
  guint n_removed = 0;

  for (guint pass = 0; pass < 2; pass++)
    for (guint i = 0; i < n; i++)
      {
        gint state;

        if (format_row_path (buf, sizeof buf, dir, dir_len, prefix, prefix_len, first + i,
                             suffix, suffix_len, tail) > 0 && unlink (buf) == 0)
          {
            n_removed++;
            g_atomic_int_set (&placed[i], ROW_GONE);
            continue;
          }
        state = g_atomic_int_get (&placed[i]);
        if ((state == ROW_PLACING || state == ROW_PLACED) &&
            format_row_path (buf, sizeof buf, dir, dir_len, prefix, prefix_len, first + i,
                             suffix, suffix_len, NULL) > 0 && unlink (buf) == 0)
          n_removed++;
        if (state == ROW_PLACING || state == ROW_PLACED)
          g_atomic_int_set (&placed[i], ROW_GONE);
      }
  return n_removed;
}

/* TRUE where it removed anything. */
static gboolean
slot_remove (Slot *slot)
{
  gboolean removed;

  if (!slot->folder)
    return unlink (slot->path) == 0;
  removed = remove_rows (slot->path, slot->path_len, slot->prefix, slot->prefix_len, slot->suffix,
                         slot->suffix_len, slot->tail, slot->first, slot->n, slot->placed) > 0;
  if (g_atomic_int_get (&slot->made_dir) && rmdir (slot->path) == 0)
    removed = TRUE;
  return removed;
}

/* Every live temporary file and folder, each taken from its owner first. */
static void
remove_live_slots (void)
{
  for (int i = 0; i < N_SLOTS; i++)
    if (g_atomic_int_compare_and_exchange (&slots[i].state, SLOT_LIVE, SLOT_DYING)
        && slot_remove (&slots[i]))
      g_atomic_int_set (&any_removed, 1);
}

static gboolean
any_committing (void)
{
  for (int i = 0; i < N_SLOTS; i++)
    if (g_atomic_int_get (&slots[i].state) == SLOT_COMMITTING)
      return TRUE;
  return FALSE;
}

static void
exit_on_signal (int signum)
{
  static const char msg_int[] = "\ntomolive: interrupted";
  static const char msg_term[] = "\ntomolive: terminated";
  static const char msg_removed[] = "; incomplete output removed";
  const char *msg = signum == SIGINT ? msg_int : msg_term;
  gsize len = signum == SIGINT ? sizeof msg_int - 1 : sizeof msg_term - 1;
  gboolean removed = g_atomic_int_get (&any_removed);

  /* A second caller (the handler and a finished commit at once) waits for
   * the first one's exit. */
  if (!g_atomic_int_compare_and_exchange (&exiting, 0, 1))
    for (;;)
      pause ();
  /* Only what was so: a viewer or a run with nothing unfinished on disk
   * removed nothing. */
  if (write (STDERR_FILENO, msg, len) < 0 ||
      (removed && write (STDERR_FILENO, msg_removed, sizeof msg_removed - 1) < 0) ||
      write (STDERR_FILENO, "\n", 1) < 0)
    { /* nothing left to do */ }
  _exit (1);
}

/* A folder being renamed into place is finished first (a run completed is
 * not undone half-way): its committer sees pending_signal and exits. */
static void
on_signal (int signum)
{
  gboolean last;

  g_atomic_int_set (&pending_signal, signum);
  g_atomic_int_inc (&removing);
  remove_live_slots ();
  /* A second signal (on another thread) while the first handler still
   * removes rows leaves the exit to that one: it finds every slot taken
   * and would exit with files still there. */
  last = g_atomic_int_dec_and_test (&removing);
  if (!last || any_committing ())
    return;
  exit_on_signal (signum);
}

/* After a commit: the signal that waited for it. */
static void
slot_commit_done (int i)
{
  int signum;

  g_atomic_int_set (&slots[i].state, SLOT_FREE);
  signum = g_atomic_int_get (&pending_signal);
  if (signum != 0)
    {
      gboolean last;
      sigset_t block;

      /* No second handler on this thread between taking the exit and
       * making it: it would wait forever for the exit it interrupted. */
      sigemptyset (&block);
      sigaddset (&block, SIGINT);
      sigaddset (&block, SIGTERM);
      pthread_sigmask (SIG_BLOCK, &block, NULL);
      g_atomic_int_inc (&removing);
      remove_live_slots ();
      last = g_atomic_int_dec_and_test (&removing);
      if (last && !any_committing ())
        exit_on_signal (signum);
    }
}

/* A normal exit while a signal's handler still removes files (it runs on
 * another thread, the main one returned with an error the removal caused)
 * would cut the removal short: the handler makes the exit. */
static void
wait_for_handler_at_exit (void)
{
  if (g_atomic_int_get (&pending_signal) != 0)
    for (;;)
      pause ();
}

void
tomo_output_install_signal_handlers (void)
{
  struct sigaction sa;
  static gsize registered;

  if (g_once_init_enter (&registered))
    {
      atexit (wait_for_handler_at_exit);
      g_once_init_leave (&registered, 1);
    }

  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  /* The handler may return (a commit finishes first): let the threads'
   * system calls carry on. */
  sa.sa_flags = SA_RESTART;
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

/* ---- the input registry --------------------------------------------------- */

typedef struct
{
  TomoInputId id;
  TomoInputId parent;   /* the folder that holds it, by the name registered */
  gboolean    has_parent;
  guint       refs;
  char       *path;     /* the name registered first, for messages */
} InputEntry;

typedef struct
{
  TomoInputId id;
  guint       refs;
} FolderEntry;

static GMutex registry_lock;
static GHashTable *registry_files;    /* &entry->id → InputEntry */
static GHashTable *registry_folders;  /* &entry->id → FolderEntry */

static guint
id_hash (gconstpointer p)
{
  const TomoInputId *id = p;

  return (guint) (id->ino ^ (id->ino >> 32) ^ (id->dev * 0x9e3779b1u));
}

static gboolean
id_equal (gconstpointer a,
          gconstpointer b)
{
  const TomoInputId *x = a, *y = b;

  return x->dev == y->dev && x->ino == y->ino;
}

static void
id_from_stat (TomoInputId       *id,
              const struct stat *st)
{
  id->dev = (guint64) st->st_dev;
  id->ino = (guint64) st->st_ino;
}

static void
input_entry_free (gpointer data)
{
  InputEntry *entry = data;

  g_free (entry->path);
  g_free (entry);
}

gboolean
tomo_output_register_input (const char  *path,
                            TomoInputId *id)
{
  g_autofree char *parent = NULL;
  struct stat st, parent_st;
  InputEntry *entry;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (id != NULL, FALSE);

  if (g_stat (path, &st) != 0)
    return FALSE;
  id_from_stat (id, &st);
  parent = g_path_get_dirname (path);

  g_mutex_lock (&registry_lock);
  if (registry_files == NULL)
    {
      registry_files = g_hash_table_new_full (id_hash, id_equal, NULL, input_entry_free);
      registry_folders = g_hash_table_new_full (id_hash, id_equal, NULL, g_free);
    }
  entry = g_hash_table_lookup (registry_files, id);
  if (entry != NULL)
    entry->refs++;
  else
    {
      entry = g_new0 (InputEntry, 1);
      entry->id = *id;
      entry->refs = 1;
      entry->path = g_strdup (path);
      if (g_stat (parent, &parent_st) == 0)
        {
          FolderEntry *folder;

          entry->has_parent = TRUE;
          id_from_stat (&entry->parent, &parent_st);
          folder = g_hash_table_lookup (registry_folders, &entry->parent);
          if (folder == NULL)
            {
              folder = g_new0 (FolderEntry, 1);
              folder->id = entry->parent;
              g_hash_table_insert (registry_folders, &folder->id, folder);
            }
          folder->refs++;
        }
      g_hash_table_insert (registry_files, &entry->id, entry);
    }
  g_mutex_unlock (&registry_lock);
  return TRUE;
}

void
tomo_output_release_input (const TomoInputId *id)
{
  InputEntry *entry;

  g_return_if_fail (id != NULL);

  g_mutex_lock (&registry_lock);
  entry = registry_files != NULL ? g_hash_table_lookup (registry_files, id) : NULL;
  if (entry != NULL && --entry->refs == 0)
    {
      if (entry->has_parent)
        {
          FolderEntry *folder = g_hash_table_lookup (registry_folders, &entry->parent);

          if (folder != NULL && --folder->refs == 0)
            g_hash_table_remove (registry_folders, &folder->id);
        }
      g_hash_table_remove (registry_files, id);
    }
  g_mutex_unlock (&registry_lock);
}

guint
tomo_output_get_n_inputs (void)
{
  guint n;

  g_mutex_lock (&registry_lock);
  n = registry_files != NULL ? g_hash_table_size (registry_files) : 0;
  g_mutex_unlock (&registry_lock);
  return n;
}

/* The name of the registered input that `st` is, or NULL. */
static char *
registry_find_file (const struct stat *st)
{
  TomoInputId id;
  InputEntry *entry;
  char *name = NULL;

  id_from_stat (&id, st);
  g_mutex_lock (&registry_lock);
  entry = registry_files != NULL ? g_hash_table_lookup (registry_files, &id) : NULL;
  if (entry != NULL)
    name = g_strdup (entry->path);
  g_mutex_unlock (&registry_lock);
  return name;
}

/* The name of a registered input that folder `st` holds, or NULL. */
static char *
registry_find_in_folder (const struct stat *st)
{
  TomoInputId id;
  char *name = NULL;

  id_from_stat (&id, st);
  g_mutex_lock (&registry_lock);
  if (registry_folders != NULL && g_hash_table_contains (registry_folders, &id))
    {
      GHashTableIter iter;
      InputEntry *entry;

      /* Rare (an error follows): a walk, not a third table. */
      g_hash_table_iter_init (&iter, registry_files);
      while (name == NULL && g_hash_table_iter_next (&iter, NULL, (gpointer *) &entry))
        if (entry->has_parent && id_equal (&entry->parent, &id))
          name = g_strdup (entry->path);
    }
  g_mutex_unlock (&registry_lock);
  return name;
}

/* ---- checks ---------------------------------------------------------------- */

static gboolean
refuse_input (const char  *path,
              const char  *input,
              GError     **error)
{
  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
               "Output %s is the input %s: refusing to overwrite it", path, input);
  return FALSE;
}

static gboolean
refuse_folder (const char  *path,
               const char  *input,
               GError     **error)
{
  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
               "Output folder %s holds the input %s: choose another folder, "
               "so no input can be overwritten", path, input);
  return FALSE;
}

/* `out_st` (the output `path`) against the registry. */
static gboolean
check_registry (const char        *path,
                const struct stat *out_st,
                GError           **error)
{
  g_autofree char *input = registry_find_file (out_st);

  if (input != NULL)
    return refuse_input (path, input, error);
  if (S_ISDIR (out_st->st_mode) && (input = registry_find_in_folder (out_st)) != NULL)
    return refuse_folder (path, input, error);
  return TRUE;
}

gboolean
tomo_output_check_inputs (const char         *path,
                          const char * const *inputs,
                          GError            **error)
{
  struct stat out_st;

  g_return_val_if_fail (path != NULL, FALSE);

  if (g_stat (path, &out_st) != 0)
    return TRUE;   /* a file that does not exist yet is no input */

  for (guint i = 0; inputs != NULL && inputs[i] != NULL; i++)
    {
      struct stat in_st;

      if (g_stat (inputs[i], &in_st) != 0)
        continue;
      if (same_file (&out_st, &in_st))
        return refuse_input (path, inputs[i], error);
      if (S_ISDIR (out_st.st_mode))
        {
          g_autofree char *parent = g_path_get_dirname (inputs[i]);
          struct stat parent_st;

          if (g_stat (parent, &parent_st) == 0 && same_file (&out_st, &parent_st))
            return refuse_folder (path, inputs[i], error);
        }
    }
  return check_registry (path, &out_st, error);
}

/* Six random letters and digits, the XXXXXX of temporary names. */
static void
random_name (char out[7])
{
  static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

  for (guint i = 0; i < 6; i++)
    out[i] = chars[g_random_int_range (0, sizeof chars - 1)];
  out[6] = '\0';
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
      out->in_place = TRUE;
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
      char suffix[7];

      random_name (suffix);
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

gboolean
tomo_output_is_in_place (TomoOutput *output)
{
  g_return_val_if_fail (output != NULL, FALSE);
  return output->in_place;
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

/* ---- folders of files -------------------------------------------------- */

/* Row `row`'s name in `dir` (NULL: the name alone), or with `staged` its
 * hidden name beside it. */
static char *
folder_row_path (TomoOutputFolder *folder,
                 const char       *dir,
                 guint             row,
                 gboolean          staged)
{
  gsize dir_len = dir != NULL ? strlen (dir) : 0;
  gsize size = dir_len + strlen (folder->prefix) + strlen (folder->suffix) + TAIL_LEN + 24;
  char *buf = g_malloc (size);

  format_row_path (buf, size, dir, dir_len, folder->prefix, strlen (folder->prefix), row,
                   folder->suffix, strlen (folder->suffix), staged ? folder->tail : NULL);
  return buf;
}

static guint
folder_remove_rows (TomoOutputFolder *folder,
                    guint             row,
                    guint             n)
{
  return remove_rows (folder->dir, strlen (folder->dir), folder->prefix, strlen (folder->prefix),
                      folder->suffix, strlen (folder->suffix), folder->tail, row, n,
                      folder->placed + (row - folder->first));
}

void
tomo_output_folder_set_made (TomoOutputFolder *folder)
{
  g_return_if_fail (folder != NULL);

  if (folder->slot >= 0)
    g_atomic_int_set (&slots[folder->slot].made_dir, 1);
}

char *
tomo_output_folder_get_name (TomoOutputFolder *folder,
                             guint             row)
{
  g_return_val_if_fail (folder != NULL, NULL);
  return folder_row_path (folder, NULL, row, FALSE);
}

char *
tomo_output_folder_get_write_path (TomoOutputFolder *folder,
                                   guint             row)
{
  g_return_val_if_fail (folder != NULL, NULL);
  return folder_row_path (folder, folder->dir, row, TRUE);
}

/* Can `final` be replaced by a new file?  `explicit` holds the identities
 * of the caller's inputs. */
static gboolean
check_replaceable (const char *final,
                   GHashTable *explicit,
                   GError    **error)
{
  struct stat st;

  if (g_lstat (final, &st) != 0)
    return TRUE;
  if (S_ISDIR (st.st_mode))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write %s: a folder stands under that name", final);
      return FALSE;
    }
  if (!S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write %s: it exists and is not a regular file", final);
      return FALSE;
    }
  /* A link is replaced, never written through; yet one that leads to an
   * input says the folder is not what the user thinks: refused. */
  if (g_stat (final, &st) == 0)
    {
      TomoInputId id;
      g_autofree char *input = registry_find_file (&st);

      id_from_stat (&id, &st);
      if (input == NULL && g_hash_table_contains (explicit, &id))
        input = g_strdup (g_hash_table_lookup (explicit, &id));
      if (input != NULL)
        return refuse_input (final, input, error);
    }
  if (g_lstat (final, &st) == 0 && S_ISREG (st.st_mode) && access (final, W_OK) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Cannot overwrite %s: %s", final,
                   g_strerror (saved_errno));
      return FALSE;
    }
  return TRUE;
}

TomoOutputFolder *
tomo_output_folder_open (const char         *dir,
                         const char         *prefix,
                         const char         *suffix,
                         guint               first,
                         guint               n,
                         const char * const *inputs,
                         GError            **error)
{
  g_autoptr(TomoOutputFolder) folder = NULL;
  g_autoptr(GHashTable) explicit = NULL;
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);

  g_return_val_if_fail (dir != NULL && prefix != NULL && suffix != NULL, NULL);
  g_return_val_if_fail (strchr (prefix, '/') == NULL && strchr (suffix, '/') == NULL, NULL);
  /* The signal handler's slot holds them. */
  g_return_val_if_fail (strlen (prefix) < AFFIX_MAX && strlen (suffix) < AFFIX_MAX, NULL);

  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND,
                   "Cannot write files into %s: not a folder", dir);
      return NULL;
    }
  if (!tomo_output_check_inputs (dir, inputs, error))
    return NULL;

  folder = g_new0 (TomoOutputFolder, 1);
  folder->dir = g_strdup (dir);
  folder->prefix = g_strdup (prefix);
  folder->suffix = g_strdup (suffix);
  folder->first = first;
  folder->n = n;
  folder->placed = g_new0 (gint, MAX (n, 1));
  folder->slot = -1;

  /* The caller's inputs, stat()ed once, not once per file. */
  explicit = g_hash_table_new_full (id_hash, id_equal, NULL, NULL);
  for (guint i = 0; inputs != NULL && inputs[i] != NULL; i++)
    {
      struct stat st;
      TomoInputId *id;

      if (g_stat (inputs[i], &st) != 0)
        continue;
      id = g_new (TomoInputId, 1);
      id_from_stat (id, &st);
      g_ptr_array_add (ids, id);
      g_hash_table_insert (explicit, id, (gpointer) inputs[i]);
    }
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *final = folder_row_path (folder, dir, first + i, FALSE);

      if (!check_replaceable (final, explicit, error))
        return NULL;
    }

  /* Registered before any file exists, as the temporary files are.  One
   * hidden name a row, beside its final name; a name taken (a file left by
   * another run) is an error when the row is written (O_EXCL). */
  {
    char suffix6[7];

    random_name (suffix6);
    g_snprintf (folder->tail, sizeof folder->tail, ".tomolive-%s", suffix6);
  }
  folder->slot = slot_claim_full (dir, prefix, suffix, folder->tail, first, n, folder->placed);
  return g_steal_pointer (&folder);
}

/* Every file of the run, and the slot. */
static guint
folder_remove_all (TomoOutputFolder *folder)
{
  guint n_removed = folder_remove_rows (folder, folder->first, folder->n);

  folder->handler_has |= !slot_release (folder->slot);
  folder->slot = -1;
  return n_removed;
}

void
tomo_output_folder_place (TomoOutputFolder *folder,
                          guint             row)
{
  g_autofree char *staged = NULL;
  g_autofree char *final = NULL;
  volatile gint *state;

  g_return_if_fail (folder != NULL && !folder->done);
  g_return_if_fail (row >= folder->first && row - folder->first < folder->n);

  staged = folder_row_path (folder, folder->dir, row, TRUE);
  final = folder_row_path (folder, folder->dir, row, FALSE);
  state = &folder->placed[row - folder->first];
  /* PLACING first: a signal between the rename and PLACED finds the hidden
   * file gone and removes the final name.  A row the handler already took
   * (GONE) is not placed: its hidden file is gone, or going. */
  if (!g_atomic_int_compare_and_exchange (state, ROW_STAGED, ROW_PLACING))
    return;
  if (renameat2 (AT_FDCWD, staged, AT_FDCWD, final, RENAME_NOREPLACE) == 0)
    g_atomic_int_compare_and_exchange (state, ROW_PLACING, ROW_PLACED);
  else   /* the name is taken (or no such rename): commit's */
    g_atomic_int_compare_and_exchange (state, ROW_PLACING, ROW_STAGED);
}

gboolean
tomo_output_folder_commit (TomoOutputFolder *folder,
                           GError          **error)
{
  guint row, end;
  int saved_errno = 0;
  gboolean ok;

  g_return_val_if_fail (folder != NULL, FALSE);
  g_return_val_if_fail (!folder->done, FALSE);

  folder->done = TRUE;
  end = folder->first + folder->n;
  for (row = folder->first; row < end; row++)
    {
      g_autofree char *staged = NULL;
      struct stat st;

      if (g_atomic_int_get (&folder->placed[row - folder->first]) == ROW_PLACED)
        continue;
      staged = folder_row_path (folder, folder->dir, row, TRUE);
      if (g_lstat (staged, &st) != 0 || !S_ISREG (st.st_mode))
        {
          g_autofree char *name = tomo_output_folder_get_name (folder, row);

          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "Cannot put the files in place in %s: %s was never written; nothing "
                       "was replaced", folder->dir, name);
          folder_remove_all (folder);
          return FALSE;
        }
    }
  if (folder->slot >= 0 &&
      !g_atomic_int_compare_and_exchange (&slots[folder->slot].state, SLOT_LIVE, SLOT_COMMITTING))
    {
      /* The signal handler took the slot and removes the files. */
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot put the files in place in %s: interrupted; nothing was replaced",
                   folder->dir);
      folder->handler_has = TRUE;
      folder->slot = -1;
      return FALSE;
    }
  for (row = folder->first; row < end; row++)
    {
      g_autofree char *staged = NULL;
      g_autofree char *final = NULL;
      struct stat st;

      if (g_atomic_int_get (&folder->placed[row - folder->first]) == ROW_PLACED)
        continue;
      staged = folder_row_path (folder, folder->dir, row, TRUE);
      final = folder_row_path (folder, folder->dir, row, FALSE);
      /* The mode of the file replaced, as for one file. */
      if ((g_lstat (final, &st) == 0 && S_ISREG (st.st_mode) &&
           g_chmod (staged, st.st_mode & 07777) != 0) || g_rename (staged, final) != 0)
        {
          saved_errno = errno;
          break;
        }
    }
  ok = row == end;
  if (!ok)
    {
      g_autofree char *final = folder_row_path (folder, folder->dir, row, FALSE);

      if (row > folder->first)
        g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                     "Cannot put %s in place: %s (rows %u to %u were replaced already)", final,
                     g_strerror (saved_errno), folder->first, row - 1);
      else
        g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                     "Cannot put %s in place: %s; nothing was replaced", final,
                     g_strerror (saved_errno));
      /* The rest goes before the slot does: a signal waiting for this
       * commit then finds nothing of it. */
      folder_remove_rows (folder, row, end - row);
    }
  if (folder->slot >= 0)
    {
      int slot = folder->slot;

      folder->slot = -1;
      slot_commit_done (slot);
    }
  return ok;
}

guint
tomo_output_folder_abort (TomoOutputFolder *folder)
{
  g_return_val_if_fail (folder != NULL, 0);

  folder->done = TRUE;
  return folder_remove_all (folder);
}

void
tomo_output_folder_free (TomoOutputFolder *folder)
{
  if (folder == NULL)
    return;
  if (!folder->done)
    tomo_output_folder_abort (folder);
  g_free (folder->dir);
  /* The handler may still walk it until the process exits. */
  if (!folder->handler_has)
    g_free ((gpointer) folder->placed);
  g_free (folder->prefix);
  g_free (folder->suffix);
  g_free (folder);
}
