/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <hdf5.h>

#include "tomo-error.h"
#include "tomo-phantom.h"
#include "tomo-test-util.h"

/* The POINTS phantom's first dot is a disk at the origin with no neighbour
 * within a few pixels of its projection: its profile is the analytic chord
 * length averaged over each detector pixel. */
static void
test_disk_line_integral (void)
{
  TomoPhantomParams params;
  const TomoEllipsoid *e;
  guint n_e, n_proj = 4;
  double angles[4] = { 0.0, 0.6, 1.3, 2.45 }; /* no other dot near the axis */
  g_autofree double *sino = NULL;
  double R, r, max_err = 0.0, total_expected, total;

  tomo_phantom_params_init (&params);
  params.kind = TOMO_PHANTOM_POINTS;
  params.width = 128;
  params.height = 1;
  params.n_proj = n_proj;
  params.max_attenuation = 0.5;
  params.center = 60.3;

  e = tomo_phantom_get_ellipsoids (TOMO_PHANTOM_POINTS, &n_e);
  g_assert_nonnull (e);
  g_assert_cmpuint (n_e, >, 0);
  g_assert_cmpfloat (e[0].x0, ==, 0.0);
  g_assert_cmpfloat (e[0].y0, ==, 0.0);
  g_assert_cmpfloat (e[0].a, ==, e[0].b);

  /* The dot at the origin projects onto the axis at every angle; its chord
   * at offset s is 2·sqrt(r² − s²) (z = 0 is the cylinder's middle, so the
   * 3-D cut is the full radius up to the (1 − (z/c)²) factor, c = 100). */
  R = 0.45 * params.width;
  r = e[0].a * R * sqrt (1.0 - pow ((0.0 - e[0].z0) / e[0].c, 2));
  sino = g_new (double, n_proj * params.width);
  tomo_phantom_sinogram (&params, angles, 0, sino);

  for (guint p = 0; p < n_proj; p++)
    {
      total = 0.0;
      for (guint i = 0; i < params.width; i++)
        {
          double s_mid = i - params.center;
          double expected = 0.0;
          const guint n_sub = 2000;

          /* Numerical average of the analytic chord over the pixel. */
          for (guint k = 0; k < n_sub; k++)
            {
              double s = s_mid - 0.5 + (k + 0.5) / n_sub;
              if (fabs (s) < r)
                expected += 2.0 * sqrt (r * r - s * s);
            }
          expected *= e[0].value * params.max_attenuation / n_sub;

          /* Only the centred dot reaches columns near the axis. */
          if (fabs (s_mid) < r + 2)
            max_err = MAX (max_err, fabs (sino[p * params.width + i] - expected));
          total += sino[p * params.width + i];
        }
      /* Each projection of a set of disks integrates to their total area. */
      total_expected = 0.0;
      for (guint k = 0; k < n_e; k++)
        total_expected += e[k].value * params.max_attenuation * G_PI * pow (e[k].a * R, 2)
                          * (1.0 - pow (e[k].z0 / e[k].c, 2));
      g_assert_cmpfloat_with_epsilon (total, total_expected, 1e-9 * total_expected);
    }
  g_assert_cmpfloat (max_err, <, 1e-4);
  /* The centre column holds the full diameter. */
  g_assert_cmpfloat (sino[(guint) round (params.center)], >, 0.5 * 2 * r * params.max_attenuation);
}

/* The rendered truth and the line integrals describe the same object: the
 * sum of the slice along y equals the projection at θ = 0 (up to the
 * supersampling of the slice), with the axis in the middle. */
static void
test_slice_matches_projection (void)
{
  TomoPhantomParams params;
  g_autofree float *slice = NULL;
  g_autofree double *sino = NULL;
  double angle = 0.0, max_err = 0.0, peak = 0.0;
  guint w;

  tomo_phantom_params_init (&params);
  params.kind = TOMO_PHANTOM_SHEPP_LOGAN;
  params.width = w = 96;
  params.height = 8;
  params.n_proj = 1;
  params.max_attenuation = 1.0;
  params.center = (w - 1) / 2.0;

  slice = g_new (float, w * w);
  sino = g_new (double, w);
  tomo_phantom_slice (&params, 4, slice);
  tomo_phantom_sinogram (&params, &angle, 4, sino);

  for (guint ix = 0; ix < w; ix++)
    {
      double sum = 0.0;

      for (guint iy = 0; iy < w; iy++)
        sum += slice[iy * w + ix];
      max_err = MAX (max_err, fabs (sum - sino[ix]));
      peak = MAX (peak, sino[ix]);
    }
  g_assert_cmpfloat (peak, >, 10.0);
  g_assert_cmpfloat (max_err, <, 0.02 * peak);

  /* Orientation: the three small ellipses of Shepp–Logan sit at y = −0.605,
   * the bottom of the usual picture: rows below the middle. */
  {
    TomoPhantomParams mid = params;
    double top = 0, bottom = 0;

    mid.height = 1;
    tomo_phantom_slice (&mid, 0, slice);
    /* The tall outer ellipse reaches ±0.92 in y; inside it, value 0.2. */
    for (guint iy = 0; iy < w / 2; iy++)
      top += slice[iy * w + w / 2];
    for (guint iy = w / 2; iy < w; iy++)
      bottom += slice[iy * w + w / 2];
    g_assert_cmpfloat (fabs (top - bottom), <, 0.5 * (top + bottom));
    g_assert_cmpfloat (slice[(w / 2) * w + w / 2], >, 0.15);
    g_assert_cmpfloat (slice[(w / 2) * w + w / 2], <, 0.35);
  }
}

/* The default phantom at width × height × n_proj with the axis in the
 * middle of the detector. */
static void
centred_params (TomoPhantomParams *params,
                guint              width,
                guint              height,
                guint              n_proj)
{
  tomo_phantom_params_init (params);
  params->width = width;
  params->height = height;
  params->n_proj = n_proj;
  params->center = (width - 1) / 2.0;
}

static void
assert_dims (hid_t       file,
             const char *name,
             int         rank,
             hsize_t     d0,
             hsize_t     d1,
             hsize_t     d2,
             hid_t       type_class_expected)
{
  hid_t dset = H5Dopen2 (file, name, H5P_DEFAULT);
  hid_t space, type;
  hsize_t dims[3] = { 0 };
  hsize_t expected[3] = { d0, d1, d2 };

  g_assert_cmpint (dset, >=, 0);
  space = H5Dget_space (dset);
  g_assert_cmpint (H5Sget_simple_extent_ndims (space), ==, rank);
  H5Sget_simple_extent_dims (space, dims, NULL);
  for (int i = 0; i < rank; i++)
    g_assert_cmpuint (dims[i], ==, expected[i]);
  type = H5Dget_type (dset);
  g_assert_cmpint (H5Tget_class (type), ==, type_class_expected);
  H5Tclose (type);
  H5Sclose (space);
  H5Dclose (dset);
}

static void
test_write_dxchange (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = tomo_test_make_tmp_dir ("tomo-phantom-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "phantom.h5", NULL);
  g_autofree guint16 *row = NULL;
  TomoPhantomParams params;
  double center = 0, theta[3];
  hid_t file, dset, fspace, mspace;
  hsize_t start[3] = { 0, 2, 0 }, count[3];
  gboolean ok;

  tomo_phantom_params_init (&params);
  params.width = 64;
  params.height = 6;
  params.n_proj = 30;
  params.n_flats = 3;
  params.n_darks = 2;
  params.center = 31.5 + 3.37;
  params.noise = FALSE;

  ok = tomo_phantom_write_dxchange (&params, path, &error);
  g_assert_no_error (error);
  g_assert_true (ok);

  file = H5Fopen (path, H5F_ACC_RDONLY, H5P_DEFAULT);
  g_assert_cmpint (file, >=, 0);
  assert_dims (file, "/exchange/data", 3, 30, 6, 64, H5T_INTEGER);
  assert_dims (file, "/exchange/data_white", 3, 3, 6, 64, H5T_INTEGER);
  assert_dims (file, "/exchange/data_dark", 3, 2, 6, 64, H5T_INTEGER);
  assert_dims (file, "/exchange/theta", 1, 30, 0, 0, H5T_FLOAT);

  dset = H5Dopen2 (file, "/process/tomolive/center", H5P_DEFAULT);
  g_assert_cmpint (dset, >=, 0);
  g_assert_cmpint (H5Dread (dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &center), >=, 0);
  H5Dclose (dset);
  g_assert_cmpfloat (center, ==, params.center);

  {
    hsize_t tstart = 0, tcount = 3;
    dset = H5Dopen2 (file, "/exchange/theta", H5P_DEFAULT);
    fspace = H5Dget_space (dset);
    H5Sselect_hyperslab (fspace, H5S_SELECT_SET, &tstart, NULL, &tcount, NULL);
    mspace = H5Screate_simple (1, &tcount, NULL);
    g_assert_cmpint (H5Dread (dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, theta), >=, 0);
    H5Sclose (mspace);
    H5Sclose (fspace);
    H5Dclose (dset);
    g_assert_cmpfloat_with_epsilon (theta[0], 0.0, 1e-12);
    g_assert_cmpfloat_with_epsilon (theta[1], 6.0, 1e-12);
    g_assert_cmpfloat_with_epsilon (theta[2], 12.0, 1e-12);
  }

  /* Without noise the counts are dark + (flat − dark)·exp(−line integral). */
  {
    g_autofree double *sino = g_new (double, 30 * 64);
    double angles[30];

    for (guint p = 0; p < 30; p++)
      angles[p] = G_PI * p / 30;
    tomo_phantom_sinogram (&params, angles, 2, sino);

    count[0] = 30, count[1] = 1, count[2] = 64;
    row = g_new (guint16, 30 * 64);
    dset = H5Dopen2 (file, "/exchange/data", H5P_DEFAULT);
    fspace = H5Dget_space (dset);
    H5Sselect_hyperslab (fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    mspace = H5Screate_simple (3, count, NULL);
    g_assert_cmpint (H5Dread (dset, H5T_NATIVE_UINT16, mspace, fspace, H5P_DEFAULT, row), >=, 0);
    H5Sclose (mspace);
    H5Sclose (fspace);
    H5Dclose (dset);

    for (guint i = 0; i < 30 * 64; i++)
      {
        double expected = 100 + 19900 * exp (-sino[i]);
        g_assert_cmpfloat (fabs (row[i] - expected), <=, 0.5 + 1e-9);
      }
    /* Something absorbs: not every count is the flat. */
    g_assert_cmpuint (row[15 * 64 + 32], <, 19000);
  }
  H5Fclose (file);

  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* Reads a whole uint16 dataset. */
static guint16 *
read_u16 (const char *path,
          const char *name,
          gsize      *n)
{
  hid_t file = H5Fopen (path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t dset = H5Dopen2 (file, name, H5P_DEFAULT);
  hid_t space = H5Dget_space (dset);
  guint16 *out;

  g_assert_cmpint (dset, >=, 0);
  *n = H5Sget_simple_extent_npoints (space);
  out = g_new (guint16, *n);
  g_assert_cmpint (H5Dread (dset, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, out), >=, 0);
  H5Sclose (space);
  H5Dclose (dset);
  H5Fclose (file);
  return out;
}

static void
test_noise_is_seeded (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = tomo_test_make_tmp_dir ("tomo-phantom-XXXXXX");
  g_autofree char *a = g_build_filename (dir, "a.h5", NULL);
  g_autofree char *b = g_build_filename (dir, "b.h5", NULL);
  g_autofree char *c = g_build_filename (dir, "c.h5", NULL);
  TomoPhantomParams params;

  centred_params (&params, 32, 2, 8);
  params.noise = TRUE;
  g_assert_true (tomo_phantom_write_dxchange (&params, a, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_phantom_write_dxchange (&params, b, &error));
  g_assert_no_error (error);
  params.seed = 2;
  g_assert_true (tomo_phantom_write_dxchange (&params, c, &error));
  g_assert_no_error (error);

  /* Another seed, other noise: most projection values differ. */
  {
    gsize n1, n2, n_same = 0;
    g_autofree guint16 *d1 = read_u16 (a, "/exchange/data", &n1);
    g_autofree guint16 *d2 = read_u16 (c, "/exchange/data", &n2);

    g_assert_cmpuint (n1, ==, n2);
    for (gsize i = 0; i < n1; i++)
      n_same += d1[i] == d2[i];
    g_assert_cmpuint (n_same, <, n1 / 10);
  }

  /* Read the flats of both: identical with one seed, and noisy. */
  {
    guint16 fa[2 * 10 * 32], fb[2 * 10 * 32];
    hid_t f1 = H5Fopen (a, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t f2 = H5Fopen (b, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d1 = H5Dopen2 (f1, "/exchange/data_white", H5P_DEFAULT);
    hid_t d2 = H5Dopen2 (f2, "/exchange/data_white", H5P_DEFAULT);
    double mean = 0, var = 0;

    g_assert_cmpint (H5Dread (d1, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, fa), >=, 0);
    g_assert_cmpint (H5Dread (d2, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, fb), >=, 0);
    g_assert_cmpmem (fa, sizeof fa, fb, sizeof fb);
    for (guint i = 0; i < G_N_ELEMENTS (fa); i++)
      mean += fa[i];
    mean /= G_N_ELEMENTS (fa);
    for (guint i = 0; i < G_N_ELEMENTS (fa); i++)
      var += (fa[i] - mean) * (fa[i] - mean);
    var /= G_N_ELEMENTS (fa) - 1;
    /* Poisson: variance ≈ mean = 20000 (±20 % for 640 samples is generous). */
    g_assert_cmpfloat (fabs (mean - 20000), <, 30);
    g_assert_cmpfloat (var, >, 0.8 * 20000);
    g_assert_cmpfloat (var, <, 1.2 * 20000);
    H5Dclose (d1);
    H5Dclose (d2);
    H5Fclose (f1);
    H5Fclose (f2);
  }

  g_remove (a);
  g_remove (b);
  g_remove (c);
  g_rmdir (dir);
}

/* Rows made by many threads give the single-threaded file value for value,
 * noise included (counter-based: each value's draws depend on the seed and
 * its place, not on the thread or the order); without noise every count is
 * the rounded exact mean of the line integral. */
static void
test_parallel_same_counts (void)
{
  const char *names[] = { "/exchange/data", "/exchange/data_white", "/exchange/data_dark" };
  g_autofree char *dir = tomo_test_make_tmp_dir ("tomo-phantom-XXXXXX");
  TomoPhantomParams params;

  tomo_phantom_params_init (&params);
  params.width = 96;
  params.height = 11;   /* more rows than slots of the ring, not a multiple */
  params.n_proj = 70;
  params.center = 49.2;

  for (int noise = 0; noise <= 1; noise++)
    {
      g_autofree char *one = g_build_filename (dir, "one.h5", NULL);
      g_autofree char *many = g_build_filename (dir, "many.h5", NULL);
      g_autoptr (GError) error = NULL;

      params.noise = noise;
      params.n_threads = 1;
      g_assert_true (tomo_phantom_write_dxchange (&params, one, &error));
      g_assert_no_error (error);
      params.n_threads = 5;
      g_assert_true (tomo_phantom_write_dxchange (&params, many, &error));
      g_assert_no_error (error);

      for (guint k = 0; k < G_N_ELEMENTS (names); k++)
        {
          gsize n1, n2;
          g_autofree guint16 *a = read_u16 (one, names[k], &n1);
          g_autofree guint16 *b = read_u16 (many, names[k], &n2);

          g_assert_cmpmem (a, n1 * 2, b, n2 * 2);
          if (!noise && k == 0)
            {
              g_autofree double *sino = g_new (double, params.n_proj * params.width);
              double gain = params.flat_level - params.dark_level;
              guint n_mismatch = 0, n_attenuated = 0;

              for (guint row = 0; row < params.height; row++)
                {
                  tomo_phantom_sinogram (&params, NULL, row, sino);
                  for (guint p = 0; p < params.n_proj; p++)
                    for (guint i = 0; i < params.width; i++)
                      {
                        double v = params.dark_level
                                   + gain * exp (-sino[p * params.width + i]);
                        guint16 expect = (guint16) CLAMP (floor (v + 0.5), 0.0, 65535.0);
                        gsize at = ((gsize) p * params.height + row) * params.width + i;

                        n_mismatch += b[at] != expect;
                        n_attenuated += expect < params.flat_level - 1;
                      }
                }
              g_assert_cmpuint (n_mismatch, ==, 0);
              g_assert_cmpuint (n_attenuated, >, params.n_proj * params.height * 10);
            }
        }
      g_assert_cmpint (g_remove (one), ==, 0);
      g_assert_cmpint (g_remove (many), ==, 0);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

static void
test_write_errors (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = tomo_test_make_tmp_dir ("tomo-phantom-XXXXXX");
  g_autofree char *bad_path = g_build_filename (dir, "no-such-folder", "x.h5", NULL);
  g_autofree char *path = g_build_filename (dir, "x.h5", NULL);
  TomoPhantomParams params;

  centred_params (&params, 16, 1, 4);

  g_assert_false (tomo_phantom_write_dxchange (&params, bad_path, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  g_assert_nonnull (strstr (error->message, bad_path));
  g_clear_error (&error);

  params.flat_level = 50; /* below the dark */
  g_assert_false (tomo_phantom_write_dxchange (&params, path, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE);
  g_assert_nonnull (strstr (error->message, "flat"));
  g_clear_error (&error);
  params.flat_level = 20000;

  params.center = NAN;
  g_assert_false (tomo_phantom_write_dxchange (&params, path, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE);
  g_assert_nonnull (strstr (error->message, "centre"));
  g_clear_error (&error);

  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_rmdir (dir);
}

static void
test_params_init (void)
{
  TomoPhantomParams params;

  tomo_phantom_params_init (&params);
  g_assert_cmpuint (params.width, ==, 256);
  g_assert_cmpuint (params.height, ==, 16);
  g_assert_cmpuint (params.n_proj, ==, 180);
  g_assert_cmpfloat_with_epsilon (params.center, 127.5 + 3.37, 1e-12);
  g_assert_cmpfloat_with_epsilon (params.max_attenuation, 4.0 / 256, 1e-15);
  g_assert_true (params.noise);
}

/* The counter-based noise has Poisson statistics: with nothing in the beam
 * every projection value has the flat's mean, so the values' mean and
 * variance both match it — bright (normal approximation, values drawn in
 * pairs from one Box–Muller draw) and dim (Knuth's exact method) — and the
 * two values of a pair, and neighbouring rows, are uncorrelated. */
static void
test_noise_statistics (void)
{
  g_autofree char *dir = tomo_test_make_tmp_dir ("tomo-phantom-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "stats.h5", NULL);
  double levels[] = { 20000, 4.5 };

  for (guint k = 0; k < G_N_ELEMENTS (levels); k++)
    {
      g_autoptr (GError) error = NULL;
      TomoPhantomParams params;
      g_autofree guint16 *v = NULL;
      gsize n;
      double mean = 0, var = 0, pair = 0, rows = 0;
      guint n_pairs = 0, n_rows = 0;

      centred_params (&params, 64, 4, 100);
      params.max_attenuation = 0;   /* an empty beam */
      params.dark_level = 0;
      params.flat_level = levels[k];
      params.noise = TRUE;
      params.seed = 11 + k;
      g_assert_true (tomo_phantom_write_dxchange (&params, path, &error));
      g_assert_no_error (error);
      v = read_u16 (path, "/exchange/data", &n);
      g_assert_cmpuint (n, ==, 100 * 4 * 64);
      for (gsize i = 0; i < n; i++)
        mean += v[i];
      mean /= n;
      for (gsize i = 0; i < n; i++)
        var += (v[i] - mean) * (v[i] - mean);
      var /= n - 1;
      /* (p, row, x): x even/odd are a pair; row r and r + 1 neighbours. */
      for (gsize i = 0; i + 1 < n; i += 2)
        {
          pair += (v[i] - mean) * (v[i + 1] - mean);
          n_pairs++;
        }
      for (gsize i = 0; i + 64 < n; i++)
        if ((i / 64) % 4 != 3)
          {
            rows += (v[i] - mean) * (v[i + 64] - mean);
            n_rows++;
          }
      pair /= n_pairs * var;
      rows /= n_rows * var;
      g_test_message ("level %g: mean %.3f, variance %.3f, pair correlation %.4f, rows %.4f",
                      levels[k], mean, var, pair, rows);
      /* 25600 values: the mean within ~5 standard errors, the variance
       * within 5 % of the mean, correlations within ~4/√n. */
      g_assert_cmpfloat (fabs (mean - levels[k]), <, 5 * sqrt (levels[k] / n) + 0.05);
      g_assert_cmpfloat (fabs (var / levels[k] - 1), <, 0.05);
      g_assert_cmpfloat (fabs (pair), <, 0.04);
      g_assert_cmpfloat (fabs (rows), <, 0.04);
      g_remove (path);
    }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tomo/phantom/params-init", test_params_init);
  g_test_add_func ("/tomo/phantom/disk-line-integral", test_disk_line_integral);
  g_test_add_func ("/tomo/phantom/slice-matches-projection", test_slice_matches_projection);
  g_test_add_func ("/tomo/phantom/dxchange/shapes", test_write_dxchange);
  g_test_add_func ("/tomo/phantom/dxchange/seeded-noise", test_noise_is_seeded);
  g_test_add_func ("/tomo/phantom/dxchange/noise-statistics", test_noise_statistics);
  g_test_add_func ("/tomo/phantom/dxchange/errors", test_write_errors);
  g_test_add_func ("/tomo/phantom/dxchange/parallel-same-counts", test_parallel_same_counts);

  return g_test_run ();
}
