/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-colormap.h"
#include "tomo-error.h"
#include "tomo-histogram.h"
#include "tomo-open-dialog.h"
#include "tomo-ui-private.h"
#include "tomo-window-private.h"
#include "tomo-volume-view.h"

/* The window: layout and wiring.  Actions live in tomo-window-actions.c,
 * exports in tomo-window-export.c, the side panel in tomo-param-panel.c
 * and the sinogram in tomo-sinogram-view.c. */

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
  PROP_CENTER_SHIFT,
  PROP_TILT,
  N_PROPS
};

enum {
  SCAN_LOADED,
  SLICE_READY,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void queue_request (TomoWindow *self);

static void
window_link_free (gpointer data)
{
  TomoWindowLink *link = data;

  g_weak_ref_clear (&link->window);
  g_free (link);
}

/* ---- banner and toast ----------------------------------------------------- */

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

void
_tomo_window_hide_error (TomoWindow *self)
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
  _tomo_window_hide_error (self);
}

const char *
tomo_window_get_error_message (TomoWindow *self)
{
  g_return_val_if_fail (TOMO_IS_WINDOW (self), NULL);
  return self->error_message;
}

static gboolean
toast_timeout_cb (gpointer data)
{
  TomoWindow *self = data;

  self->toast_id = 0;
  gtk_revealer_set_reveal_child (self->toast_revealer, FALSE);
  return G_SOURCE_REMOVE;
}

void
_tomo_window_show_toast (TomoWindow *self,
                         const char *message,
                         const char *folder)
{
  g_free (self->toast_folder);
  self->toast_folder = g_strdup (folder);
  gtk_label_set_text (self->toast_label, message);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.toast-open-folder", folder != NULL);
  gtk_revealer_set_reveal_child (self->toast_revealer, TRUE);
  g_clear_handle_id (&self->toast_id, g_source_remove);
  self->toast_id = g_timeout_add_seconds (8, toast_timeout_cb, self);
}

void
_tomo_window_report_file (TomoWindow   *self,
                          const char   *path,
                          const GError *error,
                          const char   *done,
                          const char   *failed)
{
  if (error == NULL)
    {
      g_autofree char *folder = g_path_get_dirname (path);
      g_autofree char *message = g_strdup_printf ("%s %s", done, path);

      _tomo_window_show_toast (self, message, folder);
    }
  else
    {
      g_autofree char *message = g_strdup_printf ("%s: %s", failed, error->message);

      tomo_window_show_error (self, message);
    }
}

const char *
tomo_window_get_toast (TomoWindow *self)
{
  g_return_val_if_fail (TOMO_IS_WINDOW (self), NULL);
  if (!gtk_revealer_get_reveal_child (self->toast_revealer))
    return NULL;
  return gtk_label_get_text (self->toast_label);
}

static void
on_toast_close (TomoWindow *self)
{
  g_clear_handle_id (&self->toast_id, g_source_remove);
  gtk_revealer_set_reveal_child (self->toast_revealer, FALSE);
}

char *
_tomo_window_dup_folder (TomoWindow *self)
{
  g_autofree char *last = NULL;

  if (self->scan != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (tomo_scan_get_path (self->scan));

      /* A TIFF stack is opened as its folder: that folder is "the scan's". */
      if (g_file_test (tomo_scan_get_path (self->scan), G_FILE_TEST_IS_DIR))
        return g_strdup (tomo_scan_get_path (self->scan));
      if (g_file_test (dir, G_FILE_TEST_IS_DIR))
        return g_steal_pointer (&dir);
    }
  if (self->settings != NULL)
    {
      last = g_settings_get_string (self->settings, "last-folder");
      if (last[0] != '\0' && g_file_test (last, G_FILE_TEST_IS_DIR))
        return g_steal_pointer (&last);
    }
  return NULL;
}

/* ---- status --------------------------------------------------------------- */

/* The status bar speaks to users (device, time per slice, what the data
 * needed repairing); kernel names, upload paths and throughput go to the
 * diagnostics popover. */
static void
update_status (TomoWindow *self,
               TomoSlice  *slice)
{
  g_autoptr(GString) status = g_string_new (NULL);
  g_autofree char *device = NULL;
  g_autofree char *diagnostics = NULL;

  if (self->backend == TOMO_BACKEND_GPU)
    device = g_strdup_printf ("GPU: %s", tomo_engine_get_device_name (self->engine));
  else
    device = g_strdup (tomo_engine_get_device_name (self->engine));
  gtk_label_set_text (self->device_label, device);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->device_label), self->backend_note);

  if (slice == NULL)
    {
      gtk_label_set_text (self->status_label, "");
      return;
    }

  g_string_append_printf (status, "Slice in %.0f ms", slice->total_ms);
  if (self->scan != NULL)
    g_string_append_printf (status, " · %u projections", tomo_scan_get_n_projections (self->scan));
  if (slice->stats.n_nonpositive > 0)
    g_string_append_printf (status, " · %" G_GUINT64_FORMAT " non-positive intensities clamped",
                            slice->stats.n_nonpositive);
  if (slice->stats.n_nonfinite > 0)
    g_string_append_printf (status, " · %" G_GUINT64_FORMAT " NaN/Inf values replaced",
                            slice->stats.n_nonfinite);
  gtk_label_set_text (self->status_label, status->str);

  diagnostics = g_strdup_printf ("Kernel: %s\nFilter: %.2f ms\nBack projection: %.2f ms\n"
                                 "Request to slice: %.2f ms\nTo screen: %.2f ms\n"
                                 "Throughput: %.2f GU/s\nDisplay path: %s",
                                 slice->kernel ? slice->kernel : "?",
                                 slice->filter_ms, slice->backproject_ms, slice->total_ms,
                                 tomo_slice_view_get_display_ms (self->slice_view),
                                 slice->gups, tomo_slice_view_get_upload_path (self->slice_view));
  gtk_label_set_text (self->diagnostics_label, diagnostics);
}

/* Slice-parallel panels, left to right, and why fewer than asked. */
static void
update_rows_label (TomoWindow *self,
                   TomoSlice  *slice)
{
  g_autoptr(GString) text = g_string_new (NULL);

  if (slice == NULL || slice->n_slices < 2)
    {
      if (slice != NULL && self->params.n_slices > 1 && self->scan != NULL)
        g_string_printf (text, "Row %u only: the scan has %u row%s, fewer than %u slices",
                         slice->row, tomo_scan_get_height (self->scan),
                         tomo_scan_get_height (self->scan) == 1 ? "" : "s", self->params.n_slices);
    }
  else
    {
      g_string_append (text, "Panels, left to right: rows ");
      for (guint i = 0; i < slice->n_slices; i++)
        g_string_append_printf (text, i == 0 ? "%u" : ", %u", slice->row + i);
      if (slice->n_slices < self->params.n_slices && self->scan != NULL)
        g_string_append_printf (text, " (%u of %u: the scan has %u rows)", slice->n_slices,
                                self->params.n_slices, tomo_scan_get_height (self->scan));
    }
  gtk_label_set_text (self->rows_label, text->str);
  gtk_widget_set_visible (GTK_WIDGET (self->rows_label), text->len > 0);
}

/* ---- reconstruction requests ---------------------------------------------- */

/* The window comes from the statistics that travel with the slice: nothing
 * here scans the slice. */
static void
apply_auto_contrast (TomoWindow *self,
                     TomoSlice  *slice)
{
  double lo = slice->values.lo, hi = slice->values.hi;

  if (!slice->values.valid)
    return;
  if (hi <= lo)
    hi = lo + 1e-6;

  self->applying_auto = TRUE;
  g_object_set (self, "window-min", lo, "window-max", hi, NULL);
  self->applying_auto = FALSE;
}

static void sync_backend (TomoWindow *self,
                          const char *note);

static void
on_slice_ready (TomoEngine   *engine,
                TomoSlice    *slice,
                const GError *error,
                gpointer      user_data)
{
  TomoWindowLink *link = user_data;
  g_autoptr(TomoWindow) self = g_weak_ref_get (&link->window);

  if (self == NULL || engine != self->engine)
    return;

  if (error != NULL)
    {
      if (g_error_matches (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_DEVICE_FAULT))
        {
          /* The engine went on with the CPU: say so, mark the GPU with
           * the reason and redo the slice there. */
          g_autofree char *message = g_strdup_printf ("The GPU failed; the CPU reconstructs now: %s",
                                                      error->message);
          g_autofree char *note = g_strdup_printf ("GPU unavailable: %s", error->message);

          tomo_window_show_error (self, message);
          sync_backend (self, note);
          queue_request (self);
        }
      else if (!g_error_matches (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_CANCELLED))
        {
          g_autofree char *message = g_strdup_printf ("Reconstruction failed: %s", error->message);
          tomo_window_show_error (self, message);
        }
      return;
    }

  _tomo_window_show_slice (self, slice);
}

/* A slice of the engine's or of a live preview's, on screen. */
void
_tomo_window_show_slice (TomoWindow *self,
                         TomoSlice  *slice)
{
  /* A slice of a scan that was replaced meanwhile. */
  if (self->scan == NULL || slice->roi.x + slice->width > tomo_scan_get_width (self->scan))
    return;

  tomo_slice_view_set_slice (self->slice_view, slice, tomo_scan_get_width (self->scan));
  if (slice->data == NULL && !slice->values.valid && !self->device_stats_missing)
    {
      self->device_stats_missing = TRUE;
      queue_request (self);
    }
  if (self->auto_contrast)
    apply_auto_contrast (self, slice);
  if (slice->values.valid)
    tomo_histogram_set_bins (self->panel->histogram, slice->values.bins, TOMO_SLICE_HISTOGRAM_BINS,
                             slice->values.range_lo, slice->values.range_hi);
  else
    tomo_histogram_set_bins (self->panel->histogram, NULL, 0, 0, 0);
  update_status (self, slice);
  update_rows_label (self, slice);

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
  request.n_slices = MIN (self->params.n_slices, height);
  /* Slice-parallel modes take 1, 2 or 4 rows. */
  if (request.n_slices == 3)
    request.n_slices = 2;
  request.row = MIN (self->params.row, height - request.n_slices);
  request.params.center = self->params.center;
  request.params.filter = self->params.filter;
  request.params.interp = self->params.interp;
  request.params.roi = self->params.roi;
  request.kernel = self->params.kernel;
  request.keep_on_device = self->backend == TOMO_BACKEND_GPU;
  /* Once slices reach the texture through interop, the host copy is not
   * needed: statistics come with the slice, the readout reads one pixel,
   * export asks for the data.  An engine that cannot compute statistics on
   * the device yet says so with a slice without them, and gets the
   * download back. */
  request.skip_download = self->backend == TOMO_BACKEND_GPU && !self->device_stats_missing
                          && g_strcmp0 (tomo_slice_view_get_upload_path (self->slice_view),
                                        "CUDA–GL interop") == 0;

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

/* Hundredths of a pixel: the field's two decimals, the notes', the file's. */
#define CENTER_STEPS 100.0

double
_tomo_window_detector_center (TomoWindow *self,
                              double      center)
{
  /* Exactly the number shown: (d + shift) − shift need not give d back. */
  return round ((center - self->center_shift) * CENTER_STEPS) / CENTER_STEPS;
}

gboolean
_tomo_window_flush_restitch (TomoWindow *self)
{
  TomoScan *before = self->scan;

  if (self->restitch_id == 0)
    return FALSE;
  _tomo_window_geometry_restitch (self);
  return self->scan != before;
}

void
_tomo_window_configure_center (TomoWindow *self)
{
  double lo = -self->center_shift, hi = tomo_scan_get_width (self->scan) - 1 - self->center_shift;

  if (self->have_plan && self->plan.kind == TOMO_GEOMETRY_OFFSET && self->base_scan != NULL)
    {
      lo = MAX (lo, 0.0);
      hi = MIN (hi, tomo_scan_get_width (self->base_scan) - 1.0);
    }
  gtk_adjustment_configure (self->panel->center_adjustment,
                            _tomo_window_detector_center (self, self->params.center), lo, hi,
                            0.01, 1, 0);
}

void
_tomo_window_refresh (TomoWindow *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CENTER]);
  queue_request (self);
}

/* The centre at rest this long stitches an offset scan's rows again. */
#define RESTITCH_MS 350

static gboolean
restitch_cb (gpointer data)
{
  TomoWindow *self = data;

  self->restitch_id = 0;
  _tomo_window_geometry_restitch (self);
  return G_SOURCE_REMOVE;
}

void
_tomo_window_schedule_restitch (TomoWindow *self)
{
  g_clear_handle_id (&self->restitch_id, g_source_remove);
  self->restitch_id = g_timeout_add (RESTITCH_MS, restitch_cb, self);
}

void
_tomo_window_set_center (TomoWindow *self,
                         double      center)
{
  if (!isfinite (center))
    return;
  /* The centre is what the field shows (a sweep or the finder answer with
   * more digits): that number, given to --center or saved, makes this
   * slice.  Rounded on the detector column and shifted by whole columns,
   * as the command line shifts its --center into the stitched rows. */
  center = _tomo_window_detector_center (self, center) + self->center_shift;
  if (center == self->params.center)
    return;
  self->params.center = center;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CENTER]);
  queue_request (self);
  tomo_sinogram_view_set_center (self->sinogram_view, center);
  /* The offset geometry's rows hold the axis they were stitched about:
   * once the centre rests (a drag paused), they are stitched anew. */
  if (self->have_plan && self->plan.kind == TOMO_GEOMETRY_OFFSET)
    _tomo_window_schedule_restitch (self);
}

void
_tomo_window_set_row (TomoWindow *self,
                      guint       row)
{
  if (self->scan != NULL)
    row = MIN (row, tomo_scan_get_height (self->scan) - 1);
  if (row == self->params.row)
    return;
  self->params.row = row;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ROW]);
  queue_request (self);
  tomo_sinogram_view_set_row (self->sinogram_view, row);
}

void
_tomo_window_set_roi (TomoWindow *self,
                      guint       x,
                      guint       y,
                      guint       width,
                      guint       height)
{
  g_autofree char *text = NULL;

  self->params.roi = (TomoRoi) { x, y, width, height };
  if (width == 0)
    text = g_strdup ("Whole slice");
  else
    text = g_strdup_printf ("%u × %u at (%u, %u)", width, height, x, y);
  gtk_label_set_text (self->panel->roi_label, text);
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
  _tomo_window_set_roi (self, x, y, width, height);
  gtk_toggle_button_set_active (self->panel->roi_toggle, FALSE);
}

/* The Backend toggle shows the backend the engine runs, and its tooltip
 * says why when that is not the one asked for. */
static void
sync_backend (TomoWindow *self,
              const char *note)
{
  self->backend = tomo_engine_get_backend (self->engine);
  g_free (self->backend_note);
  self->backend_note = g_strdup (note);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BACKEND]);
  update_status (self, tomo_slice_view_get_slice (self->slice_view));
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
      g_autofree char *note = g_strdup_printf ("Running on the CPU: %s", error->message);

      tomo_window_show_error (self, error->message);
      sync_backend (self, note);
      return FALSE;
    }
  sync_backend (self, NULL);
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
  tomo_histogram_set_window (self->panel->histogram, min, max);
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

static void
set_auto_contrast (TomoWindow *self,
                   gboolean    auto_contrast)
{
  TomoSlice *slice = tomo_slice_view_get_slice (self->slice_view);

  if (auto_contrast == self->auto_contrast)
    return;
  self->auto_contrast = auto_contrast;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_AUTO_CONTRAST]);
  if (self->auto_contrast && slice != NULL)
    apply_auto_contrast (self, slice);
}

static void
on_sinogram_failed (TomoWindow *self,
                    const char *message)
{
  tomo_window_show_error (self, message);
}

/* ---- loading -------------------------------------------------------------- */

static gboolean
pulse_cb (gpointer data)
{
  gtk_progress_bar_pulse (GTK_PROGRESS_BAR (data));
  return G_SOURCE_CONTINUE;
}

void
_tomo_window_set_busy (TomoWindow *self,
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

typedef struct
{
  char *path;
  TomoOpenArgs args;
  gboolean remember;   /* options given explicitly: remember them for the folder */
  TomoScan *base;      /* as opened; the task's scan is it in the Auto geometry */
  TomoGeometryPlan plan;
} OpenJob;

static void
open_job_free (OpenJob *job)
{
  g_clear_object (&job->base);
  g_free (job->path);
  tomo_open_args_clear (&job->args);
  g_free (job);
}

static void
open_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  OpenJob *job = task_data;
  GError *error = NULL;
  TomoScan *scan;

  scan = tomo_open_args_open (job->path, &job->args, &error);
  if (scan == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  /* 360° and offset-axis scans are shown in the geometry Auto picks (a
   * scan it cannot arrange is shown as measured). */
  job->base = scan;
  scan = _tomo_window_geometry_present (job->base, TOMO_GEOMETRY_AUTO, NAN, &job->plan, NULL);
  if (scan == NULL)
    {
      scan = g_object_ref (job->base);
      memset (&job->plan, 0, sizeof job->plan);
      job->plan.kind = TOMO_GEOMETRY_180;
    }
  g_task_return_pointer (task, scan, g_object_unref);
}

/* The file as it is, and what is done to it where it is not reconstructed
 * as measured: the geometry and a tilt corrected (the tooltip says how). */
void
_tomo_window_update_subtitle (TomoWindow *self)
{
  TomoScan *file = self->opened_scan != NULL ? self->opened_scan : self->scan;
  g_autofree char *basename = NULL;
  g_autofree char *subtitle = NULL;
  g_autofree char *plan = NULL;
  g_autofree char *tip = NULL;
  char tilt[48] = "";

  if (file == NULL)
    return;
  basename = g_path_get_basename (tomo_scan_get_path (file));
  if (self->have_plan)
    plan = tomo_geometry_plan_describe (&self->plan);
  if (self->have_plan && self->tilt != 0.0)
    g_snprintf (tilt, sizeof tilt, " · axis tilt %.2f°", self->tilt);
  subtitle = g_strdup_printf ("%s — %s, %u × %u, %u projections%s%s",
                              basename, tomo_scan_get_format_name (file),
                              tomo_scan_get_width (file), tomo_scan_get_height (file),
                              tomo_scan_get_n_projections (file),
                              !self->have_plan ? ""
                              : self->plan.kind == TOMO_GEOMETRY_OFFSET ? " · offset axis"
                              : self->plan.kind == TOMO_GEOMETRY_360 ? " · 360°" : "",
                              tilt);
  if (plan != NULL && tilt[0] != '\0')
    tip = g_strdup_printf ("%s\nAxis tilt %.3f° corrected: every row shifted along itself about "
                           "the middle row", plan, self->tilt);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->subtitle_label), tip != NULL ? tip : plan);
  gtk_label_set_text (self->subtitle_label, subtitle);
}

/* A new scan resets what depends on the data — window/level (auto contrast
 * again), readout, ROI, row, centre, export range — and keeps what is a
 * preference: colour map, filter, interpolation, slices, backend, layout. */
static void
set_scan (TomoWindow *self,
          TomoScan   *scan)
{
  g_autofree char *basename = NULL;
  guint width = tomo_scan_get_width (scan);
  guint height = tomo_scan_get_height (scan);

  g_set_object (&self->scan, scan);
  tomo_engine_set_scan (self->engine, scan);
  tomo_slice_view_set_slice (self->slice_view, NULL, width);
  tomo_histogram_set_bins (self->panel->histogram, NULL, 0, 0, 0);
  gtk_label_set_text (self->pointer_label, "");
  update_rows_label (self, NULL);
  set_auto_contrast (self, TRUE);

  /* The control counts detector columns (the offset geometry's stitched
   * rows start left of the detector). */
  _tomo_window_configure_center (self);
  gtk_adjustment_configure (self->panel->row_adjustment, self->params.row,
                            0, height - 1, 1, MAX (1, height / 8), 0);
  gtk_adjustment_configure (self->panel->export_first_adjustment, 0, 0, height - 1, 1, 10, 0);
  gtk_adjustment_configure (self->panel->export_last_adjustment, height - 1, 0, height - 1, 1, 10, 0);

  tomo_sinogram_view_set_scan (self->sinogram_view, scan);
  _tomo_window_set_roi (self, 0, 0, 0, 0);
  {
    /* A pinned centre stays (inside the new detector); else the middle. */
    double center = gtk_toggle_button_get_active (self->panel->center_pin) && self->params.center >= 0
                    ? MIN (self->params.center, width - 1) : (width - 1) / 2.0;

    self->params.center = -1;
    _tomo_window_set_center (self, center);
  }
  self->params.row = G_MAXUINT;
  _tomo_window_set_row (self, height / 2);

  tomo_slice_view_set_pixel_size (self->slice_view, tomo_scan_get_pixel_size (scan));

  basename = g_path_get_basename (tomo_scan_get_path (scan));
  _tomo_window_update_subtitle (self);
  gtk_window_set_title (GTK_WINDOW (self), basename);

  gtk_stack_set_visible_child_name (self->main_stack, "scan");
  _tomo_window_update_actions (self);
  queue_request (self);
}

void
_tomo_window_set_center_shift (TomoWindow *self,
                               double      shift)
{
  /* Raw: set_scan() or the caller sets the centre that follows. */
  if (self->params.center >= 0)
    self->params.center += shift - self->center_shift;
  self->center_shift = shift;
}

void
_tomo_window_present_scan (TomoWindow             *self,
                           TomoScan               *scan,
                           const TomoGeometryPlan *plan)
{
  self->have_plan = plan != NULL;
  self->center_held = FALSE;
  self->live_center = NAN;
  if (plan != NULL)
    self->plan = *plan;
  _tomo_window_set_center_shift (self, plan != NULL && plan->kind == TOMO_GEOMETRY_OFFSET
                                         ? plan->recon_center - plan->center : 0);
  set_scan (self, scan);
  if (plan != NULL && plan->kind == TOMO_GEOMETRY_OFFSET)
    _tomo_window_set_center (self, plan->recon_center);
  tomo_center_finder_set_scan (self->panel->center_finder, scan);
  _tomo_window_apply_pending_params (self);
}

static void
open_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  TomoWindow *self = TOMO_WINDOW (source);
  OpenJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(GError) error = NULL;

  _tomo_window_set_busy (self, NULL, FALSE);
  scan = g_task_propagate_pointer (G_TASK (result), &error);
  if (scan != NULL && job->remember)
    tomo_open_args_remember (job->path, &job->args);
  if (scan != NULL)
    {
      g_autofree char *uri = g_filename_to_uri (job->path, NULL, NULL);

      if (uri != NULL)
        gtk_recent_manager_add_item (gtk_recent_manager_get_default (), uri);
    }
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

  _tomo_window_hide_error (self);
  _tomo_window_geometry_opened (self, job->base, &job->plan);
  /* The control starts at the middle (the offset geometry: its axis) and
   * moves to the estimate when the background finder answers (its note
   * says so); not for live scans, which have too few projections when they
   * start. */
  _tomo_window_present_scan (self, scan, &job->plan);
  g_signal_emit (self, signals[SCAN_LOADED], 0, TRUE);
}

void
tomo_window_open (TomoWindow *self,
                  GFile      *file)
{
  tomo_window_open_with_args (self, file, NULL);
}

void
tomo_window_open_with_args (TomoWindow         *self,
                            GFile              *file,
                            const TomoOpenArgs *args)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  OpenJob *job;

  g_return_if_fail (TOMO_IS_WINDOW (self));
  g_return_if_fail (G_IS_FILE (file));

  g_clear_handle_id (&self->restitch_id, g_source_remove);
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
  _tomo_window_set_busy (self, text, TRUE);

  /* Without options: those last used for this folder, if any. */
  job = g_new0 (OpenJob, 1);
  if (args != NULL)
    {
      tomo_open_args_copy (args, &job->args);
      job->remember = TRUE;
    }
  else
    tomo_open_args_recall (path, &job->args);
  job->path = g_steal_pointer (&path);

  task = g_task_new (self, self->load_cancellable, open_done, NULL);
  g_task_set_source_tag (task, tomo_window_open);
  g_task_set_task_data (task, job, (GDestroyNotify) open_job_free);
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
      /* A scan that grew (JSON without a count) or the next one of the same
       * detector keeps the centre and row the user chose. */
      gboolean same = self->scan != NULL &&
                      tomo_scan_get_width (self->scan) == tomo_scan_get_width (scan) &&
                      tomo_scan_get_height (self->scan) == tomo_scan_get_height (scan);
      double center = self->params.center, live_center = self->live_center;
      guint row = self->params.row;

      g_clear_handle_id (&self->restitch_id, g_source_remove);
      _tomo_window_hide_error (self);
      _tomo_window_geometry_opened (self, scan, NULL);
      set_scan (self, scan);
      if (same)
        {
          _tomo_window_set_center (self, center);
          _tomo_window_set_row (self, row);
        }
      self->live_center = same && isfinite (live_center) ? live_center : self->params.center;
      /* Parameters loaded for a file do not hold a live scan's centre. */
      if (!same)
        self->center_held = FALSE;
      /* Find centre and Sweep… work on the stream, not the file before. */
      tomo_center_finder_set_live_scan (self->panel->center_finder, scan);
    }
  else if (scan != NULL)
    {
      tomo_engine_set_scan (self->engine, NULL);
      tomo_engine_set_scan (self->engine, scan);
      tomo_sinogram_view_set_scan (self->sinogram_view, scan);
      queue_request (self);
    }
  if (status != NULL)
    gtk_label_set_text (self->subtitle_label, status);
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

/* ---- pointer readout ------------------------------------------------------ */

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
  float v;
  g_autofree char *text = NULL;

  if (!inside || slice == NULL
      || !tomo_slice_view_get_value_at (view, image_x, image_y, &plane, &x, &y, NULL)
      || !tomo_slice_get_value (slice, plane, x, y, &v))
    {
      gtk_label_set_text (self->pointer_label, "");
      return;
    }

  text = g_strdup_printf ("row %u  x %u  y %u  %.5g", slice->row + plane, x, y, v);
  gtk_label_set_text (self->pointer_label, text);
}

static void
on_slice_shown (TomoWindow    *self,
                TomoSliceView *view)
{
  update_status (self, tomo_slice_view_get_slice (view));
}

/* ---- scrolling over the panel --------------------------------------------- */

/* Wheel over the panel scrolls the panel.  Only a control that has focus
 * (the user clicked it) takes the wheel, so scrolling down the panel never
 * changes a colour map or a minimum on its way.  The scrolled window itself
 * (focused when the window opens) or anything else around the panel is
 * not such a control. */
static void
on_panel_motion (GtkEventControllerMotion *controller,
                 double                    x,
                 double                    y,
                 TomoWindow               *self)
{
  self->panel_pointer_x = x;
  self->panel_pointer_y = y;
}

static gboolean
on_panel_scroll (GtkEventControllerScroll *controller,
                 double                    dx,
                 double                    dy,
                 TomoWindow               *self)
{
  GtkWidget *panel = GTK_WIDGET (self->panel);
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (self));
  GtkAdjustment *vadj = gtk_scrolled_window_get_vadjustment (self->panel_scroller);
  GdkEvent *event = gtk_event_controller_get_current_event (GTK_EVENT_CONTROLLER (controller));
  graphene_point_t p;
  GtkWidget *target = NULL;
  double step;

  if (gtk_widget_compute_point (GTK_WIDGET (self->panel_scroller), panel,
                                &GRAPHENE_POINT_INIT (self->panel_pointer_x, self->panel_pointer_y), &p))
    target = gtk_widget_pick (panel, p.x, p.y, GTK_PICK_DEFAULT);
  if (focus != NULL && target != NULL && gtk_widget_is_ancestor (focus, panel)
      && (target == focus || gtk_widget_is_ancestor (target, focus) || gtk_widget_is_ancestor (focus, target)))
    return GDK_EVENT_PROPAGATE;

  step = pow (gtk_adjustment_get_page_size (vadj), 2.0 / 3.0);
  if (event != NULL && gdk_scroll_event_get_direction (event) == GDK_SCROLL_SMOOTH
      && gdk_scroll_event_get_unit (event) == GDK_SCROLL_UNIT_SURFACE)
    step = 1;
  gtk_adjustment_set_value (vadj, gtk_adjustment_get_value (vadj) + dy * step);
  return GDK_EVENT_STOP;
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

/* ---- public --------------------------------------------------------------- */

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

TomoScan *
tomo_window_get_stitched_base (TomoWindow *self)
{
  g_return_val_if_fail (TOMO_IS_WINDOW (self), NULL);
  return self->have_plan && self->plan.kind == TOMO_GEOMETRY_OFFSET ? self->base_scan : NULL;
}

TomoSliceView *
tomo_window_get_slice_view (TomoWindow *self)
{
  g_return_val_if_fail (TOMO_IS_WINDOW (self), NULL);
  return self->slice_view;
}

void
tomo_window_add_view (TomoWindow *self,
                      const char *name,
                      const char *title,
                      GtkWidget  *view)
{
  g_return_if_fail (TOMO_IS_WINDOW (self));
  g_return_if_fail (name != NULL && title != NULL);
  g_return_if_fail (GTK_IS_WIDGET (view));

  gtk_stack_add_titled (self->view_stack, view, name, title);
  gtk_widget_set_visible (GTK_WIDGET (self->view_switcher), TRUE);
}

static void
on_center_found (TomoWindow *self,
                 double      center,
                 gboolean    on_open)
{
  /* The estimate made when the scan opened moves the centre, unless it is
   * kept (Keep) or came from saved parameters. */
  if (on_open && (self->center_held || gtk_toggle_button_get_active (self->panel->center_pin)))
    return;
  /* Nor a live scan's, once complete, where the user moved the centre
   * while it arrived. */
  if (on_open && isfinite (self->live_center) && fabs (self->params.center - self->live_center) > 1e-9)
    return;
  _tomo_window_set_center (self, center);
  /* The next scan on this detector is judged against the centre set here. */
  if (on_open && isfinite (self->live_center))
    self->live_center = self->params.center;
}

/* Find centre measured the axis tilt of the rows shown: corrected (added
 * to the tilt corrected already) where it is beyond two standard
 * deviations, not in an offset axis' stitched rows. */
static gboolean
on_tilt_found (TomoWindow *self,
               double      tilt,
               double      uncertainty)
{
  double next;

  if (!self->have_plan || self->plan.kind == TOMO_GEOMETRY_OFFSET || !(fabs (tilt) > 2.0 * uncertainty))
    return FALSE;
  next = atan (tan (self->tilt * G_PI / 180.0) + tan (tilt * G_PI / 180.0)) * 180.0 / G_PI;
  if (fabs (next) > TOMO_GEOMETRY_MAX_TILT)
    return FALSE;
  _tomo_window_set_tilt (self, next);
  return self->tilt == next;
}

/* A popover focuses its first focusable child, and a selectable label that
 * takes focus selects all of itself: the diagnostics would open selected. */
static void
on_details_shown (TomoWindow *self)
{
  gtk_label_select_region (self->diagnostics_label, 0, 0);
}

/* The centre control shows detector columns; the window's centre counts
 * in the presented rows. */
static gboolean
center_to_detector (GBinding     *binding,
                    const GValue *from,
                    GValue       *to,
                    gpointer      data)
{
  g_value_set_double (to, _tomo_window_detector_center (data, g_value_get_double (from)));
  return TRUE;
}

static gboolean
center_from_detector (GBinding     *binding,
                      const GValue *from,
                      GValue       *to,
                      gpointer      data)
{
  g_value_set_double (to, g_value_get_double (from) + TOMO_WINDOW (data)->center_shift);
  return TRUE;
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
      g_value_set_double (value, self->params.center);
      break;
    case PROP_ROW:
      g_value_set_uint (value, self->params.row);
      break;
    case PROP_FILTER:
      g_value_set_string (value, tomo_filter_type_to_string (self->params.filter));
      break;
    case PROP_INTERP:
      g_value_set_string (value, tomo_interp_to_string (self->params.interp));
      break;
    case PROP_N_SLICES:
      g_value_set_uint (value, self->params.n_slices);
      break;
    case PROP_KERNEL:
      g_value_set_string (value, tomo_kernel_to_string (self->params.kernel));
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
    case PROP_CENTER_SHIFT:
      g_value_set_double (value, self->center_shift);
      break;
    case PROP_TILT:
      g_value_set_double (value, self->tilt);
      break;
    case PROP_ERROR_MESSAGE:
      g_value_set_string (value, self->error_message);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Filter, interpolation, slice count or kernel set through its property:
 * `next` is the parameters with the new value; a change is stored,
 * notified and asks for a new slice. */
static void
set_params (TomoWindow             *self,
            const TomoWindowParams *next,
            GParamSpec             *pspec)
{
  if (next->filter == self->params.filter && next->interp == self->params.interp &&
      next->n_slices == self->params.n_slices && next->kernel == self->params.kernel)
    return;
  self->params = *next;
  g_object_notify_by_pspec (G_OBJECT (self), pspec);
  queue_request (self);
}

static void
tomo_window_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  TomoWindow *self = TOMO_WINDOW (object);
  TomoWindowParams next = self->params;

  switch (prop_id)
    {
    case PROP_CENTER:
      _tomo_window_set_center (self, g_value_get_double (value));
      break;

    case PROP_TILT:
      _tomo_window_set_tilt (self, g_value_get_double (value));
      break;

    case PROP_ROW:
      _tomo_window_set_row (self, g_value_get_uint (value));
      break;

    case PROP_FILTER:
      if (tomo_filter_type_from_string (g_value_get_string (value), &next.filter, NULL))
        set_params (self, &next, pspec);
      break;

    case PROP_INTERP:
      if (tomo_interp_from_string (g_value_get_string (value), &next.interp, NULL))
        set_params (self, &next, pspec);
      break;

    case PROP_N_SLICES:
      next.n_slices = g_value_get_uint (value);
      if (next.n_slices == 1 || next.n_slices == 2 || next.n_slices == 4)
        set_params (self, &next, pspec);
      break;

    case PROP_KERNEL:
      {
        TomoKernel kernel;

        if (tomo_kernel_from_string (g_value_get_string (value), &kernel, NULL))
          {
            next.kernel = kernel;
            set_params (self, &next, pspec);
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
      set_auto_contrast (self, g_value_get_boolean (value));
      break;

    case PROP_SHOW_SINOGRAM:
      if (g_value_get_boolean (value) != self->show_sinogram)
        {
          self->show_sinogram = g_value_get_boolean (value);
          gtk_revealer_set_reveal_child (self->sinogram_revealer, self->show_sinogram);
          g_object_notify_by_pspec (object, pspec);
        }
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
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
  g_clear_handle_id (&self->restitch_id, g_source_remove);
  g_clear_handle_id (&self->pulse_id, g_source_remove);
  g_clear_handle_id (&self->toast_id, g_source_remove);
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
  g_clear_object (&self->base_scan);
  g_clear_object (&self->opened_scan);
  g_clear_pointer (&self->geometry_id, g_free);
  g_clear_pointer (&self->pending_params, g_key_file_unref);
  g_clear_pointer (&self->error_message, g_free);
  g_clear_pointer (&self->backend_note, g_free);
  g_clear_pointer (&self->toast_folder, g_free);

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
  /* What "center" minus the detector column is (TomoWindow::center_shift). */
  properties[PROP_CENTER_SHIFT] = g_param_spec_double ("center-shift", NULL, NULL, -1e6, 1e6, 0,
                                                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* The axis tilt corrected, degrees (tomo_geometry_correct_tilt()); 0 when
   * a scan opens. */
  properties[PROP_TILT] = g_param_spec_double ("tilt", NULL, NULL, -TOMO_GEOMETRY_MAX_TILT,
                                               TOMO_GEOMETRY_MAX_TILT, 0,
                                               G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY
                                               | G_PARAM_STATIC_STRINGS);
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
  g_type_ensure (TOMO_TYPE_SINOGRAM_VIEW);
  g_type_ensure (TOMO_TYPE_PARAM_PANEL);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/tomolive/Tomolive/tomo-window.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, TomoWindow, name)
  BIND (subtitle_label);
  BIND (banner);
  BIND (banner_label);
  BIND (main_stack);
  BIND (view_stack);
  BIND (view_switcher);
  BIND (panel_scroller);
  BIND (panel);
  BIND (slice_view);
  BIND (rows_label);
  BIND (sinogram_revealer);
  BIND (sinogram_view);
  BIND (device_label);
  BIND (status_label);
  BIND (diagnostics_label);
  BIND (pointer_label);
  BIND (progress_bar);
  BIND (cancel_button);
  BIND (toast_revealer);
  BIND (toast_label);
  BIND (recent_section);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, on_banner_response);
  gtk_widget_class_bind_template_callback (widget_class, on_toast_close);
  gtk_widget_class_bind_template_callback (widget_class, on_details_shown);

  _tomo_window_class_add_actions (widget_class);
}

static void
tomo_window_init (TomoWindow *self)
{
  GtkDropTarget *drop;
  GtkEventController *scroll;

  self->params.n_slices = 1;
  self->live_center = NAN;
  self->params.filter = TOMO_FILTER_RAMLAK;
  self->params.interp = TOMO_INTERP_LINEAR;
  self->params.kernel = TOMO_KERNEL_AUTO;
  self->auto_contrast = TRUE;

  gtk_widget_init_template (GTK_WIDGET (self));
  tomo_volume_view_install (self);   /* the three-view layout, key V */
  _tomo_window_geometry_setup (self);

  self->engine = tomo_engine_new (TOMO_BACKEND_AUTO);
  self->link = g_new0 (TomoWindowLink, 1);
  g_weak_ref_init (&self->link->window, self);
  g_object_set_data_full (G_OBJECT (self->engine), "tomo-window-link", self->link, window_link_free);

  if (!tomo_engine_has_gpu (self->engine))
    {
      gtk_actionable_set_action_name (GTK_ACTIONABLE (self->panel->gpu_button), NULL);
      gtk_widget_set_sensitive (GTK_WIDGET (self->panel->gpu_button), FALSE);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->panel->gpu_button),
                                   "No usable CUDA device: reconstructing on the CPU");
      sync_backend (self, "No usable CUDA device: reconstructing on the CPU");
    }
  else
    /* The toggles read the action state while the template was built, before
     * the engine existed: tell them what it runs. */
    sync_backend (self, NULL);

  g_signal_connect_swapped (self->panel->center_finder, "center-found", G_CALLBACK (on_center_found), self);
  g_signal_connect_swapped (self->panel->center_finder, "tilt-found", G_CALLBACK (on_tilt_found), self);
  g_object_bind_property (self, "tilt", self->panel->tilt_adjustment, "value",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property_full (self, "center", self->panel->center_adjustment, "value",
                               G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE,
                               center_to_detector, center_from_detector, self, NULL);
  g_object_bind_property_full (self, "row", self->panel->row_adjustment, "value",
                               G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE,
                               uint_to_double, round_to_uint, NULL, NULL);
  g_object_bind_property (self, "window-min", self->panel->min_adjustment, "value",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self, "window-max", self->panel->max_adjustment, "value",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self, "filter", self->panel->filter_combo, "active-id",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self, "kernel", self->panel->kernel_combo, "active-id",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self, "colormap", self->panel->colormap_combo, "active-id",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->panel->roi_toggle, "active", self->slice_view, "roi-mode",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);

  g_signal_connect_object (self->slice_view, "roi-selected", G_CALLBACK (on_roi_selected),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->slice_view, "hover", G_CALLBACK (on_hover),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->slice_view, "slice-shown", G_CALLBACK (on_slice_shown),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->panel->histogram, "window-changed", G_CALLBACK (on_histogram_window_changed),
                           self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->sinogram_view, "load-failed", G_CALLBACK (on_sinogram_failed),
                           self, G_CONNECT_SWAPPED);

  scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  gtk_event_controller_set_propagation_phase (scroll, GTK_PHASE_CAPTURE);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_panel_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self->panel_scroller), scroll);
  scroll = gtk_event_controller_motion_new ();
  g_signal_connect (scroll, "motion", G_CALLBACK (on_panel_motion), self);
  g_signal_connect (scroll, "enter", G_CALLBACK (on_panel_motion), self);
  gtk_widget_add_controller (GTK_WIDGET (self->panel_scroller), scroll);

  drop = gtk_drop_target_new (G_TYPE_FILE, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  _tomo_window_add_view_shortcuts (self);
  _tomo_window_update_actions (self);
  g_signal_connect_object (gtk_recent_manager_get_default (), "changed",
                           G_CALLBACK (_tomo_window_update_recent), self, G_CONNECT_SWAPPED);
  _tomo_window_update_recent (self);
  update_status (self, NULL);
}

TomoWindow *
tomo_window_new (GtkApplication *application)
{
  return g_object_new (TOMO_TYPE_WINDOW, "application", application, NULL);
}
