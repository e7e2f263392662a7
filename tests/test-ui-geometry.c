/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The window and 360° scans: an offset-axis scan opens in the stitched
 * geometry Auto picks (the panel says so, the slice is 2·W − overlap wide,
 * the centre on the axis); choosing 360° in the panel shows it W wide.
 */
#include "config.h"

#include <math.h>
#include <string.h>

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

static void
test_offset_scan (void)
{
  g_autofree char *path = NULL, *cmd = NULL, *err = NULL, *label = NULL;
  const char *tip;
  GtkComboBox *combo;
  int status = 0;
  double center;

  if (skip_without_display ())
    return;
  ensure_window ();
  path = g_build_filename (tmpdir, "offset.h5", NULL);
  /* 128 columns, the axis at column 12.5: stitched 128 + (127 − 25) = 230
   * wide, the axis at 12.5 + 102 = 114.5 in it. */
  cmd = g_strdup_printf ("%s phantom --width 128 --height 4 --projections 360 --angle-range 360 "
                         "--center 12.5 --object-width 230 --kind disks --no-noise -o %s",
                         g_getenv ("TOMOLIVE"), path);
  g_assert_true (g_spawn_command_line_sync (cmd, NULL, &err, &status, NULL));
  g_assert_cmpint (status, ==, 0);

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

int
main (int    argc,
      char **argv)
{
  ui_test_init (&argc, &argv);
  g_test_add_func ("/tomo/ui/geometry/offset-scan", test_offset_scan);
  return ui_test_run ();
}
