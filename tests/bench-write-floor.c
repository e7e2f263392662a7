/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The machine's write floors for a volume: how fast GiB of data go into
 * ONE file against several, buffered or with O_DIRECT, preallocated or not,
 * from several threads at once, in pieces the size the volume writer uses:
 *
 *   bench-write-floor DIR [BUDGET_S [CASE…]]
 *
 * CASE is METHOD:FILES:THREADS:FALLOC:GIB[:PIECE_MIB], METHOD one of
 *   buffered  pwrite() through the page cache
 *   direct    pwrite() with O_DIRECT from 4096-aligned buffers
 *   mmap      memcpy() into a shared mapping of the fallocate()d file
 *   mix       half the threads direct, half buffered, into the same file(s)
 *   dmap      half direct, half mmap
 *   prefault  buffered, each piece's page cache filled first with
 *             posix_fadvise(WILLNEED) (zero pages of the sized file, made
 *             outside the file's lock), then pwrite()
 * and METHOD+flush adds a thread that starts the writeback of the pieces
 * written so far with sync_file_range(SYNC_FILE_RANGE_WRITE), so that the
 * disk works from the start instead of from the background dirty limit.
 * FALLOC is "falloc" (the whole file reserved with fallocate() first),
 * "size" (ftruncate() to its final size, sparse) or "-".
 * The threads take the next piece from a shared counter, so in the mixed
 * cases each method takes as many pieces as it can write.  Piece i of a
 * case goes to file i % FILES at offset (i / FILES) × PIECE.
 *
 * Each case prints its wall time (open and fallocate included, no fsync:
 * buffered data may still be in the page cache), GB/s, the most dirty and
 * writeback memory seen while it ran (sampled every 20 ms), the share of the
 * pieces written each way, then removes its files and times syncfs().
 * Without CASEs a default list runs; cases that would pass BUDGET_S
 * (default 140) at the method's last rate are skipped, and a case running
 * past it stops taking pieces (its rate then covers what it wrote).
 */
#define G_LOG_DOMAIN "bench-write-floor"
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <glib.h>

typedef enum { M_BUFFERED, M_DIRECT, M_MMAP, M_MIX, M_DMAP, M_PREFAULT } Method;

typedef struct
{
  Method method;
  guint n_files, n_threads;
  gboolean falloc, size, flush;
  double gib;
  gsize piece;
  /* run state */
  int *fd_buf, *fd_direct;
  char **map;
  guint64 file_bytes;
  guint64 n_pieces;
  gint64 next;           /* atomic */
  gint direct_pieces, other_pieces, errors;
  gint role;             /* atomic: threads started */
  gint stop_sampler, stop_flusher;
  gint64 max_dirty_kb, max_wb_kb;
  gint64 deadline;       /* monotonic µs: no piece is begun after it */
  gint cut;              /* atomic: stopped at the deadline */
} Case;

static const char *default_cases[] = {
  "buffered:1:8:-:16",       /* the volume writer today */
  "direct:1:16:falloc:8",
  "direct:1:8:falloc:8",
  "direct:1:8:-:8",
  "direct:8:8:falloc:8",
  "buffered:8:8:-:16",
  "mix:1:16:falloc:16",
  "dmap:1:16:falloc:16",
  "mmap:1:8:falloc:16",
  "buffered:1:8:falloc:16",
  "buffered:1:1:-:16",
  "buffered:1:16:-:16",
  "direct:1:16:falloc:8:8",
  "buffered:1:8:-:32",
  "buffered:8:8:-:32",
  "mix:1:16:falloc:32",
  "direct:1:16:falloc:32",
  NULL
};

static gint64
meminfo_kb (const char *text,
            const char *key)
{
  const char *p = strstr (text, key);

  return p != NULL ? g_ascii_strtoll (p + strlen (key), NULL, 10) : -1;
}

static gpointer
sampler (gpointer data)
{
  Case *c = data;

  while (!g_atomic_int_get (&c->stop_sampler))
    {
      g_autofree char *text = NULL;

      if (g_file_get_contents ("/proc/meminfo", &text, NULL, NULL))
        {
          c->max_dirty_kb = MAX (c->max_dirty_kb, meminfo_kb (text, "\nDirty:"));
          c->max_wb_kb = MAX (c->max_wb_kb, meminfo_kb (text, "\nWriteback:"));
        }
      g_usleep (20000);
    }
  return NULL;
}

static gboolean
write_all (int         fd,
           const char *p,
           gsize       len,
           guint64     at)
{
  while (len > 0)
    {
      ssize_t n = pwrite (fd, p, len, (off_t) at);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      p += n;
      len -= (gsize) n;
      at += (guint64) n;
    }
  return TRUE;
}

static gpointer
worker (gpointer data)
{
  Case *c = data;
  gint me = g_atomic_int_add (&c->role, 1);
  /* Mixed cases: the first half of the threads write directly. */
  gboolean direct = c->method == M_DIRECT ||
                    ((c->method == M_MIX || c->method == M_DMAP) && me < (gint) c->n_threads / 2);
  char *buf = NULL;

  if (posix_memalign ((void **) &buf, 4096, c->piece) != 0)
    {
      g_atomic_int_inc (&c->errors);
      return NULL;
    }
  /* Not zeros: no file system may skip them. */
  for (gsize i = 0; i < c->piece; i++)
    buf[i] = (char) (i * 131 + me + 1);
  for (;;)
    {
      guint64 i = (guint64) g_atomic_pointer_add (&c->next, 1);
      guint f;
      guint64 at;
      gboolean ok;

      if (i >= c->n_pieces)
        break;
      if (g_get_monotonic_time () > c->deadline)
        {
          g_atomic_int_set (&c->cut, 1);
          break;
        }
      f = (guint) (i % c->n_files);
      at = (i / c->n_files) * c->piece;
      if (c->method == M_PREFAULT)
        posix_fadvise (c->fd_buf[f], (off_t) at, (off_t) c->piece, POSIX_FADV_WILLNEED);
      if (direct)
        ok = write_all (c->fd_direct[f], buf, c->piece, at);
      else if (c->method == M_MMAP || c->method == M_DMAP)
        {
          memcpy (c->map[f] + at, buf, c->piece);
          ok = TRUE;
        }
      else
        ok = write_all (c->fd_buf[f], buf, c->piece, at);
      if (!ok)
        {
          g_printerr ("  write failed: %s\n", g_strerror (errno));
          g_atomic_int_inc (&c->errors);
          break;
        }
      g_atomic_int_inc (direct ? &c->direct_pieces : &c->other_pieces);
    }
  free (buf);
  return NULL;
}

/* Starts the writeback of what the writers have taken so far (the last
 * n_threads pieces perhaps half written: their pages are written again). */
static gpointer
flusher (gpointer data)
{
  Case *c = data;
  guint64 done = 0;

  while (!g_atomic_int_get (&c->stop_flusher))
    {
      guint64 next = MIN ((guint64) g_atomic_pointer_get (&c->next), c->n_pieces);
      guint64 upto = next > c->n_threads ? (next - c->n_threads) / c->n_files : 0;

      if (upto > done)
        {
          for (guint f = 0; f < c->n_files; f++)
            sync_file_range (c->fd_buf[f], (off_t) (done * c->piece),
                             (off_t) ((upto - done) * c->piece), SYNC_FILE_RANGE_WRITE);
          done = upto;
        }
      else
        g_usleep (2000);
    }
  return NULL;
}

static gboolean
parse_case (const char *spec,
            Case       *c)
{
  g_auto(GStrv) f = g_strsplit (spec, ":", -1);
  guint n = g_strv_length (f);
  char *plus;

  memset (c, 0, sizeof *c);
  if (n < 5)
    return FALSE;
  if ((plus = strchr (f[0], '+')) != NULL)
    {
      if (!g_str_equal (plus, "+flush"))
        return FALSE;
      c->flush = TRUE;
      *plus = '\0';
    }
  if (g_str_equal (f[0], "buffered"))
    c->method = M_BUFFERED;
  else if (g_str_equal (f[0], "direct"))
    c->method = M_DIRECT;
  else if (g_str_equal (f[0], "mmap"))
    c->method = M_MMAP;
  else if (g_str_equal (f[0], "mix"))
    c->method = M_MIX;
  else if (g_str_equal (f[0], "dmap"))
    c->method = M_DMAP;
  else if (g_str_equal (f[0], "prefault"))
    c->method = M_PREFAULT;
  else
    return FALSE;
  c->n_files = (guint) g_ascii_strtoull (f[1], NULL, 10);
  c->n_threads = (guint) g_ascii_strtoull (f[2], NULL, 10);
  c->falloc = g_str_equal (f[3], "falloc") || c->method == M_MMAP || c->method == M_DMAP;
  c->size = g_str_equal (f[3], "size") || c->method == M_PREFAULT;
  c->gib = g_ascii_strtod (f[4], NULL);
  c->piece = (n > 5 ? g_ascii_strtoull (f[5], NULL, 10) : 2) << 20;
  return c->n_files > 0 && c->n_threads > 0 && c->gib > 0 && c->piece > 0;
}

/* Seconds, or < 0 on failure. */
static double
run_case (const char *dir,
          const char *spec,
          Case       *c)
{
  g_autofree GThread **threads = NULL;
  GThread *sample, *flush = NULL;
  gint64 t0, t1;
  double s, sync_s;
  int dfd;

  c->n_pieces = (guint64) (c->gib * (1 << 30)) / c->piece;
  c->n_pieces -= c->n_pieces % c->n_files;
  c->file_bytes = c->n_pieces / c->n_files * c->piece;
  c->fd_buf = g_new (int, c->n_files);
  c->fd_direct = g_new (int, c->n_files);
  c->map = g_new0 (char *, c->n_files);
  threads = g_new0 (GThread *, c->n_threads);
  sample = g_thread_new ("sampler", sampler, c);

  t0 = g_get_monotonic_time ();
  for (guint f = 0; f < c->n_files; f++)
    {
      g_autofree char *path = g_strdup_printf ("%s/floor-%u.bin", dir, f);

      c->fd_buf[f] = open (path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      c->fd_direct[f] = open (path, O_RDWR | O_DIRECT | O_CLOEXEC);
      if (c->fd_buf[f] < 0 || c->fd_direct[f] < 0)
        {
          g_printerr ("  %s: %s\n", path, g_strerror (errno));
          return -1;
        }
      if (c->falloc && fallocate (c->fd_buf[f], 0, 0, (off_t) c->file_bytes) != 0)
        {
          g_printerr ("  fallocate %s: %s\n", path, g_strerror (errno));
          return -1;
        }
      if (c->size && !c->falloc && ftruncate (c->fd_buf[f], (off_t) c->file_bytes) != 0)
        return -1;
      if (c->method == M_MMAP || c->method == M_DMAP)
        {
          void *p = mmap (NULL, c->file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                          c->fd_buf[f], 0);

          if (p == MAP_FAILED)
            return -1;
          c->map[f] = p;
        }
    }
  if (c->flush)
    flush = g_thread_new ("flusher", flusher, c);
  for (guint t = 0; t < c->n_threads; t++)
    threads[t] = g_thread_new ("writer", worker, c);
  for (guint t = 0; t < c->n_threads; t++)
    g_thread_join (threads[t]);
  if (flush != NULL)
    {
      g_atomic_int_set (&c->stop_flusher, 1);
      g_thread_join (flush);
    }
  for (guint f = 0; f < c->n_files; f++)
    if (c->map[f] != NULL)
      munmap (c->map[f], c->file_bytes);
  t1 = g_get_monotonic_time ();
  g_atomic_int_set (&c->stop_sampler, 1);
  g_thread_join (sample);
  s = (t1 - t0) / 1e6;

  for (guint f = 0; f < c->n_files; f++)
    {
      g_autofree char *path = g_strdup_printf ("%s/floor-%u.bin", dir, f);

      close (c->fd_buf[f]);
      close (c->fd_direct[f]);
      unlink (path);
    }
  dfd = open (dir, O_RDONLY | O_DIRECTORY);
  t0 = g_get_monotonic_time ();
  if (dfd >= 0)
    {
      syncfs (dfd);
      close (dfd);
    }
  sync_s = (g_get_monotonic_time () - t0) / 1e6;
  printf ("%-26s %7.2f s %6.2f GB/s  dirty max %5.1f GB  writeback max %4.1f GB"
          "  direct/other pieces %d/%d%s%s  (then unlink + syncfs %.2f s)\n",
          spec, s, (c->direct_pieces + c->other_pieces) * (double) c->piece / s / 1e9,
          c->max_dirty_kb / 1e6 * 1.024, c->max_wb_kb / 1e6 * 1.024, c->direct_pieces,
          c->other_pieces, c->errors ? "  ERRORS" : "",
          c->cut ? "  STOPPED AT THE BUDGET" : "", sync_s);
  fflush (stdout);
  g_free (c->fd_buf);
  g_free (c->fd_direct);
  g_free (c->map);
  return c->errors ? -1 : s;
}

int
main (int   argc,
      char *argv[])
{
  const char *dir = argc > 1 ? argv[1] : NULL;
  double budget = argc > 2 ? g_ascii_strtod (argv[2], NULL) : 140;
  const char * const *cases = argc > 3 ? (const char * const *) argv + 3 : default_cases;
  gint64 start = g_get_monotonic_time ();
  /* GB/s of each method, for the budget: a guess until measured. */
  double rate[M_PREFAULT + 1] = { 2.0, 1.5, 1.5, 2.0, 1.5, 2.0 };
  struct statfs fs;
  g_autofree char *vm = NULL;
  int failed = 0;

  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_printerr ("usage: bench-write-floor DIR [BUDGET_S [METHOD:FILES:THREADS:FALLOC:GIB[:PIECE_MIB]…]]\n");
      return 2;
    }
  if (statfs (dir, &fs) == 0)
    printf ("%s: file system type 0x%lx, %.1f GiB free\n", dir, (unsigned long) fs.f_type,
            (double) fs.f_bavail * fs.f_bsize / (1 << 30));
  if (g_file_get_contents ("/proc/vmstat", &vm, NULL, NULL))
    {
      const char *th = strstr (vm, "nr_dirty_threshold ");
      const char *bg = strstr (vm, "nr_dirty_background_threshold ");

      if (th != NULL && bg != NULL)
        printf ("dirty threshold %.1f GB, background %.1f GB (pages of 4 KiB)\n",
                g_ascii_strtoll (th + 19, NULL, 10) * 4096 / 1e9,
                g_ascii_strtoll (bg + 30, NULL, 10) * 4096 / 1e9);
    }
  for (guint i = 0; cases[i] != NULL; i++)
    {
      Case c;
      double s, left = budget - (g_get_monotonic_time () - start) / 1e6;

      if (!parse_case (cases[i], &c))
        {
          g_printerr ("bad case %s\n", cases[i]);
          return 2;
        }
      /* Skips what the method's last rate says would not fit (+ 3 s of syncing). */
      if (c.gib * 1.074 / rate[c.method] + 3 > left)
        {
          printf ("%-26s skipped: %.0f s left\n", cases[i], left);
          continue;
        }
      c.deadline = start + (gint64) (budget * 1e6);
      s = run_case (dir, cases[i], &c);
      if (s < 0)
        failed++;
      else
        rate[c.method] = MAX (c.gib * 1.074 / s, 0.3);
    }
  return failed ? 1 : 0;
}
