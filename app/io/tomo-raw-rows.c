/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The raw row cache of the viewer's device path (tomo-raw-rows.h).  A
 * sinogram row across all projections is a strided read (one detector row
 * of every frame): files chunked by frames make it cost the whole chunk,
 * so a miss reads every row a chunk spans at once (one hyperslab,
 * _tomo_scan_read_raw_rows()) and keeps them, in the file's own type.
 */
#define G_LOG_DOMAIN "tomo-raw-rows"

#include "config.h"

#include <errno.h>
#include <sys/stat.h>

#include <glib/gstdio.h>

#include "tomo-error.h"
#include "tomo-raw-rows.h"
#include "tomo-scan-private.h"

typedef struct
{
  TomoRawRow *row;
  GList link;               /* in lru, data = this entry */
} Entry;

struct _TomoRawRows
{
  gint ref_count;
  GMutex lock;
  GCond cond;
  TomoScan *scan;
  GHashTable *rows;         /* row → Entry */
  GQueue lru;               /* most recent first */
  GHashTable *in_flight;    /* rows of slabs being read */
  gsize bytes, limit, row_bytes;
  guint slab_rows;
  guint64 n_hits, n_rows_read, n_slabs;
  /* The file as it was when the cache was made: a file cut short reads as
   * zeros past its end, and would make slices of nothing, silently. */
  gboolean have_stat;
  gint64 file_size;
};

TomoRawRow *
tomo_raw_row_ref (TomoRawRow *row)
{
  g_return_val_if_fail (row != NULL, NULL);
  g_atomic_int_inc (&row->ref_count);
  return row;
}

void
tomo_raw_row_unref (TomoRawRow *row)
{
  if (row == NULL || !g_atomic_int_dec_and_test (&row->ref_count))
    return;
  g_free (row->data);
  g_free (row->flat);
  g_free (row->dark);
  g_free (row);
}

static void
entry_free (gpointer data)
{
  Entry *entry = data;

  tomo_raw_row_unref (entry->row);
  g_free (entry);
}

TomoRawRows *
tomo_raw_rows_new (TomoScan *scan,
                   gsize     limit)
{
  TomoRawRows *self;
  guint chunk, height;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), NULL);

  self = g_new0 (TomoRawRows, 1);
  self->ref_count = 1;
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->scan = g_object_ref (scan);
  self->rows = g_hash_table_new_full (NULL, NULL, NULL, entry_free);
  self->in_flight = g_hash_table_new (NULL, NULL);
  if (limit == 0)
    _tomo_scan_get_cache_usage (scan, NULL, NULL, &limit);
  self->limit = limit;
  self->row_bytes = (gsize) tomo_scan_get_n_projections (scan) * tomo_scan_get_width (scan)
                    * _tomo_dtype_size (tomo_scan_get_raw_dtype (scan));
  /* Every row a chunk spans, as many as a quarter of the cache holds: the
   * slab must not push out the rows around the one shown. */
  chunk = _tomo_scan_get_chunk_rows (scan);
  height = tomo_scan_get_height (scan);
  self->slab_rows = CLAMP (MIN (chunk, limit / 4 / MAX (self->row_bytes, 1)), 1, MAX (height, 1));
  {
    GStatBuf st;

    if (g_stat (tomo_scan_get_path (scan), &st) == 0 && S_ISREG (st.st_mode))
      {
        self->have_stat = TRUE;
        self->file_size = st.st_size;
      }
  }
  return self;
}

TomoRawRows *
tomo_raw_rows_ref (TomoRawRows *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_int_inc (&self->ref_count);
  return self;
}

void
tomo_raw_rows_unref (TomoRawRows *self)
{
  if (self == NULL || !g_atomic_int_dec_and_test (&self->ref_count))
    return;
  g_hash_table_unref (self->rows);
  g_hash_table_unref (self->in_flight);
  g_clear_object (&self->scan);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self);
}

TomoScan *
tomo_raw_rows_get_scan (TomoRawRows *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->scan;
}

static void
insert_locked (TomoRawRows *self,
               TomoRawRow  *row)
{
  Entry *entry;

  if (g_hash_table_contains (self->rows, GUINT_TO_POINTER (row->row)))
    {
      tomo_raw_row_unref (row);
      return;
    }
  entry = g_new0 (Entry, 1);
  entry->row = row;
  entry->link.data = entry;
  g_hash_table_insert (self->rows, GUINT_TO_POINTER (row->row), entry);
  g_queue_push_head_link (&self->lru, &entry->link);
  self->bytes += self->row_bytes;
  while (self->bytes > self->limit && self->lru.length > 1)
    {
      Entry *victim = self->lru.tail->data;

      g_queue_unlink (&self->lru, &victim->link);
      self->bytes -= self->row_bytes;
      g_hash_table_remove (self->rows, GUINT_TO_POINTER (victim->row->row));
    }
}

/* Before a read: the scan's file is still there, no shorter than it was. */
static gboolean
check_file (TomoRawRows *self,
            GError     **error)
{
  const char *path = tomo_scan_get_path (self->scan);
  GStatBuf st;

  if (!self->have_stat)
    return TRUE;
  if (g_stat (path, &st) != 0)
    {
      int saved = errno;

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "Scan %s is gone (%s): open it again to read more rows", path,
                   g_strerror (saved));
      return FALSE;
    }
  if (st.st_size < self->file_size)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "Scan %s is now %" G_GINT64_FORMAT " bytes, %" G_GINT64_FORMAT
                   " when it was opened: it was cut short or replaced; open it again",
                   path, (gint64) st.st_size, self->file_size);
      return FALSE;
    }
  return TRUE;
}

/* Rows [first, first + n) from the file, outside the lock; the slab's own
 * buffers become the rows' (one allocation per row). */
static gboolean
read_slab (TomoRawRows *self,
           guint        first,
           guint        n,
           TomoRawRow **rows,
           GError     **error)
{
  guint width = tomo_scan_get_width (self->scan);
  gboolean normalise;
  g_autofree guchar *data = g_try_malloc (self->row_bytes * n);
  g_autofree float *flat = NULL, *dark = NULL;
  g_autofree TomoPreprocessStats *stats = g_new0 (TomoPreprocessStats, n);

  tomo_scan_get_preprocessing (self->scan, &normalise, NULL);
  if (data == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "Scan %s: out of memory for %u raw rows of %zu bytes",
                   tomo_scan_get_path (self->scan), n, self->row_bytes);
      return FALSE;
    }
  if (normalise)
    {
      flat = g_new (float, (gsize) n * width);
      dark = g_new (float, (gsize) n * width);
    }
  if (!check_file (self, error)
      || !_tomo_scan_read_raw_rows (self->scan, first, n, data, flat, dark, stats, error))
    return FALSE;
  for (guint r = 0; r < n; r++)
    {
      TomoRawRow *row = g_new0 (TomoRawRow, 1);

      row->ref_count = 1;
      row->row = first + r;
      row->dtype = tomo_scan_get_raw_dtype (self->scan);
      row->n_proj = tomo_scan_get_n_projections (self->scan);
      row->width = width;
      row->n_bytes = self->row_bytes;
      row->data = n == 1 ? g_steal_pointer (&data)
                         : g_memdup2 (data + r * self->row_bytes, self->row_bytes);
      if (normalise)
        {
          row->flat = g_memdup2 (flat + (gsize) r * width, width * sizeof (float));
          row->dark = g_memdup2 (dark + (gsize) r * width, width * sizeof (float));
        }
      row->stats = stats[r];
      rows[r] = row;
    }
  return TRUE;
}

/* The row from memory, or NULL with *must_read set when this thread is to
 * read its slab [*first, *first + *n) (marked in flight). */
static TomoRawRow *
lookup_locked (TomoRawRows *self,
               guint        row,
               guint       *first,
               guint       *n)
{
  guint height = tomo_scan_get_height (self->scan);

  for (;;)
    {
      Entry *entry = g_hash_table_lookup (self->rows, GUINT_TO_POINTER (row));

      if (entry != NULL)
        {
          g_queue_unlink (&self->lru, &entry->link);
          g_queue_push_head_link (&self->lru, &entry->link);
          self->n_hits++;
          return tomo_raw_row_ref (entry->row);
        }
      if (!g_hash_table_contains (self->in_flight, GUINT_TO_POINTER (row)))
        break;
      g_cond_wait (&self->cond, &self->lock);
    }
  /* The slab the row lies in, less rows other readers have in flight. */
  *first = row - row % self->slab_rows;
  *n = MIN (self->slab_rows, height - *first);
  while (*first < row && g_hash_table_contains (self->in_flight, GUINT_TO_POINTER (*first)))
    (*first)++, (*n)--;
  for (guint r = *first; r < *first + *n; r++)
    if (r > row && g_hash_table_contains (self->in_flight, GUINT_TO_POINTER (r)))
      {
        *n = r - *first;
        break;
      }
  for (guint r = *first; r < *first + *n; r++)
    g_hash_table_add (self->in_flight, GUINT_TO_POINTER (r));
  return NULL;
}

TomoRawRow *
tomo_raw_rows_get (TomoRawRows *self,
                   guint        row,
                   GError     **error)
{
  TomoRawRow *found;
  g_autofree TomoRawRow **rows = NULL;
  guint first = 0, n = 0;
  gboolean ok;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (row >= tomo_scan_get_height (self->scan))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Scan %s: row %u is out of range (the detector has %u rows)",
                   tomo_scan_get_path (self->scan), row, tomo_scan_get_height (self->scan));
      return NULL;
    }
  g_mutex_lock (&self->lock);
  found = lookup_locked (self, row, &first, &n);
  g_mutex_unlock (&self->lock);
  if (found != NULL)
    return found;

  rows = g_new0 (TomoRawRow *, n);
  ok = read_slab (self, first, n, rows, error);

  g_mutex_lock (&self->lock);
  for (guint r = first; r < first + n; r++)
    g_hash_table_remove (self->in_flight, GUINT_TO_POINTER (r));
  if (ok)
    {
      self->n_rows_read += n;
      self->n_slabs++;
      found = tomo_raw_row_ref (rows[row - first]);
      /* Rows past the limit (a cache smaller than one slab) are not kept. */
      for (guint i = 0; i < n; i++)
        if (self->row_bytes <= self->limit)
          insert_locked (self, rows[i]);
        else
          tomo_raw_row_unref (rows[i]);
    }
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  return found;
}

gboolean
tomo_raw_rows_prefetch (TomoRawRows *self,
                        guint        row)
{
  g_autoptr(TomoRawRow) got = NULL;
  guint64 before;

  g_return_val_if_fail (self != NULL, FALSE);

  g_mutex_lock (&self->lock);
  before = self->n_slabs;
  if (g_hash_table_contains (self->rows, GUINT_TO_POINTER (row)))
    {
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  g_mutex_unlock (&self->lock);
  got = tomo_raw_rows_get (self, row, NULL);
  g_mutex_lock (&self->lock);
  before = self->n_slabs != before;
  g_mutex_unlock (&self->lock);
  return got != NULL && before;
}

gboolean
tomo_raw_rows_contains (TomoRawRows *self,
                        guint        row)
{
  gboolean yes;

  g_return_val_if_fail (self != NULL, FALSE);

  g_mutex_lock (&self->lock);
  yes = g_hash_table_contains (self->rows, GUINT_TO_POINTER (row));
  g_mutex_unlock (&self->lock);
  return yes;
}

void
tomo_raw_rows_get_sizes (TomoRawRows *self,
                         guint       *slab_rows,
                         gsize       *row_bytes,
                         gsize       *limit)
{
  g_return_if_fail (self != NULL);

  if (slab_rows != NULL)
    *slab_rows = self->slab_rows;
  if (row_bytes != NULL)
    *row_bytes = self->row_bytes;
  if (limit != NULL)
    *limit = self->limit;
}

void
tomo_raw_rows_get_counts (TomoRawRows *self,
                          guint64     *n_hits,
                          guint64     *n_rows_read,
                          guint64     *n_slabs)
{
  g_return_if_fail (self != NULL);

  g_mutex_lock (&self->lock);
  if (n_hits != NULL)
    *n_hits = self->n_hits;
  if (n_rows_read != NULL)
    *n_rows_read = self->n_rows_read;
  if (n_slabs != NULL)
    *n_slabs = self->n_slabs;
  g_mutex_unlock (&self->lock);
}
