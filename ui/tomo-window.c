/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>
#include <glib/gstdio.h>

#include "tomo-center-finder.h"
#include "tomo-colormap.h"
#include "tomo-error.h"
#include "tomo-gpu.h"
#include "tomo-histogram.h"
#include "tomo-output.h"
#include "tomo-tiff-writer.h"
#include "tomo-ui-private.h"
#include "tomo-window.h"

/* Engine callbacks may arrive after the window is gone; they find it
 * through a weak reference that lives as long as the engine. */
typedef struct
{
  GWeakRef window;
} WindowLink;

static void
window_link_free (gpointer data)
{
  WindowLink *link = data;

  g_weak_ref_clear (&link->window);
  g_free (link);
}

/* Volume-export progress, written by the worker and shown by one coalesced
 * low-priority idle at a time. */
typedef struct
{
  GMutex lock;
  guint done, total;
  guint idle_id;
  GWeakRef window;
} ExportProgress;

struct _TomoWindow
{
  GtkApplicationWindow parent_instance;

  /* template */
  GtkLabel *subtitle_label;
  GtkInfoBar *banner;
  GtkLabel *banner_label;
  GtkAdjustment *center_adjustment;
  TomoCenterFinder *center_finder;
  GtkAdjustment *row_adjustment;
  GtkAdjustment *min_adjustment;
  GtkAdjustment *max_adjustment;
  GtkComboBoxText *filter_combo;
  GtkComboBoxText *kernel_combo;
  GtkComboBoxText *colormap_combo;
  GtkToggleButton *gpu_button;
  GtkToggleButton *roi_toggle;
  GtkLabel *roi_label;
  TomoHistogram *histogram;
  TomoSliceView *slice_view;
  GtkRevealer *sinogram_revealer;
  GtkPicture *sinogram_picture;
  GtkLabel *device_label;
  GtkLabel *timing_label;
  GtkLabel *path_label;
  GtkLabel *pointer_label;
  GtkProgressBar *progress_bar;
  GtkButton *cancel_button;

  GSettings *settings;
  TomoEngine *engine;
  WindowLink *link;
  TomoScan *scan;
  GCancellable *load_cancellable;
  GCancellable *export_cancellable;
  guint pulse_id;
  guint request_idle_id;

  /* parameters */
  double center;
  guint row;
  TomoFilterType filter;
  TomoInterp interp;
  guint n_slices;
  TomoGpuKernel kernel;
  TomoBackend backend;
  TomoRoi roi;
  gboolean auto_contrast;
  gboolean show_sinogram;
  gboolean applying_auto;
  char *error_message;

  /* sinogram view cache */
  float *sinogram;
  guint sinogram_row;
  gboolean sinogram_valid;
};

G_DEFINE_FINAL_TYPE (TomoWindow, tomo_window, GTK_TYPE_APPLICATION_WINDOW)

enum {
  PROP_0,
  PROP_CENTER,
  PROP_ROW,
  PROP_FILTER,
  PROP_INTERP,
  PROP_N_SLICES,
  PROP_KERNEL,
  PROP_BACKEND,
  PROP_COLORMAP,
  PROP_WINDOW_MIN,
  PROP_WINDOW_MAX,
  PROP_AUTO_CONTRAST,
  PROP_SHOW_SINOGRAM,
  PROP_ERROR_MESSAGE,
  N_PROPS
};

enum {
  SCAN_LOADED,
  SLICE_READY,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void update_sinogram (TomoWindow *self);

/* ---- banner --------------------------------------------------------------- */

void
tomo_window_show_error (TomoWindow *self,
                        const char *message)
{
  g_return_if_fail (TOMO_IS_WINDOW (self));

  g_free (self->error_message);
  self->error_message = g_strdup (message);
  gtk_label_set_text (self->banner_label, message);
  gtk_widget_set_visible (GTK_WIDGET (self->banner), TRUE);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR_MESSAGE]);
}

static void
hide_error (TomoWindow *self)
{
  if (self->error_message == NULL)
    return;
  g_clear_pointer (&self->error_message, g_free);
  gtk_widget_set_visible (GTK_WIDGET (self->banner), FALSE);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR_MESSAGE]);
}

static void
on_banner_response (TomoWindow *self,
                    int         response)
{
  hide_error (self);
}

const char *
tomo_window_get_error_message (TomoWindow *self)
{
  g_return_val_if_fail (TOMO_IS_WINDOW (self), NULL);
  return self->error_message;
}

/* ---- reconstruction requests ---------------------------------------------- */

static void
update_status (TomoWindow *self,
               TomoSlice  *slice)
{
  g_autofree char *device = NULL;
  g_autofree char *timing = NULL;

  device = g_strdup (tomo_engine_get_device_name (self->engine));
  gtk_label_set_text (self->device_label, device);

  if (slice == NULL)
    return;

  timing = g_strdup_printf ("%s · filter %.1f ms · back projection %.1f ms · total %.1f ms · display %.1f ms · %.2f GU/s",
                            slice->kernel ? slice->kernel : "?",
                            slice->filter_ms, slice->backproject_ms, slice->total_ms,
                            tomo_slice_view_get_display_ms (self->slice_view),
                            slice->gups);
  gtk_label_set_text (self->timing_label, timing);
}

static void
apply_auto_contrast (TomoWindow *self,
                     TomoSlice  *slice)
{
  double lo, hi;

  if (slice->data == NULL
      || !tomo_percentiles (slice->data, (gsize) slice->width * slice->height * slice->n_slices,
                            0.5, 99.5, &lo, &hi))
    return;
  if (hi <= lo)
    hi = lo + 1e-6;

  self->applying_auto = TRUE;
  g_object_set (self, "window-min", lo, "window-max", hi, NULL);
  self->applying_auto = FALSE;
}

static void
on_slice_ready (TomoEngine   *engine,
                TomoSlice    *slice,
                const GError *error,
                gpointer      user_data)
{
  WindowLink *link = user_data;
  g_autoptr(TomoWindow) self = g_weak_ref_get (&link->window);

  if (self == NULL || engine != self->engine)
    return;

  if (error != NULL)
    {
      if (!g_error_matches (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_CANCELLED))
        {
          g_autofree char *message = g_strdup_printf ("Reconstruction failed: %s", error->message);
          tomo_window_show_error (self, message);
        }
      return;
    }

  /* A slice of a scan that was replaced meanwhile. */
  if (self->scan == NULL || slice->roi.x + slice->width > tomo_scan_get_width (self->scan))
    return;

  tomo_slice_view_set_slice (self->slice_view, slice, tomo_scan_get_width (self->scan));
  if (self->auto_contrast)
    apply_auto_contrast (self, slice);
  if (slice->data != NULL)
    tomo_histogram_set_data (self->histogram, slice->data,
                             (gsize) slice->width * slice->height * slice->n_slices);
  update_status (self, slice);

  g_signal_emit (self, signals[SLICE_READY], 0);
}

static gboolean
request_idle_cb (gpointer data)
{
  TomoWindow *self = data;
  TomoSliceRequest request;
  guint height;

  self->request_idle_id = 0;
  if (self->scan == NULL)
    return G_SOURCE_REMOVE;

  height = tomo_scan_get_height (self->scan);
  tomo_slice_request_init (&request, self->scan);
  request.n_slices = MIN (self->n_slices, height);
  request.row = MIN (self->row, height - request.n_slices);
  request.params.center = self->center;
  request.params.filter = self->filter;
  request.params.interp = self->interp;
  request.params.roi = self->roi;
  request.kernel = self->kernel;
  /* The histogram and readout need host data, so never skip the download. */
  request.keep_on_device = self->backend == TOMO_BACKEND_GPU;
  request.skip_download = FALSE;

  tomo_engine_submit (self->engine, &request, on_slice_ready, self->link);

  return G_SOURCE_REMOVE;
}

/* Parameter changes that arrive together (a scan load sets several) become
 * one request; the engine coalesces the rest ("latest wins"). */
static void
queue_request (TomoWindow *self)
{
  if (self->request_idle_id == 0 && self->scan != NULL)
    self->request_idle_id = g_idle_add_full (G_PRIORITY_DEFAULT, request_idle_cb, self, NULL);
}

/* ---- parameters ----------------------------------------------------------- */

static void
set_center (TomoWindow *self,
            double      center)
{
  if (!isfinite (center) || center == self->center)
    return;
  self->center = center;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CENTER]);
  queue_request (self);
  if (self->show_sinogram)
    update_sinogram (self);
}

static void
set_row (TomoWindow *self,
         guint       row)
{
  if (self->scan != NULL)
    row = MIN (row, tomo_scan_get_height (self->scan) - 1);
  if (row == self->row)
    return;
  self->row = row;
  tomo_center_finder_set_row (self->center_finder, row);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ROW]);
  queue_request (self);
  if (self->show_sinogram)
    update_sinogram (self);
}

static void
set_roi (TomoWindow *self,
         guint       x,
         guint       y,
         guint       width,
         guint       height)
{
  g_autofree char *text = NULL;

  self->roi = (TomoRoi) { x, y, width, height };
  if (width == 0)
    text = g_strdup ("Whole slice");
  else
    text = g_strdup_printf ("%u × %u at (%u, %u)", width, height, x, y);
  gtk_label_set_text (self->roi_label, text);
  queue_request (self);
}

static void
on_roi_selected (TomoWindow *self,
                 guint       x,
                 guint       y,
                 guint       width,
                 guint       height)
{
  /* A new ROI is drawn on the full slice, so it replaces, not nests. */
  set_roi (self, x, y, width, height);
  gtk_toggle_button_set_active (self->roi_toggle, FALSE);
}

static gboolean
set_backend (TomoWindow  *self,
             TomoBackend  backend)
{
  g_autoptr(GError) error = NULL;

  if (backend == self->backend)
    return TRUE;
  if (!tomo_engine_set_backend (self->engine, backend, &error))
    {
      tomo_window_show_error (self, error->message);
      return FALSE;
    }
  self->backend = tomo_engine_get_backend (self->engine);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BACKEND]);
  update_status (self, NULL);
  queue_request (self);
  return TRUE;
}

static void
set_window (TomoWindow *self,
            double      min,
            double      max)
{
  double old_min = tomo_slice_view_get_window_min (self->slice_view);
  double old_max = tomo_slice_view_get_window_max (self->slice_view);

  if (!isfinite (min) || !isfinite (max))
    return;
  if (!self->applying_auto && self->auto_contrast && (min != old_min || max != old_max))
    {
      self->auto_contrast = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_AUTO_CONTRAST]);
    }

  tomo_slice_view_set_window (self->slice_view, min, max);
  tomo_histogram_set_window (self->histogram, min, max);
  if (min != old_min)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WINDOW_MIN]);
  if (max != old_max)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WINDOW_MAX]);
}

static void
on_histogram_window_changed (TomoWindow *self,
                             double      min,
                             double      max)
{
  set_window (self, min, max);
}

/* ---- sinogram view -------------------------------------------------------- */

static void
update_sinogram (TomoWindow *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  guint width, n_proj, line;
  guint8 *rgb;
  double lo, hi, scale;

  if (self->scan == NULL || !self->show_sinogram)
    return;

  width = tomo_scan_get_width (self->scan);
  n_proj = tomo_scan_get_n_projections (self->scan);

  if (!self->sinogram_valid || self->sinogram_row != self->row)
    {
      g_free (self->sinogram);
      self->sinogram = g_new (float, (gsize) width * n_proj);
      self->sinogram_valid = tomo_scan_read_sinogram (self->scan, self->row, self->sinogram, NULL, &error);
      self->sinogram_row = self->row;
      if (!self->sinogram_valid)
        {
          g_autofree char *message = g_strdup_printf ("Reading the sinogram of row %u failed: %s",
                                                      self->row, error->message);
          tomo_window_show_error (self, message);
          return;
        }
    }

  if (!tomo_percentiles (self->sinogram, (gsize) width * n_proj, 0.5, 99.5, &lo, &hi) || hi <= lo)
    lo = 0, hi = 1;
  scale = 255.0 / (hi - lo);

  rgb = g_malloc ((gsize) width * n_proj * 3);
  for (gsize i = 0; i < (gsize) width * n_proj; i++)
    {
      float v = self->sinogram[i];
      guint8 g = isfinite (v) ? (guint8) CLAMP ((v - lo) * scale, 0, 255) : 0;

      rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = g;
    }
  /* The rotation centre: a good centre makes the sinogram symmetric about it. */
  line = (guint) CLAMP (lround (self->center), 0, (long) width - 1);
  for (guint p = 0; p < n_proj; p++)
    {
      guint8 *px = rgb + 3 * ((gsize) p * width + line);
      px[0] = 230, px[1] = 40, px[2] = 40;
    }

  bytes = g_bytes_new_take (rgb, (gsize) width * n_proj * 3);
  texture = gdk_memory_texture_new (width, n_proj, GDK_MEMORY_R8G8B8, bytes, (gsize) width * 3);
  gtk_picture_set_paintable (self->sinogram_picture, GDK_PAINTABLE (texture));
}

/* ---- loading -------------------------------------------------------------- */

static gboolean
pulse_cb (gpointer data)
{
  gtk_progress_bar_pulse (GTK_PROGRESS_BAR (data));
  return G_SOURCE_CONTINUE;
}

static void
set_busy (TomoWindow *self,
          const char *text,
          gboolean    pulse)
{
  g_clear_handle_id (&self->pulse_id, g_source_remove);
  gtk_widget_set_visible (GTK_WIDGET (self->progress_bar), text != NULL);
  if (text == NULL)
    return;
  gtk_progress_bar_set_text (self->progress_bar, text);
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  if (pulse)
    self->pulse_id = g_timeout_add (100, pulse_cb, self->progress_bar);
}

static void
open_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  TomoOpenOptions options;
  GError *error = NULL;
  TomoScan *scan;

  tomo_open_options_init (&options);
  scan = tomo_scan_open (task_data, &options, &error);
  if (scan == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, scan, g_object_unref);
}

static void
set_scan (TomoWindow *self,
          TomoScan   *scan)
{
  g_autofree char *basename = NULL;
  g_autofree char *subtitle = NULL;
  guint width = tomo_scan_get_width (scan);
  guint height = tomo_scan_get_height (scan);

  g_set_object (&self->scan, scan);
  tomo_engine_set_scan (self->engine, scan);
  self->sinogram_valid = FALSE;

  gtk_adjustment_configure (self->center_adjustment, self->center,
                            0, width - 1, 0.01, 1, 0);
  gtk_adjustment_configure (self->row_adjustment, self->row,
                            0, height - 1, 1, MAX (1, height / 8), 0);

  set_roi (self, 0, 0, 0, 0);
  self->center = -1;
  set_center (self, (width - 1) / 2.0);
  self->row = G_MAXUINT;
  set_row (self, height / 2);

  tomo_slice_view_set_pixel_size (self->slice_view, tomo_scan_get_pixel_size (scan));

  basename = g_path_get_basename (tomo_scan_get_path (scan));
  subtitle = g_strdup_printf ("%s — %s, %u × %u, %u projections",
                              basename, tomo_scan_get_format_name (scan),
                              width, height, tomo_scan_get_n_projections (scan));
  gtk_label_set_text (self->subtitle_label, subtitle);
  gtk_window_set_title (GTK_WINDOW (self), basename);

  update_sinogram (self);
  queue_request (self);
}

static void
open_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  TomoWindow *self = TOMO_WINDOW (source);
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(GError) error = NULL;

  set_busy (self, NULL, FALSE);
  scan = g_task_propagate_pointer (G_TASK (result), &error);
  if (scan == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_autofree char *message = g_strdup_printf ("Could not open the scan: %s", error->message);
          tomo_window_show_error (self, message);
        }
      g_signal_emit (self, signals[SCAN_LOADED], 0, FALSE);
      return;
    }

  hide_error (self);
  set_scan (self, scan);
  /* The control starts at the middle and moves to the estimate when the
   * background finder answers (its note says so); not for live scans,
   * which have too few projections when they start. */
  tomo_center_finder_set_scan (self->center_finder, scan);
  g_signal_emit (self, signals[SCAN_LOADED], 0, TRUE);
}

void
tomo_window_open (TomoWindow *self,
                  GFile      *file)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;

  g_return_if_fail (TOMO_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  path = g_file_get_path (file);
  if (path == NULL)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_autofree char *message = g_strdup_printf ("Could not open “%s”: only local files can be read", uri);
      tomo_window_show_error (self, message);
      g_signal_emit (self, signals[SCAN_LOADED], 0, FALSE);
      return;
    }

  if (self->settings != NULL)
    {
      g_autofree char *folder = g_path_get_dirname (path);
      g_settings_set_string (self->settings, "last-folder", folder);
    }

  g_cancellable_cancel (self->load_cancellable);
  g_clear_object (&self->load_cancellable);
  self->load_cancellable = g_cancellable_new ();

  text = g_strdup_printf ("Opening %s", path);
  set_busy (self, text, TRUE);

  task = g_task_new (self, self->load_cancellable, open_done, NULL);
  g_task_set_source_tag (task, tomo_window_open);
  g_task_set_task_data (task, g_steal_pointer (&path), g_free);
  g_task_run_in_thread (task, open_thread);
}

/* A live scan (ui/tomo-live-link.c): a new scan object replaces the one
 * shown; the same one again means its data changed, so cached rows go and
 * the slice is reconstructed anew.  `status` replaces the subtitle. */
void
tomo_window_show_live (TomoWindow *self,
                       TomoScan   *scan,
                       const char *status)
{
  g_return_if_fail (TOMO_IS_WINDOW (self));

  if (scan != NULL && scan != self->scan)
    {
      hide_error (self);
      set_scan (self, scan);
    }
  else if (scan != NULL)
    {
      tomo_engine_set_scan (self->engine, NULL);
      tomo_engine_set_scan (self->engine, scan);
      self->sinogram_valid = FALSE;
      queue_request (self);
      if (self->show_sinogram)
        update_sinogram (self);
    }
  if (status != NULL)
    gtk_label_set_text (self->subtitle_label, status);
}

/* ---- export --------------------------------------------------------------- */

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
  g_autoptr(GTask) task = NULL;
  VolumeExport *job;
  TomoRoi roi;
  guint width;

  g_return_if_fail (TOMO_IS_WINDOW (self));
  g_return_if_fail (path != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, tomo_window_export_volume_async);

  if (self->scan == NULL)
    {
      g_task_return_new_error (task, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                               "Cannot write “%s”: no scan is open", path);
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

  width = tomo_scan_get_width (self->scan);
  job = g_new0 (VolumeExport, 1);
  job->engine = g_object_ref (self->engine);
  job->path = g_strdup (path);
  job->row_start = 0;
  job->row_end = tomo_scan_get_height (self->scan);
  tomo_recon_params_init (&job->params, width);
  job->params.center = self->center;
  job->params.filter = self->filter;
  job->params.interp = self->interp;
  job->params.roi = self->roi;
  job->kernel = self->kernel;
  roi = tomo_recon_params_get_roi (&job->params, width);
  job->expected_bytes = (guint64) roi.width * roi.height * sizeof (float) * job->row_end;
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
  g_autoptr(GError) error = NULL;

  set_busy (self, NULL, FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), FALSE);
  g_clear_object (&self->export_cancellable);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.export-volume", TRUE);

  if (!tomo_window_export_volume_finish (self, result, &error)
      && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
      && !g_error_matches (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_CANCELLED))
    {
      g_autofree char *message = g_strdup_printf ("Volume export failed: %s", error->message);
      tomo_window_show_error (self, message);
    }
}

/* ---- file choosers -------------------------------------------------------- */

typedef void (*ChosenFunc) (TomoWindow *self,
                            GFile      *file);

static void
chooser_response (GtkNativeDialog *dialog,
                  int              response,
                  gpointer         user_data)
{
  TomoWindow *self = g_object_get_data (G_OBJECT (dialog), "tomo-window");
  ChosenFunc func = user_data;

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));

      if (file != NULL)
        func (self, file);
    }
  g_object_unref (dialog);
}

static void
run_chooser (TomoWindow           *self,
             const char           *title,
             GtkFileChooserAction  action,
             const char           *suggested_name,
             const char           *pattern,
             const char           *pattern_name,
             ChosenFunc            func)
{
  GtkFileChooserNative *chooser;

  chooser = gtk_file_chooser_native_new (title, GTK_WINDOW (self), action, NULL, NULL);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_object_set_data (G_OBJECT (chooser), "tomo-window", self);

  if (pattern != NULL)
    {
      g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
      g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();
      g_auto(GStrv) patterns = g_strsplit (pattern, ";", -1);

      gtk_file_filter_set_name (filter, pattern_name);
      for (guint i = 0; patterns[i] != NULL; i++)
        gtk_file_filter_add_pattern (filter, patterns[i]);
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
      gtk_file_filter_set_name (all, "All files");
      gtk_file_filter_add_pattern (all, "*");
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), all);
    }

  if (self->settings != NULL)
    {
      g_autofree char *folder = g_settings_get_string (self->settings, "last-folder");

      if (folder[0] != '\0' && g_file_test (folder, G_FILE_TEST_IS_DIR))
        {
          g_autoptr(GFile) dir = g_file_new_for_path (folder);
          gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), dir, NULL);
        }
    }
  if (suggested_name != NULL)
    gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), suggested_name);

  g_signal_connect (chooser, "response", G_CALLBACK (chooser_response), func);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static char *
suggest_name (TomoWindow *self,
              const char *what,
              const char *ext)
{
  g_autofree char *base = NULL;
  char *dot;

  if (self->scan == NULL)
    return g_strdup_printf ("slice.%s", ext);
  base = g_path_get_basename (tomo_scan_get_path (self->scan));
  if ((dot = strrchr (base, '.')) != NULL)
    *dot = '\0';
  if (g_str_equal (what, "volume"))
    return g_strdup_printf ("%s-volume-c%.2f.%s", base, self->center, ext);
  return g_strdup_printf ("%s-row%u-c%.2f.%s", base, self->row, self->center, ext);
}

static void
open_chosen (TomoWindow *self,
             GFile      *file)
{
  tomo_window_open (self, file);
}

static void
report_export (TomoWindow *self,
               gboolean    ok,
               GError     *error)
{
  if (!ok)
    {
      g_autofree char *message = g_strdup_printf ("Export failed: %s", error->message);
      tomo_window_show_error (self, message);
    }
}

static void
export_tiff_chosen (TomoWindow *self,
                    GFile      *file)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);

  report_export (self, tomo_window_export_slice_tiff (self, path, &error), error);
}

static void
export_png_chosen (TomoWindow *self,
                   GFile      *file)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);

  report_export (self, tomo_window_export_slice_png (self, path, &error), error);
}

static void
export_volume_chosen (TomoWindow *self,
                      GFile      *file)
{
  g_autofree char *path = g_file_get_path (file);

  g_clear_object (&self->export_cancellable);
  self->export_cancellable = g_cancellable_new ();
  set_busy (self, "Volume", FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.export-volume", FALSE);
  tomo_window_export_volume_async (self, path, self->export_cancellable, export_volume_done, NULL);
}

/* ---- actions -------------------------------------------------------------- */

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  run_chooser (TOMO_WINDOW (widget), "Open Scan", GTK_FILE_CHOOSER_ACTION_OPEN, NULL,
               "*.h5;*.hdf5;*.hdf;*.nxs;*.tif;*.tiff", "Scans (HDF5, NeXus, TIFF)", open_chosen);
}

static void
export_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);
  g_autofree char *name = NULL;

  if (g_str_equal (action_name, "win.export-png"))
    {
      name = suggest_name (self, "slice", "png");
      run_chooser (self, "Export Slice as PNG", GTK_FILE_CHOOSER_ACTION_SAVE, name,
                   "*.png", "PNG images", export_png_chosen);
    }
  else if (g_str_equal (action_name, "win.export-volume"))
    {
      name = suggest_name (self, "volume", "tif");
      run_chooser (self, "Export Volume as TIFF Stack", GTK_FILE_CHOOSER_ACTION_SAVE, name,
                   "*.tif;*.tiff", "TIFF stacks", export_volume_chosen);
    }
  else
    {
      name = suggest_name (self, "slice", "tif");
      run_chooser (self, "Export Slice as Float32 TIFF", GTK_FILE_CHOOSER_ACTION_SAVE, name,
                   "*.tif;*.tiff", "TIFF images", export_tiff_chosen);
    }
}

static void
cancel_export_action (GtkWidget  *widget,
                      const char *action_name,
                      GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);

  if (self->export_cancellable != NULL)
    g_cancellable_cancel (self->export_cancellable);
}

static void
set_center_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  set_center (TOMO_WINDOW (widget), g_variant_get_double (parameter));
}

static void
nudge_center_action (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);
  double upper = gtk_adjustment_get_upper (self->center_adjustment);

  set_center (self, CLAMP (self->center + g_variant_get_double (parameter), 0, upper));
}

static void
nudge_row_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);
  gint64 row = (gint64) self->row + g_variant_get_int32 (parameter);

  set_row (self, (guint) MAX (row, 0));
}

static void
clear_roi_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  set_roi (TOMO_WINDOW (widget), 0, 0, 0, 0);
}

static void
zoom_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);

  if (g_str_equal (action_name, "win.zoom-fit"))
    tomo_slice_view_zoom_fit (self->slice_view);
  else
    tomo_slice_view_zoom_one (self->slice_view);
}

/* ---- drag and drop -------------------------------------------------------- */

static gboolean
on_drop (GtkDropTarget *target,
         const GValue  *value,
         double         x,
         double         y,
         TomoWindow    *self)
{
  if (!G_VALUE_HOLDS (value, G_TYPE_FILE))
    return FALSE;
  tomo_window_open (self, g_value_get_object (value));
  return TRUE;
}

/* ---- pointer readout and status ------------------------------------------- */

static void
on_hover (TomoWindow    *self,
          double         image_x,
          double         image_y,
          double         value,
          gboolean       inside,
          TomoSliceView *view)
{
  TomoSlice *slice = tomo_slice_view_get_slice (view);
  guint plane, x, y;
  g_autofree char *text = NULL;

  if (!inside || slice == NULL
      || !tomo_slice_view_get_value_at (view, image_x, image_y, &plane, &x, &y, NULL))
    {
      gtk_label_set_text (self->pointer_label, "");
      return;
    }

  text = g_strdup_printf ("row %u  x %u  y %u  %.5g", slice->row + plane, x, y, value);
  gtk_label_set_text (self->pointer_label, text);
}

static void
on_slice_shown (TomoWindow    *self,
                TomoSliceView *view)
{
  gtk_label_set_text (self->path_label, tomo_slice_view_get_upload_path (view));
  update_status (self, tomo_slice_view_get_slice (view));
}

/* ---- GObject -------------------------------------------------------------- */

TomoScan *
tomo_window_get_scan (TomoWindow *self)
{
  g_return_val_if_fail (TOMO_IS_WINDOW (self), NULL);
  return self->scan;
}

TomoEngine *
tomo_window_get_engine (TomoWindow *self)
{
  g_return_val_if_fail (TOMO_IS_WINDOW (self), NULL);
  return self->engine;
}

TomoSliceView *
tomo_window_get_slice_view (TomoWindow *self)
{
  g_return_val_if_fail (TOMO_IS_WINDOW (self), NULL);
  return self->slice_view;
}

static const char *
backend_name (TomoBackend backend)
{
  return backend == TOMO_BACKEND_GPU ? "gpu" : "cpu";
}

static void
tomo_window_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  TomoWindow *self = TOMO_WINDOW (object);

  switch (prop_id)
    {
    case PROP_CENTER:
      g_value_set_double (value, self->center);
      break;
    case PROP_ROW:
      g_value_set_uint (value, self->row);
      break;
    case PROP_FILTER:
      g_value_set_string (value, tomo_filter_type_to_string (self->filter));
      break;
    case PROP_INTERP:
      g_value_set_string (value, tomo_interp_to_string (self->interp));
      break;
    case PROP_N_SLICES:
      g_value_set_uint (value, self->n_slices);
      break;
    case PROP_KERNEL:
      g_value_set_string (value, tomo_gpu_kernel_to_string (self->kernel));
      break;
    case PROP_BACKEND:
      g_value_set_string (value, backend_name (self->backend));
      break;
    case PROP_COLORMAP:
      g_value_set_string (value, tomo_slice_view_get_colormap (self->slice_view));
      break;
    case PROP_WINDOW_MIN:
      g_value_set_double (value, tomo_slice_view_get_window_min (self->slice_view));
      break;
    case PROP_WINDOW_MAX:
      g_value_set_double (value, tomo_slice_view_get_window_max (self->slice_view));
      break;
    case PROP_AUTO_CONTRAST:
      g_value_set_boolean (value, self->auto_contrast);
      break;
    case PROP_SHOW_SINOGRAM:
      g_value_set_boolean (value, self->show_sinogram);
      break;
    case PROP_ERROR_MESSAGE:
      g_value_set_string (value, self->error_message);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tomo_window_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  TomoWindow *self = TOMO_WINDOW (object);

  switch (prop_id)
    {
    case PROP_CENTER:
      set_center (self, g_value_get_double (value));
      break;

    case PROP_ROW:
      set_row (self, g_value_get_uint (value));
      break;

    case PROP_FILTER:
      {
        TomoFilterType filter;

        if (tomo_filter_type_from_string (g_value_get_string (value), &filter, NULL)
            && filter != self->filter)
          {
            self->filter = filter;
            g_object_notify_by_pspec (object, pspec);
            queue_request (self);
          }
      }
      break;

    case PROP_INTERP:
      {
        TomoInterp interp;

        if (tomo_interp_from_string (g_value_get_string (value), &interp, NULL)
            && interp != self->interp)
          {
            self->interp = interp;
            g_object_notify_by_pspec (object, pspec);
            queue_request (self);
          }
      }
      break;

    case PROP_N_SLICES:
      {
        guint n = g_value_get_uint (value);

        if ((n == 1 || n == 2 || n == 4) && n != self->n_slices)
          {
            self->n_slices = n;
            g_object_notify_by_pspec (object, pspec);
            queue_request (self);
          }
      }
      break;

    case PROP_KERNEL:
      {
        TomoGpuKernel kernel;

        if (tomo_gpu_kernel_from_string (g_value_get_string (value), &kernel, NULL)
            && kernel != self->kernel)
          {
            self->kernel = kernel;
            g_object_notify_by_pspec (object, pspec);
            queue_request (self);
          }
      }
      break;

    case PROP_BACKEND:
      {
        TomoBackend backend;

        if (tomo_backend_from_string (g_value_get_string (value), &backend, NULL))
          set_backend (self, backend);
      }
      break;

    case PROP_COLORMAP:
      {
        const char *old = tomo_slice_view_get_colormap (self->slice_view);
        TomoColormap colormap;

        if (tomo_colormap_from_string (g_value_get_string (value), &colormap)
            && !g_str_equal (old, tomo_colormap_to_string (colormap)))
          {
            tomo_slice_view_set_colormap (self->slice_view, tomo_colormap_to_string (colormap));
            g_object_notify_by_pspec (object, pspec);
          }
      }
      break;

    case PROP_WINDOW_MIN:
      set_window (self, g_value_get_double (value), tomo_slice_view_get_window_max (self->slice_view));
      break;

    case PROP_WINDOW_MAX:
      set_window (self, tomo_slice_view_get_window_min (self->slice_view), g_value_get_double (value));
      break;

    case PROP_AUTO_CONTRAST:
      if (g_value_get_boolean (value) != self->auto_contrast)
        {
          TomoSlice *slice = tomo_slice_view_get_slice (self->slice_view);

          self->auto_contrast = g_value_get_boolean (value);
          g_object_notify_by_pspec (object, pspec);
          if (self->auto_contrast && slice != NULL)
            apply_auto_contrast (self, slice);
        }
      break;

    case PROP_SHOW_SINOGRAM:
      if (g_value_get_boolean (value) != self->show_sinogram)
        {
          self->show_sinogram = g_value_get_boolean (value);
          gtk_revealer_set_reveal_child (self->sinogram_revealer, self->show_sinogram);
          g_object_notify_by_pspec (object, pspec);
          update_sinogram (self);
        }
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gboolean
round_to_uint (GBinding     *binding,
               const GValue *from,
               GValue       *to,
               gpointer      user_data)
{
  g_value_set_uint (to, (guint) MAX (0, lround (g_value_get_double (from))));
  return TRUE;
}

static gboolean
uint_to_double (GBinding     *binding,
                const GValue *from,
                GValue       *to,
                gpointer      user_data)
{
  g_value_set_double (to, g_value_get_uint (from));
  return TRUE;
}

static gboolean
tomo_window_close_request (GtkWindow *window)
{
  TomoWindow *self = TOMO_WINDOW (window);

  if (self->settings != NULL)
    {
      int width, height;

      gtk_window_get_default_size (window, &width, &height);
      g_settings_set_int (self->settings, "window-width", width);
      g_settings_set_int (self->settings, "window-height", height);
      g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (window));
    }

  if (self->export_cancellable != NULL)
    g_cancellable_cancel (self->export_cancellable);

  return GTK_WINDOW_CLASS (tomo_window_parent_class)->close_request (window);
}

static void
tomo_window_constructed (GObject *object)
{
  TomoWindow *self = TOMO_WINDOW (object);
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;

  G_OBJECT_CLASS (tomo_window_parent_class)->constructed (object);

  /* Running from the build tree without the schema compiled must not abort. */
  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, APPLICATION_ID, TRUE);
  if (schema != NULL)
    {
      self->settings = g_settings_new (APPLICATION_ID);
      gtk_window_set_default_size (GTK_WINDOW (self),
                                   g_settings_get_int (self->settings, "window-width"),
                                   g_settings_get_int (self->settings, "window-height"));
      if (g_settings_get_boolean (self->settings, "window-maximized"))
        gtk_window_maximize (GTK_WINDOW (self));
      g_settings_bind (self->settings, "colormap", self, "colormap", G_SETTINGS_BIND_DEFAULT);
    }
}

static void
tomo_window_dispose (GObject *object)
{
  TomoWindow *self = TOMO_WINDOW (object);

  g_clear_handle_id (&self->request_idle_id, g_source_remove);
  g_clear_handle_id (&self->pulse_id, g_source_remove);
  if (self->load_cancellable != NULL)
    g_cancellable_cancel (self->load_cancellable);
  if (self->export_cancellable != NULL)
    g_cancellable_cancel (self->export_cancellable);
  g_clear_object (&self->load_cancellable);
  g_clear_object (&self->export_cancellable);

  gtk_widget_dispose_template (GTK_WIDGET (self), TOMO_TYPE_WINDOW);

  g_clear_object (&self->settings);
  g_clear_object (&self->engine);
  g_clear_object (&self->scan);
  g_clear_pointer (&self->sinogram, g_free);
  g_clear_pointer (&self->error_message, g_free);

  G_OBJECT_CLASS (tomo_window_parent_class)->dispose (object);
}

static void
tomo_window_class_init (TomoWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->get_property = tomo_window_get_property;
  object_class->set_property = tomo_window_set_property;
  object_class->constructed = tomo_window_constructed;
  object_class->dispose = tomo_window_dispose;
  window_class->close_request = tomo_window_close_request;

  properties[PROP_CENTER] = g_param_spec_double ("center", NULL, NULL, -1e6, 1e6, 0, rw);
  properties[PROP_ROW] = g_param_spec_uint ("row", NULL, NULL, 0, G_MAXUINT, 0, rw);
  properties[PROP_FILTER] = g_param_spec_string ("filter", NULL, NULL, "ram-lak", rw);
  properties[PROP_INTERP] = g_param_spec_string ("interp", NULL, NULL, "linear", rw);
  properties[PROP_N_SLICES] = g_param_spec_uint ("n-slices", NULL, NULL, 1, 4, 1, rw);
  properties[PROP_KERNEL] = g_param_spec_string ("kernel", NULL, NULL, "auto", rw);
  properties[PROP_BACKEND] = g_param_spec_string ("backend", NULL, NULL, "cpu", rw);
  properties[PROP_COLORMAP] = g_param_spec_string ("colormap", NULL, NULL, "gray", rw);
  properties[PROP_WINDOW_MIN] = g_param_spec_double ("window-min", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0, rw);
  properties[PROP_WINDOW_MAX] = g_param_spec_double ("window-max", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 1, rw);
  properties[PROP_AUTO_CONTRAST] = g_param_spec_boolean ("auto-contrast", NULL, NULL, TRUE, rw);
  properties[PROP_SHOW_SINOGRAM] = g_param_spec_boolean ("show-sinogram", NULL, NULL, FALSE, rw);
  properties[PROP_ERROR_MESSAGE] = g_param_spec_string ("error-message", NULL, NULL, NULL,
                                                        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* A scan finished loading: TRUE, or FALSE with the error in the banner. */
  signals[SCAN_LOADED] =
    g_signal_new ("scan-loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);
  /* The engine delivered a slice for the current parameters. */
  signals[SLICE_READY] =
    g_signal_new ("slice-ready", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  _tomo_ui_ensure_resources ();
  g_type_ensure (TOMO_TYPE_SLICE_VIEW);
  g_type_ensure (TOMO_TYPE_HISTOGRAM);
  g_type_ensure (TOMO_TYPE_CENTER_FINDER);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/tomolive/Tomolive/tomo-window.ui");
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, subtitle_label);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, banner);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, banner_label);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, center_adjustment);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, center_finder);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, row_adjustment);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, min_adjustment);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, max_adjustment);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, filter_combo);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, kernel_combo);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, colormap_combo);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, gpu_button);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, roi_toggle);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, roi_label);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, histogram);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, slice_view);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, sinogram_revealer);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, sinogram_picture);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, device_label);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, timing_label);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, path_label);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, pointer_label);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, progress_bar);
  gtk_widget_class_bind_template_child (widget_class, TomoWindow, cancel_button);
  gtk_widget_class_bind_template_callback (widget_class, on_banner_response);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.export-tiff", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.export-png", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.export-volume", NULL, export_action);
  gtk_widget_class_install_action (widget_class, "win.cancel-export", NULL, cancel_export_action);
  gtk_widget_class_install_action (widget_class, "win.set-center", "d", set_center_action);
  gtk_widget_class_install_action (widget_class, "win.nudge-center", "d", nudge_center_action);
  gtk_widget_class_install_action (widget_class, "win.nudge-row", "i", nudge_row_action);
  gtk_widget_class_install_action (widget_class, "win.clear-roi", NULL, clear_roi_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-one", NULL, zoom_action);
  gtk_widget_class_install_property_action (widget_class, "win.row", "row");
  gtk_widget_class_install_property_action (widget_class, "win.filter", "filter");
  gtk_widget_class_install_property_action (widget_class, "win.interp", "interp");
  gtk_widget_class_install_property_action (widget_class, "win.n-slices", "n-slices");
  gtk_widget_class_install_property_action (widget_class, "win.kernel", "kernel");
  gtk_widget_class_install_property_action (widget_class, "win.backend", "backend");
  gtk_widget_class_install_property_action (widget_class, "win.colormap", "colormap");
  gtk_widget_class_install_property_action (widget_class, "win.auto-contrast", "auto-contrast");
  gtk_widget_class_install_property_action (widget_class, "win.show-sinogram", "show-sinogram");

  /* Centre: arrows (±0.1 px, Shift ±1 px) and the bracket keys, which keep
   * working while a text field has focus and eats the arrows. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Left, 0, "win.nudge-center", "d", -0.1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, 0, "win.nudge-center", "d", 0.1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Left, GDK_SHIFT_MASK, "win.nudge-center", "d", -1.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, GDK_SHIFT_MASK, "win.nudge-center", "d", 1.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_bracketleft, 0, "win.nudge-center", "d", -0.1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_bracketright, 0, "win.nudge-center", "d", 0.1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_braceleft, GDK_SHIFT_MASK, "win.nudge-center", "d", -1.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_braceright, GDK_SHIFT_MASK, "win.nudge-center", "d", 1.0);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Up, 0, "win.nudge-row", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Down, 0, "win.nudge-row", "i", -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Up, 0, "win.nudge-row", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Page_Down, 0, "win.nudge-row", "i", -1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_f, 0, "win.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1, 0, "win.zoom-one", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_a, 0, "win.auto-contrast", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, 0, "win.show-sinogram", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.clear-roi", NULL);
}

static void
tomo_window_init (TomoWindow *self)
{
  GtkDropTarget *drop;

  self->n_slices = 1;
  self->filter = TOMO_FILTER_RAMLAK;
  self->interp = TOMO_INTERP_LINEAR;
  self->kernel = TOMO_GPU_KERNEL_AUTO;
  self->auto_contrast = TRUE;

  gtk_widget_init_template (GTK_WIDGET (self));

  self->engine = tomo_engine_new (TOMO_BACKEND_AUTO);
  self->backend = tomo_engine_get_backend (self->engine);
  self->link = g_new0 (WindowLink, 1);
  g_weak_ref_init (&self->link->window, self);
  g_object_set_data_full (G_OBJECT (self->engine), "tomo-window-link", self->link, window_link_free);

  if (!tomo_engine_has_gpu (self->engine))
    {
      gtk_actionable_set_action_name (GTK_ACTIONABLE (self->gpu_button), NULL);
      gtk_widget_set_sensitive (GTK_WIDGET (self->gpu_button), FALSE);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->gpu_button), "No usable CUDA device");
    }

  g_signal_connect_swapped (self->center_finder, "center-found", G_CALLBACK (set_center), self);
  g_object_bind_property (self, "center", self->center_adjustment, "value",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property_full (self, "row", self->row_adjustment, "value",
                               G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE,
                               uint_to_double, round_to_uint, NULL, NULL);
  g_object_bind_property (self, "window-min", self->min_adjustment, "value",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self, "window-max", self->max_adjustment, "value",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self, "filter", self->filter_combo, "active-id",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self, "kernel", self->kernel_combo, "active-id",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self, "colormap", self->colormap_combo, "active-id",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->roi_toggle, "active", self->slice_view, "roi-mode",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);

  g_signal_connect_object (self->slice_view, "roi-selected", G_CALLBACK (on_roi_selected),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->slice_view, "hover", G_CALLBACK (on_hover),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->slice_view, "slice-shown", G_CALLBACK (on_slice_shown),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->histogram, "window-changed", G_CALLBACK (on_histogram_window_changed),
                           self, G_CONNECT_SWAPPED);

  drop = gtk_drop_target_new (G_TYPE_FILE, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  update_status (self, NULL);
  gtk_label_set_text (self->path_label, tomo_slice_view_get_upload_path (self->slice_view));
}

TomoWindow *
tomo_window_new (GtkApplication *application)
{
  return g_object_new (TOMO_TYPE_WINDOW, "application", application, NULL);
}
