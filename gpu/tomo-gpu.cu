/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The GPU reconstruction context: device discovery, error reporting, the
 * cuFFT filtering of sinogram rows and the output buffer.  Back projection
 * itself lives in tomo-gpu-bp.cu; this unit only feeds it.
 *
 * Filtering, two ways (both kept, `tomolive bench` compares them):
 *   C2C pair — rows a and b of the padded sinogram become the real and the
 *     imaginary part of one complex row.  The filter response is real and
 *     even, so after forward transform × response × inverse transform the
 *     real part is filtered a and the imaginary part filtered b: half the
 *     transforms of the naive complex approach, no separate real path.
 *   R2C — one real-to-complex transform per row, × response, complex-to-real.
 * Both use the padded_width/2 + 1 coefficients of tomo_filter_response(),
 * which already include the FBP scale and the 1/padded_width of the
 * unnormalised inverse transform.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <string.h>

#include <cuda_runtime.h>
#include <cufft.h>

#include "tomo-gpu.h"
#include "tomo-gpu-tune.h"
#include "tomo-gpu-bp.h"
#include "tomo-gpu-private.h"
#include "tomo-gpu-filter.cuh"

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

/* The error code a failed CUDA call gets (TomoGpuError). */
int
_tomo_gpu_error_code (cudaError_t res)
{
  switch (res)
    {
    case cudaErrorMemoryAllocation:
      return TOMO_GPU_ERROR_OUT_OF_MEMORY;
    /* Sticky errors: the context is gone until the process ends (the
     * runtime's documentation says "the process must be terminated and
     * relaunched" for each).  A launch timeout is the watchdog of a GPU
     * that also drives a display. */
    case cudaErrorDevicesUnavailable:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorIllegalAddress:
    case cudaErrorECCUncorrectable:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
      return TOMO_GPU_ERROR_DEVICE_FAULT;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
      return TOMO_GPU_ERROR_NO_DEVICE;
    default:
      return TOMO_GPU_ERROR_CUDA;
    }
}

gboolean
_tomo_gpu_check_cuda (cudaError_t  res,
                      const char  *call,
                      const char  *file,
                      int          line,
                      GError     **error)
{
  guint64 limit;

  if (_tomo_gpu_fault_hit (TOMO_GPU_FAULT_POINT_CALL))
    res = cudaErrorDevicesUnavailable;
  if (G_LIKELY (res == cudaSuccess))
    return TRUE;

  /* Clear a non-sticky error so the context stays usable after, say, a
   * failed allocation. */
  cudaGetLastError ();
  limit = res == cudaErrorMemoryAllocation ? _tomo_gpu_fault_memory_limit () : 0;
  if (limit > 0)
    {
      g_autofree char *cap = g_format_size_full (limit, G_FORMAT_SIZE_IEC_UNITS);

      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY,
                   "%s failed: out of device memory (capped at %s by TOMO_GPU_MEMORY_LIMIT) at %s:%d",
                   call, cap, file, line);
      return FALSE;
    }
  g_set_error (error, TOMO_GPU_ERROR, _tomo_gpu_error_code (res), "%s failed: %s (%s) at %s:%d",
               call, cudaGetErrorString (res), cudaGetErrorName (res), file, line);
  return FALSE;
}

static const char *
cufft_result_to_string (cufftResult res)
{
  switch (res)
    {
    case CUFFT_SUCCESS: return "success";
    case CUFFT_INVALID_PLAN: return "invalid plan";
    case CUFFT_ALLOC_FAILED: return "allocation failed";
    case CUFFT_INVALID_TYPE: return "invalid type";
    case CUFFT_INVALID_VALUE: return "invalid value";
    case CUFFT_INTERNAL_ERROR: return "internal error";
    case CUFFT_EXEC_FAILED: return "execution failed";
    case CUFFT_SETUP_FAILED: return "setup failed";
    case CUFFT_INVALID_SIZE: return "invalid size";
    case CUFFT_INVALID_DEVICE: return "invalid device";
    case CUFFT_NO_WORKSPACE: return "no workspace";
    case CUFFT_NOT_IMPLEMENTED: return "not implemented";
    case CUFFT_NOT_SUPPORTED: return "not supported";
    default: return "unknown cuFFT error";
    }
}

gboolean
_tomo_gpu_check_cufft (cufftResult  res,
                       const char  *call,
                       const char  *file,
                       int          line,
                       GError     **error)
{
  if (G_LIKELY (res == CUFFT_SUCCESS))
    return TRUE;

  cudaGetLastError ();
  g_set_error (error, TOMO_GPU_ERROR,
               res == CUFFT_ALLOC_FAILED ? TOMO_GPU_ERROR_OUT_OF_MEMORY : TOMO_GPU_ERROR_CUFFT,
               "%s failed: %s (%d) at %s:%d", call, cufft_result_to_string (res),
               (int) res, file, line);
  return FALSE;
}

cudaError_t
_tomo_gpu_fault_launch (cudaError_t res)
{
  return res == cudaSuccess && _tomo_gpu_fault_hit (TOMO_GPU_FAULT_POINT_LAUNCH)
         ? cudaErrorLaunchFailure : res;
}

guint64
_tomo_gpu_device_room (int    device,
                       size_t free_b,
                       size_t total_b)
{
  guint64 limit = _tomo_gpu_fault_memory_limit (), used, base, added;

  if (limit == 0)
    return free_b;
  /* The device's use can fall below the baseline when another process
   * frees memory: then nothing of it is this process's. */
  used = total_b - free_b;
  base = _tomo_gpu_fault_baseline (device, used);
  added = used > base ? used - base : 0;
  return MIN ((guint64) free_b, limit > added ? limit - added : 0);
}

/* Device allocations pass here (tomo-gpu-private.h): an injected failure,
 * or the cap of TOMO_GPU_MEMORY_LIMIT on what this process added to the
 * device's use since its first allocation there. */
static cudaError_t
fault_check_alloc (size_t size)
{
  size_t free_b, total_b;
  int device = 0;

  if (_tomo_gpu_fault_hit (TOMO_GPU_FAULT_POINT_ALLOC))
    return _tomo_gpu_fault_is_lost () ? cudaErrorDevicesUnavailable : cudaErrorMemoryAllocation;
  if (_tomo_gpu_fault_memory_limit () == 0)
    return cudaSuccess;
  if (cudaGetDevice (&device) != cudaSuccess || cudaMemGetInfo (&free_b, &total_b) != cudaSuccess)
    {
      cudaGetLastError ();
      return cudaErrorMemoryAllocation;
    }
  return size > _tomo_gpu_device_room (device, free_b, total_b) ? cudaErrorMemoryAllocation
                                                                 : cudaSuccess;
}

cudaError_t
_tomo_gpu_malloc (void  **ptr,
                  size_t  size)
{
  cudaError_t res = fault_check_alloc (size);

  if (res != cudaSuccess)
    {
      *ptr = NULL;
      return res;
    }
  return (cudaMalloc) (ptr, size);
}

cudaError_t
_tomo_gpu_malloc_pitch (void  **ptr,
                        size_t *pitch,
                        size_t  width,
                        size_t  height)
{
  cudaError_t res = fault_check_alloc (width * height);

  if (res != cudaSuccess)
    {
      *ptr = NULL;
      return res;
    }
  return (cudaMallocPitch) (ptr, pitch, width, height);
}

void
_tomo_gpu_warn_cuda (cudaError_t  res,
                     const char  *call,
                     const char  *file,
                     int          line)
{
  if (G_LIKELY (res == cudaSuccess))
    return;
  cudaGetLastError ();
  g_warning ("%s failed: %s at %s:%d (ignored during cleanup)",
             call, cudaGetErrorString (res), file, line);
}

/* ------------------------------------------------------------------------ */
/* Kernels and devices                                                       */

int
tomo_gpu_get_n_devices (void)
{
  int n = 0;

  if (_tomo_gpu_fault_is_lost ())
    return 0;
  if (cudaGetDeviceCount (&n) != cudaSuccess)
    {
      cudaGetLastError ();
      return 0;
    }
  return n;
}

char *
tomo_gpu_get_device_name (int device)
{
  cudaDeviceProp prop;

  if (device < 0 || device >= tomo_gpu_get_n_devices ())
    return NULL;
  if (cudaGetDeviceProperties (&prop, device) != cudaSuccess)
    {
      cudaGetLastError ();
      return NULL;
    }
  return g_strdup_printf ("%s (sm_%d%d, %d SMs)", prop.name, prop.major,
                          prop.minor, prop.multiProcessorCount);
}

gboolean
tomo_gpu_get_device_clocks (int  device,
                            int *sm_khz,
                            int *mem_khz)
{
  int sm = 0, mem = 0;

  if (device < 0 || device >= tomo_gpu_get_n_devices ())
    return FALSE;
  if (cudaDeviceGetAttribute (&sm, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute (&mem, cudaDevAttrMemoryClockRate, device) != cudaSuccess)
    {
      cudaGetLastError ();
      return FALSE;
    }
  if (sm_khz)
    *sm_khz = sm;
  if (mem_khz)
    *mem_khz = mem;
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Tuning table for `auto`                                                   */

char *
tomo_gpu_get_tune_path (int device)
{
  cudaDeviceProp prop;
  g_autofree char *base = NULL;

  if (device < 0 || device >= tomo_gpu_get_n_devices ())
    return NULL;
  if (cudaGetDeviceProperties (&prop, device) != cudaSuccess)
    {
      cudaGetLastError ();
      return NULL;
    }
  /* The device name may hold spaces and slashes: keep a file-name-safe form. */
  base = g_strdup_printf ("tune-%s.ini", prop.name);
  for (char *p = base; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '.' && *p != '-' && *p != '_')
      *p = '_';
  return g_build_filename (g_get_user_cache_dir (), "tomolive", base, NULL);
}

/* ------------------------------------------------------------------------ */
/* Context                                                                   */

struct _TomoGpuContext
{
  int device;
  cudaStream_t stream;
  cudaEvent_t ev_filter[2];
  cudaEvent_t ev_bp[2];
  TomoBp *bp;

  guint width, n_proj;
  double *angles;           /* of the geometry, for the sweep's back projector */

  guint padded;
  int pad_mode;
  float *d_response;
  size_t d_response_size;
  TomoGpuFilterMethod method;

  cufftHandle plan_c2c;
  guint plan_c2c_batch, plan_c2c_padded;
  cufftHandle plan_r2c, plan_c2r;
  guint plan_r_batch, plan_r_padded;

  float *d_sino;
  size_t d_sino_size;
  float *d_sino_taps;       /* load_raw with taps: the rows resampled */
  size_t d_sino_taps_size;
  /* load_raw with a map: the rows mapped, the maps on the device and the
   * host's copy they were made from (compared by value). */
  float *d_sino_mapped;
  size_t d_sino_mapped_size;
  void *d_map;
  size_t d_map_size;
  guchar *map_key;
  gsize map_key_size;
  cufftComplex *d_complex;
  size_t d_complex_size;
  float *d_real;
  size_t d_real_size;
  float *d_filtered;
  size_t d_filtered_size;
  guint loaded_slices;

  float *d_out;
  size_t d_out_size;
  guint out_slices, out_width, out_height;

  /* backproject_centers: 4 shifted copies of the sinogram, their own back
   * projector (the main one keeps the loaded sinograms) and its 4 planes. */
  TomoBp *sweep_bp;
  float *d_shifted;
  size_t d_shifted_size;
  float *d_lanes;
  size_t d_lanes_size;

  /* load_raw: the raw rows, their flats and darks, the counts, events
   * around the upload and the preprocessing (made on first use). */
  void *d_raw;
  size_t d_raw_size;
  float *d_flat_dark;
  size_t d_flat_dark_size;
  unsigned long long *d_counts;
  size_t d_counts_size;
  cudaEvent_t ev_load[3];
  double upload_ms, preprocess_ms;

  TomoGpuKernel last_kernel;
  double filter_ms, bp_ms;
  GKeyFile *tune;
  TomoGpuStatsWork *stats;
};

/* C2C pair was the faster in `tomolive bench` on the H100 (docs/PERFORMANCE.md). */
#define DEFAULT_FILTER_METHOD TOMO_GPU_FILTER_METHOD_C2C_PAIR

static gboolean
ensure_buffer (void      **ptr,
               size_t     *have,
               size_t      need,
               const char *what,
               GError    **error)
{
  cudaError_t res;

  if (*ptr != NULL && *have >= need)
    return TRUE;
  TOMO_CUDA_FREE (*ptr);
  *have = 0;
  res = cudaMalloc (ptr, need);
  if (res != cudaSuccess)
    {
      guint64 limit = _tomo_gpu_fault_memory_limit ();
      g_autofree char *cap = limit > 0 && res == cudaErrorMemoryAllocation
                             ? g_strdup_printf (" (capped at %.1f MiB by TOMO_GPU_MEMORY_LIMIT)",
                                                limit / 1048576.0)
                             : g_strdup ("");

      *ptr = NULL;
      cudaGetLastError ();
      g_set_error (error, TOMO_GPU_ERROR, _tomo_gpu_error_code (res),
                   "Cannot allocate %.1f MiB of GPU memory for the %s: %s%s",
                   need / 1048576.0, what, cudaGetErrorString (res), cap);
      return FALSE;
    }
  *have = need;
  return TRUE;
}

static void
destroy_plans (TomoGpuContext *ctx)
{
  if (ctx->plan_c2c_batch)
    cufftDestroy (ctx->plan_c2c);
  if (ctx->plan_r_batch)
    {
      cufftDestroy (ctx->plan_r2c);
      cufftDestroy (ctx->plan_c2r);
    }
  ctx->plan_c2c_batch = ctx->plan_r_batch = 0;
}

static void
load_tuning (TomoGpuContext *ctx)
{
  g_autofree char *path = tomo_gpu_get_tune_path (ctx->device);
  g_autoptr(GKeyFile) kf = g_key_file_new ();

  g_clear_pointer (&ctx->tune, g_key_file_unref);
  /* A missing or broken table only means `auto` uses the built-in choice. */
  if (path != NULL && g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
    ctx->tune = (GKeyFile *) g_steal_pointer (&kf);
}

void
tomo_gpu_context_reload_tuning (TomoGpuContext *ctx)
{
  g_return_if_fail (ctx != NULL);
  load_tuning (ctx);
}

/* The kernel table lookup for `auto`; AUTO when the table has no entry. */
static TomoGpuKernel
resolve_kernel (TomoGpuContext *ctx,
                guint           n_slices,
                int             interp,
                guint           roi_width)
{
  g_autofree char *key = NULL;
  g_autofree char *name = NULL;
  TomoGpuKernel kernel;

  if (ctx->tune == NULL)
    return TOMO_GPU_KERNEL_AUTO;
  key = tomo_gpu_tune_key (n_slices, interp, tomo_gpu_size_class (roi_width));
  name = g_key_file_get_string (ctx->tune, "auto", key, NULL);
  if (name == NULL || !tomo_gpu_kernel_from_string (g_strstrip (name), &kernel, NULL))
    return TOMO_GPU_KERNEL_AUTO;
  if (kernel == TOMO_GPU_KERNEL_AUTO || !tomo_bp_supports (kernel, n_slices, interp))
    return TOMO_GPU_KERNEL_AUTO;
  return kernel;
}

/* Why cudaGetDeviceCount() found no device, in the user's terms: the
 * runtime says "driver version is insufficient" where no driver is loaded
 * at all. */
static char *
no_device_reason (cudaError_t res)
{
  int runtime = 0, driver = 0;

  if (res == cudaSuccess || res == cudaErrorNoDevice)
    return g_strdup ("no device found");
  if (res == cudaErrorInsufficientDriver)
    {
      /* The driver's version is 0 where no driver library loads at all. */
      cudaRuntimeGetVersion (&runtime);
      if (cudaDriverGetVersion (&driver) != cudaSuccess || driver == 0)
        return g_strdup ("no NVIDIA driver is loaded on this machine");
      if (driver < runtime)
        return g_strdup_printf ("the NVIDIA driver supports CUDA %d.%d, this build needs %d.%d",
                                driver / 1000, driver % 1000 / 10, runtime / 1000,
                                runtime % 1000 / 10);
    }
  return g_strdup (cudaGetErrorString (res));
}

gboolean
_tomo_gpu_set_device (int      device,
                      GError **error)
{
  int n = 0;
  cudaError_t res = cudaGetDeviceCount (&n);

  if (res != cudaSuccess || n == 0)
    {
      g_autofree char *why = no_device_reason (res);

      cudaGetLastError ();
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE, "No CUDA device available: %s",
                   why);
      return FALSE;
    }
  if (device < 0 || device >= n)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE,
                   "No CUDA device %d (%d present)", device, n);
      return FALSE;
    }
  return TOMO_CUDA_CHECK (cudaSetDevice (device), error);
}

TomoGpuContext *
tomo_gpu_context_new (int      device,
                      GError **error)
{
  TomoGpuContext *ctx;

  if (!_tomo_gpu_set_device (device, error))
    return NULL;

  ctx = g_new0 (TomoGpuContext, 1);
  ctx->device = device;
  ctx->method = TOMO_GPU_FILTER_METHOD_DEFAULT;
  ctx->last_kernel = TOMO_GPU_KERNEL_AUTO;

  if (!TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&ctx->stream, cudaStreamNonBlocking), error))
    {
      g_free (ctx);
      return NULL;
    }
  for (int i = 0; i < 2; i++)
    if (!TOMO_CUDA_CHECK (cudaEventCreate (&ctx->ev_filter[i]), error) ||
        !TOMO_CUDA_CHECK (cudaEventCreate (&ctx->ev_bp[i]), error))
      {
        tomo_gpu_context_free (ctx);
        return NULL;
      }
  ctx->bp = tomo_bp_new (device, error);
  if (ctx->bp == NULL)
    {
      tomo_gpu_context_free (ctx);
      return NULL;
    }
  load_tuning (ctx);
  return ctx;
}

void
tomo_gpu_context_free (TomoGpuContext *ctx)
{
  if (ctx == NULL)
    return;
  TOMO_CUDA_WARN (cudaSetDevice (ctx->device));
  if (ctx->stream)
    TOMO_CUDA_WARN (cudaStreamSynchronize (ctx->stream));
  g_clear_pointer (&ctx->bp, tomo_bp_free);
  g_clear_pointer (&ctx->sweep_bp, tomo_bp_free);
  g_clear_pointer (&ctx->angles, g_free);
  destroy_plans (ctx);
  TOMO_CUDA_FREE (ctx->d_shifted, ctx->d_lanes, ctx->d_response, ctx->d_sino, ctx->d_sino_taps, ctx->d_complex, ctx->d_real,
                  ctx->d_filtered, ctx->d_out, ctx->d_raw, ctx->d_flat_dark, ctx->d_counts,
                  ctx->d_sino_mapped, ctx->d_map);
  g_clear_pointer (&ctx->map_key, g_free);
  g_clear_pointer (&ctx->stats, _tomo_gpu_stats_work_free);
  TOMO_CUDA_EVENT_DESTROY (ctx->ev_load[0], ctx->ev_load[1], ctx->ev_load[2], ctx->ev_filter[0], ctx->ev_filter[1],
                           ctx->ev_bp[0], ctx->ev_bp[1]);
  TOMO_CUDA_STREAM_DESTROY (ctx->stream);
  g_clear_pointer (&ctx->tune, g_key_file_unref);
  g_free (ctx);
}

int
tomo_gpu_context_get_device (TomoGpuContext *ctx)
{
  g_return_val_if_fail (ctx != NULL, -1);
  return ctx->device;
}

gboolean
tomo_gpu_context_set_geometry (TomoGpuContext *ctx,
                               guint           width,
                               guint           n_proj,
                               const double   *angles,
                               GError        **error)
{
  g_return_val_if_fail (ctx != NULL, FALSE);

  if (width == 0 || n_proj == 0 || angles == NULL)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid GPU geometry: width %u, %u projections%s", width, n_proj,
                   angles == NULL ? ", no angles" : "");
      return FALSE;
    }
  for (guint i = 0; i < n_proj; i++)
    if (!isfinite (angles[i]))
      {
        g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                     "Invalid GPU geometry: angle %u is not finite", i);
        return FALSE;
      }
  if (!TOMO_CUDA_CHECK (cudaSetDevice (ctx->device), error))
    return FALSE;

  ctx->loaded_slices = 0;
  ctx->width = 0;
  ctx->n_proj = 0;
  g_clear_pointer (&ctx->sweep_bp, tomo_bp_free);
  g_clear_pointer (&ctx->angles, g_free);
  if (!tomo_bp_set_geometry (ctx->bp, width, n_proj, angles, error))
    return FALSE;
  ctx->angles = (double *) g_memdup2 (angles, sizeof (double) * n_proj);
  ctx->width = width;
  ctx->n_proj = n_proj;
  return TRUE;
}

float *
_tomo_gpu_response_to_float (const double *response,
                             guint         n_coef,
                             GError      **error)
{
  g_autofree float *resp = g_new (float, n_coef);

  for (guint i = 0; i < n_coef; i++)
    {
      if (!isfinite (response[i]))
        {
          g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                       "Filter response coefficient %u is not finite", i);
          return NULL;
        }
      resp[i] = (float) response[i];
    }
  return g_steal_pointer (&resp);
}

gboolean
tomo_gpu_context_set_filter (TomoGpuContext *ctx,
                             guint           padded_width,
                             const double   *response,
                             int             pad_mode,
                             GError        **error)
{
  guint n_coef;
  g_autofree float *resp = NULL;

  g_return_val_if_fail (ctx != NULL, FALSE);

  if (ctx->width == 0)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                           "Set the GPU geometry before the filter");
      return FALSE;
    }
  if (padded_width < 2 * ctx->width || padded_width % 2 != 0 || padded_width > G_MAXINT / 2)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid padded width %u for detector width %u (needs an even width ≥ %u)",
                   padded_width, ctx->width, 2 * ctx->width);
      return FALSE;
    }
  if (pad_mode != 0 && pad_mode != 1)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid padding mode %d (0 zero, 1 edge)", pad_mode);
      return FALSE;
    }
  if (response == NULL)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                           "No filter response given");
      return FALSE;
    }
  n_coef = padded_width / 2 + 1;
  resp = _tomo_gpu_response_to_float (response, n_coef, error);
  if (resp == NULL)
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (ctx->device), error))
    return FALSE;
  ctx->padded = 0;
  ctx->loaded_slices = 0;
  if (!ensure_buffer ((void **) &ctx->d_response, &ctx->d_response_size,
                      n_coef * sizeof (float), "filter response", error))
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaMemcpyAsync (ctx->d_response, resp, n_coef * sizeof (float),
                                         cudaMemcpyHostToDevice, ctx->stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (ctx->stream), error))
    return FALSE;
  ctx->padded = padded_width;
  ctx->pad_mode = pad_mode;
  return TRUE;
}

void
tomo_gpu_context_set_filter_method (TomoGpuContext     *ctx,
                                    TomoGpuFilterMethod method)
{
  g_return_if_fail (ctx != NULL);
  g_return_if_fail (method >= TOMO_GPU_FILTER_METHOD_DEFAULT &&
                    method <= TOMO_GPU_FILTER_METHOD_R2C);
  ctx->method = method;
}

TomoGpuFilterMethod
tomo_gpu_context_get_filter_method (TomoGpuContext *ctx)
{
  g_return_val_if_fail (ctx != NULL, DEFAULT_FILTER_METHOD);
  return ctx->method == TOMO_GPU_FILTER_METHOD_DEFAULT ? DEFAULT_FILTER_METHOD : ctx->method;
}

/* ---- filtering kernels ----
 * Padding and cropping are tomo-gpu-filter.cuh's, named here as in errors. */
static constexpr auto pad_pair_kernel = pad_rows_kernel<cufftComplex, false>;
static constexpr auto extract_pair_kernel = extract_rows_kernel<cufftComplex>;
static constexpr auto pad_real_kernel = pad_rows_kernel<float, false>;
static constexpr auto extract_real_kernel = extract_rows_kernel<float>;

/* Multiplies the n_coef spectrum bins of each row (or row pair) by the
 * filter's response.  With mirror = padded (a whole complex spectrum) bin k
 * and bin padded − k share a coefficient, the response being even; with
 * mirror = 0 (the half spectrum of a real transform) each bin has its own. */
__global__ static void
multiply_kernel (cufftComplex *__restrict__ data,
                 const float  *__restrict__ response,
                 unsigned      n_coef,
                 unsigned      n_rows,
                 unsigned      mirror)
{
  unsigned k = blockIdx.x * blockDim.x + threadIdx.x;

  if (k >= n_coef)
    return;
  float f = response[mirror != 0 && k > mirror / 2 ? mirror - k : k];
  for (unsigned r = blockIdx.y; r < n_rows; r += gridDim.y)
    {
      cufftComplex *v = data + (size_t) r * n_coef + k;
      v->x *= f;
      v->y *= f;
    }
}

static dim3
rows_grid (unsigned n_cols,
           unsigned n_rows,
           unsigned block)
{
  return dim3 ((n_cols + block - 1) / block, MIN (MAX (n_rows, 1u), 65535u));
}

gboolean
_tomo_gpu_filter_multiply (cufftComplex *data,
                           const float  *response,
                           guint         n_coef,
                           guint         n_rows,
                           guint         mirror,
                           cudaStream_t  stream,
                           GError      **error)
{
  const unsigned block = 256;

  return TOMO_CUDA_LAUNCH (multiply_kernel, rows_grid (n_coef, n_rows, block), block, stream, error,
                           data, response, n_coef, n_rows, mirror);
}

static gboolean
ensure_plans (TomoGpuContext      *ctx,
              TomoGpuFilterMethod  method,
              guint                n_rows,
              GError             **error)
{
  int n = (int) ctx->padded;

  if (method == TOMO_GPU_FILTER_METHOD_C2C_PAIR)
    {
      guint batch = (n_rows + 1) / 2;

      if (ctx->plan_c2c_batch == batch && ctx->plan_c2c_padded == ctx->padded)
        return TRUE;
      if (ctx->plan_c2c_batch)
        cufftDestroy (ctx->plan_c2c);
      ctx->plan_c2c_batch = 0;
      if (!TOMO_CUFFT_CHECK (cufftPlanMany (&ctx->plan_c2c, 1, &n, NULL, 1, n, NULL, 1, n,
                                            CUFFT_C2C, (int) batch), error))
        return FALSE;
      ctx->plan_c2c_batch = batch;
      ctx->plan_c2c_padded = ctx->padded;
    }
  else
    {
      if (ctx->plan_r_batch == n_rows && ctx->plan_r_padded == ctx->padded)
        return TRUE;
      if (ctx->plan_r_batch)
        {
          cufftDestroy (ctx->plan_r2c);
          cufftDestroy (ctx->plan_c2r);
        }
      ctx->plan_r_batch = 0;
      if (!TOMO_CUFFT_CHECK (cufftPlanMany (&ctx->plan_r2c, 1, &n, NULL, 1, n, NULL, 1, n / 2 + 1,
                                            CUFFT_R2C, (int) n_rows), error))
        return FALSE;
      if (!TOMO_CUFFT_CHECK (cufftPlanMany (&ctx->plan_c2r, 1, &n, NULL, 1, n / 2 + 1, NULL, 1, n,
                                            CUFFT_C2R, (int) n_rows), error))
        {
          cufftDestroy (ctx->plan_r2c);
          return FALSE;
        }
      ctx->plan_r_batch = n_rows;
      ctx->plan_r_padded = ctx->padded;
    }
  return TRUE;
}

static gboolean
check_slices (guint    n_slices,
              GError **error)
{
  if (n_slices == 1 || n_slices == 2 || n_slices == 4)
    return TRUE;
  g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
               "Invalid number of slices %u (1, 2 or 4 are packed per back projection)",
               n_slices);
  return FALSE;
}

static gboolean
check_ready (TomoGpuContext *ctx,
             gboolean        need_filter,
             GError        **error)
{
  if (ctx->width == 0)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                           "GPU geometry not set (width 0)");
      return FALSE;
    }
  if (need_filter && ctx->padded == 0)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                           "GPU filter not set");
      return FALSE;
    }
  return TRUE;
}

gboolean
_tomo_gpu_context_filter_rows (TomoGpuContext *ctx,
                               guint           n_slices,
                               const float    *d_sinos,
                               cudaStream_t    stream,
                               GError        **error)
{
  TomoGpuFilterMethod method = tomo_gpu_context_get_filter_method (ctx);
  guint W = ctx->width, P = ctx->padded;
  guint n_rows = n_slices * ctx->n_proj;
  guint n_tail = P - W;
  guint n_left = n_tail / 2;   /* as the CPU backend splits the tail */
  size_t filtered_size = (size_t) n_rows * W * sizeof (float);
  const unsigned block = 256;

  ctx->loaded_slices = 0;
  if (!ensure_buffer ((void **) &ctx->d_filtered, &ctx->d_filtered_size, filtered_size,
                      "filtered sinograms", error))
    return FALSE;
  if (!ensure_plans (ctx, method, n_rows, error))
    return FALSE;

  if (!TOMO_CUDA_CHECK (cudaEventRecord (ctx->ev_filter[0], stream), error))
    return FALSE;
  if (method == TOMO_GPU_FILTER_METHOD_C2C_PAIR)
    {
      guint n_pairs = (n_rows + 1) / 2;

      if (!ensure_buffer ((void **) &ctx->d_complex, &ctx->d_complex_size,
                          (size_t) n_pairs * P * sizeof (cufftComplex), "padded rows", error))
        return FALSE;
      if (!TOMO_CUDA_LAUNCH (pad_pair_kernel, rows_grid (P, n_pairs, block), block, stream, error,
                             d_sinos, NULL, NULL, 0, 0, ctx->d_complex, W, P, n_rows, n_left,
                             ctx->pad_mode) ||
          !TOMO_CUFFT_CHECK (cufftSetStream (ctx->plan_c2c, stream), error) ||
          !TOMO_CUFFT_CHECK (cufftExecC2C (ctx->plan_c2c, ctx->d_complex, ctx->d_complex,
                                           CUFFT_FORWARD), error) ||
          !_tomo_gpu_filter_multiply (ctx->d_complex, ctx->d_response, P, n_pairs, P, stream, error) ||
          !TOMO_CUFFT_CHECK (cufftExecC2C (ctx->plan_c2c, ctx->d_complex, ctx->d_complex,
                                           CUFFT_INVERSE), error) ||
          !TOMO_CUDA_LAUNCH (extract_pair_kernel, rows_grid (W, n_pairs, block), block, stream, error,
                             ctx->d_complex, ctx->d_filtered, NULL, W, P, n_rows))
        return FALSE;
    }
  else
    {
      guint n_coef = P / 2 + 1;

      if (!ensure_buffer ((void **) &ctx->d_real, &ctx->d_real_size,
                          (size_t) n_rows * P * sizeof (float), "padded rows", error) ||
          !ensure_buffer ((void **) &ctx->d_complex, &ctx->d_complex_size,
                          (size_t) n_rows * n_coef * sizeof (cufftComplex), "row spectra", error))
        return FALSE;
      if (!TOMO_CUDA_LAUNCH (pad_real_kernel, rows_grid (P, n_rows, block), block, stream, error,
                             d_sinos, NULL, NULL, 0, 0, ctx->d_real, W, P, n_rows, n_left,
                             ctx->pad_mode) ||
          !TOMO_CUFFT_CHECK (cufftSetStream (ctx->plan_r2c, stream), error) ||
          !TOMO_CUFFT_CHECK (cufftSetStream (ctx->plan_c2r, stream), error) ||
          !TOMO_CUFFT_CHECK (cufftExecR2C (ctx->plan_r2c, ctx->d_real, ctx->d_complex), error) ||
          !_tomo_gpu_filter_multiply (ctx->d_complex, ctx->d_response, n_coef, n_rows, 0, stream, error) ||
          !TOMO_CUFFT_CHECK (cufftExecC2R (ctx->plan_c2r, ctx->d_complex, ctx->d_real), error) ||
          !TOMO_CUDA_LAUNCH (extract_real_kernel, rows_grid (W, n_rows, block), block, stream, error,
                             ctx->d_real, ctx->d_filtered, NULL, W, P, n_rows))
        return FALSE;
    }
  return TOMO_CUDA_CHECK (cudaEventRecord (ctx->ev_filter[1], stream), error);
}

gboolean
_tomo_gpu_context_filter_device (TomoGpuContext *ctx,
                                 guint           n_slices,
                                 const float    *d_sinos,
                                 cudaStream_t    stream,
                                 GError        **error)
{
  if (!_tomo_gpu_context_filter_rows (ctx, n_slices, d_sinos, stream, error) ||
      !tomo_bp_set_sinograms (ctx->bp, ctx->d_filtered, n_slices, stream, error))
    return FALSE;
  ctx->loaded_slices = n_slices;
  return TRUE;
}

gboolean
_tomo_gpu_ensure_buffer (void      **ptr,
                         size_t     *have,
                         size_t      need,
                         const char *what,
                         GError    **error)
{
  return ensure_buffer (ptr, have, need, what, error);
}

gboolean
_tomo_gpu_alloc_device (void      **ptr,
                        size_t      size,
                        const char *what,
                        GError    **error)
{
  size_t have = 0;

  *ptr = NULL;
  return ensure_buffer (ptr, &have, size, what, error);
}

gboolean
_tomo_gpu_alloc_pinned (void      **ptr,
                        size_t      size,
                        const char *what,
                        GError    **error)
{
  cudaError_t res = cudaHostAlloc (ptr, size, cudaHostAllocDefault);

  if (res == cudaSuccess)
    return TRUE;
  *ptr = NULL;
  cudaGetLastError ();
  /* cudaHostAlloc answers a lack of host memory with "out of memory"
   * too; anything else (a device fault, no device) keeps its own code. */
  g_set_error (error, TOMO_GPU_ERROR, _tomo_gpu_error_code (res),
               "Cannot allocate %.1f MiB of pinned host memory for %s: %s",
               size / 1048576.0, what, cudaGetErrorString (res));
  return FALSE;
}

const float *
_tomo_gpu_context_get_filtered_device (TomoGpuContext *ctx)
{
  return ctx->d_filtered;
}

/* What both loads start with: the checks, then n_slices planes of
 * n_proj × width floats from `host` into *buffer (grown as needed) on the
 * context's stream, without waiting. */
static gboolean
upload_planes (TomoGpuContext *ctx,
               guint           n_slices,
               const float    *host,
               gboolean        filter,
               float         **buffer,
               size_t         *buffer_size,
               const char     *what,
               GError        **error)
{
  size_t size;

  if (!check_slices (n_slices, error) || !check_ready (ctx, filter, error))
    return FALSE;
  if (host == NULL)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "No sinograms given");
      return FALSE;
    }
  if (!TOMO_CUDA_CHECK (cudaSetDevice (ctx->device), error))
    return FALSE;
  size = (size_t) n_slices * ctx->n_proj * ctx->width * sizeof (float);
  ctx->loaded_slices = 0;
  return ensure_buffer ((void **) buffer, buffer_size, size, what, error) &&
         TOMO_CUDA_CHECK (cudaMemcpyAsync (*buffer, host, size, cudaMemcpyHostToDevice,
                                           ctx->stream), error);
}

gboolean
tomo_gpu_context_load_sinograms (TomoGpuContext *ctx,
                                 guint           n_slices,
                                 const float    *sinos,
                                 GError        **error)
{
  float ms = 0.0f;

  g_return_val_if_fail (ctx != NULL, FALSE);

  if (!upload_planes (ctx, n_slices, sinos, TRUE, &ctx->d_sino, &ctx->d_sino_size, "sinograms",
                      error))
    return FALSE;
  if (!_tomo_gpu_context_filter_device (ctx, n_slices, ctx->d_sino, ctx->stream, error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (ctx->stream), error))
    {
      ctx->loaded_slices = 0;
      return FALSE;
    }
  if (TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, ctx->ev_filter[0], ctx->ev_filter[1]), NULL))
    ctx->filter_ms = ms;
  return TRUE;
}

/* `map` (of load_raw) checked against the context's geometry and on the
 * device: uploaded when it differs from the last one.  The maps are compared
 * by value (another scan's may be equal, a freed one's address reused). */
static gboolean
ensure_map (TomoGpuContext      *ctx,
            const TomoGpuRowMap *map,
            GError             **error)
{
  gboolean weighted = map->weights != NULL;
  guint header[3] = { map->width, map->n_proj, weighted ? 1u : 0u };
  gsize n_proj_bytes = weighted ? 0 : ctx->n_proj * sizeof (TomoGpuMapProjection);
  gsize n_col_bytes = weighted ? 0 : ctx->width * sizeof (TomoGpuMapColumn);
  gsize size = sizeof header + (weighted ? map->n_proj * sizeof (float) : n_proj_bytes + n_col_bytes);
  g_autofree guchar *key = NULL;
  const char *bad = NULL;

  /* Checked first: a map without tables has no key to compare. */
  if (map->width == 0 || map->n_proj == 0)
    bad = "no input rows";
  else if (weighted && (map->width != ctx->width || map->n_proj != ctx->n_proj))
    bad = "weights for another geometry";
  else if (!weighted && (map->proj == NULL || map->col == NULL))
    bad = "neither weights nor stitching maps";
  for (guint k = 0; bad == NULL && !weighted && k < ctx->n_proj; k++)
    if (map->proj[k].direct >= map->n_proj || map->proj[k].below >= map->n_proj
        || map->proj[k].above >= map->n_proj)
      bad = "a projection beyond the input rows";
  for (guint u = 0; bad == NULL && !weighted && u < ctx->width; u++)
    if (map->col[u].direct < -1 || map->col[u].direct >= (int) map->width
        || map->col[u].mirror < -1 || map->col[u].mirror >= (int) map->width)
      bad = "a column beyond the input rows";
  if (bad != NULL)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Row map of %u × %u into %u × %u: %s", map->n_proj, map->width, ctx->n_proj,
                   ctx->width, bad);
      return FALSE;
    }
  key = (guchar *) g_malloc (size);
  memcpy (key, header, sizeof header);
  if (weighted)
    memcpy (key + sizeof header, map->weights, map->n_proj * sizeof (float));
  else
    {
      memcpy (key + sizeof header, map->proj, n_proj_bytes);
      memcpy (key + sizeof header + n_proj_bytes, map->col, n_col_bytes);
    }
  if (ctx->map_key != NULL && ctx->map_key_size == size && memcmp (ctx->map_key, key, size) == 0)
    return TRUE;
  g_clear_pointer (&ctx->map_key, g_free);
  if (!ensure_buffer (&ctx->d_map, &ctx->d_map_size, size - sizeof header, "row maps", error) ||
      !TOMO_CUDA_CHECK (cudaMemcpyAsync (ctx->d_map, key + sizeof header, size - sizeof header,
                                         cudaMemcpyHostToDevice, ctx->stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (ctx->stream), error))
    return FALSE;
  ctx->map_key = (guchar *) g_steal_pointer (&key);
  ctx->map_key_size = size;
  return TRUE;
}

gboolean
tomo_gpu_context_load_raw (TomoGpuContext          *ctx,
                           const TomoGpuRawRows    *rows,
                           TomoGpuPreprocessCounts *counts,
                           GError                 **error)
{
  g_return_val_if_fail (ctx != NULL && rows != NULL, FALSE);

  const guint n_slices = rows->n_rows;
  const TomoGpuRowMap *map = rows->map;
  gboolean normalise = rows->flat != NULL && rows->dark != NULL;
  /* The rows as they come (the map's input) and as the context takes them. */
  guint width = map != NULL ? map->width : ctx->width;
  size_t plane, plane_out, raw_bytes, fd_bytes;
  unsigned long long h_counts[2 * 4];
  float ms = 0.0f;
  gboolean ok;

  if (!check_slices (n_slices, error) || !check_ready (ctx, TRUE, error) ||
      !_tomo_gpu_raw_rows_check (rows, TRUE, error))
    return FALSE;
  plane = (size_t) (map != NULL ? map->n_proj : ctx->n_proj) * width;
  plane_out = (size_t) ctx->n_proj * ctx->width;
  raw_bytes = n_slices * plane * tomo_gpu_raw_type_size (rows->type);
  fd_bytes = (size_t) n_slices * width * sizeof (float);
  ctx->loaded_slices = 0;
  ok = TOMO_CUDA_CHECK (cudaSetDevice (ctx->device), error) &&
       (map == NULL || ensure_map (ctx, map, error));
  for (int i = 0; i < 3 && ok; i++)
    if (ctx->ev_load[i] == NULL)
      ok = TOMO_CUDA_CHECK (cudaEventCreate (&ctx->ev_load[i]), error);
  ok = ok &&
       ensure_buffer (&ctx->d_raw, &ctx->d_raw_size, raw_bytes, "raw rows", error) &&
       ensure_buffer ((void **) &ctx->d_sino, &ctx->d_sino_size, n_slices * plane * sizeof (float),
                      "sinograms", error) &&
       ensure_buffer ((void **) &ctx->d_flat_dark, &ctx->d_flat_dark_size, 2 * fd_bytes,
                      "flat and dark rows", error) &&
       ensure_buffer ((void **) &ctx->d_counts, &ctx->d_counts_size, sizeof h_counts,
                      "preprocessing counts", error) &&
       TOMO_CUDA_CHECK (cudaEventRecord (ctx->ev_load[0], ctx->stream), error) &&
       TOMO_CUDA_CHECK (cudaMemcpyAsync (ctx->d_raw, rows->raw, raw_bytes, cudaMemcpyHostToDevice,
                                         ctx->stream), error);
  if (ok && normalise)
    ok = TOMO_CUDA_CHECK (cudaMemcpyAsync (ctx->d_flat_dark, rows->flat, fd_bytes,
                                           cudaMemcpyHostToDevice, ctx->stream), error) &&
         TOMO_CUDA_CHECK (cudaMemcpyAsync ((char *) ctx->d_flat_dark + fd_bytes, rows->dark, fd_bytes,
                                           cudaMemcpyHostToDevice, ctx->stream), error);
  TomoGpuPreprocessJob pre = { rows->type, ctx->d_raw, ctx->d_flat_dark,
                               ctx->d_flat_dark + (size_t) n_slices * width, normalise, rows->apply_log,
                               n_slices, plane, width, ctx->d_sino, ctx->d_counts };
  const float *sinos = ctx->d_sino;

  ok = ok &&
       TOMO_CUDA_CHECK (cudaMemsetAsync (ctx->d_counts, 0, sizeof h_counts, ctx->stream), error) &&
       TOMO_CUDA_CHECK (cudaEventRecord (ctx->ev_load[1], ctx->stream), error) &&
       _tomo_gpu_preprocess_launch (&pre, ctx->stream, error);
  if (ok && rows->tap_offsets != NULL && rows->tap_weights != NULL)
    {
      /* The rows resampled (a tilt corrected) count as preprocessing. */
      TomoGpuRowTaps taps[4];

      for (guint s = 0; s < n_slices; s++)
        {
          taps[s].offset = rows->tap_offsets[s];
          memcpy (taps[s].weights, rows->tap_weights + 4 * s, sizeof taps[s].weights);
        }
      ok = ensure_buffer ((void **) &ctx->d_sino_taps, &ctx->d_sino_taps_size,
                          n_slices * plane * sizeof (float), "resampled sinograms", error) &&
           _tomo_gpu_row_taps_launch (ctx->d_sino, ctx->d_sino_taps, n_slices, plane, width,
                                      taps, ctx->stream, error);
      sinos = ctx->d_sino_taps;
    }
  if (ok && map != NULL)
    {
      /* Stitched or weighted into the context's rows: preprocessing too. */
      gboolean weighted = map->weights != NULL;
      const TomoGpuMapProjection *d_proj = (const TomoGpuMapProjection *) ctx->d_map;

      ok = ensure_buffer ((void **) &ctx->d_sino_mapped, &ctx->d_sino_mapped_size,
                          n_slices * plane_out * sizeof (float), "mapped sinograms", error) &&
           _tomo_gpu_row_map_launch (sinos, ctx->d_sino_mapped, n_slices, map, ctx->width,
                                     ctx->n_proj, weighted ? (const float *) ctx->d_map : NULL,
                                     weighted ? NULL : d_proj,
                                     weighted ? NULL : (const TomoGpuMapColumn *) (d_proj + ctx->n_proj),
                                     ctx->stream, error);
      sinos = ctx->d_sino_mapped;
    }
  ok = ok &&
       TOMO_CUDA_CHECK (cudaEventRecord (ctx->ev_load[2], ctx->stream), error) &&
       TOMO_CUDA_CHECK (cudaMemcpyAsync (h_counts, ctx->d_counts, sizeof h_counts,
                                         cudaMemcpyDeviceToHost, ctx->stream), error) &&
       _tomo_gpu_context_filter_device (ctx, n_slices, sinos, ctx->stream, error) &&
       TOMO_CUDA_CHECK (cudaStreamSynchronize (ctx->stream), error);
  if (!ok)
    {
      ctx->loaded_slices = 0;
      return FALSE;
    }
  if (TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, ctx->ev_filter[0], ctx->ev_filter[1]), NULL))
    ctx->filter_ms = ms;
  if (TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, ctx->ev_load[0], ctx->ev_load[1]), NULL))
    ctx->upload_ms = ms;
  if (TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, ctx->ev_load[1], ctx->ev_load[2]), NULL))
    ctx->preprocess_ms = ms;
  _tomo_gpu_preprocess_counts (counts, h_counts, n_slices, plane);
  return TRUE;
}

void
tomo_gpu_context_get_load_ms (TomoGpuContext *ctx,
                              double         *upload_ms,
                              double         *preprocess_ms)
{
  g_return_if_fail (ctx != NULL);

  if (upload_ms != NULL)
    *upload_ms = ctx->upload_ms;
  if (preprocess_ms != NULL)
    *preprocess_ms = ctx->preprocess_ms;
}

gboolean
tomo_gpu_context_load_filtered (TomoGpuContext *ctx,
                                guint           n_slices,
                                const float    *filtered,
                                GError        **error)
{
  g_return_val_if_fail (ctx != NULL, FALSE);

  if (!upload_planes (ctx, n_slices, filtered, FALSE, &ctx->d_filtered, &ctx->d_filtered_size,
                      "filtered sinograms", error) ||
      !tomo_bp_set_sinograms (ctx->bp, ctx->d_filtered, n_slices, ctx->stream, error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (ctx->stream), error))
    return FALSE;
  ctx->loaded_slices = n_slices;
  ctx->filter_ms = 0.0;
  return TRUE;
}

/* Blocking copy of n_floats from the device to `host`; `what_missing` is the
 * error when there is nothing to copy yet. */
static gboolean
download (TomoGpuContext *ctx,
          float          *host,
          const float    *device_src,
          size_t          n_floats,
          const char     *what_missing,
          GError        **error)
{
  g_return_val_if_fail (host != NULL, FALSE);

  if (n_floats == 0)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, what_missing);
      return FALSE;
    }
  return TOMO_CUDA_CHECK (cudaSetDevice (ctx->device), error) &&
         TOMO_CUDA_CHECK (cudaMemcpyAsync (host, device_src, n_floats * sizeof (float),
                                           cudaMemcpyDeviceToHost, ctx->stream), error) &&
         TOMO_CUDA_CHECK (cudaStreamSynchronize (ctx->stream), error);
}

gboolean
tomo_gpu_context_download_filtered (TomoGpuContext *ctx,
                                    float          *host,
                                    GError        **error)
{
  g_return_val_if_fail (ctx != NULL, FALSE);
  return download (ctx, host, ctx->d_filtered,
                   (size_t) ctx->loaded_slices * ctx->n_proj * ctx->width,
                   "No sinograms loaded on the GPU", error);
}

gboolean
_tomo_gpu_context_backproject_to (TomoGpuContext                 *ctx,
                                  const TomoGpuBackprojectParams *params,
                                  float                          *d_out,
                                  cudaStream_t                    stream,
                                  GError                        **error)
{
  TomoGpuBackprojectParams p = *params;
  TomoGpuKernel used = TOMO_GPU_KERNEL_AUTO;

  /* Checked by the caller and again by tomo_bp_run(). */
  if (p.kernel == TOMO_GPU_KERNEL_AUTO)
    p.kernel = resolve_kernel (ctx, ctx->loaded_slices, p.interp, p.roi_width ? p.roi_width : ctx->width);
  if (!tomo_bp_run (ctx->bp, &p, d_out, stream, &used, error))
    return FALSE;
  ctx->last_kernel = used;
  return TRUE;
}

gboolean
tomo_gpu_context_backproject (TomoGpuContext                 *ctx,
                              const TomoGpuBackprojectParams *params,
                              GError                        **error)
{
  TomoGpuRoi roi;
  size_t size;
  float ms = 0.0f;

  g_return_val_if_fail (ctx != NULL, FALSE);
  g_return_val_if_fail (params != NULL, FALSE);

  if (ctx->loaded_slices == 0)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                           "No sinograms loaded on the GPU");
      return FALSE;
    }
  if (!tomo_gpu_backproject_params_check (params, ctx->width, &roi, error))
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (ctx->device), error))
    return FALSE;

  size = (size_t) ctx->loaded_slices * roi.width * roi.height * sizeof (float);
  ctx->out_slices = 0;
  if (!ensure_buffer ((void **) &ctx->d_out, &ctx->d_out_size, size, "output slices", error))
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaEventRecord (ctx->ev_bp[0], ctx->stream), error) ||
      !_tomo_gpu_context_backproject_to (ctx, params, ctx->d_out, ctx->stream, error) ||
      !TOMO_CUDA_CHECK (cudaEventRecord (ctx->ev_bp[1], ctx->stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (ctx->stream), error))
    return FALSE;
  if (TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, ctx->ev_bp[0], ctx->ev_bp[1]), NULL))
    ctx->bp_ms = ms;
  ctx->out_slices = ctx->loaded_slices;
  ctx->out_width = roi.width;
  ctx->out_height = roi.height;
  return TRUE;
}

/* ---- several centres -------------------------------------------------- */

#define LANES 4

/* out[k] = in shifted left by shift[k] columns (zero where it runs off the
 * detector, as the textures' border reads), k < 4. */
__global__ static void
shift_lanes_kernel (const float *__restrict__ in,
                    float *__restrict__       out,
                    unsigned                  width,
                    unsigned                  n_proj,
                    int4                      shift)
{
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const size_t plane = (size_t) width * n_proj;
  const int s[LANES] = { shift.x, shift.y, shift.z, shift.w };

  if (x >= width)
    return;
  for (unsigned p = blockIdx.y; p < n_proj; p += gridDim.y)
    {
      const float *row = in + (size_t) p * width;

#pragma unroll
      for (int k = 0; k < LANES; k++)
        {
          int sx = (int) x + s[k];

          out[k * plane + (size_t) p * width + x] = sx >= 0 && sx < (int) width ? row[sx] : 0.0f;
        }
    }
}

/* The candidates not yet taken, from `first` on, whose centres differ from
 * centers[first] by whole pixels (at most 4, into members; their number):
 * lane k back projects at centers[first] from the sinogram shifted by
 * round(centers[k] − centers[first]). */
static guint
centers_group (const double *centers,
               guint         n,
               gboolean     *taken,
               guint         first,
               guint        *members)
{
  guint m = 0;

  for (guint j = first; j < n && m < LANES; j++)
    {
      double d = centers[j] - centers[first];

      if (!taken[j] && fabs (d - nearbyint (d)) < 1e-6)
        members[m++] = j;
    }
  return m;
}

static gboolean
ensure_sweep_bp (TomoGpuContext *ctx,
                 GError        **error)
{
  if (ctx->sweep_bp != NULL)
    return TRUE;
  ctx->sweep_bp = tomo_bp_new (ctx->device, error);
  if (ctx->sweep_bp == NULL)
    return FALSE;
  if (!tomo_bp_set_geometry (ctx->sweep_bp, ctx->width, ctx->n_proj, ctx->angles, error))
    {
      g_clear_pointer (&ctx->sweep_bp, tomo_bp_free);
      return FALSE;
    }
  return TRUE;
}

/* One group of 3 or 4 candidates in one 4-slice launch, each plane copied
 * to its candidate's place in the output. */
static gboolean
backproject_lanes (TomoGpuContext                 *ctx,
                   const TomoGpuBackprojectParams *params,
                   const double                   *centers,
                   const guint                    *members,
                   guint                           m,
                   size_t                          out_plane,
                   TomoGpuKernel                  *used,
                   GError                        **error)
{
  TomoGpuBackprojectParams p = *params;
  int s[LANES];
  const unsigned block = 256;
  const size_t plane = (size_t) ctx->width * ctx->n_proj;

  for (guint k = 0; k < LANES; k++)
    s[k] = (int) nearbyint (centers[members[MIN (k, m - 1)]] - centers[members[0]]);
  if (!ensure_buffer ((void **) &ctx->d_shifted, &ctx->d_shifted_size,
                      LANES * plane * sizeof (float), "shifted sinograms", error) ||
      !ensure_buffer ((void **) &ctx->d_lanes, &ctx->d_lanes_size,
                      LANES * out_plane * sizeof (float), "candidate slices", error) ||
      !ensure_sweep_bp (ctx, error))
    return FALSE;
  if (!TOMO_CUDA_LAUNCH (shift_lanes_kernel, rows_grid (ctx->width, ctx->n_proj, block), block, ctx->stream, error,
                         ctx->d_filtered, ctx->d_shifted, ctx->width, ctx->n_proj,
                         make_int4 (s[0], s[1], s[2], s[3])) ||
      !tomo_bp_set_sinograms (ctx->sweep_bp, ctx->d_shifted, LANES, ctx->stream, error))
    return FALSE;
  p.center = centers[members[0]];
  if (!tomo_bp_run (ctx->sweep_bp, &p, ctx->d_lanes, ctx->stream, used, error))
    return FALSE;
  for (guint k = 0; k < m; k++)
    if (!TOMO_CUDA_CHECK (cudaMemcpyAsync (ctx->d_out + members[k] * out_plane,
                                           ctx->d_lanes + k * out_plane,
                                           out_plane * sizeof (float), cudaMemcpyDeviceToDevice,
                                           ctx->stream), error))
      return FALSE;
  return TRUE;
}

gboolean
tomo_gpu_context_backproject_centers (TomoGpuContext                 *ctx,
                                      const TomoGpuBackprojectParams *params,
                                      const double                   *centers,
                                      guint                           n_centers,
                                      GError                        **error)
{
  TomoGpuBackprojectParams p;
  TomoGpuKernel lanes_kernel, used = TOMO_GPU_KERNEL_AUTO;
  g_autofree gboolean *taken = NULL;
  TomoGpuRoi roi;
  size_t out_plane;
  float ms = 0.0f;

  g_return_val_if_fail (ctx != NULL, FALSE);
  g_return_val_if_fail (params != NULL, FALSE);

  if (ctx->loaded_slices != 1)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Back projection at several centres needs one loaded sinogram (%u loaded)",
                   ctx->loaded_slices);
      return FALSE;
    }
  if (centers == NULL || n_centers == 0 || n_centers > TOMO_GPU_MAX_CENTERS)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Back projection at %u centres: 1 to %u are possible", centers ? n_centers : 0,
                   TOMO_GPU_MAX_CENTERS);
      return FALSE;
    }
  p = *params;
  for (guint i = 0; i < n_centers; i++)
    {
      p.center = centers[i];
      if (!tomo_gpu_backproject_params_check (&p, ctx->width, &roi, error))
        return FALSE;
    }
  if (!TOMO_CUDA_CHECK (cudaSetDevice (ctx->device), error))
    return FALSE;
  out_plane = (size_t) roi.width * roi.height;
  ctx->out_slices = 0;
  if (!ensure_buffer ((void **) &ctx->d_out, &ctx->d_out_size, n_centers * out_plane * sizeof (float),
                      "candidate slices", error))
    return FALSE;
  lanes_kernel = params->kernel;
  if (lanes_kernel == TOMO_GPU_KERNEL_AUTO)
    lanes_kernel = resolve_kernel (ctx, LANES, params->interp, roi.width);
  p = *params;
  p.kernel = lanes_kernel;

  taken = g_new0 (gboolean, n_centers);
  if (!TOMO_CUDA_CHECK (cudaEventRecord (ctx->ev_bp[0], ctx->stream), error))
    return FALSE;
  for (guint i = 0; i < n_centers; i++)
    {
      guint members[LANES];
      guint m;

      if (taken[i])
        continue;
      m = centers_group (centers, n_centers, taken, i, members);
      /* Two alone cost less than one 4-slice launch. */
      if (m >= 3 && tomo_bp_supports (lanes_kernel, LANES, params->interp))
        {
          if (!backproject_lanes (ctx, &p, centers, members, m, out_plane, &used, error))
            return FALSE;
          for (guint k = 0; k < m; k++)
            taken[members[k]] = TRUE;
        }
      else
        {
          TomoGpuBackprojectParams one = *params;

          one.center = centers[i];
          if (!_tomo_gpu_context_backproject_to (ctx, &one, ctx->d_out + i * out_plane, ctx->stream,
                                                 error))
            return FALSE;
          used = ctx->last_kernel;
          taken[i] = TRUE;
        }
    }
  if (!TOMO_CUDA_CHECK (cudaEventRecord (ctx->ev_bp[1], ctx->stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (ctx->stream), error))
    return FALSE;
  if (TOMO_CUDA_CHECK (cudaEventElapsedTime (&ms, ctx->ev_bp[0], ctx->ev_bp[1]), NULL))
    ctx->bp_ms = ms;
  ctx->last_kernel = used;
  ctx->out_slices = n_centers;
  ctx->out_width = roi.width;
  ctx->out_height = roi.height;
  return TRUE;
}

/* FALSE and an error naming `what` when nothing was back projected. */
static gboolean
has_output (TomoGpuContext *ctx,
            const char     *what,
            GError        **error)
{
  if (ctx->out_slices > 0)
    return TRUE;
  g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "No back projection to %s", what);
  return FALSE;
}

/* The output to reduce (`what` names the reduction in the error) and the
 * context's workspace for it. */
static gboolean
ensure_stats_work (TomoGpuContext *ctx,
                   const char     *what,
                   GError        **error)
{
  if (!has_output (ctx, what, error))
    return FALSE;
  if (ctx->stats == NULL)
    ctx->stats = _tomo_gpu_stats_work_new (ctx->device, error);
  return ctx->stats != NULL;
}

gboolean
tomo_gpu_context_stats (TomoGpuContext *ctx,
                        TomoGpuStats   *stats,
                        GError        **error)
{
  g_return_val_if_fail (ctx != NULL && stats != NULL, FALSE);
  return ensure_stats_work (ctx, "take statistics of", error)
         && _tomo_gpu_stats_run (ctx->stats, ctx->d_out,
                                 (size_t) ctx->out_slices * ctx->out_width * ctx->out_height,
                                 ctx->stream, stats, error);
}

gboolean
tomo_gpu_context_negativity (TomoGpuContext *ctx,
                             double         *scores,
                             GError        **error)
{
  g_return_val_if_fail (ctx != NULL && scores != NULL, FALSE);
  return ensure_stats_work (ctx, "score", error)
         && _tomo_gpu_negativity_run (ctx->stats, ctx->d_out, ctx->out_width, ctx->out_height,
                                      ctx->out_slices, ctx->stream, scores, error);
}

const float *
tomo_gpu_context_get_output (TomoGpuContext *ctx)
{
  g_return_val_if_fail (ctx != NULL, NULL);
  return ctx->out_slices ? ctx->d_out : NULL;
}

TomoGpuKernel
tomo_gpu_context_get_last_kernel (TomoGpuContext *ctx)
{
  g_return_val_if_fail (ctx != NULL, TOMO_GPU_KERNEL_AUTO);
  return ctx->last_kernel;
}

double
tomo_gpu_context_get_filter_ms (TomoGpuContext *ctx)
{
  g_return_val_if_fail (ctx != NULL, 0.0);
  return ctx->filter_ms;
}

double
tomo_gpu_context_get_backproject_ms (TomoGpuContext *ctx)
{
  g_return_val_if_fail (ctx != NULL, 0.0);
  return ctx->bp_ms;
}

gboolean
tomo_gpu_context_download (TomoGpuContext *ctx,
                           float          *host,
                           GError        **error)
{
  g_return_val_if_fail (ctx != NULL, FALSE);
  return download (ctx, host, ctx->d_out,
                   (size_t) ctx->out_slices * ctx->out_width * ctx->out_height,
                   "No back projection to download", error);
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                   */

struct _TomoGpuBuffer
{
  int device;
  float *data;
  size_t n;
  TomoGpuBufferPool *pool;   /* a reference while the buffer lives */
};

#define POOL_KEEP 4   /* the preview's, the window's, one being made, one spare */

struct _TomoGpuBufferPool
{
  gint       ref_count;
  GMutex     lock;
  GPtrArray *kept;
  gboolean   closed;
};

static void
pool_unref (TomoGpuBufferPool *pool)
{
  if (!g_atomic_int_dec_and_test (&pool->ref_count))
    return;
  g_ptr_array_unref (pool->kept);
  g_mutex_clear (&pool->lock);
  g_free (pool);
}

TomoGpuBufferPool *
_tomo_gpu_buffer_pool_new (void)
{
  TomoGpuBufferPool *pool = g_new0 (TomoGpuBufferPool, 1);

  pool->ref_count = 1;
  g_mutex_init (&pool->lock);
  pool->kept = g_ptr_array_new ();
  return pool;
}

void
_tomo_gpu_buffer_pool_close (TomoGpuBufferPool *pool)
{
  GPtrArray *kept;

  if (pool == NULL)
    return;
  g_mutex_lock (&pool->lock);
  pool->closed = TRUE;
  kept = g_steal_pointer (&pool->kept);
  pool->kept = g_ptr_array_new ();
  g_mutex_unlock (&pool->lock);
  for (guint i = 0; i < kept->len; i++)
    tomo_gpu_buffer_free ((TomoGpuBuffer *) g_ptr_array_index (kept, i));
  g_ptr_array_unref (kept);
  pool_unref (pool);
}

void
_tomo_gpu_buffer_pool_trim (TomoGpuBufferPool *pool,
                            size_t             n)
{
  g_autoptr (GPtrArray) drop = g_ptr_array_new ();

  g_mutex_lock (&pool->lock);
  for (guint i = pool->kept->len; i-- > 0;)
    if (((TomoGpuBuffer *) g_ptr_array_index (pool->kept, i))->n != n)
      g_ptr_array_add (drop, g_ptr_array_steal_index_fast (pool->kept, i));
  g_mutex_unlock (&pool->lock);
  for (guint i = 0; i < drop->len; i++)
    {
      TomoGpuBuffer *b = (TomoGpuBuffer *) g_ptr_array_index (drop, i);

      /* Out of the pool: freed for good, and the pool's reference with it. */
      b->pool = NULL;
      pool_unref (pool);
      tomo_gpu_buffer_free (b);
    }
}

static TomoGpuBuffer *
buffer_copy_into (TomoGpuBuffer *buffer,
                  const float   *d_src,
                  cudaStream_t   stream,
                  GError       **error)
{
  size_t have = buffer->data != NULL ? buffer->n * sizeof (float) : 0;

  if (!ensure_buffer ((void **) &buffer->data, &have, buffer->n * sizeof (float), "slice copy", error) ||
      !TOMO_CUDA_CHECK (cudaMemcpyAsync (buffer->data, d_src, buffer->n * sizeof (float),
                                         cudaMemcpyDeviceToDevice, stream), error) ||
      !TOMO_CUDA_CHECK (cudaStreamSynchronize (stream), error))
    {
      tomo_gpu_buffer_free (buffer);
      return NULL;
    }
  return buffer;
}

TomoGpuBuffer *
_tomo_gpu_buffer_new_copy (int           device,
                           const float  *d_src,
                           size_t        n,
                           cudaStream_t  stream,
                           GError      **error)
{
  TomoGpuBuffer *buffer;

  if (!TOMO_CUDA_CHECK (cudaSetDevice (device), error))
    return NULL;
  buffer = g_new0 (TomoGpuBuffer, 1);
  buffer->device = device;
  buffer->n = n;
  return buffer_copy_into (buffer, d_src, stream, error);
}

TomoGpuBuffer *
_tomo_gpu_buffer_pool_copy (TomoGpuBufferPool *pool,
                            int                device,
                            const float       *d_src,
                            size_t             n,
                            cudaStream_t       stream,
                            GError           **error)
{
  TomoGpuBuffer *buffer = NULL;

  if (!TOMO_CUDA_CHECK (cudaSetDevice (device), error))
    return NULL;
  g_mutex_lock (&pool->lock);
  for (guint i = 0; i < pool->kept->len && buffer == NULL; i++)
    {
      TomoGpuBuffer *b = (TomoGpuBuffer *) g_ptr_array_index (pool->kept, i);

      if (b->n == n && b->device == device)
        buffer = (TomoGpuBuffer *) g_ptr_array_steal_index_fast (pool->kept, i);
    }
  g_mutex_unlock (&pool->lock);
  if (buffer == NULL)
    {
      buffer = g_new0 (TomoGpuBuffer, 1);
      buffer->device = device;
      buffer->n = n;
      g_atomic_int_inc (&pool->ref_count);
      buffer->pool = pool;
    }
  return buffer_copy_into (buffer, d_src, stream, error);
}

TomoGpuBuffer *
tomo_gpu_buffer_copy_output (TomoGpuContext *ctx,
                             GError        **error)
{
  g_return_val_if_fail (ctx != NULL, NULL);

  if (!has_output (ctx, "copy", error))
    return NULL;
  return _tomo_gpu_buffer_new_copy (ctx->device, ctx->d_out,
                                    (size_t) ctx->out_slices * ctx->out_width * ctx->out_height,
                                    ctx->stream, error);
}

gboolean
tomo_gpu_buffer_download (TomoGpuBuffer *buffer,
                          float         *out,
                          GError       **error)
{
  g_return_val_if_fail (buffer != NULL, FALSE);
  return TOMO_CUDA_CHECK (cudaSetDevice (buffer->device), error)
         && TOMO_CUDA_CHECK (cudaMemcpy (out, buffer->data, buffer->n * sizeof (float),
                                         cudaMemcpyDeviceToHost), error);
}

const float *
tomo_gpu_buffer_get_data (TomoGpuBuffer *buffer)
{
  g_return_val_if_fail (buffer != NULL, NULL);
  return buffer->data;
}

gboolean
tomo_gpu_buffer_read_rect (TomoGpuBuffer *buffer,
                           gsize          offset,
                           gsize          stride,
                           guint          width,
                           guint          height,
                           float         *out,
                           GError       **error)
{
  g_return_val_if_fail (buffer != NULL, FALSE);
  g_return_val_if_fail (out != NULL || width == 0 || height == 0, FALSE);

  if (width == 0 || height == 0)
    return TRUE;
  /* The last value read, data[offset + (height − 1)·stride + width − 1],
   * lies in the buffer (and width fits a row). */
  if (width > stride || offset >= buffer->n || width > buffer->n - offset
      || (height - 1) > (buffer->n - offset - width) / stride)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "%u × %u values from %" G_GSIZE_FORMAT " (rows %" G_GSIZE_FORMAT
                   " apart) reach outside the buffer of %zu values",
                   width, height, offset, stride, buffer->n);
      return FALSE;
    }
  return TOMO_CUDA_CHECK (cudaSetDevice (buffer->device), error)
         && TOMO_CUDA_CHECK (cudaMemcpy2D (out, width * sizeof (float), buffer->data + offset,
                                           stride * sizeof (float), width * sizeof (float),
                                           height, cudaMemcpyDeviceToHost), error);
}

int
tomo_gpu_buffer_get_device (TomoGpuBuffer *buffer)
{
  g_return_val_if_fail (buffer != NULL, -1);
  return buffer->device;
}

void
tomo_gpu_buffer_free (TomoGpuBuffer *buffer)
{
  if (buffer == NULL)
    return;
  if (buffer->pool != NULL)
    {
      TomoGpuBufferPool *pool = buffer->pool;
      gboolean keep;

      g_mutex_lock (&pool->lock);
      keep = !pool->closed && buffer->data != NULL && pool->kept->len < POOL_KEEP;
      if (keep)
        g_ptr_array_add (pool->kept, buffer);
      g_mutex_unlock (&pool->lock);
      if (keep)
        return;
      buffer->pool = NULL;
      pool_unref (pool);
    }
  if (buffer->data != NULL)
    {
      TOMO_CUDA_WARN (cudaSetDevice (buffer->device));
      TOMO_CUDA_WARN (cudaFree (buffer->data));
    }
  g_free (buffer);
}
