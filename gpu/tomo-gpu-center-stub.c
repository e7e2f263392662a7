/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gpu/tomo-gpu-center.h without CUDA: nothing can be created.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include "tomo-gpu-center.h"

TomoGpuXcorr *
tomo_gpu_xcorr_new (int      device,
                    guint    max_width,
                    guint    max_pairs,
                    GError **error)
{
  g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NOT_BUILT,
                       "tomolive was built without CUDA: no GPU cross-correlation");
  return NULL;
}

void tomo_gpu_xcorr_free (TomoGpuXcorr *xc) { }

gboolean
tomo_gpu_xcorr_run (TomoGpuXcorr *xc, TomoGpuXcorrMethod method, const float *a, const float *b,
                    guint n_pairs, guint width, int d_lo, guint n_shifts, guint min_overlap,
                    float *out, GError **error)
{
  g_return_val_if_reached (FALSE);
}

double tomo_gpu_xcorr_get_last_ms (TomoGpuXcorr *xc) { return 0.0; }
