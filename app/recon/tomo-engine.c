/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The reconstruction engine: one object that the CLI, the tests and the
 * window all use.  It validates parameters (once, here), owns the backend
 * (tomo-backend.h: CPU reference or the CUDA engine, chosen at start-up),
 * keeps the one cache key of what a parameter change does not invalidate —
 * the filtered sinograms of the current rows — and runs requests either blocking
 * (tomo_engine_reconstruct) or on a worker thread with "latest wins"
 * coalescing (tomo_engine_submit), so dragging a slider never builds a
 * backlog.
 */
#define G_LOG_DOMAIN "tomo-engine"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-backend.h"
#include "tomo-engine.h"
#include "tomo-error.h"
#include "tomo-scan-private.h"
#include "tomo-scrub-prefetch.h"

struct _TomoEngine
{
  GObject parent_instance;

  /* Serialises reconstruction: the backends and caches below are used by one
   * thread at a time (the worker, or a blocking caller). */
  GMutex lock;

  TomoBackend requested;
  TomoBackendImpl *backend;

  TomoScan *scan;

  /* The one cache key of the filtered sinograms on the backend: the
   * backend is configured for the scan with `filter` and `pad`, and holds
   * rows [row, row + n_slices) filtered. */
  struct
  {
    gboolean configured;
    TomoFilterType filter;
    TomoPadMode pad;
    gboolean loaded;
    guint row, n_slices;
    TomoPreprocessStats stats;
  } cache;

  /* The device path's raw rows of `scan` (NULL until a row change takes
   * it); device_preprocess: whether row changes may take it. */
  TomoRawRows *raw_rows;
  gboolean device_preprocess;

  TomoVolumeStats volume_stats; /* of the last volume */

  /* Worker for tomo_engine_submit(): at most one request pending. */
  GMutex queue_lock;
  GCond queue_cond;
  GThread *worker;
  gboolean quit;
  struct PendingRequest *pending;
  struct PendingRequest *pending_centers; /* its own slot: a sweep never drops a slice */

  /* Rows around the last one served, read into the scan's cache while the
   * user looks at it (guarded by queue_lock, used by the worker). */
  TomoScrubPrefetch *prefetch;
  guint prefetch_ahead, prefetch_behind;
  gboolean have_last_row;
  guint last_row;
  int direction;
};

typedef struct PendingRequest
{
  TomoSliceRequest request;
  double *centers;  /* a centre sweep when n_centers > 0 */
  guint n_centers;
  GDestroyNotify destroy; /* of user_data, once answered or dropped */
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
    ((const TomoDeviceBufferOps *) slice->device_ops)->free (slice->device_buffer);
  g_free (slice);
}

gboolean
tomo_slice_get_value (TomoSlice *slice,
                      guint      index,
                      guint      x,
                      guint      y,
                      float     *value)
{
  gsize offset;

  g_return_val_if_fail (slice != NULL, FALSE);
  g_return_val_if_fail (value != NULL, FALSE);

  if (index >= slice->n_slices || x >= slice->width || y >= slice->height)
    return FALSE;
  offset = ((gsize) index * slice->height + y) * slice->width + x;
  if (slice->data != NULL)
    {
      *value = slice->data[offset];
      return TRUE;
    }
  if (slice->device_buffer != NULL)
    return ((const TomoDeviceBufferOps *) slice->device_ops)->read_value (slice->device_buffer,
                                                                          offset, value);
  return FALSE;
}

const float *
tomo_slice_get_device_data (TomoSlice *slice,
                            int       *device)
{
  g_return_val_if_fail (slice != NULL, NULL);

  if (slice->device_buffer == NULL)
    {
      if (device != NULL)
        *device = -1;
      return NULL;
    }
  return ((const TomoDeviceBufferOps *) slice->device_ops)->data (slice->device_buffer, device);
}

void
tomo_slice_request_init (TomoSliceRequest *request,
                         TomoScan         *scan)
{
  g_return_if_fail (request != NULL);

  memset (request, 0, sizeof *request);
  request->n_slices = 1;
  request->kernel = TOMO_KERNEL_AUTO;
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
  if (pending->destroy != NULL)
    pending->destroy (pending->user_data);
  g_main_context_unref (pending->context);
  g_free (pending->centers);
  g_free (pending);
}

static void
invalidate_cache_locked (TomoEngine *self)
{
  memset (&self->cache, 0, sizeof self->cache);
}

static void
set_backend_locked (TomoEngine      *self,
                    TomoBackendImpl *backend)
{
  g_clear_pointer (&self->backend, tomo_backend_free);
  self->backend = backend;
  invalidate_cache_locked (self);
  /* Raw rows serve only a backend with a device path. */
  g_clear_pointer (&self->raw_rows, tomo_raw_rows_unref);
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
      g_clear_pointer (&self->pending_centers, pending_request_free);
      g_cond_broadcast (&self->queue_cond);
      g_mutex_unlock (&self->queue_lock);
      g_thread_join (self->worker);
      self->worker = NULL;
    }
  /* Stops after the row being read, before the scan goes. */
  g_clear_pointer (&self->prefetch, tomo_scrub_prefetch_free);

  g_mutex_lock (&self->lock);
  g_clear_object (&self->scan);
  g_clear_pointer (&self->raw_rows, tomo_raw_rows_unref);
  /* The backend stays until finalize: its name and device are still asked
   * for after a dispose. */
  invalidate_cache_locked (self);
  g_mutex_unlock (&self->lock);

  G_OBJECT_CLASS (tomo_engine_parent_class)->dispose (object);
}

static void
tomo_engine_finalize (GObject *object)
{
  TomoEngine *self = TOMO_ENGINE (object);

  g_clear_pointer (&self->backend, tomo_backend_free);
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
  self->backend = tomo_backend_cpu_new ();
  self->prefetch_ahead = 4;
  self->prefetch_behind = 2;
  self->device_preprocess = TRUE;
}

static void
use_cpu_locked (TomoEngine *self)
{
  if (self->backend->ops->backend != TOMO_BACKEND_CPU)
    set_backend_locked (self, tomo_backend_cpu_new ());
}

static gboolean
use_gpu_locked (TomoEngine *self,
                GError    **error)
{
  TomoBackendImpl *gpu;

  if (self->backend->ops->backend == TOMO_BACKEND_GPU)
    return TRUE;
  gpu = tomo_backend_gpu_new (error);
  if (gpu == NULL)
    return FALSE;
  set_backend_locked (self, gpu);
  return TRUE;
}

/* A device fault leaves the CUDA context unusable: the engine goes on with
 * the CPU backend (a later tomo_engine_set_backend() may try the GPU
 * again) and its caller sees the fault's error. */
static void
give_up_gpu_locked (TomoEngine   *self,
                    const GError *error)
{
  if (error == NULL || !g_error_matches (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_DEVICE_FAULT)
      || self->backend->ops->backend != TOMO_BACKEND_GPU)
    return;
  g_message ("%s; going on with the CPU backend", error->message);
  use_cpu_locked (self);
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
  return self->backend->ops->backend;
}

int
tomo_engine_count_gpus (void)
{
  return tomo_backend_gpu_count_devices ();
}

gboolean
tomo_engine_has_gpu (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), FALSE);
  return self->backend->ops->backend == TOMO_BACKEND_GPU || tomo_backend_gpu_count_devices () > 0;
}

const char *
tomo_engine_get_device_name (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  return self->backend->device_name;
}

int
tomo_engine_get_device (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), -1);
  return self->backend->device;
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
      invalidate_cache_locked (self);
      g_clear_pointer (&self->raw_rows, tomo_raw_rows_unref);
    }
  g_mutex_unlock (&self->lock);

  /* Rows of the previous scan are of no use any more. */
  g_mutex_lock (&self->queue_lock);
  if (self->prefetch != NULL)
    tomo_scrub_prefetch_cancel (self->prefetch);
  self->have_last_row = FALSE;
  g_mutex_unlock (&self->queue_lock);
}

TomoScan *
tomo_engine_get_scan (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  return self->scan;
}

gboolean
tomo_recon_check_rows (TomoScan *scan,
                       guint     row_start,
                       guint     row_end,
                       GError  **error)
{
  guint height = tomo_scan_get_height (scan);

  if (row_end > row_start && row_end <= height)
    return TRUE;
  if (row_end == row_start + 1 || row_start >= height)
    g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                 "Row %u is out of range: %s has rows 0 to %u",
                 row_start, tomo_scan_get_path (scan), height - 1);
  else
    g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                 "Rows %u:%u are out of range: %s has rows 0 to %u", row_start, row_end,
                 tomo_scan_get_path (scan), height - 1);
  return FALSE;
}

static gboolean
check_locked (TomoEngine            *self,
              guint                  row_start,
              guint                  row_end,
              const TomoReconParams *params,
              TomoRoi               *roi,
              GError               **error)
{
  TomoScan *scan = self->scan;
  guint width;

  if (scan == NULL)
    {
      g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                           "No scan is open");
      return FALSE;
    }
  width = tomo_scan_get_width (scan);
  if (!tomo_recon_check_rows (scan, row_start, row_end, error)
      || !tomo_recon_params_validate (params, width, error))
    return FALSE;
  if (roi != NULL)
    *roi = tomo_recon_params_get_roi (params, width);
  return TRUE;
}

gboolean
tomo_engine_check (TomoEngine            *self,
                   guint                  row_start,
                   guint                  row_end,
                   const TomoReconParams *params,
                   TomoRoi               *roi,
                   GError               **error)
{
  gboolean ok;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), FALSE);
  g_return_val_if_fail (params != NULL, FALSE);

  g_mutex_lock (&self->lock);
  ok = check_locked (self, row_start, row_end, params, roi, error);
  g_mutex_unlock (&self->lock);
  return ok;
}

/* A slice request: its slice count and kernel, then check_locked(). */
static gboolean
check_request_locked (TomoEngine *self, const TomoSliceRequest *request, TomoRoi *roi,
                      GError **error)
{
  if (request->n_slices != 1 && request->n_slices != 2 && request->n_slices != 4)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Slice-parallel mode must be 1, 2 or 4 slices, not %u", request->n_slices);
      return FALSE;
    }
  if (self->scan != NULL && request->n_slices > 1
      && request->row < tomo_scan_get_height (self->scan)
      && request->row + request->n_slices > tomo_scan_get_height (self->scan))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Row %u (with its neighbours) is out of range: %s has rows 0 to %u",
                   request->row, tomo_scan_get_path (self->scan),
                   tomo_scan_get_height (self->scan) - 1);
      return FALSE;
    }
  if ((guint) request->kernel >= TOMO_N_KERNELS)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Unknown back-projection kernel %d", request->kernel);
      return FALSE;
    }
  return check_locked (self, request->row, request->row + request->n_slices,
                       &request->params, roi, error);
}

/* Whether row changes go the device path: a backend that preprocesses raw
 * rows, a scan of a file (a derived scan's rows are line integrals made on
 * the host already).  Makes the raw row cache on first use. */
static gboolean
use_raw_rows_locked (TomoEngine *self)
{
  if (self->backend->ops->load_raw == NULL || !self->device_preprocess
      || _tomo_scan_get_base (self->scan) != NULL)
    return FALSE;
  if (self->raw_rows == NULL)
    self->raw_rows = tomo_raw_rows_new (self->scan, 0);
  return TRUE;
}

/* Rows [request->row, + n_slices) onto the backend, on the device path or
 * the host's, with the stages' times in `slice`. */
static gboolean
load_locked (TomoEngine             *self,
             const TomoSliceRequest *request,
             TomoSlice              *slice,
             TomoPreprocessStats    *stats,
             GCancellable           *cancellable,
             GError                **error)
{
  TomoBackendImpl *backend = self->backend;
  TomoRawRow *rows[4] = { NULL, };
  gint64 start = g_get_monotonic_time ();
  gboolean ok = TRUE;

  if (!use_raw_rows_locked (self))
    {
      ok = backend->ops->load_rows (backend, self->scan, request->row, request->n_slices, stats,
                                    cancellable, error);
      slice->read_ms = (g_get_monotonic_time () - start) / 1000.0;
      return ok;
    }
  g_assert (request->n_slices <= G_N_ELEMENTS (rows));
  for (guint s = 0; s < request->n_slices && ok; s++)
    ok = (rows[s] = tomo_raw_rows_get (self->raw_rows, request->row + s, error)) != NULL;
  slice->read_ms = (g_get_monotonic_time () - start) / 1000.0;
  ok = ok && !g_cancellable_set_error_if_cancelled (cancellable, error)
       && backend->ops->load_raw (backend, self->scan, rows, request->n_slices, stats,
                                  &slice->upload_ms, &slice->preprocess_ms, error);
  for (guint s = 0; s < G_N_ELEMENTS (rows); s++)
    g_clear_pointer (&rows[s], tomo_raw_row_unref);
  slice->device_preprocess = ok;
  return ok;
}

/* Brings the backend's filtered rows to what `request` needs: the one place
 * where the cache key is compared and updated. */
static gboolean
ensure_filtered_locked (TomoEngine             *self,
                        const TomoSliceRequest *request,
                        TomoSlice              *slice,
                        GCancellable           *cancellable,
                        GError                **error)
{
  TomoBackendImpl *backend = self->backend;
  const TomoReconParams *params = &request->params;

  if (!self->cache.configured || self->cache.filter != params->filter
      || self->cache.pad != params->pad)
    {
      TomoBackendSetup setup = {
        .width = tomo_scan_get_width (self->scan),
        .n_proj = tomo_scan_get_n_projections (self->scan),
        .angles = tomo_scan_get_angles (self->scan),
        .filter = params->filter,
        .pad = params->pad,
        .n_threads = params->n_threads,
      };

      invalidate_cache_locked (self);
      if (!backend->ops->configure (backend, &setup, error))
        return FALSE;
      self->cache.configured = TRUE;
      self->cache.filter = params->filter;
      self->cache.pad = params->pad;
    }
  if (!self->cache.loaded || self->cache.row != request->row
      || self->cache.n_slices != request->n_slices)
    {
      TomoPreprocessStats stats = { 0 };

      self->cache.loaded = FALSE;
      if (!load_locked (self, request, slice, &stats, cancellable, error)
          || !backend->ops->filter (backend, &slice->filter_ms, error))
        return FALSE;
      self->cache.loaded = TRUE;
      self->cache.row = request->row;
      self->cache.n_slices = request->n_slices;
      self->cache.stats = stats;
    }
  slice->stats = self->cache.stats;
  return TRUE;
}

static void
slice_init (TomoSlice              *slice,
            const TomoSliceRequest *request,
            const TomoRoi          *roi,
            guint                   n_planes)
{
  slice->ref_count = 1;
  slice->row = request->row;
  slice->n_slices = n_planes;
  slice->params = request->params;
  slice->roi = *roi;
  slice->width = roi->width;
  slice->height = roi->height;
}

/* Request in → slice out, and the back projection's rate. */
static void
set_times_locked (TomoEngine *self,
                  TomoSlice  *slice,
                  gint64      start)
{
  double updates = (double) slice->width * slice->height * slice->n_slices
                   * tomo_scan_get_n_projections (self->scan);

  slice->total_ms = (g_get_monotonic_time () - start) / 1000.0;
  slice->gups = slice->backproject_ms > 0 ? updates / (slice->backproject_ms * 1e6) : 0;
}

/* The row slice `request` asks for, over `roi`. */
static TomoBackendPlane
plane_of_request (const TomoSliceRequest *request,
                  const TomoRoi          *roi)
{
  return (TomoBackendPlane) {
    .kind = TOMO_PLANE_ROW_SLICE,
    .center = request->params.center,
    .interp = request->params.interp,
    .roi = *roi,
    .kernel = request->kernel,
    .keep_on_device = request->keep_on_device,
    .skip_download = request->skip_download,
  };
}

/* After a blocking reconstruction under the lock: a GPU failure hands the
 * engine to the CPU, the slice gets its times; unlocks and reports. */
static TomoSlice *
unlock_with_slice (TomoEngine *self,
                   TomoSlice  *slice,
                   gint64      start,
                   GError     *local_error,
                   GError    **error)
{
  give_up_gpu_locked (self, local_error);
  if (slice != NULL)
    set_times_locked (self, slice, start);
  g_mutex_unlock (&self->lock);
  if (local_error != NULL)
    g_propagate_error (error, local_error);
  return slice;
}

static TomoSlice *
reconstruct_locked (TomoEngine             *self,
                    const TomoSliceRequest *request,
                    const TomoRoi          *roi,
                    GCancellable           *cancellable,
                    GError                **error)
{
  TomoBackendImpl *backend = self->backend;
  g_autoptr(TomoSlice) slice = g_new0 (TomoSlice, 1);
  TomoBackendPlane plane = plane_of_request (request, roi);

  slice_init (slice, request, roi, request->n_slices);

  if (!ensure_filtered_locked (self, request, slice, cancellable, error))
    return NULL;
  if (!backend->ops->backproject (backend, &plane, slice, cancellable, error))
    {
      /* The filtered sinograms may be gone with a failed launch. */
      invalidate_cache_locked (self);
      return NULL;
    }
  if (!backend->ops->stats (backend, slice, error))
    return NULL;
  return g_steal_pointer (&slice);
}

TomoSlice *
tomo_engine_reconstruct (TomoEngine             *self,
                         const TomoSliceRequest *request,
                         GCancellable           *cancellable,
                         GError                **error)
{
  TomoSlice *slice = NULL;
  GError *local_error = NULL;
  TomoRoi roi;
  gint64 start;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  g_return_val_if_fail (request != NULL, NULL);

  start = g_get_monotonic_time ();
  g_mutex_lock (&self->lock);
  if (check_request_locked (self, request, &roi, &local_error))
    slice = reconstruct_locked (self, request, &roi, cancellable, &local_error);
  return unlock_with_slice (self, slice, start, local_error, error);
}

/* --- "latest wins" worker ------------------------------------------------ */

typedef struct
{
  TomoEngine *engine;
  TomoSlice *slice;
  GError *error;
  TomoEngineCallback callback;
  gpointer user_data;
  GDestroyNotify destroy;
} Delivery;

static gboolean
deliver_cb (gpointer data)
{
  Delivery *d = data;

  d->callback (d->engine, d->slice, d->error, d->user_data);
  if (d->destroy != NULL)
    d->destroy (d->user_data);
  g_clear_pointer (&d->slice, tomo_slice_unref);
  g_clear_error (&d->error);
  g_object_unref (d->engine);
  g_free (d);
  return G_SOURCE_REMOVE;
}

/* After row r was served: read the rows the user will likely go to next,
 * unless another request is already waiting. */
static void
aim_prefetch (TomoEngine             *self,
              const TomoSliceRequest *request)
{
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoRawRows) raw = NULL;

  g_mutex_lock (&self->lock);
  if (self->scan != NULL)
    scan = g_object_ref (self->scan);
  /* Where the last row came from is where its neighbours go. */
  if (self->raw_rows != NULL && use_raw_rows_locked (self))
    raw = tomo_raw_rows_ref (self->raw_rows);
  g_mutex_unlock (&self->lock);

  g_mutex_lock (&self->queue_lock);
  if (scan != NULL && self->pending == NULL && !self->quit
      && (self->prefetch_ahead > 0 || self->prefetch_behind > 0))
    {
      guint first = request->row, last = request->row + MAX (request->n_slices, 1) - 1;

      if (self->have_last_row && request->row != self->last_row)
        self->direction = request->row > self->last_row ? 1 : -1;
      else if (!self->have_last_row)
        self->direction = 1;
      self->have_last_row = TRUE;
      self->last_row = request->row;
      if (self->prefetch == NULL)
        self->prefetch = tomo_scrub_prefetch_new ();
      if (raw != NULL)
        tomo_scrub_prefetch_aim_raw (self->prefetch, raw, self->direction > 0 ? last : first,
                                     self->direction, self->prefetch_ahead,
                                     self->prefetch_behind);
      else
        tomo_scrub_prefetch_aim (self->prefetch, scan, self->direction > 0 ? last : first,
                                 self->direction, self->prefetch_ahead, self->prefetch_behind);
    }
  g_mutex_unlock (&self->queue_lock);
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
      while (self->pending == NULL && self->pending_centers == NULL && !self->quit)
        g_cond_wait (&self->queue_cond, &self->queue_lock);
      if (self->quit)
        {
          g_mutex_unlock (&self->queue_lock);
          break;
        }
      pending = self->pending != NULL ? g_steal_pointer (&self->pending)
                                      : g_steal_pointer (&self->pending_centers);
      /* The engine is alive while the worker runs: dispose joins us before
       * anything is freed, so a reference taken here is safe. */
      d = g_new0 (Delivery, 1);
      d->engine = g_object_ref (self);
      g_mutex_unlock (&self->queue_lock);

      if (pending->n_centers > 0)
        d->slice = tomo_engine_reconstruct_centers (self, &pending->request, pending->centers,
                                                    pending->n_centers, NULL, &d->error);
      else
        d->slice = tomo_engine_reconstruct (self, &pending->request, NULL, &d->error);
      if (d->slice != NULL && pending->n_centers == 0)
        aim_prefetch (self, &pending->request);
      d->callback = pending->callback;
      d->user_data = pending->user_data;
      d->destroy = g_steal_pointer (&pending->destroy);

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

static PendingRequest *
pending_request_new (const TomoSliceRequest *request,
                     TomoEngineCallback      callback,
                     gpointer                user_data)
{
  PendingRequest *pending = g_new0 (PendingRequest, 1);

  pending->request = *request;
  pending->callback = callback;
  pending->user_data = user_data;
  pending->context = g_main_context_ref_thread_default ();
  return pending;
}

/* Replaces what waits in `slot` (latest wins) and wakes the worker. */
static void
enqueue (TomoEngine      *self,
         PendingRequest **slot,
         PendingRequest  *pending)
{
  g_mutex_lock (&self->queue_lock);
  g_clear_pointer (slot, pending_request_free);
  *slot = pending;
  /* The request comes first: rows queued for the last one are dropped
   * (the new slice re-aims them). */
  if (self->prefetch != NULL)
    tomo_scrub_prefetch_cancel (self->prefetch);
  if (self->worker == NULL)
    self->worker = g_thread_new ("tomo-engine", worker_main, self);
  g_cond_signal (&self->queue_cond);
  g_mutex_unlock (&self->queue_lock);
}

void
tomo_engine_submit (TomoEngine             *self,
                    const TomoSliceRequest *request,
                    TomoEngineCallback      callback,
                    gpointer                user_data)
{
  g_return_if_fail (TOMO_IS_ENGINE (self));
  g_return_if_fail (request != NULL);
  g_return_if_fail (callback != NULL);

  enqueue (self, &self->pending, pending_request_new (request, callback, user_data));
}

void
tomo_engine_submit_centers (TomoEngine             *self,
                            const TomoSliceRequest *request,
                            const double           *centers,
                            guint                   n_centers,
                            TomoEngineCallback      callback,
                            gpointer                user_data,
                            GDestroyNotify          destroy)
{
  PendingRequest *pending;

  g_return_if_fail (TOMO_IS_ENGINE (self));
  g_return_if_fail (request != NULL);
  g_return_if_fail (centers != NULL && n_centers > 0);
  g_return_if_fail (callback != NULL);

  pending = pending_request_new (request, callback, user_data);
  pending->centers = g_memdup2 (centers, sizeof (double) * n_centers);
  pending->n_centers = n_centers;
  pending->destroy = destroy;
  enqueue (self, &self->pending_centers, pending);
}

/* --- centre sweep ------------------------------------------------------- */

static TomoSlice *
reconstruct_centers_locked (TomoEngine             *self,
                            const TomoSliceRequest *request,
                            const double           *centers,
                            guint                   n_centers,
                            GCancellable           *cancellable,
                            GError                **error)
{
  TomoBackendImpl *backend = self->backend;
  g_autoptr(TomoSlice) slice = g_new0 (TomoSlice, 1);
  TomoBackendCenters sweep = { .centers = centers, .n_centers = n_centers };
  TomoRoi roi;

  if (request->n_slices != 1)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "A centre sweep reconstructs one row, not %u", request->n_slices);
      return NULL;
    }
  if (n_centers == 0 || n_centers > TOMO_ENGINE_MAX_CENTERS)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "A centre sweep takes 1 to %u candidates, not %u", TOMO_ENGINE_MAX_CENTERS,
                   n_centers);
      return NULL;
    }
  if (!check_request_locked (self, request, &roi, error))
    return NULL;
  for (guint i = 0; i < n_centers; i++)
    {
      TomoReconParams params = request->params;

      params.center = centers[i];
      if (!check_locked (self, request->row, request->row + 1, &params, NULL, error))
        return NULL;
    }
  sweep.plane = plane_of_request (request, &roi);
  slice_init (slice, request, &roi, n_centers);
  slice->backend = backend->ops->backend;
  slice->kernel = g_strdup ("centers");

  if (!ensure_filtered_locked (self, request, slice, cancellable, error)
      || !tomo_backend_alloc_slice_data (slice, error))
    return NULL;
  sweep.images = slice->data;
  if (!backend->ops->backproject_centers (backend, &sweep, error))
    {
      invalidate_cache_locked (self);
      return NULL;
    }
  slice->backproject_ms = sweep.ms;
  tomo_slice_stats_compute (slice->data, (gsize) roi.width * roi.height * n_centers,
                            &slice->values);
  return g_steal_pointer (&slice);
}

TomoSlice *
tomo_engine_reconstruct_centers (TomoEngine             *self,
                                 const TomoSliceRequest *request,
                                 const double           *centers,
                                 guint                   n_centers,
                                 GCancellable           *cancellable,
                                 GError                **error)
{
  TomoSlice *slice = NULL;
  GError *local_error = NULL;
  gint64 start;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  g_return_val_if_fail (request != NULL, NULL);
  g_return_val_if_fail (centers != NULL || n_centers == 0, NULL);

  start = g_get_monotonic_time ();
  g_mutex_lock (&self->lock);
  slice = reconstruct_centers_locked (self, request, centers, n_centers, cancellable,
                                      &local_error);
  return unlock_with_slice (self, slice, start, local_error, error);
}

/* --- whole volumes ------------------------------------------------------ */

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
  TomoBackendVolume job = { 0 };
  gboolean ok = FALSE;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), FALSE);
  g_return_val_if_fail (params != NULL, FALSE);
  g_return_val_if_fail (sink != NULL, FALSE);

  g_mutex_lock (&self->lock);
  if ((guint) kernel >= TOMO_N_KERNELS)
    g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                 "Unknown back-projection kernel %d", kernel);
  else if (check_locked (self, row_start, row_end, params, &job.roi, error))
    {
      job.scan = g_object_ref (self->scan);
      job.row_start = row_start;
      job.row_end = row_end;
      job.params = *params;
      job.kernel = kernel;
      job.sink = sink;
      job.progress = progress;
      job.user_data = user_data;
      job.cancellable = cancellable;
      job.stats = &self->volume_stats;
      memset (&self->volume_stats, 0, sizeof self->volume_stats);
      self->volume_stats.n_rows = row_end - row_start;
      ok = self->backend->ops->volume (self->backend, &job, error);
      give_up_gpu_locked (self, ok || error == NULL ? NULL : *error);
      g_object_unref (job.scan);
    }
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

void
tomo_engine_set_prefetch (TomoEngine *self,
                          guint       ahead,
                          guint       behind)
{
  g_return_if_fail (TOMO_IS_ENGINE (self));

  g_mutex_lock (&self->queue_lock);
  self->prefetch_ahead = ahead;
  self->prefetch_behind = behind;
  if (self->prefetch != NULL && ahead == 0 && behind == 0)
    tomo_scrub_prefetch_cancel (self->prefetch);
  g_mutex_unlock (&self->queue_lock);
}

void
tomo_engine_set_device_preprocess (TomoEngine *self,
                                   gboolean    device_preprocess)
{
  g_return_if_fail (TOMO_IS_ENGINE (self));

  g_mutex_lock (&self->lock);
  if (self->device_preprocess != !!device_preprocess)
    {
      self->device_preprocess = !!device_preprocess;
      /* The rows loaded came the other way: the next request reloads. */
      self->cache.loaded = FALSE;
    }
  g_mutex_unlock (&self->lock);
}

guint
tomo_engine_wait_prefetch (TomoEngine *self)
{
  TomoScrubPrefetch *prefetch;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), 0);

  /* The prefetcher lives until dispose, which a caller holding the engine
   * cannot race. */
  g_mutex_lock (&self->queue_lock);
  prefetch = self->prefetch;
  g_mutex_unlock (&self->queue_lock);
  if (prefetch == NULL)
    return 0;
  tomo_scrub_prefetch_wait_idle (prefetch);
  return tomo_scrub_prefetch_get_n_read (prefetch);
}
