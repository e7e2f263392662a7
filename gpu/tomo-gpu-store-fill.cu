/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The volume store filled from raw rows (tomo-gpu-store-fill.h).
 *
 * Slab s (buffer b = s % 2): the calling thread reads it into pinned host
 * buffer b once the upload of slab s − 2 has left it; the `up` stream
 * uploads it (raw values, flats, darks) once the store's stream is done
 * with device buffer b; the store's stream preprocesses it four rows at a
 * time into one float buffer, filters those (the store's filter context)
 * and stores them.  Reading overlaps the upload and everything on the
 * device; the clamp counts of all rows stay on the device until the end.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include "tomo-gpu-store-fill.h"
#include "tomo-gpu-store-private.h"

#define FILL_GROUP 4   /* rows preprocessed and filtered per cuFFT batch */

typedef struct
{
  void *h_raw[2], *d_raw[2];
  float *h_fd[2], *d_fd[2];          /* flats then darks, slab × width each */
  float *d_pre;                      /* FILL_GROUP preprocessed rows */
  float *d_shift;                    /* row_taps fills: those resampled */
  unsigned long long *d_counts;      /* 2 per store row */
  cudaStream_t up;
  cudaEvent_t ev_up[2], ev_done[2];
} FillBuffers;

/* Waits for everything, then frees what was allocated. */
static void
buffers_clear (FillBuffers  *fb,
               cudaStream_t  stream)
{
  if (stream != NULL)
    TOMO_CUDA_WARN (cudaStreamSynchronize (stream));
  if (fb->up != NULL)
    TOMO_CUDA_WARN (cudaStreamSynchronize (fb->up));
  TOMO_CUDA_STREAM_DESTROY (fb->up);
  for (int k = 0; k < 2; k++)
    {
      TOMO_CUDA_FREE_HOST (fb->h_raw[k], fb->h_fd[k]);
      TOMO_CUDA_FREE (fb->d_raw[k], fb->d_fd[k]);
      TOMO_CUDA_EVENT_DESTROY (fb->ev_up[k], fb->ev_done[k]);
    }
  TOMO_CUDA_FREE (fb->d_pre, fb->d_shift, fb->d_counts);
}

/* Slab `s` of `n` rows from store row `row` (buffer b): upload on `up`,
 * then preprocess, filter and store on the store's stream. */
static gboolean
process_slab (TomoGpuStore              *store,
              const TomoGpuStoreRawFill *fill,
              FillBuffers               *fb,
              guint                      s,
              guint                      row,
              guint                      n,
              guint                      slab,
              GError                   **error)
{
  int b = s % 2;
  size_t plane = (size_t) store->n_proj * store->width;
  size_t elt = tomo_gpu_raw_type_size (fill->type);
  size_t fd = (size_t) slab * store->width;

  if ((s >= 2 && !TOMO_CUDA_CHECK (cudaStreamWaitEvent (fb->up, fb->ev_done[b], 0), error)) ||
      !TOMO_CUDA_CHECK (cudaMemcpyAsync (fb->d_raw[b], fb->h_raw[b], n * plane * elt,
                                         cudaMemcpyHostToDevice, fb->up), error))
    return FALSE;
  if (fill->normalise &&
      !TOMO_CUDA_CHECK (cudaMemcpyAsync (fb->d_fd[b], fb->h_fd[b], 2 * fd * sizeof (float),
                                         cudaMemcpyHostToDevice, fb->up), error))
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaEventRecord (fb->ev_up[b], fb->up), error) ||
      !TOMO_CUDA_CHECK (cudaStreamWaitEvent (store->stream, fb->ev_up[b], 0), error))
    return FALSE;
  for (guint k = 0; k < n;)
    {
      guint left = n - k;
      guint g = left >= 4 ? 4 : left >= 2 ? 2 : 1;

      TomoGpuPreprocessJob pre = { fill->type, (const char *) fb->d_raw[b] + k * plane * elt,
                                   fb->d_fd[b] + (size_t) k * store->width,
                                   fb->d_fd[b] + fd + (size_t) k * store->width,
                                   fill->normalise, fill->apply_log, g, plane, store->width,
                                   fb->d_pre, fb->d_counts + 2 * (size_t) (row + k) };

      TomoGpuRowTaps taps[FILL_GROUP];

      if (!_tomo_gpu_preprocess_launch (&pre, store->stream, error))
        return FALSE;
      if (fill->row_taps != NULL)
        {
          for (guint i = 0; i < g; i++)
            fill->row_taps (store->row_start + row + k + i, &taps[i].offset, taps[i].weights,
                            fill->user_data);
          if (!_tomo_gpu_row_taps_launch (fb->d_pre, fb->d_shift, g, plane, store->width, taps,
                                          store->stream, error))
            return FALSE;
        }
      if (!_tomo_gpu_context_filter_rows (store->ctx, g, fill->row_taps != NULL ? fb->d_shift : fb->d_pre,
                                          store->stream, error) ||
          !_tomo_gpu_store_put_device (store, row + k, g,
                                       _tomo_gpu_context_get_filtered_device (store->ctx), error))
        return FALSE;
      k += g;
    }
  return TOMO_CUDA_CHECK (cudaEventRecord (fb->ev_done[b], store->stream), error);
}

/* The counts to the caller; a row mostly replaced is refused. */
static gboolean
finish_counts (const TomoGpuStore        *store,
               const TomoGpuStoreRawFill *fill,
               const unsigned long long  *h_counts,
               GError                   **error)
{
  guint64 plane = (guint64) store->n_proj * store->width;

  _tomo_gpu_preprocess_counts (fill->counts, h_counts, store->n_rows, plane);
  for (guint r = 0; r < store->n_rows; r++)
    if (h_counts[2 * r + 1] * 2 > plane)
      {
        g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                     "Row %u: %llu of the %" G_GUINT64_FORMAT " values are NaN, infinite or "
                     "absurdly large: the data are corrupt",
                     store->row_start + r, h_counts[2 * r + 1], plane);
        return FALSE;
      }
  return TRUE;
}

gboolean
tomo_gpu_store_fill_raw (TomoGpuStore              *store,
                         const TomoGpuStoreRawFill *fill,
                         GError                   **error)
{
  FillBuffers fb = {};
  g_autofree unsigned long long *h_counts = NULL;
  gint64 t0 = g_get_monotonic_time ();
  size_t plane, elt, counts_bytes;
  guint slab;
  gboolean ok = FALSE;

  g_return_val_if_fail (store != NULL && fill != NULL, FALSE);

  if (fill->read == NULL || (int) fill->type < 0 || fill->type > TOMO_GPU_RAW_UINT16)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Volume store: invalid raw fill (raw type %d%s)", (int) fill->type,
                   fill->read == NULL ? ", no reader" : "");
      return FALSE;
    }
  if (!store->have_filter)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Volume store: no filter set before filling");
      return FALSE;
    }
  _tomo_gpu_store_set_held (store, FALSE);   /* the rows change from here on, even if the fill fails */
  store->fill_ms = 0.0;
  plane = (size_t) store->n_proj * store->width;
  elt = tomo_gpu_raw_type_size (fill->type);
  slab = MIN (fill->slab_rows > 0 ? fill->slab_rows : 8, store->n_rows);
  counts_bytes = (size_t) store->n_rows * 2 * sizeof (unsigned long long);
  h_counts = g_new0 (unsigned long long, (size_t) store->n_rows * 2);

  if (!TOMO_CUDA_CHECK (cudaSetDevice (store->device), error) ||
      !TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&fb.up, cudaStreamNonBlocking), error) ||
      !_tomo_gpu_alloc_device ((void **) &fb.d_pre, FILL_GROUP * plane * sizeof (float),
                                   "preprocessed rows", error) ||
      (fill->row_taps != NULL &&
       !_tomo_gpu_alloc_device ((void **) &fb.d_shift, FILL_GROUP * plane * sizeof (float),
                                "resampled rows", error)) ||
      !_tomo_gpu_alloc_device ((void **) &fb.d_counts, counts_bytes, "preprocessing counts", error) ||
      !TOMO_CUDA_CHECK (cudaMemsetAsync (fb.d_counts, 0, counts_bytes, store->stream), error))
    goto out;
  for (int k = 0; k < 2; k++)
    if (!_tomo_gpu_alloc_pinned (&fb.h_raw[k], slab * plane * elt, "raw rows in flight", error) ||
        !_tomo_gpu_alloc_pinned ((void **) &fb.h_fd[k], 2 * (size_t) slab * store->width * sizeof (float),
                                     "flats and darks in flight", error) ||
        !_tomo_gpu_alloc_device (&fb.d_raw[k], slab * plane * elt, "raw rows in flight", error) ||
        !_tomo_gpu_alloc_device ((void **) &fb.d_fd[k], 2 * (size_t) slab * store->width * sizeof (float),
                                     "flats and darks in flight", error) ||
        !TOMO_CUDA_CHECK (cudaEventCreateWithFlags (&fb.ev_up[k], cudaEventDisableTiming), error) ||
        !TOMO_CUDA_CHECK (cudaEventCreateWithFlags (&fb.ev_done[k], cudaEventDisableTiming), error))
      goto out;

  for (guint row = 0, s = 0; row < store->n_rows; s++)
    {
      guint n = MIN (slab, store->n_rows - row);
      int b = s % 2;

      if (fill->cancel != NULL && g_atomic_int_get (fill->cancel))
        {
          g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "cancelled");
          goto out;
        }
      if (s >= 2 && !TOMO_CUDA_CHECK (cudaEventSynchronize (fb.ev_up[b]), error))
        goto out;
      if (!fill->read (store->row_start + row, n, fb.h_raw[b], fill->normalise ? fb.h_fd[b] : NULL,
                       fill->normalise ? fb.h_fd[b] + (size_t) slab * store->width : NULL,
                       fill->user_data, error) ||
          !process_slab (store, fill, &fb, s, row, n, slab, error))
        goto out;
      row += n;
      if (fill->progress != NULL)
        fill->progress (row, store->n_rows, fill->user_data);
    }
  if (!TOMO_CUDA_CHECK (cudaMemcpyAsync (h_counts, fb.d_counts, counts_bytes,
                                         cudaMemcpyDeviceToHost, store->stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (store->stream), error) ||
      !finish_counts (store, fill, h_counts, error))
    goto out;
  _tomo_gpu_store_set_held (store, TRUE);
  store->fill_ms = (g_get_monotonic_time () - t0) / 1000.0;
  ok = TRUE;

out:
  buffers_clear (&fb, store->stream);
  return ok;
}
