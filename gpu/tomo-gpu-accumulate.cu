/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Live accumulation: back projection is a sum over projections, so a slice
 * under a live scan is kept on the device and only the projections that
 * just arrived are added (or, for a sliding window, the oldest subtracted).
 *
 * Mapping: one thread per slice pixel (16×16 blocks), each looping over the
 * k new projections; their filtered rows sit in global memory (k is small,
 * a few to a few hundred, and the rows stay in L2), their cos/sin/offset in
 * constant-sized shared arrays loaded once per block.  The coordinate
 * convention is the CPU back projector's: t = (x − c)·cos θ − (y − c)·sin θ
 * + centre with c = (W − 1)/2.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <math.h>

#include "tomo-gpu-private.h"

#define ACC_BLOCK 16
#define ACC_MAX_BATCH 256   /* projections per launch (shared memory) */

struct _TomoGpuAccumulator
{
  int          device;
  guint        width;
  float       *d_image;
  float       *d_rows;
  gsize        rows_capacity;   /* floats */
  float2      *h_trig;
  float2      *d_trig;
  cudaStream_t stream;
  cudaEvent_t  start, stop;
  double       last_ms;
};

__global__ static void
accumulate_kernel (float        *image,
                   const float  *rows,
                   const float2 *trig,
                   int           n_proj,
                   int           width,
                   float         center,
                   float         weight,
                   int           linear)
{
  __shared__ float2 s_trig[ACC_MAX_BATCH];
  int x = blockIdx.x * ACC_BLOCK + threadIdx.x;
  int y = blockIdx.y * ACC_BLOCK + threadIdx.y;
  int tid = threadIdx.y * ACC_BLOCK + threadIdx.x;
  float c = (width - 1) * 0.5f;
  float sum = 0.0f;

  for (int p = tid; p < n_proj; p += ACC_BLOCK * ACC_BLOCK)
    s_trig[p] = trig[p];
  __syncthreads ();
  if (x >= width || y >= width)
    return;

  for (int p = 0; p < n_proj; p++)
    {
      const float *row = rows + (size_t) p * width;
      float t = (x - c) * s_trig[p].x - (y - c) * s_trig[p].y + center;

      if (linear)
        {
          /* Zero outside the detector, interpolated into it from both
           * sides (t in (−1, W)), as the CPU back projector does. */
          float fl = floorf (t);
          int i = (int) fl;
          float f = t - fl;

          if (i >= -1 && i < width)
            {
              float v0 = i >= 0 ? row[i] : 0.0f;
              float v1 = i + 1 < width ? row[i + 1] : 0.0f;
              sum += v0 + f * (v1 - v0);
            }
        }
      else
        {
          int i = (int) floorf (t + 0.5f);

          if (i >= 0 && i < width)
            sum += row[i];
        }
    }
  image[(size_t) y * width + x] += weight * sum;
}

TomoGpuAccumulator *
tomo_gpu_accumulator_new (int      device,
                          guint    width,
                          GError **error)
{
  TomoGpuAccumulator *acc;
  int n = 0;

  if (cudaGetDeviceCount (&n) != cudaSuccess || n == 0)
    {
      cudaGetLastError ();
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE, "No CUDA device");
      return NULL;
    }
  if (device < 0 || device >= n || width == 0 || width > 65536)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Accumulator on device %d of %d for a %u-pixel slice", device, n, width);
      return NULL;
    }
  acc = g_new0 (TomoGpuAccumulator, 1);
  acc->device = device;
  acc->width = width;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (device), error) ||
      !TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&acc->stream, cudaStreamNonBlocking), error) ||
      !TOMO_CUDA_CHECK (cudaEventCreate (&acc->start), error) ||
      !TOMO_CUDA_CHECK (cudaEventCreate (&acc->stop), error) ||
      !TOMO_CUDA_CHECK (cudaMalloc (&acc->d_image, sizeof (float) * width * width), error) ||
      !TOMO_CUDA_CHECK (cudaMalloc (&acc->d_trig, sizeof (float2) * ACC_MAX_BATCH), error) ||
      !TOMO_CUDA_CHECK (cudaMallocHost (&acc->h_trig, sizeof (float2) * ACC_MAX_BATCH), error) ||
      !tomo_gpu_accumulator_clear (acc, error))
    {
      tomo_gpu_accumulator_free (acc);
      return NULL;
    }
  return acc;
}

gboolean
tomo_gpu_accumulator_clear (TomoGpuAccumulator *acc,
                            GError            **error)
{
  return TOMO_CUDA_CHECK (cudaSetDevice (acc->device), error) &&
         TOMO_CUDA_CHECK (cudaMemsetAsync (acc->d_image, 0, sizeof (float) * acc->width * acc->width,
                                           acc->stream), error);
}

gboolean
tomo_gpu_accumulator_add (TomoGpuAccumulator *acc,
                          const float        *filtered,
                          const double       *angles,
                          guint               n_proj,
                          double              center,
                          float               weight,
                          gboolean            linear,
                          GError            **error)
{
  guint w = acc->width;
  gsize need = (gsize) MIN (n_proj, ACC_MAX_BATCH) * w;
  dim3 block (ACC_BLOCK, ACC_BLOCK), grid ((w + ACC_BLOCK - 1) / ACC_BLOCK, (w + ACC_BLOCK - 1) / ACC_BLOCK);
  float ms = 0;

  if (!isfinite (center) || !isfinite (weight))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Accumulate: centre %g, weight %g", center, (double) weight);
      return FALSE;
    }
  if (n_proj == 0)
    return TRUE;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (acc->device), error))
    return FALSE;
  if (need > acc->rows_capacity)
    {
      if (acc->d_rows != NULL)
        TOMO_CUDA_WARN (cudaFree (acc->d_rows));
      acc->d_rows = NULL;
      acc->rows_capacity = 0;
      if (!TOMO_CUDA_CHECK (cudaMalloc (&acc->d_rows, sizeof (float) * need), error))
        return FALSE;
      acc->rows_capacity = need;
    }

  if (!TOMO_CUDA_CHECK (cudaEventRecord (acc->start, acc->stream), error))
    return FALSE;
  for (guint p0 = 0; p0 < n_proj; p0 += ACC_MAX_BATCH)
    {
      guint k = MIN (n_proj - p0, (guint) ACC_MAX_BATCH);

      /* The previous batch must be done with h_trig and d_rows. */
      if (p0 > 0 && !TOMO_CUDA_CHECK (cudaStreamSynchronize (acc->stream), error))
        return FALSE;
      for (guint p = 0; p < k; p++)
        acc->h_trig[p] = make_float2 ((float) cos (angles[p0 + p]), (float) sin (angles[p0 + p]));
      if (!TOMO_CUDA_CHECK (cudaMemcpyAsync (acc->d_trig, acc->h_trig, sizeof (float2) * k,
                                             cudaMemcpyHostToDevice, acc->stream), error) ||
          !TOMO_CUDA_CHECK (cudaMemcpyAsync (acc->d_rows, filtered + (gsize) p0 * w, sizeof (float) * k * w,
                                             cudaMemcpyHostToDevice, acc->stream), error))
        return FALSE;
      accumulate_kernel<<<grid, block, 0, acc->stream>>> (acc->d_image, acc->d_rows, acc->d_trig, (int) k,
                                                          (int) w, (float) center, weight, linear ? 1 : 0);
      if (!TOMO_CUDA_CHECK_LAUNCH ("accumulate_kernel", error))
        return FALSE;
    }
  if (!TOMO_CUDA_CHECK (cudaEventRecord (acc->stop, acc->stream), error) ||
      !TOMO_CUDA_CHECK (cudaEventSynchronize (acc->stop), error) ||
      !TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, acc->start, acc->stop), error))
    return FALSE;
  acc->last_ms = ms;
  return TRUE;
}

gboolean
tomo_gpu_accumulator_download (TomoGpuAccumulator *acc,
                               float              *out,
                               GError            **error)
{
  return TOMO_CUDA_CHECK (cudaSetDevice (acc->device), error) &&
         TOMO_CUDA_CHECK (cudaMemcpyAsync (out, acc->d_image, sizeof (float) * acc->width * acc->width,
                                           cudaMemcpyDeviceToHost, acc->stream), error) &&
         TOMO_CUDA_CHECK (cudaStreamSynchronize (acc->stream), error);
}

double
tomo_gpu_accumulator_get_last_ms (TomoGpuAccumulator *acc)
{
  return acc->last_ms;
}

void
tomo_gpu_accumulator_free (TomoGpuAccumulator *acc)
{
  if (acc == NULL)
    return;
  cudaSetDevice (acc->device);
  if (acc->stream != NULL)
    TOMO_CUDA_WARN (cudaStreamSynchronize (acc->stream));
  if (acc->d_image != NULL)
    TOMO_CUDA_WARN (cudaFree (acc->d_image));
  if (acc->d_rows != NULL)
    TOMO_CUDA_WARN (cudaFree (acc->d_rows));
  if (acc->d_trig != NULL)
    TOMO_CUDA_WARN (cudaFree (acc->d_trig));
  if (acc->h_trig != NULL)
    TOMO_CUDA_WARN (cudaFreeHost (acc->h_trig));
  if (acc->start != NULL)
    cudaEventDestroy (acc->start);
  if (acc->stop != NULL)
    cudaEventDestroy (acc->stop);
  if (acc->stream != NULL)
    cudaStreamDestroy (acc->stream);
  g_free (acc);
}
