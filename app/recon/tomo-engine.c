/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The reconstruction engine: one object that the CLI, the tests and the
 * window all use.  It owns the backend (CPU reference or the CUDA engine),
 * caches what a parameter change does not invalidate — the filtered
 * sinograms of the current rows — and runs requests either blocking
 * (tomo_engine_reconstruct) or on a worker thread with "latest wins"
 * coalescing (tomo_engine_submit), so dragging a slider never builds a
 * backlog.
 */
#define G_LOG_DOMAIN "tomo-engine"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-engine.h"
#include "tomo-error.h"
#include "tomo-fbp.h"
#include "tomo-filter.h"
#include "tomo-gpu.h"
#include "tomo-row-prefetch.h"

struct _TomoEngine
{
  GObject parent_instance;

  /* Serialises reconstruction: the backends and caches below are used by one
   * thread at a time (the worker, or a blocking caller). */
  GMutex lock;

  TomoBackend requested;
  TomoBackend active;
  char *device_name;
  int gpu_device;

  TomoScan *scan;

  /* CPU backend */
  TomoCpuFbp *cpu_fbp;
  TomoFilterType cpu_filter;
  TomoPadMode cpu_pad;

  /* GPU backend */
  TomoGpuContext *gpu;
  gboolean gpu_geometry_set;
  gboolean gpu_filter_set;
  TomoFilterType gpu_filter;
  TomoPadMode gpu_pad;

  /* Filtered-sinogram cache key: what is loaded (GPU) or held (CPU). */
  gboolean cache_valid;
  guint cache_row, cache_n_slices;
  TomoFilterType cache_filter;
  TomoPadMode cache_pad;
  TomoBackend cache_backend;
  float *cpu_filtered;          /* n_slices × n_proj × width */
  TomoPreprocessStats cache_stats;

  TomoVolumeStats volume_stats; /* of the last volume */

  /* Worker for tomo_engine_submit(): at most one request pending. */
  GMutex queue_lock;
  GCond queue_cond;
  GThread *worker;
  gboolean quit;
  struct PendingRequest *pending;
};

typedef struct PendingRequest
{
  TomoSliceRequest request;
  TomoEngineCallback callback;
  gpointer user_data;
  GMainContext *context;
} PendingRequest;

G_DEFINE_FINAL_TYPE (TomoEngine, tomo_engine, G_TYPE_OBJECT)

G_DEFINE_BOXED_TYPE (TomoSlice, tomo_slice, tomo_slice_ref, tomo_slice_unref)

TomoSlice *
tomo_slice_ref (TomoSlice *slice)
{
  g_return_val_if_fail (slice != NULL, NULL);
  g_atomic_int_inc (&slice->ref_count);
  return slice;
}

void
tomo_slice_unref (TomoSlice *slice)
{
  g_return_if_fail (slice != NULL);
  if (!g_atomic_int_dec_and_test (&slice->ref_count))
    return;
  g_free (slice->data);
  g_free (slice->kernel);
  if (slice->device_buffer != NULL)
    tomo_gpu_buffer_free (slice->device_buffer);
  g_free (slice);
}

gboolean
tomo_slice_get_value (TomoSlice *slice,
                      guint      index,
                      guint      x,
                      guint      y,
                      float     *value)
{
  g_return_val_if_fail (slice != NULL, FALSE);
  g_return_val_if_fail (value != NULL, FALSE);

  if (index >= slice->n_slices || x >= slice->width || y >= slice->height)
    return FALSE;
  if (slice->data == NULL)
    return FALSE; /* device-only slices: read by the GPU backend (to come) */
  *value = slice->data[((gsize) index * slice->height + y) * slice->width + x];
  return TRUE;
}

void
tomo_slice_request_init (TomoSliceRequest *request,
                         TomoScan         *scan)
{
  g_return_if_fail (request != NULL);

  memset (request, 0, sizeof *request);
  request->n_slices = 1;
  request->kernel = TOMO_GPU_KERNEL_AUTO;
  if (scan != NULL)
    {
      tomo_recon_params_init (&request->params, tomo_scan_get_width (scan));
      request->row = tomo_scan_get_height (scan) / 2;
    }
  else
    tomo_recon_params_init (&request->params, 0);
}

static void
pending_request_free (PendingRequest *pending)
{
  if (pending == NULL)
    return;
  g_main_context_unref (pending->context);
  g_free (pending);
}

static void
invalidate_cache_locked (TomoEngine *self)
{
  self->cache_valid = FALSE;
  g_clear_pointer (&self->cpu_filtered, g_free);
}

static void
drop_gpu_locked (TomoEngine *self)
{
  g_clear_pointer (&self->gpu, tomo_gpu_context_free);
  self->gpu_geometry_set = FALSE;
  self->gpu_filter_set = FALSE;
  invalidate_cache_locked (self);
}

static void
tomo_engine_dispose (GObject *object)
{
  TomoEngine *self = TOMO_ENGINE (object);

  if (self->worker != NULL)
    {
      g_mutex_lock (&self->queue_lock);
      self->quit = TRUE;
      g_clear_pointer (&self->pending, pending_request_free);
      g_cond_broadcast (&self->queue_cond);
      g_mutex_unlock (&self->queue_lock);
      g_thread_join (self->worker);
      self->worker = NULL;
    }

  g_mutex_lock (&self->lock);
  g_clear_object (&self->scan);
  g_clear_pointer (&self->cpu_fbp, tomo_cpu_fbp_free);
  drop_gpu_locked (self);
  g_mutex_unlock (&self->lock);

  G_OBJECT_CLASS (tomo_engine_parent_class)->dispose (object);
}

static void
tomo_engine_finalize (GObject *object)
{
  TomoEngine *self = TOMO_ENGINE (object);

  g_free (self->device_name);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->queue_lock);
  g_cond_clear (&self->queue_cond);

  G_OBJECT_CLASS (tomo_engine_parent_class)->finalize (object);
}

static void
tomo_engine_class_init (TomoEngineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = tomo_engine_dispose;
  object_class->finalize = tomo_engine_finalize;
}

static void
tomo_engine_init (TomoEngine *self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&self->queue_lock);
  g_cond_init (&self->queue_cond);
  self->gpu_device = -1;
  self->active = TOMO_BACKEND_CPU;
}

static void
use_cpu_locked (TomoEngine *self)
{
  drop_gpu_locked (self);
  self->active = TOMO_BACKEND_CPU;
  self->gpu_device = -1;
  g_free (self->device_name);
  self->device_name = g_strdup_printf ("CPU (%u threads)", g_get_num_processors ());
}

static gboolean
use_gpu_locked (TomoEngine *self,
                GError    **error)
{
  g_autoptr(GError) local_error = NULL;
  TomoGpuContext *ctx;

  if (self->gpu != NULL)
    return TRUE;

  if (tomo_gpu_get_n_devices () <= 0)
    {
      /* Ask the context for the precise reason (not built / no driver). */
      ctx = tomo_gpu_context_new (0, &local_error);
      if (ctx != NULL)
        tomo_gpu_context_free (ctx);
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "GPU backend not available: %s",
                   local_error != NULL ? local_error->message : "no CUDA device");
      return FALSE;
    }

  ctx = tomo_gpu_context_new (0, &local_error);
  if (ctx == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "GPU backend not available: %s", local_error->message);
      return FALSE;
    }

  drop_gpu_locked (self);
  self->gpu = ctx;
  self->active = TOMO_BACKEND_GPU;
  self->gpu_device = tomo_gpu_context_get_device (ctx);
  g_free (self->device_name);
  self->device_name = tomo_gpu_get_device_name (self->gpu_device);
  if (self->device_name == NULL)
    self->device_name = g_strdup_printf ("CUDA device %d", self->gpu_device);
  invalidate_cache_locked (self);
  return TRUE;
}

TomoEngine *
tomo_engine_new (TomoBackend backend)
{
  TomoEngine *self = g_object_new (TOMO_TYPE_ENGINE, NULL);
  g_autoptr(GError) error = NULL;

  if (!tomo_engine_set_backend (self, backend, &error))
    {
      /* An explicit GPU request that cannot be met still gives a working
       * engine; the caller learns it from tomo_engine_get_backend(). */
      g_message ("%s; using the CPU backend", error->message);
      g_mutex_lock (&self->lock);
      use_cpu_locked (self);
      g_mutex_unlock (&self->lock);
    }
  return self;
}

gboolean
tomo_engine_set_backend (TomoEngine  *self,
                         TomoBackend  backend,
                         GError     **error)
{
  gboolean ret = TRUE;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), FALSE);

  g_mutex_lock (&self->lock);
  self->requested = backend;
  switch (backend)
    {
    case TOMO_BACKEND_CPU:
      use_cpu_locked (self);
      break;
    case TOMO_BACKEND_GPU:
      ret = use_gpu_locked (self, error);
      break;
    case TOMO_BACKEND_AUTO:
    default:
      if (!use_gpu_locked (self, NULL))
        use_cpu_locked (self);
      break;
    }
  g_mutex_unlock (&self->lock);
  return ret;
}

TomoBackend
tomo_engine_get_backend (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), TOMO_BACKEND_CPU);
  return self->active;
}

gboolean
tomo_engine_has_gpu (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), FALSE);
  return self->active == TOMO_BACKEND_GPU || tomo_gpu_get_n_devices () > 0;
}

const char *
tomo_engine_get_device_name (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  return self->device_name;
}

int
tomo_engine_get_device (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), -1);
  return self->gpu_device;
}

void
tomo_engine_set_scan (TomoEngine *self,
                      TomoScan   *scan)
{
  g_return_if_fail (TOMO_IS_ENGINE (self));
  g_return_if_fail (scan == NULL || TOMO_IS_SCAN (scan));

  g_mutex_lock (&self->lock);
  if (g_set_object (&self->scan, scan))
    {
      g_clear_pointer (&self->cpu_fbp, tomo_cpu_fbp_free);
      self->gpu_geometry_set = FALSE;
      self->gpu_filter_set = FALSE;
      invalidate_cache_locked (self);
    }
  g_mutex_unlock (&self->lock);
}

TomoScan *
tomo_engine_get_scan (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  return self->scan;
}

static gboolean
validate_request (TomoScan               *scan,
                  const TomoSliceRequest *request,
                  GError                **error)
{
  guint height;

  if (scan == NULL)
    {
      g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                           "No scan is open");
      return FALSE;
    }
  if (request->n_slices != 1 && request->n_slices != 2 && request->n_slices != 4)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Slice-parallel mode must be 1, 2 or 4 slices, not %u", request->n_slices);
      return FALSE;
    }
  height = tomo_scan_get_height (scan);
  if (request->row >= height || request->row + request->n_slices > height)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Row %u%s is out of range: %s has rows 0 to %u",
                   request->row, request->n_slices > 1 ? " (with its neighbours)" : "",
                   tomo_scan_get_path (scan), height - 1);
      return FALSE;
    }
  return tomo_recon_params_validate (&request->params, tomo_scan_get_width (scan), error);
}

static gboolean
cache_matches_locked (TomoEngine             *self,
                      const TomoSliceRequest *request)
{
  return self->cache_valid
         && self->cache_backend == self->active
         && self->cache_row == request->row
         && self->cache_n_slices == request->n_slices
         && self->cache_filter == request->params.filter
         && self->cache_pad == request->params.pad;
}

static void
remember_cache_locked (TomoEngine             *self,
                       const TomoSliceRequest *request)
{
  self->cache_valid = TRUE;
  self->cache_backend = self->active;
  self->cache_row = request->row;
  self->cache_n_slices = request->n_slices;
  self->cache_filter = request->params.filter;
  self->cache_pad = request->params.pad;
}

/* n_slices preprocessed sinograms, one after another. */
static float *
read_sinograms (TomoScan            *scan,
                guint                row,
                guint                n_slices,
                TomoPreprocessStats *stats,
                GCancellable        *cancellable,
                GError             **error)
{
  gsize plane = (gsize) tomo_scan_get_n_projections (scan) * tomo_scan_get_width (scan);
  g_autofree float *sinos = g_try_malloc (plane * n_slices * sizeof (float));

  if (sinos == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Out of memory for %u sinograms of %zu values", n_slices, plane);
      return NULL;
    }
  for (guint s = 0; s < n_slices; s++)
    if (!tomo_scan_read_sinogram (scan, row + s, sinos + s * plane, stats, error))
      return NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  return g_steal_pointer (&sinos);
}

static TomoSlice *
slice_new (const TomoSliceRequest *request,
           guint                   width)
{
  TomoSlice *slice = g_new0 (TomoSlice, 1);

  slice->ref_count = 1;
  slice->row = request->row;
  slice->n_slices = request->n_slices;
  slice->params = request->params;
  slice->roi = tomo_recon_params_get_roi (&request->params, width);
  slice->width = slice->roi.width;
  slice->height = slice->roi.height;
  return slice;
}

static TomoSlice *
reconstruct_cpu_locked (TomoEngine             *self,
                        const TomoSliceRequest *request,
                        GCancellable           *cancellable,
                        GError                **error)
{
  TomoScan *scan = self->scan;
  guint width = tomo_scan_get_width (scan);
  guint n_proj = tomo_scan_get_n_projections (scan);
  gsize plane = (gsize) n_proj * width;
  g_autoptr(TomoSlice) slice = slice_new (request, width);
  gsize out_plane = (gsize) slice->width * slice->height;
  gint64 t0, t1;

  if (self->cpu_fbp == NULL
      || self->cpu_filter != request->params.filter
      || self->cpu_pad != request->params.pad
      || tomo_cpu_fbp_get_width (self->cpu_fbp) != width
      || tomo_cpu_fbp_get_n_proj (self->cpu_fbp) != n_proj)
    {
      g_clear_pointer (&self->cpu_fbp, tomo_cpu_fbp_free);
      self->cpu_fbp = tomo_cpu_fbp_new (width, n_proj, tomo_scan_get_angles (scan),
                                        request->params.filter, request->params.pad,
                                        request->params.n_threads);
      self->cpu_filter = request->params.filter;
      self->cpu_pad = request->params.pad;
      invalidate_cache_locked (self);
    }

  if (!cache_matches_locked (self, request))
    {
      g_autofree float *sinos = NULL;
      TomoPreprocessStats stats = { 0 };

      invalidate_cache_locked (self);
      sinos = read_sinograms (scan, request->row, request->n_slices, &stats, cancellable, error);
      if (sinos == NULL)
        return NULL;
      t0 = g_get_monotonic_time ();
      for (guint s = 0; s < request->n_slices; s++)
        tomo_cpu_fbp_filter (self->cpu_fbp, sinos + s * plane, sinos + s * plane);
      t1 = g_get_monotonic_time ();
      slice->filter_ms = (t1 - t0) / 1000.0;
      self->cpu_filtered = g_steal_pointer (&sinos);
      self->cache_stats = stats;
      remember_cache_locked (self, request);
    }
  slice->stats = self->cache_stats;

  slice->data = g_try_malloc (out_plane * request->n_slices * sizeof (float));
  if (slice->data == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Out of memory for a %u×%u slice", slice->width, slice->height);
      return NULL;
    }
  t0 = g_get_monotonic_time ();
  for (guint s = 0; s < request->n_slices; s++)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      tomo_cpu_fbp_backproject (self->cpu_fbp, self->cpu_filtered + s * plane,
                                request->params.center, request->params.interp,
                                &slice->roi, slice->data + s * out_plane);
    }
  t1 = g_get_monotonic_time ();
  slice->backproject_ms = (t1 - t0) / 1000.0;
  slice->backend = TOMO_BACKEND_CPU;
  slice->kernel = g_strdup_printf ("cpu-%s", tomo_interp_to_string (request->params.interp));
  return g_steal_pointer (&slice);
}

static TomoSlice *
reconstruct_gpu_locked (TomoEngine             *self,
                        const TomoSliceRequest *request,
                        GCancellable           *cancellable,
                        GError                **error)
{
  TomoScan *scan = self->scan;
  guint width = tomo_scan_get_width (scan);
  guint n_proj = tomo_scan_get_n_projections (scan);
  g_autoptr(TomoSlice) slice = slice_new (request, width);
  TomoGpuBackprojectParams bp;

  if (!self->gpu_geometry_set)
    {
      if (!tomo_gpu_context_set_geometry (self->gpu, width, n_proj,
                                          tomo_scan_get_angles (scan), error))
        return NULL;
      self->gpu_geometry_set = TRUE;
      self->gpu_filter_set = FALSE;
      invalidate_cache_locked (self);
    }
  if (!self->gpu_filter_set
      || self->gpu_filter != request->params.filter
      || self->gpu_pad != request->params.pad)
    {
      guint padded;
      g_autofree double *response = tomo_filter_fbp_response (request->params.filter, width,
                                                              n_proj, &padded);

      if (!tomo_gpu_context_set_filter (self->gpu, padded, response,
                                        request->params.pad, error))
        return NULL;
      self->gpu_filter_set = TRUE;
      self->gpu_filter = request->params.filter;
      self->gpu_pad = request->params.pad;
      invalidate_cache_locked (self);
    }

  if (!cache_matches_locked (self, request))
    {
      g_autofree float *sinos = NULL;
      TomoPreprocessStats stats = { 0 };

      invalidate_cache_locked (self);
      sinos = read_sinograms (scan, request->row, request->n_slices, &stats, cancellable, error);
      if (sinos == NULL)
        return NULL;
      if (!tomo_gpu_context_load_sinograms (self->gpu, request->n_slices, sinos, error))
        return NULL;
      slice->filter_ms = tomo_gpu_context_get_filter_ms (self->gpu);
      self->cache_stats = stats;
      remember_cache_locked (self, request);
    }
  slice->stats = self->cache_stats;

  tomo_gpu_backproject_params_init (&bp);
  bp.center = request->params.center;
  bp.interp = request->params.interp;
  bp.kernel = request->kernel;
  bp.roi_x = slice->roi.x;
  bp.roi_y = slice->roi.y;
  bp.roi_width = slice->roi.width;
  bp.roi_height = slice->roi.height;
  if (!tomo_gpu_context_backproject (self->gpu, &bp, error))
    {
      /* The filtered sinograms may be gone with a failed launch. */
      invalidate_cache_locked (self);
      return NULL;
    }
  slice->backproject_ms = tomo_gpu_context_get_backproject_ms (self->gpu);
  slice->backend = TOMO_BACKEND_GPU;
  slice->kernel = g_strdup (tomo_gpu_kernel_to_string (tomo_gpu_context_get_last_kernel (self->gpu)));

  if (request->keep_on_device)
    {
      slice->device_buffer = tomo_gpu_buffer_copy_output (self->gpu, error);
      if (slice->device_buffer == NULL)
        return NULL;
    }
  if (!request->skip_download)
    {
      slice->data = g_try_malloc ((gsize) slice->width * slice->height * request->n_slices
                                  * sizeof (float));
      if (slice->data == NULL)
        {
          g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                       "Out of memory for a %u×%u slice", slice->width, slice->height);
          return NULL;
        }
      if (!tomo_gpu_context_download (self->gpu, slice->data, error))
        return NULL;
    }
  return g_steal_pointer (&slice);
}

TomoSlice *
tomo_engine_reconstruct (TomoEngine             *self,
                         const TomoSliceRequest *request,
                         GCancellable           *cancellable,
                         GError                **error)
{
  TomoSlice *slice = NULL;
  gint64 start;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  g_return_val_if_fail (request != NULL, NULL);

  start = g_get_monotonic_time ();
  g_mutex_lock (&self->lock);
  if (!validate_request (self->scan, request, error))
    goto out;
  if (self->active == TOMO_BACKEND_GPU)
    slice = reconstruct_gpu_locked (self, request, cancellable, error);
  else
    slice = reconstruct_cpu_locked (self, request, cancellable, error);
  if (slice != NULL)
    {
      double updates = (double) slice->width * slice->height * slice->n_slices
                       * tomo_scan_get_n_projections (self->scan);

      if (slice->data != NULL)
        tomo_slice_stats_compute (slice->data,
                                  (gsize) slice->width * slice->height * slice->n_slices,
                                  &slice->values);
      slice->total_ms = (g_get_monotonic_time () - start) / 1000.0;
      slice->gups = slice->backproject_ms > 0 ? updates / (slice->backproject_ms * 1e6) : 0;
    }
out:
  g_mutex_unlock (&self->lock);
  return slice;
}

/* --- "latest wins" worker ------------------------------------------------ */

typedef struct
{
  TomoEngine *engine;
  TomoSlice *slice;
  GError *error;
  TomoEngineCallback callback;
  gpointer user_data;
} Delivery;

static gboolean
deliver_cb (gpointer data)
{
  Delivery *d = data;

  d->callback (d->engine, d->slice, d->error, d->user_data);
  g_clear_pointer (&d->slice, tomo_slice_unref);
  g_clear_error (&d->error);
  g_object_unref (d->engine);
  g_free (d);
  return G_SOURCE_REMOVE;
}

static gpointer
worker_main (gpointer data)
{
  TomoEngine *self = data;

  for (;;)
    {
      PendingRequest *pending;
      Delivery *d;
      GSource *source;

      g_mutex_lock (&self->queue_lock);
      while (self->pending == NULL && !self->quit)
        g_cond_wait (&self->queue_cond, &self->queue_lock);
      if (self->quit)
        {
          g_mutex_unlock (&self->queue_lock);
          break;
        }
      pending = g_steal_pointer (&self->pending);
      /* The engine is alive while the worker runs: dispose joins us before
       * anything is freed, so a reference taken here is safe. */
      d = g_new0 (Delivery, 1);
      d->engine = g_object_ref (self);
      g_mutex_unlock (&self->queue_lock);

      d->slice = tomo_engine_reconstruct (self, &pending->request, NULL, &d->error);
      d->callback = pending->callback;
      d->user_data = pending->user_data;

      source = g_idle_source_new ();
      g_source_set_priority (source, G_PRIORITY_DEFAULT);
      g_source_set_callback (source, deliver_cb, d, NULL);
      g_source_set_static_name (source, "[tomo] slice delivery");
      g_source_attach (source, pending->context);
      g_source_unref (source);
      pending_request_free (pending);
    }
  return NULL;
}

void
tomo_engine_submit (TomoEngine             *self,
                    const TomoSliceRequest *request,
                    TomoEngineCallback      callback,
                    gpointer                user_data)
{
  PendingRequest *pending;

  g_return_if_fail (TOMO_IS_ENGINE (self));
  g_return_if_fail (request != NULL);
  g_return_if_fail (callback != NULL);

  pending = g_new0 (PendingRequest, 1);
  pending->request = *request;
  pending->callback = callback;
  pending->user_data = user_data;
  pending->context = g_main_context_ref_thread_default ();

  g_mutex_lock (&self->queue_lock);
  g_clear_pointer (&self->pending, pending_request_free);
  self->pending = pending;
  if (self->worker == NULL)
    self->worker = g_thread_new ("tomo-engine", worker_main, self);
  g_cond_signal (&self->queue_cond);
  g_mutex_unlock (&self->queue_lock);
}

/* --- whole volumes ------------------------------------------------------ */

typedef struct
{
  TomoEngine *engine;
  TomoScan *scan;
  TomoVolumeSink sink;
  TomoProgressFunc progress;
  gpointer user_data;
  TomoRoi roi;
  GCancellable *cancellable;
  volatile gint cancel;
  gulong cancel_id;
  TomoRowPrefetch *prefetch;  /* GPU: rows read ahead on many threads */
} VolumeJob;

static gboolean
volume_read_cb (guint     row,
                float    *sino,
                gpointer  user_data,
                GError  **error)
{
  VolumeJob *job = user_data;

  if (job->prefetch != NULL)
    return tomo_row_prefetch_take (job->prefetch, row, sino, error);
  return tomo_scan_read_sinogram (job->scan, row, sino, NULL, error);
}

static gboolean
volume_write_cb (guint        row,
                 const float *slice,
                 gpointer     user_data,
                 GError     **error)
{
  VolumeJob *job = user_data;

  return job->sink (row, slice, job->roi.width, job->roi.height, job->user_data, error);
}

static void
volume_cancelled_cb (GCancellable *cancellable,
                     VolumeJob    *job)
{
  g_atomic_int_set (&job->cancel, 1);
}

static void
volume_progress_adapter (guint    done,
                         guint    total,
                         gpointer user_data)
{
  VolumeJob *job = user_data;

  if (job->progress != NULL)
    job->progress (done, total, job->user_data);
}

static gboolean
reconstruct_volume_gpu_locked (TomoEngine            *self,
                               VolumeJob             *job,
                               guint                  row_start,
                               guint                  row_end,
                               const TomoReconParams *params,
                               int                    kernel,
                               GError               **error)
{
  guint width = tomo_scan_get_width (self->scan);
  guint n_proj = tomo_scan_get_n_projections (self->scan);
  guint padded;
  g_autofree double *response = tomo_filter_fbp_response (params->filter, width, n_proj, &padded);
  TomoGpuVolumeJob gjob = { 0 };
  TomoGpuVolumeStats gstats = { 0 };
  gboolean ok;

  gjob.width = width;
  gjob.n_proj = n_proj;
  gjob.angles = tomo_scan_get_angles (self->scan);
  gjob.padded_width = padded;
  gjob.response = response;
  gjob.pad_mode = params->pad;
  tomo_gpu_backproject_params_init (&gjob.bp);
  gjob.bp.center = params->center;
  gjob.bp.interp = params->interp;
  gjob.bp.kernel = kernel;
  gjob.bp.roi_x = job->roi.x;
  gjob.bp.roi_y = job->roi.y;
  gjob.bp.roi_width = job->roi.width;
  gjob.bp.roi_height = job->roi.height;
  gjob.row_start = row_start;
  gjob.row_end = row_end;
  gjob.read = volume_read_cb;
  gjob.write = volume_write_cb;
  gjob.progress = job->progress != NULL ? volume_progress_adapter : NULL;
  gjob.user_data = job;
  gjob.cancel = &job->cancel;
  gjob.stats = &gstats;
  /* Reading and preprocessing a row costs more than its back projection:
   * half the cores read ahead, 4 rows each, at most 1 GiB of rows. */
  {
    guint n_threads = MAX (2, g_get_num_processors () / 2);
    gsize row_bytes = (gsize) n_proj * width * sizeof (float);
    guint depth = (guint) MIN ((gsize) 4 * n_threads, MAX ((gsize) 1 << 30, row_bytes) / row_bytes);

    job->prefetch = tomo_row_prefetch_new (job->scan, row_start, row_end, n_threads,
                                           MAX (depth, 2));
  }

  /* The pipeline makes its own contexts and streams on every device. */
  ok = tomo_gpu_reconstruct_volume (&gjob, error);
  self->volume_stats = (TomoVolumeStats) {
    .reader_ms = tomo_row_prefetch_get_busy_ms (job->prefetch),
    .wall_ms = gstats.wall_ms, .read_ms = gstats.read_ms, .upload_ms = gstats.upload_ms,
    .compute_ms = gstats.compute_ms, .download_ms = gstats.download_ms,
    .write_ms = gstats.write_ms, .wait_ms = gstats.wait_ms, .pack = gstats.pack,
    .n_devices = gstats.n_devices, .n_rows = row_end - row_start,
  };
  g_clear_pointer (&job->prefetch, tomo_row_prefetch_free);
  if (!ok && g_atomic_int_get (&job->cancel))
    {
      g_clear_error (error);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
    }
  return ok;
}

/* The CPU backend reads row k+1 on a thread of its own while row k is
 * filtered and back projected, so reading hides behind computing. */
typedef struct
{
  TomoScan *scan;
  guint row;
  float *sino;
  GError *error;
  double ms;
} CpuRead;

static gpointer
cpu_read_run (gpointer data)
{
  CpuRead *r = data;
  gint64 t0 = g_get_monotonic_time ();

  if (!tomo_scan_read_sinogram (r->scan, r->row, r->sino, NULL, &r->error) && r->error == NULL)
    g_set_error (&r->error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                 "Reading sinogram row %u failed", r->row);
  r->ms = (g_get_monotonic_time () - t0) / 1e3;
  return NULL;
}

static gboolean
reconstruct_volume_cpu_locked (TomoEngine            *self,
                               VolumeJob             *job,
                               guint                  row_start,
                               guint                  row_end,
                               const TomoReconParams *params,
                               GError               **error)
{
  TomoScan *scan = self->scan;
  guint width = tomo_scan_get_width (scan);
  guint n_proj = tomo_scan_get_n_projections (scan);
  g_autoptr(TomoCpuFbp) fbp = tomo_cpu_fbp_new (width, n_proj, tomo_scan_get_angles (scan),
                                                params->filter, params->pad, params->n_threads);
  gsize plane = (gsize) n_proj * width;
  g_autofree float *sino = g_try_malloc (2 * plane * sizeof (float));
  g_autofree float *out = g_try_malloc ((gsize) job->roi.width * job->roi.height * sizeof (float));
  TomoVolumeStats *st = &self->volume_stats;
  gint64 t_start = g_get_monotonic_time ();
  CpuRead read = { scan, row_start, sino, NULL, 0 };
  GThread *reader = NULL;
  gboolean ok = TRUE;

  memset (st, 0, sizeof *st);
  st->pack = 1;
  st->n_rows = row_end - row_start;
  if (sino == NULL || out == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Out of memory for a %u×%u sinogram", n_proj, width);
      return FALSE;
    }
  reader = g_thread_new ("tomo-volume-read", cpu_read_run, &read);
  for (guint row = row_start; row < row_end && ok; row++)
    {
      float *cur = sino + ((row - row_start) % 2) * plane;
      gint64 t0 = g_get_monotonic_time ();

      g_thread_join (reader);
      reader = NULL;
      st->wait_ms += (g_get_monotonic_time () - t0) / 1e3;
      st->read_ms += read.ms;
      if (read.error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&read.error));
          ok = FALSE;
          break;
        }
      if (g_cancellable_set_error_if_cancelled (job->cancellable, error))
        {
          ok = FALSE;
          break;
        }
      if (row + 1 < row_end)
        {
          read.row = row + 1;
          read.sino = sino + ((row + 1 - row_start) % 2) * plane;
          reader = g_thread_new ("tomo-volume-read", cpu_read_run, &read);
        }
      t0 = g_get_monotonic_time ();
      tomo_cpu_fbp_filter (fbp, cur, cur);
      tomo_cpu_fbp_backproject (fbp, cur, params->center, params->interp, &job->roi, out);
      st->compute_ms += (g_get_monotonic_time () - t0) / 1e3;
      t0 = g_get_monotonic_time ();
      ok = job->sink (row, out, job->roi.width, job->roi.height, job->user_data, error);
      st->write_ms += (g_get_monotonic_time () - t0) / 1e3;
      if (ok)
        volume_progress_adapter (row - row_start + 1, row_end - row_start, job);
    }
  if (reader != NULL)
    {
      g_thread_join (reader);
      g_clear_error (&read.error);
    }
  st->wall_ms = (g_get_monotonic_time () - t_start) / 1e3;
  return ok;
}

gboolean
tomo_engine_reconstruct_volume (TomoEngine            *self,
                                guint                  row_start,
                                guint                  row_end,
                                const TomoReconParams *params,
                                int                    kernel,
                                TomoVolumeSink         sink,
                                TomoProgressFunc       progress,
                                gpointer               user_data,
                                GCancellable          *cancellable,
                                GError               **error)
{
  VolumeJob job = { 0 };
  TomoSliceRequest check;
  gboolean ok;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), FALSE);
  g_return_val_if_fail (params != NULL, FALSE);
  g_return_val_if_fail (sink != NULL, FALSE);

  g_mutex_lock (&self->lock);
  tomo_slice_request_init (&check, NULL);
  check.row = row_start;
  check.params = *params;
  if (!validate_request (self->scan, &check, error))
    {
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  if (row_end <= row_start || row_end > tomo_scan_get_height (self->scan))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Rows %u:%u are out of range: %s has rows 0 to %u", row_start, row_end,
                   tomo_scan_get_path (self->scan), tomo_scan_get_height (self->scan) - 1);
      g_mutex_unlock (&self->lock);
      return FALSE;
    }

  job.engine = self;
  job.scan = g_object_ref (self->scan);
  job.sink = sink;
  job.progress = progress;
  job.user_data = user_data;
  job.roi = tomo_recon_params_get_roi (params, tomo_scan_get_width (self->scan));
  job.cancellable = cancellable;
  if (cancellable != NULL)
    job.cancel_id = g_cancellable_connect (cancellable, G_CALLBACK (volume_cancelled_cb),
                                           &job, NULL);

  if (self->active == TOMO_BACKEND_GPU)
    ok = reconstruct_volume_gpu_locked (self, &job, row_start, row_end, params, kernel, error);
  else
    ok = reconstruct_volume_cpu_locked (self, &job, row_start, row_end, params, error);

  if (cancellable != NULL)
    g_cancellable_disconnect (cancellable, job.cancel_id);
  g_object_unref (job.scan);
  g_mutex_unlock (&self->lock);
  return ok;
}

void
tomo_engine_get_volume_stats (TomoEngine      *self,
                              TomoVolumeStats *stats)
{
  g_return_if_fail (TOMO_IS_ENGINE (self));
  g_return_if_fail (stats != NULL);

  g_mutex_lock (&self->lock);
  *stats = self->volume_stats;
  g_mutex_unlock (&self->lock);
}
