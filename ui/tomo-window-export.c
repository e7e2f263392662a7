/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include "tomo-error.h"
#include "tomo-output.h"
#include "tomo-tiff-writer.h"
#include "tomo-volume-export.h"
#include "tomo-window-private.h"

gboolean
tomo_window_export_slice_tiff (TomoWindow *self,
                               const char *path,
                               GError    **error)
{
  g_autoptr(TomoSlice) host = NULL;
  TomoSlice *slice;
  gboolean fresh;

  g_return_val_if_fail (TOMO_IS_WINDOW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  /* The rows about the centre shown, not the ones before it rested. */
  fresh = _tomo_window_flush_restitch (self);
  slice = tomo_slice_view_get_slice (self->slice_view);
  if (slice == NULL || self->scan == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write “%s”: no reconstructed slice is shown", path);
      return FALSE;
    }
  if (slice->data == NULL || fresh)
    {
      /* Shown through interop only: the same slice once more, downloaded;
       * or the rows just stitched anew: about the same detector column. */
      TomoSliceRequest request;

      tomo_slice_request_init (&request, self->scan);
      request.row = slice->row;
      request.n_slices = slice->n_slices;
      request.params = slice->params;
      if (fresh)
        {
          request.params.center = self->params.center;
          request.params.roi = self->params.roi;
        }
      request.kernel = self->params.kernel;
      host = tomo_engine_reconstruct (self->engine, &request, NULL, error);
      if (host == NULL)
        return FALSE;
      slice = host;
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
on_progress (TomoVolumeExport *export,
             GParamSpec       *pspec,
             TomoWindow       *self)
{
  double fraction = tomo_volume_export_get_progress (export);
  guint total = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (export), "tomo-rows-total"));
  g_autofree char *text = g_strdup_printf ("Volume %u / %u", (guint) (fraction * total + 0.5), total);

  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  gtk_progress_bar_set_text (self->progress_bar, text);
}

static void
export_run_done (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  if (tomo_volume_export_run_finish (TOMO_VOLUME_EXPORT (source), result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
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
  g_autoptr(TomoVolumeExport) export = NULL;
  TomoReconParams params;

  g_return_if_fail (TOMO_IS_WINDOW (self));
  g_return_if_fail (path != NULL);

  _tomo_window_flush_restitch (self);
  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tomo_window_export_rows_async);

  if (self->scan == NULL)
    {
      g_task_return_new_error (task, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                               "Cannot write “%s”: no scan is open", path);
      return;
    }
  if (first_row > last_row)
    {
      g_task_return_new_error (task, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                               "Cannot write “%s”: the first row %u is after the last %u",
                               path, first_row, last_row);
      return;
    }

  tomo_recon_params_init (&params, tomo_scan_get_width (self->scan));
  params.center = self->params.center;
  params.filter = self->params.filter;
  params.interp = self->params.interp;
  params.roi = self->params.roi;
  export = tomo_volume_export_new (self->engine, path, TOMO_VOLUME_FORMAT_AUTO, first_row, last_row + 1,
                                   &params, self->params.kernel);
  g_object_set_data (G_OBJECT (export), "tomo-rows-total", GUINT_TO_POINTER (last_row + 1 - first_row));
  g_signal_connect_object (export, "notify::progress", G_CALLBACK (on_progress), self, 0);
  tomo_volume_export_run_async (export, cancellable, export_run_done, g_steal_pointer (&task));
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

  if (tomo_window_export_volume_finish (self, result, &error)
      || (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
          && !g_error_matches (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_CANCELLED)))
    _tomo_window_report_file (self, path, error, "Volume written to", "Volume export failed");
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
