/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The volume-resident store and the plane back projectors.
 *
 * Store: the filtered sinograms of rows [row_start, row_start + n_rows), each
 * n_proj × width, one after another, in float or half.  Half values are kept
 * multiplied by n_proj (the FBP scale π/(2N) would otherwise push most of them
 * into half's subnormal range) and the sum is divided back.
 *
 * A plane sample (i, j) sits at s00 + i·u + j·v in slice coordinates
 * (x, y centred as in the XY slice, z the stored row), and its value is
 * Σ_p lerp_z(row r0, row r0+1)(t_p), t_p = x·cos θ_p − y·sin θ_p + centre.
 *
 * global kernel (the baseline): one thread per sample, 16×16 blocks, every
 *   projection's two bins loaded from global memory (read-only path, L1).
 * cached kernel (in the spirit of the paper's ALU kernel): planes whose
 *   rows are horizontal (u_z = 0: XY, XZ, YZ and the oblique planes made by
 *   tomo_plane_init_oblique) and whose step is at most one pixel.  A block
 *   of 128 threads takes 128 consecutive samples of one plane row, so all of
 *   them read the same one or two stored rows; per chunk of 32 projections the
 *   block computes, from its first and last sample, the window of at most
 *   128 + 4 bins each projection needs (offset lo_p), loads the windows
 *   coalesced into shared memory — already blended between the two rows and
 *   converted from half, with zeros outside the detector — and each thread
 *   then interpolates on the FP units from shared memory without any bounds
 *   test.  One synchronisation pair per chunk.
 * rows kernel (for vertical planes, where no bin serves two plane rows):
 *   planes with horizontal rows (u_z = 0), any step.  A block of 256 threads
 *   takes up to 2048 samples of one plane row (8 per thread); per group of
 *   projections (as many as 64 KiB of bins hold) it loads, for each, the
 *   whole run of bins its samples need — one contiguous, coalesced read of
 *   about 2048·|u·(cos θ, −sin θ)| bins, each bin once — into shared memory,
 *   blended between the two detector rows, and each thread then interpolates
 *   its 8 samples with a clamp instead of bounds tests.
 * tile and texture kernels: tomo-gpu-store-tile.cu; tilt kernel:
 *   tomo-gpu-store-tilt.cu; the preview volume: tomo-gpu-store-preview.cu.
 *   auto takes tile for vertical planes on whole rows (4.8 ms for XZ 2048²
 *   from the half store on the H100, rows 8.8 ms), tilt for the other planes
 *   it fits on 16-byte rows (oblique 30°/15° 12.1 ms, rows 15.6 ms; XY 9.4 ms,
 *   rows 15.3 ms), rows for the other planes with horizontal rows and a step
 *   ≤ 1 pixel, global for the rest.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <math.h>
#include <string.h>

#include <cuda_fp16.h>

#include "tomo-gpu-private.h"
#include "tomo-gpu-store.h"
#include "tomo-gpu-store-private.h"

#define STORE_GROUP 4            /* rows filtered per cuFFT batch while filling */
#define STORE_RESERVE (512ull << 20) /* device bytes left for planes, previews and textures */
#define CACHED_BLOCK 128
#define CACHED_CHUNK 32
#define CACHED_WIDTH (CACHED_BLOCK + 4)
#define COORD_LIMIT 1e6

template <typename T, int LINEAR>
__device__ static inline float
sample_global (const T *row,
               int      W,
               float    t)
{
  t = fminf (fmaxf (t, -4.0f), W + 4.0f);
  if (LINEAR)
    {
      float f = floorf (t), fr = t - f;
      int k = (int) f;
      float a = k >= 0 && k < W ? load_value (row + k) : 0.0f;
      float b = k + 1 >= 0 && k + 1 < W ? load_value (row + k + 1) : 0.0f;

      return fmaf (fr, b - a, a);
    }
  else
    {
      int k = (int) floorf (t + 0.5f);

      return k >= 0 && k < W ? load_value (row + k) : 0.0f;
    }
}

template <typename T, int LINEAR>
__global__ static void
plane_global_kernel (const T      *rows,
                     const float2 *trig,
                     PlaneArgs     a,
                     float        *out)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  float x, y, fz, acc = 0.0f;
  int r0;

  if (i >= a.w || j >= a.h)
    return;
  if (plane_sample (a, i, j, &x, &y, &r0, &fz))
    {
      const T *A = rows + (size_t) r0 * a.row_elems;
      const T *B = A + a.row_elems;

      for (int p = 0; p < a.P; p++)
        {
          float2 cs = __ldg (trig + p);
          float t = fmaf (x, cs.x, fmaf (-y, cs.y, a.center));
          float v = sample_global<T, LINEAR> (A + (size_t) p * a.W, a.W, t);

          if (fz > 0.0f)
            v = fmaf (fz, sample_global<T, LINEAR> (B + (size_t) p * a.W, a.W, t) - v, v);
          acc += v;
        }
    }
  out[(size_t) j * a.w + i] = acc * a.inv_scale;
}

template <typename T, int LINEAR>
__global__ static void __launch_bounds__ (CACHED_BLOCK)
plane_cached_kernel (const T      *rows,
                     const float2 *trig,
                     PlaneArgs     a,
                     float        *out)
{
  __shared__ float cache[CACHED_CHUNK][CACHED_WIDTH];
  __shared__ float2 cs_s[CACHED_CHUNK];
  __shared__ int lo_s[CACHED_CHUNK];
  const int tid = threadIdx.x;
  const int j = blockIdx.y;
  const int i = blockIdx.x * CACHED_BLOCK + tid;
  const int iA = blockIdx.x * CACHED_BLOCK;
  const int iB = min (iA + CACHED_BLOCK, a.w) - 1;
  /* u_z = 0: the whole plane row lies at one z. */
  const float z = a.z0 + j * a.vz;
  const float x = a.x0 + i * a.ux + j * a.vx, y = a.y0 + i * a.uy + j * a.vy;
  const float xA = a.x0 + iA * a.ux + j * a.vx, yA = a.y0 + iA * a.uy + j * a.vy;
  const float xB = a.x0 + iB * a.ux + j * a.vx, yB = a.y0 + iB * a.uy + j * a.vy;
  const bool inside = i < a.w && fabsf (x) <= a.lim && fabsf (y) <= a.lim;
  float fz, acc = 0.0f;
  int r0;

  if (!rows_for_z (z, a.n_rows, &r0, &fz))
    {
      if (i < a.w)
        out[(size_t) j * a.w + i] = 0.0f;
      return;   /* uniform over the block: no barrier is skipped by some */
    }

  const T *A = rows + (size_t) r0 * a.row_elems;
  const T *B = A + a.row_elems;

  for (int p0 = 0; p0 < a.P; p0 += CACHED_CHUNK)
    {
      const int n = min (CACHED_CHUNK, a.P - p0);

      if (tid < n)
        {
          float2 cs = __ldg (trig + p0 + tid);
          float tA = fmaf (xA, cs.x, fmaf (-yA, cs.y, a.center));
          float tB = fmaf (xB, cs.x, fmaf (-yB, cs.y, a.center));

          cs_s[tid] = cs;
          lo_s[tid] = (int) floorf (fminf (tA, tB)) - 1;
        }
      __syncthreads ();
      for (int k = tid; k < n * CACHED_WIDTH; k += CACHED_BLOCK)
        {
          int q = k / CACHED_WIDTH, c = k - q * CACHED_WIDTH;
          int col = lo_s[q] + c;
          float v = 0.0f;

          if (col >= 0 && col < a.W)
            {
              size_t off = (size_t) (p0 + q) * a.W + col;

              v = load_value (A + off);
              if (fz > 0.0f)
                v = fmaf (fz, load_value (B + off) - v, v);
            }
          cache[q][c] = v;
        }
      __syncthreads ();
      if (inside)
        for (int q = 0; q < n; q++)
          {
            float2 cs = cs_s[q];
            float t = fmaf (x, cs.x, fmaf (-y, cs.y, a.center));

            if (LINEAR)
              {
                float f = floorf (t), fr = t - f;
                int k = (int) f - lo_s[q];
                float v0 = cache[q][k];

                acc += fmaf (fr, cache[q][k + 1] - v0, v0);
              }
            else
              acc += cache[q][(int) floorf (t + 0.5f) - lo_s[q]];
          }
      __syncthreads ();
    }
  if (i < a.w)
    out[(size_t) j * a.w + i] = inside ? acc * a.inv_scale : 0.0f;
}

/* rows kernel: a block of ROWS_THREADS threads takes a segment of up to
 * ROWS_THREADS·PPT samples of one plane row (thread t: samples t, t + 256, …).
 * Per projection the segment's samples lie on t = t_A + (i − i_A)·d with
 * d = u_x cos θ − u_y sin θ; clamped to the detector ([−1, W]) they need
 * the bins from floor(t_min) − 1 to floor(t_max) + 2 — at most W + 5 (+1 to
 * start a half run on an even bin), whatever the step.  The block copies
 * them, for a group of projections at a time, into shared memory with
 * cp.async (ASYNC: 4-byte units, zero-filled off the detector, no
 * registers), the next group in flight while the current one is summed;
 * TWO: the rows fall between detector rows, both are copied and blended
 * when read.  Half stores of odd width (units not 4-byte aligned) take
 * plain loads instead. */
#define ROWS_THREADS 256
#define ROWS_MAX_GROUP 16
/* Bytes of bins per block, both buffers: 2 projections per group of a
 * float store of 2048 columns (H100, XZ 2048²: 10.7 ms; 24 KiB 11.6 ms,
 * 64 KiB without the copy/sum overlap 33.8 ms). */
#define ROWS_SMEM (48 << 10)
#define ROWS_MAX_BYTES (200u << 10) /* one projection, both buffers, both rows, float */

typedef struct
{
  float t0;          /* t of the segment's first sample − lo */
  float d;           /* t step per sample */
  float cmin, cmax;  /* the clamp: detector and window */
} RowsProj;

__device__ static inline float
bin_value (const float *b)
{
  return *b;
}

__device__ static inline float
bin_value (const __half *b)
{
  return __half2float (*b);
}

template <typename T, int LINEAR, int PPT, bool TWO, bool ASYNC>
__global__ static void __launch_bounds__ (ROWS_THREADS)
plane_rows_kernel (const T      *rows,
                   const float2 *trig,
                   PlaneArgs     a,
                   int           group,
                   int           win,
                   float        *out)
{
  extern __shared__ __align__ (16) unsigned char rows_smem[];
  T *bins = (T *) rows_smem;   /* [buffer][row A, B][group][win] */
  __shared__ RowsProj meta[3][ROWS_MAX_GROUP];
  __shared__ int lo_s[3][ROWS_MAX_GROUP], n_s[3][ROWS_MAX_GROUP];
  constexpr int UNIT = ASYNC ? 4 / (int) sizeof (T) : 1;   /* bins per copy */
  constexpr int NR = TWO ? 2 : 1;
  const int tid = threadIdx.x;
  const int j = blockIdx.y;
  const int iA = blockIdx.x * (ROWS_THREADS * PPT);
  const int nA = min (ROWS_THREADS * PPT, a.w - iA);
  const float z = a.z0 + j * a.vz;
  const float xA = a.x0 + iA * a.ux + j * a.vx, yA = a.y0 + iA * a.uy + j * a.vy;
  const float xB = xA + (nA - 1) * a.ux, yB = yA + (nA - 1) * a.uy;
  const float W = (float) a.W;
  float acc[PPT], fz;
  unsigned int inside = 0;
  int r0;

  if (!rows_for_z (z, a.n_rows, &r0, &fz))
    {
      for (int m = 0; m < PPT; m++)
        if (tid + ROWS_THREADS * m < nA)
          out[(size_t) j * a.w + iA + tid + ROWS_THREADS * m] = 0.0f;
      return;   /* uniform over the block */
    }
  if (!TWO)
    fz = 0.0f;   /* the caller saw that no row falls between two */
#pragma unroll
  for (int m = 0; m < PPT; m++)
    {
      const int di = tid + ROWS_THREADS * m;
      const float x = xA + di * a.ux, y = yA + di * a.uy;

      acc[m] = 0.0f;
      if (di < nA && fabsf (x) <= a.lim && fabsf (y) <= a.lim)
        inside |= 1u << m;
    }

  const T *A = rows + (size_t) r0 * a.row_elems;

  auto plan = [&] (int slot, int p0) {
    const int ng = min (group, a.P - p0);

    if (p0 < a.P && tid < ng)
      {
        const float2 cs = __ldg (trig + p0 + tid);
        const float tA = fmaf (xA, cs.x, fmaf (-yA, cs.y, a.center));
        const float tB = fmaf (xB, cs.x, fmaf (-yB, cs.y, a.center));
        float lo_f = floorf (fminf (fmaxf (fminf (tA, tB), -1.0f), W)) - 1.0f;
        const float hi_f = floorf (fminf (fmaxf (fmaxf (tA, tB), -1.0f), W)) + 2.0f;
        RowsProj m;

        if (UNIT == 2)
          lo_f = 2.0f * floorf (0.5f * lo_f);
        m.t0 = tA - lo_f;
        m.d = fmaf (a.ux, cs.x, -a.uy * cs.y);
        /* The detector ([−1, W]) and the window (bins 0 … n − 1, k + 1
         * included): threads past the segment's end (their samples are
         * not written) stay inside the window too. */
        m.cmin = fmaxf (-1.0f - lo_f, 0.0f);
        m.cmax = fminf (W - lo_f, hi_f - lo_f - 1.0f);
        meta[slot][tid] = m;
        lo_s[slot][tid] = (int) lo_f;
        n_s[slot][tid] = (int) (hi_f - lo_f) + 1;
      }
  };
  /* Copies of one group into buffer buf: unit e of projection g covers
   * bins lo + UNIT·e …; off the detector, zeros. */
  auto fetch = [&] (int buf, int slot, int p0) {
    const int ng = min (group, a.P - p0);

    for (int g = 0; g < ng; g++)
      {
        const int lo = lo_s[slot][g];
        const int nu = (n_s[slot][g] + UNIT - 1) / UNIT;
        const size_t off = (size_t) (p0 + g) * a.W;

        for (int r = 0; r < NR; r++)
          {
            const T *src = A + r * a.row_elems + off;
            T *dst = bins + ((size_t) (buf * NR + r) * group + g) * win;

            for (int e = tid; e < nu; e += ROWS_THREADS)
              {
                const int col = lo + UNIT * e;
                const bool on = col >= 0 && col < a.W;

                if (ASYNC)
                  copy_async<4> (dst + UNIT * e, src + (on ? col : 0), on ? 4 : 0);
                else
                  dst[e] = on ? src[col] : (T) 0.0f;
              }
          }
      }
    if (ASYNC)
      asm volatile ("cp.async.commit_group;\n" ::);
  };

  plan (0, 0);
  plan (1, group);
  __syncthreads ();
  fetch (0, 0, 0);
  for (int p0 = 0, buf = 0, slot = 0; p0 < a.P; p0 += group, buf ^= 1, slot = slot == 2 ? 0 : slot + 1)
    {
      const int ng = min (group, a.P - p0);
      const bool more = p0 + group < a.P;
      const int slot1 = slot == 2 ? 0 : slot + 1;
      const int slot2 = slot1 == 2 ? 0 : slot1 + 1;

      if (more)
        fetch (buf ^ 1, slot1, p0 + group);
      if (ASYNC)
        {
          if (more)
            asm volatile ("cp.async.wait_group 1;\n" ::);
          else
            asm volatile ("cp.async.wait_group 0;\n" ::);
        }
      __syncthreads ();
      for (int g = 0; g < ng; g++)
        {
          const RowsProj m = meta[slot][g];
          const T *sa = bins + ((size_t) (buf * NR) * group + g) * win;
          const T *sb = sa + (size_t) group * win;

#pragma unroll
          for (int q = 0; q < PPT; q++)
            {
              const float tl = fminf (fmaxf (fmaf ((float) (tid + ROWS_THREADS * q), m.d, m.t0), m.cmin),
                                      m.cmax);
              const float f = floorf (LINEAR ? tl : tl + 0.5f);
              const int k = (int) f;
              float v0 = bin_value (sa + k), v1 = LINEAR ? bin_value (sa + k + 1) : 0.0f;

              if (TWO && fz > 0.0f)
                {
                  v0 = fmaf (fz, bin_value (sb + k) - v0, v0);
                  if (LINEAR)
                    v1 = fmaf (fz, bin_value (sb + k + 1) - v1, v1);
                }
              acc[q] += LINEAR ? fmaf (tl - f, v1 - v0, v0) : v0;
            }
        }
      plan (slot2, p0 + 2 * group);
      __syncthreads ();
    }
#pragma unroll
  for (int m = 0; m < PPT; m++)
    if (tid + ROWS_THREADS * m < nA)
      out[(size_t) j * a.w + iA + tid + ROWS_THREADS * m] = inside & (1u << m) ? acc[m] * a.inv_scale : 0.0f;
}

__global__ static void
to_half_kernel (const float *src,
                __half      *dst,
                size_t       n,
                float        scale)
{
  for (size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x; k < n;
       k += (size_t) gridDim.x * blockDim.x)
    dst[k] = __float2half_rn (src[k] * scale);
}

/* ------------------------------------------------------------------------ */

/* Device bytes a fill takes beside the store, at most, with R the bytes of
 * one row's n_proj × width floats: the rows of a group (4) in flight twice
 * (8 R; the raw fill: 4 R preprocessed), the context's 4 filtered rows
 * (4 R), their padded spectra as C2C pairs (a padded width of at most
 * 2.5 W: 10 R) and cuFFT's work area (no larger: 10 R), and the raw fill's
 * two slabs of file rows (64 MiB each, or one row of float32 when a row is
 * larger).  A store that left less would be refused by its first fill. */
static guint64
fill_working_set (guint width,
                  guint n_proj)
{
  guint64 row = (guint64) n_proj * width * sizeof (float);

  return 32 * row + 2 * MAX (row, 64ull << 20);
}

TomoGpuStore *
tomo_gpu_store_new (int                    device,
                    guint                  width,
                    guint                  n_proj,
                    const double          *angles,
                    guint                  row_start,
                    guint                  n_rows,
                    TomoGpuStorePrecision  precision,
                    guint64                memory_limit,
                    GError               **error)
{
  g_autofree float2 *trig = NULL;
  TomoGpuStore *store;
  size_t free_b = 0, total_b = 0;
  guint64 elems, room, limit, reserve;

  g_return_val_if_fail (angles != NULL, NULL);

  if (width == 0 || n_proj == 0 || n_rows == 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Volume store of %u rows of %u projections × %u columns: nothing to hold",
                   n_rows, n_proj, width);
      return NULL;
    }
  if (tomo_gpu_get_n_devices () <= device || device < 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE,
                   "No CUDA device %d for the volume store", device);
      return NULL;
    }
  if (!TOMO_CUDA_CHECK (cudaSetDevice (device), error) ||
      !TOMO_CUDA_CHECK (cudaMemGetInfo (&free_b, &total_b), error))
    return NULL;

  elems = (guint64) n_rows * n_proj * width;
  room = _tomo_gpu_device_room (device, free_b, total_b);
  reserve = STORE_RESERVE + fill_working_set (width, n_proj);
  limit = room > reserve ? room - reserve : 0;
  if (memory_limit > 0)
    limit = MIN (limit, memory_limit);
  if (precision == TOMO_GPU_STORE_AUTO)
    precision = elems * 4 <= limit ? TOMO_GPU_STORE_FLOAT : TOMO_GPU_STORE_HALF;
  if (elems * (precision == TOMO_GPU_STORE_FLOAT ? 4 : 2) > limit)
    {
      g_autofree char *need = g_format_size_full (elems * (precision == TOMO_GPU_STORE_FLOAT ? 4 : 2),
                                                  G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *have = g_format_size_full (limit, G_FORMAT_SIZE_IEC_UNITS);

      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY,
                   "The filtered sinograms of rows %u…%u (%u projections × %u columns) need "
                   "%s in %s precision, more than the %s the device can give; "
                   "choose a smaller row range",
                   row_start, row_start + n_rows - 1, n_proj, width, need,
                   tomo_gpu_store_precision_to_string (precision), have);
      return NULL;
    }

  store = g_new0 (TomoGpuStore, 1);
  store->device = device;
  store->width = width;
  store->n_proj = n_proj;
  store->row_start = row_start;
  store->n_rows = n_rows;
  store->precision = precision;
  store->row_elems = (size_t) n_proj * width;
  store->bytes = elems * (precision == TOMO_GPU_STORE_FLOAT ? 4 : 2);
  store->value_scale = precision == TOMO_GPU_STORE_FLOAT ? 1.0f : (float) n_proj;
  store->last_kernel = TOMO_GPU_PLANE_AUTO;
  store->row_held = g_new0 (guint8, n_rows);

  trig = g_new (float2, n_proj);
  for (guint p = 0; p < n_proj; p++)
    trig[p] = make_float2 ((float) cos (angles[p]), (float) sin (angles[p]));

  if (!_tomo_gpu_alloc_device (&store->d_rows, store->bytes, "volume store", error) ||
      !_tomo_gpu_alloc_device ((void **) &store->d_trig, n_proj * sizeof (float2), "angles", error) ||
      !TOMO_CUDA_CHECK (cudaMemcpy (store->d_trig, trig, n_proj * sizeof (float2),
                                    cudaMemcpyHostToDevice), error) ||
      !TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&store->stream, cudaStreamNonBlocking), error) ||
      !TOMO_CUDA_CHECK (cudaEventCreate (&store->ev[0]), error) ||
      !TOMO_CUDA_CHECK (cudaEventCreate (&store->ev[1]), error))
    {
      tomo_gpu_store_free (store);
      return NULL;
    }
  store->ctx = tomo_gpu_context_new (device, error);
  if (store->ctx == NULL ||
      !tomo_gpu_context_set_geometry (store->ctx, width, n_proj, angles, error))
    {
      tomo_gpu_store_free (store);
      return NULL;
    }
  return store;
}

/* The texture objects of ensure_textures() and their device table. */
static void
free_textures (TomoGpuStore *store)
{
  for (guint r = 0; store->h_tex != NULL && r < store->n_rows; r++)
    TOMO_CUDA_TEXTURE_DESTROY (store->h_tex[r]);
  g_clear_pointer (&store->h_tex, g_free);
  TOMO_CUDA_FREE (store->d_tex);
}

void
tomo_gpu_store_free (TomoGpuStore *store)
{
  if (store == NULL)
    return;
  TOMO_CUDA_WARN (cudaSetDevice (store->device));
  if (store->stream != NULL)
    TOMO_CUDA_WARN (cudaStreamSynchronize (store->stream));
  g_clear_pointer (&store->ctx, tomo_gpu_context_free);
  TOMO_CUDA_FREE (store->d_rows, store->d_trig, store->d_out, store->d_tmp, store->d_binned);
  /* Copies still held are freed by their holders. */
  g_clear_pointer (&store->keep_pool, _tomo_gpu_buffer_pool_close);
  g_clear_pointer (&store->keep_stats, _tomo_gpu_stats_work_free);
  free_textures (store);
  TOMO_CUDA_EVENT_DESTROY (store->ev[0], store->ev[1]);
  TOMO_CUDA_STREAM_DESTROY (store->stream);
  g_free (store->row_held);
  g_free (store);
}

TomoGpuStorePrecision
tomo_gpu_store_get_precision (TomoGpuStore *store)
{
  return store->precision;
}

guint64
tomo_gpu_store_get_bytes (TomoGpuStore *store)
{
  return store->bytes;
}

guint
tomo_gpu_store_get_row_start (TomoGpuStore *store)
{
  return store->row_start;
}

guint
tomo_gpu_store_get_n_rows (TomoGpuStore *store)
{
  return store->n_rows;
}

guint
tomo_gpu_store_get_n_filled (TomoGpuStore *store)
{
  return store->n_filled;
}

double
tomo_gpu_store_get_fill_ms (TomoGpuStore *store)
{
  return store->fill_ms;
}

double
tomo_gpu_store_get_plane_ms (TomoGpuStore *store)
{
  return store->plane_ms;
}

TomoGpuPlaneKernel
tomo_gpu_store_get_last_kernel (TomoGpuStore *store)
{
  return store->last_kernel;
}

const float *
tomo_gpu_store_get_output (TomoGpuStore *store)
{
  return store->d_out;
}

gboolean
tomo_gpu_store_set_filter (TomoGpuStore *store,
                           guint         padded_width,
                           const double *response,
                           int           pad_mode,
                           GError      **error)
{
  g_return_val_if_fail (store != NULL, FALSE);

  if (!tomo_gpu_context_set_filter (store->ctx, padded_width, response, pad_mode, error))
    return FALSE;
  store->have_filter = TRUE;
  _tomo_gpu_store_set_held (store, FALSE);   /* the rows held were filtered with the old one */
  return TRUE;
}

void
_tomo_gpu_store_set_held (TomoGpuStore *store,
                          gboolean      held)
{
  memset (store->row_held, held ? 1 : 0, store->n_rows);
  store->n_filled = held ? store->n_rows : 0;
  store->generation++;
}

gboolean
_tomo_gpu_store_put_device (TomoGpuStore *store,
                            guint         row,
                            guint         n,
                            const float  *d_src,
                            GError      **error)
{
  size_t count = (size_t) n * store->row_elems;

  if (store->precision == TOMO_GPU_STORE_FLOAT)
    return TOMO_CUDA_CHECK (cudaMemcpyAsync ((float *) store->d_rows + row * store->row_elems,
                                             d_src, count * sizeof (float),
                                             cudaMemcpyDeviceToDevice, store->stream), error);
  to_half_kernel<<<1024, 256, 0, store->stream>>> (
    d_src, (__half *) store->d_rows + row * store->row_elems, count, store->value_scale);
  return TOMO_CUDA_CHECK_LAUNCH ("to_half_kernel", error);
}

gboolean
tomo_gpu_store_put_filtered (TomoGpuStore *store,
                             guint         row,
                             guint         n,
                             const float  *filtered,
                             GError      **error)
{
  size_t size;

  g_return_val_if_fail (store != NULL && filtered != NULL, FALSE);

  if (row < store->row_start || (guint64) row + n > (guint64) store->row_start + store->n_rows)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Rows %u…%u are outside the store's rows %u…%u", row, row + n - 1,
                   store->row_start, store->row_start + store->n_rows - 1);
      return FALSE;
    }
  size = (size_t) n * store->row_elems * sizeof (float);
  if (!TOMO_CUDA_CHECK (cudaSetDevice (store->device), error) ||
      !_tomo_gpu_ensure_buffer ((void **) &store->d_tmp, &store->tmp_size, size, "store staging", error) ||
      !TOMO_CUDA_CHECK (cudaMemcpyAsync (store->d_tmp, filtered, size, cudaMemcpyHostToDevice,
                                         store->stream), error) ||
      !_tomo_gpu_store_put_device (store, row - store->row_start, n, store->d_tmp, error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (store->stream), error))
    return FALSE;
  /* A row put again is still one row: the store is full only when every
   * row has been put. */
  for (guint r = row - store->row_start; r < row - store->row_start + n; r++)
    if (!store->row_held[r])
      {
        store->row_held[r] = 1;
        store->n_filled++;
      }
  store->generation++;
  return TRUE;
}

gboolean
tomo_gpu_store_fill (TomoGpuStore    *store,
                     TomoGpuReadFunc  read,
                     void           (*progress) (guint done, guint total, gpointer user_data),
                     gpointer         user_data,
                     volatile gint   *cancel,
                     GError         **error)
{
  size_t group_elems = (size_t) STORE_GROUP * store->row_elems;
  float *h_buf[2] = { NULL, NULL }, *d_buf[2] = { NULL, NULL };
  cudaStream_t up = NULL;
  cudaEvent_t ev_up[2] = { NULL, NULL }, ev_done[2] = { NULL, NULL };
  gint64 t0 = g_get_monotonic_time ();
  gboolean ok = FALSE;
  guint done = 0, g = 0;

  g_return_val_if_fail (store != NULL && read != NULL, FALSE);

  if (!store->have_filter)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Volume store: no filter set before filling");
      return FALSE;
    }
  _tomo_gpu_store_set_held (store, FALSE);
  if (!TOMO_CUDA_CHECK (cudaSetDevice (store->device), error) ||
      !TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&up, cudaStreamNonBlocking), error))
    goto out;
  for (int k = 0; k < 2; k++)
    if (!_tomo_gpu_alloc_pinned ((void **) &h_buf[k], group_elems * sizeof (float), "the volume store",
                                 error) ||
        !_tomo_gpu_alloc_device ((void **) &d_buf[k], group_elems * sizeof (float), "rows in flight", error) ||
        !TOMO_CUDA_CHECK (cudaEventCreateWithFlags (&ev_up[k], cudaEventDisableTiming), error) ||
        !TOMO_CUDA_CHECK (cudaEventCreateWithFlags (&ev_done[k], cudaEventDisableTiming), error))
      goto out;

  /* Group g: read into pinned buffer g % 2 (once the upload of g − 2 left
   * it), upload on `up` (once the filter of g − 2 left the device buffer),
   * filter and store on the store's stream. */
  for (guint row = 0; row < store->n_rows; g++)
    {
      guint left = store->n_rows - row;
      guint n = left >= 4 ? 4 : left >= 2 ? 2 : 1;
      int b = g % 2;

      if (cancel != NULL && g_atomic_int_get (cancel))
        {
          g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "cancelled");
          goto out;
        }
      if (g >= 2 && !TOMO_CUDA_CHECK (cudaEventSynchronize (ev_up[b]), error))
        goto out;
      for (guint k = 0; k < n; k++)
        if (!read (store->row_start + row + k, h_buf[b] + k * store->row_elems, user_data, error))
          goto out;
      if ((g >= 2 && !TOMO_CUDA_CHECK (cudaStreamWaitEvent (up, ev_done[b], 0), error)) ||
          !TOMO_CUDA_CHECK (cudaMemcpyAsync (d_buf[b], h_buf[b],
                                             n * store->row_elems * sizeof (float),
                                             cudaMemcpyHostToDevice, up), error) ||
          !TOMO_CUDA_CHECK (cudaEventRecord (ev_up[b], up), error) ||
          !TOMO_CUDA_CHECK (cudaStreamWaitEvent (store->stream, ev_up[b], 0), error) ||
          !_tomo_gpu_context_filter_rows (store->ctx, n, d_buf[b], store->stream, error) ||
          !TOMO_CUDA_CHECK (cudaEventRecord (ev_done[b], store->stream), error) ||
          !_tomo_gpu_store_put_device (store, row, n,
                                       _tomo_gpu_context_get_filtered_device (store->ctx), error))
        goto out;
      row += n;
      done = row;
      if (progress != NULL)
        progress (done, store->n_rows, user_data);
    }
  if (!TOMO_CUDA_CHECK (cudaStreamSynchronize (store->stream), error))
    goto out;
  _tomo_gpu_store_set_held (store, TRUE);
  store->fill_ms = (g_get_monotonic_time () - t0) / 1000.0;
  ok = TRUE;

out:
  /* Nothing may still read the buffers freed below. */
  if (store->stream != NULL)
    TOMO_CUDA_WARN (cudaStreamSynchronize (store->stream));
  if (up != NULL)
    TOMO_CUDA_WARN (cudaStreamSynchronize (up));
  TOMO_CUDA_STREAM_DESTROY (up);
  TOMO_CUDA_FREE_HOST (h_buf[0], h_buf[1]);
  TOMO_CUDA_FREE (d_buf[0], d_buf[1]);
  TOMO_CUDA_EVENT_DESTROY (ev_up[0], ev_up[1], ev_done[0], ev_done[1]);
  return ok;
}

static gboolean
check_filled (TomoGpuStore *store,
              GError      **error)
{
  if (store->n_filled < store->n_rows)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "The volume store holds %u of its %u rows: fill it first",
                   store->n_filled, store->n_rows);
      return FALSE;
    }
  return TRUE;
}

/* Texture objects over the stored rows (made once, on first use): W × P,
 * linear filtering, zero border, read as float. */
static gboolean
ensure_textures (TomoGpuStore *store,
                 GError      **error)
{
  const size_t elem = store->precision == TOMO_GPU_STORE_FLOAT ? 4 : 2;
  cudaDeviceProp prop;

  if (store->d_tex != NULL)
    return TRUE;
  if (!TOMO_CUDA_CHECK (cudaGetDeviceProperties (&prop, store->device), error))
    return FALSE;
  /* Each stored row's texture starts at that row: its address as well as
   * the detector row's pitch must be aligned. */
  if ((store->width * elem) % prop.texturePitchAlignment != 0 ||
      (store->row_elems * elem) % prop.textureAlignment != 0 || store->n_proj > 65000 ||
      store->width > 65000)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "The texture plane kernel needs detector rows of a multiple of %zu bytes, "
                   "sinograms of a multiple of %zu bytes and at most 65000 projections; the "
                   "store has %u columns × %u projections of %zu bytes",
                   (size_t) prop.texturePitchAlignment, (size_t) prop.textureAlignment,
                   store->width, store->n_proj, elem);
      return FALSE;
    }
  store->h_tex = g_new0 (cudaTextureObject_t, store->n_rows);
  for (guint r = 0; r < store->n_rows; r++)
    {
      cudaResourceDesc res = {};
      cudaTextureDesc td = {};

      res.resType = cudaResourceTypePitch2D;
      res.res.pitch2D.devPtr = (char *) store->d_rows + r * store->row_elems * elem;
      res.res.pitch2D.desc = elem == 4 ? cudaCreateChannelDesc<float> () : cudaCreateChannelDescHalf ();
      res.res.pitch2D.width = store->width;
      res.res.pitch2D.height = store->n_proj;
      res.res.pitch2D.pitchInBytes = store->width * elem;
      td.addressMode[0] = td.addressMode[1] = cudaAddressModeBorder;
      td.filterMode = cudaFilterModeLinear;
      td.readMode = cudaReadModeElementType;
      td.normalizedCoords = 0;
      if (!TOMO_CUDA_CHECK (cudaCreateTextureObject (&store->h_tex[r], &res, &td, NULL), error))
        goto fail;
    }
  if (_tomo_gpu_alloc_device ((void **) &store->d_tex, store->n_rows * sizeof (cudaTextureObject_t),
                              "texture objects", error) &&
      TOMO_CUDA_CHECK (cudaMemcpyAsync (store->d_tex, store->h_tex,
                                        store->n_rows * sizeof (cudaTextureObject_t),
                                        cudaMemcpyHostToDevice, store->stream), error))
    return TRUE;

fail:
  /* Nothing half made stays: the next call starts again. */
  free_textures (store);
  return FALSE;
}

static gboolean
plane_rows_horizontal (const TomoGpuPlane *pl)
{
  return pl->u[2] == 0.0;
}

static gboolean
plane_is_cacheable (const TomoGpuPlane *pl)
{
  return pl->u[2] == 0.0 && pl->u[0] * pl->u[0] + pl->u[1] * pl->u[1] <= 1.0 + 1e-9;
}

/* Plane columns vertical, every plane row on a stored row, rows of a
 * multiple of 16 bytes: the tile kernel's fastest path. */
static gboolean
plane_is_vertical_on_rows (const TomoGpuPlane *pl,
                           TomoGpuStore       *store)
{
  const double z0 = pl->centre[2] - (pl->height - 1) / 2.0 * pl->v[2] - store->row_start;
  const guint vec = store->precision == TOMO_GPU_STORE_FLOAT ? 4 : 8;

  return pl->v[0] == 0.0 && pl->v[1] == 0.0 && z0 == rint (z0) && pl->v[2] == rint (pl->v[2]) &&
         store->width % vec == 0;
}

/* The tilt kernel's planes: horizontal rows, |u| ≤ 1, |(v_x, v_y)| ≤ 1 and
 * |v_z| ≤ 1 (a tile of 8 plane rows spans at most 10 stored rows and
 * 256 + 8 bins per projection). */
static gboolean
plane_fits_tilt (const TomoGpuPlane *pl)
{
  return plane_is_cacheable (pl) && pl->v[0] * pl->v[0] + pl->v[1] * pl->v[1] <= 1.0 + 1e-9 &&
         fabs (pl->v[2]) <= 1.0 + 1e-9;
}

template <typename T, int LINEAR, bool TWO, bool ASYNC>
static void
launch_rows (TomoGpuStore    *store,
             const PlaneArgs &a)
{
  constexpr int PPT = 8;
  const int win = (a.W + 8) & ~1;   /* W + 5 bins, + 1 for an even start, even */
  const size_t per_proj = (size_t) win * sizeof (T) * (TWO ? 2 : 1) * 2;
  const int group = CLAMP ((int) (ROWS_SMEM / per_proj), 1, ROWS_MAX_GROUP);
  const size_t smem = (size_t) group * per_proj;
  dim3 grid ((a.w + ROWS_THREADS * PPT - 1) / (ROWS_THREADS * PPT), a.h);
  auto kern = plane_rows_kernel<T, LINEAR, PPT, TWO, ASYNC>;

  TOMO_CUDA_WARN (cudaFuncSetAttribute (kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
  kern<<<grid, ROWS_THREADS, smem, store->stream>>> ((const T *) store->d_rows, store->d_trig, a, group,
                                                     win, store->d_out);
}

template <typename T, bool TWO, bool ASYNC>
static void
launch_rows_interp (TomoGpuStore *store, int interp, const PlaneArgs &a)
{
  if (interp)
    launch_rows<T, 1, TWO, ASYNC> (store, a);
  else
    launch_rows<T, 0, TWO, ASYNC> (store, a);
}

template <typename T>
static void
launch_plane (TomoGpuStore      *store,
              TomoGpuPlaneKernel kernel,
              int                interp,
              const PlaneArgs   &a)
{
  const T *rows = (const T *) store->d_rows;

  if (kernel == TOMO_GPU_PLANE_ROWS)
    {
      /* Every plane row on a detector row (integer z, integer step): one
       * row per sample, no blend. */
      const gboolean two = !(a.z0 == rintf (a.z0) && a.vz == rintf (a.vz));
      /* 4-byte copies: floats, or pairs of halves on even bins of rows of
       * even width. */
      const gboolean async = sizeof (T) == 4 || a.W % 2 == 0;

      if (two)
        async ? launch_rows_interp<T, true, true> (store, interp, a)
              : launch_rows_interp<T, true, false> (store, interp, a);
      else
        async ? launch_rows_interp<T, false, true> (store, interp, a)
              : launch_rows_interp<T, false, false> (store, interp, a);
    }
  else
    {
      const gboolean cached = kernel == TOMO_GPU_PLANE_CACHED;
      auto kern = cached ? (interp ? plane_cached_kernel<T, 1> : plane_cached_kernel<T, 0>)
                         : (interp ? plane_global_kernel<T, 1> : plane_global_kernel<T, 0>);
      dim3 block = cached ? dim3 (CACHED_BLOCK) : dim3 (16, 16);
      dim3 grid = cached ? dim3 ((a.w + CACHED_BLOCK - 1) / CACHED_BLOCK, a.h)
                         : dim3 ((a.w + 15) / 16, (a.h + 15) / 16);

      kern<<<grid, block, 0, store->stream>>> (rows, store->d_trig, a, store->d_out);
    }
}

gboolean
tomo_gpu_store_plane (TomoGpuStore       *store,
                      const TomoGpuPlane *plane,
                      double              center,
                      int                 interp,
                      TomoGpuPlaneKernel  kernel,
                      GError            **error)
{
  double c, di, dj;
  PlaneArgs a;
  float ms = 0.0f;

  g_return_val_if_fail (store != NULL && plane != NULL, FALSE);

  if (plane->width < 1 || plane->height < 1 || plane->width > 32768 || plane->height > 32768)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Plane size %u × %u: each side must be 1 … 32768 samples",
                   plane->width, plane->height);
      return FALSE;
    }
  for (int k = 0; k < 3; k++)
    if (!(fabs (plane->centre[k]) < COORD_LIMIT && fabs (plane->u[k]) < COORD_LIMIT &&
          fabs (plane->v[k]) < COORD_LIMIT))
      {
        g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                     "Plane centre (%g, %g, %g) or directions are not finite or too large",
                     plane->centre[0], plane->centre[1], plane->centre[2]);
        return FALSE;
      }
  if (!(fabs (center) < COORD_LIMIT) || (interp != 0 && interp != 1))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Plane back projection: bad centre %g or interpolation %d", center, interp);
      return FALSE;
    }
  /* The rows kernel holds at least one projection's detector row (W + 8
   * bins) of two detector rows in two buffers in shared memory. */
  const gboolean rows_fit = (store->width + 8) * sizeof (float) * 4 <= ROWS_MAX_BYTES;

  /* auto: vertical planes on whole detector rows (XZ, YZ, turned about the
   * vertical axis) with 16-byte aligned rows take the tile kernel's wide
   * path; the other planes the tilt kernel fits (oblique by azimuth and
   * tilt, XY, vertical between rows) on 16-byte aligned rows the tilt
   * kernel (from a half store with linear interpolation between rows its
   * texture+ALU hybrid, where the rows can have texture objects); other
   * planes with horizontal rows and a step ≤ 1 pixel the rows kernel; the
   * rest the global one (docs/PERFORMANCE.md). */
  if (kernel == TOMO_GPU_PLANE_AUTO)
    kernel = plane_is_cacheable (plane) && plane_is_vertical_on_rows (plane, store)
             ? TOMO_GPU_PLANE_TILE
             : plane_fits_tilt (plane) && store->width % (store->precision == TOMO_GPU_STORE_FLOAT
                                                          ? 4 : 8) == 0
             ? TOMO_GPU_PLANE_TILT
             : plane_is_cacheable (plane) && rows_fit ? TOMO_GPU_PLANE_ROWS
                                                      : TOMO_GPU_PLANE_GLOBAL;
  else if (kernel == TOMO_GPU_PLANE_TILT && !plane_fits_tilt (plane))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "The tilt plane kernel needs horizontal plane rows (u_z = 0), |u| ≤ 1, "
                   "|(v_x, v_y)| ≤ 1 and |v_z| ≤ 1; u = (%g, %g, %g), v = (%g, %g, %g)",
                   plane->u[0], plane->u[1], plane->u[2], plane->v[0], plane->v[1], plane->v[2]);
      return FALSE;
    }
  else if ((kernel == TOMO_GPU_PLANE_TILE || kernel == TOMO_GPU_PLANE_CACHED) &&
           !plane_is_cacheable (plane))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "The %s plane kernel needs horizontal plane rows (u_z = 0) and a step of "
                   "at most one pixel; u = (%g, %g, %g)", tomo_gpu_plane_kernel_to_string (kernel),
                   plane->u[0], plane->u[1], plane->u[2]);
      return FALSE;
    }
  else if (kernel == TOMO_GPU_PLANE_ROWS && (!plane_rows_horizontal (plane) || !rows_fit))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "The rows plane kernel needs horizontal plane rows (u_z = 0) and at most %u "
                   "detector columns; u = (%g, %g, %g), %u columns",
                   (guint) (ROWS_MAX_BYTES / sizeof (float) / 4 - 8), plane->u[0], plane->u[1],
                   plane->u[2], store->width);
      return FALSE;
    }
  if (!check_filled (store, error))
    return FALSE;

  c = (store->width - 1) / 2.0;
  di = (plane->width - 1) / 2.0;
  dj = (plane->height - 1) / 2.0;
  a.x0 = (float) (plane->centre[0] - di * plane->u[0] - dj * plane->v[0] - c);
  a.y0 = (float) (plane->centre[1] - di * plane->u[1] - dj * plane->v[1] - c);
  a.z0 = (float) (plane->centre[2] - di * plane->u[2] - dj * plane->v[2] - store->row_start);
  a.ux = plane->u[0]; a.uy = plane->u[1]; a.uz = plane->u[2];
  a.vx = plane->v[0]; a.vy = plane->v[1]; a.vz = plane->v[2];
  a.w = plane->width;
  a.h = plane->height;
  a.W = store->width;
  a.P = store->n_proj;
  a.n_rows = store->n_rows;
  a.center = (float) center;
  a.lim = (float) (c + 1e-3);
  a.inv_scale = 1.0f / store->value_scale;
  a.row_elems = store->row_elems;
  a.tex = NULL;

  if (!TOMO_CUDA_CHECK (cudaSetDevice (store->device), error) ||
      !_tomo_gpu_ensure_buffer ((void **) &store->d_out, &store->out_size,
                    (size_t) plane->width * plane->height * sizeof (float), "plane", error) ||
      !TOMO_CUDA_CHECK (cudaEventRecord (store->ev[0], store->stream), error))
    return FALSE;
  const LaunchArgs l = { store->d_trig, interp, store->d_out, store->stream };

  if (kernel == TOMO_GPU_PLANE_TEXTURE)
    {
      if (!ensure_textures (store, error) ||
          !TOMO_CUDA_CHECK (cudaEventRecord (store->ev[0], store->stream), error) ||
          !_tomo_gpu_store_texture_launch (store->d_tex, &a, &l, error))
        return FALSE;
    }
  else if (kernel == TOMO_GPU_PLANE_TILE)
    {
      if (!_tomo_gpu_store_tile_launch (store->d_rows, store->precision == TOMO_GPU_STORE_HALF,
                                        &a, &l, error))
        return FALSE;
    }
  else if (kernel == TOMO_GPU_PLANE_TILT)
    {
      const gboolean half = store->precision == TOMO_GPU_STORE_HALF;

      /* The hybrid wants the texture objects (made once; where the rows
       * cannot have them the raw path runs). */
      if (!store->tex_refused && _tomo_gpu_store_tilt_hybrid_ok (half, &a, interp))
        {
          g_autoptr (GError) local = NULL;

          if (ensure_textures (store, &local))
            a.tex = store->d_tex;
          else
            {
              /* The raw path runs; rows that cannot have textures are not
               * asked again, anything else (memory) is tried next time. */
              g_debug ("tilt kernel: the texture+ALU hybrid is off: %s", local->message);
              if (g_error_matches (local, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID))
                store->tex_refused = TRUE;
            }
          if (!TOMO_CUDA_CHECK (cudaEventRecord (store->ev[0], store->stream), error))
            return FALSE;
        }
      if (!_tomo_gpu_store_tilt_launch (store->d_rows, half, &a, &l, error))
        return FALSE;
    }
  else if (store->precision == TOMO_GPU_STORE_FLOAT)
    launch_plane<float> (store, kernel, interp, a);
  else
    launch_plane<__half> (store, kernel, interp, a);
  if (!TOMO_CUDA_CHECK_LAUNCH ("plane kernel", error) ||
      !TOMO_CUDA_CHECK (cudaEventRecord (store->ev[1], store->stream), error) ||
      !TOMO_CUDA_CHECK (cudaEventSynchronize (store->ev[1]), error) ||
      !TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, store->ev[0], store->ev[1]), error))
    return FALSE;
  store->out_width = plane->width;
  store->out_height = plane->height;
  store->plane_ms = ms;
  store->last_kernel = kernel;
  return TRUE;
}

gboolean
tomo_gpu_store_download (TomoGpuStore *store,
                         float        *host,
                         GError      **error)
{
  g_return_val_if_fail (store != NULL && host != NULL, FALSE);

  if (store->d_out == NULL)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "No plane computed yet");
      return FALSE;
    }
  return TOMO_CUDA_CHECK (cudaSetDevice (store->device), error) &&
         TOMO_CUDA_CHECK (cudaMemcpy (host, store->d_out,
                                      (size_t) store->out_width * store->out_height * sizeof (float),
                                      cudaMemcpyDeviceToHost), error);
}

gboolean
tomo_gpu_store_preview (TomoGpuStore         *store,
                        const TomoGpuPreview *pv,
                        double                center,
                        int                   interp,
                        GError              **error)
{
  PreviewArgs a;
  float ms = 0.0f;

  g_return_val_if_fail (store != NULL && pv != NULL, FALSE);

  if (pv->nx < 1 || pv->ny < 1 || pv->nz < 1 || pv->nx > 4096 || pv->ny > 4096 || pv->nz > 4096 ||
      pv->bin < 1 || pv->bin > store->width || pv->step < 1 || pv->step > store->n_proj ||
      (store->n_proj + pv->step - 1) / pv->step > 65535)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Preview %u × %u × %u voxels from bins of %u columns and every %u-th "
                   "projection: sides must be 1 … 4096, the bin 1 … %u columns, the step "
                   "1 … %u projections", pv->nx, pv->ny, pv->nz, pv->bin, pv->step,
                   store->width, store->n_proj);
      return FALSE;
    }
  if (!(fabs (center) < COORD_LIMIT) || (interp != 0 && interp != 1))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Preview: bad centre %g or interpolation %d", center, interp);
      return FALSE;
    }
  if (!check_filled (store, error))
    return FALSE;

  a.W = store->width;
  a.P = store->n_proj;
  a.n_rows = store->n_rows;
  a.row_elems = store->row_elems;
  a.inv_scale = 1.0f / store->value_scale;
  a.nx = pv->nx;
  a.ny = pv->ny;
  a.nz = pv->nz;
  a.bin = pv->bin;
  a.step = pv->step;
  a.Wb = (store->width + pv->bin - 1) / pv->bin;
  a.Pb = (store->n_proj + pv->step - 1) / pv->step;
  a.sx = (float) ((double) store->width / pv->nx);
  a.sy = (float) ((double) store->width / pv->ny);
  a.center = (float) center;
  a.weight = (float) ((double) store->n_proj / a.Pb);

  if (!TOMO_CUDA_CHECK (cudaSetDevice (store->device), error) ||
      !_tomo_gpu_ensure_buffer ((void **) &store->d_out, &store->out_size,
                                (size_t) pv->nx * pv->ny * pv->nz * sizeof (float), "preview",
                                error))
    return FALSE;
  if (store->d_binned == NULL || store->binned_generation != store->generation ||
      memcmp (&store->binned_for, pv, sizeof *pv) != 0)
    {
      gint64 t0 = g_get_monotonic_time ();

      memset (&store->binned_for, 0, sizeof store->binned_for);
      if (!_tomo_gpu_ensure_buffer ((void **) &store->d_binned, &store->binned_size,
                                    (size_t) a.nz * a.Pb * (a.Wb + 3) * sizeof (float),
                                    "preview copy of the store", error) ||
          !_tomo_gpu_store_preview_bin (store->d_rows, store->precision == TOMO_GPU_STORE_HALF,
                                        &a, store->d_binned, store->stream, error) ||
          !TOMO_CUDA_CHECK (cudaStreamSynchronize (store->stream), error))
        return FALSE;
      store->binned_for = *pv;
      store->binned_generation = store->generation;
      store->prep_ms = (g_get_monotonic_time () - t0) / 1000.0;
    }
  const LaunchArgs l = { store->d_trig, interp, store->d_out, store->stream };

  if (!TOMO_CUDA_CHECK (cudaEventRecord (store->ev[0], store->stream), error) ||
      !_tomo_gpu_store_preview_launch (store->d_binned, &a, &l, error) ||
      !TOMO_CUDA_CHECK (cudaEventRecord (store->ev[1], store->stream), error) ||
      !TOMO_CUDA_CHECK (cudaEventSynchronize (store->ev[1]), error) ||
      !TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, store->ev[0], store->ev[1]), error))
    return FALSE;
  store->out_width = pv->nx;
  store->out_height = pv->ny * pv->nz;
  store->plane_ms = ms;
  return TRUE;
}

double
tomo_gpu_store_get_preview_prep_ms (TomoGpuStore *store)
{
  return store->prep_ms;
}

TomoGpuBuffer *
tomo_gpu_store_keep_output (TomoGpuStore  *store,
                            TomoGpuStats  *stats,
                            GError       **error)
{
  size_t n;
  TomoGpuBuffer *buffer;
  TomoGpuStatsWork *work;
  gboolean ok;

  g_return_val_if_fail (store != NULL, NULL);

  n = (size_t) store->out_width * store->out_height;
  if (store->d_out == NULL || n == 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "No plane computed yet");
      return NULL;
    }
  if (_tomo_gpu_fault_hit (TOMO_GPU_FAULT_POINT_KEEP))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY,
                   "Keeping the output on the device failed (injected fault)");
      return NULL;
    }
  if (store->keep_fresh)
    {
      buffer = _tomo_gpu_buffer_new_copy (store->device, store->d_out, n, store->stream, error);
      if (buffer == NULL || stats == NULL)
        return buffer;
      work = _tomo_gpu_stats_work_new (store->device, error);
      ok = work != NULL && _tomo_gpu_stats_run (work, tomo_gpu_buffer_get_data (buffer), n,
                                                 store->stream, stats, error);
      _tomo_gpu_stats_work_free (work);
      if (!ok)
        g_clear_pointer (&buffer, tomo_gpu_buffer_free);
      return buffer;
    }
  if (store->keep_pool == NULL)
    store->keep_pool = _tomo_gpu_buffer_pool_new ();
  /* Copies of another size (the preview's size changed) are let go here,
   * on the caller's thread, not by whoever frees the next one. */
  _tomo_gpu_buffer_pool_trim (store->keep_pool, n);
  buffer = _tomo_gpu_buffer_pool_copy (store->keep_pool, store->device, store->d_out, n,
                                       store->stream, error);
  if (buffer == NULL || stats == NULL)
    return buffer;
  if (store->keep_stats == NULL)
    store->keep_stats = _tomo_gpu_stats_work_new (store->device, error);
  ok = store->keep_stats != NULL
       && _tomo_gpu_stats_run (store->keep_stats, tomo_gpu_buffer_get_data (buffer), n,
                               store->stream, stats, error);
  if (!ok)
    g_clear_pointer (&buffer, tomo_gpu_buffer_free);
  return buffer;
}

void
tomo_gpu_store_set_keep_fresh (TomoGpuStore *store,
                               gboolean      fresh)
{
  g_return_if_fail (store != NULL);
  store->keep_fresh = fresh;
}
