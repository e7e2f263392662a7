/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Preprocessing of raw sinogram rows on the device: the counts come up in
 * the file's own type (uint16 stays two bytes on the bus) with the rows'
 * averaged flats and darks, and one kernel turns them into line integrals
 * with the arithmetic of tomo_preprocess_row() (tomo-gpu-preprocess.cuh),
 * counting the clamped and replaced values per row as the CPU does.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <string.h>

#include <cuda_runtime.h>

#include "tomo-gpu.h"
#include "tomo-gpu-private.h"
#include "tomo-gpu-preprocess.cuh"

#define PRE_BLOCK 256

__device__ static inline double
load_raw (const float *p, size_t i)
{
  return p[i];
}

__device__ static inline double
load_raw (const unsigned short *p, size_t i)
{
  return p[i];
}

/* grid.y: the row (plane); grid.x strides over its values.  Each block sums
 * its counts warp by warp, then adds them to the row's two counters. */
template <typename T>
__global__ static void
preprocess_kernel (const T            *__restrict__ raw,
                   const float        *__restrict__ flat,
                   const float        *__restrict__ dark,
                   int                               normalise,
                   int                               apply_log,
                   size_t                            plane,
                   unsigned                          width,
                   float              *__restrict__ out,
                   unsigned long long *__restrict__ counts)
{
  __shared__ unsigned block_counts[2];
  unsigned r = blockIdx.y;
  const T *in = raw + (size_t) r * plane;
  float *o = out + (size_t) r * plane;
  const float *fl = flat + (size_t) r * width, *dk = dark + (size_t) r * width;
  unsigned n_clamped = 0, n_replaced = 0;

  if (threadIdx.x == 0)
    block_counts[0] = block_counts[1] = 0;
  __syncthreads ();
  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < plane;
       i += (size_t) gridDim.x * blockDim.x)
    {
      unsigned x = (unsigned) (i % width);
      int flags;

      o[i] = tomo_gpu_preprocess_value (load_raw (in, i),
                                        normalise ? fl[x] : 1.0f, normalise ? dk[x] : 0.0f,
                                        normalise, apply_log, &flags);
      n_clamped += flags & 1;
      n_replaced += (flags >> 1) & 1;
    }
  n_clamped = __reduce_add_sync (0xffffffffu, n_clamped);
  n_replaced = __reduce_add_sync (0xffffffffu, n_replaced);
  if ((threadIdx.x & 31) == 0 && (n_clamped | n_replaced) != 0)
    {
      atomicAdd (&block_counts[0], n_clamped);
      atomicAdd (&block_counts[1], n_replaced);
    }
  __syncthreads ();
  if (threadIdx.x == 0 && (block_counts[0] | block_counts[1]) != 0)
    {
      atomicAdd (&counts[2 * r], (unsigned long long) block_counts[0]);
      atomicAdd (&counts[2 * r + 1], (unsigned long long) block_counts[1]);
    }
}

gsize
tomo_gpu_raw_type_size (TomoGpuRawType type)
{
  return type == TOMO_GPU_RAW_UINT16 ? 2 : 4;
}

gboolean
_tomo_gpu_preprocess_launch (const TomoGpuPreprocessJob *job,
                             cudaStream_t                stream,
                             GError                    **error)
{
  /* Enough blocks per row to fill the device several times over at four
   * rows; each thread then handles a handful of values. */
  size_t blocks = (job->plane + PRE_BLOCK - 1) / PRE_BLOCK;
  dim3 grid ((unsigned) MIN (blocks, (size_t) 2048), job->n_rows);
  int normalise = job->normalise ? 1 : 0, apply_log = job->apply_log ? 1 : 0;

  if (job->n_rows == 0 || job->plane == 0)
    return TRUE;
  if (normalise && (job->d_flat == NULL || job->d_dark == NULL))
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                           "Preprocessing: normalisation needs flat and dark rows");
      return FALSE;
    }
  if (job->type == TOMO_GPU_RAW_UINT16)
    preprocess_kernel<unsigned short><<<grid, PRE_BLOCK, 0, stream>>> (
      (const unsigned short *) job->d_raw, job->d_flat, job->d_dark, normalise, apply_log,
      job->plane, job->width, job->d_out, job->d_counts);
  else
    preprocess_kernel<float><<<grid, PRE_BLOCK, 0, stream>>> (
      (const float *) job->d_raw, job->d_flat, job->d_dark, normalise, apply_log,
      job->plane, job->width, job->d_out, job->d_counts);
  return TOMO_CUDA_CHECK_LAUNCH ("preprocess_kernel", error);
}

/* Up to four rows' taps, passed by value. */
typedef struct
{
  TomoGpuRowTaps t[4];
} RowTapsArg;

/* grid.y: the row (plane); grid.x strides over its values.  Rounded as
 * tomo_geometry_correct_tilt() rounds on the CPU (products, then sums left
 * to right, no fused multiply-add: the C sources build with
 * -ffp-contract=off), so both give the same floats. */
__global__ static void
row_taps_kernel (const float *__restrict__ in,
                 float       *__restrict__ out,
                 size_t                     plane,
                 unsigned                   width,
                 RowTapsArg                 taps)
{
  unsigned r = blockIdx.y;
  const TomoGpuRowTaps t = taps.t[r];
  const float *src = in + (size_t) r * plane;
  float *dst = out + (size_t) r * plane;
  int n = (int) width;

  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < plane;
       i += (size_t) gridDim.x * blockDim.x)
    {
      int u = (int) (i % width);
      const float *row = src + (i - (size_t) u);
      float v = 0.0f;

      for (int k = 0; k < 4; k++)
        v = __fadd_rn (v, __fmul_rn (t.weights[k], row[min (max (u + t.offset + k, 0), n - 1)]));
      dst[i] = v;
    }
}

gboolean
_tomo_gpu_row_taps_launch (const float          *d_in,
                           float                *d_out,
                           guint                 n_rows,
                           size_t                plane,
                           guint                 width,
                           const TomoGpuRowTaps *taps,
                           cudaStream_t          stream,
                           GError              **error)
{
  size_t blocks = (plane + PRE_BLOCK - 1) / PRE_BLOCK;
  RowTapsArg arg;

  if (n_rows == 0 || plane == 0)
    return TRUE;
  if (n_rows > G_N_ELEMENTS (arg.t) || width == 0 || d_in == d_out)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Row resampling: invalid arguments (%u rows of width %u%s)", n_rows, width,
                   d_in == d_out ? ", in place" : "");
      return FALSE;
    }
  memset (&arg, 0, sizeof arg);
  memcpy (arg.t, taps, n_rows * sizeof *taps);
  row_taps_kernel<<<dim3 ((unsigned) MIN (blocks, (size_t) 2048), n_rows), PRE_BLOCK, 0, stream>>> (
    d_in, d_out, plane, width, arg);
  return TOMO_CUDA_CHECK_LAUNCH ("row_taps_kernel", error);
}

/* grid.y: the row (plane); grid.x strides over its output values.  Rounded
 * as tomo_geometry_apply()'s rows are on the CPU (products, then sums left
 * to right, no fused multiply-add), so both give the same floats. */
__global__ static void
row_map_kernel (const float *__restrict__                in,
                float       *__restrict__                out,
                unsigned                                 width,
                size_t                                   plane_in,
                unsigned                                 width_out,
                size_t                                   plane_out,
                const float *__restrict__                weights,
                const TomoGpuMapProjection *__restrict__ proj,
                const TomoGpuMapColumn *__restrict__     col)
{
  const float *src = in + (size_t) blockIdx.y * plane_in;
  float *dst = out + (size_t) blockIdx.y * plane_out;

  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < plane_out;
       i += (size_t) gridDim.x * blockDim.x)
    {
      unsigned k = (unsigned) (i / width_out), u = (unsigned) (i % width_out);
      float vd = 0.0f, vm = 0.0f;

      if (weights != NULL)
        {
          dst[i] = __fmul_rn (src[i], weights[k]);
          continue;
        }
      const TomoGpuMapProjection pk = proj[k];
      const TomoGpuMapColumn cu = col[u];

      if (cu.direct >= 0)
        vd = src[(size_t) pk.direct * width + cu.direct];
      if (cu.mirror >= 0)
        {
          const float *b = src + (size_t) pk.below * width, *a = src + (size_t) pk.above * width;
          unsigned i0 = (unsigned) cu.mirror, i1 = min (i0 + 1, width - 1);
          float ta = pk.t_angle, ua = __fsub_rn (1.0f, ta);
          float m0 = __fadd_rn (__fmul_rn (ua, b[i0]), __fmul_rn (ta, a[i0]));
          float m1 = __fadd_rn (__fmul_rn (ua, b[i1]), __fmul_rn (ta, a[i1]));

          vm = __fadd_rn (__fmul_rn (__fsub_rn (1.0f, cu.t), m0), __fmul_rn (cu.t, m1));
        }
      dst[i] = __fadd_rn (__fmul_rn (cu.w_direct, vd), __fmul_rn (__fsub_rn (1.0f, cu.w_direct), vm));
    }
}

gboolean
_tomo_gpu_row_map_launch (const float                *d_in,
                          float                      *d_out,
                          guint                       n_rows,
                          const TomoGpuRowMap        *map,
                          guint                       width_out,
                          guint                       n_proj_out,
                          const float                *d_weights,
                          const TomoGpuMapProjection *d_proj,
                          const TomoGpuMapColumn     *d_col,
                          cudaStream_t                stream,
                          GError                    **error)
{
  size_t plane_out = (size_t) n_proj_out * width_out;
  size_t blocks = (plane_out + PRE_BLOCK - 1) / PRE_BLOCK;

  if (n_rows == 0 || plane_out == 0)
    return TRUE;
  if (n_rows > 4 || map->width == 0 || d_in == d_out
      || (d_weights == NULL && (d_proj == NULL || d_col == NULL)))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Row mapping: invalid arguments (%u rows of width %u%s%s)", n_rows, map->width,
                   d_in == d_out ? ", in place" : "",
                   d_weights == NULL && (d_proj == NULL || d_col == NULL) ? ", no maps" : "");
      return FALSE;
    }
  row_map_kernel<<<dim3 ((unsigned) MIN (blocks, (size_t) 2048), n_rows), PRE_BLOCK, 0, stream>>> (
    d_in, d_out, map->width, (size_t) map->n_proj * map->width, width_out, plane_out, d_weights,
    d_proj, d_col);
  return TOMO_CUDA_CHECK_LAUNCH ("row_map_kernel", error);
}

gboolean
_tomo_gpu_raw_rows_check (const TomoGpuRawRows *rows,
                          gboolean              has_out,
                          GError              **error)
{
  if (rows->raw == NULL || !has_out || (int) rows->type < 0 || rows->type > TOMO_GPU_RAW_UINT16 ||
      (rows->flat == NULL) != (rows->dark == NULL))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Raw rows: invalid arguments (raw type %d%s%s%s)", (int) rows->type,
                   rows->raw == NULL ? ", no input" : "", has_out ? "" : ", no output",
                   (rows->flat == NULL) != (rows->dark == NULL) ? ", a flat without a dark or back" : "");
      return FALSE;
    }
  return TRUE;
}

void
_tomo_gpu_preprocess_counts (TomoGpuPreprocessCounts  *counts,
                             const unsigned long long *h_counts,
                             guint                     n_rows,
                             size_t                    plane)
{
  if (counts != NULL)
    for (guint r = 0; r < n_rows; r++)
      {
        counts[r].n_values = plane;
        counts[r].n_nonpositive = h_counts[2 * r];
        counts[r].n_nonfinite = h_counts[2 * r + 1];
      }
}

gboolean
tomo_gpu_preprocess_rows (int                      device,
                          const TomoGpuRawRows    *rows,
                          guint                    n_proj,
                          guint                    width,
                          float                   *out,
                          TomoGpuPreprocessCounts *counts,
                          GError                 **error)
{
  g_return_val_if_fail (rows != NULL, FALSE);

  const guint n_rows = rows->n_rows;
  size_t plane = (size_t) n_proj * width;
  size_t raw_bytes = (size_t) n_rows * plane * tomo_gpu_raw_type_size (rows->type);
  size_t out_bytes = (size_t) n_rows * plane * sizeof (float);
  size_t fd_bytes = (size_t) n_rows * width * sizeof (float);
  gboolean normalise = rows->flat != NULL && rows->dark != NULL;
  void *d_raw = NULL;
  float *d_out = NULL, *d_flat = NULL, *d_dark = NULL;
  unsigned long long *d_counts = NULL;
  g_autofree unsigned long long *h_counts = NULL;
  gboolean ok;

  if (!_tomo_gpu_raw_rows_check (rows, out != NULL, error))
    return FALSE;
  if (n_rows == 0 || plane == 0)
    return TRUE;
  h_counts = g_new0 (unsigned long long, 2 * (gsize) n_rows);
  ok = TOMO_CUDA_CHECK (cudaSetDevice (device), error) &&
       TOMO_CUDA_CHECK (cudaMalloc (&d_raw, raw_bytes), error) &&
       TOMO_CUDA_CHECK (cudaMalloc ((void **) &d_out, out_bytes), error) &&
       TOMO_CUDA_CHECK (cudaMalloc ((void **) &d_counts, 2 * n_rows * sizeof *d_counts), error) &&
       TOMO_CUDA_CHECK (cudaMemset (d_counts, 0, 2 * n_rows * sizeof *d_counts), error) &&
       TOMO_CUDA_CHECK (cudaMemcpy (d_raw, rows->raw, raw_bytes, cudaMemcpyHostToDevice), error);
  if (ok && normalise)
    ok = TOMO_CUDA_CHECK (cudaMalloc ((void **) &d_flat, fd_bytes), error) &&
         TOMO_CUDA_CHECK (cudaMalloc ((void **) &d_dark, fd_bytes), error) &&
         TOMO_CUDA_CHECK (cudaMemcpy (d_flat, rows->flat, fd_bytes, cudaMemcpyHostToDevice), error) &&
         TOMO_CUDA_CHECK (cudaMemcpy (d_dark, rows->dark, fd_bytes, cudaMemcpyHostToDevice), error);
  TomoGpuPreprocessJob pre = { rows->type, d_raw, d_flat, d_dark, normalise, rows->apply_log, n_rows, plane, width,
                               d_out, d_counts };
  ok = ok &&
       _tomo_gpu_preprocess_launch (&pre, 0, error) &&
       TOMO_CUDA_CHECK (cudaMemcpy (out, d_out, out_bytes, cudaMemcpyDeviceToHost), error) &&
       TOMO_CUDA_CHECK (cudaMemcpy (h_counts, d_counts, 2 * n_rows * sizeof *d_counts,
                                    cudaMemcpyDeviceToHost), error);
  if (ok)
    _tomo_gpu_preprocess_counts (counts, h_counts, n_rows, plane);
  TOMO_CUDA_FREE (d_raw, d_out, d_flat, d_dark, d_counts);
  return ok;
}
