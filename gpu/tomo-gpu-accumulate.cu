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
#include <string.h>

#include <cufft.h>

#include "tomo-gpu-private.h"
#include "tomo-gpu-filter.cuh"

#define ACC_BLOCK 16
#define ACC_MAX_BATCH 256   /* projections per launch (shared memory) */
#define ACC_N_PLANS 8       /* C2C plans of 1, 2, 4 … 128 row pairs */

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

  /* The device path (tomo_gpu_accumulator_set_filter): raw rows in,
   * preprocessed and filtered here, kept by slot for their removal. */
  guint         padded, n_left, n_slots;
  int           edge;
  float        *d_response;    /* padded/2 + 1 */
  cufftComplex *d_complex;     /* ACC_MAX_BATCH/2 padded row pairs */
  cufftHandle   plans[ACC_N_PLANS];
  gboolean      have_plan[ACC_N_PLANS];
  float        *d_slots;       /* n_slots × width filtered rows */
  float        *d_raw;         /* ACC_MAX_BATCH × width, then flat and dark */
  int          *h_idx, *d_idx; /* slots of a batch */
  TomoGpuStatsWork *stats;
  TomoGpuBufferPool *display;  /* the display copies, used again */
};

__global__ static void
accumulate_kernel (float        *image,
                   const float  *rows,
                   const float2 *trig,
                   const int    *idx,
                   int           n_proj,
                   int           width,
                   float         center,
                   float         weight,
                   int           linear)
{
  __shared__ float2 s_trig[ACC_MAX_BATCH];
  __shared__ int s_idx[ACC_MAX_BATCH];
  int x = blockIdx.x * ACC_BLOCK + threadIdx.x;
  int y = blockIdx.y * ACC_BLOCK + threadIdx.y;
  int tid = threadIdx.y * ACC_BLOCK + threadIdx.x;
  float c = (width - 1) * 0.5f;
  float sum = 0.0f;

  for (int p = tid; p < n_proj; p += ACC_BLOCK * ACC_BLOCK)
    {
      s_trig[p] = trig[p];
      s_idx[p] = idx != NULL ? idx[p] : p;
    }
  __syncthreads ();
  if (x >= width || y >= width)
    return;

  for (int p = 0; p < n_proj; p++)
    {
      const float *row = rows + (size_t) s_idx[p] * width;
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

/* The end of a timed step: waits for it, last_ms from the events. */
static gboolean
finish_timed (TomoGpuAccumulator *acc,
              GError            **error)
{
  float ms = 0;

  if (!TOMO_CUDA_CHECK (cudaEventRecord (acc->stop, acc->stream), error) ||
      !TOMO_CUDA_CHECK (cudaEventSynchronize (acc->stop), error) ||
      !TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, acc->start, acc->stop), error))
    return FALSE;
  acc->last_ms = ms;
  return TRUE;
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
  acc->display = _tomo_gpu_buffer_pool_new ();
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
tomo_gpu_accumulator_add (TomoGpuAccumulator    *acc,
                          const float           *filtered,
                          const TomoGpuLiveStep *step,
                          float                  weight,
                          GError               **error)
{
  const double *angles = step->angles;
  double center = step->center;
  guint w = acc->width, n_proj = step->n;
  gsize need = (gsize) MIN (n_proj, ACC_MAX_BATCH) * w;
  dim3 block (ACC_BLOCK, ACC_BLOCK), grid ((w + ACC_BLOCK - 1) / ACC_BLOCK, (w + ACC_BLOCK - 1) / ACC_BLOCK);
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
      TOMO_CUDA_FREE (acc->d_rows);
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
      if (!TOMO_CUDA_LAUNCH (accumulate_kernel, grid, block, acc->stream, error, acc->d_image, acc->d_rows,
                             acc->d_trig, NULL, (int) k, (int) w, (float) center, weight, step->linear ? 1 : 0))
        return FALSE;
    }
  return finish_timed (acc, error);
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

static void free_device_path (TomoGpuAccumulator *acc);
static cufftHandle *live_plan (TomoGpuAccumulator *acc, guint pairs, GError **error);

void
tomo_gpu_accumulator_free (TomoGpuAccumulator *acc)
{
  if (acc == NULL)
    return;
  cudaSetDevice (acc->device);
  if (acc->stream != NULL)
    TOMO_CUDA_WARN (cudaStreamSynchronize (acc->stream));
  TOMO_CUDA_FREE (acc->d_image, acc->d_rows, acc->d_trig);
  TOMO_CUDA_FREE_HOST (acc->h_trig);
  free_device_path (acc);
  _tomo_gpu_buffer_pool_close (acc->display);
  TOMO_CUDA_EVENT_DESTROY (acc->start, acc->stop);
  TOMO_CUDA_STREAM_DESTROY (acc->stream);
  g_free (acc);
}

/* The device path ------------------------------------------------------------
 *
 * A step uploads only the new projections' raw rows of the displayed detector
 * row (k × width floats, a few kB each) with the flat and dark rows,
 * preprocesses them while padding (the arithmetic of tomo_preprocess_row()),
 * filters them with cuFFT (C2C, two rows per complex row, as tomo-gpu.cu),
 * writes the filtered rows into their slots and adds them to the slice; a
 * slot's earlier row is subtracted first from the same store.  Statistics
 * and the display copy are made from the sum on the device: nothing comes
 * back to the host but the statistics. */

/* Padding while preprocessing, and the filtered rows into their slots
 * (tomo-gpu-filter.cuh). */
static constexpr auto live_pad_kernel = pad_rows_kernel<cufftComplex, true>;
static constexpr auto live_extract_kernel = extract_rows_kernel<cufftComplex>;

static void
free_device_path (TomoGpuAccumulator *acc)
{
  for (guint i = 0; i < ACC_N_PLANS; i++)
    if (acc->have_plan[i])
      cufftDestroy (acc->plans[i]);
  memset (acc->have_plan, 0, sizeof acc->have_plan);
  TOMO_CUDA_FREE (acc->d_response, acc->d_complex, acc->d_slots, acc->d_raw, acc->d_idx);
  TOMO_CUDA_FREE_HOST (acc->h_idx);
  g_clear_pointer (&acc->stats, _tomo_gpu_stats_work_free);
  acc->padded = 0;
  acc->n_slots = 0;
}

gboolean
tomo_gpu_accumulator_set_filter (TomoGpuAccumulator *acc,
                                 guint               padded_width,
                                 const double       *response,
                                 int                 pad_mode,
                                 guint               n_slots,
                                 GError            **error)
{
  guint w = acc->width, n_coef = padded_width / 2 + 1;
  g_autofree float *resp = NULL;

  if (padded_width < 2 * w || padded_width % 2 != 0 || padded_width > (1u << 26) ||
      (pad_mode != 0 && pad_mode != 1) || response == NULL || n_slots == 0 ||
      (gsize) n_slots * w > ((gsize) 1 << 32))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Live filter: padded width %u for width %u, padding mode %d, %u slots",
                   padded_width, w, pad_mode, n_slots);
      return FALSE;
    }
  resp = _tomo_gpu_response_to_float (response, n_coef, error);
  if (resp == NULL)
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (acc->device), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (acc->stream), error))
    return FALSE;
  free_device_path (acc);
  acc->stats = _tomo_gpu_stats_work_new (acc->device, error);
  if (acc->stats == NULL ||
      !TOMO_CUDA_CHECK (cudaMalloc (&acc->d_response, sizeof (float) * n_coef), error) ||
      !TOMO_CUDA_CHECK (cudaMalloc (&acc->d_complex, sizeof (cufftComplex) * padded_width * (ACC_MAX_BATCH / 2)),
                        error) ||
      !TOMO_CUDA_CHECK (cudaMalloc (&acc->d_slots, sizeof (float) * n_slots * w), error) ||
      !TOMO_CUDA_CHECK (cudaMalloc (&acc->d_raw, sizeof (float) * (ACC_MAX_BATCH + 2) * w), error) ||
      !TOMO_CUDA_CHECK (cudaMalloc (&acc->d_idx, sizeof (int) * ACC_MAX_BATCH), error) ||
      !TOMO_CUDA_CHECK (cudaMallocHost (&acc->h_idx, sizeof (int) * ACC_MAX_BATCH), error) ||
      !TOMO_CUDA_CHECK (cudaMemsetAsync (acc->d_complex, 0,
                                         sizeof (cufftComplex) * padded_width * (ACC_MAX_BATCH / 2),
                                         acc->stream), error) ||
      !TOMO_CUDA_CHECK (cudaMemsetAsync (acc->d_slots, 0, sizeof (float) * n_slots * w, acc->stream), error) ||
      !TOMO_CUDA_CHECK (cudaMemcpyAsync (acc->d_response, resp, sizeof (float) * n_coef, cudaMemcpyHostToDevice,
                                         acc->stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (acc->stream), error))
    {
      free_device_path (acc);
      return FALSE;
    }
  acc->padded = padded_width;
  acc->n_left = (padded_width - w) / 2;   /* as the CPU filter splits the tail */
  acc->edge = pad_mode;
  acc->n_slots = n_slots;
  /* Every batch size's plan now: a plan made at a step (its work area a
   * cudaMalloc) costs milliseconds and waits for the device. */
  for (guint pairs = 1; pairs <= ACC_MAX_BATCH / 2; pairs *= 2)
    if (live_plan (acc, pairs, error) == NULL)
      {
        free_device_path (acc);
        return FALSE;
      }
  return TRUE;
}

static gboolean
check_device_path (TomoGpuAccumulator    *acc,
                   const TomoGpuLiveStep *step,
                   GError               **error)
{
  if (acc->padded == 0)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                           "Live slice: no filter set for raw rows");
      return FALSE;
    }
  if (!isfinite (step->center))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "Live slice: centre %g", step->center);
      return FALSE;
    }
  for (guint i = 0; i < step->n; i++)
    if (step->slots[i] >= acc->n_slots)
      {
        g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                     "Live slice: slot %u of %u", step->slots[i], acc->n_slots);
        return FALSE;
      }
  return TRUE;
}

/* Room for slot `max_slot` (the store grows as a scan's slots do). */
static gboolean
live_grow_slots (TomoGpuAccumulator *acc,
                 guint               max_slot,
                 GError            **error)
{
  guint w = acc->width, n = acc->n_slots;
  float *d_new = NULL;

  if (max_slot < n)
    return TRUE;
  while (n <= max_slot)
    n = n < (1u << 20) ? 2 * n : max_slot + 1;
  if ((gsize) n * w > ((gsize) 1 << 32))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "Live slice: slot %u", max_slot);
      return FALSE;
    }
  if (!TOMO_CUDA_CHECK (cudaMalloc (&d_new, sizeof (float) * n * w), error))
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaMemsetAsync (d_new, 0, sizeof (float) * n * w, acc->stream), error) ||
      !TOMO_CUDA_CHECK (cudaMemcpyAsync (d_new, acc->d_slots, sizeof (float) * acc->n_slots * w,
                                         cudaMemcpyDeviceToDevice, acc->stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (acc->stream), error))
    {
      TOMO_CUDA_WARN (cudaFree (d_new));
      return FALSE;
    }
  TOMO_CUDA_WARN (cudaFree (acc->d_slots));
  acc->d_slots = d_new;
  acc->n_slots = n;
  return TRUE;
}

/* The plan for `pairs` row pairs: the next power of two. */
static cufftHandle *
live_plan (TomoGpuAccumulator *acc,
           guint               pairs,
           GError            **error)
{
  guint i = 0;
  int n = (int) acc->padded;

  while ((1u << i) < pairs)
    i++;
  if (!acc->have_plan[i])
    {
      if (!TOMO_CUFFT_CHECK (cufftPlanMany (&acc->plans[i], 1, &n, NULL, 1, n, NULL, 1, n, CUFFT_C2C,
                                            (int) (1u << i)), error) ||
          !TOMO_CUFFT_CHECK (cufftSetStream (acc->plans[i], acc->stream), error))
        return NULL;
      acc->have_plan[i] = TRUE;
    }
  return &acc->plans[i];
}

/* One batch (k ≤ ACC_MAX_BATCH) of stored slots into the sum with `weight`. */
static gboolean
live_sum_slots (TomoGpuAccumulator    *acc,
                guint                  k,
                const TomoGpuLiveStep *step,
                float                  weight,
                GError               **error)
{
  guint w = acc->width;
  dim3 block (ACC_BLOCK, ACC_BLOCK), grid ((w + ACC_BLOCK - 1) / ACC_BLOCK, (w + ACC_BLOCK - 1) / ACC_BLOCK);

  return TOMO_CUDA_LAUNCH (accumulate_kernel, grid, block, acc->stream, error, acc->d_image, acc->d_slots,
                           acc->d_trig, acc->d_idx, (int) k, (int) w, (float) step->center, weight,
                           step->linear ? 1 : 0);
}

/* The batch's slots and angles to the device (after the previous batch). */
static gboolean
live_upload_batch (TomoGpuAccumulator *acc,
                   const guint        *slots,
                   const double       *angles,
                   guint               k,
                   GError            **error)
{
  if (!TOMO_CUDA_CHECK (cudaStreamSynchronize (acc->stream), error))
    return FALSE;
  for (guint p = 0; p < k; p++)
    {
      acc->h_trig[p] = make_float2 ((float) cos (angles[p]), (float) sin (angles[p]));
      acc->h_idx[p] = (int) slots[p];
    }
  return TOMO_CUDA_CHECK (cudaMemcpyAsync (acc->d_trig, acc->h_trig, sizeof (float2) * k, cudaMemcpyHostToDevice,
                                           acc->stream), error) &&
         TOMO_CUDA_CHECK (cudaMemcpyAsync (acc->d_idx, acc->h_idx, sizeof (int) * k, cudaMemcpyHostToDevice,
                                           acc->stream), error);
}

gboolean
tomo_gpu_accumulator_remove_slots (TomoGpuAccumulator    *acc,
                                   const TomoGpuLiveStep *step,
                                   GError               **error)
{
  if (!check_device_path (acc, step, error) ||
      !TOMO_CUDA_CHECK (cudaSetDevice (acc->device), error))
    return FALSE;
  for (guint p0 = 0; p0 < step->n; p0 += ACC_MAX_BATCH)
    {
      guint k = MIN (step->n - p0, (guint) ACC_MAX_BATCH);

      if (!live_upload_batch (acc, step->slots + p0, step->angles + p0, k, error) ||
          !live_sum_slots (acc, k, step, -1.0f, error))
        return FALSE;
    }
  return TRUE;
}

gboolean
tomo_gpu_accumulator_put_raw (TomoGpuAccumulator    *acc,
                              const float           *raw,
                              const float           *flat,
                              const float           *dark,
                              gboolean               apply_log,
                              const TomoGpuLiveStep *step,
                              GError               **error)
{
  const guint *slots = step->slots;
  const double *angles = step->angles;
  guint w = acc->width, P = acc->padded, n = step->n;
  gboolean normalise = flat != NULL && dark != NULL;
  const unsigned block = 256;
  guint max_slot = 0;

  for (guint i = 0; i < n; i++)
    max_slot = MAX (max_slot, slots[i]);
  if (acc->padded != 0 && n > 0 &&
      (!TOMO_CUDA_CHECK (cudaSetDevice (acc->device), error) || !live_grow_slots (acc, max_slot, error)))
    return FALSE;
  if (!check_device_path (acc, step, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (!isfinite (angles[i]))
      {
        g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "Live slice: angle %u is not finite", i);
        return FALSE;
      }
  if (!TOMO_CUDA_CHECK (cudaSetDevice (acc->device), error) ||
      !TOMO_CUDA_CHECK (cudaEventRecord (acc->start, acc->stream), error))
    return FALSE;
  for (guint p0 = 0; p0 < n; p0 += ACC_MAX_BATCH)
    {
      guint k = MIN (n - p0, (guint) ACC_MAX_BATCH), pairs = (k + 1) / 2;
      cufftHandle *plan;

      if (!live_upload_batch (acc, slots + p0, angles + p0, k, error))
        return FALSE;
      plan = live_plan (acc, pairs, error);
      if (plan == NULL ||
          !TOMO_CUDA_CHECK (cudaMemcpyAsync (acc->d_raw, raw + (gsize) p0 * w, sizeof (float) * k * w,
                                             cudaMemcpyHostToDevice, acc->stream), error))
        return FALSE;
      if (normalise &&
          (!TOMO_CUDA_CHECK (cudaMemcpyAsync (acc->d_raw + (gsize) ACC_MAX_BATCH * w, flat, sizeof (float) * w,
                                              cudaMemcpyHostToDevice, acc->stream), error) ||
           !TOMO_CUDA_CHECK (cudaMemcpyAsync (acc->d_raw + (gsize) (ACC_MAX_BATCH + 1) * w, dark,
                                              sizeof (float) * w, cudaMemcpyHostToDevice, acc->stream), error)))
        return FALSE;
      if (!TOMO_CUDA_LAUNCH (live_pad_kernel, dim3 ((P + block - 1) / block, pairs), block, acc->stream, error,
                             acc->d_raw, acc->d_raw + (gsize) ACC_MAX_BATCH * w,
                             acc->d_raw + (gsize) (ACC_MAX_BATCH + 1) * w, normalise ? 1 : 0, apply_log ? 1 : 0,
                             acc->d_complex, w, P, k, acc->n_left, acc->edge) ||
          !TOMO_CUFFT_CHECK (cufftExecC2C (*plan, acc->d_complex, acc->d_complex, CUFFT_FORWARD), error) ||
          !_tomo_gpu_filter_multiply (acc->d_complex, acc->d_response, P, pairs, P, acc->stream, error) ||
          !TOMO_CUFFT_CHECK (cufftExecC2C (*plan, acc->d_complex, acc->d_complex, CUFFT_INVERSE), error) ||
          !TOMO_CUDA_LAUNCH (live_extract_kernel, dim3 ((w + block - 1) / block, pairs), block, acc->stream,
                             error, acc->d_complex, acc->d_slots, acc->d_idx, w, P, k) ||
          !live_sum_slots (acc, k, step, 1.0f, error))
        return FALSE;
    }
  return finish_timed (acc, error);
}

gboolean
tomo_gpu_accumulator_stats (TomoGpuAccumulator *acc,
                            TomoGpuStats       *stats,
                            GError            **error)
{
  if (acc->stats == NULL)
    {
      acc->stats = _tomo_gpu_stats_work_new (acc->device, error);
      if (acc->stats == NULL)
        return FALSE;
    }
  return _tomo_gpu_stats_run (acc->stats, acc->d_image, (size_t) acc->width * acc->width, acc->stream, stats,
                              error);
}

TomoGpuBuffer *
tomo_gpu_accumulator_copy_image (TomoGpuAccumulator *acc,
                                 GError            **error)
{
  return _tomo_gpu_buffer_pool_copy (acc->display, acc->device, acc->d_image, (size_t) acc->width * acc->width,
                                     acc->stream, error);
}
