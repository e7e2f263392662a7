/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The viewer's centre tools on the sample scan (axis at 255.5 + 3.37):
 * the estimate when a scan opens moves the control there; the sweep window
 * shows its candidates and finds the sharpest near the truth.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <gtk/gtk.h>

#include "tomo-application.h"
#include "tomo-center-sweep.h"
#include "tomo-test-util.h"
#include "tomo-window.h"
#include "ui-test-common.h"

#define TRUTH (255.5 + 3.37)


static gboolean
wait_until (gboolean (*done) (gpointer),
            gpointer   data,
            guint      timeout_s)
{
  gint64 until = g_get_monotonic_time () + timeout_s * G_USEC_PER_SEC;

  while (!done (data) && g_get_monotonic_time () < until)
    g_main_context_iteration (NULL, FALSE) || (g_usleep (2000), TRUE);
  return done (data);
}

static gboolean
center_near_truth (gpointer data)
{
  double c;

  g_object_get (data, "center", &c, NULL);
  return fabs (c - TRUTH) < 0.2;
}

static gboolean
sweep_ready (gpointer data)
{
  guint n;
  const double *c, *s;

  return tomo_center_sweep_get_result (data, &n, &c, &s);
}

/* The pixels of every candidate picture in the grid, one after another. */
static void
grid_pixels (GtkWidget  *widget,
             GByteArray *out,
             guint      *n_pictures)
{
  if (GTK_IS_PICTURE (widget))
    {
      GdkPaintable *p = gtk_picture_get_paintable (GTK_PICTURE (widget));
      GdkTexture *tex = GDK_TEXTURE (p);
      gsize stride = gdk_texture_get_width (tex) * 4, size = stride * gdk_texture_get_height (tex);
      g_autofree guint8 *px = g_malloc (size);

      gdk_texture_download (tex, px, stride);
      g_byte_array_append (out, px, size);
      (*n_pictures)++;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    grid_pixels (c, out, n_pictures);
}

static void
test_estimate_and_sweep (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(TomoApplication) app = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(GFile) file = NULL;
  TomoWindow *window;
  TomoCenterSweep *sweep;
  guint n, best = 0;
  const double *centers, *scores;
  double c;

  if (!have_display)
    {
      g_test_skip ("No display: gtk_init_check() failed (run under xvfb-run)");
      return;
    }
  if (sample == NULL)
    {
      g_test_skip ("TOMO_SAMPLE_SCAN is not set (run through meson test)");
      return;
    }
  app = tomo_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  window = tomo_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (window));
  file = g_file_new_for_path (sample);
  tomo_window_open (window, file);

  /* The control starts at the middle and is moved to the estimate. */
  g_assert_true (wait_until (center_near_truth, window, 60));
  g_object_get (window, "center", &c, NULL);
  g_test_message ("centre after opening: %.3f (truth %.3f)", c, TRUTH);

  scan = tomo_test_open_scan (sample);
  sweep = tomo_center_sweep_new (GTK_WINDOW (window), scan, 32, TRUTH + 1.3);
  gtk_window_present (GTK_WINDOW (sweep));
  g_assert_true (wait_until (sweep_ready, sweep, 120));
  g_assert_true (tomo_center_sweep_get_result (sweep, &n, &centers, &scores));
  g_assert_cmpuint (n, ==, 16);
  g_assert_cmpfloat_with_epsilon (centers[n / 2] - centers[n / 2 - 1], 0.5, 1e-9);
  for (guint i = 1; i < n; i++)
    if (scores[i] < scores[best])
      best = i;
  g_test_message ("sharpest candidate %.2f (truth %.2f)", centers[best], TRUTH);
  g_assert_cmpfloat (fabs (centers[best] - TRUTH), <=, 0.5);

  /* A wider range recomputes every candidate: other centres, other
   * pictures in all the cells. */
  {
    g_autoptr(GByteArray) before = g_byte_array_new (), after = g_byte_array_new ();
    GtkSpinButton *step = GTK_SPIN_BUTTON (ui_find_widget (GTK_WIDGET (sweep), GTK_TYPE_SPIN_BUTTON));
    guint n_before = 0, n_after = 0, n_same = 0;

    /* The sweep ran on the viewer's engine (one request, its backend). */
    g_assert_true (ui_has_label (GTK_WIDGET (sweep), "16 candidates in"));
    grid_pixels (GTK_WIDGET (sweep), before, &n_before);
    g_assert_cmpuint (n_before, ==, 16);
    gtk_spin_button_set_value (step, 1.5);
    g_assert_false (tomo_center_sweep_get_result (sweep, &n, &centers, &scores));
    g_assert_true (wait_until (sweep_ready, sweep, 120));
    g_assert_true (tomo_center_sweep_get_result (sweep, &n, &centers, &scores));
    g_assert_cmpfloat_with_epsilon (centers[1] - centers[0], 1.5, 1e-9);
    grid_pixels (GTK_WIDGET (sweep), after, &n_after);
    g_assert_cmpuint (n_after, ==, 16);
    g_assert_cmpuint (after->len, ==, before->len);
    for (guint i = 0; i < 16; i++)
      {
        gsize cell = before->len / 16;

        n_same += memcmp (before->data + i * cell, after->data + i * cell, cell) == 0;
      }
    /* The middle candidates of both ranges are close; the outer ones not. */
    g_assert_cmpuint (n_same, <=, 2);
  }

  /* A new target recomputes around it. */
  tomo_center_sweep_set_target (sweep, scan, 20, TRUTH - 2.0);
  g_assert_false (tomo_center_sweep_get_result (sweep, &n, &centers, &scores));
  g_assert_true (wait_until (sweep_ready, sweep, 120));
  g_assert_true (tomo_center_sweep_get_result (sweep, &n, &centers, &scores));
  g_assert_cmpfloat (fabs (centers[n / 2] - 0.75 - (TRUTH - 2.0)), <, 1e-9);

  gtk_window_destroy (GTK_WINDOW (sweep));
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int    argc,
      char **argv)
{
  ui_test_init (&argc, &argv);

  g_test_add_func ("/tomo/ui/center/estimate-and-sweep", test_estimate_and_sweep);
  return ui_test_run ();
}
