/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Raw rows read straight from the file (pread at the chunks' addresses, no
 * HDF5 lock) equal HDF5's own hyperslab reads value for value, for every
 * layout the direct path takes (chunks of one row, of several rows and
 * partial columns with edge chunks, contiguous; uint16 and float32), and
 * the layouts it must leave to HDF5 (compressed, chunks never written) still
 * read right; many threads reading at once get the same rows. */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <hdf5.h>

#include "tomo-scan.h"
#include "tomo-scan-private.h"
#include "tomo-test-util.h"

#define N_PROJ 37
#define HEIGHT 9
#define WIDTH 50

static char *tmp_dir;

typedef struct
{
  const char *name;
  gboolean float32;
  gboolean chunked;
  hsize_t chunk[3];
  gboolean deflate;
  gboolean sparse;  /* one projection block never written */
  gboolean direct;  /* read without HDF5 */
} Layout;

static void
write_scan (const char   *path,
            const Layout *l,
            void         *values)
{
  hsize_t dims[3] = { N_PROJ, HEIGHT, WIDTH };
  hsize_t fdims[3] = { 2, HEIGHT, WIDTH };
  hid_t file = H5Fcreate (path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t group = H5Gcreate2 (file, "/exchange", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t space = H5Screate_simple (3, dims, NULL);
  hid_t dcpl = H5Pcreate (H5P_DATASET_CREATE);
  hid_t type = l->float32 ? H5T_IEEE_F32LE : H5T_STD_U16LE;
  hid_t mem = l->float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT16;
  hid_t dset;
  g_autofree guint16 *frames = g_new (guint16, 2 * HEIGHT * WIDTH);

  if (l->chunked)
    H5Pset_chunk (dcpl, 3, l->chunk);
  if (l->deflate)
    H5Pset_deflate (dcpl, 1);
  dset = H5Dcreate2 (file, "/exchange/data", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  g_assert_cmpint (dset, >=, 0);
  if (l->sparse)
    {
      /* Projections from the second chunk on: the first chunk row block
       * stays unwritten (the fill value, 0). */
      hsize_t start[3] = { l->chunk[0], 0, 0 }, count[3] = { N_PROJ - l->chunk[0], HEIGHT, WIDTH };
      hid_t ms = H5Screate_simple (3, count, NULL);
      gsize elt = l->float32 ? 4 : 2;
      hid_t fs = H5Dget_space (dset);

      H5Sselect_hyperslab (fs, H5S_SELECT_SET, start, NULL, count, NULL);
      g_assert_cmpint (H5Dwrite (dset, mem, ms, fs, H5P_DEFAULT,
                                 (char *) values + l->chunk[0] * HEIGHT * WIDTH * elt), >=, 0);
      memset (values, 0, l->chunk[0] * HEIGHT * WIDTH * elt);
      H5Sclose (fs);
      H5Sclose (ms);
    }
  else
    g_assert_cmpint (H5Dwrite (dset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), >=, 0);
  H5Dclose (dset);
  /* Two flats and two darks. */
  for (guint k = 0; k < 2; k++)
    {
      for (guint i = 0; i < 2 * HEIGHT * WIDTH; i++)
        frames[i] = k == 0 ? 1000 + i % 7 : 10 + i % 3;
      tomo_test_h5_write (file, k == 0 ? "/exchange/data_white" : "/exchange/data_dark",
                          H5T_STD_U16LE, 3, fdims, NULL, H5T_NATIVE_UINT16, frames);
    }
  H5Pclose (dcpl);
  H5Sclose (space);
  H5Gclose (group);
  H5Fclose (file);
}

typedef struct
{
  TomoScan *scan;
  const char *values;
  gsize elt;
  gint n_bad;
} Readers;

/* Every row of the scan against the values written. */
static void
read_all (gpointer data,
          gpointer user_data)
{
  Readers *r = user_data;
  gsize row_bytes = (gsize) N_PROJ * WIDTH * r->elt;
  g_autofree char *out = g_malloc (row_bytes);
  float flat[WIDTH], dark[WIDTH];

  for (guint row = 0; row < HEIGHT; row++)
    {
      g_autoptr(GError) error = NULL;
      guint bad = 0;

      if (!tomo_scan_read_raw_row (r->scan, row, out, flat, dark, NULL, &error))
        {
          g_printerr ("row %u: %s\n", row, error->message);
          g_atomic_int_inc (&r->n_bad);
          continue;
        }
      for (guint p = 0; p < N_PROJ; p++)
        bad += memcmp (out + (gsize) p * WIDTH * r->elt,
                       r->values + (((gsize) p * HEIGHT + row) * WIDTH) * r->elt,
                       WIDTH * r->elt) != 0;
      if (bad > 0)
        g_atomic_int_inc (&r->n_bad);
    }
}

static void
test_layouts (void)
{
  const Layout layouts[] = {
    { "rows of many projections (the phantom's)", FALSE, TRUE, { 8, 1, WIDTH }, FALSE, FALSE, TRUE },
    { "several rows, partial columns, edge chunks", FALSE, TRUE, { 5, 4, 16 }, FALSE, FALSE, TRUE },
    { "float32, one chunk", TRUE, TRUE, { N_PROJ, HEIGHT, WIDTH }, FALSE, FALSE, TRUE },
    { "contiguous uint16", FALSE, FALSE, { 0 }, FALSE, FALSE, TRUE },
    { "contiguous float32", TRUE, FALSE, { 0 }, FALSE, FALSE, TRUE },
    { "compressed (through HDF5)", FALSE, TRUE, { 8, 1, WIDTH }, TRUE, FALSE, FALSE },
    { "a chunk never written (through HDF5)", FALSE, TRUE, { 8, 3, WIDTH }, FALSE, TRUE, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++)
    {
      const Layout *l = &layouts[i];
      g_autofree char *path = g_build_filename (tmp_dir, "direct.h5", NULL);
      gsize elt = l->float32 ? 4 : 2;
      gsize n = (gsize) N_PROJ * HEIGHT * WIDTH;
      g_autofree char *values = g_malloc (n * elt);
      g_autoptr(TomoScan) scan = NULL;
      Readers r = { 0 };
      GThreadPool *pool;

      g_test_message ("%s", l->name);
      for (gsize k = 0; k < n; k++)
        {
          if (l->float32)
            ((float *) values)[k] = 1.0f + (float) ((k * 2654435761u) % 100003) / 7.0f;
          else
            ((guint16 *) values)[k] = (guint16) (1 + (k * 2654435761u) % 65531);
        }
      write_scan (path, l, values);
      scan = tomo_test_open_scan (path);
      g_assert_cmpint (tomo_scan_get_raw_dtype (scan), ==,
                       l->float32 ? TOMO_DTYPE_FLOAT32 : TOMO_DTYPE_UINT16);
      r.scan = scan;
      r.values = values;
      r.elt = elt;
      read_all (NULL, &r);
      g_assert_cmpint (r.n_bad, ==, 0);
      /* Eight threads at once, each every row. */
      pool = g_thread_pool_new (read_all, &r, 8, TRUE, NULL);
      for (guint t = 0; t < 8; t++)
        g_thread_pool_push (pool, GUINT_TO_POINTER (t + 1), NULL);
      g_thread_pool_free (pool, FALSE, TRUE);
      g_assert_cmpint (r.n_bad, ==, 0);
      /* The path the layout should take was taken (the sparse file: only
       * its rows whose chunks are all written go direct — none here, as
       * every row crosses the unwritten block). */
      g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), ==, 9 * HEIGHT);
      g_assert_cmpuint (_tomo_scan_get_n_direct_reads (scan), ==, l->direct ? 9 * HEIGHT : 0);
      g_clear_object (&scan);
      g_assert_cmpint (g_remove (path), ==, 0);
    }
}

/* The file cut short inside its data: an error naming the file and the
 * row, not a crash or stale values. */
static void
test_truncated (void)
{
  const Layout l = { "contiguous", FALSE, FALSE, { 0 }, FALSE, FALSE, TRUE };
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (tmp_dir, "cut.h5", NULL);
  g_autofree guint16 *values = g_new0 (guint16, N_PROJ * HEIGHT * WIDTH);
  g_autoptr(TomoScan) scan = NULL;
  g_autofree guint16 *out = g_new (guint16, N_PROJ * WIDTH);
  float flat[WIDTH], dark[WIDTH];
  hid_t file, dset;
  haddr_t at;

  for (guint k = 0; k < N_PROJ * HEIGHT * WIDTH; k++)
    values[k] = 100 + k % 50;
  write_scan (path, &l, values);
  file = H5Fopen (path, H5F_ACC_RDONLY, H5P_DEFAULT);
  dset = H5Dopen2 (file, "/exchange/data", H5P_DEFAULT);
  at = H5Dget_offset (dset);
  H5Dclose (dset);
  H5Fclose (file);
  g_assert_cmpuint (at, !=, HADDR_UNDEF);
  scan = tomo_test_open_scan (path);
  /* Cut after a third of the data (the metadata before them stays). */
  g_assert_cmpint (truncate (path, at + N_PROJ * HEIGHT * WIDTH * 2 / 3), ==, 0);
  g_assert_false (tomo_scan_read_raw_row (scan, HEIGHT - 1, out, flat, dark, NULL, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "row 8"));
  g_assert_nonnull (strstr (error->message, "ends inside"));
  g_clear_object (&scan);
  g_remove (path);
}

/* /exchange/data an external link to a chunked dataset in a file with a
 * user block (the master has none): the chunks' addresses count from the
 * end of that file's user block, so the direct path, which would read
 * them as file offsets (every row wrong, silently), is not taken, and
 * every row reads right through HDF5. */
static void
test_external_userblock (void)
{
  g_autofree char *data_path = g_build_filename (tmp_dir, "ub-data.h5", NULL);
  g_autofree char *master_path = g_build_filename (tmp_dir, "ub-master.h5", NULL);
  hsize_t dims[3] = { N_PROJ, HEIGHT, WIDTH }, fdims[3] = { 2, HEIGHT, WIDTH };
  hsize_t chunk[3] = { 8, 1, WIDTH };
  gsize n = (gsize) N_PROJ * HEIGHT * WIDTH;
  g_autofree guint16 *values = g_new (guint16, n);
  g_autofree guint16 *frames = g_new (guint16, 2 * HEIGHT * WIDTH);
  g_autoptr(TomoScan) scan = NULL;
  Readers r = { 0 };
  hid_t fcpl, file;

  for (gsize k = 0; k < n; k++)
    values[k] = (guint16) (1 + (k * 2654435761u) % 65531);
  fcpl = H5Pcreate (H5P_FILE_CREATE);
  H5Pset_userblock (fcpl, 512);
  file = H5Fcreate (data_path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  H5Pclose (fcpl);
  tomo_test_h5_write (file, "/exchange/data", H5T_STD_U16LE, 3, dims, chunk, H5T_NATIVE_UINT16,
                      values);
  H5Fclose (file);
  file = H5Fcreate (master_path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  for (guint k = 0; k < 2; k++)
    {
      for (guint i = 0; i < 2 * HEIGHT * WIDTH; i++)
        frames[i] = k == 0 ? 1000 + i % 7 : 10 + i % 3;
      tomo_test_h5_write (file, k == 0 ? "/exchange/data_white" : "/exchange/data_dark",
                          H5T_STD_U16LE, 3, fdims, NULL, H5T_NATIVE_UINT16, frames);
    }
  g_assert_cmpint (H5Lcreate_external (data_path, "/exchange/data", file, "/exchange/data",
                                       H5P_DEFAULT, H5P_DEFAULT), >=, 0);
  H5Fclose (file);

  scan = tomo_test_open_scan (master_path);
  r.scan = scan;
  r.values = (const char *) values;
  r.elt = 2;
  read_all (NULL, &r);
  g_assert_cmpint (r.n_bad, ==, 0);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), ==, HEIGHT);
  g_assert_cmpuint (_tomo_scan_get_n_direct_reads (scan), ==, 0);
  g_clear_object (&scan);
  g_remove (master_path);
  g_remove (data_path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = tomo_test_make_tmp_dir ("tomo-hdf5-direct-XXXXXX");
  g_test_add_func ("/tomo/hdf5/direct/layouts", test_layouts);
  g_test_add_func ("/tomo/hdf5/direct/truncated", test_truncated);
  g_test_add_func ("/tomo/hdf5/direct/external-userblock", test_external_userblock);
  return tomo_test_run_and_remove_tree (tmp_dir);
}
