/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The three views following a live scan (run under Xvfb): a TomoPackets
 * stream of the sample on loopback arrives in quarters while the window
 * shows the three views; the XZ plane and the 3D preview change as
 * projections arrive, the status says how many the views hold, the refills
 * keep to their interval, and once the scan is complete the XZ plane
 * equals the one made from the file. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gtk/gtk.h>

#include "tomo-application.h"
#include "tomo-live-link.h"
#include "tomo-volume.h"
#include "tomo-volume-view.h"
#include "tomo-window.h"
#include "test-live-util.h"
#include "ui-test-common.h"

#define WAIT_S 120

/* "Live: the views hold 90 of 360 projections (store refilled 2× …": the
 * count held, and the refills; FALSE before the first live update. */
static gboolean
live_state (TomoVolumeView *view,
            guint          *held,
            guint          *refills)
{
  const char *status = tomo_volume_view_get_status (view);
  const char *p = status != NULL ? strstr (status, "the views hold ") : NULL;
  const char *r = status != NULL ? strstr (status, "store refilled ") : NULL;

  if (p == NULL || r == NULL || sscanf (p, "the views hold %u", held) != 1)
    return FALSE;
  *refills = (guint) g_ascii_strtoull (r + strlen ("store refilled "), NULL, 10);
  return TRUE;
}

/* Iterates until the views hold at least `n` projections and the preview
 * is of the same store (the last update has ended). */
static gboolean
wait_held (TomoVolumeView *view,
           guint           n)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_S * G_USEC_PER_SEC;
  guint held = 0, refills;

  while (g_get_monotonic_time () < deadline)
    {
      if (live_state (view, &held, &refills) && held >= n
          && strstr (tomo_volume_view_get_status (view), "refilling") == NULL)
        {
          /* The views are idle once an iteration of a second starts no update. */
          guint u = tomo_volume_view_get_n_updates (view);

          tomo_test_spin (1000);
          if (u == tomo_volume_view_get_n_updates (view))
            return TRUE;
          continue;
        }
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (1000);
    }
  g_test_message ("waited for %u projections, the views hold %u: %s", n, held,
                  tomo_volume_view_get_status (view));
  return FALSE;
}

static double
preview_mean (TomoVolume3d *v3d)
{
  guint f = tomo_volume_3d_get_n_frames (v3d);
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  TomoVolume3dStats stats;

  gtk_widget_queue_draw (GTK_WIDGET (v3d));
  while (tomo_volume_3d_get_n_frames (v3d) <= f && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
  g_assert_cmpuint (tomo_volume_3d_get_n_frames (v3d), >, f);
  tomo_volume_3d_get_stats (v3d, &stats);
  return stats.mean_grey;
}

/* The XZ plane of the file itself, as the view makes it (through row y,
 * vex samples per row), at the window's centre, filter and interpolation. */
static float *
file_xz (TomoScan   *file,
         TomoWindow *window,
         double      y,
         guint       vex)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoVolume) vol = NULL;
  g_autofree char *filter = NULL, *interp = NULL;
  guint W = tomo_scan_get_width (file), H = tomo_scan_get_height (file);
  TomoReconParams params;
  TomoPlane plane;
  float *out;

  tomo_recon_params_init (&params, W);
  g_object_get (window, "center", &params.center, "filter", &filter, "interp", &interp, NULL);
  g_assert_true (tomo_filter_type_from_string (filter, &params.filter, NULL));
  g_assert_true (tomo_interp_from_string (interp, &params.interp, NULL));
  vol = tomo_volume_new (file, 0, H, &params, TOMO_BACKEND_CPU, 0, &error);
  g_assert_no_error (error);
  g_assert_true (tomo_volume_fill (vol, NULL, NULL, NULL, &error));
  tomo_plane_init_xz (&plane, round (y), 0, W, 0, H);
  plane.height = (H - 1) * vex + 1;
  for (guint d = 0; d < 3; d++)
    plane.v[d] /= vex;
  out = g_new (float, (gsize) plane.width * plane.height);
  g_assert_true (tomo_volume_plane (vol, &plane, params.center, params.interp, out, &error));
  g_assert_no_error (error);
  return out;
}

static void
test_follow (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) file = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autofree float *proj = NULL, *xz[3] = { NULL }, *want = NULL;
  TomoLiveReceiverOptions options;
  TomoVolumeView *view;
  GtkStack *stack;
  guint n, w, h, held = 0, refills = 0;
  double mean[3], ix, iy, z;
  gint64 t0;

  if (skip_without_display ())
    return;
  file = tomo_test_open_scan (tomo_test_require_env ("TOMO_SAMPLE_SCAN"));
  n = tomo_scan_get_n_projections (file);
  proj = read_frames (file, TOMO_FRAME_PROJECTION);

  view = volume_window_new (&stack);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win-volume.three-views", NULL));
  tomo_volume_3d_set_probe (tomo_volume_view_get_3d (view), TRUE);
  /* The stream starts once the window is on screen (the views appear with
   * the first scan). */
  {
    gint64 deadline = g_get_monotonic_time () + WAIT_S * G_USEC_PER_SEC;

    while (!gtk_widget_get_mapped (GTK_WIDGET (window)) && g_get_monotonic_time () < deadline)
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (1000);
    g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (window)));
  }

  loopback_options (&options, TOMO_LIVE_PROTOCOL_TOMOP);
  g_assert_true (tomo_live_link_attach (window, &options, &error));
  g_assert_no_error (error);
  tx = tomo_live_sender_new (tomo_live_link_get_endpoint (window), TOMO_LIVE_PROTOCOL_TOMOP,
                             FALSE, 20000, &error);
  g_assert_no_error (error);
  t0 = g_get_monotonic_time ();

  /* A quarter, then half: the views hold them, XZ and the preview change. */
  send_scan_header (tx, file);
  send_projections (tx, file, proj, 0, n / 4, 0);
  g_assert_true (wait_held (view, n / 4));
  xz[0] = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &w, &h);
  mean[0] = preview_mean (tomo_volume_view_get_3d (view));
  g_test_message ("a quarter: %s", tomo_volume_view_get_status (view));
  g_assert_nonnull (strstr (tomo_volume_view_get_status (view), "Live: the views hold"));

  send_projections (tx, file, proj, n / 4, n / 2, 0);
  g_assert_true (wait_held (view, n / 2));
  xz[1] = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &w, &h);
  mean[1] = preview_mean (tomo_volume_view_get_3d (view));
  g_test_message ("half: %s", tomo_volume_view_get_status (view));
  ui_test_screenshot ("live-three-views-half.png");

  send_projections (tx, file, proj, n / 2, n, 0);
  g_assert_true (tomo_live_sender_send_end (tx, &error));
  g_assert_true (wait_held (view, n));
  xz[2] = volume_pane_data (view, TOMO_VOLUME_VIEW_XZ, &w, &h);
  mean[2] = preview_mean (tomo_volume_view_get_3d (view));
  g_assert_true (live_state (view, &held, &refills));
  g_test_message ("all: %s", tomo_volume_view_get_status (view));

  tomo_volume_view_get_position (view, &ix, &iy, &z);
  want = file_xz (file, window, iy, tomo_volume_view_get_vertical_exaggeration (view));
  g_test_message ("XZ (%u × %u): quarter → half changed by %.3f, half → all by %.3f; all vs "
                  "the file's XZ %.2g (relative L2); 3D preview mean grey %.2f, %.2f, %.2f; "
                  "%u refills in %.1f s", w, h, tomo_test_rel_l2 (xz[1], xz[0], (gsize) w * h),
                  tomo_test_rel_l2 (xz[2], xz[1], (gsize) w * h),
                  tomo_test_rel_l2 (xz[2], want, (gsize) w * h),
                  mean[0], mean[1], mean[2], refills, (g_get_monotonic_time () - t0) / 1e6);
  g_assert_cmpuint (held, ==, n);
  g_assert_cmpfloat (tomo_test_rel_l2 (xz[1], xz[0], (gsize) w * h), >, 0.05);
  g_assert_cmpfloat (tomo_test_rel_l2 (xz[2], xz[1], (gsize) w * h), >, 0.05);
  /* TomoPackets carries the angles as float32. */
  g_assert_cmpfloat (tomo_test_rel_l2 (xz[2], want, (gsize) w * h), <, 1e-3);
  g_assert_cmpfloat (fabs (mean[1] - mean[0]), >, 0.2);
  g_assert_cmpfloat (fabs (mean[2] - mean[1]), >, 0.2);
  /* At least one refill per quarter that came after the first fill, and no
   * more than one per LIVE_MIN_INTERVAL (0.5 s) of the test. */
  g_assert_cmpuint (refills, >=, 2);
  g_assert_cmpfloat (refills, <=, (g_get_monotonic_time () - t0) / 0.5e6 + 1);

  gtk_window_destroy (GTK_WINDOW (window));
  window = NULL;
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

int
main (int    argc,
      char **argv)
{
  ui_test_init (&argc, &argv);
  g_test_add_func ("/tomo/live/ui/three-views-follow", test_follow);
  return ui_test_run ();
}
