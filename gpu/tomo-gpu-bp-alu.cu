/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The ALU kernel: a shared-memory cache of bins per tile, interpolation on
 * the FP units (the tile loop itself, alu_tile, is in the device header:
 * the hybrid kernel runs it too).
 */
#define G_LOG_DOMAIN "tomo-gpu-bp"

#include "config.h"

#include "tomo-gpu-bp-device.cuh"

/* One block per TILE×TILE square of the ROI.  Per pass of GROUP projections
 * the block caches the 3/2·TILE bins from h_m on (all threads, consecutive
 * bins per warp) and the per-projection offsets, then every thread
 * interpolates its PPT pixels from the cache on the FP units while the bins
 * of the next pass are already on their way into registers. */
template <int S, int TILE, bool LIN, bool HALF, int V = 0>
static __global__ void __launch_bounds__ (256, BP_MIN_BLOCKS (S, TILE, LIN, HALF))
bp_alu (const char *__restrict__ pack, size_t pitch, const double2 *__restrict__ cs,
        BpGeom g, float *out)
{
  alu_tile<S, TILE, LIN, HALF, V> (pack, pitch, cs, g, blockIdx.x * TILE, blockIdx.y * TILE, out);
}

template <int S, int TILE, bool LIN, bool HALF, int V = 0>
static gboolean
run_alu_t (TomoBp *bp, const BpGeom &g, float *out, cudaStream_t stream, GError **error)
{
  dim3 grid ((g.roi_w + TILE - 1) / TILE, (g.roi_h + TILE - 1) / TILE);
  const bool hsrc = (V & BP_V_HSRC) && S == 4 && HALF;

  bp_alu<S, TILE, LIN, HALF, V><<<grid, 256, 0, stream>>> ((const char *) (hsrc ? bp->d_half : bp->d_pack),
                                                           hsrc ? bp->half_pitch : bp->pitch,
                                                           bp->d_cs_d, g, out);
  return TOMO_CUDA_CHECK_LAUNCH ("bp_alu", error);
}

gboolean
_tomo_bp_run_alu (TomoBp       *bp,
                  const BpGeom &g,
                  bool          tile64,
                  bool          lin,
                  bool          half,
                  float        *out,
                  cudaStream_t  stream,
                  GError      **error)
{
  return DISPATCH_S_SLH (run_alu_t, bp, g, out, stream, error);
}
