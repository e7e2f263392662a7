/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-recon"

#include "config.h"

#include "tomo-error.h"
#include "tomo-output.h"
#include "tomo-tiff-writer.h"
#include "tomo-volume-export.h"

struct _TomoVolumeExport
{
  GObject parent_instance;

  TomoEngine *engine;
  char *path;
  guint row_start, row_end;
  TomoReconParams params;
  int kernel;

  /* Progress, written by the worker, read anywhere. */
  GMutex lock;
  guint rows_done;
  guint notify_id;
  GMainContext *notify_context;  /* of run_async's caller */

  /* Owned by the thread that runs the export. */
  TomoTiffWriter *writer;
  gboolean to_dir;
  TomoProgressFunc progress;
  gpointer progress_data;
};

G_DEFINE_FINAL_TYPE (TomoVolumeExport, tomo_volume_export, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_ROWS_DONE,
  PROP_ROWS_TOTAL,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

TomoVolumeExport *
tomo_volume_export_new (TomoEngine            *engine,
                        const char            *path,
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
  self->path = g_strdup (path);
  self->row_start = row_start;
  self->row_end = row_end;
  self->params = *params;
  self->kernel = kernel;
  return self;
}

const char *
tomo_volume_export_get_path (TomoVolumeExport *self)
{
  g_return_val_if_fail (TOMO_IS_VOLUME_EXPORT (self), NULL);
  return self->path;
}

guint
tomo_volume_export_get_rows_done (TomoVolumeExport *self)
{
  guint done;

  g_return_val_if_fail (TOMO_IS_VOLUME_EXPORT (self), 0);
  g_mutex_lock (&self->lock);
  done = self->rows_done;
  g_mutex_unlock (&self->lock);
  return done;
}

guint
tomo_volume_export_get_rows_total (TomoVolumeExport *self)
{
  g_return_val_if_fail (TOMO_IS_VOLUME_EXPORT (self), 0);
  return self->row_end > self->row_start ? self->row_end - self->row_start : 0;
}

static gboolean
notify_done_cb (gpointer data)
{
  TomoVolumeExport *self = data;

  g_mutex_lock (&self->lock);
  self->notify_id = 0;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ROWS_DONE]);
  return G_SOURCE_REMOVE;
}

static void
progress_cb (guint    done,
             guint    total,
             gpointer user_data)
{
  TomoVolumeExport *self = user_data;

  g_mutex_lock (&self->lock);
  self->rows_done = done;
  /* One coalesced notification at a time on the caller's context. */
  if (self->notify_context != NULL && self->notify_id == 0)
    {
      GSource *source = g_idle_source_new ();

      g_source_set_priority (source, G_PRIORITY_LOW);
      g_source_set_callback (source, notify_done_cb, g_object_ref (self), g_object_unref);
      self->notify_id = g_source_attach (source, self->notify_context);
      g_source_unref (source);
    }
  g_mutex_unlock (&self->lock);

  if (self->progress != NULL)
    self->progress (done, total, self->progress_data);
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

  if (self->to_dir)
    {
      g_autofree char *name = g_strdup_printf ("slice_%05u.tif", row);
      g_autofree char *file = g_build_filename (self->path, name, NULL);

      return tomo_tiff_write_float (file, slice, width, height, 1, error);
    }
  return tomo_tiff_writer_add_page (self->writer, slice, width, height, error);
}

gboolean
tomo_volume_export_run (TomoVolumeExport  *self,
                        TomoProgressFunc   progress,
                        gpointer           user_data,
                        GCancellable      *cancellable,
                        GError           **error)
{
  TomoScan *scan;
  gboolean ok;

  g_return_val_if_fail (TOMO_IS_VOLUME_EXPORT (self), FALSE);

  scan = tomo_engine_get_scan (self->engine);
  if (scan == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write “%s”: no scan to reconstruct", self->path);
      return FALSE;
    }
  if (self->row_start >= self->row_end || self->row_end > tomo_scan_get_height (scan))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write “%s”: rows %u–%u are not within the scan's 0–%u",
                   self->path, self->row_start, self->row_end - 1, tomo_scan_get_height (scan) - 1);
      return FALSE;
    }
  if (!tomo_output_check_inputs (self->path, tomo_scan_get_input_files (scan), error))
    return FALSE;

  self->progress = progress;
  self->progress_data = user_data;
  self->to_dir = g_file_test (self->path, G_FILE_TEST_IS_DIR);
  if (!self->to_dir)
    {
      TomoRoi r = tomo_recon_params_get_roi (&self->params, tomo_scan_get_width (scan));

      self->writer = tomo_tiff_writer_new_full (self->path, tomo_scan_get_input_files (scan),
                                                (guint64) r.width * r.height * sizeof (float)
                                                * (self->row_end - self->row_start),
                                                error);
      if (self->writer == NULL)
        return FALSE;
    }

  ok = tomo_engine_reconstruct_volume (self->engine, self->row_start, self->row_end,
                                       &self->params, self->kernel, sink_cb, progress_cb, self,
                                       cancellable, error);
  /* Abort removes the incomplete file; the chosen path is left as it was. */
  if (self->writer != NULL)
    {
      if (ok)
        ok = tomo_tiff_writer_close (g_steal_pointer (&self->writer), error);
      else
        tomo_tiff_writer_abort (g_steal_pointer (&self->writer));
    }
  return ok;
}

static void
run_thread (GTask        *task,
            gpointer      source_object,
            gpointer      task_data,
            GCancellable *cancellable)
{
  GError *error = NULL;

  if (tomo_volume_export_run (source_object, NULL, NULL, cancellable, &error))
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
  g_task_run_in_thread (task, run_thread);
}

gboolean
tomo_volume_export_run_finish (TomoVolumeExport  *self,
                               GAsyncResult      *result,
                               GError           **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
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
    case PROP_ROWS_DONE:
      g_value_set_uint (value, tomo_volume_export_get_rows_done (self));
      break;
    case PROP_ROWS_TOTAL:
      g_value_set_uint (value, tomo_volume_export_get_rows_total (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tomo_volume_export_finalize (GObject *object)
{
  TomoVolumeExport *self = TOMO_VOLUME_EXPORT (object);

  if (self->writer != NULL)
    tomo_tiff_writer_abort (self->writer);
  g_clear_object (&self->engine);
  g_free (self->path);
  g_clear_pointer (&self->notify_context, g_main_context_unref);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (tomo_volume_export_parent_class)->finalize (object);
}

static void
tomo_volume_export_class_init (TomoVolumeExportClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = tomo_volume_export_get_property;
  object_class->finalize = tomo_volume_export_finalize;

  properties[PROP_ROWS_DONE] =
    g_param_spec_uint ("rows-done", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ROWS_TOTAL] =
    g_param_spec_uint ("rows-total", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
tomo_volume_export_init (TomoVolumeExport *self)
{
  g_mutex_init (&self->lock);
}
