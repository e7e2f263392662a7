/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The preview volume of the store (tomo_gpu_store_preview): nx × ny × nz
 * voxels back projected in one launch from a reduced copy of the store, as
 * app/recon/tomo-preview.c defines it (the CPU reference):
 *
 *   binned[k][pb][cb] = mean over the rows of slab k and the `bin` columns
 *                       cb·bin … cb·bin + bin − 1 (zero past the detector)
 *                       of projection pb·step;
 *   voxel (ix, iy, k) = (P / Pb) Σ_pb interp (binned[k][pb], (t − (bin − 1)/2) / bin),
 *   t = x cos θ − y sin θ + centre at the voxel's centre (x, y).
 *
 * The reduced copy is made once for a given size and fill (a few ms for a
 * 2048³ store); each refresh — a new centre — is then one kernel.  Rows of
 * the copy carry a zero bin on the left and two on the right, so the
 * interpolation needs no bounds test.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <math.h>

#include <cuda_fp16.h>

#include "tomo-gpu-store-private.h"

#define PREVIEW_ZC 8   /* slabs per thread: one t, bin and weight serve 8 voxels */

/* One thread per (cb, pb, k) of the copy, padding included. */
template <typename T>
__global__ static void
preview_bin_kernel (const T      *rows,
                    PreviewArgs   a,
                    float        *binned)
{
  const int wp = a.Wb + 3;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int pb = blockIdx.y;
  const int k = blockIdx.z;

  if (c >= wp)
    return;
  float sum = 0.0f;
  const int cb = c - 1;

  if (cb >= 0 && cb < a.Wb)
    {
      const int r0 = (int) ((long long) k * a.n_rows / a.nz);
      const int r1 = max (r0 + 1, (int) ((long long) (k + 1) * a.n_rows / a.nz));
      const int c0 = cb * a.bin, c1 = min (c0 + a.bin, a.W);
      const size_t p = (size_t) pb * a.step;

      for (int r = r0; r < r1; r++)
        {
          const T *src = rows + (size_t) r * a.row_elems + p * a.W;

          for (int col = c0; col < c1; col++)
            sum += load_value (src + col);
        }
      sum *= a.inv_scale / ((float) a.bin * (r1 - r0));
    }
  binned[((size_t) k * a.Pb + pb) * wp + c] = sum;
}

template <int LINEAR>
__global__ static void
preview_kernel (const float  *binned,
                const float2 *trig,
                PreviewArgs   a,
                float        *out)
{
  const int ix = blockIdx.x * blockDim.x + threadIdx.x;
  const int iy = blockIdx.y * blockDim.y + threadIdx.y;
  const int k0 = blockIdx.z * PREVIEW_ZC;
  const int wp = a.Wb + 3;
  const size_t slab = (size_t) a.Pb * wp;
  const float c = (a.W - 1) * 0.5f;
  const float x = (ix + 0.5f) * a.sx - 0.5f - c, y = (iy + 0.5f) * a.sy - 0.5f - c;
  const float off = (a.bin - 1) * 0.5f, inv_bin = 1.0f / a.bin, hi = (float) a.Wb;
  float acc[PREVIEW_ZC];

  if (ix >= a.nx || iy >= a.ny)
    return;
#pragma unroll
  for (int z = 0; z < PREVIEW_ZC; z++)
    acc[z] = 0.0f;
  for (int pb = 0; pb < a.Pb; pb++)
    {
      const float2 cs = __ldg (trig + (size_t) pb * a.step);
      const float t = fmaf (x, cs.x, fmaf (-y, cs.y, a.center));
      const float tb = fminf (fmaxf ((t - off) * inv_bin, -1.0f), hi);
      const float f = floorf (LINEAR ? tb : tb + 0.5f);
      const float fr = tb - f;
      /* Bin f sits at f + 1 in the padded row. */
      const float *row = binned + (size_t) pb * wp + (int) f + 1;

#pragma unroll
      for (int z = 0; z < PREVIEW_ZC; z++)
        if (k0 + z < a.nz)
          {
            const float *p = row + (k0 + z) * slab;
            const float v0 = __ldg (p);

            acc[z] += LINEAR ? fmaf (fr, __ldg (p + 1) - v0, v0) : v0;
          }
    }
#pragma unroll
  for (int z = 0; z < PREVIEW_ZC; z++)
    if (k0 + z < a.nz)
      out[((size_t) (k0 + z) * a.ny + iy) * a.nx + ix] = acc[z] * a.weight;
}

gboolean
_tomo_gpu_store_preview_bin (const void        *rows,
                             gboolean           half,
                             const PreviewArgs *a,
                             float             *binned,
                             cudaStream_t       stream,
                             GError           **error)
{
  dim3 grid ((a->Wb + 3 + 127) / 128, a->Pb, a->nz);

  if (half)
    preview_bin_kernel<__half><<<grid, 128, 0, stream>>> ((const __half *) rows, *a, binned);
  else
    preview_bin_kernel<float><<<grid, 128, 0, stream>>> ((const float *) rows, *a, binned);
  return TOMO_CUDA_CHECK_LAUNCH ("preview bin kernel", error);
}

gboolean
_tomo_gpu_store_preview_launch (const float       *binned,
                                const PreviewArgs *a,
                                const LaunchArgs  *l,
                                GError           **error)
{
  dim3 block (16, 16), grid ((a->nx + 15) / 16, (a->ny + 15) / 16,
                             (a->nz + PREVIEW_ZC - 1) / PREVIEW_ZC);

  if (l->interp)
    preview_kernel<1><<<grid, block, 0, l->stream>>> (binned, l->trig, *a, l->out);
  else
    preview_kernel<0><<<grid, block, 0, l->stream>>> (binned, l->trig, *a, l->out);
  return TOMO_CUDA_CHECK_LAUNCH ("preview kernel", error);
}
