/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-gpu.h"

G_BEGIN_DECLS

/* Cross-correlation of detector rows for finding the rotation axis.
 *
 * For n_pairs rows a[p] and b[p] (width floats each) and the shifts
 * d = d_lo … d_lo + n_shifts − 1, the normalised (Pearson) correlation of
 * a[p][x] with b[p][x + d] over the columns both cover; −2 where fewer than
 * min_overlap columns overlap or one side is flat.  Two ways to the sums of
 * products: `direct` (one warp per 32 shifts, each loaded value passed
 * around the warp by shuffles and used 32 times) and `fft` (cuFFT, every
 * shift at once); the overlap sums come from prefix sums either way.
 * `direct` is the one to use: faster for the ranges the centre estimate
 * asks for (H100: 0.0104 vs 0.0193 ms for 32 pairs × 19 shifts, 0.0156 vs
 * 0.0221 ms for every shift of 4×-binned rows), and exact over short
 * overlaps (products summed in double), where the FFT's rounding (relative
 * to the whole rows) gives r wrong by ~1e-3 — enough to pick a spurious
 * peak at the detector's end.
 * cuFFT only wins for every shift of full-width rows, which nothing uses. */
typedef enum
{
  TOMO_GPU_XCORR_DIRECT = 0,
  TOMO_GPU_XCORR_FFT = 1,
} TomoGpuXcorrMethod;

typedef struct _TomoGpuXcorr TomoGpuXcorr;

TomoGpuXcorr *tomo_gpu_xcorr_new         (int      device,
                                          guint    max_width,
                                          guint    max_pairs,
                                          GError **error);
void          tomo_gpu_xcorr_free        (TomoGpuXcorr *xc);
gboolean      tomo_gpu_xcorr_run         (TomoGpuXcorr      *xc,
                                          TomoGpuXcorrMethod method,
                                          const float       *a,
                                          const float       *b,
                                          guint              n_pairs,
                                          guint              width,
                                          int                d_lo,
                                          guint              n_shifts,
                                          guint              min_overlap,
                                          float             *out,
                                          GError           **error);
/* Device time of the last run's sums of products (CUDA events), ms. */
double        tomo_gpu_xcorr_get_last_ms (TomoGpuXcorr *xc);

G_END_DECLS
