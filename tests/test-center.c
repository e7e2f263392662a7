/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Finding the rotation axis on phantoms whose axis is known: several
 * offsets (half pixels included), noise, ring artefacts, a tilted axis, 180°
 * scans with and without the end angle, 360° scans, and an offset axis
 * stitched to twice the field of view.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-backend.h"
#include "tomo-center.h"
#include "tomo-center-gpu.h"
#include "tomo-center-private.h"
#include "tomo-center-scan.h"
#include "tomo-fbp.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"
#include "tomo-test-util.h"

typedef struct
{
  double range_deg;
  gboolean inclusive; /* last angle at the end of the range */
  double noise;       /* Gaussian σ on line integrals */
  double rings;       /* σ of a fixed offset per detector column */
} SinoSpec;

static double *
make_angles (guint    n,
             double   range_deg,
             gboolean inclusive)
{
  double *a = g_new (double, n);

  for (guint i = 0; i < n; i++)
    a[i] = range_deg * G_PI / 180.0 * i / (inclusive ? n - 1 : n);
  return a;
}

static double
gauss (GRand *r)
{
  return sqrt (-2.0 * log (1.0 - g_rand_double (r))) * cos (2.0 * G_PI * g_rand_double (r));
}

/* Line integrals of the Shepp–Logan phantom's middle row with the axis at
 * `center`. */
static float *
make_sino (guint           width,
           guint           n,
           const double   *angles,
           double          center,
           const SinoSpec *spec)
{
  TomoPhantomParams p;
  g_autofree double *line = g_new (double, (gsize) n * width);
  g_autofree double *ring = g_new0 (double, width);
  g_autoptr(GRand) rand = g_rand_new_with_seed (7);
  float *sino = g_new (float, (gsize) n * width);

  tomo_phantom_params_init (&p);
  p.width = width;
  p.height = 8;
  p.n_proj = n;
  p.center = center;
  tomo_phantom_sinogram (&p, angles, 4, line);
  for (guint x = 0; x < width; x++)
    ring[x] = spec->rings * gauss (rand);
  for (gsize i = 0; i < (gsize) n * width; i++)
    sino[i] = (float) (line[i] + ring[i % width] + spec->noise * gauss (rand));
  return sino;
}

/* --- correlation --------------------------------------------------------- */

static void
check_correlation (double          offset,
                   const SinoSpec *spec,
                   guint           n,
                   double          tolerance)
{
  const guint w = 256;
  double center = (w - 1) / 2.0 + offset;
  g_autofree double *angles = make_angles (n, spec->range_deg, spec->inclusive);
  g_autofree float *sino = make_sino (w, n, angles, center, spec);
  g_autoptr(GError) error = NULL;
  TomoCenterResult r;

  g_assert_true (tomo_center_correlation (&(TomoSinogram) { sino, n, w, angles }, &r, &error));
  g_assert_no_error (error);
  g_test_message ("offset %+.2f, %u proj over %g° (%s), noise %g, rings %g: "
                  "found %.3f for %.3f (±%.3f, %u pairs)",
                  offset, n, spec->range_deg, spec->inclusive ? "inclusive" : "exclusive",
                  spec->noise, spec->rings, r.center, center, r.uncertainty, r.n_used);
  g_assert_cmpfloat (fabs (r.center - center), <, tolerance);
  g_assert_cmpint (r.method, ==, TOMO_CENTER_METHOD_CORRELATION);
  g_assert_true (r.uncertainty > 0 && isfinite (r.uncertainty));

  /* Through the backend interface, the CPU's: the same answer. */
  {
    TomoBackendImpl *cpu = tomo_backend_cpu_new ();
    TomoCenterResult rb;

    g_assert_true (tomo_center_correlation_backend (cpu, &(TomoSinogram) { sino, n, w, angles },
                                                         &rb, &error));
    g_assert_no_error (error);
    g_assert_cmpfloat (rb.center, ==, r.center);
    g_assert_cmpuint (rb.n_used, ==, r.n_used);
    tomo_backend_free (cpu);
  }
}

static void
test_correlation_offsets (void)
{
  const double offsets[] = { 3.37, -7.5, 0.5, 12.25, -20.75, 0.0 };
  SinoSpec inclusive = { 180.0, TRUE, 0, 0 }, exclusive = { 180.0, FALSE, 0, 0 };

  for (guint i = 0; i < G_N_ELEMENTS (offsets); i++)
    {
      check_correlation (offsets[i], &inclusive, 181, 0.2);
      check_correlation (offsets[i], &exclusive, 180, 0.2);
    }
}

static void
test_correlation_noise_rings (void)
{
  /* Noise ~2 % of the line integrals' peak (~1.2), and ring offsets. */
  SinoSpec noisy = { 180.0, TRUE, 0.02, 0 }, rings = { 180.0, TRUE, 0.005, 0.02 };
  SinoSpec both360 = { 360.0, FALSE, 0.02, 0.02 };

  check_correlation (3.37, &noisy, 181, 0.2);
  check_correlation (-9.5, &noisy, 181, 0.2);
  check_correlation (3.37, &rings, 181, 0.2);
  check_correlation (-6.25, &rings, 181, 0.2);
  check_correlation (5.5, &both360, 360, 0.2);
}

static void
test_correlation_360 (void)
{
  const guint w = 256, n = 360;
  SinoSpec spec = { 360.0, FALSE, 0.01, 0 };
  g_autofree double *angles = make_angles (n, 360.0, FALSE);
  g_autofree double *weights = g_new (double, n);
  g_autofree float *sino = make_sino (w, n, angles, 131.25, &spec);
  TomoCenterResult r;

  g_assert_true (tomo_angles_is_full_turn (angles, n));
  g_assert_false (tomo_angles_is_full_turn (angles, n / 2));
  tomo_angles_fbp_weights (angles, n, weights);
  for (guint i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon (weights[i], 1.0, 1e-9);
  /* The pairs come from the same scan: θ and θ+180°. */
  g_assert_true (tomo_center_correlation (&(TomoSinogram) { sino, n, w, angles }, &r, NULL));
  g_assert_cmpuint (r.n_used, >=, 16);
  g_assert_cmpfloat (fabs (r.center - 131.25), <, 0.2);

  /* Non-finite values count as 0 (read from the pairs' rows, not from a
   * cleaned copy): a dead projection and a few NaN/Inf pixels give the
   * answer of the same sinogram with zeros there. */
  {
    g_autofree float *bad = g_memdup2 (sino, sizeof (float) * n * w);
    g_autofree float *zero = g_memdup2 (sino, sizeof (float) * n * w);
    TomoCenterResult rb, rz;

    for (guint x = 0; x < w; x++)
      {
        bad[7 * w + x] = NAN;
        zero[7 * w + x] = 0.0f;
      }
    bad[190 * w + 40] = INFINITY;
    bad[3 * w + 100] = NAN;
    zero[190 * w + 40] = zero[3 * w + 100] = 0.0f;
    g_assert_true (tomo_center_correlation (&(TomoSinogram) { bad, n, w, angles }, &rb, NULL));
    g_assert_true (tomo_center_correlation (&(TomoSinogram) { zero, n, w, angles }, &rz, NULL));
    g_assert_cmpfloat (rb.center, ==, rz.center);
    g_assert_cmpuint (rb.n_used, ==, rz.n_used);
    g_assert_cmpfloat (fabs (rb.center - 131.25), <, 0.2);
  }
}

static void
test_weights_partial (void)
{
  /* 0…270°: directions 0…90° are measured twice, 90…180° once. */
  const guint n = 270;
  g_autofree double *angles = make_angles (n, 270.0, FALSE);
  g_autofree double *weights = g_new (double, n);
  double sum = 0;

  tomo_angles_fbp_weights (angles, n, weights);
  g_assert_cmpfloat_with_epsilon (weights[45], 0.5 * 270.0 / 180.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (weights[135], 1.0 * 270.0 / 180.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (weights[225], 0.5 * 270.0 / 180.0, 1e-6);
  for (guint i = 0; i < n; i++)
    sum += weights[i];
  /* Every direction of the half turn counted once in all: the same total
   * weight as an even 180° scan of n projections. */
  g_assert_cmpfloat_with_epsilon (sum / n, 1.0, 0.01);
}

/* --- sinogram method ----------------------------------------------------- */

static void
test_sinogram_method (void)
{
  const guint w = 256, n = 180;
  const double offsets[] = { 3.37, -7.5, 10.25 };
  SinoSpec spec = { 170.0, TRUE, 0.01, 0 };
  g_autofree double *angles = make_angles (n, 170.0, TRUE); /* no 180° pair */

  for (guint i = 0; i < G_N_ELEMENTS (offsets); i++)
    {
      double center = (w - 1) / 2.0 + offsets[i];
      g_autofree float *sino = make_sino (w, n, angles, center, &spec);
      g_autoptr(GError) error = NULL;
      TomoCenterResult r;

      /* Correlation has nothing to pair with; auto falls back. */
      g_assert_false (tomo_center_correlation (&(TomoSinogram) { sino, n, w, angles }, &r, &error));
      g_assert_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_NO_PAIR);
      g_assert_true (tomo_center_estimate (&(TomoSinogram) { sino, n, w, angles },
                                           TOMO_CENTER_METHOD_AUTO, &r, NULL));
      g_test_message ("sinogram: found %.3f for %.3f (±%.3f)", r.center, center, r.uncertainty);
      g_assert_cmpint (r.method, ==, TOMO_CENTER_METHOD_SINOGRAM);
      g_assert_cmpfloat (fabs (r.center - center), <, 0.2);
    }
}

/* --- sweep --------------------------------------------------------------- */

static void
test_sweep (void)
{
  const guint w = 128, n = 181;
  const double offsets[] = { 3.37, -4.5, 6.75 };
  SinoSpec spec = { 180.0, TRUE, 0.01, 0 };
  g_autofree double *angles = make_angles (n, 180.0, TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (offsets); i++)
    {
      double center = (w - 1) / 2.0 + offsets[i];
      g_autofree float *sino = make_sino (w, n, angles, center, &spec);
      g_autoptr(GError) error = NULL;
      TomoCenterResult r;

      /* Start 3 px off: the sweep must walk to the right place itself. */
      g_assert_true (tomo_center_sweep (&(TomoSinogram) { sino, n, w, angles },
                                        center + 3.0, 6.0, &r, &error));
      g_assert_no_error (error);
      g_test_message ("sweep: found %.3f for %.3f", r.center, center);
      g_assert_cmpint (r.method, ==, TOMO_CENTER_METHOD_SWEEP);
      g_assert_cmpfloat (fabs (r.center - center), <, 0.25);
    }
}

/* --- tilt through a scan file -------------------------------------------- */

static void
test_tilt (void)
{
  const double tilts[] = { 0.4, -0.25 };

  for (guint t = 0; t < G_N_ELEMENTS (tilts); t++)
    {
      g_autofree char *dir = g_dir_make_tmp ("tomo-center-XXXXXX", NULL);
      g_autofree char *path = g_build_filename (dir, "tilt.h5", NULL);
      g_autoptr(TomoScan) scan = NULL;
      g_autoptr(GError) error = NULL;
      TomoOpenOptions options;
      TomoPhantomParams p;
      TomoCenterResult r;

      tomo_phantom_params_init (&p);
      p.width = 256;
      p.height = 96;
      p.n_proj = 181;
      p.angle_range_deg = 180.0 * 181 / 180; /* 0…180° inclusive */
      p.center = 127.5 + 4.25;
      p.tilt_deg = tilts[t];
      g_assert_true (tomo_phantom_write_dxchange (&p, path, &error));
      g_assert_no_error (error);
      tomo_open_options_init (&options);
      scan = tomo_scan_open (path, &options, &error);
      g_assert_no_error (error);

      g_assert_true (tomo_center_find_in_scan (scan, 48, TOMO_CENTER_METHOD_AUTO, &r, &error));
      g_assert_no_error (error);
      g_test_message ("tilt %.3f°: found %.4f° (±%.4f), centre %.3f for %.3f", tilts[t],
                      r.tilt_deg, r.tilt_uncertainty_deg, r.center, tomo_phantom_row_center (&p, 48));
      g_assert_cmpfloat (fabs (r.tilt_deg - tilts[t]), <, 0.05);
      g_assert_cmpfloat (fabs (r.center - tomo_phantom_row_center (&p, 48)), <, 0.2);
      g_remove (path);
      g_rmdir (dir);
    }
}

/* One row with next to no sample in it finds a centre far off (an 8-row
 * scan's top row: 39.6 for an axis at 504.2); among four rows a least-
 * squares line through it tilted the axis to −88.8°.  The repeated median
 * leaves it out.  Two such rows among ten do not pull a real tilt. */
static void
test_tilt_outlier_rows (void)
{
  const double rows4[] = { 2, 4, 5, 7 }, centers4[] = { 504.2083, 504.2211, 504.1721, 39.6027 };
  const double sigmas4[] = { 0.1, 0.1, 0.1, 0.1 };
  double rows10[10], centers10[10], sigmas10[10];
  TomoCenterResult r;
  g_autoptr(GError) error = NULL;

  memset (&r, 0, sizeof r);
  g_assert_true (tomo_center_fit_tilt (rows4, centers4, sigmas4, 4, &r, &error));
  g_assert_no_error (error);
  g_test_message ("four rows, one off: tilt %.4f ± %.4f°", r.tilt_deg, r.tilt_uncertainty_deg);
  /* Rows 2, 4 and 5 at 0.1 px each: ±2.65° is all they can say, and the
   * axis stands within it. */
  g_assert_cmpfloat (fabs (r.tilt_deg), <, r.tilt_uncertainty_deg);
  g_assert_cmpfloat_with_epsilon (r.tilt_uncertainty_deg, 2.652, 0.01);

  for (guint i = 0; i < 10; i++)
    {
      rows10[i] = 5 + 10 * i;
      centers10[i] = 250 + tan (0.5 * G_PI / 180) * rows10[i] + (i % 2 ? 0.02 : -0.02);
      sigmas10[i] = 0.05;
    }
  centers10[0] = 20.0;
  centers10[9] = 480.0;
  g_assert_true (tomo_center_fit_tilt (rows10, centers10, sigmas10, 10, &r, &error));
  g_assert_no_error (error);
  g_test_message ("ten rows, two off: tilt %.4f ± %.4f°", r.tilt_deg, r.tilt_uncertainty_deg);
  g_assert_cmpfloat (fabs (r.tilt_deg - 0.5), <, 0.02);

  /* Rows within their own errors (±0.3 px) are all kept, however few: the
   * weighted line through these three says −0.016 ± 0.24°; dropping the
   * last would say 4.8°. */
  {
    const double rows3[] = { 5, 11, 95 }, centers3[] = { 100.0, 100.5, 100.2 };
    const double sigmas3[] = { 0.3, 0.3, 0.3 };
    const double rows5[] = { 5, 27, 49, 71, 93 }, centers5[] = { 100.0, 100.5, 99.8, 100.3, 100.1 };
    const double sigmas5[] = { 0.3, 0.3, 0.3, 0.3, 0.3 };

    g_assert_true (tomo_center_fit_tilt (rows3, centers3, sigmas3, 3, &r, &error));
    g_test_message ("three rows: tilt %.4f ± %.4f°", r.tilt_deg, r.tilt_uncertainty_deg);
    g_assert_cmpfloat (fabs (r.tilt_deg), <, 0.1);
    g_assert_true (tomo_center_fit_tilt (rows5, centers5, sigmas5, 5, &r, &error));
    g_test_message ("five rows: tilt %.4f ± %.4f°", r.tilt_deg, r.tilt_uncertainty_deg);
    /* All five: σ of the slope 0.3 / sqrt (Σ (r − r̄)²) = 0.3 / 69.6 rad. */
    g_assert_cmpfloat_with_epsilon (r.tilt_uncertainty_deg, 0.3 / sqrt (4840.0) * 180 / G_PI, 1e-3);
  }
}

/* --- degenerate input ---------------------------------------------------- */

static void
test_degenerate (void)
{
  const guint w = 64, n = 32;
  g_autofree double *angles = make_angles (n, 180.0, TRUE);
  g_autofree float *sino = g_new (float, n * w);
  const TomoCenterMethod methods[] = { TOMO_CENTER_METHOD_CORRELATION, TOMO_CENTER_METHOD_SINOGRAM,
                                       TOMO_CENTER_METHOD_SWEEP, TOMO_CENTER_METHOD_AUTO };

  for (guint m = 0; m < G_N_ELEMENTS (methods); m++)
    {
      TomoCenterResult r;

      for (guint i = 0; i < n * w; i++)
        sino[i] = 1.5f;
      {
        g_autoptr(GError) error = NULL;
        g_assert_false (tomo_center_estimate (&(TomoSinogram) { sino, n, w, angles },
                                              methods[m], &r, &error));
        g_assert_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE);
        g_assert_nonnull (strstr (error->message, "contrast"));
      }
      for (guint i = 0; i < n * w; i++)
        sino[i] = NAN;
      {
        g_autoptr(GError) error = NULL;
        g_assert_false (tomo_center_estimate (&(TomoSinogram) { sino, n, w, angles },
                                              methods[m], &r, &error));
        g_assert_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE);
      }
      for (guint i = 0; i < w; i++)
        sino[i] = i % 7;
      {
        g_autoptr(GError) error = NULL;
        g_assert_false (tomo_center_estimate (&(TomoSinogram) { sino, 1, w, angles },
                                              methods[m], &r, &error));
        g_assert_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE);
        g_assert_true (isnan (r.center));
      }
    }
}

/* --- offset axis --------------------------------------------------------- */

static void
test_offset_axis (void)
{
  /* The object is as wide as a 2·W detector; the real detector is W wide
   * with the axis `edge` columns from its left end. */
  const guint w = 128, wb = 2 * w, n = 720;
  const double edge = 12.5;
  TomoPhantomParams p;
  g_autofree double *angles = make_angles (n, 360.0, FALSE);
  g_autofree double *full = g_new (double, (gsize) n * wb);
  g_autofree float *sino = g_new (float, (gsize) n * w);
  g_autofree float *truth = g_new (float, (gsize) wb * wb);
  g_autofree float *slice = NULL;
  g_auto(TomoStitched) stitched = { 0 };
  g_autoptr(TomoCpuFbp) fbp = NULL;
  g_autoptr(GError) error = NULL;
  TomoReconParams params;
  TomoCenterResult r;
  guint ns = 0, ws = 0, crop;
  double cs = 0, R;
  const TomoEllipsoid *e;
  guint n_e;

  tomo_phantom_params_init (&p);
  p.kind = TOMO_PHANTOM_DISKS;
  p.width = wb;
  p.height = 8;
  p.n_proj = n;
  p.center = (wb - 1) / 2.0;
  tomo_phantom_sinogram (&p, angles, 4, full);
  tomo_phantom_slice (&p, 4, truth);
  /* Crop so the axis, at (wb−1)/2 in the wide frame, sits `edge` columns
   * from the left end: columns crop … crop + w − 1. */
  crop = (guint) ((wb - 1) / 2.0 - edge);
  for (guint i = 0; i < n; i++)
    for (guint x = 0; x < w; x++)
      sino[(gsize) i * w + x] = (float) full[(gsize) i * wb + crop + x];
  g_assert_cmpfloat_with_epsilon ((wb - 1) / 2.0 - crop, edge, 1e-9);

  /* The centre from θ against θ+180° of the same scan, near the edge. */
  g_assert_true (tomo_center_correlation (&(TomoSinogram) { sino, n, w, angles }, &r, &error));
  g_assert_no_error (error);
  g_test_message ("offset axis: found %.3f for %.3f", r.center, edge);
  g_assert_cmpfloat (fabs (r.center - edge), <, 0.2);

  g_assert_true (tomo_sinogram_stitch_360 (&(TomoSinogram) { sino, n, w, angles }, edge, &stitched,
                                           &error));
  g_assert_no_error (error);
  g_assert_nonnull (stitched.data);
  ns = stitched.n_proj;
  ws = stitched.width;
  cs = stitched.center;
  g_assert_cmpuint (ns, ==, n / 2);
  g_assert_cmpuint (ws, >=, 2 * w - 2 * (guint) edge - 2);
  g_assert_cmpfloat (fabs (cs - (ws - 1) / 2.0), <=, 0.5);

  fbp = tomo_cpu_fbp_new (ws, ns, stitched.angles, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO, 0);
  tomo_recon_params_init (&params, ws);
  params.center = cs;
  slice = g_new (float, (gsize) ws * ws);
  tomo_cpu_fbp_reconstruct (fbp, stitched.data, &params, slice);

  /* Region means of every disk against the truth, in the same frame
   * (the axis at each slice's middle). */
  e = tomo_phantom_get_ellipsoids (TOMO_PHANTOM_DISKS, &n_e);
  R = 0.45 * wb;
  for (guint k = 0; k < n_e; k++)
    {
      double x = e[k].x0 * R, y = -e[k].y0 * R, rad = 0.5 * MIN (e[k].a, 0.5) * R;
      double want = tomo_test_disc_mean (truth, wb, (wb - 1) / 2.0 + x, (wb - 1) / 2.0 + y, rad);
      double got = tomo_test_disc_mean (slice, ws, (ws - 1) / 2.0 + x - (cs - (ws - 1) / 2.0),
                              (ws - 1) / 2.0 + y, rad);

      g_test_message ("disk %u at (%.0f, %.0f): %.5f, truth %.5f (%.2f %%)", k, x, y, got, want,
                      100.0 * (got - want) / want);
      g_assert_cmpfloat (fabs (got - want), <, 0.02 * fabs (want));
    }
}

static void
test_stitch_errors (void)
{
  const guint w = 64, n = 90;
  g_autofree double *angles = make_angles (n, 180.0, FALSE);
  g_autofree float *sino = g_new0 (float, n * w);
  g_auto(TomoStitched) stitched = { 0 };
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < n * w; i++)
    sino[i] = (i % w) * 0.1f;
  g_assert_false (tomo_sinogram_stitch_360 (&(TomoSinogram) { sino, n, w, angles }, 10.0,
                                            &stitched, &error));
  g_assert_null (stitched.data);
  g_assert_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_NO_PAIR);
}

/* --- the command line ---------------------------------------------------- */

static void
test_cli (void)
{
  g_autofree char *dir = g_dir_make_tmp ("tomo-center-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "scan.h5", NULL);
  g_autofree char *flat = g_build_filename (dir, "flat.h5", NULL);
  double center;

  if (g_getenv ("TOMOLIVE") == NULL)
    {
      g_test_skip ("TOMOLIVE is not set (run through meson test)");
      return;
    }
  {
    g_auto(TomoTestResult) r = { 0 };

    TOMO_TEST_RUN (&r, "phantom", "--width", "256", "--height", "32", "--projections", "181",
                   "--angle-range", "181", "--center-offset", "-5.5", "--tilt", "0.3",
                   "--seed", "3", "-o", path);
    g_assert_cmpint (r.status, ==, 0);
  }
  {
    g_auto(TomoTestResult) r = { 0 };

    TOMO_TEST_RUN (&r, "find-center", path, "--json", "--row", "16");
    g_assert_cmpint (r.status, ==, 0);
    g_test_message ("%s", r.out);
    center = g_ascii_strtod (strstr (r.out, "\"center\": ") + 10, NULL);
    /* The phantom's axis at row 16 of 32 rows: 122 + tan(0.3°)·0.5. */
    g_assert_cmpfloat (fabs (center - (122.0 + tan (0.3 * G_PI / 180.0) * 0.5)), <, 0.2);
    g_assert_nonnull (strstr (r.out, "\"method\": \"correlation\""));
    g_assert_nonnull (strstr (r.out, "\"tilt_deg\": 0."));
  }
  {
    g_auto(TomoTestResult) r = { 0 };

    TOMO_TEST_RUN (&r, "find-center", path, "--method", "sinogram");
    g_assert_cmpint (r.status, ==, 0);
    g_assert_nonnull (strstr (r.out, "(sinogram,"));
  }
  {
    g_auto(TomoTestResult) r = { 0 };

    TOMO_TEST_RUN (&r, "find-center", path, "--method", "magic");
    tomo_test_assert_fails_with (&r, "magic");
  }
  {
    g_auto(TomoTestResult) r = { 0 };

    TOMO_TEST_RUN (&r, "find-center", path, "--row", "40");
    tomo_test_assert_fails_with (&r, "Row 40");
  }
  {
    g_auto(TomoTestResult) r = { 0 };

    /* A blank scan: no contrast anywhere — an error, not a number. */
    TOMO_TEST_RUN (&r, "phantom", "--width", "64", "--height", "4", "--projections", "10",
                   "--attenuation", "0", "--no-noise", "-o", flat);
    g_assert_cmpint (r.status, ==, 0);
  }
  {
    g_auto(TomoTestResult) r = { 0 };

    TOMO_TEST_RUN (&r, "find-center", flat);
    tomo_test_assert_fails_with (&r, "contrast");
  }
  g_remove (path);
  g_remove (flat);
  g_rmdir (dir);
}

/* One side of an index search against the search over all: the same
 * projection within the reach, none beyond it. */
static void
assert_side (int     all,
             double  d_all,
             int     indexed,
             double  d_indexed,
             double  reach,
             guint  *compared,
             guint  *outside)
{
  if (d_all <= reach)
    {
      g_assert_cmpint (indexed, ==, all);
      g_assert_cmpfloat (d_indexed, ==, d_all);
      (*compared)++;
    }
  else
    {
      g_assert_cmpint (indexed, ==, -1);
      g_assert_true (isinf (d_indexed));
      (*outside)++;
    }
}

/* The stitch's search for opposite projections by bisection answers as
 * the search over every projection does, wherever the nearest projection
 * on a side lies within the reach: on even turns, jittered and shuffled
 * angles, angles beyond one turn and below zero, repeated angles, a gap,
 * three angles with the rest of the turn empty, targets exactly on
 * projections, and reaches just under half a turn (the search over all,
 * still cut at the reach). */
static void
test_angle_index (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (7);
  guint compared = 0, outside = 0;

  for (guint set = 0; set < 7; set++)
    {
      guint n = set == 0 ? 1800 : set >= 5 ? 3 : 200 + 97 * set;
      g_autofree double *angles = g_new (double, n);
      g_autoptr(TomoAngleIndex) index = NULL;
      double step = 2.0 * G_PI / n;

      for (guint i = 0; i < n; i++)
        {
          angles[i] = step * i;
          if (set == 1)         /* jittered, then shuffled below */
            angles[i] += g_rand_double_range (rand, -0.3, 0.3) * step;
          if (set == 2)         /* a turn and a half, from below zero */
            angles[i] = 1.5 * step * i - 0.7;
          if (set == 3 && i % 5 == 0 && i > 0)   /* repeated angles */
            angles[i] = angles[i - 1];
          if (set == 4 && i > n / 3 && i < n / 2)  /* a gap */
            angles[i] += 0.5;
          if (set == 6)         /* three together, most of the turn empty */
            angles[i] = 0.1 * i;
        }
      if (set == 1)
        for (guint i = n - 1; i > 0; i--)
          {
            guint j = g_rand_int_range (rand, 0, i + 1);
            double a = angles[i];

            angles[i] = angles[j];
            angles[j] = a;
          }
      index = _tomo_angle_index_new (angles, n);
      for (guint k = 0; k < 2000; k++)
        {
          double target = k % 4 == 0 ? angles[k % n] + (k % 8 == 0 ? G_PI : 0.0)
                                     : g_rand_double_range (rand, -8.0, 8.0);
          /* Just under half a turn: the search over all, still cut. */
          double reach = k % 5 == 4 ? G_PI - 5e-10 : (k % 3 + 0.5) * step;
          int b0, a0, b1, a1;
          double db0, da0, db1, da1;

          _tomo_angles_nearest (angles, n, target, &b0, &db0, &a0, &da0);
          _tomo_angle_index_nearest (index, target, reach, &b1, &db1, &a1, &da1);
          assert_side (b0, db0, b1, db1, reach, &compared, &outside);
          assert_side (a0, da0, a1, da1, reach, &compared, &outside);
        }
      /* Half a turn of reach or more: the search over all. */
      {
        int b0, a0, b1, a1;
        double db0, da0, db1, da1;

        _tomo_angles_nearest (angles, n, 1.0, &b0, &db0, &a0, &da0);
        _tomo_angle_index_nearest (index, 1.0, G_PI, &b1, &db1, &a1, &da1);
        g_assert_cmpint (b1, ==, b0);
        g_assert_cmpint (a1, ==, a0);
      }
    }
  g_test_message ("%u sides compared, %u beyond the reach", compared, outside);
  g_assert_cmpuint (compared, >, 10000);
  g_assert_cmpuint (outside, >, 100);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tomo/center/correlation/offsets", test_correlation_offsets);
  g_test_add_func ("/tomo/center/correlation/noise-rings", test_correlation_noise_rings);
  g_test_add_func ("/tomo/center/correlation/360", test_correlation_360);
  g_test_add_func ("/tomo/center/weights/partial", test_weights_partial);
  g_test_add_func ("/tomo/center/sinogram", test_sinogram_method);
  g_test_add_func ("/tomo/center/sweep", test_sweep);
  g_test_add_func ("/tomo/center/tilt", test_tilt);
  g_test_add_func ("/tomo/center/tilt-outlier-rows", test_tilt_outlier_rows);
  g_test_add_func ("/tomo/center/degenerate", test_degenerate);
  g_test_add_func ("/tomo/center/offset-axis", test_offset_axis);
  g_test_add_func ("/tomo/center/stitch-errors", test_stitch_errors);
  g_test_add_func ("/tomo/center/angle-index", test_angle_index);
  g_test_add_func ("/tomo/center/cli", test_cli);
  return g_test_run ();
}
