/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <glib/gstdio.h>

#include <math.h>
#include <string.h>

#include <gtk/gtk.h>
#include <gdk/x11/gdkx.h>

#include "tomo-gpu.h"
#include "tomo-preview.h"
#include "tomo-volume.h"
#include "tomo-volume-view.h"
#include "tomo-tiff-writer.h"
#include "ui-test-common.h"

/* The three-view layout in the window on the sample scan (CPU backend
 * under Xvfb). */

/* Iterates the main context until the view has made `n` updates. */
static gboolean
wait_updates (TomoVolumeView *view,
              guint           n,
              guint           timeout_s)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (timeout_s, tomo_test_set_flag_cb, &timed_out);

  while (tomo_volume_view_get_n_updates (view) < n && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (id);
  /* Let the frame that shows them be drawn. */
  for (guint i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);
  return tomo_volume_view_get_n_updates (view) >= n;
}

/* Iterates the main context until the 3D pane has drawn `n` frames. */
static gboolean
wait_frames (TomoVolume3d *v3d,
             guint         n,
             guint         timeout_s)
{
  gint64 end = g_get_monotonic_time () + timeout_s * G_USEC_PER_SEC;

  while (tomo_volume_3d_get_n_frames (v3d) < n && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, FALSE) || (g_usleep (2000), TRUE);
  return tomo_volume_3d_get_n_frames (v3d) >= n;
}

/* The XZ and YZ planes (xz, yz) each differ by more than 5 % (relative L2)
 * from xz0 and yz0 of the same sizes: they followed the cross-hair. */
static void
assert_planes_moved (const float *xz,
                     const float *xz0,
                     gsize        n_xz,
                     const float *yz,
                     const float *yz0,
                     gsize        n_yz,
                     const char  *when)
{
  double dxz = tomo_test_rel_l2 (xz, xz0, n_xz), dyz = tomo_test_rel_l2 (yz, yz0, n_yz);

  g_test_message ("%s: XZ changed by %.3f, YZ by %.3f (relative L2)", when, dxz, dyz);
  g_assert_cmpfloat (dxz, >, 0.05);
  g_assert_cmpfloat (dyz, >, 0.05);
}

/* Real pointer events (xdotool under Xvfb): a drag in the XY pane moves
 * the cross-hair along the way and XZ/YZ follow; the XY pane is not
 * recomputed (its plane did not move). */
static void
drag_in_xy (TomoVolumeView *view)
{
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");
  GtkWidget *pane = GTK_WIDGET (tomo_volume_view_get_pane (view, TOMO_VOLUME_VIEW_XY));
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (window));
  g_autofree float *xz0 = NULL, *yz0 = NULL, *xz1 = NULL, *yz1 = NULL;
  TomoSlice *xy_before;
  double ix0, iy0, z0, ix, iy, z, nx, ny;
  guint xw, xh, yw, yh, n;
  graphene_point_t p;

  if (xdotool == NULL || !GDK_IS_X11_DISPLAY (gdk_display_get_default ()))
    {
      g_test_message ("drag not tested: needs xdotool and an X11 display");
      return;
    }
  xz0 = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
  yz0 = volume_pane_data (view, TOMO_VOLUME_VIEW_YZ, &yw, &yh);
  xy_before = tomo_slice_view_get_slice (TOMO_SLICE_VIEW (pane));
  tomo_volume_view_get_position (view, &ix0, &iy0, &z0);
  n = tomo_volume_view_get_n_updates (view);
  gtk_native_get_surface_transform (GTK_NATIVE (window), &nx, &ny);
  /* From 30 % to 70 % of the pane, in 8 steps, button held. */
  for (guint step = 0; step <= 8; step++)
    {
      double f = 0.3 + 0.05 * step;
      g_autofree char *cmd = NULL;
      int status = 1;

      g_assert_true (gtk_widget_compute_point (pane, GTK_WIDGET (window),
                                               &GRAPHENE_POINT_INIT (gtk_widget_get_width (pane) * f,
                                                                     gtk_widget_get_height (pane) * f),
                                               &p));
      cmd = g_strdup_printf ("%s mousemove --window %lu --sync %d %d%s", xdotool,
                             (gulong) gdk_x11_surface_get_xid (surface), (int) (p.x + nx),
                             (int) (p.y + ny), step == 0 ? " mousedown 1"
                             : step == 8 ? " mouseup 1" : "");
      g_assert_true (g_spawn_command_line_sync (cmd, NULL, NULL, &status, NULL));
      g_assert_cmpint (status, ==, 0);
      for (guint i = 0; i < 50; i++)
        g_main_context_iteration (NULL, FALSE);
      g_usleep (20000);
      if (step == 4)
        {
          /* Mid-drag: the cross-hair is already on its way. */
          tomo_volume_view_get_position (view, &ix, &iy, &z);
          g_test_message ("mid-drag at (%.0f, %.0f)", ix, iy);
          g_assert_cmpfloat (fabs (ix - ix0) + fabs (iy - iy0), >, 10);
        }
    }
  {
    gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

    /* The last position's planes: busy ends with nothing dirty. */
    while (g_get_monotonic_time () < end &&
           tomo_volume_view_get_n_updates (view) < n + 2)
      g_main_context_iteration (NULL, TRUE);
    g_assert_true (wait_updates (view, n + 2, 30));
    for (guint i = 0; i < 100; i++)
      g_main_context_iteration (NULL, FALSE), g_usleep (10000);
  }
  tomo_volume_view_get_position (view, &ix, &iy, &z);
  g_test_message ("drag: (%.0f, %.0f) → (%.0f, %.0f) in %u updates", ix0, iy0, ix, iy,
                  tomo_volume_view_get_n_updates (view) - n);
  /* The cross-hair is at the slice pixel under the pointer's last place. */
  {
    double x0, y0, x1, y1;

    tomo_slice_view_image_to_widget (TOMO_SLICE_VIEW (pane), 0, 0, &x0, &y0);
    tomo_slice_view_image_to_widget (TOMO_SLICE_VIEW (pane), 1, 1, &x1, &y1);
    /* Within a screen pixel (the pointer lands on whole pixels) and one
     * slice pixel. */
    g_assert_cmpfloat (fabs (ix - (0.7 * gtk_widget_get_width (pane) - x0) / (x1 - x0)), <=,
                       1 + 1.0 / (x1 - x0));
    g_assert_cmpfloat (fabs (iy - (0.7 * gtk_widget_get_height (pane) - y0) / (y1 - y0)), <=,
                       1 + 1.0 / (y1 - y0));
  }
  g_assert_cmpfloat (z, ==, z0);
  g_assert_true (tomo_slice_view_get_slice (TOMO_SLICE_VIEW (pane)) == xy_before);
  xz1 = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
  yz1 = volume_pane_data (view, TOMO_VOLUME_VIEW_YZ, &yw, &yh);
  assert_planes_moved (xz1, xz0, xw * xh, yz1, yz0, yw * yh, "after the drag");
  ui_test_screenshot ("three-views-dragged.png");
}

/* The next frame of the 3D pane, read back. */
static void
next_3d_frame (TomoVolume3d      *v3d,
               TomoVolume3dStats *stats)
{
  guint f = tomo_volume_3d_get_n_frames (v3d);

  gtk_widget_queue_draw (GTK_WIDGET (v3d));
  g_assert_true (wait_frames (v3d, f + 1, 30));
  tomo_volume_3d_get_stats (v3d, stats);
}

static void
log_3d (const char              *what,
        const TomoVolume3dStats *s)
{
  g_test_message ("3D pane %s: mean RGB %.1f %.1f %.1f, grey σ %.1f, chroma %.1f, "
                  "outline pixels XY %u XZ %u YZ %u of %u", what, s->mean[0], s->mean[1],
                  s->mean[2], s->stddev_grey, s->chroma, s->n_plane_pixels[0],
                  s->n_plane_pixels[1], s->n_plane_pixels[2], s->n_pixels);
}

/* The 3D pane by its pixels: the preview drawn (more than the background's
 * grey, 31) with the three planes' outlines in it; turned edge-on it is
 * another picture; composite differs from maximum intensity; the window
 * and the colour map shared with the slice views change it; a new preview
 * size remakes the volume. */
static void
check_3d_pane (TomoVolumeView *view)
{
  TomoVolume3d *v3d = tomo_volume_view_get_3d (view);
  TomoVolume3dStats mip, edge, comp, narrow, viridis, back;
  double lo, hi;
  guint n;

  tomo_volume_3d_set_probe (v3d, TRUE);
  g_assert_true (wait_frames (v3d, 1, 30));
  next_3d_frame (v3d, &mip);
  log_3d ("maximum intensity", &mip);
  /* How the preview reached the texture: uploaded where GL is not on a
   * CUDA device (Mesa under Xvfb). */
  g_test_message ("3D pane: %s (interop %s)", tomo_volume_3d_get_upload_path (v3d),
                  tomo_volume_3d_get_interop (v3d) ? "possible" : "not possible");
  g_assert_nonnull (tomo_volume_3d_get_upload_path (v3d));
  if (!tomo_volume_3d_get_interop (v3d))
    g_assert_cmpstr (tomo_volume_3d_get_upload_path (v3d), ==, "GL upload");
  g_assert_cmpfloat (mip.mean_grey, >, 33.0);
  g_assert_cmpuint (mip.n_plane_pixels[0], >, 50);
  g_assert_cmpuint (mip.n_plane_pixels[1], >, 50);
  g_assert_cmpuint (mip.n_plane_pixels[2], >, 50);
  /* Grey colour map: the only colour is the outlines'. */
  g_assert_cmpfloat (mip.chroma, <, 10.0);

  tomo_volume_3d_set_rotation (v3d, 0.0, 0.0);
  next_3d_frame (v3d, &edge);
  log_3d ("edge-on", &edge);
  g_assert_cmpfloat (fabs (edge.mean_grey - mip.mean_grey), >, 0.5);
  ui_test_screenshot ("three-views-3d-edge-on.png");
  tomo_volume_3d_set_rotation (v3d, 0.6, 0.5);
  next_3d_frame (v3d, &back);
  g_assert_cmpfloat (fabs (back.mean_grey - mip.mean_grey), <, 0.05);
  {
    /* Turning it: frames one after another (reported: under Xvfb Mesa's
     * llvmpipe casts the rays on the CPU). */
    gint64 t0 = g_get_monotonic_time ();

    for (guint i = 1; i <= 5; i++)
      {
        tomo_volume_3d_set_rotation (v3d, 0.6 + 0.02 * i, 0.5);
        next_3d_frame (v3d, &back);
      }
    g_test_message ("3D pane: %.1f ms a frame while turning (maximum intensity, read back)",
                    (g_get_monotonic_time () - t0) / 5e3);
    /* As a drag turns it: a quarter of the rays, the same picture scaled
     * up (mean grey within 3 levels; the outlines there, blurred by the
     * scaling: fewer pixels in their exact colour). */
    tomo_volume_3d_set_interactive (v3d, TRUE);
    t0 = g_get_monotonic_time ();
    for (guint i = 1; i <= 5; i++)
      {
        tomo_volume_3d_set_rotation (v3d, 0.6 + 0.02 * i, 0.5);
        next_3d_frame (v3d, &back);
      }
    g_test_message ("3D pane: %.1f ms a frame at half resolution",
                    (g_get_monotonic_time () - t0) / 5e3);
    tomo_volume_3d_set_rotation (v3d, 0.6, 0.5);
    next_3d_frame (v3d, &back);
    log_3d ("half resolution", &back);
    g_assert_cmpfloat (fabs (back.mean_grey - mip.mean_grey), <, 3.0);
    g_assert_cmpuint (back.n_plane_pixels[0], >, 20);
    tomo_volume_3d_set_interactive (v3d, FALSE);
    next_3d_frame (v3d, &back);
    g_assert_cmpfloat (fabs (back.mean_grey - mip.mean_grey), <, 0.05);
  }

  tomo_volume_view_set_render (view, TOMO_VOLUME_3D_COMPOSITE);
  next_3d_frame (v3d, &comp);
  log_3d ("composite", &comp);
  g_assert_cmpfloat (fabs (comp.mean_grey - mip.mean_grey), >, 3.0);
  g_assert_cmpuint (comp.n_plane_pixels[2], >, 50);
  ui_test_screenshot ("three-views-3d-composite.png");

  /* A narrower window (the upper half of the range): the picture changes
   * and so do the slice panes' windows. */
  g_object_get (window, "window-min", &lo, "window-max", &hi, NULL);
  g_object_set (window, "auto-contrast", FALSE, NULL);
  g_object_set (window, "window-min", (lo + hi) / 2, "window-max", hi, NULL);
  next_3d_frame (v3d, &narrow);
  log_3d ("composite, window narrowed", &narrow);
  g_assert_cmpfloat (fabs (narrow.mean_grey - comp.mean_grey), >, 1.0);
  g_object_set (window, "window-min", lo, "window-max", hi, NULL);

  tomo_volume_view_set_render (view, TOMO_VOLUME_3D_MIP);
  next_3d_frame (v3d, &back);
  g_assert_cmpfloat (fabs (back.mean_grey - mip.mean_grey), <, 0.05);
  g_object_set (window, "colormap", "viridis", NULL);
  next_3d_frame (v3d, &viridis);
  log_3d ("maximum intensity, viridis", &viridis);
  g_assert_cmpfloat (viridis.chroma, >, mip.chroma + 20.0);
  ui_test_screenshot ("three-views-3d-viridis.png");
  g_object_set (window, "colormap", "gray", NULL);

  /* 64³: the preview is made again (the title says its size). */
  n = tomo_volume_view_get_n_updates (view);
  tomo_volume_view_set_preview_size (view, 64);
  g_assert_true (wait_updates (view, n + 1, 60));
  g_assert_nonnull (strstr (gtk_label_get_text (GTK_LABEL (gtk_widget_get_first_child (
    gtk_widget_get_parent (GTK_WIDGET (v3d))))), "64 × 64 × 64"));
  next_3d_frame (v3d, &back);
  log_3d ("64³", &back);
  g_assert_cmpfloat (fabs (back.mean_grey - mip.mean_grey), >, 0.05);
  tomo_volume_view_set_preview_size (view, 128);
  g_assert_true (wait_updates (view, n + 2, 60));
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
  guint w, h, xw, xh, yw, yh, vex, n0;
  double ix, iy, z;

  if (skip_without_display ())
    return;
  g_assert_nonnull (sample);
  view = volume_window_new (&stack);
  g_assert_cmpstr (gtk_stack_get_visible_child_name (stack), ==, "slice");

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
  g_free (volume_pane_data (view, TOMO_VOLUME_VIEW_XY, &w, &h));
  g_assert_cmpuint (w, ==, 512);
  g_assert_cmpuint (h, ==, 512);
  xz0 = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
  yz0 = volume_pane_data (view, TOMO_VOLUME_VIEW_YZ, &yw, &yh);
  /* 64 rows of 512 columns: the vertical planes are sampled vex times per
   * row (automatic: about 1.6 : 1) and fill most of their pane's height. */
  vex = tomo_volume_view_get_vertical_exaggeration (view);
  g_test_message ("vertical exaggeration %u", vex);
  g_assert_cmpuint (vex, ==, 5);
  g_assert_cmpuint (xw, ==, 512);
  g_assert_cmpuint (xh, ==, 63 * vex + 1);
  g_assert_cmpuint (yh, ==, 63 * vex + 1);
  {
    TomoSliceView *pane = tomo_volume_view_get_pane (view, TOMO_VOLUME_VIEW_XZ);
    double x0, y0, x1, y1;
    int ph = gtk_widget_get_height (GTK_WIDGET (pane));

    tomo_slice_view_image_to_widget (pane, 0, 0, &x0, &y0);
    tomo_slice_view_image_to_widget (pane, xw, xh, &x1, &y1);
    g_test_message ("XZ drawn %.0f × %.0f in a pane of %d × %d", x1 - x0, y1 - y0,
                    gtk_widget_get_width (GTK_WIDGET (pane)), ph);
    g_assert_cmpfloat (y1 - y0, >=, 0.6 * ph);
  }
  g_assert_nonnull (strstr (gtk_label_get_text (GTK_LABEL (gtk_widget_get_first_child (
    gtk_widget_get_parent (gtk_widget_get_parent (GTK_WIDGET (tomo_volume_view_get_pane (
      view, TOMO_VOLUME_VIEW_XZ))))))), "vertical ×5"));
  ui_test_screenshot ("three-views.png");

  check_3d_pane (view);
  n0 = tomo_volume_view_get_n_updates (view);
  {
    /* The 3D title ellipsizes in its narrow pane, but not before the time
     * the preview took. */
    const char *title, *tooltip;
    GtkWidget *label;
    const char *ms;
    g_autofree char *head = NULL;
    PangoLayout *layout;
    int width;

    tomo_volume_view_get_3d_title (view, &title, &tooltip);
    ms = strstr (title, " ms");
    g_assert_nonnull (ms);
    head = g_strndup (title, ms + strlen (" ms") - title);
    label = gtk_widget_get_first_child (gtk_widget_get_parent (GTK_WIDGET (tomo_volume_view_get_3d (view))));
    g_assert_true (GTK_IS_LABEL (label));
    layout = gtk_widget_create_pango_layout (label, head);
    pango_layout_get_pixel_size (layout, &width, NULL);
    g_object_unref (layout);
    g_test_message ("3D title “%s…”: %d px of %d", head, width, gtk_widget_get_width (label));
    g_assert_cmpint (width, <=, gtk_widget_get_width (label));
  }

  /* A click in XY at (150, 330) moves XZ to y = 330 and YZ to x = 150. */
  tomo_volume_view_click (view, TOMO_VOLUME_VIEW_XY, 150.0, 330.0);
  g_assert_true (wait_updates (view, n0 + 1, 60));
  tomo_volume_view_get_position (view, &ix, &iy, &z);
  g_assert_cmpfloat (ix, ==, 150.0);
  g_assert_cmpfloat (iy, ==, 330.0);
  xz1 = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
  yz1 = volume_pane_data (view, TOMO_VOLUME_VIEW_YZ, &yw, &yh);
  xy1 = volume_pane_data (view, TOMO_VOLUME_VIEW_XY, &w, &h);
  assert_planes_moved (xz1, xz0, xw * xh, yz1, yz0, yw * yh, "after the click");
  /* …and they show that point's lines of the XY plane: row z of XZ is line
   * y = 330 of XY, row z of YZ is column x = 150. */
  {
    g_autofree float *line = g_new (float, w);

    for (guint x = 0; x < w; x++)
      line[x] = xy1[330 * w + x];
    g_assert_cmpfloat (tomo_test_rel_l2 (xz1 + (gsize) z * vex * xw, line, w), <, 1e-5);
    for (guint y = 0; y < w; y++)
      line[y] = xy1[y * w + 150];
    g_assert_cmpfloat (tomo_test_rel_l2 (yz1 + (gsize) z * vex * yw, line, w), <, 1e-5);
  }

  /* A click in XZ at (x 400, row 10) moves the XY plane to row 10: in the
   * 3D pane its outline (magenta) moves up, towards row 0 at the top. */
  {
    TomoVolume3dStats before, after;

    next_3d_frame (tomo_volume_view_get_3d (view), &before);
    tomo_volume_view_click (view, TOMO_VOLUME_VIEW_XZ, 400.0, 10.0 * vex);
    g_assert_true (wait_updates (view, n0 + 2, 60));
    next_3d_frame (tomo_volume_view_get_3d (view), &after);
    g_test_message ("3D pane: the XY plane's outline from %.3f to %.3f of the height "
                    "(row %g → 10)",
                    before.plane_y[0], after.plane_y[0], z);
    g_assert_cmpfloat (after.plane_y[0], <, before.plane_y[0] - 0.03);
  }
  tomo_volume_view_get_position (view, &ix, &iy, &z);
  g_assert_cmpfloat (z, ==, 10.0);
  g_assert_cmpfloat (ix, ==, 400.0);
  ui_test_screenshot ("three-views-moved.png");

  /* The XY plane is the window's row: the panel follows it, and the slice
   * exported (Ctrl+E, the download button) is the XY plane shown. */
  {
    g_autofree char *tif = g_build_filename (tmpdir, "three-views-xy.tif", NULL);
    g_autofree float *xy = volume_pane_data (view, TOMO_VOLUME_VIEW_XY, &w, &h);
    g_autofree float *exported = NULL;
    g_autoptr(GError) error = NULL;
    TomoSliceView *slice_view = tomo_window_get_slice_view (window);
    gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
    guint row, ew, eh, en, n = tomo_volume_view_get_n_updates (view);
    double center;

    g_object_get (window, "row", &row, "center", &center, NULL);
    g_assert_cmpuint (row, ==, 10);
    while (g_get_monotonic_time () < end
           && (tomo_slice_view_get_slice (slice_view) == NULL
               || tomo_slice_view_get_slice (slice_view)->row != 10
               || tomo_slice_view_get_slice (slice_view)->params.center != center))
      g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
    g_assert_true (tomo_window_export_slice_tiff (window, tif, &error));
    g_assert_no_error (error);
    exported = tomo_tiff_read_float (tif, &ew, &eh, &en, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (ew, ==, w);
    g_assert_cmpuint (eh, ==, h);
    g_test_message ("exported slice against the XY plane: %.2g", tomo_test_rel_l2 (exported, xy, w * h));
    g_assert_cmpfloat (tomo_test_rel_l2 (exported, xy, w * h), <, 1e-4);
    g_unlink (tif);

    /* …and the row set in the panel moves the XY plane. */
    g_object_set (window, "row", 12, NULL);
    g_assert_true (wait_updates (view, n + 1, 60));
    tomo_volume_view_get_position (view, &ix, &iy, &z);
    g_assert_cmpfloat (z, ==, 12.0);
    g_object_set (window, "row", 10, NULL);
    g_assert_true (wait_updates (view, n + 2, 60));
  }

  /* The oblique pane: at 0° it is the XZ plane through the point, at 90°
   * the YZ plane; turned and tilted it is neither. */
  {
    g_autofree float *xz = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
    g_autofree float *yz = volume_pane_data (view, TOMO_VOLUME_VIEW_YZ, &yw, &yh);
    g_autofree float *ob = NULL;
    guint ow, oh, n = tomo_volume_view_get_n_updates (view);

    tomo_volume_view_set_oblique (view, 0.0, 0.0);
    g_assert_true (wait_updates (view, n + 1, 60));
    ob = volume_pane_data (view, TOMO_VOLUME_VIEW_OBLIQUE, &ow, &oh);
    g_assert_cmpuint (ow, ==, xw);
    g_assert_cmpuint (oh, ==, xh);
    g_assert_cmpfloat (tomo_test_rel_l2 (ob, xz, ow * oh), <, 1e-6);
    g_free (ob);

    tomo_volume_view_set_oblique (view, 90.0, 0.0);
    g_assert_true (wait_updates (view, n + 2, 60));
    ob = volume_pane_data (view, TOMO_VOLUME_VIEW_OBLIQUE, &ow, &oh);
    g_assert_cmpfloat (tomo_test_rel_l2 (ob, yz, ow * oh), <, 1e-6);
    g_free (ob);

    tomo_volume_view_set_oblique (view, 35.0, 20.0);
    g_assert_true (wait_updates (view, n + 3, 60));
    ob = volume_pane_data (view, TOMO_VOLUME_VIEW_OBLIQUE, &ow, &oh);
    g_test_message ("oblique 35°/20° differs from XZ by %.3f, from YZ by %.3f",
                    tomo_test_rel_l2 (ob, xz, ow * oh), tomo_test_rel_l2 (ob, yz, ow * oh));
    g_assert_cmpfloat (tomo_test_rel_l2 (ob, xz, ow * oh), >, 0.05);
    g_assert_cmpfloat (tomo_test_rel_l2 (ob, yz, ow * oh), >, 0.05);
    for (guint i = 0; i < ow * oh; i++)
      g_assert_true (isfinite (ob[i]));
    ui_test_screenshot ("four-views-oblique.png");
  }

  /* The centre control of the window reaches every view. */
  {
    g_autofree float *xz = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
    g_autofree float *xz2 = NULL;
    guint n = tomo_volume_view_get_n_updates (view);

    /* From the estimate (≈ 258.87) back to the detector middle. */
    g_object_set (window, "center", 255.5, NULL);
    g_assert_true (wait_updates (view, n + 1, 60));
    xz2 = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
    g_test_message ("centre 258.87 → 255.5: XZ changed by %.3f",
                    tomo_test_rel_l2 (xz2, xz, xw * xh));
    g_assert_cmpfloat (tomo_test_rel_l2 (xz2, xz, xw * xh), >, 0.01);
  }

  /* Another filter: a new store, made once the old one is freed (on a worker). */
  {
    g_autofree float *xz = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
    g_autofree float *xz2 = NULL;
    guint n = tomo_volume_view_get_n_updates (view);
    guint freed = tomo_volume_view_get_n_stores_freed ();

    g_object_set (window, "filter", "shepp-logan", NULL);
    g_assert_true (wait_updates (view, n + 1, 60));
    g_assert_cmpuint (tomo_volume_view_get_n_stores_freed (), ==, freed + 1);
    xz2 = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
    g_test_message ("ram-lak → shepp-logan: XZ changed by %.3f",
                    tomo_test_rel_l2 (xz2, xz, xw * xh));
    g_assert_cmpfloat (tomo_test_rel_l2 (xz2, xz, xw * xh), >, 1e-3);
  }

  /* True aspect on request: 64 rows, a band in its pane. */
  {
    guint n = tomo_volume_view_get_n_updates (view);
    g_autofree float *xz = NULL;

    tomo_volume_view_set_vertical_exaggeration (view, 1);
    g_assert_true (wait_updates (view, n + 1, 60));
    g_assert_cmpuint (tomo_volume_view_get_vertical_exaggeration (view), ==, 1);
    g_assert_nonnull (strstr (tomo_volume_view_get_status (view), "true aspect"));
    xz = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &xw, &xh);
    g_assert_cmpuint (xh, ==, 64);
    ui_test_screenshot ("three-views-true-aspect.png");
    tomo_volume_view_set_vertical_exaggeration (view, 0);
    g_assert_true (wait_updates (view, n + 2, 60));
    vex = tomo_volume_view_get_vertical_exaggeration (view);
  }

  drag_in_xy (view);

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

static float
half_to_float (guint16 h)
{
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0 ? ldexpf ((float) m, -24)
                   : e == 31 ? (m != 0 ? NAN : INFINITY) : ldexpf ((float) (m | 0x400), e - 25);

  return (h & 0x8000) ? -v : v;
}

/* A new preview of the view (a new size), waited for until drawn, that
 * reached the texture by `path`; the 3D pane's title and tooltip then. */
static void
preview_again (TomoVolumeView *view,
               guint           size,
               const char     *path,
               const char    **title,
               const char    **tooltip)
{
  TomoVolume3d *v3d = tomo_volume_view_get_3d (view);
  guint n = tomo_volume_view_get_n_updates (view), f;

  tomo_volume_view_set_preview_size (view, size);
  g_assert_true (wait_updates (view, n + 1, 60));
  f = tomo_volume_3d_get_n_frames (v3d);
  gtk_widget_queue_draw (GTK_WIDGET (v3d));
  g_assert_true (wait_frames (v3d, f + 1, 30));
  tomo_volume_view_get_3d_title (view, title, tooltip);
  g_test_message ("3D title: %s", *title);
  g_assert_cmpstr (tomo_volume_3d_get_upload_path (v3d), ==, path);
}

/* The GPU store's preview, made here as the view makes it, through host
 * memory: what the 3D pane must hold after its device preview failed. */
static float *
reference_preview (TomoScan *scan,
                   guint     n_xy,
                   guint     nz)
{
  TomoPreviewRequest request = { n_xy, n_xy, nz };
  TomoReconParams params;
  g_autofree char *filter = NULL;
  g_autofree char *interp = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (TomoVolume) vol = NULL;

  tomo_recon_params_init (&params, tomo_scan_get_width (scan));
  g_object_get (window, "center", &params.center, "filter", &filter, "interp", &interp, NULL);
  g_assert_true (tomo_filter_type_from_string (filter, &params.filter, NULL));
  g_assert_true (tomo_interp_from_string (interp, &params.interp, NULL));
  vol = tomo_volume_new (scan, 0, tomo_scan_get_height (scan), &params, TOMO_BACKEND_GPU, 0,
                         &error);
  g_assert_no_error (error);
  g_assert_true (tomo_volume_fill (vol, NULL, NULL, NULL, &error));
  request.center = params.center;
  request.interp = params.interp;
  request.out = g_new (float, (gsize) n_xy * n_xy * nz);
  g_assert_true (tomo_volume_preview (vol, &request, &error));
  g_assert_no_error (error);
  return request.out;
}

/* On a GL context that runs on a CUDA device (the GPU machine's window,
 * VirtualGL's EGL back end): the preview reaches the 3D pane through
 * interop and its title says so.  A preview that cannot stay on the device
 * (TOMO_GPU_FAIL=keep, once) comes through host memory: the three views
 * still update, the pane holds that volume (the GPU store's own preview,
 * bit for bit after half rounding), the title says why; the next one takes
 * interop again.  Two failures in a row: host memory until the store is
 * made again.  A store that does not fit on the device: the CPU store, the pane
 * uploads, nothing fails.  Skips without a CUDA device or where GL does not
 * run on one (Mesa). */
static void
test_preview_device_fails (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr (GError) error = NULL;
  GtkStack *stack;
  TomoVolumeView *view;
  TomoVolume3d *v3d;
  const char *title, *tooltip;
  guint n, nx, ny, nz;

  if (skip_without_display ())
    return;
  if (!tomo_test_need_gpu ("the 3D preview's interop path needs a CUDA device"))
    return;
  view = volume_window_new (&stack);
  v3d = tomo_volume_view_get_3d (view);
  g_assert_true (open_and_wait (sample));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win-volume.three-views", NULL));
  g_assert_true (wait_updates (view, 1, 120));
  g_assert_true (wait_frames (v3d, 1, 30));
  if (!tomo_volume_3d_get_interop (v3d))
    {
      g_test_skip ("the 3D pane's GL context does not run on a CUDA device");
      return;
    }
  g_test_message ("status: %s", tomo_volume_view_get_status (view));
  g_assert_true (g_str_has_prefix (tomo_volume_view_get_status (view), "GPU store"));

  /* Interop: nothing of the volume on the host. */
  preview_again (view, 64, "CUDA–GL interop", &title, &tooltip);
  g_assert_nonnull (strstr (title, "CUDA–GL interop"));
  g_assert_null (tomo_volume_3d_peek_half (v3d, &nx, &ny, &nz));

  /* The device preview fails once: through host memory. */
  g_assert_true (tomo_gpu_fault_configure ("keep:1", 0, &error));
  preview_again (view, 128, "GL upload", &title, &tooltip);
  g_test_message ("3D tooltip: %s", tooltip);
  g_assert_false (g_str_has_prefix (tomo_volume_view_get_status (view), "Three views unavailable"));
  for (guint k = 0; k < 4; k++)
    g_assert_nonnull (tomo_slice_view_get_slice (tomo_volume_view_get_pane (view, k)));
  g_assert_nonnull (strstr (title, "GL upload, device preview failed"));
  g_assert_nonnull (strstr (tooltip, "injected fault"));
  {
    const guint16 *half = tomo_volume_3d_peek_half (v3d, &nx, &ny, &nz);
    g_autofree float *ref = NULL;
    g_autofree guint16 *ref_half = NULL;
    g_autofree float *got = NULL;
    gsize nv, same = 0;

    g_assert_nonnull (half);
    g_assert_cmpuint (nx, ==, 128);
    g_assert_cmpuint (ny, ==, 128);
    g_assert_cmpuint (nz, ==, 64);
    nv = (gsize) nx * ny * nz;
    ref = reference_preview (tomo_window_get_scan (window), nx, nz);
    ref_half = tomo_volume_3d_pack_half (ref, nv);
    got = g_new (float, nv);
    for (gsize i = 0; i < nv; i++)
      {
        got[i] = half_to_float (half[i]);
        same += half[i] == ref_half[i];
      }
    g_test_message ("host volume after the failed device preview: %" G_GSIZE_FORMAT " of %"
                    G_GSIZE_FORMAT " halves equal to the GPU store's own preview, relative L2 "
                    "%.3g (tolerance 1e-3: half rounding)", same, nv,
                    tomo_test_rel_l2 (got, ref, nv));
    g_assert_cmpfloat (tomo_test_rel_l2 (got, ref, nv), <=, 1e-3);
  }
  ui_test_screenshot ("preview-device-failed.png");

  /* The next preview stays on the device again. */
  preview_again (view, 64, "CUDA–GL interop", &title, &tooltip);
  g_assert_null (strstr (title, "device preview failed"));

  /* Twice in a row: host memory until the store is made again, said in the tooltip. */
  for (guint i = 0; i < 2; i++)
    {
      g_assert_true (tomo_gpu_fault_configure ("keep:1", 0, &error));
      preview_again (view, i == 0 ? 128 : 64, "GL upload", &title, &tooltip);
    }
  g_assert_true (tomo_gpu_fault_configure (NULL, 0, &error));
  preview_again (view, 128, "GL upload", &title, &tooltip);
  g_test_message ("after two failures: %s", tooltip);
  g_assert_nonnull (strstr (tooltip, "as the next ones will until the scan or the filter changes"));

  /* A store that does not fit on the device (1 KiB allowed): the CPU
   * store, the pane uploads, the views update. */
  g_assert_true (tomo_gpu_fault_configure (NULL, 1024, &error));
  n = tomo_volume_view_get_n_updates (view);
  g_object_set (window, "filter", "shepp-logan", NULL);
  g_assert_true (wait_updates (view, n + 1, 120));
  g_test_message ("store too big: %s", tomo_volume_view_get_status (view));
  g_assert_true (g_str_has_prefix (tomo_volume_view_get_status (view), "CPU store"));
  g_assert_nonnull (strstr (tomo_volume_view_get_status (view), "GPU not used"));
  preview_again (view, 64, "GL upload", &title, &tooltip);
  /* A new store: the earlier failures are not its. */
  g_assert_null (strstr (title, "device preview failed"));
  g_assert_nonnull (tomo_volume_3d_peek_half (v3d, &nx, &ny, &nz));
  g_assert_true (tomo_gpu_fault_configure (NULL, 0, &error));
  ui_test_screenshot ("preview-cpu-store.png");
  gtk_window_destroy (GTK_WINDOW (window));
  window = NULL;
}

/* The 3D texture's half floats (rounded to nearest even), against
 * Python's struct 'e' format. */
static void
test_half (void)
{
  static const float in[] = { 1.0f, -2.0f, 65504.0f, 0.1f, 6.1e-5f, 5.96e-8f, 2.9e-8f, 1e-9f,
                              3.14159f, -0.0f, 65520.0f, 1e6f, -INFINITY };
  static const guint16 want[] = { 0x3c00, 0xc000, 0x7bff, 0x2e66, 0x03ff, 0x0001, 0x0000, 0x0000,
                                  0x4248, 0x8000, 0x7c00, 0x7c00, 0xfc00 };
  g_autofree guint16 *out = tomo_volume_3d_pack_half (in, G_N_ELEMENTS (in));
  float nan = NAN;
  g_autofree guint16 *h_nan = tomo_volume_3d_pack_half (&nan, 1);

  for (guint i = 0; i < G_N_ELEMENTS (in); i++)
    g_assert_cmphex (out[i], ==, want[i]);
  /* NaN stays NaN (exponent all ones, a fraction bit set). */
  g_assert_cmphex (h_nan[0] & 0x7c00, ==, 0x7c00);
  g_assert_cmphex (h_nan[0] & 0x03ff, !=, 0);
}

int
main (int    argc,
      char **argv)
{
  ui_test_init (&argc, &argv);
  g_test_add_func ("/tomo/ui/volume/half", test_half);
  g_test_add_func ("/tomo/ui/volume/three-views", test_three_views);
  g_test_add_func ("/tomo/ui/volume/preview-device-fails", test_preview_device_fails);
  return ui_test_run ();
}
