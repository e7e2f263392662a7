/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "tomo-fbp.h"
#include "tomo-filter.h"
#include "tomo-phantom.h"
#include "tomo-test-util.h"

/* An analytic phantom, its exact (noise-free) sinogram and its truth. */
typedef struct
{
  TomoPhantomParams params;
  guint w, n;
  double *angles;
  float *sino;
  float *truth;
  /* After fixture_filter: its FBP, the filtered sinogram (in double too
   * when asked), room for a whole slice of each and that slice's ROI. */
  TomoCpuFbp *fbp;
  float *filtered, *img;
  double *filtered_d, *img_d;
  TomoRoi whole;
} Fixture;

static void
fixture_init (Fixture        *fx,
              TomoPhantomKind kind,
              guint           width,
              guint           n_proj)
{
  g_autofree double *sino_d = NULL;

  memset (fx, 0, sizeof *fx);
  fx->w = width;
  fx->n = n_proj;
  tomo_test_phantom_params (&fx->params, width, 1, n_proj);
  fx->params.kind = kind;
  fx->angles = tomo_test_half_turn (n_proj);

  sino_d = g_new (double, (gsize) n_proj * width);
  tomo_phantom_sinogram (&fx->params, fx->angles, 0, sino_d);
  fx->sino = g_new (float, (gsize) n_proj * width);
  for (gsize i = 0; i < (gsize) n_proj * width; i++)
    fx->sino[i] = (float) sino_d[i];

  fx->truth = g_new (float, (gsize) width * width);
  tomo_phantom_slice (&fx->params, 0, fx->truth);
}

static void
fixture_clear_filtered (Fixture *fx)
{
  g_clear_pointer (&fx->fbp, tomo_cpu_fbp_free);
  g_clear_pointer (&fx->filtered, g_free);
  g_clear_pointer (&fx->filtered_d, g_free);
  g_clear_pointer (&fx->img, g_free);
  g_clear_pointer (&fx->img_d, g_free);
}

static void
fixture_clear (Fixture *fx)
{
  fixture_clear_filtered (fx);
  g_free (fx->angles);
  g_free (fx->sino);
  g_free (fx->truth);
}

/* A new FBP over the fixture, and the fixture's sinogram filtered by it in
 * float and, `with_double`, in double. */
static void
fixture_filter (Fixture        *fx,
                TomoFilterType  filter,
                TomoPadMode     pad,
                guint           n_threads,
                gboolean        with_double)
{
  fixture_clear_filtered (fx);
  fx->fbp = tomo_cpu_fbp_new (fx->w, fx->n, fx->angles, filter, pad, n_threads);
  fx->filtered = g_new (float, (gsize) fx->n * fx->w);
  tomo_cpu_fbp_filter (fx->fbp, fx->sino, fx->filtered);
  fx->img = g_new (float, (gsize) fx->w * fx->w);
  if (with_double)
    {
      fx->filtered_d = g_new (double, (gsize) fx->n * fx->w);
      tomo_cpu_fbp_filter_double (fx->fbp, fx->sino, fx->filtered_d);
      fx->img_d = g_new (double, (gsize) fx->w * fx->w);
    }
  fx->whole = (TomoRoi) { 0, 0, fx->w, fx->w };
}

static float *
reconstruct (Fixture       *fx,
             TomoFilterType filter,
             TomoPadMode    pad,
             TomoInterp     interp,
             double         center,
             guint          n_threads)
{
  fixture_filter (fx, filter, pad, n_threads, FALSE);
  tomo_cpu_fbp_backproject (fx->fbp, fx->filtered, center, interp, &fx->whole, fx->img);
  return g_steal_pointer (&fx->img);
}

/* Mean of `img` over the pixels whose truth is `value` everywhere within
 * `margin` pixels (away from edges, where partial volume and the filter's
 * ringing live).  Returns the number of pixels used. */
static guint
region_mean (const Fixture *fx,
             const float   *img,
             float          value,
             int            margin,
             double        *mean)
{
  double sum = 0.0;
  guint count = 0;
  int w = fx->w;

  for (int iy = margin; iy < w - margin; iy++)
    for (int ix = margin; ix < w - margin; ix++)
      {
        gboolean inside = TRUE;

        for (int dy = -margin; dy <= margin && inside; dy++)
          for (int dx = -margin; dx <= margin && inside; dx++)
            if (fabsf (fx->truth[(iy + dy) * w + ix + dx] - value) > 1e-6f * fabsf (value))
              inside = FALSE;
        if (inside)
          {
            sum += img[iy * w + ix];
            count++;
          }
      }
  *mean = count > 0 ? sum / count : NAN;
  return count;
}

/* Relative L2 distance of img to the truth over the inscribed disk (the
 * corners are outside every projection). */
static double
error_vs_truth (const Fixture *fx,
                const float   *img)
{
  double c = (fx->w - 1) / 2.0, r = 0.45 * fx->w, e = 0.0, t = 0.0;

  for (guint iy = 0; iy < fx->w; iy++)
    for (guint ix = 0; ix < fx->w; ix++)
      if ((ix - c) * (ix - c) + (iy - c) * (iy - c) < r * r)
        {
          double d = img[iy * fx->w + ix] - fx->truth[iy * fx->w + ix];
          e += d * d;
          t += (double) fx->truth[iy * fx->w + ix] * fx->truth[iy * fx->w + ix];
        }
  return sqrt (e / t);
}

static void
test_disk_region_means (void)
{
  Fixture fx;
  const float values[] = { 1.0f, 2.0f, 0.5f, 1.5f };

  fixture_init (&fx, TOMO_PHANTOM_DISKS, 160, 240);
  for (TomoPadMode pad = TOMO_PAD_ZERO; pad <= TOMO_PAD_EDGE; pad++)
    {
      g_autofree float *img = reconstruct (&fx, TOMO_FILTER_RAMLAK, pad, TOMO_INTERP_LINEAR,
                                           fx.params.center, 0);

      tomo_test_assert_finite (img, fx.w * fx.w);
      for (guint i = 0; i < G_N_ELEMENTS (values); i++)
        {
          float v = values[i] * fx.params.max_attenuation;
          double mean;
          guint count = region_mean (&fx, fx.truth, v, 4, &mean);

          g_assert_cmpuint (count, >, 50);
          g_assert_cmpfloat_with_epsilon (mean, v, 1e-6 * v); /* the mask is right */
          region_mean (&fx, img, v, 4, &mean);
          g_test_message ("pad %d: region %.2f: mean %.5f truth %.5f (%+.2f %%)", pad, values[i],
                          mean, v, 100 * (mean - v) / v);
          g_assert_cmpfloat (fabs (mean - v), <, 0.02 * v);
        }
    }
  fixture_clear (&fx);
}

static void
test_shepp_logan_region_means (void)
{
  Fixture fx;
  const float values[] = { 0.2f, 0.3f };

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 192, 300);
  for (TomoFilterType f = TOMO_FILTER_RAMLAK; f < TOMO_N_FILTERS; f++)
    {
      g_autofree float *img = reconstruct (&fx, f, TOMO_PAD_EDGE, TOMO_INTERP_LINEAR,
                                           fx.params.center, 0);

      for (guint i = 0; i < G_N_ELEMENTS (values); i++)
        {
          float v = values[i] * fx.params.max_attenuation;
          double mean;

          g_assert_cmpuint (region_mean (&fx, img, v, 4, &mean), >, 20);
          g_test_message ("%s: region %.2f: %+.2f %%", tomo_filter_type_to_string (f), values[i],
                          100 * (mean - v) / v);
          g_assert_cmpfloat (fabs (mean - v), <, 0.02 * v);
        }
    }
  fixture_clear (&fx);
}

/* Scan the centre in 0.05 px steps; the image closest to the truth and the
 * sharpest image (largest gradient energy) must both be at the true axis. */
static void
test_centre_scan (void)
{
  Fixture fx;
  double best_err = G_MAXDOUBLE, best_err_c = 0, best_sharp = 0, best_sharp_c = 0;
  double best_tv = G_MAXDOUBLE, best_tv_c = 0;
  const float *img;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 128, 180);
  fixture_filter (&fx, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, 0, FALSE);
  img = fx.img;

  for (int k = -40; k <= 40; k++)
    {
      double centre = (fx.w - 1) / 2.0 + 3.37 + 0.05 * k;
      double err, sharp = 0.0, tv = 0.0;

      tomo_cpu_fbp_backproject (fx.fbp, fx.filtered, centre, TOMO_INTERP_LINEAR, &fx.whole,
                                fx.img);
      err = error_vs_truth (&fx, img);
      for (guint iy = 1; iy < fx.w; iy++)
        for (guint ix = 1; ix < fx.w; ix++)
          {
            double gx = img[iy * fx.w + ix] - img[iy * fx.w + ix - 1];
            double gy = img[iy * fx.w + ix] - img[(iy - 1) * fx.w + ix];
            sharp += gx * gx + gy * gy;
            tv += sqrt (gx * gx + gy * gy);
          }
      if (tv < best_tv)
        best_tv = tv, best_tv_c = centre;
      if (err < best_err)
        best_err = err, best_err_c = centre;
      if (sharp > best_sharp)
        best_sharp = sharp, best_sharp_c = centre;
    }
  g_test_message ("true centre %.3f, closest to truth at %.3f (error %.4f), "
                  "most gradient energy at %.3f, least total variation at %.3f",
                  fx.params.center, best_err_c, best_err, best_sharp_c, best_tv_c);
  g_assert_cmpfloat (fabs (best_err_c - fx.params.center), <=, 0.25);
  g_assert_cmpfloat (fabs (best_tv_c - fx.params.center), <=, 0.25);
  fixture_clear (&fx);
}

static void
test_nearest_vs_linear (void)
{
  Fixture fx;
  g_autofree float *lin = NULL;
  g_autofree float *near = NULL;
  double e_lin, e_near;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 128, 180);
  lin = reconstruct (&fx, TOMO_FILTER_SHEPP_LOGAN, TOMO_PAD_EDGE, TOMO_INTERP_LINEAR,
                     fx.params.center, 0);
  near = reconstruct (&fx, TOMO_FILTER_SHEPP_LOGAN, TOMO_PAD_EDGE, TOMO_INTERP_NEAREST,
                      fx.params.center, 0);
  e_lin = error_vs_truth (&fx, lin);
  e_near = error_vs_truth (&fx, near);
  g_test_message ("relative L2 error: linear %.4f, nearest %.4f", e_lin, e_near);
  g_assert_cmpfloat (e_lin, <, e_near);
  g_assert_cmpfloat (e_lin, <, 0.5);
  g_assert_cmpfloat (e_near, <, 0.7);
  fixture_clear (&fx);
}

/* Dots land where the geometry says: (x0·R, −y0·R) from the slice centre,
 * row 0 at the top.  Checks the signs of the convention, not just values. */
static void
test_geometry_points (void)
{
  Fixture fx;
  g_autofree float *img = NULL;
  const TomoEllipsoid *e;
  guint n_e;
  double c, R;

  fixture_init (&fx, TOMO_PHANTOM_POINTS, 128, 180);
  img = reconstruct (&fx, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO, TOMO_INTERP_LINEAR,
                     fx.params.center, 0);
  e = tomo_phantom_get_ellipsoids (TOMO_PHANTOM_POINTS, &n_e);
  c = (fx.w - 1) / 2.0;
  R = 0.45 * fx.w;

  for (guint i = 0; i < n_e; i++)
    {
      int ex = (int) round (c + e[i].x0 * R), ey = (int) round (c - e[i].y0 * R);
      int bx = 0, by = 0;
      float best = -G_MAXFLOAT;

      for (int dy = -6; dy <= 6; dy++)
        for (int dx = -6; dx <= 6; dx++)
          {
            float v = img[(ey + dy) * (int) fx.w + ex + dx];
            if (v > best)
              best = v, bx = ex + dx, by = ey + dy;
          }
      g_assert_cmpint (abs (bx - ex), <=, 1);
      g_assert_cmpint (abs (by - ey), <=, 1);
      g_assert_cmpfloat (best, >, 0.3 * fx.params.max_attenuation);
    }
  fixture_clear (&fx);
}

static void
test_roi_is_crop (void)
{
  Fixture fx;
  const TomoRoi rois[] = { { 17, 30, 45, 37 }, { 0, 0, 1, 1 }, { 95, 3, 1, 90 }, { 5, 90, 91, 6 } };
  double c;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 96, 120);
  fixture_filter (&fx, TOMO_FILTER_HANN, TOMO_PAD_EDGE, 2, TRUE);
  c = fx.params.center - 0.3;

  for (TomoInterp interp = TOMO_INTERP_NEAREST; interp <= TOMO_INTERP_LINEAR; interp++)
    {
      tomo_cpu_fbp_backproject (fx.fbp, fx.filtered, c, interp, &fx.whole, fx.img);
      tomo_cpu_fbp_backproject_double (fx.fbp, fx.filtered_d, c, interp, &fx.whole, fx.img_d);
      for (guint r = 0; r < G_N_ELEMENTS (rois); r++)
        {
          const TomoRoi *roi = &rois[r];
          g_autofree float *part = g_new (float, roi->width * roi->height);
          g_autofree double *part_d = g_new (double, roi->width * roi->height);

          tomo_cpu_fbp_backproject (fx.fbp, fx.filtered, c, interp, roi, part);
          tomo_cpu_fbp_backproject_double (fx.fbp, fx.filtered_d, c, interp, roi, part_d);
          for (guint y = 0; y < roi->height; y++)
            {
              g_assert_cmpmem (part + y * roi->width, roi->width * sizeof (float),
                               fx.img + (roi->y + y) * fx.w + roi->x, roi->width * sizeof (float));
              g_assert_cmpmem (part_d + y * roi->width, roi->width * sizeof (double),
                               fx.img_d + (roi->y + y) * fx.w + roi->x,
                               roi->width * sizeof (double));
            }
        }
    }
  fixture_clear (&fx);
}

static void
test_threads_identical (void)
{
  Fixture fx;
  g_autofree float *one = NULL;

  /* Odd sizes so row blocks and SIMD groups split unevenly. */
  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 101, 97);
  for (TomoInterp interp = TOMO_INTERP_NEAREST; interp <= TOMO_INTERP_LINEAR; interp++)
    {
      g_clear_pointer (&one, g_free);
      one = reconstruct (&fx, TOMO_FILTER_COSINE, TOMO_PAD_EDGE, interp, fx.params.center, 1);
      for (guint t = 2; t <= 5; t++)
        {
          g_autofree float *many = reconstruct (&fx, TOMO_FILTER_COSINE, TOMO_PAD_EDGE, interp,
                                                fx.params.center, t);
          g_assert_cmpmem (one, fx.w * fx.w * sizeof (float), many, fx.w * fx.w * sizeof (float));
        }
    }
  {
    g_autoptr (TomoCpuFbp) fbp = tomo_cpu_fbp_new (fx.w, fx.n, NULL, TOMO_FILTER_RAMLAK,
                                                    TOMO_PAD_ZERO, 0);
    g_assert_cmpuint (tomo_cpu_fbp_get_n_threads (fbp), ==, g_get_num_processors ());
  }
  fixture_clear (&fx);
}

static void
test_float_vs_double (void)
{
  Fixture fx;
  const float *img;
  const double *img_d;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 200, 211);
  fixture_filter (&fx, TOMO_FILTER_SHEPP_LOGAN, TOMO_PAD_EDGE, 0, TRUE);
  img = fx.img;
  img_d = fx.img_d;

  for (TomoInterp interp = TOMO_INTERP_NEAREST; interp <= TOMO_INTERP_LINEAR; interp++)
    {
      double e = 0.0, t = 0.0;

      tomo_cpu_fbp_backproject (fx.fbp, fx.filtered, fx.params.center, interp, &fx.whole, fx.img);
      tomo_cpu_fbp_backproject_double (fx.fbp, fx.filtered_d, fx.params.center, interp, &fx.whole,
                                       fx.img_d);
      for (guint i = 0; i < fx.w * fx.w; i++)
        {
          e += (img[i] - img_d[i]) * (img[i] - img_d[i]);
          t += img_d[i] * img_d[i];
        }
      g_test_message ("%s: float vs double relative L2 %.3g", tomo_interp_to_string (interp),
                      sqrt (e / t));
      /* Nearest picks another column wherever single and double precision
       * round t to different sides of a half-integer: a few samples differ
       * by a whole step of the filtered row, hence the looser bound. */
      g_assert_cmpfloat (sqrt (e / t), <, interp == TOMO_INTERP_LINEAR ? 1e-5 : 2e-3);
    }
  fixture_clear (&fx);
}

/* The padded row as the filter is specified: the row at the start, then
 * zeros, or for edge padding the last value followed by the first. */
static void
pad_row (const float *row,
         guint        w,
         guint        n,
         TomoPadMode  pad,
         double      *out)
{
  guint n_last = (n - w) / 2;

  for (guint i = 0; i < n; i++)
    {
      if (i < w)
        out[i] = row[i];
      else if (pad == TOMO_PAD_ZERO)
        out[i] = 0.0;
      else
        out[i] = i < w + n_last ? row[w - 1] : row[0];
    }
}

static void
test_double_vs_direct_convolution (void)
{
  const guint w = 21, n_proj = 3;
  guint n = tomo_filter_padded_width (w);
  g_autofree float *sino = tomo_test_random_floats (n_proj * w, 42, -1.0, 3.0);
  double filtered[3 * 21];
  g_autofree double *padded = g_new (double, n);
  g_autofree double *h = g_new (double, n);
  double scale = tomo_fbp_scale (n_proj);

  for (guint k = 0; k < n; k++)
    {
      guint d = MIN (k, n - k);
      h[k] = d == 0 ? 0.5 : (d % 2 == 1 ? -2.0 / (G_PI * G_PI * (double) d * d) : 0.0);
    }

  for (TomoPadMode pad = TOMO_PAD_ZERO; pad <= TOMO_PAD_EDGE; pad++)
    {
      g_autoptr (TomoCpuFbp) fbp = tomo_cpu_fbp_new (w, n_proj, NULL, TOMO_FILTER_RAMLAK, pad, 1);

      tomo_cpu_fbp_filter_double (fbp, sino, filtered);
      for (guint p = 0; p < n_proj; p++)
        {
          pad_row (sino + p * w, w, n, pad, padded);
          for (guint i = 0; i < w; i++)
            {
              double sum = 0.0;

              /* Circular convolution over the padded length. */
              for (guint k = 0; k < n; k++)
                sum += padded[k] * h[(i + n - k) % n];
              g_assert_cmpfloat_with_epsilon (filtered[p * w + i], scale * sum, 1e-12);
            }
        }
    }
}

/* A constant row stays constant under edge padding: every output is the
 * constant times the DC gain.  Zero padding must not give that. */
static void
test_edge_padding_constant (void)
{
  const guint w = 40, n_proj = 2;
  guint n = tomo_filter_padded_width (w);
  float sino[2 * 40];
  double filtered[2 * 40];
  g_autofree double *response = g_new (double, n / 2 + 1);
  g_autoptr (TomoCpuFbp) edge = tomo_cpu_fbp_new (w, n_proj, NULL, TOMO_FILTER_HAMMING,
                                                   TOMO_PAD_EDGE, 1);
  g_autoptr (TomoCpuFbp) zero = tomo_cpu_fbp_new (w, n_proj, NULL, TOMO_FILTER_HAMMING,
                                                   TOMO_PAD_ZERO, 1);

  for (guint i = 0; i < G_N_ELEMENTS (sino); i++)
    sino[i] = 2.5f;
  tomo_filter_response (TOMO_FILTER_HAMMING, n, tomo_fbp_scale (n_proj), response);

  tomo_cpu_fbp_filter_double (edge, sino, filtered);
  for (guint i = 0; i < G_N_ELEMENTS (filtered); i++)
    g_assert_cmpfloat_with_epsilon (filtered[i], 2.5 * response[0], 1e-12);

  tomo_cpu_fbp_filter_double (zero, sino, filtered);
  g_assert_cmpfloat (fabs (filtered[0] - 2.5 * response[0]), >, 1e-3);
}

static void
test_reconstruct_convenience (void)
{
  Fixture fx;
  g_autoptr (TomoCpuFbp) fbp = NULL;
  g_autofree float *direct = NULL;
  g_autofree float *via = NULL;
  TomoReconParams params;

  fixture_init (&fx, TOMO_PHANTOM_DISKS, 64, 60);
  /* Built with another filter: reconstruct() must follow the params. */
  fbp = tomo_cpu_fbp_new (fx.w, fx.n, fx.angles, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO, 0);
  tomo_recon_params_init (&params, fx.w);
  params.center = fx.params.center;
  params.filter = TOMO_FILTER_PARZEN;
  params.pad = TOMO_PAD_EDGE;
  params.interp = TOMO_INTERP_LINEAR;
  params.roi = (TomoRoi) { 0, 0, 0, 0 };

  via = g_new (float, fx.w * fx.w);
  tomo_cpu_fbp_reconstruct (fbp, fx.sino, &params, via);
  direct = reconstruct (&fx, TOMO_FILTER_PARZEN, TOMO_PAD_EDGE, TOMO_INTERP_LINEAR,
                        fx.params.center, 0);
  g_assert_cmpmem (via, fx.w * fx.w * sizeof (float), direct, fx.w * fx.w * sizeof (float));
  g_assert_cmpfloat (tomo_test_rel_l2 (via, fx.truth, fx.w * fx.w), <, 0.5);
  fixture_clear (&fx);
}

/* Not a test: the timing of the back projector, printed with -m perf. */
static void
test_benchmark (void)
{
  const guint w = 1024, n = 1024;
  g_autoptr (TomoCpuFbp) fbp = tomo_cpu_fbp_new (w, n, NULL, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO, 0);
  g_autofree float *filtered = g_new (float, (gsize) n * w);
  g_autofree float *out = g_new (float, (gsize) w * w);
  TomoRoi roi = { 0, 0, w, w };

  for (gsize i = 0; i < (gsize) n * w; i++)
    filtered[i] = sinf (i * 0.001f);
  for (TomoInterp interp = TOMO_INTERP_NEAREST; interp <= TOMO_INTERP_LINEAR; interp++)
    {
      double seconds;

      g_test_timer_start ();
      tomo_cpu_fbp_backproject (fbp, filtered, w / 2.0 + 3.0, interp, &roi, out);
      seconds = g_test_timer_elapsed ();
      g_test_minimized_result (seconds,
                               "back projection %ux%u from %u projections, %s, %u threads: %.3f s",
                               w, w, n, tomo_interp_to_string (interp),
                               tomo_cpu_fbp_get_n_threads (fbp), seconds);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tomo/fbp/disks/region-means", test_disk_region_means);
  g_test_add_func ("/tomo/fbp/shepp-logan/region-means", test_shepp_logan_region_means);
  g_test_add_func ("/tomo/fbp/centre-scan", test_centre_scan);
  g_test_add_func ("/tomo/fbp/nearest-vs-linear", test_nearest_vs_linear);
  g_test_add_func ("/tomo/fbp/geometry/points", test_geometry_points);
  g_test_add_func ("/tomo/fbp/roi/crop", test_roi_is_crop);
  g_test_add_func ("/tomo/fbp/threads/identical", test_threads_identical);
  g_test_add_func ("/tomo/fbp/float-vs-double", test_float_vs_double);
  g_test_add_func ("/tomo/fbp/filter/direct-convolution", test_double_vs_direct_convolution);
  g_test_add_func ("/tomo/fbp/filter/edge-padding", test_edge_padding_constant);
  g_test_add_func ("/tomo/fbp/reconstruct", test_reconstruct_convenience);
  if (g_test_perf ())
    g_test_add_func ("/tomo/fbp/benchmark", test_benchmark);

  return g_test_run ();
}
