/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Value statistics of a slice where it lies, on the device: the same
 * numbers as tomo_slice_stats_compute() (app/recon/tomo-slice-stats.c) —
 * min/max and mean of the finite values, the 0.5/99.5 % and 0.05/99.95 %
 * percentiles from a 65536-bin histogram over [min, max], and the 256-bin
 * display histogram over [range_lo, range_hi].
 *
 * The 65536 fine bins are never built: a fine bin is 256 coarse bins × 256
 * sub-bins, so one pass counts the coarse bins, a block-wide scan finds the
 * coarse bin each of the four percentiles falls in, and a second pass
 * counts the sub-bins of those (at most four) coarse bins only.  Every
 * histogram is counted in shared memory, one sub-histogram per block, with
 * the lanes of a warp that hit the same bin adding once (a slice's
 * background puts most pixels in a few bins, where per-pixel atomics would
 * queue).  Six small kernels on the caller's stream, no host round trip in
 * between, and one copy of about 1 KiB back.  The bin arithmetic is the
 * host's, operation for operation (double for the fine bins, a float
 * difference then double for the display bins), so bins, extremes and
 * percentiles are identical; the mean differs by the order of summation.
 *
 * Also here, on the same workspace: the centre sweep's negativity score of
 * each plane (k_negativity), so a sweep's candidates are scored where they
 * are reconstructed and need not come down whole.
 */
#define G_LOG_DOMAIN "tomo-gpu"

#include "config.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "tomo-gpu.h"
#include "tomo-gpu-private.h"

#define COARSE 256
#define SUB 256
#define FINE (COARSE * SUB)
#define N_TARGETS 4
#define DISPLAY_BINS TOMO_GPU_STATS_BINS
#define THREADS 256     /* every kernel; the scans assume it */
#define FULL_MASK 0xffffffffu

static_assert (COARSE == THREADS && SUB == THREADS, "one scan thread per bin");

/* What the kernels leave on the device.  Zeroed before each run (the
 * minimum is kept as the complement of its key, so 0 is its neutral
 * value too); the part up to `coarse` is copied back. */
typedef struct
{
  unsigned int min_inv, max_key;  /* ~key of the minimum, key of the maximum */
  unsigned long long n_finite;
  double sum;
  float lo, hi, range_lo, range_hi;
  unsigned int bins[DISPLAY_BINS];
  /* work */
  unsigned int coarse[COARSE];
  unsigned int target_coarse[N_TARGETS];       /* coarse bin of each percentile */
  unsigned long long target_before[N_TARGETS]; /* finite values below that bin */
  unsigned int sub[N_TARGETS][SUB];            /* sub-bins of those coarse bins */
} DeviceStats;

struct _TomoGpuStatsWork
{
  int device;
  int sms;
  DeviceStats *d_stats;
  DeviceStats *h_stats;           /* pinned */
  double *d_energy, *h_energy;    /* negativity: negative and all energy of each plane */
};

/* The percentiles, in the order of the host's loops: 0.5 % (the first bin
 * where the running count passes the target), 99.5 % (reaches it), 0.05 %,
 * 99.95 %. */
__device__ __forceinline__ void
percentile_targets (unsigned long long total,
                    unsigned long long targets[N_TARGETS])
{
  targets[0] = (unsigned long long) floor (total * 0.5 / 100.0);
  targets[1] = (unsigned long long) ceil (total * 99.5 / 100.0);
  targets[2] = (unsigned long long) floor (total * 0.05 / 100.0);
  targets[3] = (unsigned long long) ceil (total * 99.95 / 100.0);
}

/* Whether the bin spanning (before, upto] of the running count is where
 * target k is found. */
__device__ __forceinline__ bool
target_in (int                k,
           unsigned long long target,
           unsigned long long before,
           unsigned long long upto)
{
  return (k % 2 == 0) ? (before <= target && upto > target)
                      : (before < target && upto >= target);
}

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

/* The extremes and the fine-bin scale (v − mn)·scale, in double as on the
 * host; FALSE when there are no bins (no finite value, or all equal). */
__device__ __forceinline__ bool
fine_range (const DeviceStats *st,
            float             *mnf,
            double            *mn,
            double            *scale)
{
  const float lo = device_key_float (~st->min_inv), hi = device_key_float (st->max_key);

  *mnf = lo;
  *mn = lo;
  *scale = (FINE - 1) / ((double) hi - *mn);
  return st->n_finite > 0 && hi != lo;
}

__device__ __forceinline__ unsigned int
fine_bin (float  v,
          double mn,
          double scale)
{
  return min ((unsigned int) __dmul_rn (__dsub_rn ((double) v, mn), scale), FINE - 1u);
}

/* One shared-memory add per distinct bin of the warp; bin < 0 adds
 * nothing.  All 32 lanes must call it. */
__device__ __forceinline__ void
add_aggregated (unsigned int *s_bins,
                int           bin)
{
  unsigned int peers = __match_any_sync (FULL_MASK, bin);

  if (bin >= 0 && (int) (threadIdx.x & 31) == __ffs (peers) - 1)
    atomicAdd (&s_bins[bin], (unsigned int) __popc (peers));
}

/* Inclusive prefix sum over the THREADS threads of the block. */
__device__ unsigned long long
block_scan (unsigned long long v)
{
  __shared__ unsigned long long s_warp[THREADS / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  for (int o = 1; o < 32; o <<= 1)
    {
      unsigned long long y = __shfl_up_sync (FULL_MASK, v, o);

      if (lane >= o)
        v += y;
    }
  if (lane == 31)
    s_warp[warp] = v;
  __syncthreads ();
  if (warp == 0)
    {
      unsigned long long w = lane < THREADS / 32 ? s_warp[lane] : 0;

      for (int o = 1; o < THREADS / 32; o <<= 1)
        {
          unsigned long long y = __shfl_up_sync (FULL_MASK, w, o);

          if (lane >= o)
            w += y;
        }
      if (lane < THREADS / 32)
        s_warp[lane] = w;
    }
  __syncthreads ();
  if (warp > 0)
    v += s_warp[warp - 1];
  __syncthreads ();
  return v;
}

/* Counts bin_of(v) of every finite v in data (a negative bin counts
 * nothing) into g_bins: a shared sub-histogram per block, added to the
 * global one at the end.  The whole block steps over the data together, so
 * that every lane of a warp reaches add_aggregated(). */
template <unsigned int BINS, typename BinOf>
__device__ void
count_bins (const float *__restrict__ data,
            size_t                    n,
            BinOf                     bin_of,
            unsigned int             *s_bins,
            unsigned int             *g_bins)
{
  for (unsigned int b = threadIdx.x; b < BINS; b += blockDim.x)
    s_bins[b] = 0;
  __syncthreads ();
  for (size_t base = blockIdx.x * (size_t) blockDim.x; base < n;
       base += (size_t) gridDim.x * blockDim.x)
    {
      const size_t i = base + threadIdx.x;
      int bin = -1;

      if (i < n)
        {
          float v = data[i];

          if (isfinite (v))
            bin = bin_of (v);
        }
      add_aggregated (s_bins, bin);
    }
  __syncthreads ();
  for (unsigned int b = threadIdx.x; b < BINS; b += blockDim.x)
    if (s_bins[b] != 0)
      atomicAdd (&g_bins[b], s_bins[b]);
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
      kmin = min (kmin, __shfl_down_sync (FULL_MASK, kmin, o));
      kmax = max (kmax, __shfl_down_sync (FULL_MASK, kmax, o));
      sum += __shfl_down_sync (FULL_MASK, sum, o);
      cnt += __shfl_down_sync (FULL_MASK, cnt, o);
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
          atomicMax (&st->min_inv, ~kmin);
          atomicMax (&st->max_key, kmax);
          atomicAdd (&st->sum, sum);
          atomicAdd (&st->n_finite, cnt);
        }
    }
}

/* Pass 1: the coarse bins (fine bin / SUB). */
__global__ void
k_coarse (const float *__restrict__ data,
          size_t                    n,
          DeviceStats              *st)
{
  __shared__ unsigned int s_bins[COARSE];
  float mnf;
  double mn, scale;

  if (!fine_range (st, &mnf, &mn, &scale))
    return;
  count_bins<COARSE> (data, n, [=] (float v) { return (int) (fine_bin (v, mn, scale) / SUB); },
                      s_bins, st->coarse);
}

/* One block of COARSE threads: the coarse bin of each percentile, and a
 * constant slice's result. */
__global__ void
k_coarse_targets (DeviceStats *st)
{
  const unsigned int t = threadIdx.x;
  const unsigned long long total = st->n_finite;
  unsigned long long targets[N_TARGETS], c, upto;
  float mnf;
  double mn, scale;

  if (total == 0)
    return;
  if (!fine_range (st, &mnf, &mn, &scale))
    {
      if (t == 0)
        {
          st->lo = st->hi = st->range_lo = st->range_hi = mnf;
          st->bins[0] = (unsigned int) total;
        }
      return;
    }
  percentile_targets (total, targets);
  c = st->coarse[t];
  upto = block_scan (c);
  for (int k = 0; k < N_TARGETS; k++)
    if (target_in (k, targets[k], upto - c, upto))
      {
        st->target_coarse[k] = t;
        st->target_before[k] = upto - c;
      }
}

/* Pass 2: the sub-bins of the (at most four) coarse bins holding a
 * percentile; a coarse bin shared by several is counted in its first slot. */
__global__ void
k_sub (const float *__restrict__ data,
       size_t                    n,
       DeviceStats              *st)
{
  __shared__ unsigned int s_bins[N_TARGETS * SUB];
  unsigned int tc[N_TARGETS];
  float mnf;
  double mn, scale;

  if (!fine_range (st, &mnf, &mn, &scale))
    return;
  for (int k = 0; k < N_TARGETS; k++)
    tc[k] = st->target_coarse[k];
  count_bins<N_TARGETS * SUB> (data, n,
                               [=] (float v)
                               {
                                 unsigned int f = fine_bin (v, mn, scale);

                                 for (int k = 0; k < N_TARGETS; k++)
                                   if (f / SUB == tc[k])
                                     return k * SUB + (int) (f % SUB);
                                 return -1;
                               },
                               s_bins, &st->sub[0][0]);
}

/* One block of SUB threads: the fine bin of each percentile, then the
 * values as the host computes them. */
__global__ void
k_fine_targets (DeviceStats *st)
{
  __shared__ unsigned int s_found[N_TARGETS];
  const unsigned int t = threadIdx.x;
  unsigned long long targets[N_TARGETS];
  float mnf;
  double mn, scale;

  if (!fine_range (st, &mnf, &mn, &scale))
    return;
  percentile_targets (st->n_finite, targets);
  for (int k = 0; k < N_TARGETS; k++)
    {
      int slot = k;
      unsigned long long c, upto;

      for (int j = 0; j < k; j++)
        if (st->target_coarse[j] == st->target_coarse[k])
          {
            slot = j;
            break;
          }
      c = st->sub[slot][t];
      upto = st->target_before[k] + block_scan (c);
      if (target_in (k, targets[k], upto - c, upto))
        s_found[k] = st->target_coarse[k] * SUB + t;
    }
  __syncthreads ();
  if (t == 0)
    {
      const float mxf = device_key_float (st->max_key);
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

/* Display bins over [range_lo, range_hi]. */
__global__ void
k_display (const float *__restrict__ data,
           size_t                    n,
           DeviceStats              *st)
{
  __shared__ unsigned int s_bins[DISPLAY_BINS];
  const float rlo = st->range_lo, rhi = st->range_hi;
  const double bin_scale = DISPLAY_BINS / ((double) rhi - rlo);
  float mnf;
  double mn, scale;

  if (!fine_range (st, &mnf, &mn, &scale))
    return;
  count_bins<DISPLAY_BINS> (data, n,
                            [=] (float v)
                            {
                              int b;

                              if (!(v >= rlo && v <= rhi))
                                return -1;
                              b = (int) __dmul_rn ((double) __fsub_rn (v, rlo), bin_scale);
                              return b < 0 ? 0 : (b > DISPLAY_BINS - 1 ? DISPLAY_BINS - 1 : b);
                            },
                            s_bins, st->bins);
}

/* The centre sweep's score, one plane per blockIdx.y: the energy (v²) of
 * the negative values and of all the finite values inside the disc
 * inscribed in the plane, added to energy[2 × plane] and [2 × plane + 1].
 * In double, as on the host (tomo_center_negativity()); only the order of
 * the sums differs. */
__global__ void
k_negativity (const float *__restrict__ data,
              unsigned int              width,
              unsigned int              height,
              double                   *energy)
{
  __shared__ double s_neg[THREADS / 32], s_all[THREADS / 32];
  const size_t n = (size_t) width * height;
  const float *plane = data + blockIdx.y * n;
  const double cx = (width - 1) / 2.0, cy = (height - 1) / 2.0;
  const double r = 0.5 * min (width, height) - 2;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double neg = 0, all = 0;

  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      double dx = (double) (i % width) - cx, dy = (double) (i / width) - cy, v = plane[i];

      if (r < 0 || dx * dx + dy * dy > r * r || !isfinite (v))
        continue;
      if (v < 0)
        neg += v * v;
      all += v * v;
    }
  for (int o = 16; o > 0; o >>= 1)
    {
      neg += __shfl_down_sync (FULL_MASK, neg, o);
      all += __shfl_down_sync (FULL_MASK, all, o);
    }
  if (lane == 0)
    {
      s_neg[warp] = neg;
      s_all[warp] = all;
    }
  __syncthreads ();
  if (threadIdx.x == 0)
    {
      for (int w = 1; w < THREADS / 32; w++)
        {
          neg += s_neg[w];
          all += s_all[w];
        }
      atomicAdd (&energy[2 * blockIdx.y], neg);
      atomicAdd (&energy[2 * blockIdx.y + 1], all);
    }
}

TomoGpuStatsWork *
_tomo_gpu_stats_work_new (int      device,
                          GError **error)
{
  TomoGpuStatsWork *w = g_new0 (TomoGpuStatsWork, 1);

  w->device = device;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (device), error) ||
      !TOMO_CUDA_CHECK (cudaDeviceGetAttribute (&w->sms, cudaDevAttrMultiProcessorCount, device),
                        error) ||
      !TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_stats, sizeof (DeviceStats)), error) ||
      !TOMO_CUDA_CHECK (cudaMallocHost ((void **) &w->h_stats, sizeof (DeviceStats)), error) ||
      !TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_energy,
                                    2 * TOMO_GPU_MAX_SCORED * sizeof (double)), error) ||
      !TOMO_CUDA_CHECK (cudaMallocHost ((void **) &w->h_energy,
                                        2 * TOMO_GPU_MAX_SCORED * sizeof (double)), error))
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
  /* Both frees take NULL, as after a failed _new. */
  TOMO_CUDA_WARN (cudaSetDevice (w->device));
  TOMO_CUDA_WARN (cudaFree (w->d_stats));
  TOMO_CUDA_WARN (cudaFreeHost (w->h_stats));
  TOMO_CUDA_WARN (cudaFree (w->d_energy));
  TOMO_CUDA_WARN (cudaFreeHost (w->h_energy));
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
  int blocks;

  memset (out, 0, sizeof *out);
  if (n == 0)
    return TRUE;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (w->device), error))
    return FALSE;
  blocks = (int) MIN ((n + THREADS - 1) / THREADS, (size_t) MAX (w->sms, 1) * 8);

  if (!TOMO_CUDA_CHECK (cudaMemsetAsync (w->d_stats, 0, sizeof (DeviceStats), stream), error))
    return FALSE;
  /* A launch that fails leaves its error for the check after the last. */
  k_extremes<<<blocks, THREADS, 0, stream>>> (d_data, n, w->d_stats);
  k_coarse<<<blocks, THREADS, 0, stream>>> (d_data, n, w->d_stats);
  k_coarse_targets<<<1, COARSE, 0, stream>>> (w->d_stats);
  k_sub<<<blocks, THREADS, 0, stream>>> (d_data, n, w->d_stats);
  k_fine_targets<<<1, SUB, 0, stream>>> (w->d_stats);
  k_display<<<blocks, THREADS, 0, stream>>> (d_data, n, w->d_stats);
  if (!TOMO_CUDA_CHECK_LAUNCH ("the slice statistics kernels", error))
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaMemcpyAsync (w->h_stats, w->d_stats, offsetof (DeviceStats, coarse),
                                         cudaMemcpyDeviceToHost, stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (stream), error))
    return FALSE;

  if (h->n_finite == 0)
    return TRUE;
  out->valid = TRUE;
  out->n_finite = h->n_finite;
  out->mean = h->sum / h->n_finite;
  out->min = key_float (~h->min_inv);
  out->max = key_float (h->max_key);
  out->lo = h->lo;
  out->hi = h->hi;
  out->range_lo = h->range_lo;
  out->range_hi = h->range_hi;
  memcpy (out->bins, h->bins, sizeof out->bins);
  return TRUE;
}

gboolean
_tomo_gpu_negativity_run (TomoGpuStatsWork *w,
                          const float      *d_data,
                          guint             width,
                          guint             height,
                          guint             n_planes,
                          cudaStream_t      stream,
                          double           *scores,
                          GError          **error)
{
  size_t n = (size_t) width * height;
  int blocks;

  if (n == 0)
    {
      memset (scores, 0, n_planes * sizeof (double));
      return TRUE;
    }
  if (n_planes == 0 || n_planes > TOMO_GPU_MAX_SCORED)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Cannot score %u planes at once (1 to %u)", n_planes, TOMO_GPU_MAX_SCORED);
      return FALSE;
    }
  if (!TOMO_CUDA_CHECK (cudaSetDevice (w->device), error))
    return FALSE;
  /* About two waves of blocks over all the planes. */
  blocks = (int) CLAMP ((size_t) MAX (w->sms, 1) * 16 / n_planes, (size_t) 1,
                        (n + THREADS - 1) / THREADS);
  if (!TOMO_CUDA_CHECK (cudaMemsetAsync (w->d_energy, 0, 2 * n_planes * sizeof (double), stream),
                        error))
    return FALSE;
  k_negativity<<<dim3 (blocks, n_planes), THREADS, 0, stream>>> (d_data, width, height,
                                                                 w->d_energy);
  if (!TOMO_CUDA_CHECK_LAUNCH ("the negativity kernel", error) ||
      !TOMO_CUDA_CHECK (cudaMemcpyAsync (w->h_energy, w->d_energy, 2 * n_planes * sizeof (double),
                                         cudaMemcpyDeviceToHost, stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (stream), error))
    return FALSE;
  for (guint p = 0; p < n_planes; p++)
    scores[p] = w->h_energy[2 * p + 1] > 0 ? w->h_energy[2 * p] / w->h_energy[2 * p + 1] : 0.0;
  return TRUE;
}
