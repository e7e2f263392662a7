/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Value statistics of a slice where it lies, on the device: the same
 * numbers as tomo_slice_stats_compute() (app/recon/tomo-slice-stats.c) —
 * min/max and mean of the finite values, the 0.5/99.5 % and 0.05/99.95 %
 * percentiles from a 65536-bin histogram over [min, max], and the 256-bin
 * display histogram over [range_lo, range_hi] — in four small kernels on
 * one stream and one copy of about 1 KiB back.  The bin arithmetic is the
 * host's, operation for operation (double for the fine bins, a float
 * difference then double for the display bins), so bins, extremes and
 * percentiles are identical; the mean differs by the order of summation.
 */
#define G_LOG_DOMAIN "tomo-gpu"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-gpu.h"
#include "tomo-gpu-private.h"

#define FINE 65536
#define DISPLAY_BINS TOMO_GPU_STATS_BINS
#define THREADS 256
#define SCAN_THREADS 1024

/* What the kernels leave on the device; copied back whole. */
typedef struct
{
  unsigned int min_key, max_key;  /* order-preserving keys of the extremes */
  unsigned long long n_finite;
  double sum;
  float lo, hi, range_lo, range_hi;
  unsigned int bins[DISPLAY_BINS];
} DeviceStats;

struct _TomoGpuStatsWork
{
  int device;
  DeviceStats *d_stats;
  unsigned int *d_fine;
  DeviceStats *h_stats;           /* pinned */
};

/* Floats as unsigned keys in the same order (negative values flipped). */
__device__ __forceinline__ unsigned int
float_key (float f)
{
  unsigned int u = __float_as_uint (f);

  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline float
key_float (unsigned int k)
{
  unsigned int u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
  float f;

  memcpy (&f, &u, sizeof f);
  return f;
}

__device__ __forceinline__ float
device_key_float (unsigned int k)
{
  return __uint_as_float ((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

__global__ void
k_extremes (const float *__restrict__ data,
            size_t                    n,
            DeviceStats              *st)
{
  __shared__ unsigned int s_min[THREADS / 32], s_max[THREADS / 32];
  __shared__ double s_sum[THREADS / 32];
  __shared__ unsigned long long s_n[THREADS / 32];
  unsigned int kmin = 0xffffffffu, kmax = 0;
  double sum = 0;
  unsigned long long cnt = 0;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float v = data[i];

      if (isfinite (v))
        {
          unsigned int k = float_key (v);

          kmin = min (kmin, k);
          kmax = max (kmax, k);
          sum += v;
          cnt++;
        }
    }
  for (int o = 16; o > 0; o >>= 1)
    {
      kmin = min (kmin, __shfl_down_sync (0xffffffffu, kmin, o));
      kmax = max (kmax, __shfl_down_sync (0xffffffffu, kmax, o));
      sum += __shfl_down_sync (0xffffffffu, sum, o);
      cnt += __shfl_down_sync (0xffffffffu, cnt, o);
    }
  if (lane == 0)
    {
      s_min[warp] = kmin;
      s_max[warp] = kmax;
      s_sum[warp] = sum;
      s_n[warp] = cnt;
    }
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      for (int w = 1; w < THREADS / 32; w++)
        {
          kmin = min (kmin, s_min[w]);
          kmax = max (kmax, s_max[w]);
          sum += s_sum[w];
          cnt += s_n[w];
        }
      if (cnt > 0)
        {
          atomicMin (&st->min_key, kmin);
          atomicMax (&st->max_key, kmax);
          atomicAdd (&st->sum, sum);
          atomicAdd (&st->n_finite, cnt);
        }
    }
}

/* Fine bins over [min, max]: (v − mn)·scale in double, as on the host. */
__global__ void
k_fine (const float *__restrict__ data,
        size_t                    n,
        const DeviceStats        *st,
        unsigned int             *fine)
{
  const float mnf = device_key_float (st->min_key), mxf = device_key_float (st->max_key);
  const double mn = mnf, scale = (FINE - 1) / ((double) mxf - mn);

  if (st->n_finite == 0 || mxf == mnf)
    return;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float v = data[i];

      if (isfinite (v))
        atomicAdd (&fine[(unsigned int) __dmul_rn (__dsub_rn ((double) v, mn), scale)], 1u);
    }
}

/* First bin where the running count passes a target, as the host's loop:
 * lo at acc > lo_target, hi at acc ≥ hi_target (then hi = its upper edge). */
__global__ void
k_percentiles (const unsigned int *fine,
               DeviceStats        *st)
{
  __shared__ unsigned long long s_acc[SCAN_THREADS];
  __shared__ unsigned int s_found[4];
  const unsigned int per = FINE / SCAN_THREADS;
  const unsigned int t = threadIdx.x;
  const unsigned long long total = st->n_finite;
  const float mnf = device_key_float (st->min_key), mxf = device_key_float (st->max_key);
  const double mn = mnf, scale = (FINE - 1) / ((double) mxf - mn);
  unsigned long long targets[4], own = 0, before;
  const bool strict[4] = { true, false, true, false };

  if (total == 0)
    return;
  if (mxf == mnf)
    {
      if (t == 0)
        {
          st->lo = st->hi = st->range_lo = st->range_hi = mnf;
          st->bins[0] = (unsigned int) total;
        }
      return;
    }
  targets[0] = (unsigned long long) floor (total * 0.5 / 100.0);
  targets[1] = (unsigned long long) ceil (total * 99.5 / 100.0);
  targets[2] = (unsigned long long) floor (total * 0.05 / 100.0);
  targets[3] = (unsigned long long) ceil (total * 99.95 / 100.0);

  for (unsigned int b = t * per; b < (t + 1) * per; b++)
    own += fine[b];
  s_acc[t] = own;
  __syncthreads ();
  /* Inclusive scan (Hillis–Steele). */
  for (unsigned int o = 1; o < SCAN_THREADS; o <<= 1)
    {
      unsigned long long add = t >= o ? s_acc[t - o] : 0;

      __syncthreads ();
      s_acc[t] += add;
      __syncthreads ();
    }
  before = s_acc[t] - own;
  for (int k = 0; k < 4; k++)
    {
      bool starts_here = strict[k] ? (before <= targets[k] && s_acc[t] > targets[k])
                                   : (before < targets[k] && s_acc[t] >= targets[k]);

      if (starts_here)
        {
          unsigned long long acc = before;

          for (unsigned int b = t * per; b < (t + 1) * per; b++)
            {
              acc += fine[b];
              if (strict[k] ? acc > targets[k] : acc >= targets[k])
                {
                  s_found[k] = b;
                  break;
                }
            }
        }
    }
  __syncthreads ();
  if (t == 0)
    {
      float lo = (float) (mn + s_found[0] / scale);
      float hi = (float) (mn + (s_found[1] + 1) / scale);
      float rlo = (float) (mn + s_found[2] / scale);
      float rhi = (float) (mn + (s_found[3] + 1) / scale);

      hi = hi < mxf ? hi : mxf;
      rhi = rhi < mxf ? rhi : mxf;
      if (rhi <= rlo)
        rhi = rlo + 1e-6f;
      st->lo = lo;
      st->hi = hi;
      st->range_lo = rlo;
      st->range_hi = rhi;
    }
}

/* Display bins over [range_lo, range_hi], privatised per block. */
__global__ void
k_display (const float *__restrict__ data,
           size_t                    n,
           DeviceStats              *st)
{
  __shared__ unsigned int s_bins[DISPLAY_BINS];
  const float rlo = st->range_lo, rhi = st->range_hi;
  const double bin_scale = DISPLAY_BINS / ((double) rhi - rlo);

  if (st->n_finite == 0 || st->min_key == st->max_key)
    return;
  for (unsigned int b = threadIdx.x; b < DISPLAY_BINS; b += blockDim.x)
    s_bins[b] = 0;
  __syncthreads ();
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float v = data[i];

      if (isfinite (v) && v >= rlo && v <= rhi)
        {
          int b = (int) __dmul_rn ((double) __fsub_rn (v, rlo), bin_scale);

          atomicAdd (&s_bins[b < 0 ? 0 : (b > DISPLAY_BINS - 1 ? DISPLAY_BINS - 1 : b)], 1u);
        }
    }
  __syncthreads ();
  for (unsigned int b = threadIdx.x; b < DISPLAY_BINS; b += blockDim.x)
    if (s_bins[b] != 0)
      atomicAdd (&st->bins[b], s_bins[b]);
}

TomoGpuStatsWork *
_tomo_gpu_stats_work_new (int      device,
                          GError **error)
{
  TomoGpuStatsWork *w = g_new0 (TomoGpuStatsWork, 1);

  w->device = device;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (device), error) ||
      !TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_stats, sizeof (DeviceStats)), error) ||
      !TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_fine, FINE * sizeof (unsigned int)), error) ||
      !TOMO_CUDA_CHECK (cudaMallocHost ((void **) &w->h_stats, sizeof (DeviceStats)), error))
    {
      _tomo_gpu_stats_work_free (w);
      return NULL;
    }
  return w;
}

void
_tomo_gpu_stats_work_free (TomoGpuStatsWork *w)
{
  if (w == NULL)
    return;
  TOMO_CUDA_WARN (cudaSetDevice (w->device));
  if (w->d_stats != NULL)
    TOMO_CUDA_WARN (cudaFree (w->d_stats));
  if (w->d_fine != NULL)
    TOMO_CUDA_WARN (cudaFree (w->d_fine));
  if (w->h_stats != NULL)
    TOMO_CUDA_WARN (cudaFreeHost (w->h_stats));
  g_free (w);
}

gboolean
_tomo_gpu_stats_run (TomoGpuStatsWork *w,
                     const float      *d_data,
                     size_t            n,
                     cudaStream_t      stream,
                     TomoGpuStats     *out,
                     GError          **error)
{
  const DeviceStats *h = w->h_stats;
  int sms = 0, blocks;

  memset (out, 0, sizeof *out);
  if (n == 0)
    return TRUE;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (w->device), error) ||
      !TOMO_CUDA_CHECK (cudaDeviceGetAttribute (&sms, cudaDevAttrMultiProcessorCount, w->device),
                        error))
    return FALSE;
  blocks = (int) MIN ((n + THREADS - 1) / THREADS, (size_t) sms * 8);

  if (!TOMO_CUDA_CHECK (cudaMemsetAsync (w->d_stats, 0, sizeof (DeviceStats), stream), error) ||
      !TOMO_CUDA_CHECK (cudaMemsetAsync (&w->d_stats->min_key, 0xff, sizeof (unsigned int), stream),
                        error) ||
      !TOMO_CUDA_CHECK (cudaMemsetAsync (w->d_fine, 0, FINE * sizeof (unsigned int), stream), error))
    return FALSE;
  k_extremes<<<blocks, THREADS, 0, stream>>> (d_data, n, w->d_stats);
  if (!TOMO_CUDA_CHECK_LAUNCH ("k_extremes", error))
    return FALSE;
  k_fine<<<blocks, THREADS, 0, stream>>> (d_data, n, w->d_stats, w->d_fine);
  if (!TOMO_CUDA_CHECK_LAUNCH ("k_fine", error))
    return FALSE;
  k_percentiles<<<1, SCAN_THREADS, 0, stream>>> (w->d_fine, w->d_stats);
  if (!TOMO_CUDA_CHECK_LAUNCH ("k_percentiles", error))
    return FALSE;
  k_display<<<blocks, THREADS, 0, stream>>> (d_data, n, w->d_stats);
  if (!TOMO_CUDA_CHECK_LAUNCH ("k_display", error))
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaMemcpyAsync (w->h_stats, w->d_stats, sizeof (DeviceStats),
                                         cudaMemcpyDeviceToHost, stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (stream), error))
    return FALSE;

  if (h->n_finite == 0)
    return TRUE;
  out->valid = TRUE;
  out->n_finite = h->n_finite;
  out->mean = h->sum / h->n_finite;
  out->min = key_float (h->min_key);
  out->max = key_float (h->max_key);
  out->lo = h->lo;
  out->hi = h->hi;
  out->range_lo = h->range_lo;
  out->range_hi = h->range_hi;
  memcpy (out->bins, h->bins, sizeof out->bins);
  return TRUE;
}
