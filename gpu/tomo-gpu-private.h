/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Internal to gpu/ (CUDA units only): error helpers and the pieces of the
 * context that the volume pipeline drives on its own streams.
 */
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

#include "tomo-gpu.h"
#include "tomo-gpu-fault.h"

gboolean _tomo_gpu_check_cuda  (cudaError_t  res,
                                const char  *call,
                                const char  *file,
                                int          line,
                                GError     **error);
/* Bytes this process may still allocate on `device` (current), which has
 * free_b of total_b free: free_b, or less under TOMO_GPU_MEMORY_LIMIT,
 * which caps what the process added since its first allocation there. */
guint64  _tomo_gpu_device_room (int          device,
                                size_t       free_b,
                                size_t       total_b);
/* The TomoGpuError code of a failed call: DEVICE_FAULT for the sticky
 * errors after which the process cannot use the device again. */
int      _tomo_gpu_error_code  (cudaError_t  res);
gboolean _tomo_gpu_check_cufft (cufftResult  res,
                                const char  *call,
                                const char  *file,
                                int          line,
                                GError     **error);
/* Cleanup paths: log and continue. */
void     _tomo_gpu_warn_cuda   (cudaError_t  res,
                                const char  *call,
                                const char  *file,
                                int          line);

#define TOMO_CUDA_CHECK(call, error) \
  _tomo_gpu_check_cuda ((call), #call, __FILE__, __LINE__, (error))
#define TOMO_CUFFT_CHECK(call, error) \
  _tomo_gpu_check_cufft ((call), #call, __FILE__, __LINE__, (error))
#define TOMO_CUDA_WARN(call) \
  _tomo_gpu_warn_cuda ((call), #call, __FILE__, __LINE__)
/* Cleanup paths: each of the handles that is set is released with
 * `release` (a failure logged as by TOMO_CUDA_WARN) and cleared. */
template <typename Release, typename... Handle>
static inline void
_tomo_gpu_release (Release      release,
                   const char  *call,
                   const char  *file,
                   int          line,
                   Handle     &...handles)
{
  auto one = [&] (auto &handle) {
    if (handle)
      _tomo_gpu_warn_cuda (release (handle), call, file, line);
    handle = {};
  };
  (one (handles), ...);
}
#define TOMO_CUDA_FREE(...) \
  _tomo_gpu_release (cudaFree, "cudaFree (" #__VA_ARGS__ ")", __FILE__, __LINE__, __VA_ARGS__)
#define TOMO_CUDA_FREE_HOST(...) \
  _tomo_gpu_release (cudaFreeHost, "cudaFreeHost (" #__VA_ARGS__ ")", __FILE__, __LINE__, __VA_ARGS__)
#define TOMO_CUDA_EVENT_DESTROY(...) \
  _tomo_gpu_release (cudaEventDestroy, "cudaEventDestroy (" #__VA_ARGS__ ")", __FILE__, __LINE__, __VA_ARGS__)
#define TOMO_CUDA_STREAM_DESTROY(...) \
  _tomo_gpu_release (cudaStreamDestroy, "cudaStreamDestroy (" #__VA_ARGS__ ")", __FILE__, __LINE__, __VA_ARGS__)
#define TOMO_CUDA_TEXTURE_DESTROY(...) \
  _tomo_gpu_release (cudaDestroyTextureObject, "cudaDestroyTextureObject (" #__VA_ARGS__ ")", __FILE__, __LINE__, \
                     __VA_ARGS__)
/* After every kernel launch. */
#define TOMO_CUDA_CHECK_LAUNCH(what, error) \
  _tomo_gpu_check_cuda (_tomo_gpu_fault_launch (cudaGetLastError ()), what, __FILE__, __LINE__, (error))
/* Launches `kernel` on `stream` (no dynamic shared memory) with the
 * arguments that follow `error`, then checks the launch as above under the
 * kernel's name: TRUE when it started. */
#define TOMO_CUDA_LAUNCH(kernel, grid, block, stream, error, ...) \
  (kernel<<<(grid), (block), 0, (stream)>>> (__VA_ARGS__), TOMO_CUDA_CHECK_LAUNCH (#kernel, (error)))

/* Injected launch failures and the device-memory cap (tomo-gpu-fault.h):
 * every device allocation in gpu/ goes through these. */
cudaError_t _tomo_gpu_fault_launch (cudaError_t res);
cudaError_t _tomo_gpu_malloc       (void **ptr, size_t size);
cudaError_t _tomo_gpu_malloc_pitch (void **ptr, size_t *pitch, size_t width, size_t height);
#define cudaMalloc(ptr, size) _tomo_gpu_malloc ((void **) (ptr), (size))
#define cudaMallocPitch(ptr, pitch, width, height) \
  _tomo_gpu_malloc_pitch ((void **) (ptr), (pitch), (width), (height))

/* As TOMO_CUDA_LAUNCH with `smem` bytes of dynamic shared memory (the
 * kernel's limit raised to that first), the launch checked under `what`. */
#define TOMO_CUDA_LAUNCH_SMEM(kern, grid, block, smem, stream, what, error, ...)                    \
  (_tomo_gpu_check_cuda (cudaFuncSetAttribute ((kern), cudaFuncAttributeMaxDynamicSharedMemorySize, \
                                               (int) (smem)),                                      \
                         "cudaFuncSetAttribute (kern, cudaFuncAttributeMaxDynamicSharedMemorySize, " \
                         "(int) smem)", __FILE__, __LINE__, (error))                                \
   && ((kern)<<<(grid), (block), (smem), (stream)>>> (__VA_ARGS__),                                 \
       TOMO_CUDA_CHECK_LAUNCH ((what), (error))))

/* Filters n_slices planes of n_proj × width floats already on the device
 * (d_sinos) on `stream` and leaves the result in the context's filtered
 * buffer (_tomo_gpu_context_get_filtered_device).  The filter events are
 * recorded on `stream` but not waited for.  What the volume store's fills
 * use: they take the filtered rows and back project nothing here. */
gboolean _tomo_gpu_context_filter_rows   (TomoGpuContext *ctx,
                                          guint           n_slices,
                                          const float    *d_sinos,
                                          cudaStream_t    stream,
                                          GError        **error);
/* _tomo_gpu_context_filter_rows(), then the filtered rows handed to the
 * back projector (packed for n_slices = 1, 2 or 4). */
gboolean _tomo_gpu_context_filter_device (TomoGpuContext *ctx,
                                          guint           n_slices,
                                          const float    *d_sinos,
                                          cudaStream_t    stream,
                                          GError        **error);

/* Makes `device` current; no such device is TOMO_GPU_ERROR_NO_DEVICE. */
gboolean _tomo_gpu_set_device (int      device,
                               GError **error);

/* Multiplies the n_coef spectrum bins of each of n_rows rows (or row
 * pairs) at `data` by the filter's response (multiply_kernel in
 * tomo-gpu.cu) on `stream`: mirror = padded for whole complex spectra,
 * 0 for the half spectra of real transforms. */
gboolean _tomo_gpu_filter_multiply (cufftComplex *data,
                                    const float  *response,
                                    guint         n_coef,
                                    guint         n_rows,
                                    guint         mirror,
                                    cudaStream_t  stream,
                                    GError      **error);

/* Grows a device buffer to `need` bytes (contents not kept); an allocation
 * failure is TOMO_GPU_ERROR_OUT_OF_MEMORY naming `what` and the size. */
gboolean _tomo_gpu_ensure_buffer (void      **ptr,
                                  size_t     *have,
                                  size_t      need,
                                  const char *what,
                                  GError    **error);
/* A fixed allocation of `size` bytes: as _tomo_gpu_ensure_buffer from
 * nothing; *ptr is NULL on failure. */
gboolean _tomo_gpu_alloc_device  (void      **ptr,
                                  size_t      size,
                                  const char *what,
                                  GError    **error);
/* Pinned host memory for `what`; a failure is TOMO_GPU_ERROR_OUT_OF_MEMORY
 * naming it and the size, *ptr NULL. */
gboolean _tomo_gpu_alloc_pinned  (void      **ptr,
                                  size_t      size,
                                  const char *what,
                                  GError    **error);

/* The filtered sinograms of the last filter_device / load: n_slices planes
 * of n_proj × width floats on the device (the volume store copies them). */
const float *_tomo_gpu_context_get_filtered_device (TomoGpuContext *ctx);

/* Back projects the loaded sinograms into d_out (n_slices × roi) on `stream`
 * without waiting; `auto` resolved through the tuning table. */
gboolean _tomo_gpu_context_backproject_to (TomoGpuContext                 *ctx,
                                           const TomoGpuBackprojectParams *params,
                                           float                          *d_out,
                                           cudaStream_t                    stream,
                                           GError                        **error);

/* Workspace of the statistics reduction (tomo-gpu-stats.cu), one per
 * context. */
typedef struct _TomoGpuStatsWork TomoGpuStatsWork;
TomoGpuStatsWork *_tomo_gpu_stats_work_new  (int      device,
                                             GError **error);
void              _tomo_gpu_stats_work_free (TomoGpuStatsWork *work);
/* Statistics of n floats at d_data, on `stream`; waits for the result. */
gboolean          _tomo_gpu_stats_run       (TomoGpuStatsWork *work,
                                             const float      *d_data,
                                             size_t            n,
                                             cudaStream_t      stream,
                                             TomoGpuStats     *stats,
                                             GError          **error);

/* tomo_gpu_context_negativity() of n_planes planes of width × height at
 * d_data, on `stream`; waits for the scores. */
gboolean          _tomo_gpu_negativity_run  (TomoGpuStatsWork *work,
                                             const float      *d_data,
                                             guint             width,
                                             guint             height,
                                             guint             n_planes,
                                             cudaStream_t      stream,
                                             double           *scores,
                                             GError          **error);

/* The filter response (n_coef values) as floats, or NULL and an error
 * naming the first that is not finite. */
float *_tomo_gpu_response_to_float (const double *response,
                                    guint         n_coef,
                                    GError      **error);

/* A device buffer holding a copy of n floats at d_src (on `stream`, waited for). */
TomoGpuBuffer *_tomo_gpu_buffer_new_copy (int           device,
                                          const float  *d_src,
                                          size_t        n,
                                          cudaStream_t  stream,
                                          GError      **error);

/* Display copies that are used again: a buffer of the pool, once freed by
 * its last holder (every reader of a buffer waits for its copy before it
 * lets the buffer go), goes back to the pool instead of cudaFree, which
 * would wait for the whole device.  A closed pool keeps nothing: buffers
 * still out are freed when their holders let them go. */
typedef struct _TomoGpuBufferPool TomoGpuBufferPool;
TomoGpuBufferPool *_tomo_gpu_buffer_pool_new   (void);
void               _tomo_gpu_buffer_pool_close (TomoGpuBufferPool *pool);
/* As _tomo_gpu_buffer_new_copy, into a kept buffer of n floats when there is one. */
TomoGpuBuffer     *_tomo_gpu_buffer_pool_copy  (TomoGpuBufferPool *pool,
                                                int                device,
                                                const float       *d_src,
                                                size_t             n,
                                                cudaStream_t       stream,
                                                GError           **error);

/* Frees the kept buffers that do not hold n floats (on the calling
 * thread), so that a pool serving one size at a time keeps only that. */
void               _tomo_gpu_buffer_pool_trim  (TomoGpuBufferPool *pool,
                                                size_t             n);

/* Raw rows → line integrals on the device (gpu/tomo-gpu-preprocess.cu):
 * n_rows planes of `plane` values (rows of `width`) at d_raw, the rows'
 * flats and darks (n_rows × width each; unused unless normalise), into
 * d_out; the clamped and replaced counts of row r are added to
 * d_counts[2r] and d_counts[2r + 1]. */
typedef struct
{
  TomoGpuRawType      type;
  const void         *d_raw;
  const float        *d_flat;
  const float        *d_dark;
  gboolean            normalise;
  gboolean            apply_log;
  guint               n_rows;
  size_t              plane;
  guint               width;
  float              *d_out;
  unsigned long long *d_counts;
} TomoGpuPreprocessJob;

/* The one check of raw input (type, rows, a flat with a dark); has_out:
 * whether the caller has somewhere to put the result. */
gboolean _tomo_gpu_raw_rows_check    (const TomoGpuRawRows *rows,
                                      gboolean              has_out,
                                      GError              **error);
/* counts[r] (n_rows entries, may be NULL) from the device's per-row pairs
 * of clamped and replaced values in h_counts, each row `plane` values. */
void     _tomo_gpu_preprocess_counts (TomoGpuPreprocessCounts  *counts,
                                      const unsigned long long *h_counts,
                                      guint                     n_rows,
                                      size_t                    plane);
/* Launches `job` on `stream`. */
gboolean _tomo_gpu_preprocess_launch (const TomoGpuPreprocessJob *job,
                                      cudaStream_t                stream,
                                      GError                    **error);

/* The four taps one row is resampled with (TomoGpuVolumeJob.row_taps). */
typedef struct
{
  int   offset;
  float weights[4];
} TomoGpuRowTaps;

/* n_rows (≤ 4) planes of `plane` values, rows of `width`, from d_in into
 * d_out (distinct buffers), plane r resampled with taps[r], on `stream`. */
gboolean _tomo_gpu_row_taps_launch   (const float          *d_in,
                                      float                *d_out,
                                      guint                 n_rows,
                                      size_t                plane,
                                      guint                 width,
                                      const TomoGpuRowTaps *taps,
                                      cudaStream_t          stream,
                                      GError              **error);

/* n_rows (≤ 4) rows of map->n_proj × map->width values from d_in into the
 * rows of n_proj_out × width_out in d_out (distinct buffers), as
 * TomoGpuRowMap says; the maps on the device: d_weights (weighted) or
 * d_proj and d_col (stitched). */
gboolean _tomo_gpu_row_map_launch    (const float                *d_in,
                                      float                      *d_out,
                                      guint                       n_rows,
                                      const TomoGpuRowMap        *map,
                                      guint                       width_out,
                                      guint                       n_proj_out,
                                      const float                *d_weights,
                                      const TomoGpuMapProjection *d_proj,
                                      const TomoGpuMapColumn     *d_col,
                                      cudaStream_t                stream,
                                      GError                    **error);
