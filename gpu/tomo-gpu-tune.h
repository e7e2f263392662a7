/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Tuning and measurement of the GPU engine (`tomolive bench`, the GPU tests):
 * filtering methods, already-filtered input, clocks and the `auto` kernel's
 * tuning table.
 */
#pragma once

#include "tomo-gpu.h"

G_BEGIN_DECLS

/* Like tomo_gpu_context_load_sinograms(), with sinograms that are already
 * filtered (tests, benchmarks). */
gboolean tomo_gpu_context_load_filtered  (TomoGpuContext *ctx,
                                          guint           n_slices,
                                          const float    *filtered,
                                          GError        **error);

/* Filtering method: two real rows packed into one complex transform
 * (real part row a, imaginary part row b) or one real-to-complex transform per
 * row.  DEFAULT is the one `tomolive bench` measured faster on the H100. */
typedef enum
{
  TOMO_GPU_FILTER_METHOD_DEFAULT = 0,
  TOMO_GPU_FILTER_METHOD_C2C_PAIR,
  TOMO_GPU_FILTER_METHOD_R2C,
} TomoGpuFilterMethod;

void                tomo_gpu_context_set_filter_method (TomoGpuContext     *ctx,
                                                        TomoGpuFilterMethod method);
/* The method that runs (DEFAULT resolved). */
TomoGpuFilterMethod tomo_gpu_context_get_filter_method (TomoGpuContext     *ctx);
/* Copies the filtered sinograms of the last load to host memory
 * (n_slices × n_proj × width floats, planar). */
gboolean            tomo_gpu_context_download_filtered (TomoGpuContext     *ctx,
                                                        float              *host,
                                                        GError            **error);

/* Peak SM and memory clocks in kHz (FALSE if no such device). */
gboolean tomo_gpu_get_device_clocks (int  device,
                                     int *sm_khz,
                                     int *mem_khz);

/* Tuning table of the `auto` kernel, written by `tomolive bench --tune`:
 * g_get_user_cache_dir()/tomolive/tune-<device name>.ini, group "auto",
 * keys tomo_gpu_tune_key() → kernel name.  Contexts read it when created. */
char    *tomo_gpu_get_tune_path     (int device);
/* Size class of a slice of `width` pixels: 1024, 2048 or 4096 (nearest). */
guint    tomo_gpu_size_class        (guint width);
char    *tomo_gpu_tune_key          (guint n_slices,
                                     int   interp,
                                     guint size_class);
/* Re-reads the tuning table (after --tune wrote it). */
void     tomo_gpu_context_reload_tuning (TomoGpuContext *ctx);

G_END_DECLS
