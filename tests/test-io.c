/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <hdf5.h>
#include <tiffio.h>

#include "tomo-error.h"
#include "tomo-hdf5-private.h"
#include "tomo-scan.h"
#include "tomo-scan-private.h"
#include "tomo-test-util.h"
#include "tomo-tiff-writer.h"

/* A small synthetic scan whose line integrals are known exactly:
 * raw = dark + (flat − dark)·exp(−L), so preprocessing must give L back. */
#define NP 6   /* projections */
#define NR 4   /* detector rows */
#define NW 5   /* detector columns */
#define NF 2   /* flats */
#define ND 2   /* darks */

static double
known_L (guint p, guint r, guint x)
{
  return 0.1 + 0.01 * p + 0.05 * r + 0.02 * x;
}

static double
flat_value (guint i, guint r, guint x)
{
  /* Two flats that differ by ±5 average to 1000 + 10x + r. */
  return 1000.0 + 10.0 * x + r + (i % 2 ? 5.0 : -5.0);
}

static double
dark_value (guint i, guint r, guint x)
{
  return 100.0 + x + (i % 2 ? 2.0 : -2.0);
}

static double
raw_value (guint p, guint r, guint x)
{
  double f = 1000.0 + 10.0 * x + r, d = 100.0 + x;
  return d + (f - d) * exp (-known_L (p, r, x));
}

static float *
make_frames (guint n, double (*fn) (guint, guint, guint))
{
  float *v = g_new (float, (gsize) n * NR * NW);

  for (guint i = 0; i < n; i++)
    for (guint r = 0; r < NR; r++)
      for (guint x = 0; x < NW; x++)
        v[((gsize) i * NR + r) * NW + x] = fn (i, r, x);
  return v;
}

typedef struct
{
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = tomo_test_make_tmp_dir ("tomo-io-XXXXXX");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  tomo_test_remove_tree (f->dir);
  g_free (f->dir);
}

static char *
fpath (Fixture *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
}

/* ------------------------------------------------------------------ */
/* HDF5 writing helpers                                                */

static hid_t
h5_create (const char *path)
{
  hid_t file = H5Fcreate (path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  g_assert_cmpint (file, >=, 0);
  return file;
}

/* The shared writer (tests/tomo-test-util.c). */
#define h5_write tomo_test_h5_write

static void
h5_write_frames (hid_t file, const char *name, hid_t type, guint n, const float *data)
{
  hsize_t dims[3] = { n, NR, NW };
  h5_write (file, name, type, 3, dims, NULL, H5T_NATIVE_FLOAT, data);
}

static void
h5_write_doubles (hid_t file, const char *name, guint n, const double *v)
{
  hsize_t dims[1] = { n };
  h5_write (file, name, H5T_NATIVE_DOUBLE, 1, dims, NULL, H5T_NATIVE_DOUBLE, v);
}

static void
h5_write_string (hid_t file, const char *name, const char *value)
{
  hid_t type = H5Tcopy (H5T_C_S1);
  hid_t lcpl = H5Pcreate (H5P_LINK_CREATE);
  hid_t space = H5Screate (H5S_SCALAR);
  hid_t dset;

  H5Tset_size (type, H5T_VARIABLE);
  H5Pset_create_intermediate_group (lcpl, 1);
  dset = H5Dcreate2 (file, name, type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  g_assert_cmpint (dset, >=, 0);
  H5Dwrite (dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value);
  H5Dclose (dset);
  H5Sclose (space);
  H5Pclose (lcpl);
  H5Tclose (type);
}

static void
h5_write_attr_string (hid_t file, const char *obj_name, const char *attr, const char *value)
{
  hid_t obj = H5Oopen (file, obj_name, H5P_DEFAULT);
  hid_t type = H5Tcopy (H5T_C_S1);

  H5Tset_size (type, strlen (value) + 1);
  g_assert_true (_tomo_hdf5_write_attr (obj, attr, type, type, value));
  H5Tclose (type);
  H5Oclose (obj);
}

typedef enum
{
  DX_FULL = 0,
  DX_NO_FLATS = 1 << 0,
  DX_NO_THETA = 1 << 1,
  DX_BAD_THETA = 1 << 2,
  DX_WIDE_FLATS = 1 << 3,
  DX_CHUNKED = 1 << 4,
  DX_FLATS_ARE_DARKS = 1 << 5,
} DxFlags;

static double theta_deg[NP] = { 0, 30, 60, 90, 120, 150 };

/* Data Exchange file of the synthetic scan; `edit` may spoil the
 * projections before they are written. */
static char *
write_dxchange (Fixture *f, const char *name, DxFlags flags, hid_t type,
                void (*edit) (float *proj))
{
  char *path = fpath (f, name);
  hid_t file = h5_create (path);
  g_autofree float *proj = make_frames (NP, raw_value);
  g_autofree float *flats = make_frames (NF, flat_value);
  g_autofree float *darks = make_frames (ND, dark_value);

  if (edit)
    edit (proj);

  if (flags & DX_CHUNKED)
    {
      hsize_t dims[3] = { NP, NR, NW }, chunk[3] = { 2, 3, 2 };
      h5_write (file, "/exchange/data", type, 3, dims, chunk, H5T_NATIVE_FLOAT, proj);
    }
  else
    h5_write_frames (file, "/exchange/data", type, NP, proj);

  if (flags & DX_WIDE_FLATS)
    {
      hsize_t dims[3] = { NF, NR, NW + 1 };
      g_autofree float *wide = g_new0 (float, NF * NR * (NW + 1));
      h5_write (file, "/exchange/data_white", type, 3, dims, NULL, H5T_NATIVE_FLOAT, wide);
    }
  else if (!(flags & DX_NO_FLATS))
    h5_write_frames (file, "/exchange/data_white", type, NF,
                     flags & DX_FLATS_ARE_DARKS ? darks : flats);
  h5_write_frames (file, "/exchange/data_dark", type, ND, darks);

  if (flags & DX_BAD_THETA)
    h5_write_doubles (file, "/exchange/theta", NP - 1, theta_deg);
  else if (!(flags & DX_NO_THETA))
    h5_write_doubles (file, "/exchange/theta", NP, theta_deg);

  {
    double px = 6.5;
    hsize_t one = 1;
    h5_write (file, "/measurement/instrument/detector/actual_pixel_size_x",
              H5T_NATIVE_DOUBLE, 1, &one, NULL, H5T_NATIVE_DOUBLE, &px);
    h5_write_attr_string (file, "/measurement/instrument/detector/actual_pixel_size_x",
                          "units", "microns");
  }

  H5Fclose (file);
  return path;
}

/* The test scan's shape and its angles (read from the file). */
static void
assert_known_layout (TomoScan *scan)
{
  g_assert_nonnull (scan);
  g_assert_cmpuint (tomo_scan_get_width (scan), ==, NW);
  g_assert_cmpuint (tomo_scan_get_height (scan), ==, NR);
  g_assert_cmpuint (tomo_scan_get_n_projections (scan), ==, NP);
  g_assert_cmpuint (tomo_scan_get_n_flats (scan), ==, NF);
  g_assert_cmpuint (tomo_scan_get_n_darks (scan), ==, ND);
  g_assert_true (tomo_scan_get_angles_from_file (scan));
  for (guint i = 0; i < NP; i++)
    g_assert_cmpfloat_with_epsilon (tomo_scan_get_angles (scan)[i], theta_deg[i] * G_PI / 180, 1e-12);
}

static void
assert_known_sinogram (TomoScan *scan, TomoPreprocessStats *stats)
{
  float out[NP * NW];

  for (guint r = 0; r < NR; r++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_true (tomo_scan_read_sinogram (scan, r, out, stats, &error));
      g_assert_no_error (error);
      for (guint p = 0; p < NP; p++)
        for (guint x = 0; x < NW; x++)
          {
            double L = known_L (p, r, x);
            g_assert_cmpfloat (fabs (out[p * NW + x] - L), <=, 1e-5 * L);
          }
    }
}

static void
assert_error_mentions (const GError *error, const char *a, const char *b)
{
  g_assert_nonnull (error);
  if (g_test_verbose ())
    g_test_message ("error: %s", error->message);
  if (a)
    g_assert_nonnull (strstr (error->message, a));
  if (b)
    g_assert_nonnull (strstr (error->message, b));
}

/* Opening `path` must fail with `code`, the message naming `a` and `b`. */
static void
assert_open_fails (const char            *path,
                   const TomoOpenOptions *options,
                   int                    code,
                   const char            *a,
                   const char            *b)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = tomo_scan_open (path, options, &error);

  g_assert_null (scan);
  g_assert_error (error, TOMO_IO_ERROR, code);
  assert_error_mentions (error, a, b);
}

/* ------------------------------------------------------------------ */
/* HDF5                                                                */

static void
test_dxchange (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "scan.h5", DX_FULL, H5T_IEEE_F32LE, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = tomo_test_open_scan (path);
  TomoPreprocessStats stats = { 0, };
  float flat[NW], dark[NW], raw[NP * NW];
  g_autofree char *text = NULL;

  assert_known_layout (scan);
  g_assert_cmpint (tomo_scan_get_dtype (scan), ==, TOMO_DTYPE_FLOAT32);
  g_assert_cmpstr (tomo_scan_get_path (scan), ==, path);
  g_assert_nonnull (strstr (tomo_scan_get_format_name (scan), "Data Exchange"));
  g_assert_cmpfloat_with_epsilon (tomo_scan_get_pixel_size (scan), 6.5e-6, 1e-12);

  assert_known_sinogram (scan, &stats);
  g_assert_cmpuint (stats.n_values, >=, NP * NW * NR);
  g_assert_cmpuint (stats.n_nonfinite, ==, 0);
  g_assert_cmpuint (stats.n_nonpositive, ==, 0);

  /* Flats and darks are averaged per row. */
  g_assert_true (tomo_scan_read_flat_dark (scan, 2, flat, dark, &error));
  g_assert_no_error (error);
  for (guint x = 0; x < NW; x++)
    {
      g_assert_cmpfloat_with_epsilon (flat[x], 1000.0 + 10.0 * x + 2, 1e-3);
      g_assert_cmpfloat_with_epsilon (dark[x], 100.0 + x, 1e-4);
    }

  g_assert_true (tomo_scan_read_raw_sinogram (scan, 3, raw, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat_with_epsilon (raw[2 * NW + 4], (float) raw_value (2, 3, 4), 1e-3);

  text = tomo_scan_describe (scan);
  g_assert_nonnull (strstr (text, path));
  g_assert_nonnull (strstr (text, "5 × 4"));
  g_assert_nonnull (strstr (text, "float32"));
  g_assert_nonnull (strstr (text, "150"));
  g_assert_nonnull (strstr (text, "6.5 µm"));
}

static void
test_dxchange_chunked (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "chunked.h5", DX_CHUNKED, H5T_IEEE_F64BE, NULL);
  g_autoptr(TomoScan) scan = tomo_test_open_scan (path);

  g_assert_cmpint (tomo_scan_get_dtype (scan), ==, TOMO_DTYPE_FLOAT64);
  assert_known_sinogram (scan, NULL);
}

static void
test_dxchange_uint16 (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "u16.h5", DX_FULL, H5T_STD_U16LE, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = tomo_test_open_scan (path);
  float raw[NP * NW], sino[NP * NW];

  g_assert_cmpint (tomo_scan_get_dtype (scan), ==, TOMO_DTYPE_UINT16);
  g_assert_true (tomo_scan_read_raw_sinogram (scan, 1, raw, &error));
  g_assert_no_error (error);
  /* Integers come back as the integers HDF5 stored (rounded from the float). */
  for (guint p = 0; p < NP; p++)
    for (guint x = 0; x < NW; x++)
      {
        float v = raw[p * NW + x];
        g_assert_cmpfloat (v, ==, floorf (v));
        g_assert_cmpfloat (fabs (v - raw_value (p, 1, x)), <=, 1.0);
      }
  /* Quantised to counts: the line integral comes back to within a count. */
  g_assert_true (tomo_scan_read_sinogram (scan, 1, sino, NULL, &error));
  for (guint p = 0; p < NP; p++)
    for (guint x = 0; x < NW; x++)
      g_assert_cmpfloat (fabs (sino[p * NW + x] - known_L (p, 1, x)), <, 3e-3);
}

static void
test_dxchange_no_theta (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "notheta.h5", DX_NO_THETA, H5T_IEEE_F32LE, NULL);
  g_autoptr(GError) error = NULL;
  TomoOpenOptions options;
  const double *angles;

  {
    g_autoptr(TomoScan) scan = tomo_test_open_scan (path);
    g_assert_false (tomo_scan_get_angles_from_file (scan));
    angles = tomo_scan_get_angles (scan);
    /* Evenly spaced over 180°, endpoint excluded. */
    for (guint i = 0; i < NP; i++)
      g_assert_cmpfloat_with_epsilon (angles[i], i * G_PI / NP, 1e-12);
  }

  tomo_open_options_init (&options);
  options.angle_range_deg = 360.0;
  {
    g_autoptr(TomoScan) scan = tomo_scan_open (path, &options, &error);
    g_assert_no_error (error);
    angles = tomo_scan_get_angles (scan);
    g_assert_cmpfloat_with_epsilon (angles[NP - 1], 2 * G_PI * (NP - 1) / NP, 1e-12);
  }
}

/* NXtomo: darks, flats, projections, an invalid frame and more flats mixed
 * in one dataset; the entry is not the first group in the file. */
static char *
write_nxtomo (Fixture *f, const char *name, gboolean with_definition)
{
  /* Frame layout: D D F P P P X P P P F (X = image_key 3). */
  static const int keys[] = { 2, 2, 1, 0, 0, 0, 3, 0, 0, 0, 1 };
  const guint n = G_N_ELEMENTS (keys);
  char *path = fpath (f, name);
  hid_t file = h5_create (path);
  g_autofree float *frames = g_new0 (float, (gsize) n * NR * NW);
  double angles[G_N_ELEMENTS (keys)];
  guint p = 0, fl = 0, d = 0;

  for (guint i = 0; i < n; i++)
    {
      float *frame = frames + (gsize) i * NR * NW;

      for (guint r = 0; r < NR; r++)
        for (guint x = 0; x < NW; x++)
          {
            double v;
            switch (keys[i])
              {
              case 0: v = raw_value (p, r, x); break;
              case 1: v = flat_value (fl, r, x); break;
              case 2: v = dark_value (d, r, x); break;
              default: v = NAN; break; /* must be skipped, never read */
              }
            frame[r * NW + x] = v;
          }
      angles[i] = keys[i] == 0 ? theta_deg[p] : -999.0;
      if (keys[i] == 0) p++;
      if (keys[i] == 1) fl++;
      if (keys[i] == 2) d++;
    }

  /* A decoy group first: the loader must look for the NXtomo entry. */
  h5_write_string (file, "/aaa_notes/comment", "not a scan");
  {
    hsize_t dims[3] = { n, NR, NW };
    hsize_t kdims[1] = { n };
    h5_write (file, "/entry1/instrument/detector/data", H5T_IEEE_F32LE,
              3, dims, NULL, H5T_NATIVE_FLOAT, frames);
    h5_write (file, "/entry1/instrument/detector/image_key", H5T_STD_I32LE, 1, kdims, NULL,
              H5T_NATIVE_INT, keys);
  }
  h5_write_doubles (file, "/entry1/sample/rotation_angle", n, angles);
  if (with_definition)
    h5_write_string (file, "/entry1/definition", "NXtomo");
  H5Fclose (file);
  return path;
}

static void
test_nxtomo (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_nxtomo (f, "nx.nxs", GPOINTER_TO_INT (data));
  g_autoptr(TomoScan) scan = tomo_test_open_scan (path);
  TomoPreprocessStats stats = { 0, };

  assert_known_layout (scan);
  g_assert_nonnull (strstr (tomo_scan_get_format_name (scan), "NXtomo"));

  /* The invalid frame holds NaN: reading it by mistake would show here. */
  assert_known_sinogram (scan, &stats);
  g_assert_cmpuint (stats.n_nonfinite, ==, 0);
}

static void
test_nxtomo_no_key (Fixture *f, gconstpointer data)
{
  /* No image_key and no definition: every frame is a projection, found
   * through entry/instrument/detector/data. */
  g_autofree char *path = fpath (f, "nokey.h5");
  hid_t file = h5_create (path);
  g_autofree float *frames = make_frames (NP, raw_value);
  g_autoptr(GError) error = NULL;
  TomoOpenOptions options;
  g_autoptr(TomoScan) scan = NULL;

  h5_write_frames (file, "/scan/instrument/detector/data", H5T_IEEE_F32LE, NP, frames);
  H5Fclose (file);

  assert_open_fails (path, NULL, TOMO_IO_ERROR_MISSING_DATASET, path, "--already-sinogram");

  tomo_open_options_init (&options);
  options.already_sinogram = TRUE;
  options.already_linear = TRUE;
  scan = tomo_scan_open (path, &options, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tomo_scan_get_n_projections (scan), ==, NP);
  g_assert_cmpuint (tomo_scan_get_n_flats (scan), ==, 0);
  {
    float out[NP * NW];
    g_assert_true (tomo_scan_read_sinogram (scan, 2, out, NULL, &error));
    /* Already linear and normalised: the values pass through. */
    g_assert_cmpfloat_with_epsilon (out[3 * NW + 1], (float) raw_value (3, 2, 1), 1e-3);
  }
  {
    /* Missing flats and darks read as the neutral ones and zeros. */
    float flat[NW], dark[NW];
    g_assert_true (tomo_scan_read_flat_dark (scan, 1, flat, dark, &error));
    for (guint x = 0; x < NW; x++)
      {
        g_assert_cmpfloat (flat[x], ==, 1.0f);
        g_assert_cmpfloat (dark[x], ==, 0.0f);
      }
  }
}

static void
test_hdf5_bad (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;

  /* HDF5 without any scan in it. */
  {
    g_autofree char *path = fpath (f, "empty.h5");
    hid_t file = h5_create (path);
    h5_write_string (file, "/notes/comment", "nothing here");
    H5Fclose (file);
    assert_open_fails (path, NULL, TOMO_IO_ERROR_MISSING_DATASET, path, "/exchange/data");
  }

  /* No flat fields. */
  {
    g_autofree char *path = write_dxchange (f, "noflats.h5", DX_NO_FLATS, H5T_IEEE_F32LE, NULL);
    TomoOpenOptions options;

    assert_open_fails (path, NULL, TOMO_IO_ERROR_MISSING_DATASET, "data_white", "--already-sinogram");

    tomo_open_options_init (&options);
    options.already_sinogram = TRUE;
    scan = tomo_scan_open (path, &options, &error);
    g_assert_no_error (error);
    g_clear_object (&scan);
  }

  /* Flats of another detector size. */
  {
    g_autofree char *path = write_dxchange (f, "wide.h5", DX_WIDE_FLATS, H5T_IEEE_F32LE, NULL);
    assert_open_fails (path, NULL, TOMO_IO_ERROR_SHAPE, "data_white", "6 × 4");
  }

  /* Angles do not match the projections. */
  {
    g_autofree char *path = write_dxchange (f, "theta.h5", DX_BAD_THETA, H5T_IEEE_F32LE, NULL);
    assert_open_fails (path, NULL, TOMO_IO_ERROR_SHAPE, "/exchange/theta", "5 angles");
  }

  /* Zero projections. */
  {
    g_autofree char *path = fpath (f, "zero.h5");
    hid_t file = h5_create (path);
    g_autofree float *flats = make_frames (NF, flat_value);
    hsize_t dims[3] = { 0, NR, NW };

    h5_write (file, "/exchange/data", H5T_IEEE_F32LE, 3, dims, NULL, H5T_NATIVE_FLOAT, NULL);
    h5_write_frames (file, "/exchange/data_white", H5T_IEEE_F32LE, NF, flats);
    H5Fclose (file);
    assert_open_fails (path, NULL, TOMO_IO_ERROR_SHAPE, path, "no projections");
  }

  /* 2-D data where 3-D is expected. */
  {
    g_autofree char *path = fpath (f, "flat2d.h5");
    hid_t file = h5_create (path);
    hsize_t dims[2] = { NR, NW };
    g_autofree float *v = g_new0 (float, NR * NW);

    h5_write (file, "/exchange/data", H5T_IEEE_F32LE, 2, dims, NULL, H5T_NATIVE_FLOAT, v);
    H5Fclose (file);
    assert_open_fails (path, NULL, TOMO_IO_ERROR_SHAPE, "/exchange/data", "2 dimensions");
  }

  /* A truncated HDF5 file. */
  {
    g_autofree char *path = write_dxchange (f, "cut.h5", DX_FULL, H5T_IEEE_F32LE, NULL);
    g_autofree char *contents = NULL;
    gsize length;

    g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
    g_assert_true (g_file_set_contents (path, contents, length / 2, NULL));
    scan = tomo_scan_open (path, NULL, &error);
    if (scan != NULL)
      {
        /* If the header survived, reading the data must fail cleanly. */
        float out[NP * NW];
        gboolean ok = TRUE;
        for (guint r = 0; r < NR && ok; r++)
          ok = tomo_scan_read_sinogram (scan, r, out, NULL, &error);
        g_assert_false (ok);
        g_clear_object (&scan);
      }
    g_assert_nonnull (error);
    g_assert_true (error->domain == TOMO_IO_ERROR);
    assert_error_mentions (error, path, NULL);
    g_clear_error (&error);
  }
}

static void
spoil_nan (float *proj)
{
  proj[(0 * NR + 1) * NW + 2] = NAN;
  proj[(3 * NR + 1) * NW + 0] = INFINITY;
  proj[(5 * NR + 1) * NW + 4] = -INFINITY;
}

/* A file whose /exchange/data says already_linear (tomolive's recordings
 * of line integrals) is read without the −log; 0 keeps it. */
static void
test_already_linear_attribute (Fixture *f, gconstpointer data)
{
  for (guint8 flag = 0; flag <= 1; flag++)
    {
      g_autofree char *name = g_strdup_printf ("linear-%u.h5", flag);
      g_autofree char *path = write_dxchange (f, name, DX_FULL, H5T_IEEE_F32LE, NULL);
      g_autoptr(GError) error = NULL;
      g_autoptr(TomoScan) scan = NULL;
      hid_t file, dset;
      gboolean normalise, apply_log;
      float out[NP * NW];

      file = H5Fopen (path, H5F_ACC_RDWR, H5P_DEFAULT);
      dset = H5Dopen2 (file, "/exchange/data", H5P_DEFAULT);
      g_assert_true (_tomo_hdf5_write_attr (dset, "already_linear", H5T_STD_U8LE,
                                            H5T_NATIVE_UINT8, &flag));
      H5Dclose (dset);
      H5Fclose (file);

      scan = tomo_test_open_scan (path);
      tomo_scan_get_preprocessing (scan, &normalise, &apply_log);
      g_assert_true (normalise);
      g_assert_cmpint (apply_log, ==, !flag);
      g_assert_true (tomo_scan_read_sinogram (scan, 1, out, NULL, &error));
      g_assert_no_error (error);
      for (guint p = 0; p < NP; p++)
        for (guint x = 0; x < NW; x++)
          g_assert_cmpfloat (fabs (out[p * NW + x] - (flag ? exp (-known_L (p, 1, x)) : known_L (p, 1, x))),
                             <=, 1e-5);
    }
}

static void
test_nan (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "nan.h5", DX_FULL, H5T_IEEE_F32LE, spoil_nan);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = tomo_test_open_scan (path);
  TomoPreprocessStats stats = { 0, };
  float out[NP * NW];

  g_assert_true (tomo_scan_read_sinogram (scan, 1, out, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (stats.n_nonfinite, ==, 3);
  tomo_test_assert_finite (out, NP * NW);
  g_assert_cmpfloat (out[0 * NW + 2], ==, 0.0f);
  /* The good values are untouched. */
  g_assert_cmpfloat (fabs (out[1 * NW + 1] - known_L (1, 1, 1)), <=, 1e-5);

  /* A cached row reports its repairs again: the counts describe the data. */
  memset (&stats, 0, sizeof stats);
  g_assert_true (tomo_scan_read_sinogram (scan, 1, out, &stats, &error));
  g_assert_cmpuint (stats.n_nonfinite, ==, 3);

  /* Other rows are clean. */
  memset (&stats, 0, sizeof stats);
  g_assert_true (tomo_scan_read_sinogram (scan, 2, out, &stats, &error));
  g_assert_cmpuint (stats.n_nonfinite, ==, 0);
}

static void
test_flats_equal_darks (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "fd.h5", DX_FLATS_ARE_DARKS, H5T_IEEE_F32LE, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = tomo_test_open_scan (path);
  float out[NP * NW];

  g_assert_false (tomo_scan_read_sinogram (scan, 2, out, NULL, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE);
  assert_error_mentions (error, path, "row 2");
  assert_error_mentions (error, "data_white", NULL);
}

static void
test_dead_pixel (Fixture *f, gconstpointer data)
{
  /* One column where flat == dark: clamped and counted, the row is read. */
  g_autofree char *path = fpath (f, "dead.h5");
  hid_t file = h5_create (path);
  g_autofree float *proj = make_frames (NP, raw_value);
  g_autofree float *flats = make_frames (NF, flat_value);
  g_autofree float *darks = make_frames (ND, dark_value);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  TomoPreprocessStats stats = { 0, };
  float out[NP * NW];

  for (guint i = 0; i < NF; i++)
    flats[(i * NR + 0) * NW + 3] = darks[(i * NR + 0) * NW + 3];
  h5_write_frames (file, "/exchange/data", H5T_IEEE_F32LE, NP, proj);
  h5_write_frames (file, "/exchange/data_white", H5T_IEEE_F32LE, NF, flats);
  h5_write_frames (file, "/exchange/data_dark", H5T_IEEE_F32LE, ND, darks);
  H5Fclose (file);

  scan = tomo_test_open_scan (path);
  g_assert_true (tomo_scan_read_sinogram (scan, 0, out, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (stats.n_nonpositive, ==, NP);
  tomo_test_assert_finite (out, NP * NW);
  g_assert_cmpfloat (fabs (out[2 * NW + 1] - known_L (2, 0, 1)), <=, 1e-5);
}

static void
test_row_range (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "range.h5", DX_FULL, H5T_IEEE_F32LE, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = tomo_test_open_scan (path);
  float out[NP * NW], flat[NW], dark[NW];

  g_assert_false (tomo_scan_read_sinogram (scan, NR, out, NULL, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE);
  assert_error_mentions (error, "row 4", "4 rows");
  g_clear_error (&error);
  TOMO_TEST_ASSERT_FAILS (tomo_scan_read_raw_sinogram (scan, 1000, out, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE);
  g_assert_false (tomo_scan_read_flat_dark (scan, G_MAXUINT, flat, dark, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE);
}

typedef struct
{
  TomoScan *scan;
  guint     start;
  float    *out;   /* NR × NP × NW */
  gboolean  ok;
} ReaderJob;

static gpointer
reader_thread (gpointer data)
{
  ReaderJob *job = data;

  job->ok = TRUE;
  for (guint i = 0; i < 50 && job->ok; i++)
    {
      guint r = (job->start + i) % NR;
      job->ok = tomo_scan_read_sinogram (job->scan, r, job->out + (gsize) r * NP * NW, NULL, NULL);
    }
  return NULL;
}

static void
test_cache (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "cache.h5", DX_CHUNKED, H5T_IEEE_F32LE, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  TomoOpenOptions options;
  const gsize row_bytes = NP * NW * sizeof (float);
  float first[NR][NP * NW], again[NP * NW];
  guint n_rows;
  gsize bytes, limit;

  /* Room for two and a half rows. */
  tomo_open_options_init (&options);
  options.cache_bytes = row_bytes * 5 / 2;
  scan = tomo_scan_open (path, &options, &error);
  g_assert_no_error (error);

  for (guint r = 0; r < NR; r++)
    {
      g_assert_true (tomo_scan_read_sinogram (scan, r, first[r], NULL, &error));
      _tomo_scan_get_cache_usage (scan, &n_rows, &bytes, &limit);
      g_assert_cmpuint (limit, ==, options.cache_bytes);
      g_assert_cmpuint (bytes, <=, limit);
      g_assert_cmpuint (n_rows, ==, MIN (r + 1, 2));
      g_assert_cmpuint (bytes, ==, n_rows * row_bytes);
    }

  /* Cached (row 3) and evicted (row 0) rows give identical data. */
  for (guint r = 0; r < NR; r++)
    {
      g_assert_true (tomo_scan_read_sinogram (scan, NR - 1 - r, again, NULL, &error));
      g_assert_cmpmem (again, row_bytes, first[NR - 1 - r], row_bytes);
    }
  _tomo_scan_get_cache_usage (scan, &n_rows, &bytes, NULL);
  g_assert_cmpuint (n_rows, ==, 2);

  /* Several threads at once read the same values. */
  {
    ReaderJob jobs[4];
    GThread *threads[4];

    for (guint t = 0; t < 4; t++)
      {
        jobs[t] = (ReaderJob) { scan, t, g_new0 (float, NR * NP * NW), FALSE };
        threads[t] = g_thread_new ("reader", reader_thread, &jobs[t]);
      }
    for (guint t = 0; t < 4; t++)
      {
        g_thread_join (threads[t]);
        g_assert_true (jobs[t].ok);
        for (guint r = 0; r < NR; r++)
          g_assert_cmpmem (jobs[t].out + r * NP * NW, row_bytes, first[r], row_bytes);
        g_free (jobs[t].out);
      }
  }
}

typedef struct
{
  TomoScan *scan;
  guint     row;
  float    *out;   /* NP × NW */
  gboolean  ok;
} SameRowJob;

static gpointer
same_row_thread (gpointer data)
{
  SameRowJob *job = data;

  job->ok = tomo_scan_read_sinogram (job->scan, job->row, job->out, NULL, NULL);
  return NULL;
}

/* Readers of one row at once share one file read: the later ones wait for
 * the first and take its cached values; a read of another row and a
 * cache hit add nothing for the row being read. */
static void
test_cache_join (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "join.h5", DX_CHUNKED, H5T_IEEE_F32LE, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = tomo_test_open_scan (path);
  const gsize row_bytes = NP * NW * sizeof (float);
  g_autofree float *direct = g_new (float, NP * NW);
  SameRowJob jobs[6];
  GThread *threads[6];
  guint64 before;

  g_assert_true (tomo_scan_read_sinogram_direct (scan, 2, direct, NULL, &error));
  g_assert_no_error (error);
  before = _tomo_scan_get_n_row_reads (scan);
  g_assert_cmpuint (before, ==, 1);

  for (guint t = 0; t < G_N_ELEMENTS (jobs); t++)
    {
      jobs[t] = (SameRowJob) { scan, 2, g_new0 (float, NP * NW), FALSE };
      threads[t] = g_thread_new ("same-row", same_row_thread, &jobs[t]);
    }
  for (guint t = 0; t < G_N_ELEMENTS (jobs); t++)
    {
      g_thread_join (threads[t]);
      g_assert_true (jobs[t].ok);
      /* Bit for bit the uncached values. */
      g_assert_cmpmem (jobs[t].out, row_bytes, direct, row_bytes);
      g_free (jobs[t].out);
    }
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), ==, before + 1);

  g_assert_true (tomo_scan_read_sinogram (scan, 2, direct, NULL, &error));
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), ==, before + 1);
  g_assert_true (tomo_scan_read_sinogram (scan, 1, direct, NULL, &error));
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), ==, before + 2);
}

/* A live refresh (_tomo_scan_invalidate) while a row is read: the reader
 * gets what it read, but neither the cache nor a reader waiting for that
 * row keeps the values from before the refresh. */
static void
test_cache_invalidate_in_flight (Fixture *f, gconstpointer data)
{
  g_autofree char *path = write_dxchange (f, "refresh.h5", DX_CHUNKED, H5T_IEEE_F32LE, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) base = tomo_test_open_scan (path);
  g_autoptr(TomoTestGate) gate = tomo_test_gate_new ();
  g_autoptr(TomoScan) scan = NULL;
  const gsize row_bytes = NP * NW * sizeof (float);
  float expect_old[NP * NW], expect_new[NP * NW], again[NP * NW];
  SameRowJob first, waiter;
  GThread *first_thread, *waiter_thread;
  guint64 reads;

  /* Rows of `scan`: the file's plus the frames' "version", 1 then 2. */
  scan = tomo_test_gated_scan (base, gate);
  tomo_test_gate_set_offset (gate, 1.0f);
  g_assert_true (tomo_scan_read_sinogram_direct (base, 2, expect_old, NULL, &error));
  for (guint i = 0; i < NP * NW; i++)
    {
      expect_new[i] = expect_old[i] + 2.0f;
      expect_old[i] += 1.0f;
    }

  tomo_test_gate_arm (gate, 2);
  first = (SameRowJob) { scan, 2, g_new0 (float, NP * NW), FALSE };
  first_thread = g_thread_new ("first", same_row_thread, &first);
  tomo_test_gate_wait (gate);
  /* A second reader of row 2 finds it in flight (it cannot read the row
   * itself before the first is done, whenever it gets there). */
  waiter = (SameRowJob) { scan, 2, g_new0 (float, NP * NW), FALSE };
  waiter_thread = g_thread_new ("waiter", same_row_thread, &waiter);

  /* New frames arrive; tomo_live_scan_refresh() invalidates. */
  tomo_test_gate_set_offset (gate, 2.0f);
  _tomo_scan_invalidate (scan);
  tomo_test_gate_open (gate);

  g_thread_join (first_thread);
  g_thread_join (waiter_thread);
  g_assert_true (first.ok);
  g_assert_true (waiter.ok);
  g_assert_cmpmem (first.out, row_bytes, expect_old, row_bytes);
  g_assert_cmpmem (waiter.out, row_bytes, expect_new, row_bytes);
  g_free (first.out);
  g_free (waiter.out);

  /* Later reads see the new frames, from the cache once read again. */
  g_assert_true (tomo_scan_read_sinogram (scan, 2, again, NULL, &error));
  g_assert_cmpmem (again, row_bytes, expect_new, row_bytes);
  reads = _tomo_scan_get_n_row_reads (base);
  g_assert_true (tomo_scan_read_sinogram (scan, 2, again, NULL, &error));
  g_assert_cmpmem (again, row_bytes, expect_new, row_bytes);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (base), ==, reads);
}

static void
test_open_speed (Fixture *f, gconstpointer data)
{
  /* 1800 projections of 2048 × 2048 float32 (27 GiB) declared, never
   * written: opening must read only the header. */
  g_autofree char *path = fpath (f, "big.h5");
  hid_t file = h5_create (path);
  hsize_t dims[3] = { 1800, 2048, 2048 }, chunk[3] = { 1, 64, 2048 };
  hsize_t fdims[3] = { 20, 2048, 2048 };
  g_autofree double *theta = g_new (double, 1800);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  gint64 t0, t1;

  for (guint i = 0; i < 1800; i++)
    theta[i] = i * 0.1;
  h5_write (file, "/exchange/data", H5T_STD_U16LE, 3, dims, chunk, H5T_NATIVE_FLOAT, NULL);
  h5_write (file, "/exchange/data_white", H5T_STD_U16LE, 3, fdims, chunk, H5T_NATIVE_FLOAT, NULL);
  h5_write_doubles (file, "/exchange/theta", 1800, theta);
  H5Fclose (file);

  t0 = g_get_monotonic_time ();
  scan = tomo_scan_open (path, NULL, &error);
  t1 = g_get_monotonic_time ();
  g_assert_no_error (error);
  g_assert_cmpuint (tomo_scan_get_n_projections (scan), ==, 1800);
  g_assert_cmpuint (tomo_scan_get_width (scan), ==, 2048);
  g_test_message ("opened a 1800 × 2048 × 2048 header in %.1f ms", (t1 - t0) / 1000.0);
  g_assert_cmpint (t1 - t0, <, 100000);
}

static void
test_missing_and_unknown (Fixture *f, gconstpointer data)
{
  g_autofree char *missing = fpath (f, "nope.h5");
  g_autofree char *text = fpath (f, "notes.txt");
  g_autofree char *fake_tif = fpath (f, "fake.tif");
  g_autofree char *fake_h5 = fpath (f, "fake.h5");
  TomoOpenOptions options;

  assert_open_fails (missing, NULL, TOMO_IO_ERROR_NOT_FOUND, missing, NULL);

  g_assert_true (g_file_set_contents (text, "hello, not a scan\n", -1, NULL));
  assert_open_fails (text, NULL, TOMO_IO_ERROR_FORMAT, text, NULL);

  /* Looks like TIFF by its magic, is not. */
  g_assert_true (g_file_set_contents (fake_tif, "II*\0garbage garbage", 19, NULL));
  assert_open_fails (fake_tif, NULL, TOMO_IO_ERROR_FORMAT, fake_tif, NULL);

  /* Forced HDF5 on a text file. */
  g_assert_true (g_file_set_contents (fake_h5, "not hdf5", -1, NULL));
  tomo_open_options_init (&options);
  options.format = TOMO_SCAN_FORMAT_DXCHANGE;
  assert_open_fails (fake_h5, &options, TOMO_IO_ERROR_FORMAT, fake_h5, "HDF5");
}

/* ------------------------------------------------------------------ */
/* TIFF                                                                */

static void
write_tiff (const char *path,
            const float *pages,
            guint        n_pages,
            guint        width,
            guint        height,
            TomoDType    dtype,
            gboolean     tiled)
{
  static const struct { guint16 bits, fmt; } kinds[] = {
    [TOMO_DTYPE_UINT8] = { 8, SAMPLEFORMAT_UINT },
    [TOMO_DTYPE_UINT16] = { 16, SAMPLEFORMAT_UINT },
    [TOMO_DTYPE_UINT32] = { 32, SAMPLEFORMAT_UINT },
    [TOMO_DTYPE_FLOAT32] = { 32, SAMPLEFORMAT_IEEEFP },
    [TOMO_DTYPE_FLOAT64] = { 64, SAMPLEFORMAT_IEEEFP },
  };
  /* Tiled pages are written big-endian ("MM"): both byte orders get read. */
  TIFF *tif = TIFFOpen (path, tiled ? "wb" : "wl");
  gsize elem = kinds[dtype].bits / 8;
  g_autofree guint8 *buf = g_malloc0 ((gsize) width * height * elem + 16 * 16 * elem);

  g_assert_nonnull (tif);
  for (guint p = 0; p < n_pages; p++)
    {
      const float *src = pages + (gsize) p * width * height;

      for (gsize i = 0; i < (gsize) width * height; i++)
        switch (dtype)
          {
          case TOMO_DTYPE_UINT8: ((guint8 *) buf)[i] = src[i]; break;
          case TOMO_DTYPE_UINT16: ((guint16 *) buf)[i] = src[i]; break;
          case TOMO_DTYPE_UINT32: ((guint32 *) buf)[i] = src[i]; break;
          case TOMO_DTYPE_FLOAT32: ((float *) buf)[i] = src[i]; break;
          case TOMO_DTYPE_FLOAT64: ((double *) buf)[i] = src[i]; break;
          default: g_assert_not_reached ();
          }

      TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, width);
      TIFFSetField (tif, TIFFTAG_IMAGELENGTH, height);
      TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, kinds[dtype].bits);
      TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, kinds[dtype].fmt);
      TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
      TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
      TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
      if (tiled)
        {
          g_autofree guint8 *tile = g_malloc0 (16 * 16 * elem);

          TIFFSetField (tif, TIFFTAG_TILEWIDTH, 16);
          TIFFSetField (tif, TIFFTAG_TILELENGTH, 16);
          for (guint ty = 0; ty < height; ty += 16)
            for (guint tx = 0; tx < width; tx += 16)
              {
                memset (tile, 0, 16 * 16 * elem);
                for (guint y = ty; y < MIN (ty + 16, height); y++)
                  memcpy (tile + ((y - ty) * 16) * elem, buf + ((gsize) y * width + tx) * elem,
                          MIN (16, width - tx) * elem);
                g_assert_cmpint (TIFFWriteTile (tif, tile, tx, ty, 0, 0), >, 0);
              }
        }
      else
        {
          TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 2);
          for (guint y = 0; y < height; y++)
            g_assert_cmpint (TIFFWriteScanline (tif, buf + (gsize) y * width * elem, y, 0), ==, 1);
        }
      TIFFWriteDirectory (tif);
    }
  TIFFClose (tif);
}

/* A classic little-endian TIFF laid out as many cameras write it: header,
 * directory, then one uint16 strip.  Cut it anywhere in the pixels and the
 * header still opens: the error must come when the missing rows are read. */
static void
write_tiff_ifd_first (const char *path,
                      guint       width,
                      guint       height,
                      gsize       keep_bytes)
{
  enum { N_TAGS = 9 };
  const guint32 data_offset = 8 + 2 + N_TAGS * 12 + 4;
  const guint32 data_bytes = width * height * 2;
  const guint16 tags[N_TAGS][2] = {
    { 256, 4 }, { 257, 4 }, { 258, 3 }, { 259, 3 }, { 262, 3 },
    { 273, 4 }, { 277, 3 }, { 278, 4 }, { 279, 4 },
  };
  const guint32 values[N_TAGS] = { width, height, 16, 1, 1, data_offset, 1, height, data_bytes };
  g_autoptr(GByteArray) b = g_byte_array_new ();
  guint8 le[4];

#define PUT16(v) G_STMT_START { guint16 _v = GUINT16_TO_LE (v); g_byte_array_append (b, (guint8 *) &_v, 2); } G_STMT_END
#define PUT32(v) G_STMT_START { guint32 _v = GUINT32_TO_LE (v); g_byte_array_append (b, (guint8 *) &_v, 4); } G_STMT_END
  g_byte_array_append (b, (const guint8 *) "II", 2);
  PUT16 (42);
  PUT32 (8);
  PUT16 (N_TAGS);
  for (guint i = 0; i < N_TAGS; i++)
    {
      PUT16 (tags[i][0]);
      PUT16 (tags[i][1]);
      PUT32 (1);
      if (tags[i][1] == 3)
        {
          PUT16 (values[i]);
          PUT16 (0);
        }
      else
        PUT32 (values[i]);
    }
  PUT32 (0);
  g_assert_cmpuint (b->len, ==, data_offset);
  for (guint i = 0; i < width * height; i++)
    {
      le[0] = i & 0xff;
      le[1] = (i >> 8) & 0xff;
      g_byte_array_append (b, le, 2);
    }
#undef PUT16
#undef PUT32
  g_assert_true (g_file_set_contents (path, (char *) b->data, MIN (keep_bytes, b->len), NULL));
}

/* Folder of single-page float32 projections named so that a plain sort
 * would misorder them (p2 before p10), flats as a folder, darks as one
 * multi-page file, angles from a text file. */
static void
test_tiff_folder (Fixture *f, gconstpointer data)
{
  g_autofree char *proj_dir = fpath (f, "proj");
  g_autofree char *flat_dir = fpath (f, "flats");
  g_autofree char *dark_file = fpath (f, "darks.tiff");
  g_autofree char *angle_file = fpath (f, "angles.txt");
  g_autofree float *proj = make_frames (NP, raw_value);
  g_autofree float *flats = make_frames (NF, flat_value);
  g_autofree float *darks = make_frames (ND, dark_value);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autofree char *text = NULL;
  TomoOpenOptions options;
  TomoPreprocessStats stats = { 0, };

  g_mkdir (proj_dir, 0700);
  g_mkdir (flat_dir, 0700);
  for (guint p = 0; p < NP; p++)
    {
      g_autofree char *name = g_strdup_printf ("%s/p%u.tif", proj_dir, p * 4 + 2);
      write_tiff (name, proj + (gsize) p * NR * NW, 1, NW, NR, TOMO_DTYPE_FLOAT32, FALSE);
    }
  for (guint i = 0; i < NF; i++)
    {
      g_autofree char *name = g_strdup_printf ("%s/flat_%u.tiff", flat_dir, i);
      write_tiff (name, flats + (gsize) i * NR * NW, 1, NW, NR, TOMO_DTYPE_FLOAT32, FALSE);
    }
  {
    /* Something in the folder that is not a TIFF must be ignored. */
    g_autofree char *junk = g_build_filename (proj_dir, "README", NULL);
    g_file_set_contents (junk, "notes", -1, NULL);
  }
  write_tiff (dark_file, darks, ND, NW, NR, TOMO_DTYPE_FLOAT32, FALSE);
  g_assert_true (g_file_set_contents (angle_file,
                                      "# angles in degrees\n0\n30\n\n60 # three\n90\n120\n150\n",
                                      -1, NULL));

  tomo_open_options_init (&options);
  options.flats = flat_dir;
  options.darks = dark_file;
  options.angles = angle_file;
  scan = tomo_scan_open (proj_dir, &options, &error);
  g_assert_no_error (error);
  assert_known_layout (scan);
  assert_known_sinogram (scan, &stats);
  g_assert_cmpuint (stats.n_nonfinite + stats.n_nonpositive, ==, 0);

  text = tomo_scan_describe (scan);
  g_assert_nonnull (strstr (text, "TIFF"));
  g_assert_nonnull (strstr (text, angle_file));
  g_clear_object (&scan);

  /* The same projections through a glob. */
  {
    g_autofree char *glob = g_build_filename (proj_dir, "p*.tif", NULL);
    scan = tomo_scan_open (glob, &options, &error);
    g_assert_no_error (error);
    assert_known_sinogram (scan, NULL);
    g_clear_object (&scan);
  }

  /* A glob that matches nothing. */
  {
    g_autofree char *glob = g_build_filename (proj_dir, "q*.tif", NULL);
    assert_open_fails (glob, &options, TOMO_IO_ERROR_NOT_FOUND, "q*.tif", NULL);
  }

  /* Angle file with one angle too few, then with a bad value. */
  g_assert_true (g_file_set_contents (angle_file, "0\n30\n60\n90\n120\n", -1, NULL));
  assert_open_fails (proj_dir, &options, TOMO_IO_ERROR_SHAPE, angle_file, "5 angles");
  g_assert_true (g_file_set_contents (angle_file, "0\n30\nsixty\n90\n120\n150\n", -1, NULL));
  assert_open_fails (proj_dir, &options, TOMO_IO_ERROR_VALUE, "line 3", "sixty");

  /* No flats given and not normalised. */
  options.flats = NULL;
  options.angles = NULL;
  assert_open_fails (proj_dir, &options, TOMO_IO_ERROR_MISSING_DATASET, proj_dir, "--already-sinogram");
}

/* A folder of multi-page files (a beamline's chunks of N projections per
 * file): every page of every file, in file order — chunks of 4 and a last
 * one of 2, and three of 2.  A folder whose first and last files hold one
 * page but another holds more is refused when read, never read short. */
static void
test_tiff_folder_chunks (Fixture *f, gconstpointer data)
{
  g_autofree float *proj = make_frames (NP, raw_value);
  g_autofree float *flats = make_frames (NF, flat_value);
  g_autofree char *flat_file = fpath (f, "chunk-flats.tif");
  g_autofree char *angle_file = fpath (f, "chunk-angles.txt");
  const guint splits[][3] = { { 4, 2, 0 }, { 2, 2, 2 } };
  TomoOpenOptions options;

  write_tiff (flat_file, flats, NF, NW, NR, TOMO_DTYPE_FLOAT32, FALSE);
  g_assert_true (g_file_set_contents (angle_file, "0\n30\n60\n90\n120\n150\n", -1, NULL));
  tomo_open_options_init (&options);
  options.flats = flat_file;
  options.darks = NULL;
  options.angles = angle_file;
  for (guint c = 0; c < G_N_ELEMENTS (splits); c++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/chunks-%u", f->dir, c);
      g_autoptr(GError) error = NULL;
      g_autoptr(TomoScan) scan = NULL;
      float raw[NP * NW];
      guint first = 0;

      g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
      for (guint k = 0; k < 3 && splits[c][k] > 0; k++)
        {
          g_autofree char *name = g_strdup_printf ("%s/scan_%04u.tif", dir, k);

          write_tiff (name, proj + (gsize) first * NR * NW, splits[c][k], NW, NR,
                      TOMO_DTYPE_FLOAT32, FALSE);
          first += splits[c][k];
        }
      scan = tomo_scan_open (dir, &options, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (tomo_scan_get_n_projections (scan), ==, NP);
      for (guint r = 0; r < NR; r++)
        {
          g_assert_true (tomo_scan_read_raw_sinogram (scan, r, raw, &error));
          g_assert_no_error (error);
          for (guint p = 0; p < NP; p++)
            for (guint x = 0; x < NW; x++)
              g_assert_cmpfloat (raw[p * NW + x], ==, proj[((gsize) p * NR + r) * NW + x]);
        }
    }

  /* One page, three pages, one page. */
  {
    g_autofree char *dir = g_strdup_printf ("%s/chunks-odd", f->dir);
    g_autofree char *middle = g_strdup_printf ("%s/scan_0001.tif", dir);
    g_autoptr(GError) error = NULL;
    g_autoptr(TomoScan) scan = NULL;
    float raw[NP * NW];

    g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
    for (guint k = 0; k < 3; k++)
      {
        g_autofree char *name = g_strdup_printf ("%s/scan_%04u.tif", dir, k);

        write_tiff (name, proj + (gsize) (k == 0 ? 0 : k == 1 ? 1 : 4) * NR * NW, k == 1 ? 3 : 1,
                    NW, NR, TOMO_DTYPE_FLOAT32, FALSE);
      }
    options.angles = NULL;
    scan = tomo_scan_open (dir, &options, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (tomo_scan_get_n_projections (scan), ==, 3);
    g_assert_false (tomo_scan_read_raw_sinogram (scan, 0, raw, &error));
    g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE);
    g_assert_nonnull (strstr (error->message, middle));
    g_assert_nonnull (strstr (error->message, "holds more than one page"));
  }
}

static void
test_tiff_dtypes (Fixture *f, gconstpointer data)
{
  const TomoDType dtypes[] = { TOMO_DTYPE_UINT8, TOMO_DTYPE_UINT16, TOMO_DTYPE_UINT32,
                               TOMO_DTYPE_FLOAT32, TOMO_DTYPE_FLOAT64 };
  const guint w = 37, h = 21, n = 3;   /* not multiples of tiles or strips */
  g_autofree float *pages = g_new (float, n * w * h);

  for (guint tiled = 0; tiled < 2; tiled++)
    for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
      {
        g_autofree char *name = g_strdup_printf ("stack-%s-%u.tif", tomo_dtype_to_string (dtypes[d]), tiled);
        g_autofree char *path = fpath (f, name);
        g_autoptr(GError) error = NULL;
        g_autoptr(TomoScan) scan = NULL;
        g_autofree float *row = g_new (float, n * w);
        TomoOpenOptions options;

        for (guint i = 0; i < n * w * h; i++)
          pages[i] = dtypes[d] >= TOMO_DTYPE_FLOAT32 ? i * 0.25f - 7.5f
                   : dtypes[d] == TOMO_DTYPE_UINT8 ? (i * 7) % 256
                   : dtypes[d] == TOMO_DTYPE_UINT16 ? 40000 + (i % 20000)
                   : 3000000u + i;
        write_tiff (path, pages, n, w, h, dtypes[d], tiled);
        {
          g_autofree char *head = NULL;
          g_assert_true (g_file_get_contents (path, &head, NULL, NULL));
          g_assert_cmpint (head[0], ==, tiled ? 'M' : 'I');
        }

        tomo_open_options_init (&options);
        options.already_sinogram = TRUE;
        scan = tomo_scan_open (path, &options, &error);
        g_assert_no_error (error);
        g_assert_cmpint (tomo_scan_get_dtype (scan), ==, dtypes[d]);
        g_assert_cmpuint (tomo_scan_get_n_projections (scan), ==, n);
        g_assert_cmpuint (tomo_scan_get_width (scan), ==, w);
        g_assert_cmpuint (tomo_scan_get_height (scan), ==, h);

        for (guint r = 0; r < h; r += 4)
          {
            g_assert_true (tomo_scan_read_raw_sinogram (scan, r, row, &error));
            g_assert_no_error (error);
            for (guint p = 0; p < n; p++)
              for (guint x = 0; x < w; x++)
                g_assert_cmpfloat (row[p * w + x], ==, pages[((gsize) p * h + r) * w + x]);
          }
      }
}

static void
test_tiff_bad (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  TomoOpenOptions options;
  g_autofree float *big = g_new0 (float, 64 * 64 * 3);

  tomo_open_options_init (&options);
  options.already_sinogram = TRUE;

  /* A multi-page file whose pages differ in size. */
  {
    g_autofree char *path = fpath (f, "mixed.tif");
    TIFF *tif;

    write_tiff (path, big, 2, 8, 8, TOMO_DTYPE_UINT16, FALSE);
    tif = TIFFOpen (path, "a");
    TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 9);
    TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 8);
    TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 16);
    TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    for (guint y = 0; y < 8; y++)
      TIFFWriteScanline (tif, big, y, 0);
    TIFFClose (tif);

    assert_open_fails (path, &options, TOMO_IO_ERROR_SHAPE, path, "page 2");

    TOMO_TEST_ASSERT_FAILS (tomo_tiff_read_float (path, NULL, NULL, NULL, &error),
                            error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE);
  }

  /* Flats of another size than the projections. */
  {
    g_autofree char *proj = fpath (f, "p.tif");
    g_autofree char *flat = fpath (f, "f.tif");
    TomoOpenOptions o2;

    write_tiff (proj, big, 3, 16, 8, TOMO_DTYPE_UINT16, FALSE);
    write_tiff (flat, big, 1, 8, 16, TOMO_DTYPE_UINT16, FALSE);
    tomo_open_options_init (&o2);
    o2.flats = flat;
    assert_open_fails (proj, &o2, TOMO_IO_ERROR_SHAPE, flat, "8 × 16");
  }

  /* A folder where a middle file has another size: found when read. */
  {
    g_autofree char *dir = fpath (f, "uneven");
    g_mkdir (dir, 0700);
    for (guint i = 0; i < 3; i++)
      {
        g_autofree char *name = g_strdup_printf ("%s/img%u.tif", dir, i);
        write_tiff (name, big, 1, i == 1 ? 12 : 16, 8, TOMO_DTYPE_FLOAT32, FALSE);
      }
    scan = tomo_scan_open (dir, &options, &error);
    g_assert_no_error (error);
    {
      g_autofree float *row = g_new (float, 3 * 16);
      g_assert_false (tomo_scan_read_sinogram (scan, 0, row, NULL, &error));
      g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE);
      assert_error_mentions (error, "img1.tif", "12 × 8");
      g_clear_error (&error);
    }
    g_clear_object (&scan);
  }

  /* Truncated in the middle of the image data: a lone file cannot even be
   * opened (its directory is gone); a middle file of a folder fails when
   * read, naming the file. */
  {
    g_autofree char *dir = fpath (f, "cut");
    g_autofree char *cut_name = NULL;
    g_autofree char *contents = NULL;
    gsize length;

    g_mkdir (dir, 0700);
    for (guint i = 0; i < 3; i++)
      {
        g_autofree char *name = g_strdup_printf ("%s/img%u.tif", dir, i);
        write_tiff (name, big, 1, 64, 64, TOMO_DTYPE_FLOAT32, FALSE);
      }
    cut_name = g_strdup_printf ("%s/img1.tif", dir);
    g_assert_true (g_file_get_contents (cut_name, &contents, &length, NULL));
    g_assert_true (g_file_set_contents (cut_name, contents, length / 2, NULL));

    g_assert_null (tomo_scan_open (cut_name, &options, &error));
    g_assert_nonnull (error);
    assert_error_mentions (error, cut_name, NULL);
    g_clear_error (&error);

    scan = tomo_scan_open (dir, &options, &error);
    g_assert_no_error (error);
    {
      g_autofree float *row = g_new (float, 3 * 64);
      g_assert_false (tomo_scan_read_sinogram (scan, 40, row, NULL, &error));
      g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ);
      assert_error_mentions (error, "img1.tif", NULL);
      g_clear_error (&error);
    }
    g_clear_object (&scan);
  }

  /* Directory first, pixels cut in the middle: opens, the first rows read,
   * the lost rows give an error naming the file. */
  {
    g_autofree char *path = fpath (f, "camera.tif");
    const guint w = 100, h = 100;
    guint16 expect;
    g_autofree float *row = NULL;

    write_tiff_ifd_first (path, w, h, 8 + 2 + 9 * 12 + 4 + w * h);   /* half the pixels */
    scan = tomo_scan_open (path, &options, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (tomo_scan_get_width (scan), ==, w);
    row = g_new (float, w);
    g_assert_true (tomo_scan_read_raw_sinogram (scan, 3, row, &error));
    g_assert_no_error (error);
    expect = 3 * w + 7;
    g_assert_cmpfloat (row[7], ==, expect);
    g_assert_false (tomo_scan_read_sinogram (scan, h - 1, row, NULL, &error));
    g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ);
    assert_error_mentions (error, path, "row 99");
    g_clear_error (&error);
    g_clear_object (&scan);
  }

  /* An RGB image. */
  {
    g_autofree char *path = fpath (f, "rgb.tif");
    TIFF *tif = TIFFOpen (path, "w");
    guint8 line[3 * 4] = { 0, };

    TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, 4);
    TIFFSetField (tif, TIFFTAG_IMAGELENGTH, 2);
    TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 8);
    TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 3);
    TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
    TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFWriteScanline (tif, line, 0, 0);
    TIFFWriteScanline (tif, line, 1, 0);
    TIFFClose (tif);
    assert_open_fails (path, &options, TOMO_IO_ERROR_FORMAT, path, "samples per pixel");
  }

  /* An empty folder. */
  {
    g_autofree char *dir = fpath (f, "empty");
    g_mkdir (dir, 0700);
    assert_open_fails (dir, &options, TOMO_IO_ERROR_NOT_FOUND, dir, NULL);
  }
}

/* ------------------------------------------------------------------ */
/* raw                                                                 */

/* Value i of the typed raw file of test_raw(). */
static double
typed_value (TomoDType dtype,
             guint     i)
{
  return dtype == TOMO_DTYPE_UINT8 ? i % 250 : dtype == TOMO_DTYPE_UINT32 ? 100000.0 + i : i * 0.5 - 3.0;
}

static void
test_raw (Fixture *f, gconstpointer data)
{
  const guint w = 7, h = 3, n = 4, header = 13;
  g_autoptr(GError) error = NULL;
  TomoOpenOptions raw, options;

  /* What every file below shares: w × h × n values. */
  tomo_open_options_init (&raw);
  raw.format = TOMO_SCAN_FORMAT_RAW;
  raw.raw_width = w;
  raw.raw_height = h;
  raw.raw_n_projections = n;

  for (guint big = 0; big < 2; big++)
    {
      g_autofree char *path = fpath (f, big ? "be.raw" : "le.raw");
      gsize size = header + (gsize) w * h * n * 2;
      g_autofree guint8 *bytes = g_malloc0 (size);
      g_autoptr(TomoScan) scan = NULL;
      g_autofree float *row = g_new (float, n * w);

      for (guint i = 0; i < w * h * n; i++)
        {
          guint16 v = 1000 + 3 * i;
          bytes[header + 2 * i + (big ? 0 : 1)] = v >> 8;
          bytes[header + 2 * i + (big ? 1 : 0)] = v & 0xff;
        }
      g_assert_true (g_file_set_contents (path, (char *) bytes, size, NULL));

      options = raw;
      options.raw_dtype = TOMO_DTYPE_UINT16;
      options.raw_offset = header;
      options.raw_big_endian = big;

      /* Raw files carry no flats. */
      assert_open_fails (path, &options, TOMO_IO_ERROR_MISSING_DATASET, path, "--already-sinogram");

      options.already_sinogram = TRUE;
      options.already_linear = TRUE;
      scan = tomo_scan_open (path, &options, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (tomo_scan_get_width (scan), ==, w);
      g_assert_cmpuint (tomo_scan_get_n_projections (scan), ==, n);
      g_assert_cmpstr (tomo_scan_get_format_name (scan), ==, "raw");
      g_assert_true (tomo_scan_read_sinogram (scan, 2, row, NULL, &error));
      g_assert_no_error (error);
      for (guint p = 0; p < n; p++)
        for (guint x = 0; x < w; x++)
          g_assert_cmpfloat (row[p * w + x], ==, 1000 + 3 * ((p * h + 2) * w + x));

      /* One byte too many: the dimensions are wrong. */
      g_clear_object (&scan);
      options.raw_offset = header - 1;
      assert_open_fails (path, &options, TOMO_IO_ERROR_SHAPE, path, "bytes");
    }

  /* float64 big-endian, float32 and uint32 conversions. */
  {
    const TomoDType dtypes[] = { TOMO_DTYPE_UINT8, TOMO_DTYPE_UINT32, TOMO_DTYPE_FLOAT32, TOMO_DTYPE_FLOAT64 };
    for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
      {
        g_autofree char *path = fpath (f, "typed.raw");
        gsize elem = _tomo_dtype_size (dtypes[d]);
        gsize size = (gsize) w * h * n * elem;
        g_autofree guint8 *bytes = g_malloc0 (size);
        g_autoptr(TomoScan) scan = NULL;
        g_autofree float *row = g_new (float, n * w);

        for (guint i = 0; i < w * h * n; i++)
          {
            double v = typed_value (dtypes[d], i);
            guint8 tmp[8];
            guint8 *dst = bytes + i * elem;

            switch (dtypes[d])
              {
              case TOMO_DTYPE_UINT8: tmp[0] = v; break;
              case TOMO_DTYPE_UINT32: { guint32 u = v; memcpy (tmp, &u, 4); } break;
              case TOMO_DTYPE_FLOAT32: { float x = v; memcpy (tmp, &x, 4); } break;
              default: memcpy (tmp, &v, 8); break;
              }
            /* Store big-endian. */
            for (gsize b = 0; b < elem; b++)
              dst[b] = G_BYTE_ORDER == G_LITTLE_ENDIAN ? tmp[elem - 1 - b] : tmp[b];
          }
        g_assert_true (g_file_set_contents (path, (char *) bytes, size, NULL));

        options = raw;
        options.raw_dtype = dtypes[d];
        options.raw_big_endian = TRUE;
        options.already_sinogram = TRUE;
        scan = tomo_scan_open (path, &options, &error);
        g_assert_no_error (error);
        g_assert_true (tomo_scan_read_raw_sinogram (scan, 1, row, &error));
        for (guint p = 0; p < n; p++)
          for (guint x = 0; x < w; x++)
            g_assert_cmpfloat (row[p * w + x], ==, (float) typed_value (dtypes[d], (p * h + 1) * w + x));
      }
  }
}

/* ------------------------------------------------------------------ */
/* TIFF writer                                                         */

static void
test_writer_roundtrip (Fixture *f, gconstpointer data)
{
  const guint w = 300, h = 250, n = 3;   /* several strips per page */
  g_autofree char *path = fpath (f, "out.tif");
  g_autofree float *pages = g_new (float, n * w * h);
  g_autofree float *back = NULL;
  g_autoptr(GError) error = NULL;
  guint bw = 0, bh = 0, bn = 0;
  TIFF *tif;
  guint16 fmt = 0, bps = 0;

  for (guint i = 0; i < n * w * h; i++)
    pages[i] = sinf (i * 0.001f) * 1e3f - 0.125f * (i % 7);

  g_assert_true (tomo_tiff_write_float (path, pages, w, h, n, &error));
  g_assert_no_error (error);

  back = tomo_tiff_read_float (path, &bw, &bh, &bn, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (bw, ==, w);
  g_assert_cmpuint (bh, ==, h);
  g_assert_cmpuint (bn, ==, n);
  g_assert_cmpmem (back, n * w * h * sizeof (float), pages, n * w * h * sizeof (float));

  tif = TIFFOpen (path, "r");
  TIFFGetField (tif, TIFFTAG_SAMPLEFORMAT, &fmt);
  TIFFGetField (tif, TIFFTAG_BITSPERSAMPLE, &bps);
  g_assert_cmpuint (fmt, ==, SAMPLEFORMAT_IEEEFP);
  g_assert_cmpuint (bps, ==, 32);
  g_assert_false (TIFFIsBigTIFF (tif));
  g_assert_false (TIFFIsTiled (tif));
  g_assert_cmpuint (TIFFNumberOfStrips (tif), >, 1);
  TIFFClose (tif);

  /* The written stack opens as a scan. */
  {
    TomoOpenOptions options;
    g_autoptr(TomoScan) scan = NULL;
    g_autofree float *row = g_new (float, n * w);

    tomo_open_options_init (&options);
    options.already_sinogram = TRUE;
    options.already_linear = TRUE;
    scan = tomo_scan_open (path, &options, &error);
    g_assert_no_error (error);
    g_assert_true (tomo_scan_read_sinogram (scan, 123, row, NULL, &error));
    for (guint p = 0; p < n; p++)
      g_assert_cmpmem (row + p * w, w * sizeof (float),
                       pages + ((gsize) p * h + 123) * w, w * sizeof (float));
  }
}

static void
test_writer_bigtiff (Fixture *f, gconstpointer data)
{
  g_autofree char *path = fpath (f, "big.tif");
  g_autoptr(GError) error = NULL;
  TomoTiffWriter *writer;
  const float page[4] = { 1, 2, 3, 4 };
  g_autofree char *contents = NULL;
  g_autofree float *back = NULL;
  guint n = 0;

  /* The expected size decides the container, before any page is written. */
  writer = tomo_tiff_writer_new (path, (guint64) 3 << 30, &error);
  g_assert_no_error (error);
  g_assert_true (tomo_tiff_writer_add_page (writer, page, 2, 2, &error));
  g_assert_true (tomo_tiff_writer_add_page (writer, page, 2, 2, &error));
  g_assert_true (tomo_tiff_writer_close (writer, &error));
  g_assert_no_error (error);

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  g_assert_cmpint (contents[2] | contents[3], ==, 43);   /* BigTIFF magic */
  back = tomo_tiff_read_float (path, NULL, NULL, &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 2);
  g_assert_cmpmem (back + 4, sizeof page, page, sizeof page);
}

static void
test_writer_errors (Fixture *f, gconstpointer data)
{
  g_autofree char *bad = fpath (f, "no/such/dir/out.tif");
  g_autofree char *missing = fpath (f, "missing.tif");
  g_autoptr(GError) error = NULL;
  const float v[1] = { 0 };

  g_assert_false (tomo_tiff_write_float (bad, v, 1, 1, 1, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  assert_error_mentions (error, bad, NULL);
  g_clear_error (&error);

  TOMO_TEST_ASSERT_FAILS (tomo_tiff_read_float (missing, NULL, NULL, NULL, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND);

  {
    TomoTiffWriter *writer = tomo_tiff_writer_new (missing, 0, &error);
    g_assert_no_error (error);
    g_assert_false (tomo_tiff_writer_add_page (writer, v, 0, 1, &error));
    g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
    tomo_tiff_writer_close (writer, NULL);
  }
}

static void
test_names (void)
{
  g_autoptr(GError) error = NULL;
  TomoScanFormat format;
  TomoDType dtype;

  g_assert_true (tomo_scan_format_from_string ("nxtomo", &format, &error));
  g_assert_cmpint (format, ==, TOMO_SCAN_FORMAT_NXTOMO);
  g_assert_true (tomo_scan_format_from_string ("RAW", &format, &error));
  g_assert_cmpint (format, ==, TOMO_SCAN_FORMAT_RAW);
  g_assert_false (tomo_scan_format_from_string ("jpeg", &format, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT);
  assert_error_mentions (error, "jpeg", NULL);
  g_clear_error (&error);

  for (TomoDType d = TOMO_DTYPE_UINT8; d <= TOMO_DTYPE_FLOAT64; d++)
    {
      g_assert_true (tomo_dtype_from_string (tomo_dtype_to_string (d), &dtype, &error));
      g_assert_cmpint (dtype, ==, d);
    }
  g_assert_false (tomo_dtype_from_string ("int7", &dtype, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT);
  assert_error_mentions (error, "int7", NULL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func, data) \
  g_test_add (path, Fixture, data, fixture_setup, func, fixture_teardown)

  ADD ("/tomo/io/hdf5/dxchange", test_dxchange, NULL);
  ADD ("/tomo/io/hdf5/dxchange-chunked-f64be", test_dxchange_chunked, NULL);
  ADD ("/tomo/io/hdf5/dxchange-uint16", test_dxchange_uint16, NULL);
  ADD ("/tomo/io/hdf5/dxchange-no-theta", test_dxchange_no_theta, NULL);
  ADD ("/tomo/io/hdf5/nxtomo", test_nxtomo, GINT_TO_POINTER (TRUE));
  ADD ("/tomo/io/hdf5/nxtomo-no-definition", test_nxtomo, GINT_TO_POINTER (FALSE));
  ADD ("/tomo/io/hdf5/nxtomo-no-image-key", test_nxtomo_no_key, NULL);
  ADD ("/tomo/io/hdf5/bad-input", test_hdf5_bad, NULL);
  ADD ("/tomo/io/hdf5/nan-inf", test_nan, NULL);
  ADD ("/tomo/io/hdf5/already-linear-attribute", test_already_linear_attribute, NULL);
  ADD ("/tomo/io/hdf5/flats-equal-darks", test_flats_equal_darks, NULL);
  ADD ("/tomo/io/hdf5/dead-pixel", test_dead_pixel, NULL);
  ADD ("/tomo/io/hdf5/open-speed", test_open_speed, NULL);
  ADD ("/tomo/io/scan/row-range", test_row_range, NULL);
  ADD ("/tomo/io/scan/cache", test_cache, NULL);
  ADD ("/tomo/io/scan/cache-join", test_cache_join, NULL);
  ADD ("/tomo/io/scan/cache-invalidate-in-flight", test_cache_invalidate_in_flight, NULL);
  ADD ("/tomo/io/scan/missing-or-unknown", test_missing_and_unknown, NULL);
  ADD ("/tomo/io/tiff/folder", test_tiff_folder, NULL);
  ADD ("/tomo/io/tiff/folder-chunks", test_tiff_folder_chunks, NULL);
  ADD ("/tomo/io/tiff/dtypes", test_tiff_dtypes, NULL);
  ADD ("/tomo/io/tiff/bad-input", test_tiff_bad, NULL);
  ADD ("/tomo/io/raw/endianness-and-dtypes", test_raw, NULL);
  ADD ("/tomo/io/tiff-writer/roundtrip", test_writer_roundtrip, NULL);
  ADD ("/tomo/io/tiff-writer/bigtiff", test_writer_bigtiff, NULL);
  ADD ("/tomo/io/tiff-writer/errors", test_writer_errors, NULL);
  g_test_add_func ("/tomo/io/names", test_names);

  return g_test_run ();
}
