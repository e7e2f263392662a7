/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The hybrid kernel: texture and ALU blocks in one launch, split per SM by
 * a counter so both kinds of units stay busy.
 */
#define G_LOG_DOMAIN "tomo-gpu-bp"

#include "config.h"

#include "tomo-gpu-bp-device.cuh"

#define BP_MAX_SM 1024
/* Largest pitched-texture height we rely on (H100 allows 65000). */
static __device__ unsigned int g_sm_blocks[BP_MAX_SM];

/* ---------------------------------------------------------------------- */
/* Hybrid kernel                                                          */

/* Texture path of the hybrid: the same TILE×TILE square and thread mapping
 * as the ALU path (each thread PPT pixels in a loop), per-projection tile
 * bases staged in shared memory, interpolation by the texture unit. */
template <int S, bool HALF4, int TILE>
static __device__ __forceinline__ void
tex_tile (cudaTextureObject_t tex, const double2 *__restrict__ cs,
          const BpGeom &g, int tx0, int ty0, float *out)
{
  typedef Tile<TILE> TL;
  typedef typename Vec<S>::T T;
  constexpr int G = 64;
  __shared__ float4 s_tp[G];
  const int tid = threadIdx.x;
  int lx, ly;
  T acc[TL::PPT] = {};

  TL::map (tid, lx, ly);
  const float xl = (float) lx;
  const float yl0 = (float) ly;
  const double x0 = (double) (g.roi_x + tx0) - g.half_w_d;
  const double y0 = (double) (g.roi_y + ty0) - g.half_w_d;

  for (int pg = 0; pg < g.n_proj; pg += G)
    {
      const int ng = min (G, g.n_proj - pg);

      if (tid < ng)
        {
          const double2 c = cs[pg + tid];
          const double base = fma (x0, c.x, fma (-y0, c.y, g.center)) + 0.5;

          s_tp[tid] = make_float4 ((float) base, (float) c.x, (float) c.y, (float) (pg + tid) + 0.5f);
        }
      __syncthreads ();
#pragma unroll 2
      for (int pr = 0; pr < ng; pr++)
        {
          const float4 pc = s_tp[pr];
          const float u0 = fmaf (-yl0, pc.z, fmaf (xl, pc.y, pc.x));

#pragma unroll
          for (int i = 0; i < TL::PPT; i++)
            vadd (acc[i], Fetch<S, HALF4>::get (tex, fmaf ((float) (-i * TL::STEP), pc.z, u0), pc.w));
        }
      __syncthreads ();
    }

  store_tile<S, TILE> (out, g, tx0 + lx, ty0 + ly, acc);
}

/* One launch, one block per TILE×TILE square.  Thread 0 reads the SM the
 * block landed on and takes a number from that SM's counter; of every 16
 * consecutive numbers, alu16 go down the ALU path (spread evenly) and the
 * rest down the texture path, so each SM keeps both its shared-memory/FP
 * units and its texture units busy at the chosen ratio. */
template <int S, int TILE, bool LIN, bool HALF, int V = 0>
static __global__ void __launch_bounds__ (256, BP_MIN_BLOCKS (S, TILE, LIN, HALF))
bp_hybrid (cudaTextureObject_t tex, const char *__restrict__ pack, size_t pitch,
           const double2 *__restrict__ cs, BpGeom g, int alu16, float *out)
{
  __shared__ unsigned int s_number;

  if (threadIdx.x == 0)
    {
      unsigned int smid;

      asm volatile ("mov.u32 %0, %%smid;" : "=r" (smid));
      s_number = atomicAdd (&g_sm_blocks[smid % BP_MAX_SM], 1u);
    }
  __syncthreads ();
  const unsigned int n = s_number % 16u;
  const bool alu = ((n + 1) * alu16) / 16 > (n * alu16) / 16;
  const int tx0 = blockIdx.x * TILE, ty0 = blockIdx.y * TILE;

  if (alu)
    alu_tile<S, TILE, LIN, HALF, V> (pack, pitch, cs, g, tx0, ty0, out);
  else
    /* 4 slices: forged half4 (nearest), half4 texture interpolated by
     * the texture unit (linear). */
    tex_tile<S, S == 4 && !LIN, TILE> (tex, cs, g, tx0, ty0, out);
}

template <int S, int TILE, bool LIN, bool HALF, int V = 0>
static gboolean
run_hybrid_t (TomoBp *bp, const BpGeom &g, cudaTextureObject_t tex, int alu16, float *out,
              cudaStream_t stream, GError **error)
{
  dim3 grid ((g.roi_w + TILE - 1) / TILE, (g.roi_h + TILE - 1) / TILE);
  void *counters = NULL;
  const bool hsrc = (V & BP_V_HSRC) && S == 4 && HALF;

  if (!TOMO_CUDA_CHECK (cudaGetSymbolAddress (&counters, g_sm_blocks), error) ||
      !TOMO_CUDA_CHECK (cudaMemsetAsync (counters, 0, sizeof g_sm_blocks, stream), error))
    return FALSE;
  bp_hybrid<S, TILE, LIN, HALF, V><<<grid, 256, 0, stream>>> (tex, (const char *) (hsrc ? bp->d_half : bp->d_pack),
                                                              hsrc ? bp->half_pitch : bp->pitch, bp->d_cs_d,
                                                              g, alu16, out);
  return TOMO_CUDA_CHECK_LAUNCH ("bp_hybrid", error);
}

gboolean
_tomo_bp_run_hybrid (TomoBp             *bp,
                     const BpGeom       &g,
                     cudaTextureObject_t tex,
                     bool                tile64,
                     bool                lin,
                     bool                half,
                     int                 alu16,
                     float              *out,
                     cudaStream_t        stream,
                     GError            **error)
{
  return DISPATCH_S_SLH (run_hybrid_t, bp, g, tex, alu16, out, stream, error);
}
