/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-row-prefetch"

#include "config.h"

#include <string.h>

#include "tomo-row-prefetch.h"

typedef struct
{
  gint64 row;       /* the row this slot holds or is reading; −1 free */
  gboolean ready;
  float *data;      /* raw row, then flat and dark */
  GError *error;
  TomoPreprocessStats stats;  /* of this read: the flat and dark averaging */
} Slot;

struct _TomoRowPrefetch
{
  TomoScan *scan;
  guint row_start, row_end;
  gsize plane;
  gsize elt;        /* bytes per value */
  gsize raw_bytes;  /* bytes of the projections (aligned), then 2 × width floats */
  guint width;
  guint depth;
  Slot *slots;
  GThreadPool *pool;
  GMutex lock;
  GCond cond;
  double busy_ms;
  TomoPreprocessStats stats;  /* of the rows taken */
  gboolean stop;
};

/* The flat (then the dark) of a raw slot's buffer. */
static float *
raw_flat (TomoRowPrefetch *p,
          float           *data)
{
  return (float *) ((char *) data + p->raw_bytes);
}

static void
read_run (gpointer data,
          gpointer user_data)
{
  TomoRowPrefetch *p = user_data;
  guint row = GPOINTER_TO_UINT (data) - 1;
  Slot *slot = &p->slots[row % p->depth];
  GError *error = NULL;
  TomoPreprocessStats stats = { 0 };
  gint64 t0 = g_get_monotonic_time ();
  gboolean stop;

  g_mutex_lock (&p->lock);
  stop = p->stop;
  g_mutex_unlock (&p->lock);
  if (!stop)
    tomo_scan_read_raw_row (p->scan, row, slot->data, raw_flat (p, slot->data),
                            raw_flat (p, slot->data) + p->width, &stats, &error);

  g_mutex_lock (&p->lock);
  slot->error = error;
  slot->stats = stats;
  slot->ready = TRUE;
  p->busy_ms += (g_get_monotonic_time () - t0) / 1e3;
  g_cond_broadcast (&p->cond);
  g_mutex_unlock (&p->lock);
}

/* With the lock held: the slot of `row` starts reading it. */
static void
schedule_locked (TomoRowPrefetch *p,
                 guint            row)
{
  Slot *slot = &p->slots[row % p->depth];

  if (row >= p->row_end || slot->row >= 0)
    return;
  slot->row = row;
  slot->ready = FALSE;
  g_thread_pool_push (p->pool, GUINT_TO_POINTER (row + 1), NULL);
}

TomoRowPrefetch *
tomo_row_prefetch_new_raw (TomoScan *scan,
                           guint     row_start,
                           guint     row_end,
                           guint     n_threads,
                           guint     depth)
{
  TomoRowPrefetch *p;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), NULL);
  g_return_val_if_fail (row_end > row_start, NULL);

  p = g_new0 (TomoRowPrefetch, 1);
  p->scan = g_object_ref (scan);
  p->row_start = row_start;
  p->row_end = row_end;
  p->width = tomo_scan_get_width (scan);
  p->plane = (gsize) tomo_scan_get_n_projections (scan) * p->width;
  p->elt = tomo_scan_get_raw_dtype (scan) == TOMO_DTYPE_UINT16 ? 2 : 4;
  p->raw_bytes = (p->plane * p->elt + 15) & ~(gsize) 15;
  p->depth = MAX (depth, 2);
  p->slots = g_new0 (Slot, p->depth);
  for (guint i = 0; i < p->depth; i++)
    {
      p->slots[i].row = -1;
      p->slots[i].data = g_malloc (p->raw_bytes + 2 * (gsize) p->width * sizeof (float));
    }
  g_mutex_init (&p->lock);
  g_cond_init (&p->cond);
  p->pool = g_thread_pool_new (read_run, p, MAX (n_threads, 1), TRUE, NULL);
  g_mutex_lock (&p->lock);
  for (guint row = row_start; row < row_end && row < row_start + p->depth; row++)
    schedule_locked (p, row);
  g_mutex_unlock (&p->lock);
  return p;
}

gboolean
tomo_row_prefetch_take_raw (TomoRowPrefetch *p,
                            guint            row,
                            void            *raw,
                            float           *flat,
                            float           *dark,
                            GError         **error)
{
  Slot *slot;
  GError *slot_error;
  gboolean normalise;

  g_return_val_if_fail (p != NULL, FALSE);
  slot = &p->slots[row % p->depth];
  g_mutex_lock (&p->lock);
  if (slot->row != row)
    {
      /* Not in the window (taken far out of order): read it here. */
      TomoPreprocessStats stats = { 0 };
      gboolean ok;

      g_mutex_unlock (&p->lock);
      ok = tomo_scan_read_raw_row (p->scan, row, raw, flat, dark, &stats, error);
      g_mutex_lock (&p->lock);
      tomo_preprocess_stats_add (&p->stats, &stats);
      g_mutex_unlock (&p->lock);
      return ok;
    }
  while (!slot->ready)
    g_cond_wait (&p->cond, &p->lock);
  g_mutex_unlock (&p->lock);

  memcpy (raw, slot->data, p->plane * p->elt);
  tomo_scan_get_preprocessing (p->scan, &normalise, NULL);
  if (normalise)
    {
      memcpy (flat, raw_flat (p, slot->data), p->width * sizeof (float));
      memcpy (dark, raw_flat (p, slot->data) + p->width, p->width * sizeof (float));
    }

  g_mutex_lock (&p->lock);
  slot_error = g_steal_pointer (&slot->error);
  tomo_preprocess_stats_add (&p->stats, &slot->stats);
  slot->row = -1;
  schedule_locked (p, row + p->depth);
  g_mutex_unlock (&p->lock);
  if (slot_error != NULL)
    {
      g_propagate_error (error, slot_error);
      return FALSE;
    }
  return TRUE;
}

double
tomo_row_prefetch_get_busy_ms (TomoRowPrefetch *p)
{
  double ms;

  g_mutex_lock (&p->lock);
  ms = p->busy_ms;
  g_mutex_unlock (&p->lock);
  return ms;
}

void
tomo_row_prefetch_get_stats (TomoRowPrefetch     *p,
                             TomoPreprocessStats *stats)
{
  g_mutex_lock (&p->lock);
  *stats = p->stats;
  g_mutex_unlock (&p->lock);
}

void
tomo_row_prefetch_free (TomoRowPrefetch *p)
{
  if (p == NULL)
    return;
  g_mutex_lock (&p->lock);
  p->stop = TRUE;
  g_mutex_unlock (&p->lock);
  /* Queued reads see `stop` and return at once. */
  g_thread_pool_free (p->pool, FALSE, TRUE);
  for (guint i = 0; i < p->depth; i++)
    {
      g_clear_error (&p->slots[i].error);
      g_free (p->slots[i].data);
    }
  g_free (p->slots);
  g_mutex_clear (&p->lock);
  g_cond_clear (&p->cond);
  g_object_unref (p->scan);
  g_free (p);
}
