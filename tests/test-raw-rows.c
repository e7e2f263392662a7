/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The raw row cache of the viewer's device path (app/io/tomo-raw-rows.h)
 * on real HDF5 files: a miss reads the slab of rows a chunk spans in one
 * read and each row equals tomo_scan_read_raw_row() bit for bit (flat,
 * dark and their counts included); neighbours are then served without
 * touching the file; the byte limit evicts; the scrub prefetcher fills it;
 * a row out of range and a file cut short after opening give clear errors.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tomo-error.h"
#include "tomo-raw-rows.h"
#include "tomo-scan-private.h"
#include "tomo-scrub-prefetch.h"
#include "tomo-test-util.h"

#define W 96
#define H 12
#define N 40

/* A Data Exchange file: uint16 counts chunked `chunk_rows` detector rows
 * high (0: contiguous), 3 flats, 2 darks, dead pixels (counts below the
 * dark, a column whose flat equals its dark). */
static char *
write_scan (const char *dir,
            guint       chunk_rows,
            gboolean    as_float)
{
  char *path = g_build_filename (dir, as_float ? "float.h5" : "counts.h5", NULL);
  g_autofree guint16 *data = g_new (guint16, (gsize) N * H * W);
  g_autofree guint16 *flat = g_new (guint16, (gsize) 3 * H * W);
  g_autofree guint16 *dark = g_new (guint16, (gsize) 2 * H * W);
  g_autofree float *data_f = g_new (float, (gsize) N * H * W);
  hsize_t dims[3] = { N, H, W }, fdims[3] = { 3, H, W }, ddims[3] = { 2, H, W };
  hsize_t chunk[3] = { N, chunk_rows, W };
  GRand *rand = g_rand_new_with_seed (7);
  hid_t file;

  for (gsize i = 0; i < (gsize) 3 * H * W; i++)
    flat[i] = 40000 + g_rand_int_range (rand, 0, 500);
  for (gsize i = 0; i < (gsize) 2 * H * W; i++)
    dark[i] = 100 + g_rand_int_range (rand, 0, 10);
  for (guint f = 0; f < 3; f++)
    for (guint y = 0; y < H; y++)
      flat[((gsize) f * H + y) * W + 5] = 100 + (f < 2 ? 0 : 0); /* ≈ dark: clamped */
  for (gsize i = 0; i < (gsize) N * H * W; i++)
    {
      data[i] = g_rand_int_range (rand, 0, 61) == 0 ? 3 : 2000 + g_rand_int_range (rand, 0, 30000);
      data_f[i] = data[i];
    }
  g_rand_free (rand);

  file = H5Fcreate (path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  g_assert_cmpint (file, >=, 0);
  if (as_float)
    tomo_test_h5_write (file, "/exchange/data", H5T_IEEE_F32LE, 3, dims,
                        chunk_rows ? chunk : NULL, H5T_NATIVE_FLOAT, data_f);
  else
    tomo_test_h5_write (file, "/exchange/data", H5T_STD_U16LE, 3, dims,
                        chunk_rows ? chunk : NULL, H5T_NATIVE_UINT16, data);
  tomo_test_h5_write (file, "/exchange/data_white", H5T_STD_U16LE, 3, fdims, NULL,
                      H5T_NATIVE_UINT16, flat);
  tomo_test_h5_write (file, "/exchange/data_dark", H5T_STD_U16LE, 3, ddims, NULL,
                      H5T_NATIVE_UINT16, dark);
  H5Fclose (file);
  return path;
}

typedef struct
{
  char *dir;
  char *path;
  TomoScan *scan;   /* the file at path, opened with the default options */
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  f->dir = tomo_test_make_tmp_dir ("tomo-raw-rows-XXXXXX");
  f->path = write_scan (f->dir, GPOINTER_TO_UINT (data), FALSE);
  f->scan = tomo_test_open_scan (f->path);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_clear_object (&f->scan);
  tomo_test_remove_scan (f->path, f->dir);
}

/* Every row of the cache equals the scan's own raw read, bit for bit. */
static void
assert_row_equals_scan (TomoScan   *reference,
                        TomoRawRow *row)
{
  g_autoptr(GError) error = NULL;
  g_autofree guint16 *raw = g_new (guint16, (gsize) N * W);
  float flat[W], dark[W];
  TomoPreprocessStats stats = { 0 };

  g_assert_true (tomo_scan_read_raw_row (reference, row->row, raw, flat, dark, &stats, &error));
  g_assert_no_error (error);
  g_assert_cmpint (row->dtype, ==, TOMO_DTYPE_UINT16);
  g_assert_cmpuint (row->n_bytes, ==, sizeof (guint16) * N * W);
  g_assert_cmpmem (row->data, row->n_bytes, raw, sizeof (guint16) * N * W);
  g_assert_cmpmem (row->flat, sizeof flat, flat, sizeof flat);
  g_assert_cmpmem (row->dark, sizeof dark, dark, sizeof dark);
  tomo_test_assert_stats_equal (&row->stats, &stats);
}

/* Chunks 4 rows high: a miss on row 5 reads rows 4–7 in one slab; 4, 6
 * and 7 then come from memory, and each equals a per-row read. */
static void
test_slab (Fixture       *f,
           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) reference = tomo_test_open_scan (f->path);
  g_autoptr(TomoRawRows) rows = tomo_raw_rows_new (f->scan, 0);
  guint64 hits, read, slabs;
  guint slab_rows;

  g_assert_cmpuint (_tomo_scan_get_chunk_rows (f->scan), ==, 4);
  tomo_raw_rows_get_sizes (rows, &slab_rows, NULL, NULL);
  g_assert_cmpuint (slab_rows, ==, 4);
  for (guint r = 4; r < 8; r++)
    {
      g_autoptr(TomoRawRow) row = tomo_raw_rows_get (rows, r == 4 ? 5 : r == 5 ? 4 : r, &error);

      g_assert_no_error (error);
      g_assert_nonnull (row);
      assert_row_equals_scan (reference, row);
      /* One slab read, four rows of the file. */
      g_assert_cmpuint (_tomo_scan_get_n_row_reads (f->scan), ==, 4);
    }
  tomo_raw_rows_get_counts (rows, &hits, &read, &slabs);
  g_assert_cmpuint (hits, ==, 3);
  g_assert_cmpuint (read, ==, 4);
  g_assert_cmpuint (slabs, ==, 1);
  g_assert_false (tomo_raw_rows_contains (rows, 3));
  g_assert_false (tomo_raw_rows_contains (rows, 8));

  /* The last slab is cut at the detector's edge (rows 8–11). */
  {
    g_autoptr(TomoRawRow) row = tomo_raw_rows_get (rows, 11, &error);

    g_assert_no_error (error);
    assert_row_equals_scan (reference, row);
    g_assert_true (tomo_raw_rows_contains (rows, 8));
    g_assert_cmpuint (_tomo_scan_get_n_row_reads (f->scan), ==, 8);
  }
}

/* Contiguous data: slabs of one row; float32 files keep their type. */
static void
test_contiguous_float (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = tomo_test_make_tmp_dir ("tomo-raw-rows-XXXXXX");
  g_autofree char *path = write_scan (dir, 0, TRUE);
  g_autoptr(TomoScan) scan = tomo_test_open_scan (path);
  g_autoptr(TomoRawRows) rows = tomo_raw_rows_new (scan, 0);
  g_autoptr(TomoRawRow) row = NULL;
  g_autofree float *raw = g_new (float, (gsize) N * W);
  float flat[W], dark[W];
  guint slab_rows;

  g_assert_cmpuint (_tomo_scan_get_chunk_rows (scan), ==, 0);
  tomo_raw_rows_get_sizes (rows, &slab_rows, NULL, NULL);
  g_assert_cmpuint (slab_rows, ==, 1);
  row = tomo_raw_rows_get (rows, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpint (row->dtype, ==, TOMO_DTYPE_FLOAT32);
  g_assert_true (tomo_scan_read_raw_row (scan, 2, raw, flat, dark, NULL, &error));
  g_assert_cmpmem (row->data, row->n_bytes, raw, sizeof (float) * N * W);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), ==, 2);
  g_unlink (path);
  g_rmdir (dir);
}

/* Room for 5 rows: slabs of 1 (a quarter of the cache is one row), the
 * least recently used row leaves first. */
static void
test_limit (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoRawRows) rows = tomo_raw_rows_new (f->scan, 5 * sizeof (guint16) * N * W);
  guint slab_rows;

  tomo_raw_rows_get_sizes (rows, &slab_rows, NULL, NULL);
  g_assert_cmpuint (slab_rows, ==, 1);
  for (guint r = 0; r < 6; r++)
    {
      g_autoptr(TomoRawRow) row = tomo_raw_rows_get (rows, r, &error);

      g_assert_no_error (error);
      if (r == 4)
        {
          /* Row 0 used again: row 1 becomes the oldest. */
          g_autoptr(TomoRawRow) again = tomo_raw_rows_get (rows, 0, &error);
          g_assert_nonnull (again);
        }
    }
  g_assert_true (tomo_raw_rows_contains (rows, 0));
  g_assert_false (tomo_raw_rows_contains (rows, 1));
  for (guint r = 2; r < 6; r++)
    g_assert_true (tomo_raw_rows_contains (rows, r));
}

/* The scrub prefetcher fills the raw cache: 4 rows ahead of row 1 (2–5),
 * 2 behind (only 0), nearest first; rows already there are not read. */
static void
test_prefetch (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoRawRows) rows = tomo_raw_rows_new (f->scan, 0);
  TomoScrubPrefetch *prefetch = tomo_scrub_prefetch_new ();
  g_autoptr(TomoRawRow) row = tomo_raw_rows_get (rows, 1, &error);

  g_assert_no_error (error);
  tomo_scrub_prefetch_aim_raw (prefetch, rows, 1, +1, 4, 2);
  tomo_scrub_prefetch_wait_idle (prefetch);
  g_assert_cmpuint (tomo_scrub_prefetch_get_n_read (prefetch), ==, 5);
  for (guint r = 0; r <= 5; r++)
    g_assert_true (tomo_raw_rows_contains (rows, r));
  g_assert_false (tomo_raw_rows_contains (rows, 6));
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (f->scan), ==, 6);
  /* One row further: rows held are passed over, not a reason to stop;
   * only row 6 is new. */
  tomo_scrub_prefetch_aim_raw (prefetch, rows, 2, +1, 4, 2);
  tomo_scrub_prefetch_wait_idle (prefetch);
  g_assert_cmpuint (tomo_scrub_prefetch_get_n_read (prefetch), ==, 6);
  g_assert_true (tomo_raw_rows_contains (rows, 6));
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (f->scan), ==, 7);
  tomo_scrub_prefetch_free (prefetch);
}

/* A row out of range, and a file cut short after it was opened: errors
 * that name the file and row; rows already read are still served. */
static void
test_errors (Fixture       *f,
             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoRawRows) rows = tomo_raw_rows_new (f->scan, 0);
  g_autoptr(TomoRawRow) kept = NULL;
  TomoRawRow *row;

  row = tomo_raw_rows_get (rows, H, &error);
  g_assert_null (row);
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE);
  g_assert_nonnull (strstr (error->message, "row 12 is out of range"));
  g_assert_nonnull (strstr (error->message, f->path));
  g_clear_error (&error);

  kept = tomo_raw_rows_get (rows, 0, &error);
  g_assert_no_error (error);
  /* Cut the file to its first 4 KiB: the data chunks are gone. */
  g_assert_cmpint (truncate (f->path, 4096), ==, 0);
  row = tomo_raw_rows_get (rows, 9, &error);
  g_assert_null (row);
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ);
  g_assert_nonnull (strstr (error->message, f->path));
  g_assert_nonnull (strstr (error->message, "cut short"));
  g_clear_error (&error);
  g_assert_false (tomo_raw_rows_contains (rows, 9));
  /* A later request for it fails again, the same way, without a hang. */
  row = tomo_raw_rows_get (rows, 9, &error);
  g_assert_null (row);
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ);
  g_clear_error (&error);
  {
    g_autoptr(TomoRawRow) again = tomo_raw_rows_get (rows, 0, &error);

    g_assert_no_error (error);
    g_assert_true (again == kept);
  }
  /* Gone altogether. */
  g_assert_cmpint (g_unlink (f->path), ==, 0);
  row = tomo_raw_rows_get (rows, 10, &error);
  g_assert_null (row);
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ);
  g_assert_nonnull (strstr (error->message, "is gone"));
  g_clear_error (&error);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/tomo/raw-rows/slab", Fixture, GUINT_TO_POINTER (4), fixture_set_up, test_slab,
              fixture_tear_down);
  g_test_add_func ("/tomo/raw-rows/contiguous-float", test_contiguous_float);
  g_test_add ("/tomo/raw-rows/limit", Fixture, GUINT_TO_POINTER (1), fixture_set_up, test_limit,
              fixture_tear_down);
  g_test_add ("/tomo/raw-rows/prefetch", Fixture, GUINT_TO_POINTER (1), fixture_set_up,
              test_prefetch, fixture_tear_down);
  g_test_add ("/tomo/raw-rows/errors", Fixture, GUINT_TO_POINTER (1), fixture_set_up,
              test_errors, fixture_tear_down);
  return g_test_run ();
}
