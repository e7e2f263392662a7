/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-types.h"

G_BEGIN_DECLS

/* Padded row length for filtering: the smallest even 2^a·3^b·5^c·7^d ≥
 * 2·width (FFTW and cuFFT are fastest on such sizes; the GPU's paired
 * complex transform needs an even length). */
guint  tomo_filter_padded_width (guint width);

/* Frequency response of the reconstruction filter for rows padded to
 * `padded_width`, as padded_width/2 + 1 real coefficients (the filter is real
 * and even, so R2C/C2R and C2C transforms use the same numbers).
 *
 * The ramp is the DFT of the discrete spatial-domain ramp
 *   h[0] = 1/2, h[n] = −2/(π² n²) for odd n, 0 for even n ≠ 0
 * (Kak & Slaney, doubled), wrapped to the padded length, so there is no DC
 * offset; the window of `type` multiplies it.  `scale` multiplies everything:
 * callers pass the FBP factor π/(2·N) divided by padded_width (the
 * normalisation of an unnormalised inverse FFT), so back projection only sums.
 * Both backends use this one function: the CPU and GPU filters are identical.
 * The ramps of the last four lengths asked for are kept (thread-safe):
 * another filter type or scale at such a length costs only the window. */
void   tomo_filter_response     (TomoFilterType type,
                                 guint          padded_width,
                                 double         scale,
                                 double        *response);
/* Forgets the kept ramps, so that the next response computes its own: for
 * a benchmark's baseline. */
void   _tomo_filter_forget_ramp (void);

/* The FBP scale for n_proj projections: π / (2·n_proj). */
double tomo_fbp_scale           (guint n_proj);

/* What a back projector of n_proj projections of `width` columns needs: the
 * padded width (stored in *padded_width) and its response with the FBP
 * scale and the inverse-FFT normalisation applied.  Free with g_free(). */
double *tomo_filter_fbp_response (TomoFilterType type,
                                  guint          width,
                                  guint          n_proj,
                                  guint         *padded_width);

G_END_DECLS
