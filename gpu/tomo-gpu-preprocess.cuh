/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The arithmetic of tomo_preprocess_row() (app/io/tomo-preprocess.c) for one
 * value on the device, in double as there, so that the same values are
 * clamped and replaced: −log((v − dark)/(flat − dark)), a non-positive
 * numerator or denominator clamped to 1e-6, a non-finite input or a result
 * NaN, infinite or beyond ±1e6 replaced by 0.  Used by the volume pipeline
 * (tomo-gpu-preprocess.cu) and the live slice (tomo-gpu-accumulate.cu).
 */
#pragma once

#define TOMO_GPU_PRE_TINY 1e-6
#define TOMO_GPU_PRE_MAX_LINE_INTEGRAL 1e6

/* Bits of *flags: 1 clamped (n_nonpositive), 2 replaced (n_nonfinite). */
__device__ static inline float
tomo_gpu_preprocess_value (double v,
                           float  flat,
                           float  dark,
                           int    normalise,
                           int    apply_log,
                           int   *flags)
{
  double num = v, den = 1.0, r;
  int clamped = 0;

  *flags = 0;
  if (!isfinite (v))
    {
      *flags = 2;
      return 0.0f;
    }
  if (normalise)
    {
      double d = isfinite (dark) ? (double) dark : 0.0;

      den = isfinite (flat) ? (double) flat - d : 0.0;
      num = v - d;
      if (!(den > 0.0))
        {
          den = TOMO_GPU_PRE_TINY;
          clamped = 1;
        }
    }
  if ((normalise || apply_log) && !(num > 0.0))
    {
      num = TOMO_GPU_PRE_TINY;
      clamped = 1;
    }
  r = num / den;
  if (apply_log)
    r = -log (r);
  if (!isfinite (r) || fabs (r) > TOMO_GPU_PRE_MAX_LINE_INTEGRAL)
    {
      *flags = clamped | 2;
      return 0.0f;
    }
  *flags = clamped;
  return (float) r;
}
