/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Internal to the volume store's CUDA units (tomo-gpu-store.cu and the
 * files beside it): the store itself (the raw fill, tomo-gpu-store-fill.cu,
 * works on it too), the plane in the kernels' coordinates and the
 * launchers of the kernels that live in their own files.
 */
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "tomo-gpu-private.h"
#include "tomo-gpu-store.h"

struct _TomoGpuStore
{
  int device;
  guint width, n_proj, row_start, n_rows;
  TomoGpuStorePrecision precision;
  size_t row_elems;
  void *d_rows;
  size_t bytes;
  float value_scale;       /* stored = filtered × value_scale */
  float2 *d_trig;

  TomoGpuContext *ctx;     /* filtering */
  gboolean have_filter;
  guint n_filled;          /* rows held: those put since the filter was set, each once */
  guint8 *row_held;        /* n_rows flags behind n_filled */

  float *d_out;
  size_t out_size;
  guint out_width, out_height;
  float *d_tmp;            /* put_filtered staging */
  size_t tmp_size;

  guint generation;         /* changes whenever the rows held change */
  float *d_binned;          /* the preview's reduced copy */
  size_t binned_size;
  TomoGpuPreview binned_for;
  guint binned_generation;
  double prep_ms;
  /* keep_output(): its copies come from this pool and go back to it when
   * their holder frees them (a mutex, no cudaFree on the holder's thread);
   * the statistics' workspace is made once.  keep_fresh: every copy and
   * workspace made and freed anew, as before (for the bench). */
  TomoGpuBufferPool *keep_pool;
  TomoGpuStatsWork *keep_stats;
  gboolean keep_fresh;

  cudaTextureObject_t *h_tex;   /* one per stored row, for the texture kernel and the hybrid */
  cudaTextureObject_t *d_tex;
  gboolean tex_refused;         /* the rows cannot have them (the hybrid does not ask again) */

  cudaStream_t stream;
  cudaEvent_t ev[2];
  double fill_ms, plane_ms;
  TomoGpuPlaneKernel last_kernel;
};

/* Every row held (a whole fill finished) or none (a fill starts, the
 * filter changed): n_filled and the flags behind it, and a new generation
 * (the rows changed, or change from here on even if a fill fails). */
void _tomo_gpu_store_set_held (TomoGpuStore *store,
                               gboolean      held);

/* n filtered rows on the device (n × n_proj × width floats) into the store
 * from row `row` (relative to row_start), converted to half where it holds
 * half; asynchronous on the store's stream. */
gboolean _tomo_gpu_store_put_device (TomoGpuStore *store,
                                     guint         row,
                                     guint         n,
                                     const float  *d_src,
                                     GError      **error);

/* A stored bin as float, through the read-only path. */
__device__ static inline float
load_value (const float *p)
{
  return __ldg (p);
}

__device__ static inline float
load_value (const __half *p)
{
  return __half2float (__ldg (p));
}

/* An asynchronous copy of N bytes (4, or 16 bypassing L1) from global to
 * shared memory; bytes 0 fills zeros. */
template <int N>
__device__ static inline void
copy_async (void       *dst,
            const void *src,
            int         bytes)
{
  const unsigned int d = (unsigned int) __cvta_generic_to_shared (dst);

  if constexpr (N == 16)
    asm volatile ("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r" (d), "l" (src), "r" (bytes));
  else
    asm volatile ("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" :: "r" (d), "l" (src), "n" (N), "r" (bytes));
}

/* Detector rows r0 (and r0 + 1 with weight fz) for relative z; FALSE
 * outside the rows held.  A sample on the last row takes it alone. */
__device__ static inline bool
rows_for_z (float  z,
            int    n_rows,
            int   *r0,
            float *fz)
{
  const float eps = 1e-4f;

  if (!(z >= -eps && z <= n_rows - 1 + eps))
    return false;
  *r0 = (int) floorf (z);
  *fz = z - *r0;
  if (*r0 < 0 || *r0 >= n_rows - 1 || *fz < eps)
    {
      *r0 = min (max ((int) rintf (z), 0), n_rows - 1);
      *fz = 0.0f;
    }
  return true;
}

/* A plane as the kernels see it: sample (i, j) at (x0, y0, z0) + i·u + j·v,
 * x and y centred on the slice, z relative to the store's first row. */
typedef struct
{
  float x0, y0, z0;
  float ux, uy, uz, vx, vy, vz;
  int w, h;
  int W, P, n_rows;
  float center, lim, inv_scale;
  size_t row_elems;
  /* The store's texture objects (one per stored row) for the tilt
   * kernel's hybrid, or NULL. */
  const cudaTextureObject_t *tex;
} PlaneArgs;

/* Sample (i, j) of the plane at (x, y) in the slice, between stored rows
 * r0 and r0 + 1 (weight fz, as rows_for_z); FALSE outside the W × W square
 * or the rows held. */
__device__ static inline bool
plane_sample (const PlaneArgs &a,
              int              i,
              int              j,
              float           *x,
              float           *y,
              int             *r0,
              float           *fz)
{
  *x = a.x0 + i * a.ux + j * a.vx;
  *y = a.y0 + i * a.uy + j * a.vy;
  const float z = a.z0 + i * a.uz + j * a.vz;

  return fabsf (*x) <= a.lim && fabsf (*y) <= a.lim && rows_for_z (z, a.n_rows, r0, fz);
}

/* What every plane and preview launcher is given beside its source and
 * arguments: the projections' (cos θ, sin θ) on the device, the
 * interpolation along the detector row (0 nearest, 1 linear), the output
 * and the stream it runs on. */
typedef struct
{
  const float2 *trig;
  int interp;
  float *out;
  cudaStream_t stream;
} LaunchArgs;

/* The tile kernel (tomo-gpu-store-tile.cu) takes planes with horizontal rows
 * and a step of at most one pixel; `vertical` when the plane's columns are
 * vertical as well (v_x = v_y = 0: XZ, YZ and planes turned about the
 * vertical axis), so a sample's detector position is the same on every
 * plane row.  half: the store holds __half, else float. */
gboolean _tomo_gpu_store_tile_launch (const void       *rows,
                                      gboolean          half,
                                      const PlaneArgs  *a,
                                      const LaunchArgs *l,
                                      GError          **error);

/* The tilted plane kernel (tomo-gpu-store-tilt.cu): planes with horizontal
 * rows, |u| ≤ 1 and |v| ≤ 1 (the launcher's caller checks); the windows of
 * the stored rows a tile of 8 plane rows lies between staged raw through a
 * cp.async ring, the two rows blended per plane row in float (from a half
 * store, linear: interpolated as half2 pairs, summed in half2 a stage; see
 * there).  Arguments
 * as the tile kernel's.  With a->tex and _tomo_gpu_store_tilt_hybrid_ok()
 * the hybrid: per stage of G ring projections T more fetched through the
 * texture units (TOMO_PLANE_TILT_TEX=G:T), both pipes at work at once. */
decltype (_tomo_gpu_store_tile_launch) _tomo_gpu_store_tilt_launch;

/* The hybrid's split from TOMO_PLANE_TILT_TEX ("G:T" → 10·G + T; 0: none)
 * and whether it applies to a plane (linear, half store of 16-byte rows,
 * rows between stored rows, a split set); the caller then makes the
 * texture objects. */
int      _tomo_gpu_store_tilt_hybrid_split (void);
gboolean _tomo_gpu_store_tilt_hybrid_ok    (gboolean         half,
                                            const PlaneArgs *a,
                                            int              interp);

/* A ring of NS stages of asynchronous copies in shared memory, two or more
 * in flight while one is summed: plan(s) writes what issue(s) reads (after
 * a barrier), issue(s) starts stage s's copies, wait(s) returns once stage
 * s is in shared memory (for this thread), sum(s) reads stage s.  The
 * caller keeps NS + 1 plans and NS buffers; every thread of the block
 * calls it. */
template <int NS, typename Plan, typename Issue, typename Wait, typename Sum>
__device__ static inline void
stage_ring (int     n_stages,
            Plan  &&plan,
            Issue &&issue,
            Wait  &&wait,
            Sum   &&sum)
{
  for (int s = 0; s < NS; s++)
    plan (s);
  __syncthreads ();
  for (int s = 0; s < NS - 1; s++)
    issue (s);
  for (int s = 0; s < n_stages; s++)
    {
      wait (s);
      __syncthreads ();   /* stage s is in; stage s − 1's sums are done */
      issue (s + NS - 1);
      plan (s + NS);
      sum (s);
    }
}

/* stage_ring with cp.async copies: issue(s) starts stage s's copies as one
 * commit group (and commits an empty one past the last stage). */
template <int NS, typename Plan, typename Issue, typename Sum>
__device__ static inline void
cp_async_ring (int     n_stages,
               Plan  &&plan,
               Issue &&issue,
               Sum   &&sum)
{
  stage_ring<NS> (n_stages, plan, issue,
                  [] (int) { asm volatile ("cp.async.wait_group %0;\n" :: "n" (NS - 2)); }, sum);
  asm volatile ("cp.async.wait_group 0;\n" ::);
}

/* The straightforward texture kernel: one thread per sample, each
 * projection's value fetched through tex (one texture object per stored
 * row: W × P, hardware linear filtering, zero border). */
gboolean _tomo_gpu_store_texture_launch (const cudaTextureObject_t *tex,
                                         const PlaneArgs           *a,
                                         const LaunchArgs          *l,
                                         GError                   **error);

/* The preview volume (tomo-gpu-store-preview.cu). */
typedef struct
{
  int W, P, n_rows;         /* the store */
  size_t row_elems;
  float inv_scale;          /* stored → filtered */
  int nx, ny, nz;           /* voxels */
  int bin, step;            /* columns per bin, projection step */
  int Wb, Pb;               /* bins and projections of the reduced copy */
  float sx, sy;             /* voxel size in slice pixels (W / nx, W / ny) */
  float center, weight;     /* weight: P / Pb */
} PreviewArgs;

/* The reduced copy of the store: nz × Pb rows of Wb + 3 floats (one zero
 * bin before, two after). */
gboolean _tomo_gpu_store_preview_bin    (const void        *rows,
                                         gboolean           half,
                                         const PreviewArgs *a,
                                         float             *binned,
                                         cudaStream_t       stream,
                                         GError           **error);
gboolean _tomo_gpu_store_preview_launch (const float       *binned,
                                         const PreviewArgs *a,
                                         const LaunchArgs  *l,
                                         GError           **error);
