/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The scan geometry in the window: the scan as opened is shown in the
 * geometry of the panel's Geometry choice (tomo-geometry.h).  On open the
 * choice is Auto, and its label says what Auto chose; another choice
 * presents the scan again in the background.  Live scans are shown as they
 * arrive (the choice is off).
 */
#define G_LOG_DOMAIN "tomo-window"

#include "config.h"

#include <math.h>

#include "tomo-window-private.h"

TomoScan *
_tomo_window_geometry_present (TomoScan         *base,
                               TomoGeometryKind  kind,
                               double            center,
                               TomoGeometryPlan *plan,
                               GError          **error)
{
  TomoGeometry g = { kind, TOMO_AXIS_SIDE_ANY };

  return tomo_geometry_present (base, &g, center, plan, error);
}

static void show_in_place (TomoWindow             *self,
                           TomoScan               *scan,
                           const TomoGeometryPlan *plan);

static const char *
short_name (const TomoGeometryPlan *plan)
{
  switch (plan->kind)
    {
    case TOMO_GEOMETRY_OFFSET:
      return plan->side == TOMO_AXIS_SIDE_LEFT ? "offset axis, left" : "offset axis, right";
    case TOMO_GEOMETRY_360:
      return "360°";
    case TOMO_GEOMETRY_180:
    case TOMO_GEOMETRY_AUTO:
    default:
      return "180°";
    }
}

static void
show_plan (TomoWindow             *self,
           const TomoGeometryPlan *plan)
{
  GtkComboBoxText *combo = self->panel->geometry_combo;
  g_autofree char *tip = plan != NULL ? tomo_geometry_plan_describe (plan) : NULL;

  gtk_widget_set_tooltip_text (GTK_WIDGET (combo),
                               tip != NULL ? tip : "A live scan is reconstructed as it arrives");
}

/* A live scan is reconstructed as it arrives, over the angles it has. */
static char *
live_label (TomoScan *scan)
{
  const double *a = tomo_scan_get_angles (scan);
  guint n = tomo_scan_get_n_projections (scan);
  double lo = a[0], hi = a[0];

  for (guint i = 1; i < n; i++)
    {
      lo = MIN (lo, a[i]);
      hi = MAX (hi, a[i]);
    }
  /* Evenly spaced: the last step too (360° for 0 … 359°). */
  return g_strdup_printf ("As received (%.0f°)", n > 1 ? (hi - lo) * n / (n - 1) * 180 / G_PI : 0.0);
}

/* The Auto entry's text, Auto chosen (without presenting again). */
static void
set_auto_label (TomoWindow *self,
                const char *label)
{
  GtkComboBoxText *combo = self->panel->geometry_combo;

  self->geometry_syncing = TRUE;
  gtk_combo_box_text_remove (combo, 0);
  gtk_combo_box_text_insert (combo, 0, "auto", label);
  gtk_combo_box_set_active_id (GTK_COMBO_BOX (combo), "auto");
  self->geometry_syncing = FALSE;
}

void
_tomo_window_geometry_opened (TomoWindow             *self,
                              TomoScan               *base,
                              const TomoGeometryPlan *plan)
{
  GtkComboBoxText *combo = self->panel->geometry_combo;
  g_autofree char *label = NULL;

  g_set_object (&self->base_scan, base);
  g_set_object (&self->opened_scan, base);
  if (self->tilt != 0.0)
    {
      /* The tilt belongs to the scan that had it. */
      self->tilt = 0.0;
      g_object_notify (G_OBJECT (self), "tilt");
    }
  gtk_widget_set_sensitive (GTK_WIDGET (self->panel->tilt_spin), plan != NULL);
  if (plan == NULL)
    {
      /* Live: shown as it arrives. */
      self->have_plan = FALSE;
      _tomo_window_set_center_shift (self, 0);
    }
  label = plan != NULL ? g_strdup_printf ("Auto (%s)", short_name (plan)) : live_label (base);
  set_auto_label (self, label);
  gtk_widget_set_sensitive (GTK_WIDGET (combo), plan != NULL);
  show_plan (self, plan);
}

typedef struct
{
  TomoScan *base;
  TomoGeometryKind kind;
  double center;           /* detector column of the axis; NAN: estimated */
  TomoGeometryPlan plan;
} PresentJob;

static void
present_job_free (PresentJob *job)
{
  g_clear_object (&job->base);
  g_free (job);
}

static void
present_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  PresentJob *job = task_data;
  GError *error = NULL;
  TomoScan *scan = _tomo_window_geometry_present (job->base, job->kind, job->center, &job->plan,
                                                  &error);

  if (scan == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, scan, g_object_unref);
}

static void
present_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  TomoWindow *self = TOMO_WINDOW (source);
  PresentJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(GError) error = NULL;

  _tomo_window_set_busy (self, NULL, FALSE);
  scan = g_task_propagate_pointer (G_TASK (result), &error);
  if (job->base != self->base_scan)
    return; /* another scan was opened meanwhile */
  if (scan == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Cannot show the scan so: %s", error->message);

      g_clear_pointer (&self->pending_params, g_key_file_unref);
      tomo_window_show_error (self, message);
      self->geometry_syncing = TRUE;
      gtk_combo_box_set_active_id (GTK_COMBO_BOX (self->panel->geometry_combo),
                                   self->geometry_id);
      self->geometry_syncing = FALSE;
      return;
    }
  g_free (self->geometry_id);
  self->geometry_id = g_strdup (gtk_combo_box_get_active_id (GTK_COMBO_BOX (self->panel->geometry_combo)));
  _tomo_window_present_scan (self, scan, &job->plan);
  show_plan (self, &job->plan);
}

/* Presents the base scan in `kind` (about the axis `center`, NAN: found)
 * in the background. */
static void
present_in (TomoWindow       *self,
            TomoGeometryKind  kind,
            double            center)
{
  g_autoptr(GTask) task = NULL;
  PresentJob *job;

  /* This presentation replaces the rows a pending restitch would make. */
  g_clear_handle_id (&self->restitch_id, g_source_remove);
  job = g_new0 (PresentJob, 1);
  job->base = g_object_ref (self->base_scan);
  job->kind = kind;
  job->center = center;
  _tomo_window_set_busy (self, "Arranging the projections…", TRUE);
  task = g_task_new (self, NULL, present_done, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) present_job_free);
  g_task_run_in_thread (task, present_thread);
}

static void
on_geometry_changed (GtkComboBox *combo,
                     TomoWindow  *self)
{
  const char *id = gtk_combo_box_get_active_id (combo);
  TomoGeometry g;

  if (self->geometry_syncing || id == NULL || self->base_scan == NULL)
    return;
  if (!tomo_geometry_parse (id, &g, NULL))
    return;
  g_clear_pointer (&self->pending_params, g_key_file_unref);
  present_in (self, g.kind, NAN);
}

void
_tomo_window_geometry_show (TomoWindow       *self,
                            TomoGeometryKind  kind,
                            double            center)
{
  g_return_if_fail (self->base_scan != NULL);

  self->geometry_syncing = TRUE;
  gtk_combo_box_set_active_id (GTK_COMBO_BOX (self->panel->geometry_combo),
                               tomo_geometry_kind_to_string (kind));
  self->geometry_syncing = FALSE;
  present_in (self, kind, center);
}

void
_tomo_window_geometry_restitch (TomoWindow *self)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  TomoGeometryPlan plan;
  double detector;

  g_clear_handle_id (&self->restitch_id, g_source_remove);
  if (!self->have_plan || self->plan.kind != TOMO_GEOMETRY_OFFSET || self->base_scan == NULL
      || self->scan == NULL || self->params.center < 0)
    return;
  detector = _tomo_window_detector_center (self, self->params.center);
  if (fabs (detector - self->plan.center) < 0.005)
    return;
  /* With the axis given, presenting is only the stitch's layout: no read. */
  scan = _tomo_window_geometry_present (self->base_scan, TOMO_GEOMETRY_OFFSET, detector, &plan,
                                        &error);
  if (scan == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Cannot stitch the rows about column %.2f: %s",
                                                  detector, error->message);

      tomo_window_show_error (self, message);
      return;
    }
  g_strlcpy (plan.reason, "stitched again about the centre set in the panel", sizeof plan.reason);
  show_in_place (self, scan, &plan);
}

/* `scan` (base_scan as `plan` presents it) shown instead of the rows now
 * shown, under the same parameters. */
static void
show_in_place (TomoWindow             *self,
               TomoScan               *scan,
               const TomoGeometryPlan *in)
{
  TomoGeometryPlan plan = *in;
  guint width, old_width;

  old_width = tomo_scan_get_width (self->scan);
  self->plan = plan;
  /* The same detector column, in the new stitched rows. */
  _tomo_window_set_center_shift (self, plan.kind == TOMO_GEOMETRY_OFFSET
                                       ? plan.recon_center - plan.center : 0);
  g_set_object (&self->scan, scan);
  tomo_engine_set_scan (self->engine, scan);
  tomo_sinogram_view_set_scan (self->sinogram_view, scan);
  tomo_sinogram_view_set_center (self->sinogram_view, self->params.center);
  tomo_center_finder_replace_scan (self->panel->center_finder, scan);
  width = tomo_scan_get_width (scan);
  _tomo_window_configure_center (self);
  /* The slice grid is centred on the axis: the sample moves by half the
   * change of width, and a region with it; one that no longer fits goes. */
  if (self->params.roi.width > 0)
    {
      TomoRoi roi = self->params.roi;
      int d = (int) lround (((double) width - old_width) / 2.0);

      if ((int) roi.x + d >= 0 && (int) roi.y + d >= 0 && roi.x + d + roi.width <= width
          && roi.y + d + roi.height <= width)
        _tomo_window_set_roi (self, roi.x + d, roi.y + d, roi.width, roi.height);
      else
        _tomo_window_set_roi (self, 0, 0, 0, 0);
    }
  /* Auto's label names the side, which a centre moved across the
   * detector's middle changes. */
  if (g_strcmp0 (gtk_combo_box_get_active_id (GTK_COMBO_BOX (self->panel->geometry_combo)), "auto") == 0)
    {
      g_autofree char *label = g_strdup_printf ("Auto (%s)", short_name (&plan));

      set_auto_label (self, label);
    }
  show_plan (self, &plan);
  _tomo_window_update_subtitle (self);
  _tomo_window_hide_error (self);
  self->restitching = TRUE;
  _tomo_window_refresh (self);
  self->restitching = FALSE;
}

void
_tomo_window_set_tilt (TomoWindow *self,
                       double      tilt)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) base = NULL, scan = NULL;
  TomoGeometryPlan plan;

  if (tilt == self->tilt)
    return;
  if (self->opened_scan == NULL || !self->have_plan || self->scan == NULL)
    {
      /* Nothing to correct (no scan, or one still arriving): the control
       * goes back. */
      g_object_notify (G_OBJECT (self), "tilt");
      return;
    }
  /* The same geometry about the same axis: presenting is only the layout,
   * no read. */
  base = tomo_geometry_correct_tilt (self->opened_scan, tilt, &error);
  if (base != NULL)
    scan = _tomo_window_geometry_present (base, self->plan.kind, self->plan.center, &plan, &error);
  if (scan == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Cannot correct an axis tilt of %.3f°: %s",
                                                  tilt, error->message);

      tomo_window_show_error (self, message);
      g_object_notify (G_OBJECT (self), "tilt");
      return;
    }
  g_strlcpy (plan.reason, self->plan.reason, sizeof plan.reason);
  self->tilt = tilt;
  g_set_object (&self->base_scan, base);
  show_in_place (self, scan, &plan);
  g_object_notify (G_OBJECT (self), "tilt");
}

void
_tomo_window_geometry_setup (TomoWindow *self)
{
  self->geometry_id = g_strdup ("auto");
  g_signal_connect (self->panel->geometry_combo, "changed",
                    G_CALLBACK (on_geometry_changed), self);
}
