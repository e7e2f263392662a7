/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-volume-export"

#include "config.h"

#include "tomo-error.h"
#include "tomo-filter.h"
#include "tomo-volume-export.h"

struct _TomoVolumeExport
{
  GObject parent_instance;

  TomoEngine *engine;
  TomoScan *scan;  /* the engine's at _new: the one described and reconstructed */
  char *path;
  TomoVolumeFormat format;
  guint row_start, row_end;
  TomoReconParams params;
  int kernel;
  guint n_writers;

  TomoProgressFunc progress_func;
  gpointer progress_data;

  TomoVolumeWriter *writer;   /* during the run */
  gboolean started;
  TomoVolumeStats stats;

  /* Progress for the "progress" property: stored under the lock, delivered
   * by one coalesced idle on the main context of _run_async()'s caller. */
  GMutex lock;
  double progress;
  GMainContext *notify_context;
  gboolean notify_pending;
};

G_DEFINE_FINAL_TYPE (TomoVolumeExport, tomo_volume_export, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_PROGRESS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
tomo_volume_export_finalize (GObject *object)
{
  TomoVolumeExport *self = TOMO_VOLUME_EXPORT (object);

  g_clear_object (&self->engine);
  g_clear_object (&self->scan);
  g_free (self->path);
  g_clear_pointer (&self->notify_context, g_main_context_unref);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (tomo_volume_export_parent_class)->finalize (object);
}

static void
tomo_volume_export_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  TomoVolumeExport *self = TOMO_VOLUME_EXPORT (object);

  switch (prop_id)
    {
    case PROP_PROGRESS:
      g_value_set_double (value, tomo_volume_export_get_progress (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tomo_volume_export_class_init (TomoVolumeExportClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tomo_volume_export_finalize;
  object_class->get_property = tomo_volume_export_get_property;

  properties[PROP_PROGRESS] =
    g_param_spec_double ("progress", NULL, NULL, 0.0, 1.0, 0.0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
tomo_volume_export_init (TomoVolumeExport *self)
{
  g_mutex_init (&self->lock);
}

TomoVolumeExport *
tomo_volume_export_new (TomoEngine            *engine,
                        const char            *path,
                        TomoVolumeFormat       format,
                        guint                  row_start,
                        guint                  row_end,
                        const TomoReconParams *params,
                        int                    kernel)
{
  TomoVolumeExport *self;

  g_return_val_if_fail (TOMO_IS_ENGINE (engine), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (params != NULL, NULL);

  self = g_object_new (TOMO_TYPE_VOLUME_EXPORT, NULL);
  self->engine = g_object_ref (engine);
  /* The scan open now is the one exported, whatever the engine is given
   * while the export runs. */
  self->scan = tomo_engine_dup_scan (engine);
  self->path = g_strdup (path);
  self->format = format == TOMO_VOLUME_FORMAT_AUTO ? tomo_volume_format_guess (path) : format;
  self->row_start = row_start;
  self->row_end = row_end;
  self->params = *params;
  self->kernel = kernel;
  return self;
}

void
tomo_volume_export_set_n_writers (TomoVolumeExport *self,
                                  guint             n_writers)
{
  g_return_if_fail (TOMO_IS_VOLUME_EXPORT (self));
  self->n_writers = n_writers;
}

void
tomo_volume_export_set_progress_func (TomoVolumeExport *self,
                                      TomoProgressFunc  func,
                                      gpointer          user_data)
{
  g_return_if_fail (TOMO_IS_VOLUME_EXPORT (self));
  self->progress_func = func;
  self->progress_data = user_data;
}

double
tomo_volume_export_get_progress (TomoVolumeExport *self)
{
  double p;

  g_return_val_if_fail (TOMO_IS_VOLUME_EXPORT (self), 0.0);
  g_mutex_lock (&self->lock);
  p = self->progress;
  g_mutex_unlock (&self->lock);
  return p;
}

static gboolean
notify_progress_idle (gpointer data)
{
  TomoVolumeExport *self = data;

  g_mutex_lock (&self->lock);
  self->notify_pending = FALSE;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROGRESS]);
  return G_SOURCE_REMOVE;
}

static void
progress_cb (guint    done,
             guint    total,
             gpointer user_data)
{
  TomoVolumeExport *self = user_data;
  gboolean schedule = FALSE;

  g_mutex_lock (&self->lock);
  self->progress = total > 0 ? (double) done / total : 1.0;
  if (self->notify_context != NULL && !self->notify_pending)
    schedule = self->notify_pending = TRUE;
  g_mutex_unlock (&self->lock);
  if (schedule)
    {
      GSource *source = g_idle_source_new ();

      g_source_set_priority (source, G_PRIORITY_LOW);
      g_source_set_callback (source, notify_progress_idle, g_object_ref (self), g_object_unref);
      g_source_attach (source, self->notify_context);
      g_source_unref (source);
    }
  if (self->progress_func != NULL)
    self->progress_func (done, total, self->progress_data);
}

static gboolean
sink_cb (guint        row,
         const float *slice,
         guint        width,
         guint        height,
         gpointer     user_data,
         GError     **error)
{
  TomoVolumeExport *self = user_data;

  return tomo_volume_writer_add (self->writer, row, slice, error);
}

void
tomo_volume_info_describe (TomoVolumeInfo        *info,
                           TomoScan              *scan,
                           TomoEngine            *engine,
                           const TomoReconParams *params,
                           const TomoRoi         *roi,
                           guint                  row_start,
                           guint                  n_rows)
{
  *info = (TomoVolumeInfo) {
    .width = roi->width,
    .height = roi->height,
    .roi_x = roi->x,
    .roi_y = roi->y,
    .row_start = row_start,
    .n_rows = n_rows,
    .n_projections = tomo_scan_get_n_projections (scan),
    .center = params->center,
    .filter = tomo_filter_type_to_string (params->filter),
    .interp = tomo_interp_to_string (params->interp),
    .backend = tomo_engine_get_device_name (engine),
    .source = tomo_scan_get_path (scan),
    .pixel_size = tomo_scan_get_pixel_size (scan),
    .axis_tilt_deg = tomo_scan_get_axis_tilt_correction (scan),
    .inputs = tomo_scan_get_input_files (scan),
  };
}

gboolean
tomo_volume_export_run (TomoVolumeExport *self,
                        GCancellable     *cancellable,
                        GError          **error)
{
  TomoScan *scan = self->scan;
  TomoVolumeInfo info;
  TomoVolumeRequest request;
  TomoRoi roi;
  gint64 t0 = g_get_monotonic_time ();
  GError *local = NULL;
  gboolean ok;

  g_return_val_if_fail (TOMO_IS_VOLUME_EXPORT (self), FALSE);
  g_return_val_if_fail (!self->started, FALSE);

  self->started = TRUE;
  if (scan == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Cannot export %s: no scan is open", self->path);
      return FALSE;
    }
  if (!tomo_recon_check_rows (scan, self->row_start, self->row_end, error))
    return FALSE;
  roi = tomo_recon_params_get_roi (&self->params, tomo_scan_get_width (scan));
  tomo_volume_info_describe (&info, scan, self->engine, &self->params, &roi, self->row_start,
                             self->row_end - self->row_start);

  self->writer = tomo_volume_writer_new (self->path, self->format, &info, self->n_writers, &local);
  if (self->writer == NULL)
    {
      g_propagate_prefixed_error (error, local, "Nothing written to %s: ", self->path);
      return FALSE;
    }

  request = (TomoVolumeRequest) { scan, self->row_start, self->row_end, &self->params,
                                  self->kernel, sink_cb, progress_cb, self, &self->stats };
  ok = tomo_engine_run_volume (self->engine, &request, cancellable, &local);
  self->stats.sink_ms = self->stats.write_ms;
  self->stats.write_ms = tomo_volume_writer_get_busy_ms (self->writer);
  /* The writers' busy time is taken before finish frees them; finish only
   * waits for the last few queued slices. */
  if (ok)
    ok = tomo_volume_writer_finish (g_steal_pointer (&self->writer), &local);
  else
    tomo_volume_writer_abort (g_steal_pointer (&self->writer));
  if (!ok)
    g_prefix_error (&local, self->format == TOMO_VOLUME_FORMAT_TIFF_FOLDER
                              ? "No slice of this run left in %s: "
                              : "Nothing written to %s: ", self->path);
  self->stats.wall_ms = (g_get_monotonic_time () - t0) / 1e3;
  if (!ok)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  return TRUE;
}

static void
run_thread (GTask        *task,
            gpointer      source_object,
            gpointer      task_data,
            GCancellable *cancellable)
{
  TomoVolumeExport *self = source_object;
  GError *error = NULL;

  if (tomo_volume_export_run (self, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
tomo_volume_export_run_async (TomoVolumeExport    *self,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (TOMO_IS_VOLUME_EXPORT (self));

  g_mutex_lock (&self->lock);
  g_clear_pointer (&self->notify_context, g_main_context_unref);
  self->notify_context = g_main_context_ref_thread_default ();
  g_mutex_unlock (&self->lock);
  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tomo_volume_export_run_async);
  g_task_set_return_on_cancel (task, FALSE);
  g_task_run_in_thread (task, run_thread);
}

gboolean
tomo_volume_export_run_finish (TomoVolumeExport *self,
                               GAsyncResult     *result,
                               GError          **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  /* The progress idle runs at low priority: a short export's result can
   * arrive before it, so the last progress is delivered here first. */
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROGRESS]);
  return g_task_propagate_boolean (G_TASK (result), error);
}

void
tomo_volume_export_get_stats (TomoVolumeExport *self,
                              TomoVolumeStats  *stats)
{
  g_return_if_fail (TOMO_IS_VOLUME_EXPORT (self));
  g_return_if_fail (stats != NULL);
  *stats = self->stats;
}

TomoVolumeFormat
tomo_volume_export_get_format (TomoVolumeExport *self)
{
  g_return_val_if_fail (TOMO_IS_VOLUME_EXPORT (self), TOMO_VOLUME_FORMAT_AUTO);
  return self->format;
}
