/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>
#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include "tomo-application.h"
#include "tomo-colormap.h"
#include "tomo-gpu.h"
#include "tomo-histogram.h"
#include "tomo-tiff-writer.h"
#include "tomo-window-private.h"
#include "ui-test-common.h"


/* ---- tests ----------------------------------------------------------------- */

static void
test_colormap_lut (void)
{
  guint8 gray[256 * 4], inverted[256 * 4], viridis[256 * 4];
  TomoColormap cm;

  tomo_colormap_fill_lut (TOMO_COLORMAP_GRAY, gray);
  tomo_colormap_fill_lut (TOMO_COLORMAP_INVERTED, inverted);
  tomo_colormap_fill_lut (TOMO_COLORMAP_VIRIDIS, viridis);
  g_assert_cmpuint (gray[0], ==, 0);
  g_assert_cmpuint (gray[255 * 4], ==, 255);
  for (guint i = 0; i < 256; i++)
    g_assert_cmpuint (inverted[4 * i], ==, 255 - gray[4 * i]);
  /* viridis: dark purple to yellow. */
  g_assert_cmpuint (viridis[2], >, viridis[0]);
  g_assert_cmpuint (viridis[255 * 4 + 0], >, 200);
  g_assert_cmpuint (viridis[255 * 4 + 2], <, 80);

  g_assert_true (tomo_colormap_from_string ("magma", &cm));
  g_assert_cmpint (cm, ==, TOMO_COLORMAP_MAGMA);
  g_assert_false (tomo_colormap_from_string ("rainbow", &cm));
  g_assert_false (tomo_colormap_from_string (NULL, &cm));
}

static void
test_percentiles (void)
{
  float data[1002];
  double lo, hi;

  for (guint i = 0; i < 1000; i++)
    data[i] = i;
  data[1000] = NAN;
  data[1001] = INFINITY;
  g_assert_true (tomo_percentiles (data, G_N_ELEMENTS (data), 1, 99, &lo, &hi));
  g_assert_cmpfloat_with_epsilon (lo, 10, 1.5);
  g_assert_cmpfloat_with_epsilon (hi, 990, 1.5);

  for (guint i = 0; i < G_N_ELEMENTS (data); i++)
    data[i] = NAN;
  g_assert_false (tomo_percentiles (data, G_N_ELEMENTS (data), 1, 99, &lo, &hi));
}

static void
test_center_changes_picture (void)
{
  g_autofree guint8 *a = NULL, *b = NULL;
  guint w, h, w2, h2;
  double diff = 0;

  UI_TEST_REQUIRE_WINDOW ();

  g_object_set (window, "auto-contrast", FALSE, "window-min", -0.002, "window-max", 0.01, NULL);
  set_center_and_wait (252.0);
  a = read_pixels (&w, &h);
  set_center_and_wait (TRUE_CENTER);
  b = read_pixels (&w2, &h2);
  g_assert_cmpuint (w, ==, 512);
  g_assert_cmpuint (h, ==, 512);
  g_assert_cmpuint (w2, ==, w);
  g_assert_cmpuint (h2, ==, h);

  for (gsize i = 0; i < (gsize) w * h; i++)
    diff += fabs ((double) a[4 * i] - b[4 * i]);
  diff /= (double) w * h;
  g_test_message ("mean |Δ gray| between centre 252 and %.2f: %.2f", TRUE_CENTER, diff);
  /* A 6.9 px wrong centre smears every edge into arcs: several gray levels. */
  g_assert_cmpfloat (diff, >, 2.0);
}

/* Focus criterion of the slice read back from the view: the entropy of its
 * value histogram inside the reconstruction circle (as in TomoPy's entropy
 * centre search).  A wrong centre smears every edge into arcs and spreads
 * the values; the right one concentrates them, so minimal entropy = sharpest.
 * Gradient energies were tried and are dominated by the photon noise. */
static double
slice_entropy (TomoSlice *slice)
{
  guint w = slice->width, h = slice->height;
  double cx = (w - 1) / 2.0, r2 = (w / 2.0 - 4) * (w / 2.0 - 4), entropy = 0;
  guint hist[256] = { 0 };
  guint64 n = 0;

  for (guint y = 0; y < h; y++)
    for (guint x = 0; x < w; x++)
      {
        float v = slice->data[(gsize) y * w + x];

        if ((x - cx) * (x - cx) + (y - cx) * (y - cx) > r2)
          continue;
        /* Fixed range around the phantom's values (≈ 0 … 0.01 per pixel). */
        hist[(guint) CLAMP ((v + 0.005) / 0.02 * 256, 0, 255)]++;
        n++;
      }
  for (guint i = 0; i < 256; i++)
    if (hist[i] > 0)
      entropy -= hist[i] / (double) n * log (hist[i] / (double) n);
  return entropy;
}

static void
test_sharpest_center (void)
{
  double best = -G_MAXDOUBLE, best_center = 0;

  UI_TEST_REQUIRE_WINDOW ();

  for (double c = 255.0; c <= 263.0 + 1e-9; c += 0.25)
    {
      TomoSlice *slice;
      double s;

      set_center_and_wait (c);
      slice = tomo_slice_view_get_slice (tomo_window_get_slice_view (window));
      g_assert_nonnull (slice->data);
      s = -slice_entropy (slice);
      g_test_message ("centre %.2f: entropy %.5f", c, -s);
      if (s > best)
        {
          best = s;
          best_center = c;
        }
    }

  g_test_message ("sharpest centre %.2f, true %.2f", best_center, TRUE_CENTER);
  g_assert_cmpfloat (fabs (best_center - TRUE_CENTER), <=, 0.5);
}

static void
test_colormap_window (void)
{
  g_autofree guint8 *gray = NULL, *inv = NULL, *vir = NULL;
  guint8 lut[256 * 4];
  TomoSlice *slice;
  double lo, hi;
  guint w, h, n_low = 0, n_high = 0, n_mid = 0;

  UI_TEST_REQUIRE_WINDOW ();

  set_center_and_wait (TRUE_CENTER);
  slice = tomo_slice_view_get_slice (tomo_window_get_slice_view (window));
  g_assert_true (tomo_percentiles (slice->data, (gsize) slice->width * slice->height, 30, 70, &lo, &hi));
  g_assert_cmpfloat (hi, >, lo);

  g_object_set (window, "auto-contrast", FALSE, "colormap", "gray",
                "window-min", lo, "window-max", hi, NULL);
  g_assert_cmpfloat (tomo_slice_view_get_window_min (tomo_window_get_slice_view (window)), ==, lo);
  gray = read_pixels (&w, &h);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.colormap", "s", "inverted"));
  inv = read_pixels (&w, &h);
  g_object_set (window, "colormap", "viridis", NULL);
  vir = read_pixels (&w, &h);
  tomo_colormap_fill_lut (TOMO_COLORMAP_VIRIDIS, lut);

  for (gsize i = 0; i < (gsize) w * h; i++)
    {
      float v = slice->data[i];
      double t = (v - lo) / (hi - lo);

      /* At or below the minimum → 0, at or above the maximum → 255. */
      if (v <= lo)
        {
          g_assert_cmpuint (gray[4 * i], ==, 0);
          n_low++;
        }
      else if (v >= hi)
        {
          g_assert_cmpuint (gray[4 * i], ==, 255);
          n_high++;
        }
      else
        {
          /* Linear in between, to within one step (float rounding in GLSL). */
          g_assert_cmpfloat (fabs (gray[4 * i] - t * 255.0), <=, 1.5);
          n_mid++;
        }
      g_assert_cmpuint (gray[4 * i], ==, gray[4 * i + 1]);
      g_assert_cmpuint (inv[4 * i], ==, 255 - gray[4 * i]);
      {
        guint k = gray[4 * i];
        g_assert_cmpint (abs ((int) vir[4 * i + 1] - lut[4 * k + 1]), <=, 8);
      }
    }
  g_test_message ("%u below, %u inside, %u above the window", n_low, n_mid, n_high);
  g_assert_cmpuint (n_low, >, 1000);
  g_assert_cmpuint (n_high, >, 1000);
  g_assert_cmpuint (n_mid, >, 1000);

  g_object_set (window, "colormap", "gray", NULL);
}

/* The slice on screen (row 20, Ram-Lak, linear) against the CPU command
 * line's slice of `center`; the files are NAME.tif and NAME-cli.tif. */
static void
assert_row20_matches_cpu_cli (const char *name,
                              const char *center)
{
  g_autofree char *ui_name = g_strconcat (name, ".tif", NULL);
  g_autofree char *cli_name = g_strconcat (name, "-cli.tif", NULL);
  g_autofree char *ui_path = g_build_filename (tmpdir, ui_name, NULL);
  g_autofree char *cli_path = g_build_filename (tmpdir, cli_name, NULL);
  const char *argv[] = { g_getenv ("TOMOLIVE"), "reconstruct", g_getenv ("TOMO_SAMPLE_SCAN"),
                         "--row", "20", "--center", center, "--backend", "cpu",
                         "--filter", "ram-lak", "--interp", "linear", "-q",
                         "-o", cli_path, NULL };

  g_assert_nonnull (argv[0]);
  assert_export_matches_cli (ui_path, cli_path, argv);
}

static void
test_export_tiff_matches_cli (void)
{
  UI_TEST_REQUIRE_WINDOW ();
  g_object_set (window, "filter", "ram-lak", "interp", "linear", NULL);
  set_and_wait ("row", 20, "center", 258.5, NULL);
  assert_row20_matches_cpu_cli ("ui", "258.5");
}

/* A centre with more digits than the field shows (the finder's, a sweep's)
 * becomes the number shown, in the field, the note and the saved file: that
 * number on the command line gives the slice on screen. */
static void
test_center_as_shown (void)
{
  g_autofree char *params = NULL, *text = NULL;
  GtkEditable *field;
  double center;

  UI_TEST_REQUIRE_WINDOW ();
  field = GTK_EDITABLE (window->panel->center_spin);
  g_signal_emit_by_name (window->panel->center_finder, "center-found", 258.8734, FALSE);
  g_object_get (window, "center", &center, NULL);
  g_assert_cmpstr (gtk_editable_get_text (field), ==, "258.87");
  g_assert_cmpfloat (center, ==, 258.87);
  g_assert_cmpfloat (center, ==, g_ascii_strtod (gtk_editable_get_text (field), NULL));
  /* The keys move it by tenths and stay on hundredths. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.nudge-center", "d", 0.1));
  g_object_get (window, "center", &center, NULL);
  g_assert_cmpfloat (center, ==, 258.97);

  g_assert_true (_tomo_window_save_params (window, NULL));
  params = _tomo_window_params_path (window);
  g_assert_true (g_file_get_contents (params, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "\ncenter=258.97\n"));
  g_unlink (params);
}

static void
test_export_png (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "slice.png", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkTexture) texture = NULL;

  UI_TEST_REQUIRE_WINDOW ();

  g_assert_true (tomo_window_export_slice_png (window, path, &error));
  g_assert_no_error (error);
  texture = gdk_texture_new_from_filename (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_texture_get_width (texture), ==, 512);
  g_assert_cmpint (gdk_texture_get_height (texture), ==, 512);
  g_unlink (path);

  /* A folder that does not exist: an error, not a crash. */
  g_assert_false (tomo_window_export_slice_tiff (window, "/nonexistent/dir/x.tif", &error));
  g_assert_nonnull (error);
}

static void
volume_done (GObject      *source,
             GAsyncResult *result,
             gpointer      data)
{
  gpointer *state = data;

  state[1] = GINT_TO_POINTER (tomo_window_export_volume_finish (TOMO_WINDOW (source), result,
                                                                 (GError **) &state[2]));
  state[0] = GINT_TO_POINTER (TRUE);
}

static void
test_export_volume (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "volume.tif", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree float *vol = NULL;
  gpointer state[3] = { NULL, NULL, NULL };
  TomoSlice *slice;
  guint w, h, n;
  double max_diff = 0;

  UI_TEST_REQUIRE_WINDOW ();

  set_and_wait ("row", 20, "center", TRUE_CENTER, NULL);
  slice = tomo_slice_view_get_slice (tomo_window_get_slice_view (window));
  tomo_window_export_volume_async (window, path, NULL, volume_done, state);
  g_assert_true (wait_for ((gboolean *) &state[0], 240));
  g_assert_no_error (state[2]);
  g_assert_true (GPOINTER_TO_INT (state[1]));

  vol = tomo_tiff_read_float (path, &w, &h, &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, tomo_scan_get_height (tomo_window_get_scan (window)));
  g_assert_cmpuint (w, ==, slice->width);
  for (gsize i = 0; i < (gsize) w * h; i++)
    max_diff = MAX (max_diff, fabs (vol[(gsize) 20 * w * h + i] - slice->data[i]));
  g_assert_cmpfloat (max_diff, <=, 1e-4);
  g_unlink (path);
}

static void
test_broken_file (void)
{
  g_autofree char *path = g_build_filename (tmpdir, "broken.h5", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree guint8 *pixels = NULL;
  const char *message;
  guint w, h;

  UI_TEST_REQUIRE_WINDOW ();

  g_assert_true (g_file_set_contents (path, "this is not an HDF5 file\n", -1, &error));
  g_assert_false (open_and_wait (path));

  message = tomo_window_get_error_message (window);
  g_assert_nonnull (message);
  g_test_message ("banner: %s", message);
  g_assert_nonnull (strstr (message, "broken.h5"));

  /* Still the sample scan, still rendering. */
  g_assert_nonnull (tomo_window_get_scan (window));
  set_center_and_wait (257.0);
  pixels = read_pixels (&w, &h);
  g_assert_cmpuint (w, ==, 512);
  g_unlink (path);
}

/* Files that crash or hang inside libhdf5 (tests/fuzz/libhdf5-faults/,
 * one option byte then the file): the probe's helper takes the fault, the
 * banner says so, and the window keeps its scan and renders. */
static void
test_libhdf5_fault_files (void)
{
  /* The probe's limit: long for the crash, so that a loaded machine does
   * not turn it into a hang; short for the hang, which waits it out. */
  static const char *const names[][3] = {
    { "global-heap-segv", "crashed (Segmentation fault)", "30" },
    { "vlen-string-hang", "hung reading", "2" },
  };

  UI_TEST_REQUIRE_WINDOW ();
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *src = g_test_build_filename (G_TEST_DIST, "fuzz", "libhdf5-faults", names[i][0], NULL);
      g_autofree char *base = g_strconcat (names[i][0], ".h5", NULL);
      g_autofree char *path = g_build_filename (tmpdir, base, NULL);
      g_autofree char *data = NULL;
      g_autofree guint8 *pixels = NULL;
      g_autoptr(GError) error = NULL;
      const char *message;
      gsize len;
      guint w, h;

      g_assert_true (g_file_get_contents (src, &data, &len, &error));
      g_assert_true (g_file_set_contents (path, data + 1, len - 1, &error));
      g_setenv ("TOMO_PROBE_TIMEOUT", names[i][2], TRUE);
      g_assert_false (open_and_wait (path));
      message = tomo_window_get_error_message (window);
      g_assert_nonnull (message);
      g_test_message ("banner: %s", message);
      g_assert_nonnull (strstr (message, base));
      g_assert_nonnull (strstr (message, names[i][1]));
      g_assert_nonnull (tomo_window_get_scan (window));
      set_center_and_wait (257.0 + i);
      pixels = read_pixels (&w, &h);
      g_assert_cmpuint (w, ==, 512);
      g_unlink (path);
    }
  g_unsetenv ("TOMO_PROBE_TIMEOUT");
}

static void
test_actions_and_rows (void)
{
  TomoSliceView *view;
  double c;
  guint row;

  UI_TEST_REQUIRE_WINDOW ();
  view = tomo_window_get_slice_view (window);

  set_center_and_wait (256.0);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.nudge-center", "d", 1.0));
  g_object_get (window, "center", &c, NULL);
  g_assert_cmpfloat_with_epsilon (c, 257.0, 1e-9);

  g_object_get (window, "row", &row, NULL);
  set_and_wait ("n-slices", 2, NULL);
  g_assert_cmpuint (tomo_slice_view_get_slice (view)->n_slices, ==, 2);
  {
    g_autofree guint8 *pixels = NULL;
    guint w, h;

    pixels = read_pixels (&w, &h);
    g_assert_cmpuint (w, ==, 1024);
    g_assert_cmpuint (h, ==, 512);
  }
  set_and_wait ("n-slices", 1, NULL);

  /* A filter change reaches the engine. */
  set_and_wait ("filter", "hann", NULL);
  g_assert_cmpint (tomo_slice_view_get_slice (view)->params.filter, ==, TOMO_FILTER_HANN);
  set_and_wait ("filter", "ram-lak", NULL);
}

/* A GPU that fails while the window reconstructs (an injected launch
 * failure, as TOMO_GPU_FAIL=launch makes it): the banner says the CPU
 * reconstructs now, the backend moves to the CPU with the reason in the
 * device label's tooltip, and the slice of that centre is made again there
 * — the CPU command line's slice.  Choosing the GPU again takes it back.
 * Skips without a CUDA device (it runs in the GPU machine's window). */
static void
test_gpu_fault_banner (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *backend = NULL;
  TomoSliceView *view;
  const char *message, *tooltip;

  UI_TEST_REQUIRE_WINDOW ();
  if (!tomo_test_need_gpu ("a GPU failing in the window needs a CUDA device"))
    return;
  view = tomo_window_get_slice_view (window);
  g_object_set (window, "backend", "gpu", "filter", "ram-lak", "interp", "linear", "row", 20, NULL);
  set_center_and_wait (257.1);
  g_assert_cmpint (tomo_slice_view_get_slice (view)->backend, ==, TOMO_BACKEND_GPU);

  g_assert_true (tomo_gpu_fault_configure ("launch:1", 0, &error));
  g_assert_no_error (error);
  set_center_and_wait (257.4);
  message = tomo_window_get_error_message (window);
  g_test_message ("banner: %s", message);
  g_assert_nonnull (message);
  g_assert_true (g_str_has_prefix (message, "The GPU failed; the CPU reconstructs now: "));
  g_assert_nonnull (strstr (message, "cudaErrorLaunchFailure"));
  g_assert_cmpint (tomo_slice_view_get_slice (view)->backend, ==, TOMO_BACKEND_CPU);
  g_assert_cmpint (tomo_engine_get_backend (tomo_window_get_engine (window)), ==, TOMO_BACKEND_CPU);
  g_object_get (window, "backend", &backend, NULL);
  g_assert_cmpstr (backend, ==, "cpu");
  tooltip = gtk_widget_get_tooltip_text (GTK_WIDGET (window->device_label));
  g_test_message ("device label: %s", tooltip);
  g_assert_true (g_str_has_prefix (tooltip, "GPU unavailable: "));
  ui_test_screenshot ("gpu-fault-banner.png");
  /* The slice on screen is the CPU's for that centre. */
  assert_row20_matches_cpu_cli ("after-fault", "257.4");

  g_assert_true (tomo_gpu_fault_configure (NULL, 0, &error));
  g_object_set (window, "backend", "gpu", NULL);
  set_center_and_wait (257.6);
  g_assert_cmpint (tomo_slice_view_get_slice (view)->backend, ==, TOMO_BACKEND_GPU);
  g_object_set (window, "backend", "auto", NULL);
}

int
main (int    argc,
      char **argv)
{
  ui_test_init (&argc, &argv);

  g_test_add_func ("/tomo/ui/colormap/lut", test_colormap_lut);
  g_test_add_func ("/tomo/ui/histogram/percentiles", test_percentiles);
  g_test_add_func ("/tomo/ui/view/center-changes-picture", test_center_changes_picture);
  g_test_add_func ("/tomo/ui/view/colormap-window", test_colormap_window);
  g_test_add_func ("/tomo/ui/window/actions", test_actions_and_rows);
  g_test_add_func ("/tomo/ui/window/sharpest-center", test_sharpest_center);
  g_test_add_func ("/tomo/ui/export/tiff-matches-cli", test_export_tiff_matches_cli);
  g_test_add_func ("/tomo/ui/window/center-as-shown", test_center_as_shown);
  g_test_add_func ("/tomo/ui/export/png", test_export_png);
  g_test_add_func ("/tomo/ui/export/volume", test_export_volume);
  g_test_add_func ("/tomo/ui/window/broken-file", test_broken_file);
  g_test_add_func ("/tomo/ui/window/libhdf5-fault-files", test_libhdf5_fault_files);
  g_test_add_func ("/tomo/ui/window/gpu-fault-banner", test_gpu_fault_banner);

  return ui_test_run ();
}
