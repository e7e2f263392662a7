/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "tomo-error.h"
#include "tomo-fbp.h"
#include "tomo-phantom.h"
#include "tomo-plane.h"

/* A small 3-D phantom: the filtered sinograms of every row (the source the
 * planes are cut from), the XY slices of every row from the CPU FBP, and
 * the analytic truth of every row. */
typedef struct
{
  TomoPhantomParams params;
  guint w, h, n;
  double *angles;
  float *filtered; /* h × n × w */
  float *xy[2];    /* per interpolation: h × w × w */
  float *truth;    /* h × w × w */
  TomoPlaneSource src;
} Fixture;

static void
fixture_init (Fixture        *fx,
              TomoPhantomKind kind,
              guint           width,
              guint           height,
              guint           n_proj)
{
  g_autoptr (TomoCpuFbp) fbp = NULL;
  g_autofree double *sino_d = g_new (double, (gsize) n_proj * width);
  g_autofree float *sino = g_new (float, (gsize) n_proj * width);
  gsize ns = (gsize) n_proj * width, ss = (gsize) width * width;
  TomoRoi roi = { 0, 0, width, width };

  tomo_phantom_params_init (&fx->params);
  fx->params.kind = kind;
  fx->params.width = fx->w = width;
  fx->params.height = fx->h = height;
  fx->params.n_proj = fx->n = n_proj;
  fx->params.center = (width - 1) / 2.0 + 3.37;
  fx->params.max_attenuation = 4.0 / width;
  fx->params.noise = FALSE;

  fx->angles = g_new (double, n_proj);
  for (guint p = 0; p < n_proj; p++)
    fx->angles[p] = G_PI * p / n_proj;

  fbp = tomo_cpu_fbp_new (width, n_proj, fx->angles, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, 0);
  fx->filtered = g_new (float, height * ns);
  fx->xy[0] = g_new (float, height * ss);
  fx->xy[1] = g_new (float, height * ss);
  fx->truth = g_new (float, height * ss);
  for (guint r = 0; r < height; r++)
    {
      tomo_phantom_sinogram (&fx->params, fx->angles, r, sino_d);
      for (gsize i = 0; i < ns; i++)
        sino[i] = (float) sino_d[i];
      tomo_cpu_fbp_filter (fbp, sino, fx->filtered + r * ns);
      for (TomoInterp in = TOMO_INTERP_NEAREST; in <= TOMO_INTERP_LINEAR; in++)
        tomo_cpu_fbp_backproject (fbp, fx->filtered + r * ns, fx->params.center, in, &roi,
                                  fx->xy[in] + r * ss);
      tomo_phantom_slice (&fx->params, r, fx->truth + r * ss);
    }
  fx->src = (TomoPlaneSource) { width, n_proj, fx->angles, 0, height, fx->filtered };
}

static void
fixture_clear (Fixture *fx)
{
  g_free (fx->angles);
  g_free (fx->filtered);
  g_free (fx->xy[0]);
  g_free (fx->xy[1]);
  g_free (fx->truth);
}

/* The XZ (xz = TRUE) or YZ plane at `at` cut out of a stack of slices. */
static float *
cut (const Fixture *fx,
     const float   *stack,
     gboolean       xz,
     guint          at)
{
  float *out = g_new (float, (gsize) fx->w * fx->h);

  for (guint z = 0; z < fx->h; z++)
    for (guint i = 0; i < fx->w; i++)
      out[(gsize) z * fx->w + i] =
        stack[(gsize) z * fx->w * fx->w + (xz ? (gsize) at * fx->w + i : (gsize) i * fx->w + at)];
  return out;
}

static double
rel_l2 (const float *a,
        const float *b,
        gsize        n)
{
  double e = 0.0, t = 0.0;

  for (gsize i = 0; i < n; i++)
    {
      e += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
      t += (double) b[i] * b[i];
    }
  return t > 0 ? sqrt (e / t) : sqrt (e);
}

static double
l2 (const float *a,
    gsize        n)
{
  double t = 0.0;

  for (gsize i = 0; i < n; i++)
    t += (double) a[i] * a[i];
  return sqrt (t);
}

static float
max_abs_diff (const float *a,
              const float *b,
              gsize        n)
{
  float m = 0.0f;

  for (gsize i = 0; i < n; i++)
    m = MAX (m, fabsf (a[i] - b[i]));
  return m;
}

static float *
plane_image (const Fixture   *fx,
             const TomoPlane *plane,
             TomoInterp       interp)
{
  float *out = g_new (float, (gsize) plane->width * plane->height);

  tomo_plane_backproject (&fx->src, fx->params.center, interp, plane, 0, out);
  return out;
}

/* XZ and YZ equal the row / column of the stack of XY slices, odd sizes,
 * first, middle and last positions, both interpolations; the bounds are
 * those of the XY float path against the double reference. */
static void
test_vertical_equals_xy_stack (void)
{
  Fixture fx;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 97, 13, 151);
  for (TomoInterp in = TOMO_INTERP_NEAREST; in <= TOMO_INTERP_LINEAR; in++)
    for (int xz = 0; xz <= 1; xz++)
      {
        const guint at[] = { 0, 31, 48, 70, 96 };

        for (guint k = 0; k < G_N_ELEMENTS (at); k++)
          {
            TomoPlane plane;
            g_autofree float *img = NULL;
            g_autofree float *ref = cut (&fx, fx.xy[in], xz, at[k]);
            g_autofree float *mid = cut (&fx, fx.xy[in], xz, fx.w / 2);
            double e;

            if (xz)
              tomo_plane_init_xz (&plane, at[k], 0, fx.w, 0, fx.h);
            else
              tomo_plane_init_yz (&plane, at[k], 0, fx.w, 0, fx.h);
            g_assert_true (tomo_plane_is_vertical (&plane));
            img = plane_image (&fx, &plane, in);
            /* Relative to the plane through the middle: the edge planes
             * are nearly empty, and the float path's rounding there is
             * the same in absolute terms. */
            e = rel_l2 (img, ref, (gsize) fx.w * fx.h) * l2 (ref, (gsize) fx.w * fx.h) /
                l2 (mid, (gsize) fx.w * fx.h);
            g_test_message ("%s %s at %u: relative L2 to the XY stack %.3g",
                            xz ? "XZ" : "YZ", tomo_interp_to_string (in), at[k], e);
            g_assert_cmpfloat (e, <, in == TOMO_INTERP_LINEAR ? 1e-5 : 2e-3);
          }
      }
  fixture_clear (&fx);
}

static void
test_oblique_axes (void)
{
  Fixture fx;
  const double centre[3] = { 40.0, 57.0, 6.0 };
  TomoPlane xz, yz, ob;
  g_autofree float *img_xz = NULL;
  g_autofree float *img_yz = NULL;
  g_autofree float *ob0 = NULL;
  g_autofree float *ob90 = NULL;
  g_autofree float *ob45 = NULL;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 97, 13, 151);
  /* 61 samples about (40, 57): x or y from 10 to 70, all 13 rows. */
  tomo_plane_init_xz (&xz, centre[1], 10, 61, 0, 13);
  tomo_plane_init_yz (&yz, centre[0], 27, 61, 0, 13);
  tomo_plane_init_oblique (&ob, centre, 0.0, 0.0, 61, 13, 1.0);
  g_assert_true (tomo_plane_is_vertical (&ob));
  img_xz = plane_image (&fx, &xz, TOMO_INTERP_LINEAR);
  ob0 = plane_image (&fx, &ob, TOMO_INTERP_LINEAR);
  g_assert_cmpfloat (max_abs_diff (ob0, img_xz, 61 * 13), ==, 0.0f);

  tomo_plane_init_oblique (&ob, (double[3]) { centre[0], 27 + 30.0, 6.0 }, 90.0, 0.0, 61, 13, 1.0);
  img_yz = plane_image (&fx, &yz, TOMO_INTERP_LINEAR);
  ob90 = plane_image (&fx, &ob, TOMO_INTERP_LINEAR);
  g_assert_cmpfloat (max_abs_diff (ob90, img_yz, 61 * 13), ==, 0.0f);

  /* 45°, half-pixel spacing: a different picture, still inside the range
   * of the volume. */
  tomo_plane_init_oblique (&ob, centre, 45.0, 0.0, 61, 13, 0.5);
  ob45 = plane_image (&fx, &ob, TOMO_INTERP_LINEAR);
  g_assert_cmpfloat (rel_l2 (ob45, img_xz, 61 * 13), >, 0.05);
  fixture_clear (&fx);
}

/* Between rows the value is the linear blend of the two rows; tilted
 * planes cross rows; samples outside the rows held are 0. */
static void
test_between_rows (void)
{
  Fixture fx;
  TomoPlane a, b, mid, tilted;
  g_autofree float *ia = NULL;
  g_autofree float *ib = NULL;
  g_autofree float *im = NULL;
  g_autofree float *it = NULL;
  g_autofree float *blend = NULL;
  guint n;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 65, 9, 101);
  tomo_plane_init_xz (&a, 30, 0, fx.w, 3, 1);
  tomo_plane_init_xz (&b, 30, 0, fx.w, 4, 1);
  mid = a;
  mid.centre[2] = 3.25;
  g_assert_false (tomo_plane_is_vertical (&mid));
  ia = plane_image (&fx, &a, TOMO_INTERP_LINEAR);
  ib = plane_image (&fx, &b, TOMO_INTERP_LINEAR);
  im = plane_image (&fx, &mid, TOMO_INTERP_LINEAR);
  n = fx.w;
  blend = g_new (float, n);
  for (guint i = 0; i < n; i++)
    blend[i] = 0.75f * ia[i] + 0.25f * ib[i];
  g_assert_cmpfloat (rel_l2 (im, blend, n), <, 1e-6);
  g_assert_cmpfloat (rel_l2 (im, ia, n), >, 1e-4); /* the rows do differ */

  /* Tilted by 60° about x: the plane's rows climb by cos 60° = 0.5 row per
   * sample row, so its row j sits at z = 4 + (j − 4)/2. */
  tomo_plane_init_oblique (&tilted, (double[3]) { 32.0, 30.0, 4.0 }, 0.0, 60.0, fx.w, 9, 1.0);
  it = plane_image (&fx, &tilted, TOMO_INTERP_LINEAR);
  for (guint j = 0; j < 9; j++)
    g_assert_true (isfinite (it[j * n]));
  /* Plane row 4 is at z = 4, y = 30: equal to XZ of row 4. */
  g_assert_cmpfloat (rel_l2 (it + 4 * n, ib, n), <, 1e-6);

  /* Far above the rows held: nothing. */
  mid.centre[2] = fx.h + 3.0;
  g_clear_pointer (&im, g_free);
  im = plane_image (&fx, &mid, TOMO_INTERP_LINEAR);
  for (guint i = 0; i < n; i++)
    g_assert_cmpfloat (im[i], ==, 0.0f);
  fixture_clear (&fx);
}

/* A source holding only rows [a, b) and a plane ROI give the crop of the
 * full result. */
static void
test_roi_row_range (void)
{
  Fixture fx;
  TomoPlaneSource part;
  TomoPlane full, roi;
  g_autofree float *ifull = NULL;
  g_autofree float *iroi = NULL;
  guint a = 3, b = 10, x0 = 11, rw = 37, z0 = 4, rh = 5;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 64, 12, 90);
  tomo_plane_init_yz (&full, 21, 0, fx.w, 0, fx.h);
  ifull = plane_image (&fx, &full, TOMO_INTERP_LINEAR);

  part = fx.src;
  part.row_start = a;
  part.n_rows = b - a;
  part.filtered = fx.filtered + (gsize) a * fx.n * fx.w;
  tomo_plane_init_yz (&roi, 21, x0, rw, z0, rh);
  iroi = g_new (float, rw * rh);
  tomo_plane_backproject (&part, fx.params.center, TOMO_INTERP_LINEAR, &roi, 1, iroi);
  for (guint j = 0; j < rh; j++)
    for (guint i = 0; i < rw; i++)
      g_assert_cmpfloat (iroi[j * rw + i], ==, ifull[(z0 + j) * fx.w + x0 + i]);

  /* Rows below the range held are 0, not the neighbours' values. */
  tomo_plane_init_yz (&roi, 21, 0, fx.w, 0, fx.h);
  g_clear_pointer (&iroi, g_free);
  iroi = g_new (float, fx.w * fx.h);
  tomo_plane_backproject (&part, fx.params.center, TOMO_INTERP_LINEAR, &roi, 2, iroi);
  for (guint j = 0; j < fx.h; j++)
    {
      gboolean held = j >= a && j < b;

      for (guint i = 0; i < fx.w; i++)
        if (!held)
          g_assert_cmpfloat (iroi[j * fx.w + i], ==, 0.0f);
        else
          g_assert_cmpfloat (iroi[j * fx.w + i], ==, ifull[j * fx.w + i]);
    }
  fixture_clear (&fx);
}

/* Region means of XZ and YZ planes against the ellipsoids' truth. */
static void
test_region_means (void)
{
  Fixture fx;
  const float values[] = { 0.2f, 0.3f, 1.0f };
  guint checked = 0;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 128, 40, 240);
  for (int xz = 0; xz <= 1; xz++)
    {
      const guint at[] = { 50, 64, 78 };

      for (guint k = 0; k < G_N_ELEMENTS (at); k++)
        {
          TomoPlane plane;
          g_autofree float *img = NULL;
          g_autofree float *truth = cut (&fx, fx.truth, xz, at[k]);

          if (xz)
            tomo_plane_init_xz (&plane, at[k], 0, fx.w, 0, fx.h);
          else
            tomo_plane_init_yz (&plane, at[k], 0, fx.w, 0, fx.h);
          img = plane_image (&fx, &plane, TOMO_INTERP_LINEAR);

          for (guint v = 0; v < G_N_ELEMENTS (values); v++)
            {
              float value = values[v] * fx.params.max_attenuation;
              double sum = 0.0;
              guint count = 0;
              int m = 3;

              /* In-plane mask: the truth equals value within m samples. */
              for (int j = m; j < (int) fx.h - m; j++)
                for (int i = m; i < (int) fx.w - m; i++)
                  {
                    gboolean inside = TRUE;

                    for (int dj = -m; dj <= m && inside; dj++)
                      for (int di = -m; di <= m && inside; di++)
                        if (fabsf (truth[(j + dj) * fx.w + i + di] - value) > 1e-6f * value)
                          inside = FALSE;
                    if (inside)
                      {
                        sum += img[j * fx.w + i];
                        count++;
                      }
                  }
              if (count < 30)
                continue;
              g_test_message ("%s at %u: region %.2f: %u samples, %+.2f %%", xz ? "XZ" : "YZ",
                              at[k], values[v], count, 100 * (sum / count - value) / value);
              g_assert_cmpfloat (fabs (sum / count - value), <, 0.02 * value);
              checked++;
            }
        }
    }
  g_assert_cmpuint (checked, >=, 6);
  fixture_clear (&fx);
}

static void
test_validate (void)
{
  TomoPlane plane;
  g_autoptr (GError) error = NULL;

  tomo_plane_init_xz (&plane, 3, 0, 10, 0, 10);
  g_assert_true (tomo_plane_validate (&plane, &error));
  g_assert_no_error (error);
  plane.width = 0;
  g_assert_false (tomo_plane_validate (&plane, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  g_clear_error (&error);
  plane.width = 10;
  plane.u[1] = NAN;
  g_assert_false (tomo_plane_validate (&plane, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tomo/plane/vertical-equals-xy-stack", test_vertical_equals_xy_stack);
  g_test_add_func ("/tomo/plane/oblique-axes", test_oblique_axes);
  g_test_add_func ("/tomo/plane/between-rows", test_between_rows);
  g_test_add_func ("/tomo/plane/roi-row-range", test_roi_row_range);
  g_test_add_func ("/tomo/plane/region-means", test_region_means);
  g_test_add_func ("/tomo/plane/validate", test_validate);
  return g_test_run ();
}
