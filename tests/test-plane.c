/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "tomo-error.h"
#include "tomo-fbp.h"
#include "tomo-phantom.h"
#include "tomo-plane.h"
#include "tomo-tiff-writer.h"
#include "tomo-test-util.h"

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

  fx->w = width;
  fx->h = height;
  fx->n = n_proj;
  tomo_test_phantom_params (&fx->params, width, height, n_proj);
  fx->params.kind = kind;
  fx->angles = tomo_test_half_turn (n_proj);

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
            e = tomo_test_rel_l2 (img, ref, (gsize) fx.w * fx.h) * l2 (ref, (gsize) fx.w * fx.h) /
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
  g_assert_cmpfloat (tomo_test_rel_l2 (ob45, img_xz, 61 * 13), >, 0.05);
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
  g_assert_cmpfloat (tomo_test_rel_l2 (im, blend, n), <, 1e-6);
  g_assert_cmpfloat (tomo_test_rel_l2 (im, ia, n), >, 1e-4); /* the rows do differ */

  /* Tilted by 60° about x: the plane's rows climb by cos 60° = 0.5 row per
   * sample row, so its row j sits at z = 4 + (j − 4)/2. */
  tomo_plane_init_oblique (&tilted, (double[3]) { 32.0, 30.0, 4.0 }, 0.0, 60.0, fx.w, 9, 1.0);
  it = plane_image (&fx, &tilted, TOMO_INTERP_LINEAR);
  for (guint j = 0; j < 9; j++)
    g_assert_true (isfinite (it[j * n]));
  /* Plane row 4 is at z = 4, y = 30: equal to XZ of row 4. */
  g_assert_cmpfloat (tomo_test_rel_l2 (it + 4 * n, ib, n), <, 1e-6);

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
  float big = 0.0f;

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
  /* Equal up to the rounding of the detector position, which the fast path
   * steps from the first sample of the plane row. */
  for (guint i = 0; i < fx.w * fx.h; i++)
    big = MAX (big, fabsf (ifull[i]));
  for (guint j = 0; j < rh; j++)
    for (guint i = 0; i < rw; i++)
      g_assert_cmpfloat_with_epsilon (iroi[j * rw + i], ifull[(z0 + j) * fx.w + x0 + i],
                                      1e-5f * big);

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
          g_assert_cmpfloat_with_epsilon (iroi[j * fx.w + i], ifull[j * fx.w + i], 1e-5f * big);
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

/* The fast path against the double reference: vertical, XY, oblique,
 * tilted, half inside the square, above the rows, both interpolations. */
static void
test_fast_vs_reference (void)
{
  Fixture fx;
  TomoPlane planes[6];

  TomoPlane mid;
  g_autofree float *mid_img = NULL;
  double mid_rms;

  fixture_init (&fx, TOMO_PHANTOM_SHEPP_LOGAN, 101, 9, 137);
  /* Errors relative to the RMS of the plane through the middle: planes near
   * the edge are nearly empty and their own norm would magnify rounding. */
  tomo_plane_init_xz (&mid, 50, 0, fx.w, 0, fx.h);
  mid_img = plane_image (&fx, &mid, TOMO_INTERP_LINEAR);
  mid_rms = l2 (mid_img, (gsize) fx.w * fx.h) / sqrt ((double) fx.w * fx.h);
  tomo_plane_init_xz (&planes[0], 47, 0, fx.w, 0, fx.h);
  tomo_plane_init_yz (&planes[1], 12, 3, 91, 2, 6);
  tomo_plane_init_oblique (&planes[2], (double[3]) { 50, 50, 4 }, 0.0, 0.0, fx.w, fx.w, 1.0);
  planes[2].v[1] = 1.0;   /* XY of row 4 */
  planes[2].v[2] = 0.0;
  tomo_plane_init_oblique (&planes[3], (double[3]) { 30, 61, 3.3 }, 33.0, 25.0, 140, 11, 0.7);
  tomo_plane_init_oblique (&planes[4], (double[3]) { 90, 20, 4 }, 117.0, -40.0, 150, 12, 1.3);
  tomo_plane_init_oblique (&planes[5], (double[3]) { 50, 50, 7.5 }, 71.0, 0.0, 120, 9, 1.0);
  for (guint k = 0; k < G_N_ELEMENTS (planes); k++)
    for (TomoInterp in = TOMO_INTERP_NEAREST; in <= TOMO_INTERP_LINEAR; in++)
      {
        gsize n = (gsize) planes[k].width * planes[k].height;
        g_autofree float *fast = g_new (float, n);
        g_autofree float *ref = g_new (float, n);
        double e;

        tomo_plane_backproject (&fx.src, fx.params.center, in, &planes[k], 2, fast);
        tomo_plane_backproject_reference (&fx.src, fx.params.center, in, &planes[k], 2, ref);
        e = tomo_test_rel_l2 (fast, ref, n) * l2 (ref, n) / sqrt ((double) n) / mid_rms;
        g_test_message ("plane %u %s: fast vs reference %.3g", k, tomo_interp_to_string (in), e);
        g_assert_cmpfloat (e, <, in == TOMO_INTERP_LINEAR ? 1e-5 : 2e-3);
        for (gsize i = 0; i < n; i++)
          if (ref[i] == 0.0f)
            g_assert_cmpfloat (fast[i], ==, 0.0f);   /* nothing where there is no sample */
      }
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
  TOMO_TEST_ASSERT_FAILS (tomo_plane_validate (&plane, &error),
                          error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  plane.width = 10;
  plane.u[1] = NAN;
  g_assert_false (tomo_plane_validate (&plane, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
}

static float *
run_cli (const char *const *args,
         guint              *w,
         guint              *h,
         guint              *n)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *err = NULL;
  g_autofree char *out = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("tomo-plane-XXXXXX", &error);
  g_autofree char *path = NULL;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  int status = -1;
  float *img;

  g_assert_no_error (error);
  path = g_build_filename (tmp, "out.tif", NULL);
  g_ptr_array_add (argv, (char *) g_getenv ("TOMOLIVE"));
  g_ptr_array_add (argv, (char *) "reconstruct");
  g_ptr_array_add (argv, (char *) g_getenv ("TOMO_SAMPLE_SCAN"));
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, (char *) "-o");
  g_ptr_array_add (argv, path);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &status, &error));
  g_assert_no_error (error);
  g_test_message ("%s%s", out, err);
  g_assert_true (g_spawn_check_wait_status (status, &error));
  img = tomo_tiff_read_float (path, w, h, n, &error);
  g_assert_no_error (error);
  g_unlink (path);
  g_rmdir (tmp);
  return img;
}

/* `reconstruct --plane` against `reconstruct --rows` of the sample scan:
 * the XZ plane at slice row 200 is row 200 of each slice. */
static void
test_cli (void)
{
  const char *xz_args[] = { "--backend", "cpu", "--center", "258.87", "--rows", "20:30",
                            "--plane", "xz:200", NULL };
  const char *xy_args[] = { "--backend", "cpu", "--center", "258.87", "--rows", "20:30", NULL };
  g_autofree float *xz = NULL;
  g_autofree float *xy = NULL;
  g_autofree float *col = NULL;
  guint w, h, n, sw, sh, sn;

  if (g_getenv ("TOMOLIVE") == NULL || g_getenv ("TOMO_SAMPLE_SCAN") == NULL)
    {
      g_test_skip ("TOMOLIVE and TOMO_SAMPLE_SCAN not set (meson test sets them)");
      return;
    }
  xz = run_cli (xz_args, &w, &h, &n);
  xy = run_cli (xy_args, &sw, &sh, &sn);
  g_assert_cmpuint (n, ==, 1);
  g_assert_cmpuint (h, ==, 10);
  g_assert_cmpuint (w, ==, sw);
  g_assert_cmpuint (sn, ==, 10);
  col = g_new (float, w * h);
  for (guint z = 0; z < h; z++)
    memcpy (col + z * w, xy + ((gsize) z * sh + 200) * sw, w * sizeof (float));
  g_assert_cmpfloat (tomo_test_rel_l2 (xz, col, w * h), <, 1e-5);
}

/* A scan whose filtered rows cannot be held: a clear error at once, no
 * output file, no attempt to allocate (the raw file is sparse: 128 GiB of
 * holes). */
static void
test_cli_too_big (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *tmp = g_dir_make_tmp ("tomo-plane-XXXXXX", &error);
  g_autofree char *raw = g_build_filename (tmp, "big.raw", NULL);
  g_autofree char *out_path = g_build_filename (tmp, "out.tif", NULL);
  g_autofree char *err = NULL;
  const char *argv[] = { g_getenv ("TOMOLIVE"), "reconstruct", raw, "--raw-width", "4096",
                         "--raw-height", "4096", "--raw-projections", "4096", "--raw-dtype",
                         "uint16", "--already-sinogram", "--backend", "cpu", "--plane", "xz:10",
                         "-o", out_path, NULL };
  int status = 0;
  FILE *f;

  if (argv[0] == NULL)
    {
      g_test_skip ("TOMOLIVE not set (meson test sets it)");
      return;
    }
  g_assert_no_error (error);
  f = fopen (raw, "wb");
  g_assert_nonnull (f);
  if (ftruncate (fileno (f), (off_t) 4096 * 4096 * 4096 * 2) != 0)
    {
      fclose (f);
      g_unlink (raw);
      g_rmdir (tmp);
      g_test_skip ("this file system cannot make a 128 GiB sparse file");
      return;
    }
  fclose (f);
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, &err, &status, &error));
  g_assert_no_error (error);
  g_test_message ("%s", err);
  g_assert_false (g_spawn_check_wait_status (status, NULL));
  g_assert_nonnull (strstr (err, "choose a smaller row range"));
  g_assert_false (g_file_test (out_path, G_FILE_TEST_EXISTS));
  g_unlink (raw);
  g_rmdir (tmp);
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
  g_test_add_func ("/tomo/plane/fast-vs-reference", test_fast_vs_reference);
  g_test_add_func ("/tomo/plane/validate", test_validate);
  g_test_add_func ("/tomo/plane/cli", test_cli);
  g_test_add_func ("/tomo/plane/cli-too-big", test_cli_too_big);
  return g_test_run ();
}
