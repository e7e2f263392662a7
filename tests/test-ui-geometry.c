/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The window and 360° scans: an offset-axis scan opens in the stitched
 * geometry Auto picks (the panel says so, the slice is 2·W − overlap wide,
 * the centre on the axis); choosing 360° in the panel shows it W wide.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-tiff-writer.h"
#include "tomo-center.h"
#include "tomo-center-sweep.h"
#include "tomo-geometry.h"
#include "tomo-window-private.h"
#include "ui-test-common.h"

/* Iterates until the slice shown is `width` wide; FALSE after 60 s. */
static gboolean
wait_for_width (guint width)
{
  TomoSliceView *view = tomo_window_get_slice_view (window);
  gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < end)
    {
      TomoSlice *slice = tomo_slice_view_get_slice (view);

      if (slice != NULL && slice->width == width)
        return TRUE;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  return FALSE;
}

/* 128 columns, the axis at column 12.5: stitched 128 + (127 − 25) = 230
 * wide, the axis at 12.5 + 102 = 114.5 in it. */
static char *
make_offset_scan (void)
{
  char *path = g_build_filename (tmpdir, "offset.h5", NULL);
  g_autofree char *cmd = NULL, *err = NULL;
  int status = 0;

  if (g_file_test (path, G_FILE_TEST_EXISTS))
    return path;
  cmd = g_strdup_printf ("%s phantom --width 128 --height 4 --projections 360 --angle-range 360 "
                         "--center 12.5 --object-width 230 --kind disks --no-noise -o %s",
                         g_getenv ("TOMOLIVE"), path);
  g_assert_true (g_spawn_command_line_sync (cmd, NULL, &err, &status, NULL));
  g_assert_cmpint (status, ==, 0);
  return path;
}

static void
test_offset_scan (void)
{
  g_autofree char *path = NULL, *label = NULL;
  const char *tip;
  GtkComboBox *combo;
  double center;

  UI_TEST_REQUIRE_WINDOW ();
  path = make_offset_scan ();

  g_assert_true (open_and_wait (path));
  g_assert_true (wait_for_width (230));
  combo = GTK_COMBO_BOX (window->panel->geometry_combo);
  g_assert_cmpstr (gtk_combo_box_get_active_id (combo), ==, "auto");
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (combo)));
  label = gtk_combo_box_text_get_active_text (GTK_COMBO_BOX_TEXT (combo));
  g_assert_cmpstr (label, ==, "Auto (offset axis, left)");
  tip = gtk_widget_get_tooltip_text (GTK_WIDGET (combo));
  g_assert_nonnull (strstr (tip, "stitched"));
  g_object_get (window, "center", &center, NULL);
  g_test_message ("opened: %s; centre %.2f", tip, center);
  /* The control starts on the axis of the stitched rows, or where the
   * background finder put it. */
  g_assert_cmpfloat (fabs (center - 114.5), <, 0.5);

  /* 360°: every projection, the detector's width. */
  gtk_combo_box_set_active_id (combo, "360");
  g_assert_true (wait_for_width (128));
  g_assert_cmpuint (tomo_scan_get_width (window->scan), ==, 128);
  g_assert_true (window->base_scan != window->scan || tomo_scan_get_n_projections (window->scan) == 360);
  /* And back. */
  gtk_combo_box_set_active_id (combo, "offset");
  g_assert_true (wait_for_width (230));
}

/* Waits until the slice shown is of the window's centre now. */
static void
wait_current_center (void)
{
  TomoSliceView *view = tomo_window_get_slice_view (window);
  gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  double center;

  g_object_get (window, "center", &center, NULL);
  while (g_get_monotonic_time () < end
         && (tomo_slice_view_get_slice (view) == NULL
             || tomo_slice_view_get_slice (view)->params.center != center))
    g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
  g_assert_nonnull (tomo_slice_view_get_slice (view));
  g_assert_cmpfloat (tomo_slice_view_get_slice (view)->params.center, ==, center);
}

/* Waits until the rows are stitched about detector column `center`. */
static void
wait_stitched_about (double center)
{
  gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < end && fabs (window->plan.center - center) > 1e-9)
    g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
  g_assert_cmpfloat_with_epsilon (window->plan.center, center, 1e-9);
}

/* The window's export of `row` is the command line's at `center`. */
static void
assert_row_matches_cli (const char *path,
                        const char *center,
                        guint       row,
                        const char *ui_tif,
                        const char *cli_tif)
{
  g_autofree char *row_text = g_strdup_printf ("%u", row);
  const char *argv[] = { g_getenv ("TOMOLIVE"), "reconstruct", path, "--geometry", "offset",
                         "--center", center, "--row", row_text, "--backend", "cpu", "--filter",
                         "ram-lak", "--interp", "linear", "-q", "-o", cli_tif, NULL };

  assert_export_matches_cli (ui_tif, cli_tif, argv);
}

/* Opens the offset scan on row 1, the centre (unpinned) moved to `center`
 * and the rows stitched about it. */
static void
open_offset_row1_at (const char *path,
                     double      center)
{
  g_assert_true (open_and_wait (path));
  g_assert_true (wait_for_width (230));
  gtk_toggle_button_set_active (window->panel->center_pin, FALSE);
  _tomo_window_set_row (window, 1);
  gtk_adjustment_set_value (window->panel->center_adjustment, center);
  wait_stitched_about (center);
}

/* The centre of an offset-axis scan is a detector column, as --center is:
 * the field shows it (to the 0.01 px the window keeps), the parameters
 * file saves it with the geometry, loading them in another geometry shows
 * the saved one again, and the slice is then the command line's for the
 * number in the field. */
static void
test_offset_detector_column (void)
{
  g_autofree char *path = make_offset_scan ();
  g_autofree char *params = g_strconcat (path, ".tomolive", NULL);
  g_autofree char *ui_tif = g_build_filename (tmpdir, "offset-ui.tif", NULL);
  g_autofree char *cli_tif = g_build_filename (tmpdir, "offset-cli.tif", NULL);
  g_autofree char *saved_geometry = NULL;
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  GtkEditable *field;
  GtkComboBox *combo;
  const char *subtitle;
  double center, shift, field_value, saved;
  guint row;

  UI_TEST_REQUIRE_WINDOW ();
  g_assert_true (open_and_wait (path));
  g_assert_true (wait_for_width (230));
  /* The title bar describes the file, not its stitched rows. */
  subtitle = gtk_label_get_text (window->subtitle_label);
  g_test_message ("subtitle: %s", subtitle);
  g_assert_nonnull (strstr (subtitle, "128 × 4, 360 projections"));
  g_assert_nonnull (strstr (subtitle, "offset axis"));

  /* The estimate of the open does not move a kept centre. */
  gtk_toggle_button_set_active (window->panel->center_pin, TRUE);
  g_object_get (window, "center-shift", &shift, NULL);
  g_assert_cmpfloat (shift, ==, 102);
  g_object_set (window, "center", 102 + 12.6234, NULL);
  g_object_get (window, "center", &center, NULL);
  field = GTK_EDITABLE (window->panel->center_spin);
  g_assert_cmpstr (gtk_editable_get_text (field), ==, "12.62");
  field_value = g_ascii_strtod (gtk_editable_get_text (field), NULL);
  g_assert_cmpfloat (center, ==, field_value + shift);
  g_assert_cmpfloat (gtk_adjustment_get_value (window->panel->center_adjustment), ==, field_value);

  g_assert_true (_tomo_window_save_params (window, &error));
  g_assert_no_error (error);
  g_assert_true (g_key_file_load_from_file (kf, params, G_KEY_FILE_NONE, &error));
  g_assert_no_error (error);
  saved = g_key_file_get_double (kf, "reconstruction", "center", &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (saved, ==, field_value);
  saved_geometry = g_key_file_get_string (kf, "reconstruction", "geometry", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (saved_geometry, ==, "offset");

  /* Loaded in 360°: the offset geometry again, about the saved axis. */
  combo = GTK_COMBO_BOX (window->panel->geometry_combo);
  gtk_combo_box_set_active_id (combo, "360");
  g_assert_true (wait_for_width (128));
  g_assert_true (_tomo_window_load_params (window, &error));
  g_assert_no_error (error);
  {
    gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

    while (g_get_monotonic_time () < end
           && (tomo_scan_get_width (window->scan) == 128 || window->pending_params != NULL))
      g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
  }
  g_assert_cmpstr (gtk_combo_box_get_active_id (combo), ==, "offset");
  g_assert_cmpuint (tomo_scan_get_width (window->scan), ==, 128 + 127 - (guint) lround (2 * 12.62));
  g_assert_cmpstr (gtk_editable_get_text (field), ==, "12.62");
  g_object_get (window, "center", &center, "center-shift", &shift, "row", &row, NULL);
  g_assert_cmpfloat (center, ==, 12.62 + shift);   /* as --center 12.62 is shifted */

  g_object_set (window, "filter", "ram-lak", "interp", "linear", NULL);
  wait_current_center ();
  assert_row_matches_cli (path, gtk_editable_get_text (field), row, ui_tif, cli_tif);

  gtk_toggle_button_set_active (window->panel->center_pin, FALSE);
  g_unlink (params);
}

/* Moving an offset scan's centre stitches its rows anew about it (once it
 * rests): the slice is then the command line's for the number in the
 * field, the row stays, and the control keeps the detector column. */
static void
test_offset_restitch (void)
{
  g_autofree char *path = make_offset_scan ();
  g_autofree char *ui_tif = g_build_filename (tmpdir, "restitch-ui.tif", NULL);
  g_autofree char *cli_tif = g_build_filename (tmpdir, "restitch-cli.tif", NULL);
  GtkEditable *field;
  guint row;

  UI_TEST_REQUIRE_WINDOW ();
  /* The axis is at 12.5; 13.40 stitches 128 + 127 − round (26.8) = 228 wide. */
  open_offset_row1_at (path, 13.40);
  /* The control spans the detector, before and after: a drag paused long
   * enough to restitch keeps its range under the pointer. */
  g_assert_cmpfloat (gtk_adjustment_get_lower (window->panel->center_adjustment), ==, 0);
  g_assert_cmpfloat (gtk_adjustment_get_upper (window->panel->center_adjustment), ==, 127);
  g_assert_true (wait_for_width (228));
  field = GTK_EDITABLE (window->panel->center_spin);
  g_assert_cmpstr (gtk_editable_get_text (field), ==, "13.40");
  g_object_get (window, "row", &row, NULL);
  g_assert_cmpuint (row, ==, 1);
  g_assert_true (tomo_center_finder_get_scan (window->panel->center_finder) == window->scan);
  g_object_set (window, "filter", "ram-lak", "interp", "linear", NULL);
  wait_current_center ();
  assert_row_matches_cli (path, "13.40", 1, ui_tif, cli_tif);
  /* Exported at once after a move, before the centre rests: the rows are
   * stitched about it first. */
  gtk_adjustment_set_value (window->panel->center_adjustment, 13.10);
  g_assert_cmpuint (window->restitch_id, !=, 0);
  assert_row_matches_cli (path, "13.10", 1, ui_tif, cli_tif);
  g_assert_cmpfloat_with_epsilon (window->plan.center, 13.10, 1e-9);
  /* The panel says why and about what, and Auto's label the side: right
   * once the centre is past the middle (128 + round (200 − 127) = 201). */
  {
    GtkWidget *combo = GTK_WIDGET (window->panel->geometry_combo);
    g_autofree char *label = NULL;

    g_assert_nonnull (strstr (gtk_widget_get_tooltip_text (combo), "13.10 on the detector)"));
    g_assert_nonnull (strstr (gtk_widget_get_tooltip_text (combo), "stitched again about the centre"));
    gtk_adjustment_set_value (window->panel->center_adjustment, 100.0);
    wait_stitched_about (100.0);
    g_assert_true (wait_for_width (201));
    label = gtk_combo_box_text_get_active_text (GTK_COMBO_BOX_TEXT (combo));
    g_assert_cmpstr (label, ==, "Auto (offset axis, right)");
    g_assert_cmpstr (gtk_combo_box_get_active_id (GTK_COMBO_BOX (combo)), ==, "auto");
    g_assert_cmpfloat (gtk_adjustment_get_upper (window->panel->center_adjustment), ==, 127);
  }
}

/* Clicks candidate `index` of the sweep's grid. */
static void
pick_candidate (TomoCenterSweep *sweep,
                guint            index)
{
  GtkWidget *grid = ui_find_widget (GTK_WIDGET (sweep), GTK_TYPE_GRID);

  for (GtkWidget *c = gtk_widget_get_first_child (grid); c != NULL; c = gtk_widget_get_next_sibling (c))
    if (GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (c), "index")) == index)
      {
        g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (c);

        for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
          {
            g_autoptr(GObject) controller = g_list_model_get_item (controllers, i);

            if (GTK_IS_GESTURE_CLICK (controller))
              {
                g_signal_emit_by_name (controller, "pressed", 1, 1.0, 1.0);
                return;
              }
          }
      }
  g_error ("no candidate %u in the sweep", index);
}

/* An offset-axis scan's rows are stitched about the axis: the sweep
 * reconstructs each candidate in the rows stitched about it, as the
 * command line does for that --center.  Its scores are those, its best is
 * the axis, a pick is the detector column the label shows, and the window
 * stitching its rows about the pick leaves the sweep open and right. */
static void
test_offset_sweep (void)
{
  g_autofree char *path = make_offset_scan ();
  g_autofree char *ui_tif = g_build_filename (tmpdir, "sweep-ui.tif", NULL);
  g_autofree char *cli_tif = g_build_filename (tmpdir, "sweep-cli.tif", NULL);
  g_autoptr(TomoScan) base = NULL;
  g_autoptr(GError) error = NULL;
  TomoCenterFinder *finder;
  TomoCenterSweep *sweep;
  const double *centers, *scores;
  g_autofree double *kept = NULL;
  const guint axis = 4; /* 12.50 */
  guint n, best = 0, row;

  UI_TEST_REQUIRE_WINDOW ();
  /* 16 candidates 0.5 px apart about 14.25: 10.50 … 18.00, the axis
   * (12.5) the fifth. */
  open_offset_row1_at (path, 14.25);
  base = g_object_ref (window->base_scan);
  g_assert_true (tomo_window_get_stitched_base (window) == base);

  finder = window->panel->center_finder;
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (finder), "finder.sweep", NULL));
  sweep = ui_find_sweep ();
  g_assert_nonnull (sweep);
  g_assert_true (ui_wait_sweep (sweep));
  g_assert_true (tomo_center_sweep_get_result (sweep, &n, &centers, &scores));
  g_assert_cmpuint (n, ==, 16);
  /* The row shown, not the one the estimate at open took (the middle). */
  g_assert_true (ui_has_label (GTK_WIDGET (sweep), "Row 1 ·"));
  g_assert_true (ui_has_label (GTK_WIDGET (sweep), "each candidate stitched about itself"));
  for (guint i = 0; i < n; i++)
    {
      g_assert_cmpfloat_with_epsilon (centers[i], 10.5 + 0.5 * i, 1e-9);
      if (scores[i] < scores[best])
        best = i;
    }
  /* Within a step of the axis, and a minimum: the curve rises to both
   * ends.  (All candidates in the rows stitched about 14.25 gave a curve
   * falling to its end, 18.00, at 0.27 against 0.00002 here.) */
  g_test_message ("best %.2f", centers[best]);
  g_assert_cmpfloat (fabs (centers[best] - 12.5), <=, 0.5);
  g_assert_cmpfloat (scores[0], >, 1.2 * scores[best]);
  g_assert_cmpfloat (scores[n - 1], >, 1.2 * scores[best]);

  /* Each score is that of the candidate's own stitch's middle, the view
   * the grid shows, as wide as the narrowest slice (10.50: 128 + 127 − 21
   * = 234; 18.00: 219). */
  for (guint i = 0; i < n; i += 5)
    {
      const TomoGeometry offset = { TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY };
      TomoGeometryPlan plan;
      g_autoptr(TomoScan) scan = tomo_geometry_present (base, &offset, centers[i], &plan, &error);
      guint w = tomo_scan_get_width (scan), n_proj = tomo_scan_get_n_projections (scan);
      g_autofree float *sino = g_new (float, (gsize) w * n_proj);
      g_autofree float *image = g_new (float, 219 * 219);
      TomoSinogram s = { sino, n_proj, w, tomo_scan_get_angles (scan) };
      TomoRoi view = { (w - 219) / 2, (w - 219) / 2, 219, 219 };
      TomoCenterCandidates one = { &plan.recon_center, 1, TOMO_CENTER_SCORE_NEGATIVITY, 0, &view, image };
      double score;

      g_assert_no_error (error);
      g_assert_cmpuint (w, ==, 128 + 127 - (guint) lround (2 * centers[i]));
      g_assert_true (tomo_scan_read_sinogram (scan, 1, sino, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (tomo_center_sweep_scores (&s, &one, &score, &error));
      g_assert_no_error (error);
      score = tomo_center_negativity (image, 219, 219);
      g_assert_cmpfloat (fabs (score - scores[i]), <=, 1e-6 * fabs (score) + 1e-12);
    }

  /* The pick: the label's detector column; the rows are stitched about it
   * with the sweep open, and the sweep stays as it was. */
  kept = g_memdup2 (centers, sizeof (double) * n);
  ui_test_screenshot ("offset-sweep.png");
  pick_candidate (sweep, axis);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (window->panel->center_spin)), ==, "12.50");
  wait_stitched_about (12.5);
  g_assert_true (wait_for_width (230));
  g_assert_true (ui_find_sweep () == sweep);
  g_assert_true (tomo_center_sweep_get_result (sweep, &n, &centers, &scores));
  g_assert_cmpmem (centers, sizeof (double) * n, kept, sizeof (double) * 16);
  g_object_get (window, "row", &row, NULL);
  g_assert_cmpuint (row, ==, 1);
  g_object_set (window, "filter", "ram-lak", "interp", "linear", NULL);
  wait_current_center ();
  assert_row_matches_cli (path, "12.50", 1, ui_tif, cli_tif);
  /* A second pick after the restitch: the same label, the new rows' shift. */
  pick_candidate (sweep, axis + 2);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (window->panel->center_spin)), ==, "13.50");
  gtk_window_destroy (GTK_WINDOW (sweep));
}

/* --- axis tilt ---------------------------------------------------------- */

/* Disks tilted by 4° over 32 rows (the axis 1 px off the middle row's at
 * rows 1 and 30), the axis at 66.87 on the middle row. */
static char *
make_tilted_scan (void)
{
  char *path = g_build_filename (tmpdir, "tilted.h5", NULL);
  g_autofree char *cmd = NULL, *err = NULL;
  int status = 0;

  cmd = g_strdup_printf ("%s phantom --width 128 --height 32 --projections 180 --center 66.87 "
                         "--tilt 4 --kind disks --no-noise -o %s", g_getenv ("TOMOLIVE"), path);
  g_assert_true (g_spawn_command_line_sync (cmd, NULL, &err, &status, NULL));
  g_assert_cmpint (status, ==, 0);
  return path;
}

/* Iterates until the finder's note holds `text`; FALSE after 60 s. */
static gboolean
wait_for_finder_note (const char *text)
{
  gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < end)
    {
      if (ui_has_label (GTK_WIDGET (window->panel->center_finder), text))
        return TRUE;
      g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
    }
  return FALSE;
}

/* Find centre on a row far from the middle of a tilted scan measures the
 * tilt and corrects it: the tilt control shows it, the centre is the
 * middle row's (for every row now), and the slice of row 1 is the command
 * line's with that --tilt and --center.  The tilt is saved with the
 * parameters and comes back with them; a new scan starts untilted. */
static void
test_tilt (void)
{
  g_autofree char *path = NULL, *params = NULL, *text = NULL, *cli_tilt = NULL,
                  *cli_center = NULL;
  g_autofree char *ui_tif = g_build_filename (tmpdir, "tilt-ui.tif", NULL);
  g_autofree char *cli_tif = g_build_filename (tmpdir, "tilt-cli.tif", NULL);
  g_autoptr(GError) error = NULL;
  double tilt, center;

  UI_TEST_REQUIRE_WINDOW ();
  path = make_tilted_scan ();
  g_assert_true (open_and_wait (path));
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (window->panel->tilt_spin)));
  g_object_get (window, "tilt", &tilt, NULL);
  g_assert_cmpfloat (tilt, ==, 0.0);

  /* The estimate made when the scan opened first (the button waits for it). */
  g_assert_true (wait_for_finder_note ("Estimated when the scan opened"));
  g_object_set (window, "row", 1, NULL);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window->panel->center_finder),
                                             "finder.find", NULL));
  g_assert_true (wait_for_finder_note ("found and corrected"));
  g_object_get (window, "tilt", &tilt, "center", &center, NULL);
  g_test_message ("Find centre on row 1: tilt %.4f°, centre %.3f", tilt, center);
  g_assert_cmpfloat (fabs (tilt - 4.0), <, 0.3);
  /* Row 1's axis is at 65.86; the middle row's, 66.87, serves every row. */
  g_assert_cmpfloat (fabs (center - 66.87), <, 0.2);
  g_assert_cmpfloat (gtk_adjustment_get_value (window->panel->tilt_adjustment), ==, tilt);
  g_assert_cmpfloat (tomo_scan_get_axis_tilt_correction (window->scan), ==, tilt);
  g_assert_cmpuint (tomo_scan_get_width (window->scan), ==, 128);
  /* The subtitle says it, its tooltip how. */
  {
    g_autofree char *said = g_strdup_printf ("axis tilt %.2f°", tilt);
    const char *tip = gtk_widget_get_tooltip_text (GTK_WIDGET (window->subtitle_label));

    g_test_message ("subtitle: %s", gtk_label_get_text (window->subtitle_label));
    g_assert_nonnull (strstr (gtk_label_get_text (window->subtitle_label), said));
    g_assert_nonnull (strstr (gtk_label_get_text (window->subtitle_label), "128 × 32"));
    g_assert_nonnull (tip);
    g_assert_nonnull (strstr (tip, "corrected"));
  }
  wait_current_center ();
  ui_test_screenshot ("tilt-corrected.png");

  cli_tilt = g_strdup_printf ("%.17g", tilt);
  cli_center = g_strdup_printf ("%.17g", center);
  {
    const char *argv[] = { g_getenv ("TOMOLIVE"), "reconstruct", path, "--tilt", cli_tilt,
                           "--center", cli_center, "--row", "1", "--backend", "cpu", "--filter",
                           "ram-lak", "--interp", "linear", "-q", "-o", cli_tif, NULL };

    assert_export_matches_cli (ui_tif, cli_tif, argv);
  }

  /* Saved, changed, loaded back. */
  g_assert_true (_tomo_window_save_params (window, &error));
  g_assert_no_error (error);
  params = _tomo_window_params_path (window);
  g_assert_true (g_file_get_contents (params, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "tilt=4."));
  g_object_set (window, "tilt", 0.0, NULL);
  g_assert_cmpfloat (tomo_scan_get_axis_tilt_correction (window->scan), ==, 0.0);
  g_assert_null (strstr (gtk_label_get_text (window->subtitle_label), "axis tilt"));
  g_assert_true (_tomo_window_load_params (window, &error));
  g_assert_no_error (error);
  g_object_get (window, "tilt", &tilt, NULL);
  g_assert_cmpfloat (fabs (tilt - 4.0), <, 0.3);
  g_assert_cmpfloat (tomo_scan_get_axis_tilt_correction (window->scan), ==, tilt);
  /* A tilt the rows cannot take: refused, naming it, and nothing changes. */
  {
    g_autofree char *bad = g_strdup_printf ("[reconstruction]\ncenter=66.87\nrow=1\nslices=1\n"
                                            "tilt=45\n");
    double kept;

    g_assert_true (g_file_set_contents (params, bad, -1, NULL));
    g_assert_false (_tomo_window_load_params (window, &error));
    g_assert_nonnull (error);
    g_test_message ("%s", error->message);
    g_assert_nonnull (strstr (error->message, "axis tilt 45° is out of range (at most ±10°)"));
    g_clear_error (&error);
    g_object_get (window, "tilt", &kept, NULL);
    g_assert_cmpfloat (kept, ==, tilt);
  }
  g_remove (params);

  /* Another scan: no tilt carried over. */
  g_assert_true (open_and_wait (g_getenv ("TOMO_SAMPLE_SCAN")));
  g_object_get (window, "tilt", &tilt, NULL);
  g_assert_cmpfloat (tilt, ==, 0.0);
  g_assert_cmpfloat (tomo_scan_get_axis_tilt_correction (window->scan), ==, 0.0);
}

int
main (int    argc,
      char **argv)
{
  ui_test_init (&argc, &argv);
  g_test_add_func ("/tomo/ui/geometry/offset-scan", test_offset_scan);
  g_test_add_func ("/tomo/ui/geometry/offset-detector-column", test_offset_detector_column);
  g_test_add_func ("/tomo/ui/geometry/offset-restitch", test_offset_restitch);
  g_test_add_func ("/tomo/ui/geometry/offset-sweep", test_offset_sweep);
  g_test_add_func ("/tomo/ui/geometry/tilt", test_tilt);
  return ui_test_run ();
}
