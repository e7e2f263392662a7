/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-scrub-prefetch"
#include "config.h"

#include "tomo-scrub-prefetch.h"
#include "tomo-scan-private.h"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

struct _TomoScrubPrefetch
{
  GMutex    lock;
  GCond     cond;
  GThread  *thread;
  gboolean  quit;
  gboolean  busy;     /* a row is being read */
  TomoScan *scan;     /* of the pending rows */
  TomoRawRows *raw;   /* where they go: a raw row cache, or NULL for the scan's */
  GArray   *pending;  /* guint rows, next first */
  guint     n_read;
};

static gpointer
prefetch_main (gpointer data)
{
  TomoScrubPrefetch *self = data;
  g_autofree float *buffer = NULL;
  gsize buffer_len = 0;

#ifdef __linux__
  /* Below the request path: on Linux a thread has its own nice value. */
  setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), 10);
#endif

  g_mutex_lock (&self->lock);
  for (;;)
    {
      g_autoptr(TomoScan) scan = NULL;
      g_autoptr(TomoRawRows) raw = NULL;
      gboolean read = TRUE;
      guint row;
      gsize len;

      while (!self->quit && self->pending->len == 0)
        g_cond_wait (&self->cond, &self->lock);
      if (self->quit)
        break;
      row = g_array_index (self->pending, guint, 0);
      g_array_remove_index (self->pending, 0);
      scan = g_object_ref (self->scan);
      raw = self->raw != NULL ? tomo_raw_rows_ref (self->raw) : NULL;
      self->busy = TRUE;
      g_mutex_unlock (&self->lock);

      len = (gsize) tomo_scan_get_n_projections (scan) * tomo_scan_get_width (scan);
      /* A failed row is left for the request to report. */
      if (raw != NULL)
        read = tomo_raw_rows_prefetch (raw, row);
      else
        {
          if (len > buffer_len)
            {
              g_free (buffer);
              buffer = g_new (float, len);
              buffer_len = len;
            }
          (void) tomo_scan_read_sinogram (scan, row, buffer, NULL, NULL);
        }

      g_mutex_lock (&self->lock);
      self->busy = FALSE;
      self->n_read += read ? 1 : 0;
      g_cond_broadcast (&self->cond);
    }
  self->busy = FALSE;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  return NULL;
}

TomoScrubPrefetch *
tomo_scrub_prefetch_new (void)
{
  TomoScrubPrefetch *self = g_new0 (TomoScrubPrefetch, 1);

  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->pending = g_array_new (FALSE, FALSE, sizeof (guint));
  self->thread = g_thread_new ("tomo-scrub", prefetch_main, self);
  return self;
}

static void
aim (TomoScrubPrefetch *self,
     TomoScan          *scan,
     TomoRawRows       *raw,
     guint              row,
     int                direction,
     guint              ahead,
     guint              behind)
{
  guint height, max_rows, n_ahead = 0, n_behind = 0;
  gsize row_bytes, limit = 0;
  int dir = direction < 0 ? -1 : 1;

  height = tomo_scan_get_height (scan);
  if (raw != NULL)
    tomo_raw_rows_get_sizes (raw, NULL, &row_bytes, &limit);
  else
    {
      row_bytes = (gsize) tomo_scan_get_n_projections (scan) * tomo_scan_get_width (scan) * sizeof (float);
      _tomo_scan_get_cache_usage (scan, NULL, NULL, &limit);
    }
  /* Half the cache: the rows prefetched must not push out the one shown. */
  max_rows = (guint) MIN ((gsize) G_MAXUINT, limit / 2 / MAX (row_bytes, 1));

  g_mutex_lock (&self->lock);
  g_set_object (&self->scan, scan);
  if (raw != NULL)
    tomo_raw_rows_ref (raw);
  g_clear_pointer (&self->raw, tomo_raw_rows_unref);
  self->raw = raw;
  g_array_set_size (self->pending, 0);
  while (self->pending->len < max_rows && (n_ahead < ahead || n_behind < behind))
    {
      /* Two ahead for each one behind. */
      gboolean take_ahead = n_ahead < ahead && (n_behind >= behind || n_ahead < 2 * (n_behind + 1));
      gint64 r;

      if (take_ahead)
        r = (gint64) row + dir * (gint64) ++n_ahead;
      else
        r = (gint64) row - dir * (gint64) ++n_behind;
      if (r < 0 || r >= height)
        {
          /* Past the edge: nothing more that way. */
          if (take_ahead)
            ahead = n_ahead;
          else
            behind = n_behind;
        }
      else if (raw == NULL || !tomo_raw_rows_contains (raw, (guint) r))
        {
          guint u = (guint) r;
          g_array_append_val (self->pending, u);
        }
    }
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

void
tomo_scrub_prefetch_aim (TomoScrubPrefetch *self,
                         TomoScan          *scan,
                         guint              row,
                         int                direction,
                         guint              ahead,
                         guint              behind)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (TOMO_IS_SCAN (scan));

  aim (self, scan, NULL, row, direction, ahead, behind);
}

void
tomo_scrub_prefetch_aim_raw (TomoScrubPrefetch *self,
                             TomoRawRows       *raw,
                             guint              row,
                             int                direction,
                             guint              ahead,
                             guint              behind)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (raw != NULL);

  aim (self, tomo_raw_rows_get_scan (raw), raw, row, direction, ahead, behind);
}

void
tomo_scrub_prefetch_cancel (TomoScrubPrefetch *self)
{
  g_return_if_fail (self != NULL);

  g_mutex_lock (&self->lock);
  g_array_set_size (self->pending, 0);
  g_mutex_unlock (&self->lock);
}

void
tomo_scrub_prefetch_wait_idle (TomoScrubPrefetch *self)
{
  g_return_if_fail (self != NULL);

  g_mutex_lock (&self->lock);
  while (!self->quit && (self->busy || self->pending->len > 0))
    g_cond_wait (&self->cond, &self->lock);
  g_mutex_unlock (&self->lock);
}

guint
tomo_scrub_prefetch_get_n_read (TomoScrubPrefetch *self)
{
  guint n;

  g_return_val_if_fail (self != NULL, 0);

  g_mutex_lock (&self->lock);
  n = self->n_read;
  g_mutex_unlock (&self->lock);
  return n;
}

void
tomo_scrub_prefetch_free (TomoScrubPrefetch *self)
{
  if (self == NULL)
    return;

  g_mutex_lock (&self->lock);
  self->quit = TRUE;
  g_array_set_size (self->pending, 0);
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  g_thread_join (self->thread);

  g_clear_object (&self->scan);
  g_clear_pointer (&self->raw, tomo_raw_rows_unref);
  g_array_unref (self->pending);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self);
}
