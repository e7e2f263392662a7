/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include "tomo-error.h"
#include "tomo-output.h"
#include "tomo-tiff-writer.h"
#include "tomo-window-private.h"

/* Volume-export progress, written by the worker and shown by one coalesced
 * low-priority idle at a time. */
typedef struct
{
  GMutex lock;
  guint done, total;
  guint idle_id;
  GWeakRef window;
} ExportProgress;

typedef struct
{
  TomoEngine *engine;
  char *path;
  guint row_start, row_end;
  TomoReconParams params;
  int kernel;
  guint64 expected_bytes;
  ExportProgress *progress;
  TomoTiffWriter *writer; /* owned by the worker thread */
} VolumeExport;

gboolean
tomo_window_export_slice_tiff (TomoWindow *self,
                               const char *path,
                               GError    **error)
{
  TomoSlice *slice;

  g_return_val_if_fail (TOMO_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  slice = tomo_slice_view_get_slice (self->slice_view);
  if (slice == NULL || slice->data == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write “%s”: no reconstructed slice is shown", path);
      return FALSE;
    }

  if (self->scan != NULL
      && !tomo_output_check_inputs (path, tomo_scan_get_input_files (self->scan), error))
    return FALSE;
  return tomo_tiff_write_float (path, slice->data, slice->width, slice->height,
                                slice->n_slices, error);
}

gboolean
tomo_window_export_slice_png (TomoWindow *self,
                              const char *path,
                              GError    **error)
{
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(TomoOutput) output = NULL;

  g_return_val_if_fail (TOMO_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  texture = tomo_slice_view_render_texture (self->slice_view, error);
  if (texture == NULL)
    return FALSE;
  output = tomo_output_open (path, self->scan ? tomo_scan_get_input_files (self->scan) : NULL,
                             error);
  if (output == NULL)
    return FALSE;
  if (!gdk_texture_save_to_png (texture, tomo_output_get_write_path (output)))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Could not write the PNG “%s”", path);
      return FALSE;   /* freeing the output removes the incomplete file */
    }
  return tomo_output_commit (output, error);
}

static void
export_progress_clear (ExportProgress *progress)
{
  g_mutex_clear (&progress->lock);
  g_weak_ref_clear (&progress->window);
}

static void
export_progress_release (gpointer data)
{
  g_atomic_rc_box_release_full (data, (GDestroyNotify) export_progress_clear);
}

static void
volume_export_free (VolumeExport *job)
{
  g_clear_object (&job->engine);
  g_free (job->path);
  export_progress_release (job->progress);
  g_free (job);
}

static gboolean
progress_idle_cb (gpointer data)
{
  ExportProgress *progress = data;
  g_autoptr(TomoWindow) self = g_weak_ref_get (&progress->window);
  guint done, total;

  g_mutex_lock (&progress->lock);
  progress->idle_id = 0;
  done = progress->done;
  total = progress->total;
  g_mutex_unlock (&progress->lock);

  if (self != NULL && total > 0)
    {
      g_autofree char *text = g_strdup_printf ("Volume %u / %u", done, total);

      gtk_progress_bar_set_fraction (self->progress_bar, (double) done / total);
      gtk_progress_bar_set_text (self->progress_bar, text);
    }

  return G_SOURCE_REMOVE;
}

static void
volume_progress_cb (guint    done,
                    guint    total,
                    gpointer user_data)
{
  ExportProgress *progress = ((VolumeExport *) user_data)->progress;

  g_mutex_lock (&progress->lock);
  progress->done = done;
  progress->total = total;
  if (progress->idle_id == 0)
    progress->idle_id = g_idle_add_full (G_PRIORITY_LOW, progress_idle_cb,
                                         g_atomic_rc_box_acquire (progress),
                                         export_progress_release);
  g_mutex_unlock (&progress->lock);
}

static gboolean
volume_sink_cb (guint        row,
                const float *slice,
                guint        width,
                guint        height,
                gpointer     user_data,
                GError     **error)
{
  TomoTiffWriter *writer = ((VolumeExport *) user_data)->writer;

  return tomo_tiff_writer_add_page (writer, slice, width, height, error);
}

static void
export_volume_thread (GTask        *task,
                      gpointer      source_object,
                      gpointer      task_data,
                      GCancellable *cancellable)
{
  VolumeExport *job = task_data;
  TomoTiffWriter *writer;
  GError *error = NULL;
  gboolean ok;

  writer = tomo_tiff_writer_new (job->path, job->expected_bytes, &error);
  if (writer == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  job->writer = writer;
  ok = tomo_engine_reconstruct_volume (job->engine, job->row_start, job->row_end,
                                       &job->params, job->kernel,
                                       volume_sink_cb, volume_progress_cb, job,
                                       cancellable, &error);
  job->writer = NULL;
  /* Abort removes the incomplete file; the chosen path is left as it was. */
  if (ok)
    ok = tomo_tiff_writer_close (writer, &error);
  else
    tomo_tiff_writer_abort (writer);

  if (!ok)
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_return_boolean (task, TRUE);
}

void
tomo_window_export_volume_async (TomoWindow          *self,
                                 const char          *path,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  guint height;

  g_return_if_fail (TOMO_IS_WINDOW (self));

  height = self->scan != NULL ? tomo_scan_get_height (self->scan) : 1;
  tomo_window_export_rows_async (self, path, 0, height - 1, cancellable, callback, user_data);
}

void
tomo_window_export_rows_async (TomoWindow          *self,
                               const char          *path,
                               guint                first_row,
                               guint                last_row,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  VolumeExport *job;
  TomoRoi roi;
  guint width, height;

  g_return_if_fail (TOMO_IS_WINDOW (self));
  g_return_if_fail (path != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tomo_window_export_rows_async);

  if (self->scan == NULL)
    {
      g_task_return_new_error (task, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                               "Cannot write “%s”: no scan is open", path);
      return;
    }
  width = tomo_scan_get_width (self->scan);
  height = tomo_scan_get_height (self->scan);
  if (first_row > last_row || last_row >= height)
    {
      g_task_return_new_error (task, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                               "Cannot write “%s”: rows %u–%u are not within the scan's 0–%u",
                               path, first_row, last_row, height - 1);
      return;
    }

  {
    GError *error = NULL;

    if (!tomo_output_check_inputs (path, tomo_scan_get_input_files (self->scan), &error))
      {
        g_task_return_error (task, error);
        return;
      }
  }

  job = g_new0 (VolumeExport, 1);
  job->engine = g_object_ref (self->engine);
  job->path = g_strdup (path);
  job->row_start = first_row;
  job->row_end = last_row + 1;
  tomo_recon_params_init (&job->params, width);
  job->params.center = self->params.center;
  job->params.filter = self->params.filter;
  job->params.interp = self->params.interp;
  job->params.roi = self->params.roi;
  job->kernel = self->params.kernel;
  roi = tomo_recon_params_get_roi (&job->params, width);
  job->expected_bytes = (guint64) roi.width * roi.height * sizeof (float) * (job->row_end - job->row_start);
  job->progress = g_atomic_rc_box_new0 (ExportProgress);
  g_mutex_init (&job->progress->lock);
  g_weak_ref_init (&job->progress->window, self);

  g_task_set_task_data (task, job, (GDestroyNotify) volume_export_free);
  g_task_run_in_thread (task, export_volume_thread);
}

gboolean
tomo_window_export_volume_finish (TomoWindow    *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
export_volume_done (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  TomoWindow *self = TOMO_WINDOW (source);
  g_autofree char *path = user_data;
  g_autoptr(GError) error = NULL;

  _tomo_window_set_busy (self, NULL, FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), FALSE);
  g_clear_object (&self->export_cancellable);
  _tomo_window_update_actions (self);

  if (tomo_window_export_volume_finish (self, result, &error))
    {
      g_autofree char *folder = g_path_get_dirname (path);
      g_autofree char *message = g_strdup_printf ("Volume written to %s", path);

      _tomo_window_show_toast (self, message, folder);
    }
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
           && !g_error_matches (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_CANCELLED))
    {
      g_autofree char *message = g_strdup_printf ("Volume export failed: %s", error->message);
      tomo_window_show_error (self, message);
    }
}

void
_tomo_window_export_volume_chosen (TomoWindow *self,
                                   GFile      *file)
{
  g_autofree char *path = g_file_get_path (file);
  guint first = (guint) gtk_adjustment_get_value (self->panel->export_first_adjustment);
  guint last = (guint) gtk_adjustment_get_value (self->panel->export_last_adjustment);

  g_clear_object (&self->export_cancellable);
  self->export_cancellable = g_cancellable_new ();
  _tomo_window_set_busy (self, "Volume", FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), TRUE);
  _tomo_window_update_actions (self);
  tomo_window_export_rows_async (self, path, first, last, self->export_cancellable,
                                 export_volume_done, g_strdup (path));
}
