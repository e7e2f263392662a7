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
 *
 * Threads: the engine's lock guards only what the next computation runs
 * on (scan, backend) and is held for moments, so tomo_engine_set_scan()
 * and tomo_engine_set_backend() on the UI thread never wait for a slice or
 * a volume.  A computation (EngineJob) takes references to the scan and
 * the backend in one such moment and marks the backend busy until it is
 * done: one computation at a time on a backend, each on what it started
 * with, nothing freed under it; a change applies to the next, and one
 * waiting for a busy backend goes to the new backend, or is cancelled by
 * a new scan, as soon as the change is made.
 */
#define G_LOG_DOMAIN "tomo-engine"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-backend.h"
#include "tomo-engine.h"
#include "tomo-error.h"
#include "tomo-geometry.h"
#include "tomo-scan-private.h"
#include "tomo-scrub-prefetch.h"

/* A backend and the cache key of what it holds.  The engine holds the one
 * the next request goes to, every computation the one it started on: the
 * last holder frees it, so a switch never frees a backend in use. */
typedef struct
{
  int ref_count;            /* under the engine's lock */
  gboolean faulted;         /* under the engine's lock: its device failed */
  gboolean busy;            /* under the engine's lock: a computation runs on it */
  TomoBackendImpl *impl;
  /* The one cache key of the filtered sinograms on the backend (used by
   * the computation that has it busy): configured for the scan of
   * `generation` with `filter` and `pad`, holding rows [row, row +
   * n_slices) filtered, loaded on the device path (`raw`) or the host's. */
  struct
  {
    gboolean configured;
    guint64 generation;
    TomoFilterType filter;
    TomoPadMode pad;
    gboolean loaded, raw;
    guint row, n_slices;
    TomoPreprocessStats stats;
  } cache;
} EngineBackend;

struct _TomoEngine
{
  GObject parent_instance;

  /* Guards the fields from here to the worker's: what the next computation
   * runs on.  Held for moments only — never while computing, reading or
   * making a backend. */
  GMutex lock;
  GCond backend_cond; /* a backend is no longer busy, or the engine's changed */
  EngineBackend *backend;
  /* The backend of each kind that still exists (the engine's or one a
   * computation holds; not a reference): a switch back takes it again
   * instead of making a second one beside it (a GPU's device memory twice)
   * and waits its turn behind that computation. */
  EngineBackend *alive[TOMO_BACKEND_GPU + 1];
  TomoScan *scan;
  /* Of `scan`, bumped by every new one: requests are stamped with it, and
   * the backends' cache keys name the scan by it. */
  guint64 generation;
  /* The device path's raw rows of `scan`'s raw source, a file
   * (tomo_geometry_get_mapped_source(); NULL until a row change takes it,
   * kept across scans of the same source); device_preprocess: whether row
   * changes may take it. */
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
  guint64 generation; /* of the engine's scan when submitted */
  double *centers;  /* a centre sweep when n_centers > 0 */
  guint n_centers;
  GDestroyNotify destroy; /* of user_data, once answered or dropped */
  TomoEngineCallback callback;
  gpointer user_data;
  GMainContext *context;
} PendingRequest;

/* What one computation runs on, taken in one moment under the engine's
 * lock: references to the backend (busy until job_end) and the scan, the
 * scan's generation (0 for a scan passed in that is not the engine's) and
 * whether rows may take the device path. */
typedef struct
{
  TomoEngine *engine;
  EngineBackend *backend;
  TomoBackendImpl *impl;
  TomoScan *scan;
  guint64 generation;
  gboolean device_preprocess;
} EngineJob;

/* A request's stamp that any generation satisfies: blocking calls. */
#define ANY_GENERATION 0

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
  g_free (slice->negativity);
  if (slice->device_buffer != NULL)
    ((const TomoDeviceBufferOps *) slice->device_ops)->free (slice->device_buffer);
  g_free (slice);
}

/* From host data or the device copy; the rectangle checked. */
static gboolean
read_rect (TomoSlice *slice,
           guint      index,
           guint      x,
           guint      y,
           guint      width,
           guint      height,
           float     *out,
           GError   **error)
{
  gsize offset = ((gsize) index * slice->height + y) * slice->width + x;

  if (slice->data != NULL)
    {
      for (guint r = 0; r < height; r++)
        memcpy (out + (gsize) r * width, slice->data + offset + (gsize) r * slice->width,
                width * sizeof (float));
      return TRUE;
    }
  if (slice->device_buffer != NULL)
    return ((const TomoDeviceBufferOps *) slice->device_ops)->read_rect (slice->device_buffer,
                                                                         offset, slice->width,
                                                                         width, height, out,
                                                                         error);
  g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                       "The slice has neither host nor device data");
  return FALSE;
}

gboolean
tomo_slice_get_value (TomoSlice *slice,
                      guint      index,
                      guint      x,
                      guint      y,
                      float     *value)
{
  g_autoptr(GError) error = NULL;

  g_return_val_if_fail (slice != NULL, FALSE);
  g_return_val_if_fail (value != NULL, FALSE);

  if (index >= slice->n_slices || x >= slice->width || y >= slice->height)
    return FALSE;
  if (!read_rect (slice, index, x, y, 1, 1, value, &error))
    {
      g_warning ("Reading a slice value: %s", error->message);
      return FALSE;
    }
  return TRUE;
}

gboolean
tomo_slice_read_rect (TomoSlice *slice,
                      guint      index,
                      guint      x,
                      guint      y,
                      guint      width,
                      guint      height,
                      float     *out,
                      GError   **error)
{
  g_return_val_if_fail (slice != NULL, FALSE);
  g_return_val_if_fail (out != NULL || width == 0 || height == 0, FALSE);

  if (index >= slice->n_slices || x > slice->width || width > slice->width - x
      || y > slice->height || height > slice->height - y)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "%u × %u values from (%u, %u) of plane %u do not fit the %u plane(s) of "
                   "%u × %u", width, height, x, y, index, slice->n_slices, slice->width,
                   slice->height);
      return FALSE;
    }
  if (width == 0 || height == 0)
    return TRUE;
  return read_rect (slice, index, x, y, width, height, out, error);
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

gboolean
tomo_slice_ensure_data (TomoSlice *slice,
                        GError   **error)
{
  g_autofree float *data = NULL;

  g_return_val_if_fail (slice != NULL, FALSE);

  if (slice->data != NULL)
    return TRUE;
  if (slice->device_buffer == NULL)
    {
      g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                           "The slice has neither host nor device data");
      return FALSE;
    }
  data = g_try_new (float, (gsize) slice->n_slices * slice->height * slice->width);
  if (data == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "No host memory for the %u × %u slice", slice->width, slice->height);
      return FALSE;
    }
  if (!((const TomoDeviceBufferOps *) slice->device_ops)->download (slice->device_buffer, data))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Could not copy the %u × %u slice from the GPU to host memory", slice->width,
                   slice->height);
      return FALSE;
    }
  slice->data = g_steal_pointer (&data);
  return TRUE;
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

/* --- backends and jobs ---------------------------------------------------- */

static EngineBackend *
engine_backend_new (TomoBackendImpl *impl)
{
  EngineBackend *backend = g_new0 (EngineBackend, 1);

  backend->ref_count = 1;
  backend->impl = impl;
  return backend;
}

static EngineBackend *
engine_backend_ref_locked (EngineBackend *backend)
{
  backend->ref_count++;
  return backend;
}

/* Takes the engine's lock: never called with it held. */
static void
engine_backend_unref (TomoEngine    *self,
                      EngineBackend *backend)
{
  gboolean last;

  g_mutex_lock (&self->lock);
  last = --backend->ref_count == 0;
  if (last && self->alive[backend->impl->ops->backend] == backend)
    self->alive[backend->impl->ops->backend] = NULL;
  g_mutex_unlock (&self->lock);
  if (!last)
    return;
  /* No one else can reach it now: a GPU's device memory goes here, on the
   * thread of the last holder. */
  tomo_backend_free (backend->impl);
  g_free (backend);
}

static void
invalidate_cache (EngineBackend *backend)
{
  memset (&backend->cache, 0, sizeof backend->cache);
}

/* Under the lock: `backend` (a reference, taken over) becomes the one the
 * next computation runs on; what the caller lets go once unlocked goes to
 * *old and *raw. */
static void
install_backend_locked (TomoEngine     *self,
                        EngineBackend  *backend,
                        EngineBackend **old,
                        TomoRawRows   **raw)
{
  *old = self->backend;
  self->backend = backend;
  self->alive[backend->impl->ops->backend] = backend;
  /* Raw rows serve only a backend with a device path. */
  if (backend->impl->ops->load_raw == NULL)
    *raw = g_steal_pointer (&self->raw_rows);
  /* Computations waiting for the previous one take this one. */
  g_cond_broadcast (&self->backend_cond);
}

static void
let_go (TomoEngine    *self,
        EngineBackend *old,
        TomoRawRows   *raw)
{
  g_clear_pointer (&raw, tomo_raw_rows_unref);
  if (old != NULL)
    engine_backend_unref (self, old);
}

/* The engine's backend becomes one of `kind`: the one that exists if there
 * is one (its device did not fail), else a new one — made outside the
 * lock, as a CUDA context takes a while.  FALSE and the reason when no
 * backend of that kind can be made. */
static gboolean
use_backend (TomoEngine  *self,
             TomoBackend  kind,
             GError     **error)
{
  EngineBackend *backend, *old = NULL;
  TomoRawRows *raw = NULL;

  for (;;)
    {
      backend = NULL;
      g_mutex_lock (&self->lock);
      if (self->backend->impl->ops->backend == kind && !self->backend->faulted)
        {
          g_mutex_unlock (&self->lock);
          return TRUE;
        }
      if (self->alive[kind] != NULL && !self->alive[kind]->faulted)
        backend = engine_backend_ref_locked (self->alive[kind]);
      g_mutex_unlock (&self->lock);

      if (backend == NULL)
        {
          TomoBackendImpl *impl = kind == TOMO_BACKEND_GPU ? tomo_backend_gpu_new (error)
                                                            : tomo_backend_cpu_new ();

          if (impl == NULL)
            return FALSE;
          backend = engine_backend_new (impl);
        }
      g_mutex_lock (&self->lock);
      /* A job on the backend found it faulted meanwhile: not that one. */
      if (!backend->faulted)
        break;
      g_mutex_unlock (&self->lock);
      engine_backend_unref (self, backend);
    }
  install_backend_locked (self, backend, &old, &raw);
  g_mutex_unlock (&self->lock);
  let_go (self, old, raw);
  return TRUE;
}

static void
set_stale_error (guint        row,
                 const char  *now_open,
                 GError     **error)
{
  if (now_open != NULL)
    g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_CANCELLED,
                 "Row %u was not reconstructed: another scan (%s) was opened since it was asked for",
                 row, now_open);
  else
    g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_CANCELLED,
                 "Row %u was not reconstructed: its scan was closed since it was asked for", row);
}

/* FALSE and TOMO_RECON_ERROR_CANCELLED when `stamp` is not the scan of now:
 * a request made for a scan that another replaced since. */
static gboolean
check_stamp_locked (TomoEngine *self,
                    guint64     stamp,
                    guint       row,
                    GError    **error)
{
  if (stamp == ANY_GENERATION || stamp == self->generation)
    return TRUE;
  set_stale_error (row, self->scan != NULL ? tomo_scan_get_path (self->scan) : NULL, error);
  return FALSE;
}

/* Begins a computation on the engine's backend — once no other computes
 * on it; a backend switched or a scan set meanwhile counts as it is then —
 * and `scan`, or the engine's scan when NULL (then possibly NULL: the
 * checks say "no scan").  `stamp`, `row`: a submitted request's generation
 * and row, for check_stamp_locked(). */
static gboolean
job_begin (TomoEngine *self,
           EngineJob  *job,
           TomoScan   *scan,
           guint64     stamp,
           guint       row,
           GError    **error)
{
  memset (job, 0, sizeof *job);
  job->engine = self;
  g_mutex_lock (&self->lock);
  for (;;)
    {
      if (!check_stamp_locked (self, stamp, row, error))
        {
          g_mutex_unlock (&self->lock);
          return FALSE;
        }
      if (!self->backend->busy)
        break;
      g_cond_wait (&self->backend_cond, &self->lock);
    }
  job->backend = engine_backend_ref_locked (self->backend);
  job->backend->busy = TRUE;
  job->impl = job->backend->impl;
  if (scan == NULL)
    scan = self->scan;
  job->scan = scan != NULL ? g_object_ref (scan) : NULL;
  job->generation = scan != NULL && scan == self->scan ? self->generation : 0;
  job->device_preprocess = self->device_preprocess;
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static void
job_end (EngineJob *job)
{
  TomoEngine *self = job->engine;

  g_mutex_lock (&self->lock);
  job->backend->busy = FALSE;
  g_cond_broadcast (&self->backend_cond);
  g_mutex_unlock (&self->lock);
  engine_backend_unref (self, g_steal_pointer (&job->backend));
  g_clear_object (&job->scan);
}

/* A device fault leaves the CUDA context unusable: that backend is never
 * handed out again, the engine goes on with the CPU backend (a later
 * tomo_engine_set_backend() makes a new GPU one) and the caller sees the
 * fault's error. */
static void
give_up_gpu (EngineJob    *job,
             const GError *error)
{
  TomoEngine *self = job->engine;
  EngineBackend *old = NULL;
  TomoRawRows *raw = NULL;

  if (error == NULL || !g_error_matches (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_DEVICE_FAULT)
      || job->impl->ops->backend != TOMO_BACKEND_GPU)
    return;
  g_mutex_lock (&self->lock);
  job->backend->faulted = TRUE;
  if (self->alive[TOMO_BACKEND_GPU] == job->backend)
    self->alive[TOMO_BACKEND_GPU] = NULL;
  if (self->backend == job->backend)
    {
      EngineBackend *cpu = self->alive[TOMO_BACKEND_CPU];

      g_message ("%s; going on with the CPU backend", error->message);
      install_backend_locked (self,
                              cpu != NULL ? engine_backend_ref_locked (cpu)
                                          : engine_backend_new (tomo_backend_cpu_new ()),
                              &old, &raw);
    }
  g_mutex_unlock (&self->lock);
  let_go (self, old, raw);
}

/* --- the object ------------------------------------------------------------ */

static void
tomo_engine_dispose (GObject *object)
{
  TomoEngine *self = TOMO_ENGINE (object);
  TomoScan *scan;
  TomoRawRows *raw;

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
  scan = g_steal_pointer (&self->scan);
  raw = g_steal_pointer (&self->raw_rows);
  self->generation++;
  g_mutex_unlock (&self->lock);
  g_clear_pointer (&raw, tomo_raw_rows_unref);
  g_clear_object (&scan);
  /* The backend stays until finalize: its name and device are still asked
   * for after a dispose. */

  G_OBJECT_CLASS (tomo_engine_parent_class)->dispose (object);
}

static void
tomo_engine_finalize (GObject *object)
{
  TomoEngine *self = TOMO_ENGINE (object);

  /* Whoever computes holds the engine: this is the last reference. */
  engine_backend_unref (self, g_steal_pointer (&self->backend));
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->backend_cond);
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
  g_cond_init (&self->backend_cond);
  g_mutex_init (&self->queue_lock);
  g_cond_init (&self->queue_cond);
  self->backend = engine_backend_new (tomo_backend_cpu_new ());
  self->alive[TOMO_BACKEND_CPU] = self->backend;
  self->generation = 1;
  self->prefetch_ahead = 4;
  self->prefetch_behind = 2;
  self->device_preprocess = TRUE;
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
      use_backend (self, TOMO_BACKEND_CPU, NULL);
    }
  return self;
}

gboolean
tomo_engine_set_backend (TomoEngine  *self,
                         TomoBackend  backend,
                         GError     **error)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), FALSE);

  switch (backend)
    {
    case TOMO_BACKEND_CPU:
      return use_backend (self, TOMO_BACKEND_CPU, error);
    case TOMO_BACKEND_GPU:
      return use_backend (self, TOMO_BACKEND_GPU, error);
    case TOMO_BACKEND_AUTO:
    default:
      if (!use_backend (self, TOMO_BACKEND_GPU, NULL))
        use_backend (self, TOMO_BACKEND_CPU, NULL);
      return TRUE;
    }
}

TomoBackend
tomo_engine_get_backend (TomoEngine *self)
{
  TomoBackend backend;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), TOMO_BACKEND_CPU);

  g_mutex_lock (&self->lock);
  backend = self->backend->impl->ops->backend;
  g_mutex_unlock (&self->lock);
  return backend;
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
  return tomo_engine_get_backend (self) == TOMO_BACKEND_GPU || tomo_backend_gpu_count_devices () > 0;
}

const char *
tomo_engine_get_device_name (TomoEngine *self)
{
  const char *name;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);

  /* Interned: the backend that named it may be switched away and freed
   * while the caller still holds the name. */
  g_mutex_lock (&self->lock);
  name = g_intern_string (self->backend->impl->device_name);
  g_mutex_unlock (&self->lock);
  return name;
}

int
tomo_engine_get_device (TomoEngine *self)
{
  int device;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), -1);

  g_mutex_lock (&self->lock);
  device = self->backend->impl->device;
  g_mutex_unlock (&self->lock);
  return device;
}

void
tomo_engine_set_scan (TomoEngine *self,
                      TomoScan   *scan)
{
  TomoScan *old = NULL;
  TomoRawRows *raw = NULL;
  PendingRequest *dropped = NULL, *dropped_centers = NULL;
  guint64 generation;

  g_return_if_fail (TOMO_IS_ENGINE (self));
  g_return_if_fail (scan == NULL || TOMO_IS_SCAN (scan));

  /* A computation under way keeps the scan it began with (its own
   * reference); the backends' cache keys no longer match this one. */
  g_mutex_lock (&self->lock);
  if (self->scan != scan)
    {
      old = g_steal_pointer (&self->scan);
      self->scan = scan != NULL ? g_object_ref (scan) : NULL;
      self->generation++;
      raw = g_steal_pointer (&self->raw_rows);
      /* A new axis tilt or stitching of the same file reads the same raw
       * rows (they are resampled and mapped after preprocessing): tuning
       * the tilt or an offset axis reads nothing. */
      if (raw != NULL && scan != NULL
          && tomo_geometry_get_mapped_source (scan) == tomo_raw_rows_get_scan (raw))
        self->raw_rows = g_steal_pointer (&raw);
      /* Requests waiting for a busy backend see they are stale. */
      g_cond_broadcast (&self->backend_cond);
    }
  generation = self->generation;
  g_mutex_unlock (&self->lock);

  /* Requests made for the previous scan are superseded: those waiting are
   * dropped, the one the worker holds is answered cancelled; the scrub
   * prefetcher stops (its next aim reads for the new scan). */
  g_mutex_lock (&self->queue_lock);
  if (self->pending != NULL && self->pending->generation != generation)
    dropped = g_steal_pointer (&self->pending);
  if (self->pending_centers != NULL && self->pending_centers->generation != generation)
    dropped_centers = g_steal_pointer (&self->pending_centers);
  if (self->prefetch != NULL)
    tomo_scrub_prefetch_cancel (self->prefetch);
  self->have_last_row = FALSE;
  g_mutex_unlock (&self->queue_lock);

  g_clear_pointer (&dropped, pending_request_free);
  g_clear_pointer (&dropped_centers, pending_request_free);
  g_clear_pointer (&raw, tomo_raw_rows_unref);
  g_clear_object (&old);
}

TomoScan *
tomo_engine_get_scan (TomoEngine *self)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  return self->scan;
}

TomoScan *
tomo_engine_dup_scan (TomoEngine *self)
{
  TomoScan *scan;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);

  g_mutex_lock (&self->lock);
  scan = self->scan != NULL ? g_object_ref (self->scan) : NULL;
  g_mutex_unlock (&self->lock);
  return scan;
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
check_scan (TomoScan              *scan,
            guint                  row_start,
            guint                  row_end,
            const TomoReconParams *params,
            TomoRoi               *roi,
            GError               **error)
{
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
  ok = check_scan (self->scan, row_start, row_end, params, roi, error);
  g_mutex_unlock (&self->lock);
  return ok;
}

/* A slice request: its slice count and kernel, then check_scan(). */
static gboolean
check_request (TomoScan *scan, const TomoSliceRequest *request, TomoRoi *roi, GError **error)
{
  if (request->n_slices != 1 && request->n_slices != 2 && request->n_slices != 4)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Slice-parallel mode must be 1, 2 or 4 slices, not %u", request->n_slices);
      return FALSE;
    }
  if (scan != NULL && request->n_slices > 1
      && request->row < tomo_scan_get_height (scan)
      && request->row + request->n_slices > tomo_scan_get_height (scan))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Row %u (with its neighbours) is out of range: %s has rows 0 to %u",
                   request->row, tomo_scan_get_path (scan), tomo_scan_get_height (scan) - 1);
      return FALSE;
    }
  if ((guint) request->kernel >= TOMO_N_KERNELS)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Unknown back-projection kernel %d", request->kernel);
      return FALSE;
    }
  return check_scan (scan, request->row, request->row + request->n_slices, &request->params,
                     roi, error);
}

/* Whether row changes go the device path: a backend that preprocesses raw
 * rows, and raw rows to read (a tilt correction's and a stitched or
 * weighted scan's are its file's, which the backend resamples and maps
 * after preprocessing them). */
static gboolean
job_uses_raw_rows (const EngineJob *job)
{
  return job->impl->ops->load_raw != NULL && job->device_preprocess
         && tomo_geometry_get_mapped_source (job->scan) != NULL;
}

/* The raw row cache of the job's scan: the engine's, made on first use
 * (outside the lock: it asks the file for its chunking) and kept for the
 * next requests while the scan is the engine's. */
static TomoRawRows *
job_dup_raw_rows (EngineJob *job)
{
  TomoEngine *self = job->engine;
  TomoRawRows *raw = NULL, *made;

  g_mutex_lock (&self->lock);
  if (self->raw_rows != NULL && job->generation == self->generation)
    raw = tomo_raw_rows_ref (self->raw_rows);
  g_mutex_unlock (&self->lock);
  if (raw != NULL)
    return raw;

  made = tomo_raw_rows_new (tomo_geometry_get_mapped_source (job->scan), 0);
  g_mutex_lock (&self->lock);
  if (job->generation == self->generation && self->backend->impl->ops->load_raw != NULL)
    {
      if (self->raw_rows == NULL)
        self->raw_rows = tomo_raw_rows_ref (made);
      raw = tomo_raw_rows_ref (self->raw_rows);
    }
  g_mutex_unlock (&self->lock);
  if (raw == NULL)
    return made;
  tomo_raw_rows_unref (made);
  return raw;
}

/* Rows [request->row, + n_slices) onto the backend, on the device path or
 * the host's, with the stages' times in `slice`. */
static gboolean
job_load (EngineJob              *job,
          const TomoSliceRequest *request,
          TomoSlice              *slice,
          TomoPreprocessStats    *stats,
          GCancellable           *cancellable,
          GError                **error)
{
  TomoBackendImpl *backend = job->impl;
  g_autoptr(TomoRawRows) raw_rows = NULL;
  TomoRawRow *rows[4] = { NULL, };
  gint64 start = g_get_monotonic_time ();
  gboolean ok = TRUE;

  if (!job_uses_raw_rows (job))
    {
      ok = backend->ops->load_rows (backend, job->scan, request->row, request->n_slices, stats,
                                    cancellable, error);
      slice->read_ms = (g_get_monotonic_time () - start) / 1000.0;
      return ok;
    }
  raw_rows = job_dup_raw_rows (job);
  g_assert (request->n_slices <= G_N_ELEMENTS (rows));
  for (guint s = 0; s < request->n_slices && ok; s++)
    ok = (rows[s] = tomo_raw_rows_get (raw_rows, request->row + s, error)) != NULL;
  slice->read_ms = (g_get_monotonic_time () - start) / 1000.0;
  ok = ok && !g_cancellable_set_error_if_cancelled (cancellable, error)
       && backend->ops->load_raw (backend, job->scan, rows, request->n_slices, stats,
                                  &slice->upload_ms, &slice->preprocess_ms, error);
  for (guint s = 0; s < G_N_ELEMENTS (rows); s++)
    g_clear_pointer (&rows[s], tomo_raw_row_unref);
  slice->device_preprocess = ok;
  return ok;
}

/* Brings the backend's filtered rows to what `request` needs: the one place
 * where the cache key is compared and updated. */
static gboolean
job_ensure_filtered (EngineJob              *job,
                     const TomoSliceRequest *request,
                     TomoSlice              *slice,
                     GCancellable           *cancellable,
                     GError                **error)
{
  TomoBackendImpl *backend = job->impl;
  EngineBackend *owner = job->backend;
  const TomoReconParams *params = &request->params;
  gboolean raw = job_uses_raw_rows (job);

  if (!owner->cache.configured || owner->cache.generation != job->generation
      || job->generation == 0 || owner->cache.filter != params->filter
      || owner->cache.pad != params->pad)
    {
      TomoBackendSetup setup = {
        .width = tomo_scan_get_width (job->scan),
        .n_proj = tomo_scan_get_n_projections (job->scan),
        .angles = tomo_scan_get_angles (job->scan),
        .filter = params->filter,
        .pad = params->pad,
        .n_threads = params->n_threads,
      };

      invalidate_cache (owner);
      if (!backend->ops->configure (backend, &setup, error))
        return FALSE;
      owner->cache.configured = TRUE;
      owner->cache.generation = job->generation;
      owner->cache.filter = params->filter;
      owner->cache.pad = params->pad;
    }
  if (!owner->cache.loaded || owner->cache.row != request->row
      || owner->cache.n_slices != request->n_slices || owner->cache.raw != raw)
    {
      TomoPreprocessStats stats = { 0 };

      owner->cache.loaded = FALSE;
      if (!job_load (job, request, slice, &stats, cancellable, error)
          || !backend->ops->filter (backend, &slice->filter_ms, error))
        return FALSE;
      owner->cache.loaded = TRUE;
      owner->cache.raw = raw;
      owner->cache.row = request->row;
      owner->cache.n_slices = request->n_slices;
      owner->cache.stats = stats;
    }
  slice->stats = owner->cache.stats;
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

/* After a computation: a GPU failure hands the engine to the CPU, the
 * slice gets its times (request in → slice out, and the back projection's
 * rate); ends the job and reports. */
static TomoSlice *
job_end_with_slice (EngineJob *job,
                    TomoSlice *slice,
                    gint64     start,
                    GError    *local_error,
                    GError   **error)
{
  give_up_gpu (job, local_error);
  if (slice != NULL)
    {
      double updates = (double) slice->width * slice->height * slice->n_slices
                       * tomo_scan_get_n_projections (job->scan);

      slice->total_ms = (g_get_monotonic_time () - start) / 1000.0;
      slice->gups = slice->backproject_ms > 0 ? updates / (slice->backproject_ms * 1e6) : 0;
    }
  job_end (job);
  if (local_error != NULL)
    g_propagate_error (error, local_error);
  return slice;
}

static TomoSlice *
job_reconstruct (EngineJob              *job,
                 const TomoSliceRequest *request,
                 const TomoRoi          *roi,
                 GCancellable           *cancellable,
                 GError                **error)
{
  TomoBackendImpl *backend = job->impl;
  g_autoptr(TomoSlice) slice = g_new0 (TomoSlice, 1);
  TomoBackendPlane plane = plane_of_request (request, roi);

  slice_init (slice, request, roi, request->n_slices);

  if (!job_ensure_filtered (job, request, slice, cancellable, error))
    return NULL;
  if (!backend->ops->backproject (backend, &plane, slice, cancellable, error))
    {
      /* The filtered sinograms may be gone with a failed launch. */
      invalidate_cache (job->backend);
      return NULL;
    }
  if (!backend->ops->stats (backend, slice, error)
      || (request->negativity && !backend->ops->negativity (backend, slice, error)))
    return NULL;
  return g_steal_pointer (&slice);
}

static void aim_prefetch (EngineJob *job, const TomoSliceRequest *request);

/* A slice request on the scan and backend of now; `stamp`: see job_begin();
 * `prefetch`: aim the prefetcher at the rows around it (submitted
 * requests). */
static TomoSlice *
reconstruct_request (TomoEngine             *self,
                     const TomoSliceRequest *request,
                     guint64                 stamp,
                     gboolean                prefetch,
                     GCancellable           *cancellable,
                     GError                **error)
{
  EngineJob job;
  TomoSlice *slice = NULL;
  GError *local_error = NULL;
  TomoRoi roi;
  gint64 start = g_get_monotonic_time ();

  if (!job_begin (self, &job, NULL, stamp, request->row, error))
    return NULL;
  if (check_request (job.scan, request, &roi, &local_error))
    slice = job_reconstruct (&job, request, &roi, cancellable, &local_error);
  if (slice != NULL && prefetch)
    aim_prefetch (&job, request);
  return job_end_with_slice (&job, slice, start, local_error, error);
}

TomoSlice *
tomo_engine_reconstruct (TomoEngine             *self,
                         const TomoSliceRequest *request,
                         GCancellable           *cancellable,
                         GError                **error)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  g_return_val_if_fail (request != NULL, NULL);

  return reconstruct_request (self, request, ANY_GENERATION, FALSE, cancellable, error);
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
 * unless another request is already waiting or the scan changed. */
static void
aim_prefetch (EngineJob              *job,
              const TomoSliceRequest *request)
{
  TomoEngine *self = job->engine;
  g_autoptr(TomoRawRows) raw = NULL;
  gboolean current;

  g_mutex_lock (&self->lock);
  current = job->generation == self->generation;
  g_mutex_unlock (&self->lock);
  if (!current)
    return;
  /* Where the last row came from is where its neighbours go. */
  if (job_uses_raw_rows (job))
    raw = job_dup_raw_rows (job);

  g_mutex_lock (&self->queue_lock);
  if (self->pending == NULL && !self->quit
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
        tomo_scrub_prefetch_aim (self->prefetch, job->scan, self->direction > 0 ? last : first,
                                 self->direction, self->prefetch_ahead, self->prefetch_behind);
    }
  g_mutex_unlock (&self->queue_lock);
}

static TomoSlice *reconstruct_centers_request (TomoEngine             *self,
                                               const TomoSliceRequest *request,
                                               const double           *centers,
                                               guint                   n_centers,
                                               guint64                 stamp,
                                               GCancellable           *cancellable,
                                               GError                **error);

/* The answer to a request whose scan was replaced while it was computed
 * is stale too: the cancelled error in its place (a device fault stays,
 * it concerns the engine, not the scan). */
static void
drop_stale_answer (TomoEngine     *self,
                   PendingRequest *pending,
                   Delivery       *d)
{
  GError *stale = NULL;

  if (d->error != NULL
      && g_error_matches (d->error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_DEVICE_FAULT))
    return;
  g_mutex_lock (&self->lock);
  check_stamp_locked (self, pending->generation, pending->request.row, &stale);
  g_mutex_unlock (&self->lock);
  if (stale == NULL)
    return;
  g_clear_pointer (&d->slice, tomo_slice_unref);
  g_clear_error (&d->error);
  d->error = stale;
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

      /* Stamped: a request made for a scan replaced since is answered
       * cancelled, never run against the new one. */
      if (pending->n_centers > 0)
        d->slice = reconstruct_centers_request (self, &pending->request, pending->centers,
                                                pending->n_centers, pending->generation, NULL,
                                                &d->error);
      else
        d->slice = reconstruct_request (self, &pending->request, pending->generation, TRUE, NULL,
                                        &d->error);
      drop_stale_answer (self, pending, d);
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
pending_request_new (TomoEngine             *self,
                     const TomoSliceRequest *request,
                     TomoEngineCallback      callback,
                     gpointer                user_data)
{
  PendingRequest *pending = g_new0 (PendingRequest, 1);

  pending->request = *request;
  g_mutex_lock (&self->lock);
  pending->generation = self->generation;
  g_mutex_unlock (&self->lock);
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

  enqueue (self, &self->pending, pending_request_new (self, request, callback, user_data));
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

  pending = pending_request_new (self, request, callback, user_data);
  pending->centers = g_memdup2 (centers, sizeof (double) * n_centers);
  pending->n_centers = n_centers;
  pending->destroy = destroy;
  enqueue (self, &self->pending_centers, pending);
}

/* --- centre sweep ------------------------------------------------------- */

static TomoSlice *
job_reconstruct_centers (EngineJob              *job,
                         const TomoSliceRequest *request,
                         const double           *centers,
                         guint                   n_centers,
                         GCancellable           *cancellable,
                         GError                **error)
{
  TomoBackendImpl *backend = job->impl;
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
  if (!check_request (job->scan, request, &roi, error))
    return NULL;
  for (guint i = 0; i < n_centers; i++)
    {
      TomoReconParams params = request->params;

      params.center = centers[i];
      if (!check_scan (job->scan, request->row, request->row + 1, &params, NULL, error))
        return NULL;
    }
  sweep.plane = plane_of_request (request, &roi);
  slice_init (slice, request, &roi, n_centers);
  slice->backend = backend->ops->backend;
  slice->kernel = g_strdup ("centers");

  /* A backend with a device keeps the images there when only the scores
   * and statistics are wanted; the CPU's are in host memory anyway. */
  if (!job_ensure_filtered (job, request, slice, cancellable, error)
      || ((!request->skip_download || backend->device < 0)
          && !tomo_backend_alloc_slice_data (slice, error)))
    return NULL;
  sweep.images = slice->data;
  if (!backend->ops->backproject_centers (backend, &sweep, error))
    {
      invalidate_cache (job->backend);
      return NULL;
    }
  slice->backproject_ms = sweep.ms;
  if (!backend->ops->stats (backend, slice, error)
      || (request->negativity && !backend->ops->negativity (backend, slice, error)))
    return NULL;
  return g_steal_pointer (&slice);
}

static TomoSlice *
reconstruct_centers_request (TomoEngine             *self,
                             const TomoSliceRequest *request,
                             const double           *centers,
                             guint                   n_centers,
                             guint64                 stamp,
                             GCancellable           *cancellable,
                             GError                **error)
{
  EngineJob job;
  TomoSlice *slice;
  GError *local_error = NULL;
  gint64 start = g_get_monotonic_time ();

  if (!job_begin (self, &job, NULL, stamp, request->row, error))
    return NULL;
  slice = job_reconstruct_centers (&job, request, centers, n_centers, cancellable, &local_error);
  return job_end_with_slice (&job, slice, start, local_error, error);
}

TomoSlice *
tomo_engine_reconstruct_centers (TomoEngine             *self,
                                 const TomoSliceRequest *request,
                                 const double           *centers,
                                 guint                   n_centers,
                                 GCancellable           *cancellable,
                                 GError                **error)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (self), NULL);
  g_return_val_if_fail (request != NULL, NULL);
  g_return_val_if_fail (centers != NULL || n_centers == 0, NULL);

  return reconstruct_centers_request (self, request, centers, n_centers, ANY_GENERATION,
                                      cancellable, error);
}

/* --- whole volumes ------------------------------------------------------ */

gboolean
tomo_engine_run_volume (TomoEngine              *self,
                        const TomoVolumeRequest *request,
                        GCancellable            *cancellable,
                        GError                 **error)
{
  TomoBackendVolume volume = { 0 };
  TomoVolumeStats local_stats = { 0 };
  GError *local_error = NULL;
  EngineJob job;
  gboolean ok = FALSE;

  g_return_val_if_fail (TOMO_IS_ENGINE (self), FALSE);
  g_return_val_if_fail (request != NULL, FALSE);
  g_return_val_if_fail (request->scan == NULL || TOMO_IS_SCAN (request->scan), FALSE);
  g_return_val_if_fail (request->params != NULL, FALSE);
  g_return_val_if_fail (request->sink != NULL, FALSE);

  if ((guint) request->kernel >= TOMO_N_KERNELS)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Unknown back-projection kernel %d", request->kernel);
      return FALSE;
    }
  /* The backend's lock for the whole volume (slices on it wait), the
   * engine's not at all: a new scan or backend meanwhile is for the next. */
  if (!job_begin (self, &job, request->scan, ANY_GENERATION, request->row_start, error))
    return FALSE;
  if (check_scan (job.scan, request->row_start, request->row_end, request->params, &volume.roi,
                  &local_error))
    {
      volume.scan = job.scan;
      volume.row_start = request->row_start;
      volume.row_end = request->row_end;
      volume.params = *request->params;
      volume.kernel = request->kernel;
      volume.sink = request->sink;
      volume.progress = request->progress;
      volume.user_data = request->user_data;
      volume.cancellable = cancellable;
      volume.stats = &local_stats;
      local_stats.n_rows = request->row_end - request->row_start;
      ok = job.impl->ops->volume (job.impl, &volume, &local_error);
      give_up_gpu (&job, ok ? NULL : local_error);
      g_mutex_lock (&self->lock);
      self->volume_stats = local_stats;
      g_mutex_unlock (&self->lock);
      if (request->stats != NULL)
        *request->stats = local_stats;
    }
  job_end (&job);
  if (local_error != NULL)
    g_propagate_error (error, local_error);
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
  TomoVolumeRequest request = { NULL, row_start, row_end, params, kernel, sink, progress,
                                user_data, NULL };

  return tomo_engine_run_volume (self, &request, cancellable, error);
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

  /* The rows loaded came the other way: the cache key (its `raw`) makes
   * the next request reload. */
  g_mutex_lock (&self->lock);
  self->device_preprocess = !!device_preprocess;
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
