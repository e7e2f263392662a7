/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include <gtk/gtk.h>

#include "tomo-volume-view.h"
#include "ui-test-common.h"

/* The three-view layout in the window on the sample scan (CPU backend
 * under Xvfb). */

static gboolean
timeout_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterates the main context until the view has made `n` updates. */
static gboolean
wait_updates (TomoVolumeView *view,
              guint           n,
              guint           timeout_s)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (timeout_s, timeout_cb, &timed_out);

  while (tomo_volume_view_get_n_updates (view) < n && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (id);
  /* Let the frame that shows them be drawn. */
  for (guint i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);
  return tomo_volume_view_get_n_updates (view) >= n;
}

static float *
pane_data (TomoVolumeView *view,
           guint           pane,
           guint          *w,
           guint          *h)
{
  TomoSlice *slice = tomo_slice_view_get_slice (tomo_volume_view_get_pane (view, pane));

  g_assert_nonnull (slice);
  g_assert_nonnull (slice->data);
  *w = slice->width;
  *h = slice->height;
  return g_memdup2 (slice->data, sizeof (float) * slice->width * slice->height);
}

static double
rel_diff (const float *a,
          const float *b,
          gsize        n)
{
  double e = 0, t = 0;

  for (gsize i = 0; i < n; i++)
    {
      e += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
      t += (double) b[i] * b[i];
    }
  return sqrt (e / t);
}

static void
screenshot (const char *name)
{
  const char *dir = g_getenv ("TOMO_SCREENSHOT_DIR");
  g_autofree char *cmd = NULL;

  gboolean done = FALSE;

  if (dir == NULL)
    return;
  /* Let the frames be drawn first. */
  g_timeout_add (1000, timeout_cb, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
  cmd = g_strdup_printf ("import -window root %s/%s", dir, name);
  g_spawn_command_line_sync (cmd, NULL, NULL, NULL, NULL);
}

/* The spin button under `w` whose range starts at `lower`. */
static GtkSpinButton *
find_spin (GtkWidget *w,
           double     lower)
{
  if (GTK_IS_SPIN_BUTTON (w) &&
      gtk_adjustment_get_lower (gtk_spin_button_get_adjustment (GTK_SPIN_BUTTON (w))) == lower)
    return GTK_SPIN_BUTTON (w);
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkSpinButton *found = find_spin (c, lower);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
test_three_views (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autofree float *xz0 = NULL;
  g_autofree float *yz0 = NULL;
  g_autofree float *xz1 = NULL;
  g_autofree float *yz1 = NULL;
  g_autofree float *xy1 = NULL;
  GtkStack *stack;
  TomoVolumeView *view;
  guint w, h, xw, xh, yw, yh;
  double ix, iy, z;

  if (skip_without_display ())
    return;
  g_assert_nonnull (sample);
  app = tomo_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  window = tomo_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 780);
  gtk_window_present (GTK_WINDOW (window));

  stack = GTK_STACK (gtk_widget_get_parent (GTK_WIDGET (tomo_window_get_slice_view (window))));
  view = TOMO_VOLUME_VIEW (gtk_stack_get_child_by_name (stack, "volume"));
  g_assert_nonnull (view);
  g_assert_cmpstr (gtk_stack_get_visible_child_name (stack), ==, "slice");
  /* The oblique plane's tilt field shows the tilt the plane is drawn with
   * (0°), not its range's lower bound. */
  {
    GtkSpinButton *tilt = find_spin (GTK_WIDGET (view), -80);

    g_assert_nonnull (tilt);
    g_assert_cmpfloat (gtk_spin_button_get_value (tilt), ==, 0);
  }

  g_assert_true (open_and_wait (sample));
  /* The centre moves to the background estimate (the sample's axis is at
   * 258.87) once after opening: wait for it, so the XY slice and the planes
   * compared below are made at one centre. */
  {
    double center = 0;
    gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

    do
      {
        g_main_context_iteration (NULL, FALSE);
        g_object_get (window, "center", &center, NULL);
      }
    while (fabs (center - 258.87) > 0.3 && g_get_monotonic_time () < end);
    g_assert_cmpfloat_with_epsilon (center, 258.87, 0.3);
  }
  /* Nothing is computed for a hidden layout. */
  g_assert_cmpuint (tomo_volume_view_get_n_updates (view), ==, 0);

  /* V (the action): the three views appear, each with its plane. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win-volume.three-views", NULL));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (stack), ==, "volume");
  g_assert_true (wait_updates (view, 1, 120));
  g_test_message ("status: %s", tomo_volume_view_get_status (view));
  g_assert_nonnull (strstr (tomo_volume_view_get_status (view), "store"));
  for (guint k = 0; k < 4; k++)
    g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (tomo_volume_view_get_pane (view, k))));
  g_free (pane_data (view, TOMO_VOLUME_VIEW_XY, &w, &h));
  g_assert_cmpuint (w, ==, 512);
  g_assert_cmpuint (h, ==, 512);
  xz0 = pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
  yz0 = pane_data (view, TOMO_VOLUME_VIEW_YZ, &yw, &yh);
  g_assert_cmpuint (xw, ==, 512);
  g_assert_cmpuint (xh, ==, 64);
  g_assert_cmpuint (yh, ==, 64);
  screenshot ("three-views.png");

  /* A click in XY at (150, 330) moves XZ to y = 330 and YZ to x = 150. */
  tomo_volume_view_click (view, TOMO_VOLUME_VIEW_XY, 150.0, 330.0);
  g_assert_true (wait_updates (view, 2, 60));
  tomo_volume_view_get_position (view, &ix, &iy, &z);
  g_assert_cmpfloat (ix, ==, 150.0);
  g_assert_cmpfloat (iy, ==, 330.0);
  xz1 = pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
  yz1 = pane_data (view, TOMO_VOLUME_VIEW_YZ, &yw, &yh);
  xy1 = pane_data (view, TOMO_VOLUME_VIEW_XY, &w, &h);
  g_test_message ("XZ changed by %.3f, YZ by %.3f (relative L2)", rel_diff (xz1, xz0, xw * xh),
                  rel_diff (yz1, yz0, yw * yh));
  g_assert_cmpfloat (rel_diff (xz1, xz0, xw * xh), >, 0.05);
  g_assert_cmpfloat (rel_diff (yz1, yz0, yw * yh), >, 0.05);
  /* …and they show that point's lines of the XY plane: row z of XZ is line
   * y = 330 of XY, row z of YZ is column x = 150. */
  {
    g_autofree float *line = g_new (float, w);

    for (guint x = 0; x < w; x++)
      line[x] = xy1[330 * w + x];
    g_assert_cmpfloat (rel_diff (xz1 + (gsize) z * xw, line, w), <, 1e-5);
    for (guint y = 0; y < w; y++)
      line[y] = xy1[y * w + 150];
    g_assert_cmpfloat (rel_diff (yz1 + (gsize) z * yw, line, w), <, 1e-5);
  }

  /* A click in XZ at (x 400, row 10) moves the XY plane to row 10. */
  tomo_volume_view_click (view, TOMO_VOLUME_VIEW_XZ, 400.0, 10.0);
  g_assert_true (wait_updates (view, 3, 60));
  tomo_volume_view_get_position (view, &ix, &iy, &z);
  g_assert_cmpfloat (z, ==, 10.0);
  g_assert_cmpfloat (ix, ==, 400.0);
  screenshot ("three-views-moved.png");

  /* The oblique pane: at 0° it is the XZ plane through the point, at 90°
   * the YZ plane; turned and tilted it is neither. */
  {
    g_autofree float *xz = pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
    g_autofree float *yz = pane_data (view, TOMO_VOLUME_VIEW_YZ, &yw, &yh);
    g_autofree float *ob = NULL;
    guint ow, oh, n = tomo_volume_view_get_n_updates (view);

    tomo_volume_view_set_oblique (view, 0.0, 0.0);
    g_assert_true (wait_updates (view, n + 1, 60));
    ob = pane_data (view, TOMO_VOLUME_VIEW_OBLIQUE, &ow, &oh);
    g_assert_cmpuint (ow, ==, xw);
    g_assert_cmpuint (oh, ==, xh);
    g_assert_cmpfloat (rel_diff (ob, xz, ow * oh), <, 1e-6);
    g_free (ob);

    tomo_volume_view_set_oblique (view, 90.0, 0.0);
    g_assert_true (wait_updates (view, n + 2, 60));
    ob = pane_data (view, TOMO_VOLUME_VIEW_OBLIQUE, &ow, &oh);
    g_assert_cmpfloat (rel_diff (ob, yz, ow * oh), <, 1e-6);
    g_free (ob);

    tomo_volume_view_set_oblique (view, 35.0, 20.0);
    g_assert_true (wait_updates (view, n + 3, 60));
    ob = pane_data (view, TOMO_VOLUME_VIEW_OBLIQUE, &ow, &oh);
    g_test_message ("oblique 35°/20° differs from XZ by %.3f, from YZ by %.3f",
                    rel_diff (ob, xz, ow * oh), rel_diff (ob, yz, ow * oh));
    g_assert_cmpfloat (rel_diff (ob, xz, ow * oh), >, 0.05);
    g_assert_cmpfloat (rel_diff (ob, yz, ow * oh), >, 0.05);
    for (guint i = 0; i < ow * oh; i++)
      g_assert_true (isfinite (ob[i]));
    screenshot ("four-views-oblique.png");
  }

  /* The centre control of the window reaches every view. */
  {
    g_autofree float *xz = pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
    g_autofree float *xz2 = NULL;
    guint n = tomo_volume_view_get_n_updates (view);

    /* From the estimate (≈ 258.87) back to the detector middle. */
    g_object_set (window, "center", 255.5, NULL);
    g_assert_true (wait_updates (view, n + 1, 60));
    xz2 = pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
    g_test_message ("centre 258.87 → 255.5: XZ changed by %.3f", rel_diff (xz2, xz, xw * xh));
    g_assert_cmpfloat (rel_diff (xz2, xz, xw * xh), >, 0.01);
  }

  /* Back to the single slice. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win-volume.three-views", NULL));
  g_assert_cmpstr (gtk_stack_get_visible_child_name (stack), ==, "slice");

  /* The window closed while an update runs: the update ends quietly. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win-volume.three-views", NULL));
  g_object_ref (view);
  tomo_volume_view_set_position (view, 20.0, 30.0, 40.0);
  gtk_window_destroy (GTK_WINDOW (window));
  window = NULL;
  {
    gint64 until = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;

    while (g_get_monotonic_time () < until)
      g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
  }
  g_object_unref (view);
}

int
main (int    argc,
      char **argv)
{
  ui_test_init (&argc, &argv);
  g_test_add_func ("/tomo/ui/volume/three-views", test_three_views);
  return ui_test_run ();
}
