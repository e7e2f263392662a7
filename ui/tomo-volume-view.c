/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-backend.h"
#include "tomo-live-link.h"
#include "tomo-scan-private.h"
#include "tomo-ui-private.h"
#include "tomo-volume-3d.h"
#include "tomo-volume-view.h"
#include "tomo-volume.h"
#include "tomo-window-private.h"

#define N_PANES 4
/* Small enough that the three views and their controls fit beside the
 * panel in an 800 px window. */
#define PANE_MIN_WIDTH 120
#define PANE_MIN_HEIGHT 90
#define MAX_EXAGGERATION 16
#define LIVE_POLL_MS 100
#define LIVE_MIN_INTERVAL_US (500 * 1000)

struct _TomoVolumeView
{
  GtkWidget parent_instance;

  TomoWindow *window;       /* weak: the window owns us, and a running update may outlive it */
  GtkWidget *grid;
  TomoSliceView *panes[N_PANES];
  GtkLabel *titles[N_PANES];
  GtkWidget *hairs[N_PANES];  /* cross-hair overlays */
  GtkSpinButton *azimuth_spin, *tilt_spin;
  double azimuth, tilt;       /* of the oblique plane, degrees */
  GtkLabel *status_label;
  double hover[N_PANES][2];

  TomoScan *scan;           /* the scan the store was made from */
  TomoVolume *volume;       /* owned by the running task while one runs */
  char *filter, *interp;
  double center;
  double ix, iy, z;
  gboolean busy, dirty, rebuild;
  char *status;
  guint n_updates;
  gint fill_done, fill_total;   /* written by the worker, read by progress_tick */
  guint progress_id;

  /* Vertical planes of a scan with few rows are sampled exaggeration times
   * finer between rows (linear between rows), so that they fill a pane;
   * 0 = chosen from the scan's shape, 1 = true aspect. */
  guint exaggeration;
  guint vex;                /* the factor in use: pane row = z · vex */
  guint shown_vex;          /* the 3D box's */
  GtkDropDown *exaggeration_drop;
  /* What each pane shows, so an update computes only the planes that moved. */
  TomoPlane shown[N_PANES];
  gboolean shown_valid[N_PANES];
  double shown_center;
  TomoInterp shown_interp;
  gboolean drag_ctrl;
  /* The 3D pane: a binned preview volume, remade when the store or the
   * centre or interpolation change. */
  TomoVolume3d *view3d;
  GtkLabel *title3d;
  gboolean preview_valid;
  double preview_center;
  TomoInterp preview_interp;
  double preview_ms;
  const char *preview_path; /* how the last preview reached the texture */
  /* The preview could not stay on the device (keep_on_device failed) and
   * came through host memory: why, and how many times in a row (after
   * PREVIEW_KEEP_TRIES the view stops asking until the store is made
   * again: a new scan or filter). */
  char *preview_note;
  guint preview_keep_failures;
  float preview_min, preview_max;
  guint preview_size;       /* binned pixels a side (fewer for a narrow scan) */
  guint preview_shown_size;
  GtkDropDown *render_drop, *size_drop;
  gint64 preview_time;      /* monotonic µs when the preview was made */

  /* Following a live scan: the store is filled again from what has
   * arrived, one update at a time, and no sooner than the last update took
   * after it ended (at least LIVE_MIN_INTERVAL_US): the views never take
   * more than half the machine from the receiver. */
  guint live_id;
  gboolean live;            /* the scan is the window's live scan */
  gboolean refill;          /* fill the store again in the next update */
  guint64 live_generation;  /* of the live scan when the store was last filled */
  guint64 preview_generation;
  gint64 live_next;         /* monotonic µs: no refill before */
  double live_interval_s;
  guint live_n_present, live_n_expected;
  guint n_refills;
  gboolean refilling;
};

#define PREVIEW_KEEP_TRIES 2

G_DEFINE_FINAL_TYPE (TomoVolumeView, tomo_volume_view, GTK_TYPE_WIDGET)

static const char *const pane_names[N_PANES] = { "XY", "XZ", "YZ", "Oblique" };

/* What one update computes, and what it gives back. */
typedef struct
{
  TomoVolumeView *view;     /* kept alive by the task */
  TomoScan *scan;
  TomoVolume *volume;       /* NULL: make it (fill the store) first */
  TomoReconParams params;
  TomoPlane planes[N_PANES];
  gboolean need[N_PANES];   /* FALSE: the pane already shows this plane */
  float *data[N_PANES];
  guint vex;
  gboolean need_preview;
  float *preview;           /* pnz × pny × pnx */
  guint16 *preview_half;    /* the same as half floats, for the texture */
  gboolean preview_interop; /* the 3D pane takes a volume on the device */
  gpointer preview_device;  /* or the volume left there (preview_ops) */
  const TomoDeviceBufferOps *preview_ops;
  TomoPreviewRequest request; /* the preview's time and range (its data above) */
  guint pnx, pny, pnz;
  char *preview_device_error; /* the device preview failed: made through host memory */
  char *preview_error;      /* no preview at all (the planes are still shown) */
  char *status;
  gboolean refill;          /* fill the store (made earlier) again: a live scan */
  gboolean filled;          /* the store was (re)filled */
  gboolean live;
  guint64 generation;       /* the live scan's before anything was read */
  guint n_present, n_expected;
  gint64 t_start;
} Update;

/* Decimals for a time in ms: a GPU preview of the sample takes a tenth of
 * one, which "%.0f" would show as 0 ms. */
static int
ms_digits (double ms)
{
  return ms < 1.0 ? 2 : ms < 10.0 ? 1 : 0;
}

/* Freeing a store (up to GiB of device or host memory) is done on a
 * worker, not the UI thread; a new store waits until every store given
 * back is freed (update_thread), so that the two never hold memory at once
 * and a new GPU store finds the memory the old one had. */
static GMutex release_lock;
static GCond release_cond;
static guint n_releasing;
static guint n_released;

static void
release_thread (GTask        *task,
                gpointer      source,
                gpointer      task_data,
                GCancellable *cancellable)
{
  tomo_volume_free (task_data);
  g_mutex_lock (&release_lock);
  n_released++;
  if (--n_releasing == 0)
    g_cond_broadcast (&release_cond);
  g_mutex_unlock (&release_lock);
  g_task_return_boolean (task, TRUE);
}

static void
release_volume (TomoVolume *volume)
{
  g_autoptr (GTask) task = NULL;

  if (volume == NULL)
    return;
  g_mutex_lock (&release_lock);
  n_releasing++;
  g_mutex_unlock (&release_lock);
  task = g_task_new (NULL, NULL, NULL, NULL);
  g_task_set_task_data (task, volume, NULL);
  g_task_run_in_thread (task, release_thread);
}

static void
wait_released (void)
{
  g_mutex_lock (&release_lock);
  while (n_releasing > 0)
    g_cond_wait (&release_cond, &release_lock);
  g_mutex_unlock (&release_lock);
}

static void
update_free (Update *u)
{
  g_clear_object (&u->scan);
  release_volume (g_steal_pointer (&u->volume));
  for (guint k = 0; k < N_PANES; k++)
    g_free (u->data[k]);
  g_free (u->preview);
  g_free (u->preview_half);
  if (u->preview_device != NULL)
    u->preview_ops->free (u->preview_device);
  g_free (u->preview_device_error);
  g_free (u->preview_error);
  g_free (u->status);
  g_free (u);
}

static void
fill_progress (guint    done,
               guint    total,
               gpointer data)
{
  TomoVolumeView *self = data;

  g_atomic_int_set (&self->fill_total, (gint) total);
  g_atomic_int_set (&self->fill_done, (gint) done);
}

static void
update_thread (GTask        *task,
               gpointer      source,
               gpointer      task_data,
               GCancellable *cancellable)
{
  Update *u = task_data;
  GError *error = NULL;

  if (u->refill && !tomo_volume_fill (u->volume, fill_progress, u->view, NULL, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  u->filled = u->refill || u->volume == NULL;
  if (u->volume == NULL)
    {
      wait_released ();
      u->volume = tomo_volume_new (u->scan, 0, tomo_scan_get_height (u->scan), &u->params,
                                   TOMO_BACKEND_AUTO, 0, &error);
      if (u->volume == NULL ||
          !tomo_volume_fill (u->volume, fill_progress, u->view, NULL, &error))
        {
          g_task_return_error (task, error);
          return;
        }
    }
  for (guint k = 0; k < N_PANES; k++)
    {
      if (!u->need[k])
        continue;
      u->data[k] = g_new (float, (gsize) u->planes[k].width * u->planes[k].height);
      if (!tomo_volume_plane (u->volume, &u->planes[k], u->params.center, u->params.interp,
                              u->data[k], &error))
        {
          g_task_return_error (task, error);
          return;
        }
    }
  if (u->need_preview)
    {
      TomoPreviewRequest request = { u->pnx, u->pny, u->pnz, u->params.center, u->params.interp };
      g_autoptr (GError) device_error = NULL;

      /* On the GPU, with the pane's GL on the same kind of device, the
       * volume stays there for CUDA–GL interop: no download, no upload.
       * Should that fail, the preview comes through host memory; should
       * that fail too, the planes are shown all the same. */
      request.keep_on_device = u->preview_interop
                               && tomo_volume_get_backend (u->volume) == TOMO_BACKEND_GPU;
      if (!tomo_volume_preview_or_host (u->volume, &request, &device_error, &error))
        {
          u->preview_error = g_strdup (error->message);
          g_clear_error (&error);
          g_free (request.out);
          u->need_preview = FALSE;
        }
      else
        {
          if (device_error != NULL)
            u->preview_device_error = g_strdup (device_error->message);
          u->request = request;
          u->preview = g_steal_pointer (&u->request.out);
          u->preview_device = g_steal_pointer (&u->request.device_buffer);
          u->preview_ops = u->request.device_ops;
          /* The texture's half floats made here, not on the UI thread. */
          if (u->preview_device == NULL)
            u->preview_half = tomo_volume_3d_pack_half (u->preview,
                                                        (gsize) u->pnx * u->pny * u->pnz);
          g_clear_pointer (&u->preview, g_free);
        }
    }
  {
    g_autofree char *desc = tomo_volume_describe (u->volume);

    g_autofree char *preview = u->need_preview
      ? g_strdup_printf (" · 3D preview %.*f ms", ms_digits (u->request.ms), u->request.ms)
      : g_strdup ("");

    u->status = g_strdup_printf ("%s · last plane %.1f ms%s · vertical planes %s%u× · drag to "
                                 "move the planes, Alt+drag to pan, wheel to zoom", desc,
                                 tomo_volume_get_plane_ms (u->volume), preview,
                                 u->vex == 1 ? "true aspect, " : "exaggerated ", u->vex);
  }
  g_task_return_boolean (task, TRUE);
}

static TomoSlice *
make_slice (float           *data,
            const TomoPlane *plane)
{
  TomoSlice *slice = g_new0 (TomoSlice, 1);

  slice->ref_count = 1;
  slice->n_slices = 1;
  slice->width = plane->width;
  slice->height = plane->height;
  slice->roi = (TomoRoi) { 0, 0, plane->width, plane->height };
  slice->data = data;
  slice->backend = TOMO_BACKEND_CPU;
  slice->kernel = g_strdup ("plane");
  tomo_slice_stats_compute (data, (gsize) plane->width * plane->height, &slice->values);
  return slice;
}

static void start_update (TomoVolumeView *self);

/* The other two planes through the point, drawn over a pane: in XY the
 * YZ plane (x = ix, cyan) and the XZ plane (y = iy, yellow); in XZ the YZ
 * plane and the XY plane (z, magenta); in YZ the XZ plane and the XY plane. */
static void
draw_hairs (GtkDrawingArea *area,
            cairo_t        *cr,
            int             width,
            int             height,
            gpointer        data)
{
  TomoVolumeView *self = g_object_get_data (G_OBJECT (area), "volume-view");
  guint k = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (area), "pane"));
  static const double colours[3][3] = { { 1.0, 0.0, 1.0 }, { 1.0, 0.85, 0.0 }, { 0.0, 0.9, 1.0 } };
  double vx, hy, x, y, x0, y0, x1, y1;
  int vcol, hcol;
  TomoSlice *slice;

  if (self == NULL || k == TOMO_VOLUME_VIEW_OBLIQUE ||
      (slice = tomo_slice_view_get_slice (self->panes[k])) == NULL)
    return;
  /* Pixel centres: the line through pixel i sits at image coordinate i + 0.5. */
  switch (k)
    {
    case TOMO_VOLUME_VIEW_XY:
      vx = round (self->ix); hy = round (self->iy); vcol = 2; hcol = 1;
      break;
    case TOMO_VOLUME_VIEW_XZ:
      vx = round (self->ix); hy = round (self->z) * self->vex; vcol = 2; hcol = 0;
      break;
    default:
      vx = round (self->iy); hy = round (self->z) * self->vex; vcol = 1; hcol = 0;
      break;
    }
  tomo_slice_view_image_to_widget (self->panes[k], 0, 0, &x0, &y0);
  tomo_slice_view_image_to_widget (self->panes[k], slice->width, slice->height, &x1, &y1);
  tomo_slice_view_image_to_widget (self->panes[k], vx + 0.5, hy + 0.5, &x, &y);
  cairo_set_line_width (cr, 1.0);
  cairo_set_source_rgba (cr, colours[vcol][0], colours[vcol][1], colours[vcol][2], 0.8);
  cairo_move_to (cr, round (x) + 0.5, MAX (y0, 0));
  cairo_line_to (cr, round (x) + 0.5, MIN (y1, height));
  cairo_stroke (cr);
  cairo_set_source_rgba (cr, colours[hcol][0], colours[hcol][1], colours[hcol][2], 0.8);
  cairo_move_to (cr, MAX (x0, 0), round (y) + 0.5);
  cairo_line_to (cr, MIN (x1, width), round (y) + 0.5);
  cairo_stroke (cr);

  /* The oblique plane's trace in XY (white, dashed), with a handle at its
   * end: Ctrl+click in XY turns the plane towards the pointer. */
  if (k == TOMO_VOLUME_VIEW_XY)
    {
      double a = self->azimuth * G_PI / 180.0, r = slice->width * 0.45;
      double ax, ay, bx, by;
      const double dash[] = { 6.0, 4.0 };

      tomo_slice_view_image_to_widget (self->panes[k], vx + 0.5 - r * cos (a),
                                       hy + 0.5 - r * sin (a), &ax, &ay);
      tomo_slice_view_image_to_widget (self->panes[k], vx + 0.5 + r * cos (a),
                                       hy + 0.5 + r * sin (a), &bx, &by);
      cairo_set_source_rgba (cr, 1.0, 1.0, 1.0, 0.8);
      cairo_set_dash (cr, dash, 2, 0.0);
      cairo_move_to (cr, ax, ay);
      cairo_line_to (cr, bx, by);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0.0);
      cairo_arc (cr, bx, by, 5.0, 0, 2 * G_PI);
      cairo_fill (cr);
    }
}

static void
queue_hairs (TomoVolumeView *self)
{
  for (guint k = 0; k < N_PANES; k++)
    gtk_widget_queue_draw (self->hairs[k]);
}

static void
set_status (TomoVolumeView *self,
            const char     *text)
{
  g_free (self->status);
  self->status = g_strdup (text);
  gtk_label_set_text (self->status_label, text);
}

static void
update_titles (TomoVolumeView *self)
{
  g_autofree char *xy = g_strdup_printf ("XY · row %.0f", self->z);
  g_autofree char *ex = self->vex > 1 ? g_strdup_printf (" · vertical ×%u", self->vex)
                                        : g_strdup ("");
  g_autofree char *xz = g_strdup_printf ("XZ · y = %.0f%s", self->iy, ex);
  g_autofree char *yz = g_strdup_printf ("YZ · x = %.0f%s", self->ix, ex);

  g_autofree char *ob = g_strdup_printf ("Oblique · %.0f°, tilt %.0f°%s", self->azimuth,
                                         self->tilt, ex);
  const char *titles[N_PANES] = { xy, xz, yz, ob };

  /* The tooltip: all of a title that a narrow pane shortens. */
  for (guint k = 0; k < N_PANES; k++)
    {
      gtk_label_set_text (self->titles[k], titles[k]);
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->titles[k]), titles[k]);
    }
  if (self->scan != NULL)
    {
      /* The planes inside the 3D box: through the pixels' centres. */
      double W = tomo_scan_get_width (self->scan), H = tomo_scan_get_height (self->scan);

      tomo_volume_3d_set_planes (self->view3d, (round (self->ix) + 0.5) / W,
                                 (round (self->iy) + 0.5) / W, (round (self->z) + 0.5) / H);
    }
}

/* "3D · GL upload · 40 ms · 128 × 128 × 64 · maximum intensity · values
 * −0.0015 … 0.0087 · drag to turn", also as its tooltip: the pane is
 * narrow and its title ellipsizes at the end, so the path the volume took
 * and how long it took come first, where they stay readable.  Not in the
 * status line, which wraps: a line more there would move the panes.  A
 * preview that could not stay on the device says so after its path ("GL
 * upload, device preview failed"), the tooltip why. */
static void
update_title3d (TomoVolumeView *self,
                guint           nx,
                guint           ny,
                guint           nz)
{
  g_autofree char *title = NULL;
  g_autofree char *tooltip = NULL;

  title = g_strdup_printf ("3D · %s%s · %.*f ms · %u × %u × %u · %s · values %.3g … %.3g · drag "
                           "to turn",
                           self->preview_path != NULL ? self->preview_path : "GL upload",
                           self->preview_note != NULL ? ", device preview failed" : "",
                           ms_digits (self->preview_ms), self->preview_ms, nx, ny, nz,
                           tomo_volume_3d_get_mode (self->view3d) == TOMO_VOLUME_3D_MIP
                           ? "maximum intensity" : "composite",
                           self->preview_min, self->preview_max);
  if (self->preview_note != NULL)
    tooltip = g_strdup_printf ("%s\nThe preview could not stay on the device (%s); it came "
                               "through host memory%s.", title, self->preview_note,
                               self->preview_keep_failures >= PREVIEW_KEEP_TRIES
                               ? ", as the next ones will until the scan or the filter changes" : "");
  gtk_label_set_text (self->title3d, title);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->title3d), tooltip != NULL ? tooltip : title);
}

/* The shown preview's title again (a new mode, or the path it took). */
static void
refresh_title3d (TomoVolumeView *self)
{
  if (self->preview_valid && self->scan != NULL)
    update_title3d (self, MIN (tomo_scan_get_width (self->scan), self->preview_size),
                    MIN (tomo_scan_get_width (self->scan), self->preview_size),
                    MIN (tomo_scan_get_height (self->scan), self->preview_size));
}

/* The pane drew a volume by another path than the one asked for (interop
 * failed and it downloaded, or the reverse): the title says what happened. */
static void
on_upload_path_changed (TomoVolumeView *self)
{
  const char *path = tomo_volume_3d_get_upload_path (self->view3d);

  if (path == NULL || g_strcmp0 (path, self->preview_path) == 0)
    return;
  self->preview_path = path;
  refresh_title3d (self);
}

static void on_look_notify (TomoWindow *window, GParamSpec *pspec, TomoVolumeView *self);

static void
update_done (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  TomoVolumeView *self = TOMO_VOLUME_VIEW (source);
  GTask *task = G_TASK (result);
  Update *u = g_task_get_task_data (task);
  g_autoptr (GError) error = NULL;

  self->busy = FALSE;
  g_clear_handle_id (&self->progress_id, g_source_remove);
  if (self->grid == NULL)
    {
      /* Disposed while the update ran (its window closed): the panes and
       * labels are gone; only the store is left to give back. */
      release_volume (g_steal_pointer (&u->volume));
      return;
    }
  if (!g_task_propagate_boolean (task, &error))
    {
      g_autofree char *msg = g_strdup_printf ("Three views unavailable: %s", error->message);

      set_status (self, msg);
      release_volume (g_steal_pointer (&u->volume));
      memset (self->shown_valid, 0, sizeof self->shown_valid);
      self->preview_valid = FALSE;
    }
  else
    {
      guint W = tomo_scan_get_width (u->scan);

      for (guint k = 0; k < N_PANES; k++)
        {
          g_autoptr (TomoSlice) slice = NULL;

          if (!u->need[k])
            continue;
          slice = make_slice (g_steal_pointer (&u->data[k]), &u->planes[k]);
          tomo_slice_view_set_slice (self->panes[k], slice, W);
          /* A new plane height (the vertical scale) fits the pane anew. */
          if (self->shown_valid[k] && self->shown[k].height != u->planes[k].height)
            tomo_slice_view_zoom_fit (self->panes[k]);
          self->shown[k] = u->planes[k];
          self->shown_valid[k] = TRUE;
        }
      self->shown_center = u->params.center;
      self->shown_interp = u->params.interp;
      if (u->need_preview)
        {
          double sz = (double) tomo_scan_get_height (u->scan) * u->vex;

          tomo_volume_3d_take (self->view3d, g_steal_pointer (&u->preview_half),
                               g_steal_pointer (&u->preview_device), u->preview_ops, u->pnx,
                               u->pny, u->pnz, W, W, sz);
          /* What the pane will try; it says so again once drawn. */
          self->preview_path = u->preview_ops != NULL ? "CUDA–GL interop" : "GL upload";
          self->preview_min = u->request.min;
          self->preview_max = u->request.max;
          self->preview_shown_size = MAX (u->pnx, u->pnz);
          self->preview_valid = TRUE;
          self->preview_center = u->params.center;
          self->preview_interp = u->params.interp;
          self->preview_ms = u->request.ms;
          self->preview_time = g_get_monotonic_time ();
          self->preview_generation = u->generation;
          if (u->preview_device_error != NULL)
            {
              /* Said once per run of failures (and in the title). */
              if (self->preview_keep_failures++ == 0)
                g_message ("3D preview: the volume could not stay on the device (%s); it comes "
                           "through host memory", u->preview_device_error);
              g_free (self->preview_note);
              self->preview_note = g_steal_pointer (&u->preview_device_error);
            }
          else if (u->preview_ops != NULL)
            {
              self->preview_keep_failures = 0;
              g_clear_pointer (&self->preview_note, g_free);
            }
          update_title3d (self, u->pnx, u->pny, u->pnz);
        }
      else if (u->preview_error != NULL)
        {
          /* The planes are shown; the pane keeps what it had and says why. */
          g_autofree char *title = g_strdup_printf ("3D · preview unavailable: %s",
                                                    u->preview_error);

          /* Said once while the same failure repeats (live refills retry). */
          if (g_strcmp0 (gtk_label_get_text (self->title3d), title) != 0)
            g_message ("3D preview: %s", u->preview_error);
          self->preview_valid = FALSE;
          gtk_label_set_text (self->title3d, title);
          gtk_widget_set_tooltip_text (GTK_WIDGET (self->title3d), title);
        }
      if (u->live && u->filled)
        {
          /* The next refill waits as long as this update took. */
          gint64 took = g_get_monotonic_time () - u->t_start;

          if (u->refill)
            self->n_refills++;
          self->live_generation = u->generation;
          self->live_n_present = u->n_present;
          self->live_n_expected = u->n_expected;
          self->live_interval_s = MAX (took, LIVE_MIN_INTERVAL_US) / 1e6;
          self->live_next = g_get_monotonic_time () + MAX (took, LIVE_MIN_INTERVAL_US);
        }
      if (self->live)
        {
          g_autofree char *live = g_strdup_printf ("Live: the views hold %u of %u projections "
                                                   "(store refilled %u× as they arrive, at most "
                                                   "every %.1f s) · %s", self->live_n_present,
                                                   self->live_n_expected, self->n_refills,
                                                   self->live_interval_s, u->status);

          set_status (self, live);
        }
      else
        set_status (self, u->status);
      self->n_updates++;
      on_look_notify (self->window, NULL, self);
    }
  /* The store stays for the next update, unless it was made for a scan or
   * filter that changed meanwhile. */
  if (!self->rebuild && u->scan == self->scan)
    self->volume = g_steal_pointer (&u->volume);
  else
    release_volume (g_steal_pointer (&u->volume));
  self->rebuild = FALSE;
  if (self->dirty)
    start_update (self);
}

static gboolean
progress_tick (gpointer data)
{
  TomoVolumeView *self = data;
  gint done = g_atomic_int_get (&self->fill_done), total = g_atomic_int_get (&self->fill_total);
  g_autofree char *text = NULL;

  if (total > 0)
    {
      text = g_strdup_printf ("%s the volume store: %d of %d rows read and filtered",
                              self->refilling ? "Live: refilling"
                              : "Filling", done, total);
      set_status (self, text);
    }
  return G_SOURCE_CONTINUE;
}

/* While the window shows a live scan: a refill when frames have arrived
 * since the last one and its interval is over; the last preview when the
 * refills left it behind. */
static gboolean
live_poll (gpointer data)
{
  TomoVolumeView *self = data;
  g_autoptr (TomoLiveScan) live = NULL;
  guint64 generation;

  if (self->window == NULL || self->scan == NULL || self->busy || self->volume == NULL
      || !gtk_widget_get_mapped (GTK_WIDGET (self))
      || g_get_monotonic_time () < self->live_next)
    return G_SOURCE_CONTINUE;
  live = tomo_live_link_dup_live_scan (self->window, self->scan);
  if (live == NULL)
    return G_SOURCE_CONTINUE;
  generation = tomo_live_scan_get_generation (live);
  if (generation != self->live_generation)
    {
      self->refill = TRUE;
      start_update (self);
    }
  else if (self->preview_generation != self->live_generation)
    {
      self->preview_valid = FALSE;
      start_update (self);
    }
  return G_SOURCE_CONTINUE;
}

static void
start_update (TomoVolumeView *self)
{
  g_autoptr (GTask) task = NULL;
  Update *u;
  guint W, H;

  if (self->scan == NULL || !gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->dirty = self->scan != NULL;
      return;
    }
  if (self->busy)
    {
      self->dirty = TRUE;   /* latest wins: one more update when this one ends */
      return;
    }
  self->dirty = FALSE;
  self->busy = TRUE;

  W = tomo_scan_get_width (self->scan);
  H = tomo_scan_get_height (self->scan);
  u = g_new0 (Update, 1);
  u->view = self;
  u->scan = g_object_ref (self->scan);
  u->volume = g_steal_pointer (&self->volume);
  u->t_start = g_get_monotonic_time ();
  {
    /* A live scan: what has arrived is read afresh (the scan's cached rows
     * dropped), its generation taken before, so that frames arriving
     * meanwhile make another refill. */
    g_autoptr (TomoLiveScan) live = self->window != NULL
      ? tomo_live_link_dup_live_scan (self->window, self->scan) : NULL;

    self->live = live != NULL;
    u->live = live != NULL;
    u->generation = self->live_generation;
    u->refill = self->refill && u->volume != NULL;
    self->refill = FALSE;
    self->refilling = u->refill;
    if (live != NULL && (u->refill || u->volume == NULL))
      {
        TomoLiveScanInfo info;

        u->generation = tomo_live_scan_get_generation (live);
        tomo_live_scan_get_info (live, &info);
        u->n_present = info.n_present[TOMO_FRAME_PROJECTION];
        u->n_expected = tomo_live_scan_get_n_projections (live);
        tomo_live_scan_refresh (live, u->scan);
      }
  }
  tomo_recon_params_init (&u->params, W);
  u->params.center = self->center;
  if (self->filter != NULL)
    tomo_filter_type_from_string (self->filter, &u->params.filter, NULL);
  if (self->interp != NULL)
    tomo_interp_from_string (self->interp, &u->params.interp, NULL);

  self->ix = CLAMP (self->ix, 0, W - 1);
  self->iy = CLAMP (self->iy, 0, W - 1);
  self->z = CLAMP (self->z, 0, H - 1);
  /* Automatic: about 1.6 : 1 for the vertical planes, as the panes are. */
  self->vex = self->exaggeration != 0 ? self->exaggeration
    : (guint) CLAMP (round (W / (1.6 * H)), 1, MAX_EXAGGERATION);
  u->vex = self->vex;
  tomo_plane_init_xz (&u->planes[0], 0, 0, W, 0, W);
  u->planes[0].v[1] = 1.0;    /* XY at row z */
  u->planes[0].v[2] = 0.0;
  u->planes[0].centre[1] = (W - 1) / 2.0;
  u->planes[0].centre[2] = round (self->z);
  tomo_plane_init_xz (&u->planes[1], round (self->iy), 0, W, 0, H);
  tomo_plane_init_yz (&u->planes[2], round (self->ix), 0, W, 0, H);
  for (guint k = 1; k < N_PANES; k++)
    {
      /* vex samples per row, the same middle: pane row r is at z = r / vex. */
      u->planes[k].height = (H - 1) * self->vex + 1;
      for (guint d = 0; d < 3; d++)
        u->planes[k].v[d] /= self->vex;
    }
  {
    /* Through the point, turned and tilted; slid within itself so that it
     * is centred on the slice's axis and the rows' middle (at 0° it is
     * then the XZ plane, at 90° the YZ plane). */
    double point[3] = { round (self->ix), round (self->iy), round (self->z) };
    double c = (W - 1) / 2.0, su, sv;
    TomoPlane *ob = &u->planes[3];

    tomo_plane_init_oblique (ob, point, self->azimuth, self->tilt, W,
                             (H - 1) * self->vex + 1, 1.0);
    for (guint d = 0; d < 3; d++)
      ob->v[d] /= self->vex;
    su = (c - point[0]) * ob->u[0] + (c - point[1]) * ob->u[1];
    sv = ob->v[2] != 0.0 ? ((H - 1) / 2.0 - point[2]) / ob->v[2] : 0.0;
    for (guint d = 0; d < 3; d++)
      ob->centre[d] = point[d] + su * ob->u[d] + sv * ob->v[d];
  }
  for (guint k = 0; k < N_PANES; k++)
    u->need[k] = u->volume == NULL || u->refill || !self->shown_valid[k]
      || memcmp (&self->shown[k], &u->planes[k], sizeof u->planes[k]) != 0
      || self->shown_center != u->params.center || self->shown_interp != u->params.interp;
  /* The preview: preview_size binned pixels a side (fewer for a narrow
   * scan) at up to as many levels over the rows; its box is drawn with the
   * vertical scale. */
  u->pnx = u->pny = MIN (W, self->preview_size);
  u->pnz = MIN (H, self->preview_size);
  u->need_preview = u->volume == NULL || !self->preview_valid
    || self->preview_center != u->params.center || self->preview_interp != u->params.interp
    || self->vex != self->shown_vex || MAX (u->pnx, u->pnz) != self->preview_shown_size
    /* Live: the preview (the slowest part on the CPU) at most a third of
     * the time; live_poll asks for the last one. */
    || (u->refill && g_get_monotonic_time () - self->preview_time >= 2000 * self->preview_ms);
  u->preview_interop = tomo_volume_3d_get_interop (self->view3d)
                       && self->preview_keep_failures < PREVIEW_KEEP_TRIES;
  self->shown_vex = self->vex;
  update_titles (self);
  queue_hairs (self);

  if (u->volume == NULL || u->refill)
    {
      g_atomic_int_set (&self->fill_done, 0);
      g_atomic_int_set (&self->fill_total, 0);
      if (!u->refill)
        set_status (self, "Filling the volume store…");
      self->progress_id = g_timeout_add (100, progress_tick, self);
    }
  task = g_task_new (self, NULL, update_done, NULL);
  g_task_set_task_data (task, u, (GDestroyNotify) update_free);
  g_task_run_in_thread (task, update_thread);
}

/* The store depends on the scan and the filter: drop it when they change. */
static void
invalidate_store (TomoVolumeView *self)
{
  release_volume (g_steal_pointer (&self->volume));
  /* A new store may keep its previews on the device again. */
  self->preview_keep_failures = 0;
  g_clear_pointer (&self->preview_note, g_free);
  if (self->busy)
    self->rebuild = TRUE;
}

static void
on_scan_loaded (TomoWindow     *window,
                gboolean        ok,
                TomoVolumeView *self)
{
  TomoScan *scan = tomo_window_get_scan (window);
  /* The same rows stitched anew about another centre: the planes stay on
   * the sample, which moves by half the change of width. */
  gboolean restitched = window->restitching && scan != NULL && self->scan != NULL;
  double d = restitched ? ((double) tomo_scan_get_width (scan) - tomo_scan_get_width (self->scan)) / 2.0
                        : 0.0;

  if (scan == self->scan)
    return;
  g_set_object (&self->scan, scan);
  invalidate_store (self);
  /* A live scan's refills count from its first fill. */
  self->n_refills = 0;
  self->live_generation = self->preview_generation = 0;
  self->live_next = 0;
  if (restitched)
    {
      self->ix = CLAMP (self->ix + d, 0.0, tomo_scan_get_width (scan) - 1.0);
      self->iy = CLAMP (self->iy + d, 0.0, tomo_scan_get_width (scan) - 1.0);
    }
  else if (scan != NULL)
    {
      self->ix = self->iy = (tomo_scan_get_width (scan) - 1) / 2.0;
      self->z = tomo_scan_get_height (scan) / 2;
    }
  start_update (self);
}

static void
on_params_notify (TomoWindow     *window,
                  GParamSpec     *pspec,
                  TomoVolumeView *self)
{
  g_autofree char *filter = NULL;
  g_autofree char *interp = NULL;
  double center;

  g_object_get (window, "center", &center, "filter", &filter, "interp", &interp, NULL);
  if (g_strcmp0 (filter, self->filter) != 0)
    invalidate_store (self);
  g_free (self->filter);
  self->filter = g_steal_pointer (&filter);
  g_free (self->interp);
  self->interp = g_steal_pointer (&interp);
  self->center = center;
  if (self->scan != tomo_window_get_scan (window))
    on_scan_loaded (window, TRUE, self);
  else
    start_update (self);
}

/* The window's row moved (the panel, the keys): the XY plane goes there. */
static void
on_row_notify (TomoWindow     *window,
               GParamSpec     *pspec,
               TomoVolumeView *self)
{
  guint row;

  g_object_get (window, "row", &row, NULL);
  if (self->scan == NULL || self->scan != tomo_window_get_scan (window)
      || (double) row == round (self->z))
    return;
  self->z = row;
  start_update (self);
}

static void
on_look_notify (TomoWindow     *window,
                GParamSpec     *pspec,
                TomoVolumeView *self)
{
  g_autofree char *colormap = NULL;
  double lo, hi;

  if (window == NULL)
    return;
  g_object_get (window, "colormap", &colormap, "window-min", &lo, "window-max", &hi, NULL);
  for (guint k = 0; k < N_PANES; k++)
    {
      tomo_slice_view_set_colormap (self->panes[k], colormap);
      tomo_slice_view_set_window (self->panes[k], lo, hi);
    }
  tomo_volume_3d_set_window (self->view3d, lo, hi);
  {
    TomoColormap map;

    if (tomo_colormap_from_string (colormap, &map))
      tomo_volume_3d_set_colormap (self->view3d, map);
  }
}

void
tomo_volume_view_click (TomoVolumeView *self,
                        guint           pane,
                        double          x,
                        double          y)
{
  g_return_if_fail (TOMO_IS_VOLUME_VIEW (self) && pane < N_PANES);

  if (self->scan == NULL || x < 0 || y < 0)
    return;
  switch (pane)
    {
    case TOMO_VOLUME_VIEW_OBLIQUE:
      break;   /* its samples are not on the axes of the point */
    case TOMO_VOLUME_VIEW_XY:
      tomo_volume_view_set_position (self, x, y, self->z);
      break;
    case TOMO_VOLUME_VIEW_XZ:
      tomo_volume_view_set_position (self, x, self->iy, y / self->vex);
      break;
    default:
      tomo_volume_view_set_position (self, self->ix, x, y / self->vex);
      break;
    }
}

static void
on_hover (TomoSliceView  *view,
          double          x,
          double          y,
          double          value,
          gboolean        inside,
          TomoVolumeView *self)
{
  for (guint k = 0; k < N_PANES; k++)
    if (self->panes[k] == view)
      {
        self->hover[k][0] = inside ? x : -1;
        self->hover[k][1] = inside ? y : -1;
      }
  /* The pointer also pans and zooms the pane: keep the lines on it. */
  queue_hairs (self);
}

static guint
pane_of (TomoVolumeView *self,
         GtkWidget      *widget)
{
  for (guint k = 0; k < N_PANES; k++)
    if (GTK_WIDGET (self->panes[k]) == widget)
      return k;
  return N_PANES;
}

/* A pointer at (wx, wy) in pane k: the cross-hair moves to the pixel under
 * it (Ctrl in XY: the oblique plane turns towards it). */
static void
drag_to (TomoVolumeView *self,
         guint           k,
         double          wx,
         double          wy)
{
  double x0, y0, x1, y1, ix, iy;
  TomoSlice *slice = tomo_slice_view_get_slice (self->panes[k]);

  if (slice == NULL)
    return;
  /* image_to_widget is x ↦ x0 + x·(x1 − x0): invert it. */
  tomo_slice_view_image_to_widget (self->panes[k], 0, 0, &x0, &y0);
  tomo_slice_view_image_to_widget (self->panes[k], 1, 1, &x1, &y1);
  if (x1 == x0 || y1 == y0)
    return;
  ix = CLAMP (floor ((wx - x0) / (x1 - x0)), 0, slice->width - 1);
  iy = CLAMP (floor ((wy - y0) / (y1 - y0)), 0, slice->height - 1);
  if (self->drag_ctrl && k == TOMO_VOLUME_VIEW_XY)
    {
      double dx = ix - round (self->ix), dy = iy - round (self->iy);

      if (dx != 0 || dy != 0)
        gtk_spin_button_set_value (self->azimuth_spin,
                                   fmod (atan2 (dy, dx) * 180.0 / G_PI + 360.0, 180.0));
      return;
    }
  tomo_volume_view_click (self, k, ix, iy);
}

/* Primary drag in a pane moves the cross-hair, and the other planes follow
 * as fast as they are made (one update at a time, the latest position
 * wins).  Alt+drag and Shift+drag are left to the pane (pan, box). */
static void
on_drag_begin (GtkGestureDrag *gesture,
               double          x,
               double          y,
               TomoVolumeView *self)
{
  GtkWidget *view = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));
  GdkModifierType state =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  guint k = pane_of (self, view);

  if (k == N_PANES || k == TOMO_VOLUME_VIEW_OBLIQUE
      || (state & (GDK_ALT_MASK | GDK_SHIFT_MASK)) != 0)
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  self->drag_ctrl = (state & GDK_CONTROL_MASK) != 0;
  drag_to (self, k, x, y);
}

static void
on_drag_update (GtkGestureDrag *gesture,
                double          dx,
                double          dy,
                TomoVolumeView *self)
{
  GtkWidget *view = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));
  double sx, sy;
  guint k = pane_of (self, view);

  if (k == N_PANES || !gtk_gesture_drag_get_start_point (gesture, &sx, &sy))
    return;
  drag_to (self, k, sx + dx, sy + dy);
}

static void
on_exaggeration_changed (GtkDropDown    *drop,
                         GParamSpec     *pspec,
                         TomoVolumeView *self)
{
  static const guint factors[] = { 0, 1, 2, 4, 8 };
  guint i = gtk_drop_down_get_selected (drop);

  tomo_volume_view_set_vertical_exaggeration (self, i < G_N_ELEMENTS (factors) ? factors[i] : 0);
}

static void
on_render_changed (GtkDropDown    *drop,
                   GParamSpec     *pspec,
                   TomoVolumeView *self)
{
  tomo_volume_view_set_render (self, gtk_drop_down_get_selected (drop) == 1
                                     ? TOMO_VOLUME_3D_COMPOSITE : TOMO_VOLUME_3D_MIP);
}

static void
on_size_changed (GtkDropDown    *drop,
                 GParamSpec     *pspec,
                 TomoVolumeView *self)
{
  static const guint sizes[] = { 64, 128, 256 };
  guint i = gtk_drop_down_get_selected (drop);

  tomo_volume_view_set_preview_size (self, i < G_N_ELEMENTS (sizes) ? sizes[i] : 128);
}

static void
on_angles_changed (TomoVolumeView *self)
{
  self->azimuth = gtk_spin_button_get_value (self->azimuth_spin);
  self->tilt = gtk_spin_button_get_value (self->tilt_spin);
  start_update (self);
}

static void
on_map (GtkWidget      *widget,
        TomoVolumeView *self)
{
  if (self->dirty || self->n_updates == 0)
    start_update (self);
}

static void
tomo_volume_view_dispose (GObject *object)
{
  TomoVolumeView *self = TOMO_VOLUME_VIEW (object);

  if (self->window != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->window, self);
      g_object_remove_weak_pointer (G_OBJECT (self->window), (gpointer *) &self->window);
    }
  self->window = NULL;
  g_clear_handle_id (&self->progress_id, g_source_remove);
  g_clear_handle_id (&self->live_id, g_source_remove);
  g_clear_pointer (&self->grid, gtk_widget_unparent);
  g_clear_object (&self->scan);
  /* The stores given back so far are freed before this returns (an update
   * still running gives its store back when it ends, in update_done). */
  wait_released ();
  g_clear_pointer (&self->volume, tomo_volume_free);
  G_OBJECT_CLASS (tomo_volume_view_parent_class)->dispose (object);
}

static void
tomo_volume_view_finalize (GObject *object)
{
  TomoVolumeView *self = TOMO_VOLUME_VIEW (object);

  g_free (self->filter);
  g_free (self->interp);
  g_free (self->status);
  g_free (self->preview_note);
  G_OBJECT_CLASS (tomo_volume_view_parent_class)->finalize (object);
}

static void
tomo_volume_view_class_init (TomoVolumeViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tomo_volume_view_dispose;
  object_class->finalize = tomo_volume_view_finalize;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "volumeview");
}

static void
tomo_volume_view_init (TomoVolumeView *self)
{
  GtkGrid *grid = GTK_GRID (gtk_grid_new ());

  self->grid = GTK_WIDGET (grid);
  gtk_grid_set_row_spacing (grid, 4);
  gtk_grid_set_column_spacing (grid, 4);
  gtk_grid_set_row_homogeneous (grid, FALSE);
  /* Not homogeneous: the oblique pane's angle controls set its column's
   * least width, the others may be narrower. */
  gtk_grid_set_column_homogeneous (grid, FALSE);
  gtk_widget_set_parent (self->grid, GTK_WIDGET (self));

  /* XY top left, XZ top right, YZ bottom left, the oblique plane bottom
   * right with its angles; the status below. */
  for (guint k = 0; k < N_PANES; k++)
    {
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
      GtkWidget *view = tomo_slice_view_new ();
      GtkGesture *drag;

      self->titles[k] = GTK_LABEL (gtk_label_new (pane_names[k]));
      gtk_widget_add_css_class (GTK_WIDGET (self->titles[k]), "caption");
      /* A narrow pane shortens its title (the tooltip has all of it). */
      gtk_label_set_ellipsize (self->titles[k], PANGO_ELLIPSIZE_END);
      gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->titles[k]));
      gtk_widget_set_hexpand (view, TRUE);
      gtk_widget_set_vexpand (view, TRUE);
      gtk_widget_set_size_request (view, PANE_MIN_WIDTH, PANE_MIN_HEIGHT);
      {
        GtkWidget *overlay = gtk_overlay_new ();
        GtkWidget *hairs = gtk_drawing_area_new ();

        gtk_overlay_set_child (GTK_OVERLAY (overlay), view);
        gtk_widget_set_can_target (hairs, FALSE);
        g_object_set_data (G_OBJECT (hairs), "volume-view", self);
        g_object_set_data (G_OBJECT (hairs), "pane", GUINT_TO_POINTER (k));
        gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (hairs), draw_hairs, NULL, NULL);
        gtk_overlay_add_overlay (GTK_OVERLAY (overlay), hairs);
        self->hairs[k] = hairs;
        gtk_widget_set_vexpand (overlay, TRUE);
        gtk_box_append (GTK_BOX (box), overlay);
        g_signal_connect_swapped (view, "notify::zoom", G_CALLBACK (queue_hairs), self);
      }
      self->panes[k] = TOMO_SLICE_VIEW (view);
      tomo_slice_view_set_tight (self->panes[k], TRUE);
      self->hover[k][0] = self->hover[k][1] = -1;
      g_signal_connect (view, "hover", G_CALLBACK (on_hover), self);
      drag = _tomo_ui_add_drag (view, G_CALLBACK (on_drag_begin), G_CALLBACK (on_drag_update),
                                NULL, self);
      gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
      /* Before the pane's own drag (pan) sees the press. */
      gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (drag), GTK_PHASE_CAPTURE);
      gtk_grid_attach (grid, box, k % 2, k / 2, 1, 1);
      if (k == TOMO_VOLUME_VIEW_OBLIQUE)
        {
          self->azimuth_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (0, 180, 1));
          self->tilt_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (-80, 80, 1));
          gtk_spin_button_set_value (self->azimuth_spin, 30);
          gtk_spin_button_set_value (self->tilt_spin, 0);   /* not the range's −80 */
          self->azimuth = 30;
          /* Three digits and a sign: narrower than a spin button's default. */
          gtk_editable_set_width_chars (GTK_EDITABLE (self->azimuth_spin), 3);
          gtk_editable_set_width_chars (GTK_EDITABLE (self->tilt_spin), 3);
          g_signal_connect_swapped (self->azimuth_spin, "value-changed",
                                    G_CALLBACK (on_angles_changed), self);
          g_signal_connect_swapped (self->tilt_spin, "value-changed",
                                    G_CALLBACK (on_angles_changed), self);
          gtk_box_append (GTK_BOX (box),
                          _tomo_ui_control_flow (_tomo_ui_labelled ("Azimuth °", GTK_WIDGET (self->azimuth_spin)),
                                                 _tomo_ui_labelled ("Tilt °", GTK_WIDGET (self->tilt_spin)),
                                                 NULL));
        }
    }
  {
    GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);

    self->title3d = GTK_LABEL (gtk_label_new ("3D"));
    gtk_widget_add_css_class (GTK_WIDGET (self->title3d), "caption");
    gtk_label_set_ellipsize (self->title3d, PANGO_ELLIPSIZE_END);
    /* Its natural width, as of the title without path and values: a longer
     * title does not widen the pane. */
    gtk_label_set_max_width_chars (self->title3d, 60);
    self->view3d = TOMO_VOLUME_3D (tomo_volume_3d_new ());
    g_signal_connect_object (self->view3d, "upload-path-changed",
                             G_CALLBACK (on_upload_path_changed), self, G_CONNECT_SWAPPED);
    gtk_widget_set_hexpand (GTK_WIDGET (self->view3d), TRUE);
    gtk_widget_set_vexpand (GTK_WIDGET (self->view3d), TRUE);
    gtk_widget_set_size_request (GTK_WIDGET (self->view3d), PANE_MIN_WIDTH, PANE_MIN_HEIGHT);
    gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->title3d));
    gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->view3d));
    {
      static const char *const renders[] = { "MIP", "Composite", NULL };
      static const char *const sizes[] = { "64³", "128³", "256³", NULL };
      self->render_drop = GTK_DROP_DOWN (_tomo_ui_drop_down_new (renders));
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->render_drop),
                                   "Maximum intensity projection (MIP) along each ray, or "
                                   "the rays composited front to back: transparent at the "
                                   "window's minimum, opaque in the colour map's top colour "
                                   "at its maximum");
      self->size_drop = GTK_DROP_DOWN (_tomo_ui_drop_down_new (sizes));
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->size_drop),
                                   "Preview volume: binned pixels a side and levels over the "
                                   "rows (at most the scan's own)");
      self->preview_size = 128;
      gtk_drop_down_set_selected (self->size_drop, 1);
      g_signal_connect (self->render_drop, "notify::selected", G_CALLBACK (on_render_changed),
                        self);
      g_signal_connect (self->size_drop, "notify::selected", G_CALLBACK (on_size_changed), self);
      gtk_box_append (GTK_BOX (box),
                      _tomo_ui_control_flow (_tomo_ui_labelled ("Render", GTK_WIDGET (self->render_drop)),
                                             _tomo_ui_labelled ("Size", GTK_WIDGET (self->size_drop)),
                                             NULL));
    }
    gtk_grid_attach (grid, box, 2, 0, 1, 2);
  }
  self->status_label = GTK_LABEL (gtk_label_new ("Open a scan to see its three views"));
  gtk_label_set_wrap (self->status_label, TRUE);
  gtk_label_set_xalign (self->status_label, 0.0f);
  gtk_widget_set_hexpand (GTK_WIDGET (self->status_label), TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "dim-label");
  {
    static const char *const scales[] = { "Auto", "1× (true aspect)", "2×", "4×", "8×", NULL };
    GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);

    self->vex = 1;
    self->exaggeration_drop = GTK_DROP_DOWN (_tomo_ui_drop_down_new (scales));
    gtk_widget_set_tooltip_text (GTK_WIDGET (self->exaggeration_drop),
                                 "Vertical exaggeration of the XZ, YZ and oblique planes: rows "
                                 "are interpolated linearly so that a scan with few rows fills "
                                 "its pane; 1× shows the true aspect");
    g_signal_connect (self->exaggeration_drop, "notify::selected",
                      G_CALLBACK (on_exaggeration_changed), self);
    gtk_box_append (GTK_BOX (row), GTK_WIDGET (self->status_label));
    gtk_box_append (GTK_BOX (row), _tomo_ui_labelled ("Vertical scale",
                                                      GTK_WIDGET (self->exaggeration_drop)));
    gtk_grid_attach (grid, row, 0, 2, 3, 1);
  }
  g_signal_connect (self, "map", G_CALLBACK (on_map), self);
}

static void
toggle_action (GSimpleAction *action,
               GVariant      *parameter,
               gpointer       data)
{
  GtkStack *stack = data;
  gboolean volume = g_str_equal (gtk_stack_get_visible_child_name (stack), "slice");

  gtk_stack_set_visible_child_name (stack, volume ? "volume" : "slice");
  g_simple_action_set_state (action, g_variant_new_boolean (volume));
}

TomoVolumeView *
tomo_volume_view_install (TomoWindow *window)
{
  TomoSliceView *slice_view = tomo_window_get_slice_view (window);
  GtkWidget *parent = gtk_widget_get_parent (GTK_WIDGET (slice_view));
  GtkStack *stack;
  TomoVolumeView *self;
  g_autoptr (GSimpleActionGroup) group = g_simple_action_group_new ();
  g_autoptr (GSimpleAction) action =
    g_simple_action_new_stateful ("three-views", NULL, g_variant_new_boolean (FALSE));
  GtkEventController *shortcuts;

  /* The window's views share one stack; the slice view is its "slice" page. */
  g_return_val_if_fail (GTK_IS_STACK (parent), NULL);
  stack = GTK_STACK (parent);
  self = g_object_new (TOMO_TYPE_VOLUME_VIEW, NULL);
  tomo_window_add_view (window, "volume", "Three views", GTK_WIDGET (self));
  shortcuts = gtk_shortcut_controller_new ();

  self->window = window;
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &self->window);
  g_signal_connect (window, "scan-loaded", G_CALLBACK (on_scan_loaded), self);
  g_signal_connect (window, "notify::center", G_CALLBACK (on_params_notify), self);
  g_signal_connect (window, "notify::filter", G_CALLBACK (on_params_notify), self);
  g_signal_connect (window, "notify::interp", G_CALLBACK (on_params_notify), self);
  g_signal_connect (window, "notify::row", G_CALLBACK (on_row_notify), self);
  g_signal_connect (window, "notify::colormap", G_CALLBACK (on_look_notify), self);
  g_signal_connect (window, "notify::window-min", G_CALLBACK (on_look_notify), self);
  g_signal_connect (window, "notify::window-max", G_CALLBACK (on_look_notify), self);
  on_params_notify (window, NULL, self);
  self->live_id = g_timeout_add (LIVE_POLL_MS, live_poll, self);

  g_signal_connect (action, "activate", G_CALLBACK (toggle_action), stack);
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (action));
  gtk_widget_insert_action_group (GTK_WIDGET (window), "win-volume", G_ACTION_GROUP (group));
  gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (shortcuts),
                                        gtk_shortcut_new (gtk_keyval_trigger_new (GDK_KEY_v, 0),
                                                          gtk_named_action_new ("win-volume.three-views")));
  gtk_widget_add_controller (GTK_WIDGET (window), shortcuts);
  return self;
}

TomoSliceView *
tomo_volume_view_get_pane (TomoVolumeView *self,
                           guint           pane)
{
  g_return_val_if_fail (TOMO_IS_VOLUME_VIEW (self) && pane < N_PANES, NULL);
  return self->panes[pane];
}

void
tomo_volume_view_set_oblique (TomoVolumeView *self,
                              double          azimuth_deg,
                              double          tilt_deg)
{
  g_return_if_fail (TOMO_IS_VOLUME_VIEW (self));

  /* The spin buttons show the angles; one update for both. */
  g_signal_handlers_block_by_func (self->azimuth_spin, on_angles_changed, self);
  g_signal_handlers_block_by_func (self->tilt_spin, on_angles_changed, self);
  gtk_spin_button_set_value (self->azimuth_spin, azimuth_deg);
  gtk_spin_button_set_value (self->tilt_spin, tilt_deg);
  g_signal_handlers_unblock_by_func (self->azimuth_spin, on_angles_changed, self);
  g_signal_handlers_unblock_by_func (self->tilt_spin, on_angles_changed, self);
  on_angles_changed (self);
}

void
tomo_volume_view_get_position (TomoVolumeView *self,
                               double         *ix,
                               double         *iy,
                               double         *z)
{
  *ix = self->ix;
  *iy = self->iy;
  *z = self->z;
}

void
tomo_volume_view_set_position (TomoVolumeView *self,
                               double          ix,
                               double          iy,
                               double          z)
{
  g_return_if_fail (TOMO_IS_VOLUME_VIEW (self));

  self->ix = ix;
  self->iy = iy;
  self->z = z;
  /* The XY plane is the window's row: the panel, the sinogram and the
   * slice exported (Ctrl+E) follow it. */
  if (self->window != NULL && self->scan != NULL)
    g_object_set (self->window, "row", (guint) MAX (round (z), 0), NULL);
  start_update (self);
}

const char *
tomo_volume_view_get_status (TomoVolumeView *self)
{
  return self->status;
}

guint
tomo_volume_view_get_n_stores_freed (void)
{
  guint n;

  g_mutex_lock (&release_lock);
  n = n_released;
  g_mutex_unlock (&release_lock);
  return n;
}

guint
tomo_volume_view_get_n_updates (TomoVolumeView *self)
{
  return self->n_updates;
}

void
tomo_volume_view_set_vertical_exaggeration (TomoVolumeView *self,
                                            guint           factor)
{
  g_return_if_fail (TOMO_IS_VOLUME_VIEW (self));

  self->exaggeration = MIN (factor, MAX_EXAGGERATION);
  /* The drop-down shows the choice: Auto, 1×, 2×, 4×, 8× (other factors: none). */
  g_signal_handlers_block_by_func (self->exaggeration_drop, on_exaggeration_changed, self);
  gtk_drop_down_set_selected (self->exaggeration_drop,
                              factor == 0 ? 0 : factor == 1 ? 1 : factor == 2 ? 2
                              : factor == 4 ? 3 : factor == 8 ? 4 : GTK_INVALID_LIST_POSITION);
  g_signal_handlers_unblock_by_func (self->exaggeration_drop, on_exaggeration_changed, self);
  start_update (self);
}

guint
tomo_volume_view_get_vertical_exaggeration (TomoVolumeView *self)
{
  return self->vex;
}

TomoVolume3d *
tomo_volume_view_get_3d (TomoVolumeView *self)
{
  g_return_val_if_fail (TOMO_IS_VOLUME_VIEW (self), NULL);
  return self->view3d;
}

void
tomo_volume_view_set_render (TomoVolumeView  *self,
                             TomoVolume3dMode mode)
{
  g_return_if_fail (TOMO_IS_VOLUME_VIEW (self));

  g_signal_handlers_block_by_func (self->render_drop, on_render_changed, self);
  gtk_drop_down_set_selected (self->render_drop, mode == TOMO_VOLUME_3D_COMPOSITE ? 1 : 0);
  g_signal_handlers_unblock_by_func (self->render_drop, on_render_changed, self);
  tomo_volume_3d_set_mode (self->view3d, mode);
  refresh_title3d (self);
}

void
tomo_volume_view_get_3d_title (TomoVolumeView *self,
                               const char    **title,
                               const char    **tooltip)
{
  g_return_if_fail (TOMO_IS_VOLUME_VIEW (self));
  *title = gtk_label_get_text (self->title3d);
  *tooltip = gtk_widget_get_tooltip_text (GTK_WIDGET (self->title3d));
}

void
tomo_volume_view_set_preview_size (TomoVolumeView *self,
                                   guint           size)
{
  g_return_if_fail (TOMO_IS_VOLUME_VIEW (self));

  self->preview_size = CLAMP (size, 8, 512);
  g_signal_handlers_block_by_func (self->size_drop, on_size_changed, self);
  gtk_drop_down_set_selected (self->size_drop, size == 64 ? 0 : size == 128 ? 1 : size == 256 ? 2
                              : GTK_INVALID_LIST_POSITION);
  g_signal_handlers_unblock_by_func (self->size_drop, on_size_changed, self);
  start_update (self);
}
