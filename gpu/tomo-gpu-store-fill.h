/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Filling the volume store from raw rows (gpu/tomo-gpu-store-fill.cu): the
 * rows come up in slabs as the file holds them (uint16 stays two bytes on
 * the bus) with their averaged flats and darks, and are preprocessed
 * (tomo-gpu-preprocess.cu: the arithmetic, clamps and counts of
 * tomo_preprocess_row()), filtered and stored on the device; the host only
 * reads.  Plain C; tomo-gpu-store-stub.c stands in without CUDA.
 */
#pragma once

#include "tomo-gpu-store.h"

G_BEGIN_DECLS

/* Rows [row, row + n) of the scan (absolute rows): n planes of
 * n_proj × width values of the fill's type into `raw`, and when the fill
 * normalises their averaged flats and darks (n × width floats each). */
typedef gboolean (*TomoGpuReadSlabFunc) (guint     row,
                                         guint     n,
                                         void     *raw,
                                         float    *flat,
                                         float    *dark,
                                         gpointer  user_data,
                                         GError  **error);

typedef struct
{
  TomoGpuRawType type;
  gboolean normalise, apply_log;
  guint slab_rows;                   /* rows per read; 0: 8 */
  TomoGpuReadSlabFunc read;
  void (*progress) (guint done, guint total, gpointer user_data); /* may be NULL */
  gpointer user_data;
  volatile gint *cancel;             /* non-zero → stop, "cancelled" */
  TomoGpuPreprocessCounts *counts;   /* the store's n_rows entries, or NULL */
  /* Optional: each row's line integrals resampled along the row before
   * the filter, as TomoGpuVolumeJob.row_taps says (absolute rows). */
  void (*row_taps) (guint row, int *offset, float weights[4], gpointer user_data);
} TomoGpuStoreRawFill;

/* Reads every row of the store's range with fill->read, one slab after
 * another into pinned host memory (reading the next while the device
 * works on the last), uploads, preprocesses, filters and stores.  A row
 * of which more than half the values are NaN, infinite or absurdly large
 * is refused (TOMO_GPU_ERROR_INVALID naming it; its counts are in
 * fill->counts), as tomo_scan_read_sinogram() refuses it.  The store is
 * empty after a failure. */
gboolean tomo_gpu_store_fill_raw (TomoGpuStore              *store,
                                  const TomoGpuStoreRawFill *fill,
                                  GError                   **error);

G_END_DECLS
