/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The optimised texture kernel: 4 threads per pixel over interleaved
 * projection subsets, Z-order pixel squares.
 */
#define G_LOG_DOMAIN "tomo-gpu-bp"

#include "config.h"

#include "tomo-gpu-bp-const.cuh"

/* ---------------------------------------------------------------------- */
/* Texture kernel                                                         */

/* 256 threads per 16×16-pixel block.  Thread bits 0–1 pick one of 4
 * interleaved projection subsets (p ≡ q mod 4), so the 4 threads summing one
 * pixel sit in neighbouring lanes and are reduced by two shuffles; bits 2–5
 * walk a 4×4-pixel square along a Z-order curve (texture locality); bits 6–7
 * pick one of the 4 squares in a 16×4 strip.  Each thread covers the 4
 * strips (rows +0, +4, +8, +12) so every cos/sin load serves 4 fetches. */
template <int S, bool HALF4, bool ACC>
static __global__ void __launch_bounds__ (256)
bp_texture (cudaTextureObject_t tex, BpGeom g, int p0, int np, float *out)
{
  typedef typename Vec<S>::T T;
  const int tid = threadIdx.x;
  const int q = tid & 3;
  const int z = (tid >> 2) & 15;
  const int sq = tid >> 6;
  const int zx = (z & 1) | ((z >> 1) & 2);
  const int zy = ((z >> 1) & 1) | ((z >> 2) & 2);
  const int ix = blockIdx.x * 16 + sq * 4 + zx;
  const int iy0 = blockIdx.y * 16 + zy;
  const float x = (float) (g.roi_x + ix) - g.half_w;
  const float c0 = g.center_f + 0.5f;
  float y[4];
  T sum[4];

#pragma unroll
  for (int i = 0; i < 4; i++)
    {
      y[i] = (float) (g.roi_y + iy0 + 4 * i) - g.half_w;
      vzero (sum[i]);
    }
  for (int p = q; p < np; p += 4)
    {
      const float2 cs = c_cs[p];
      const float ub = fmaf (x, cs.x, c0);
      const float v = (float) (p0 + p) + 0.5f;

#pragma unroll
      for (int i = 0; i < 4; i++)
        vadd (sum[i], Fetch<S, HALF4>::get (tex, fmaf (-y[i], cs.y, ub), v));
    }
#pragma unroll
  for (int i = 0; i < 4; i++)
    {
      vadd (sum[i], vshfl_xor (sum[i], 1));
      vadd (sum[i], vshfl_xor (sum[i], 2));
    }
  if (q != 0 || ix >= g.roi_w)
    return;
#pragma unroll
  for (int i = 0; i < 4; i++)
    if (iy0 + 4 * i < g.roi_h)
      store_pixel<S> (out, g.plane, (size_t) (iy0 + 4 * i) * g.roi_w + ix, sum[i], ACC);
}

template <int S, bool HALF4>
static gboolean
run_texture (TomoBp *bp, const BpGeom &g, cudaTextureObject_t tex, float *out,
             cudaStream_t stream, GError **error)
{
  const dim3 grid ((g.roi_w + 15) / 16, (g.roi_h + 15) / 16);

  return bp_const_chunks (bp, g, stream, "bp_texture", error, [&] (int p0, int np) {
    if (p0 == 0)
      bp_texture<S, HALF4, false><<<grid, 256, 0, stream>>> (tex, g, p0, np, out);
    else
      bp_texture<S, HALF4, true><<<grid, 256, 0, stream>>> (tex, g, p0, np, out);
  });
}

gboolean
_tomo_bp_run_texture (TomoBp             *bp,
                      const BpGeom       &g,
                      cudaTextureObject_t tex,
                      float              *out,
                      cudaStream_t        stream,
                      GError            **error)
{
  /* 4 slices: tex_half holds the forged float2 texels, the others half4. */
  return bp->n_slices == 1 ? run_texture<1, false> (bp, g, tex, out, stream, error)
       : bp->n_slices == 2 ? run_texture<2, false> (bp, g, tex, out, stream, error)
       : tex == bp->tex_half ? run_texture<4, true> (bp, g, tex, out, stream, error)
                             : run_texture<4, false> (bp, g, tex, out, stream, error);
}
