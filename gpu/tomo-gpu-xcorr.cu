/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Cross-correlation of detector rows over a range of shifts, for the
 * rotation axis (a projection against its mirrored opposite).
 *
 * prepare: one warp per row; the row is centred on its mean (so float sums
 *   of products do not cancel) and its prefix sums of v and v² are written
 *   in double, from which every shift's overlap sums follow in O(1).
 * direct (definition-based, warp-shuffle reuse): a block per (pair, 32
 *   shifts), 8 warps splitting the columns.  Lane l owns shift d0 + l.  For a
 *   tile of 32 columns x0…x0+31 a lane loads one value of a and two of b
 *   (the window b[x0 + d0 … x0 + d0 + 63]); then for k = 0…31 every lane
 *   takes a[x0 + k] and b[x0 + k + d0 + l] from its neighbours' registers by
 *   __shfl_sync, so each value read from memory is used 32 times.  Values
 *   outside the row are zero, which restricts the sum to the overlap.  The
 *   products (exact in double) are summed in double: over an overlap far
 *   from the row's mean (air at the detector's end) Σab and Σa·Σb/m are
 *   nearly equal, and a float sum's rounding there gave |r| ≫ 1, a false
 *   coarse peak and a lost pair.
 * fft: rows zero-padded to P ≥ 2·width, batched R2C, conj(A)·B, C2R: every
 *   shift at once; the range asked for is then read out of it.
 * finish: one thread per (pair, shift): Pearson's r from the sum of
 *   products and the prefix sums over the overlap; −2 where the overlap's
 *   variance is below the prefix sums' rounding.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <math.h>

#include "tomo-gpu-center.h"
#include "tomo-gpu-private.h"

#define XC_WARPS 8

struct _TomoGpuXcorr
{
  int           device;
  guint         max_width, max_pairs, max_fft;
  float        *d_rows;   /* 2·max_pairs × max_width: a rows, then b rows */
  double       *d_prefix; /* 2·max_pairs × 2 × (max_width + 1) */
  double       *d_sab;    /* max_pairs × (2·max_width) */
  float        *d_out;
  float        *d_pad;    /* 2·max_pairs × max_fft */
  cufftComplex *d_spec;   /* 2·max_pairs × (max_fft/2 + 1) */
  cufftHandle   plan_r2c, plan_c2r;
  guint         plan_size, plan_batch;
  cudaStream_t  stream;
  cudaEvent_t   start, stop;
  double        last_ms;
};

__global__ static void
prepare_kernel (float  *rows,
                double *prefix,
                int     width)
{
  float *row = rows + (size_t) blockIdx.x * width;
  double *s1 = prefix + (size_t) blockIdx.x * 2 * (width + 1);
  double *s2 = s1 + width + 1;
  int lane = threadIdx.x;
  int chunk = (width + 31) / 32, x0 = lane * chunk, x1 = min (width, x0 + chunk);
  double sum = 0, sq = 0, mean, run1, run2;

  for (int x = x0; x < x1; x++)
    sum += row[x];
  for (int o = 16; o > 0; o >>= 1)
    sum += __shfl_xor_sync (0xffffffffu, sum, o);
  mean = sum / width;
  sum = 0;
  for (int x = x0; x < x1; x++)
    {
      double v = row[x] - mean;
      row[x] = (float) v;
      sum += v;
      sq += v * v;
    }
  /* Exclusive scan of the lanes' chunk totals. */
  run1 = sum;
  run2 = sq;
  for (int o = 1; o < 32; o <<= 1)
    {
      double t1 = __shfl_up_sync (0xffffffffu, run1, o);
      double t2 = __shfl_up_sync (0xffffffffu, run2, o);
      if (lane >= o)
        {
          run1 += t1;
          run2 += t2;
        }
    }
  run1 -= sum;
  run2 -= sq;
  if (lane == 0)
    {
      s1[0] = 0;
      s2[0] = 0;
    }
  for (int x = x0; x < x1; x++)
    {
      double v = row[x];
      run1 += v;
      run2 += v * v;
      s1[x + 1] = run1;
      s2[x + 1] = run2;
    }
}

__global__ static void
direct_kernel (const float *a_rows,
               const float *b_rows,
               double      *sab,
               int          width,
               int          d_lo,
               int          n_shifts)
{
  __shared__ double partial[XC_WARPS][32];
  const float *a = a_rows + (size_t) blockIdx.y * width;
  const float *b = b_rows + (size_t) blockIdx.y * width;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int d0 = d_lo + blockIdx.x * 32;
  double acc = 0.0;

  for (int x0 = warp * 32; x0 < width; x0 += 32 * XC_WARPS)
    {
      int xa = x0 + lane, xb0 = x0 + d0 + lane, xb1 = xb0 + 32;
      float av = xa < width ? a[xa] : 0.0f;
      float b0 = xb0 >= 0 && xb0 < width ? b[xb0] : 0.0f;
      float b1 = xb1 >= 0 && xb1 < width ? b[xb1] : 0.0f;

#pragma unroll
      for (int k = 0; k < 32; k++)
        {
          float ak = __shfl_sync (0xffffffffu, av, k);
          int src = (k + lane) & 31;
          float lo = __shfl_sync (0xffffffffu, b0, src);
          float hi = __shfl_sync (0xffffffffu, b1, src);
          acc += (double) ak * (double) (k + lane < 32 ? lo : hi);
        }
    }
  partial[warp][lane] = acc;
  __syncthreads ();
  if (warp == 0)
    {
      double s = 0.0;
      for (int w = 0; w < XC_WARPS; w++)
        s += partial[w][lane];
      if (blockIdx.x * 32 + lane < n_shifts)
        sab[(size_t) blockIdx.y * n_shifts + blockIdx.x * 32 + lane] = s;
    }
}

__global__ static void
pad_kernel (const float *rows,
            float       *pad,
            int          width,
            int          size)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;

  if (x < size)
    pad[(size_t) blockIdx.y * size + x] = x < width ? rows[(size_t) blockIdx.y * width + x] : 0.0f;
}

/* conj(A)·B / P into A: its inverse is Σ a[x]·b[x + d] at index d mod P. */
__global__ static void
cross_kernel (cufftComplex *spec,
              int           n_pairs,
              int           n_freq,
              float         scale)
{
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  cufftComplex *A = spec + (size_t) blockIdx.y * n_freq;
  const cufftComplex *B = spec + (size_t) (blockIdx.y + n_pairs) * n_freq;

  if (k < n_freq)
    {
      cufftComplex x = A[k], y = B[k];
      A[k] = make_cuFloatComplex ((x.x * y.x + x.y * y.y) * scale, (x.x * y.y - x.y * y.x) * scale);
    }
}

__global__ static void
gather_kernel (const float *corr,
               double      *sab,
               int          size,
               int          d_lo,
               int          n_shifts)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;

  if (i < n_shifts)
    sab[(size_t) blockIdx.y * n_shifts + i] =
      corr[(size_t) blockIdx.y * size + ((d_lo + i) % size + size) % size];
}

__global__ static void
finish_kernel (const double *prefix,
               const double *sab,
               float        *out,
               int           n_pairs,
               int           width,
               int           d_lo,
               int           n_shifts,
               int           min_overlap)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x, p = blockIdx.y;
  const double *pa1 = prefix + (size_t) p * 2 * (width + 1), *pa2 = pa1 + width + 1;
  const double *pb1 = prefix + (size_t) (p + n_pairs) * 2 * (width + 1), *pb2 = pb1 + width + 1;
  int d, x0, x1;
  double m, sa, saa, sb, sbb, va, vb;

  if (i >= n_shifts)
    return;
  d = d_lo + i;
  x0 = max (0, -d);
  x1 = min (width, width - d);
  m = x1 - x0;
  if (x1 - x0 < min_overlap)
    {
      out[(size_t) p * n_shifts + i] = -2.0f;
      return;
    }
  sa = pa1[x1] - pa1[x0];
  saa = pa2[x1] - pa2[x0];
  sb = pb1[x1 + d] - pb1[x0 + d];
  sbb = pb2[x1 + d] - pb2[x0 + d];
  va = saa - sa * sa / m;
  vb = sbb - sb * sb / m;
  /* Flat: no variance above the prefix sums' rounding, which is relative
   * to the whole row's energy (the CPU, summing each overlap afresh, finds
   * exactly 0 for a constant stretch such as air). */
  out[(size_t) p * n_shifts + i] =
    va <= 1e-20 || vb <= 1e-20 || va <= 1e-10 * pa2[width] || vb <= 1e-10 * pb2[width] ? -2.0f
                               : (float) ((sab[(size_t) p * n_shifts + i] - sa * sb / m) / sqrt (va * vb));
}

static guint
fft_size (guint width)
{
  guint p = 64;

  while (p < 2 * width)
    p *= 2;
  return p;
}

void
tomo_gpu_xcorr_free (TomoGpuXcorr *xc)
{
  if (xc == NULL)
    return;
  TOMO_CUDA_WARN (cudaSetDevice (xc->device));
  if (xc->plan_size > 0)
    {
      cufftDestroy (xc->plan_r2c);
      cufftDestroy (xc->plan_c2r);
    }
  TOMO_CUDA_FREE (xc->d_rows, xc->d_prefix, xc->d_sab, xc->d_out, xc->d_pad, xc->d_spec);
  TOMO_CUDA_STREAM_DESTROY (xc->stream);
  TOMO_CUDA_EVENT_DESTROY (xc->start, xc->stop);
  g_free (xc);
}

TomoGpuXcorr *
tomo_gpu_xcorr_new (int      device,
                    guint    max_width,
                    guint    max_pairs,
                    GError **error)
{
  TomoGpuXcorr *xc;
  gsize rows;

  if (max_width < 2 || max_width > (1u << 20) || max_pairs < 1 || max_pairs > 4096)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Cross-correlation of %u rows of %u columns is out of range", max_pairs, max_width);
      return NULL;
    }
  if (tomo_gpu_get_n_devices () <= device || device < 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE, "No CUDA device %d", device);
      return NULL;
    }
  xc = g_new0 (TomoGpuXcorr, 1);
  xc->device = device;
  xc->max_width = max_width;
  xc->max_pairs = max_pairs;
  xc->max_fft = fft_size (max_width);
  rows = 2 * (gsize) max_pairs;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (device), error)
      || !TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&xc->stream, cudaStreamNonBlocking), error)
      || !TOMO_CUDA_CHECK (cudaEventCreate (&xc->start), error)
      || !TOMO_CUDA_CHECK (cudaEventCreate (&xc->stop), error)
      || !TOMO_CUDA_CHECK (cudaMalloc (&xc->d_rows, rows * max_width * sizeof (float)), error)
      || !TOMO_CUDA_CHECK (cudaMalloc (&xc->d_prefix, rows * 2 * (max_width + 1) * sizeof (double)), error)
      || !TOMO_CUDA_CHECK (cudaMalloc (&xc->d_sab, (gsize) max_pairs * 2 * max_width * sizeof (double)), error)
      || !TOMO_CUDA_CHECK (cudaMalloc (&xc->d_out, (gsize) max_pairs * 2 * max_width * sizeof (float)), error)
      || !TOMO_CUDA_CHECK (cudaMalloc (&xc->d_pad, rows * xc->max_fft * sizeof (float)), error)
      || !TOMO_CUDA_CHECK (cudaMalloc (&xc->d_spec, rows * (xc->max_fft / 2 + 1) * sizeof (cufftComplex)), error))
    {
      tomo_gpu_xcorr_free (xc);
      return NULL;
    }
  return xc;
}

static gboolean
ensure_plans (TomoGpuXcorr *xc,
              guint         size,
              guint         n_pairs,
              GError      **error)
{
  int n = size;

  if (xc->plan_size == size && xc->plan_batch == n_pairs)
    return TRUE;
  if (xc->plan_size > 0)
    {
      cufftDestroy (xc->plan_r2c);
      cufftDestroy (xc->plan_c2r);
      xc->plan_size = 0;
    }
  /* R2C over a and b rows (2·n_pairs), C2R over the n_pairs products; the
   * products overwrite A's spectra, the result the padded a rows. */
  if (!TOMO_CUFFT_CHECK (cufftPlanMany (&xc->plan_r2c, 1, &n, NULL, 1, size, NULL, 1, size / 2 + 1,
                                        CUFFT_R2C, 2 * n_pairs), error))
    return FALSE;
  if (!TOMO_CUFFT_CHECK (cufftPlanMany (&xc->plan_c2r, 1, &n, NULL, 1, size / 2 + 1, NULL, 1, size,
                                        CUFFT_C2R, n_pairs), error))
    {
      cufftDestroy (xc->plan_r2c);
      return FALSE;
    }
  cufftSetStream (xc->plan_r2c, xc->stream);
  cufftSetStream (xc->plan_c2r, xc->stream);
  xc->plan_size = size;
  xc->plan_batch = n_pairs;
  return TRUE;
}

gboolean
tomo_gpu_xcorr_run (TomoGpuXcorr      *xc,
                    TomoGpuXcorrMethod method,
                    const float       *a,
                    const float       *b,
                    guint              n_pairs,
                    guint              width,
                    int                d_lo,
                    guint              n_shifts,
                    guint              min_overlap,
                    float             *out,
                    GError           **error)
{
  gsize row_bytes = (gsize) width * sizeof (float);
  float ms = 0;

  g_return_val_if_fail (xc != NULL && a != NULL && b != NULL && out != NULL, FALSE);
  if (n_pairs < 1 || n_pairs > xc->max_pairs || width < 2 || width > xc->max_width
      || n_shifts < 1 || n_shifts > 2 * width || d_lo < -(int) width || d_lo + (int) n_shifts > (int) width)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Cross-correlation of %u pairs of %u columns over shifts %d…%d: out of range "
                   "(at most %u pairs of %u columns, shifts within ±width)",
                   n_pairs, width, d_lo, d_lo + (int) n_shifts - 1, xc->max_pairs, xc->max_width);
      return FALSE;
    }
  if (!TOMO_CUDA_CHECK (cudaSetDevice (xc->device), error)
      || !TOMO_CUDA_CHECK (cudaMemcpyAsync (xc->d_rows, a, n_pairs * row_bytes,
                                            cudaMemcpyHostToDevice, xc->stream), error)
      || !TOMO_CUDA_CHECK (cudaMemcpyAsync (xc->d_rows + (gsize) n_pairs * width, b, n_pairs * row_bytes,
                                            cudaMemcpyHostToDevice, xc->stream), error))
    return FALSE;
  if (!TOMO_CUDA_LAUNCH (prepare_kernel, 2 * n_pairs, 32, xc->stream, error, xc->d_rows, xc->d_prefix, width)
      || !TOMO_CUDA_CHECK (cudaEventRecord (xc->start, xc->stream), error))
    return FALSE;

  if (method == TOMO_GPU_XCORR_DIRECT)
    {
      dim3 grid ((n_shifts + 31) / 32, n_pairs);

      if (!TOMO_CUDA_LAUNCH (direct_kernel, grid, 32 * XC_WARPS, xc->stream, error,
                             xc->d_rows, xc->d_rows + (gsize) n_pairs * width, xc->d_sab, width, d_lo, n_shifts))
        return FALSE;
    }
  else
    {
      guint size = fft_size (width), n_freq = size / 2 + 1;

      if (!ensure_plans (xc, size, n_pairs, error)
          || !TOMO_CUDA_LAUNCH (pad_kernel, dim3 ((size + 255) / 256, 2 * n_pairs), 256, xc->stream, error,
                                xc->d_rows, xc->d_pad, width, size)
          || !TOMO_CUFFT_CHECK (cufftExecR2C (xc->plan_r2c, xc->d_pad, xc->d_spec), error)
          || !TOMO_CUDA_LAUNCH (cross_kernel, dim3 ((n_freq + 255) / 256, n_pairs), 256, xc->stream, error,
                                xc->d_spec, n_pairs, n_freq, 1.0f / size)
          || !TOMO_CUFFT_CHECK (cufftExecC2R (xc->plan_c2r, xc->d_spec, xc->d_pad), error)
          || !TOMO_CUDA_LAUNCH (gather_kernel, dim3 ((n_shifts + 255) / 256, n_pairs), 256, xc->stream, error,
                                xc->d_pad, xc->d_sab, size, d_lo, n_shifts))
        return FALSE;
    }
  if (!TOMO_CUDA_CHECK (cudaEventRecord (xc->stop, xc->stream), error)
      || !TOMO_CUDA_LAUNCH (finish_kernel, dim3 ((n_shifts + 127) / 128, n_pairs), 128, xc->stream, error,
                            xc->d_prefix, xc->d_sab, xc->d_out, n_pairs, width, d_lo, n_shifts, min_overlap)
      || !TOMO_CUDA_CHECK (cudaMemcpyAsync (out, xc->d_out, (gsize) n_pairs * n_shifts * sizeof (float),
                                            cudaMemcpyDeviceToHost, xc->stream), error)
      || !TOMO_CUDA_CHECK (cudaStreamSynchronize (xc->stream), error)
      || !TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, xc->start, xc->stop), error))
    return FALSE;
  xc->last_ms = ms;
  return TRUE;
}

double
tomo_gpu_xcorr_get_last_ms (TomoGpuXcorr *xc)
{
  g_return_val_if_fail (xc != NULL, 0.0);
  return xc->last_ms;
}
