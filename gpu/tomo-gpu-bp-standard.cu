/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The standard back-projection kernel: one thread per pixel, the texture
 * unit interpolates (the baseline of the others).
 */
#define G_LOG_DOMAIN "tomo-gpu-bp"

#include "config.h"

#include "tomo-gpu-bp-const.cuh"

/* ---------------------------------------------------------------------- */
/* Standard kernel                                                        */

/* One thread per pixel, 16×16 threads per block over the ROI; each thread
 * loops over the projections of the current constant-memory chunk
 * (p0 … p0+np−1 at c_cs[0 … np−1]) and lets the texture unit interpolate.
 * ACC adds to the output (second and later chunks). */
template <int S, bool ACC>
static __global__ void __launch_bounds__ (256)
bp_standard (cudaTextureObject_t tex, BpGeom g, int p0, int np, float *out)
{
  const int ix = blockIdx.x * 16 + threadIdx.x;
  const int iy = blockIdx.y * 16 + threadIdx.y;
  typename Vec<S>::T sum;

  if (ix >= g.roi_w || iy >= g.roi_h)
    return;
  const float x = (float) (g.roi_x + ix) - g.half_w;
  const float y = (float) (g.roi_y + iy) - g.half_w;
  const float c0 = g.center_f + 0.5f;

  vzero (sum);
  for (int p = 0; p < np; p++)
    {
      const float2 cs = c_cs[p];
      const float u = fmaf (x, cs.x, fmaf (-y, cs.y, c0));

      vadd (sum, Fetch<S, false>::get (tex, u, (float) (p0 + p) + 0.5f));
    }
  store_pixel<S> (out, g.plane, (size_t) iy * g.roi_w + ix, sum, ACC);
}

template <int S>
static gboolean
run_standard (TomoBp *bp, const BpGeom &g, cudaTextureObject_t tex, float *out,
              cudaStream_t stream, GError **error)
{
  const dim3 block (16, 16);
  const dim3 grid ((g.roi_w + 15) / 16, (g.roi_h + 15) / 16);

  return bp_const_chunks (bp, g, stream, "bp_standard", error, [&] (int p0, int np) {
    if (p0 == 0)
      bp_standard<S, false><<<grid, block, 0, stream>>> (tex, g, p0, np, out);
    else
      bp_standard<S, true><<<grid, block, 0, stream>>> (tex, g, p0, np, out);
  });
}

gboolean
_tomo_bp_run_standard (TomoBp             *bp,
                       const BpGeom       &g,
                       cudaTextureObject_t tex,
                       float              *out,
                       cudaStream_t        stream,
                       GError            **error)
{
  return bp->n_slices == 1 ? run_standard<1> (bp, g, tex, out, stream, error)
                           : run_standard<2> (bp, g, tex, out, stream, error);
}
