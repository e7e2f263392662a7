/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The volume store's insides for the raw fill (tomo-gpu-store-fill.cu),
 * which keeps its own code out of tomo-gpu-store.cu.  CUDA sources only.
 */
#pragma once

#include <cuda_runtime.h>

#include "tomo-gpu-store.h"

typedef struct
{
  int device;
  guint width, n_proj, row_start, n_rows;
  gboolean have_filter;
  TomoGpuContext *ctx;     /* the store's filter */
  cudaStream_t stream;     /* the store's stream: filter and store there */
} TomoGpuStoreFill;

void     _tomo_gpu_store_get_fill   (TomoGpuStore     *store,
                                     TomoGpuStoreFill *fill);
/* n filtered rows on the device (n × n_proj × width floats) into the store
 * from row `row` (relative to row_start), converted to half where it holds
 * half; asynchronous on the store's stream. */
gboolean _tomo_gpu_store_put_device (TomoGpuStore *store,
                                     guint         row,
                                     guint         n,
                                     const float  *d_filtered,
                                     GError      **error);
/* Rows held (0 while filling, n_rows when done) and the fill's wall time. */
void     _tomo_gpu_store_set_filled (TomoGpuStore *store,
                                     guint         n_filled,
                                     double        fill_ms);
