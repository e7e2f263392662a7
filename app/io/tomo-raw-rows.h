/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-scan.h"

G_BEGIN_DECLS

/* One detector row as the file holds it: what a device preprocesses. */
typedef struct
{
  /*< private >*/
  gint ref_count;
  /*< public >*/
  guint row;
  TomoDType dtype;           /* tomo_scan_get_raw_dtype() */
  guint n_proj, width;
  void *data;                /* n_proj × width values of dtype */
  gsize n_bytes;             /* of data */
  float *flat, *dark;        /* width averaged values each; NULL when the scan does not normalise */
  TomoPreprocessStats stats; /* of averaging the flat and dark frames */
} TomoRawRow;

TomoRawRow *tomo_raw_row_ref   (TomoRawRow *row);
void        tomo_raw_row_unref (TomoRawRow *row);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoRawRow, tomo_raw_row_unref)

/* A cache of raw rows of one scan for the viewer's row changes on a device:
 * a miss reads a slab of neighbouring rows in one file read, sized to the
 * file's chunking (all rows a chunk spans, as many as a quarter of the
 * cache holds), so the next rows the user goes to come from memory.
 * Least recently used rows leave first.  Thread-safe: the request path and
 * a prefetcher share it; a row being read is not read twice. */
typedef struct _TomoRawRows TomoRawRows;

/* limit: bytes the rows may take; 0 for the scan's row cache size. */
TomoRawRows *tomo_raw_rows_new      (TomoScan *scan,
                                     gsize     limit);
TomoRawRows *tomo_raw_rows_ref      (TomoRawRows *self);
void         tomo_raw_rows_unref    (TomoRawRows *self);
TomoScan    *tomo_raw_rows_get_scan (TomoRawRows *self);
/* Row `row`, from memory or read (with its slab); a new reference. */
TomoRawRow  *tomo_raw_rows_get      (TomoRawRows *self,
                                     guint        row,
                                     GError     **error);
/* Reads row `row` (and its slab) into the cache unless it is there; a
 * failure is left for the request to report.  TRUE when the file was read. */
gboolean     tomo_raw_rows_prefetch (TomoRawRows *self,
                                     guint        row);
gboolean     tomo_raw_rows_contains (TomoRawRows *self,
                                     guint        row);
/* Rows a slab read takes, bytes of one row and the cache's limit (each
 * out-parameter may be NULL). */
void         tomo_raw_rows_get_sizes     (TomoRawRows *self,
                                          guint       *slab_rows,
                                          gsize       *row_bytes,
                                          gsize       *limit);
/* Rows served from memory, rows read from the file, slab reads. */
void         tomo_raw_rows_get_counts    (TomoRawRows *self,
                                          guint64     *n_hits,
                                          guint64     *n_rows_read,
                                          guint64     *n_slabs);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoRawRows, tomo_raw_rows_unref)

G_END_DECLS
