/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-scan.h"

G_BEGIN_DECLS

/* Raw rows [row_start, row_end) (tomo_scan_read_raw_row(), in
 * tomo_scan_get_raw_dtype(), no preprocessing) with their flats and darks,
 * read ahead by a pool of threads into a ring of `depth` rows, for
 * consumers that take them about in order (the volume pipeline's device
 * path).  The file read is serialised by the scan; the averaging of the
 * flats and darks runs on all reader threads at once. */
typedef struct _TomoRowPrefetch TomoRowPrefetch;

TomoRowPrefetch *tomo_row_prefetch_new_raw  (TomoScan *scan,
                                             guint     row_start,
                                             guint     row_end,
                                             guint     n_threads,
                                             guint     depth);
/* Copies row `row` into `raw` and, when the scan normalises, its flat and
 * dark (width floats each), waiting for it; a row outside the ring's window
 * is read on the spot. */
gboolean         tomo_row_prefetch_take_raw (TomoRowPrefetch *prefetch,
                                             guint            row,
                                             void            *raw,
                                             float           *flat,
                                             float           *dark,
                                             GError         **error);
/* Busy time of the reader threads, summed (ms). */
double           tomo_row_prefetch_get_busy_ms (TomoRowPrefetch *prefetch);
/* The counts of the reads of the rows taken so far: those of averaging the
 * flat and dark frames (the values' own come from the device). */
void             tomo_row_prefetch_get_stats   (TomoRowPrefetch     *prefetch,
                                                TomoPreprocessStats *stats);
void             tomo_row_prefetch_free (TomoRowPrefetch *prefetch);

G_END_DECLS
