/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The `tomolive` command line, run as a user would: as a child process on
 * the bundled sample scan and on broken files.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-phantom.h"
#include "tomo-test-util.h"
#include "tomo-tiff-writer.h"

static const char *tomolive;
static const char *sample;
static char *tmp_dir;

#define Result TomoTestResult
#define RUN TOMO_TEST_RUN
#define assert_fails_with tomo_test_assert_fails_with

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

static void
test_help (void)
{
  g_auto(Result) r = { 0 };
  g_auto(Result) r2 = { 0 };

  RUN (&r, "--help");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "reconstruct"));
  g_assert_nonnull (strstr (r.out, "phantom"));

  RUN (&r2, "reconstruct", "--help");
  g_assert_cmpint (r2.status, ==, 0);
  for (const char *opt = "--center\0--filter\0--interp\0--backend\0--roi\0--rows\0"; *opt;
       opt += strlen (opt) + 1)
    g_assert_nonnull (strstr (r2.out, opt));
}

static void
test_info (void)
{
  g_auto(Result) r = { 0 };

  RUN (&r, "info", sample);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "512"));
  g_assert_nonnull (strstr (r.out, "360"));
}

static float *
read_tiff (const char *path,
           guint      *w,
           guint      *h,
           guint      *pages)
{
  g_autoptr(GError) error = NULL;
  float *data = tomo_tiff_read_float (path, w, h, pages, &error);

  g_assert_no_error (error);
  g_assert_nonnull (data);
  return data;
}

static double
correlation (const float *a,
             const float *b,
             gsize        n)
{
  double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;

  for (gsize i = 0; i < n; i++)
    ma += a[i], mb += b[i];
  ma /= n;
  mb /= n;
  for (gsize i = 0; i < n; i++)
    {
      sab += (a[i] - ma) * (b[i] - mb);
      saa += (a[i] - ma) * (a[i] - ma);
      sbb += (b[i] - mb) * (b[i] - mb);
    }
  return sab / sqrt (saa * sbb);
}

static void
test_reconstruct_row (void)
{
  g_autofree char *out = tmp_path ("row.tif");
  g_autofree char *roi_out = tmp_path ("roi.tif");
  g_autofree float *data = NULL, *roi = NULL;
  g_auto(Result) r = { 0 };
  g_auto(Result) r2 = { 0 };
  guint w, h, pages;
  g_autofree float *truth = g_new (float, 512 * 512);
  TomoPhantomParams p;
  double corr;

  RUN (&r, "reconstruct", sample, "--row", "32", "--center", "258.87", "--backend", "cpu",
       "-o", out);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "GU/s"));
  data = read_tiff (out, &w, &h, &pages);
  g_assert_cmpuint (w, ==, 512);
  g_assert_cmpuint (h, ==, 512);
  g_assert_cmpuint (pages, ==, 1);

  /* The sample is the phantom of data/meson.build: the slice must look like
   * its truth (orientation, position, scale), noise notwithstanding. */
  tomo_test_phantom_params (&p, 512, 64, 360);
  tomo_phantom_slice (&p, 32, truth);
  tomo_test_assert_finite (data, (gsize) w * h);
  corr = correlation (data, truth, (gsize) w * h);
  g_test_message ("correlation with the truth: %.4f", corr);
  g_assert_cmpfloat (corr, >, 0.9);

  /* --roi is the crop of the full slice, bit for bit. */
  RUN (&r2, "reconstruct", sample, "--row", "32", "--center", "258.87", "--backend", "cpu",
       "--roi", "100,120,64,48", "-o", roi_out);
  g_assert_cmpint (r2.status, ==, 0);
  roi = read_tiff (roi_out, &w, &h, &pages);
  g_assert_cmpuint (w, ==, 64);
  g_assert_cmpuint (h, ==, 48);
  for (guint y = 0; y < 48; y++)
    g_assert_cmpmem (roi + y * 64, 64 * sizeof (float), data + (120 + y) * 512 + 100,
                     64 * sizeof (float));
}

static void
test_reconstruct_rows (void)
{
  g_autofree char *stack = tmp_path ("stack.tif");
  g_autofree char *dir = tmp_path ("slices");
  g_autofree float *all = NULL;
  g_auto(Result) r = { 0 };
  g_auto(Result) r2 = { 0 };
  guint w, h, pages;

  RUN (&r, "reconstruct", sample, "--rows", "30:33", "--backend", "cpu", "--filter", "hann",
       "--interp", "nearest", "-o", stack);
  g_assert_cmpint (r.status, ==, 0);
  all = read_tiff (stack, &w, &h, &pages);
  g_assert_cmpuint (pages, ==, 3);

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  /* --writers 0 is the default, as its message and help say. */
  RUN (&r2, "reconstruct", sample, "--rows", "30:33", "--backend", "cpu", "--filter", "hann",
       "--interp", "nearest", "--writers", "0", "-o", dir);
  g_assert_cmpint (r2.status, ==, 0);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *name = g_strdup_printf ("slice_%05u.tif", 30 + i);
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autofree float *one = NULL;
      guint w1, h1, p1;

      one = read_tiff (path, &w1, &h1, &p1);
      g_assert_cmpuint (w1 * h1, ==, w * h);
      g_assert_cmpmem (one, w * h * sizeof (float), all + (gsize) i * w * h, w * h * sizeof (float));
      g_unlink (path);
    }
  g_rmdir (dir);
}

static void
test_phantom_roundtrip (void)
{
  g_autofree char *path = tmp_path ("small.h5");
  g_auto(Result) r = { 0 };
  g_auto(Result) r2 = { 0 };
  g_auto(Result) r3 = { 0 };

  RUN (&r, "phantom", "--width", "64", "--height", "3", "--projections", "45", "--no-noise",
       "-o", path);
  g_assert_cmpint (r.status, ==, 0);
  RUN (&r2, "info", path);
  g_assert_cmpint (r2.status, ==, 0);
  g_assert_nonnull (strstr (r2.out, "64"));
  g_assert_nonnull (strstr (r2.out, "45"));
  g_assert_null (strstr (r2.out, "Coverage:"));

  RUN (&r3, "phantom", "--width", "0", "-o", path);
  assert_fails_with (&r3, "width");
}

/* A scan over a full turn is named as such by `info`; a half turn is not. */
static void
test_info_full_turn (void)
{
  g_autofree char *path = tmp_path ("full-turn.h5");
  g_auto(Result) r = { 0 };
  g_auto(Result) r2 = { 0 };

  RUN (&r, "phantom", "--width", "64", "--height", "3", "--projections", "90",
       "--angle-range", "360", "--no-noise", "-o", path);
  g_assert_cmpint (r.status, ==, 0);
  RUN (&r2, "info", path);
  g_assert_cmpint (r2.status, ==, 0);
  g_assert_nonnull (strstr (r2.out, "Coverage:    360°"));
}

static void
test_bad_input (void)
{
  g_autofree char *text = tmp_path ("not-a-scan.h5");
  g_autofree char *out = tmp_path ("never.tif");

  /* Each command line and the words its one error line must contain. */
  struct { const char *args[8]; const char *words; } cases[] = {
    { { "info", "/nonexistent/scan.h5" }, "/nonexistent/scan.h5" },
    { { "reconstruct", text, "-o", out }, "not-a-scan.h5" },
    { { "reconstruct", sample, "--center", "900", "-o", out }, "outside the detector" },
    { { "reconstruct", sample, "--row", "64", "-o", out }, "out of range" },
    { { "reconstruct", sample, "--rows", "60:70", "-o", out }, "out of range" },
    { { "reconstruct", sample, "--filter", "gauss", "-o", out }, "gauss" },
    { { "reconstruct", sample, "--roi", "10,10,0,5", "-o", out }, "--roi" },
    { { "reconstruct", sample, "--roi", "500,500,64,64", "-o", out }, "does not fit" },
    { { "reconstruct", sample }, "-o" },
    { { "reconstruct", sample, "-o", "/nonexistent/dir/out.tif" }, "/nonexistent/dir/out.tif" },
  };

  g_assert_true (g_file_set_contents (text, "this is not HDF5\n", -1, NULL));
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(Result) r = { 0 };

      tomo_test_run_argv (&r, cases[i].args);
      assert_fails_with (&r, cases[i].words);
    }
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_unlink (text);
}

/* A TIFF stack of `scale`·exp(−line integrals) of the phantom, one page a
 * projection over 180°, its axis at `center`. */
static void
write_tiff_projections (const char *path,
                        double      scale,
                        double      center)
{
  enum { W = 64, H = 4, N = 90 };
  g_autofree double *angles = g_new (double, N);
  g_autofree double *line = g_new (double, (gsize) N * W);
  g_autofree float *pages = g_new (float, (gsize) N * H * W);
  g_autoptr(GError) error = NULL;
  TomoPhantomParams p;

  tomo_phantom_params_init (&p);
  tomo_phantom_params_set_size (&p, W, H, N);
  p.center = center;
  for (guint i = 0; i < N; i++)
    angles[i] = i * G_PI / N;
  for (guint row = 0; row < H; row++)
    {
      tomo_phantom_sinogram (&p, angles, row, line);
      for (guint i = 0; i < N; i++)
        for (guint x = 0; x < W; x++)
          pages[((gsize) i * H + row) * W + x] = (float) (scale * exp (-line[(gsize) i * W + x]));
    }
  g_assert_true (tomo_tiff_write_float (path, pages, W, H, N, &error));
  g_assert_no_error (error);
}

/* find-center opens a scan with the same input options as info and
 * reconstruct: a TIFF stack without flats needs --already-sinogram (the
 * error says so) or --flats, and then finds the axis. */
static void
test_find_center_input_options (void)
{
  g_autofree char *norm = tmp_path ("fc-normalised.tif");
  g_autofree char *counts = tmp_path ("fc-counts.tif");
  g_autofree char *flat = tmp_path ("fc-flat.tif");
  g_autofree float *flat_data = g_new (float, 64 * 4);
  const double center = 34.25;
  struct { const char *args[8]; } ok[] = {
    { { "find-center", norm, "--already-sinogram", "--format", "tiff", "--json" } },
    { { "find-center", counts, "--flats", flat, "--angle-range", "180", "--json" } },
  };

  write_tiff_projections (norm, 1.0, center);
  write_tiff_projections (counts, 1000.0, center);
  for (guint i = 0; i < 64 * 4; i++)
    flat_data[i] = 1000;
  g_assert_true (tomo_tiff_write_float (flat, flat_data, 64, 4, 1, NULL));

  {
    g_auto(Result) r = { 0 };

    RUN (&r, "find-center", norm);
    assert_fails_with (&r, "--already-sinogram");
  }
  for (guint i = 0; i < G_N_ELEMENTS (ok); i++)
    {
      g_auto(Result) r = { 0 };
      const char *c;

      tomo_test_run_argv (&r, ok[i].args);
      g_assert_cmpint (r.status, ==, 0);
      c = strstr (r.out, "\"center\": ");
      g_assert_nonnull (c);
      g_assert_cmpfloat_with_epsilon (g_ascii_strtod (c + strlen ("\"center\": "), NULL),
                                      center, 0.1);
    }
}

/* --center auto: the axis found on the middle row reconstructed (the
 * sample's is at 258.87), said, and used: the slices of that centre given
 * as the number said (to 0.0005 px) within 1e-3 of their largest value.
 * Anything else not a number is refused. */
static void
test_reconstruct_center_auto (void)
{
  g_autofree char *out = tmp_path ("auto.tif"), *out2 = tmp_path ("auto-given.tif");
  g_autofree char *bad = tmp_path ("auto-bad.tif");
  g_autofree float *a = NULL, *b = NULL;
  g_autofree char *given = NULL;
  g_auto(Result) r = { 0 };
  g_auto(Result) r2 = { 0 };
  g_auto(Result) r3 = { 0 };
  const char *line;
  double c;
  guint w, h, pages;

  RUN (&r, "reconstruct", sample, "--rows", "20:45", "--center", "auto", "--backend", "cpu",
       "--output-format", "tiff", "-o", out);
  g_assert_cmpint (r.status, ==, 0);
  line = strstr (r.out, "Centre: ");
  g_assert_nonnull (line);
  g_assert_nonnull (strstr (line, "row 32)"));
  c = g_ascii_strtod (line + strlen ("Centre: "), NULL);
  g_test_message ("--center auto: %.2f", c);
  g_assert_cmpfloat (fabs (c - 258.87), <, 0.3);

  given = g_strdup_printf ("%.3f", c);
  RUN (&r2, "reconstruct", sample, "--rows", "20:45", "--center", given, "--backend", "cpu",
       "--output-format", "tiff", "-o", out2);
  g_assert_cmpint (r2.status, ==, 0);
  a = read_tiff (out, &w, &h, &pages);
  g_assert_cmpuint (pages, ==, 25);
  b = read_tiff (out2, &w, &h, &pages);
  {
    double diff = 0, top = 0;

    for (gsize i = 0; i < (gsize) w * h * pages; i++)
      {
        diff = MAX (diff, fabs ((double) a[i] - b[i]));
        top = MAX (top, fabs ((double) b[i]));
      }
    g_test_message ("largest difference %.3g of %.3g", diff, top);
    g_assert_cmpfloat (diff, <, 1e-3 * top);
  }

  RUN (&r3, "reconstruct", sample, "--center", "middle", "-o", bad);
  assert_fails_with (&r3, "--center");
  g_assert_false (g_file_test (bad, G_FILE_TEST_EXISTS));
}

/* An output name of no known format is written as a TIFF, with a warning
 * naming it; .tif, .tiff and an explicit --output-format say nothing. */
static void
test_reconstruct_unknown_extension (void)
{
  g_autofree char *odd = tmp_path ("slice.xyz"), *tif = tmp_path ("slice.TIFF");
  g_autofree float *data = NULL;
  g_auto(Result) r = { 0 };
  g_auto(Result) r2 = { 0 };
  g_auto(Result) r3 = { 0 };
  guint w, h, pages;

  RUN (&r, "reconstruct", sample, "--row", "3", "--backend", "cpu", "-o", odd);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.err, "names no known format"));
  g_assert_nonnull (strstr (r.err, "slice.xyz"));
  data = read_tiff (odd, &w, &h, &pages);
  g_assert_cmpuint (w, ==, 512);
  g_assert_cmpuint (pages, ==, 1);
  RUN (&r2, "reconstruct", sample, "--row", "3", "--backend", "cpu", "-o", tif);
  g_assert_cmpint (r2.status, ==, 0);
  g_assert_null (strstr (r2.err, "warning"));
  RUN (&r3, "reconstruct", sample, "--row", "3", "--backend", "cpu", "--output-format", "tiff",
       "-o", odd);
  g_assert_cmpint (r3.status, ==, 0);
  g_assert_null (strstr (r3.err, "warning"));
}

/* What is there and no file (a device, a pipe) names no format and needs
 * none; a folder named like an HDF5 file gets one TIFF per slice, and the
 * warning says how to get the file; --plane writes no HDF5. */
static void
test_reconstruct_output_names (void)
{
  g_autofree char *folder = tmp_path ("named.h5/"), *inside = tmp_path ("named.h5/slice_00003.tif");
  g_autofree char *h5 = tmp_path ("plane.h5");
  g_auto(Result) r = { 0 };
  g_auto(Result) r2 = { 0 };
  g_auto(Result) r3 = { 0 };

  RUN (&r, "reconstruct", sample, "--row", "3", "--backend", "cpu", "-o", "/dev/null");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_null (strstr (r.err, "warning"));
  RUN (&r2, "reconstruct", sample, "--row", "3", "--backend", "cpu", "-o", folder);
  g_assert_cmpint (r2.status, ==, 0);
  g_assert_nonnull (strstr (r2.err, "is a folder (the slash)"));
  g_assert_nonnull (strstr (r2.err, "named.h5”"));
  g_assert_true (g_file_test (inside, G_FILE_TEST_IS_REGULAR));
  RUN (&r3, "reconstruct", sample, "--plane", "xz:100", "--rows", "0:8", "--backend", "cpu", "-o", h5);
  assert_fails_with (&r3, "names an HDF5 file");
  g_assert_false (g_file_test (h5, G_FILE_TEST_EXISTS));
}

/* Options that need no scan are checked before a stream is waited for: a
 * typo must not cost a scan (each would otherwise wait its --timeout). */
static void
test_reconstruct_listen_checks_first (void)
{
  static const char *bad[][3] = {
    { "--output-format", "tif", "--output-format “tif” is unknown" },
    { "--filter", "hamm", "hamm" },
    { "--interp", "cubic", "cubic" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_auto(Result) r = { 0 };
      g_autofree char *out = tmp_path ("listen.tif");
      gint64 t0 = g_get_monotonic_time ();

      RUN (&r, "reconstruct", "--listen", "tcp://127.0.0.1:1", "--timeout", "30", bad[i][0],
           bad[i][1], "-o", out);
      assert_fails_with (&r, bad[i][2]);
      g_assert_null (strstr (r.err, "No complete scan"));
      g_assert_cmpint (g_get_monotonic_time () - t0, <, 20 * G_USEC_PER_SEC);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
}

static void
test_backend_gpu_without_device (void)
{
  g_autofree char *out = tmp_path ("gpu.tif");
  g_auto(Result) v = { 0 };
  g_auto(Result) r = { 0 };

  RUN (&v, "--version");
  g_assert_cmpint (v.status, ==, 0);
  if (strstr (v.out, " 0 devices") == NULL)
    {
      g_test_skip ("a CUDA device is present");
      return;
    }
  RUN (&r, "reconstruct", sample, "--backend", "gpu", "-o", out);
  assert_fails_with (&r, "GPU backend not available");
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
#if HAVE_CUDA
  /* Without a driver the runtime's own words ("driver version is
   * insufficient") would send the user to upgrade one. */
  if (!g_file_test ("/proc/driver/nvidia/version", G_FILE_TEST_EXISTS) &&
      !g_file_test ("/dev/nvidiactl", G_FILE_TEST_EXISTS))
    {
      g_assert_nonnull (strstr (r.err, "no NVIDIA driver is loaded"));
      g_assert_null (strstr (r.err, "insufficient"));
    }
#endif
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tomolive = tomo_test_require_env ("TOMOLIVE");
  sample = tomo_test_require_env ("TOMO_SAMPLE_SCAN");
  tmp_dir = tomo_test_make_tmp_dir ("tomo-cli-XXXXXX");

  g_test_add_func ("/tomo/cli/help", test_help);
  g_test_add_func ("/tomo/cli/reconstruct/center-auto", test_reconstruct_center_auto);
  g_test_add_func ("/tomo/cli/reconstruct/unknown-extension", test_reconstruct_unknown_extension);
  g_test_add_func ("/tomo/cli/reconstruct/output-names", test_reconstruct_output_names);
  g_test_add_func ("/tomo/cli/reconstruct/listen-checks-first", test_reconstruct_listen_checks_first);
  g_test_add_func ("/tomo/cli/info", test_info);
  g_test_add_func ("/tomo/cli/info-full-turn", test_info_full_turn);
  g_test_add_func ("/tomo/cli/reconstruct/row", test_reconstruct_row);
  g_test_add_func ("/tomo/cli/reconstruct/rows", test_reconstruct_rows);
  g_test_add_func ("/tomo/cli/phantom", test_phantom_roundtrip);
  g_test_add_func ("/tomo/cli/bad-input", test_bad_input);
  g_test_add_func ("/tomo/cli/find-center/input-options", test_find_center_input_options);
  g_test_add_func ("/tomo/cli/gpu-without-device", test_backend_gpu_without_device);
  return tomo_test_run_and_remove_tree (tmp_dir);
}
