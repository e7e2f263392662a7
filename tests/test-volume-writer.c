/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The volume writer on its own: slices written in pieces by many threads at
 * known offsets (HDF5 chunks, multi-page TIFF pages) read back through the
 * HDF5 C API and libtiff bit for bit, in any order and for any thread
 * count; the TIFF layout in both classic and BigTIFF form; and the broken
 * cases (a missing slice, a row out of range, an abort) leaving nothing. */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <hdf5.h>
#include <tiffio.h>

#include "tomo-error.h"
#include "tomo-memory.h"
#include "tomo-test-util.h"
#include "tomo-tiff-stack.h"
#include "tomo-tiff-writer.h"
#include "tomo-volume-writer.h"

static char *tmp_dir;

/* Distinct, non-trivial bit patterns (NaN and infinities included: the
 * writer must move bytes, not values). */
static float *
make_volume (guint  width,
             guint  height,
             guint  n_rows,
             guint32 seed)
{
  gsize n = (gsize) width * height * n_rows;
  float *v = g_new (float, n);
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);

  for (gsize i = 0; i < n; i++)
    {
      guint32 bits = g_rand_int (rand);

      memcpy (&v[i], &bits, sizeof bits);
    }
  return v;
}

static char *
read_string_attr (hid_t       dset,
                  const char *name)
{
  hid_t attr = H5Aopen (dset, name, H5P_DEFAULT);
  hid_t type = H5Aget_type (attr);
  gsize size = H5Tget_size (type);
  char *s = g_malloc0 (size + 1);

  g_assert_cmpint (attr, >=, 0);
  g_assert_cmpint (H5Tget_class (type), ==, H5T_STRING);
  g_assert_cmpint (H5Aread (attr, type, s), >=, 0);
  H5Tclose (type);
  H5Aclose (attr);
  return s;
}

static double
read_double_attr (hid_t       dset,
                  const char *name)
{
  hid_t attr = H5Aopen (dset, name, H5P_DEFAULT);
  double v = -1;

  g_assert_cmpint (attr, >=, 0);
  g_assert_cmpint (H5Aread (attr, H5T_NATIVE_DOUBLE, &v), >=, 0);
  H5Aclose (attr);
  return v;
}

/* Reads /exchange/data through the HDF5 C API and checks the attributes. */
static float *
read_hdf5 (const char           *path,
           const TomoVolumeInfo *info)
{
  hid_t file = H5Fopen (path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t dset = H5Dopen2 (file, "/exchange/data", H5P_DEFAULT);
  hid_t space = H5Dget_space (dset);
  hsize_t dims[3];
  float *data;

  g_assert_cmpint (file, >=, 0);
  g_assert_cmpint (dset, >=, 0);
  g_assert_cmpint (H5Sget_simple_extent_dims (space, dims, NULL), ==, 3);
  g_assert_cmpuint (dims[0], ==, info->n_rows);
  g_assert_cmpuint (dims[1], ==, info->height);
  g_assert_cmpuint (dims[2], ==, info->width);
  {
    g_autofree char *source = read_string_attr (dset, "source");
    g_autofree char *filter = read_string_attr (dset, "filter");
    g_autofree char *interp = read_string_attr (dset, "interpolation");
    g_autofree char *backend = read_string_attr (dset, "backend");
    g_autofree char *axes = read_string_attr (dset, "axes");

    g_assert_cmpstr (source, ==, info->source);
    g_assert_cmpstr (filter, ==, info->filter);
    g_assert_cmpstr (interp, ==, info->interp);
    g_assert_cmpstr (backend, ==, info->backend);
    g_assert_cmpstr (axes, ==, "row:y:x");
  }
  g_assert_cmpfloat (read_double_attr (dset, "center"), ==, info->center);
  g_assert_cmpfloat (read_double_attr (dset, "row_start"), ==, info->row_start);
  g_assert_cmpfloat (read_double_attr (dset, "n_projections"), ==, info->n_projections);
  g_assert_cmpfloat (read_double_attr (dset, "pixel_size"), ==, info->pixel_size);
  g_assert_cmpfloat (read_double_attr (dset, "roi_x"), ==, info->roi_x);
  data = g_new (float, (gsize) info->n_rows * info->height * info->width);
  g_assert_cmpint (H5Dread (dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), >=, 0);
  H5Sclose (space);
  H5Dclose (dset);
  H5Fclose (file);
  return data;
}

static float *
read_back (const char           *path,
           TomoVolumeFormat      format,
           const TomoVolumeInfo *info)
{
  g_autoptr(GError) error = NULL;
  gsize plane = (gsize) info->width * info->height;
  guint w = 0, h = 0, n = 0;
  float *data;

  if (format == TOMO_VOLUME_FORMAT_HDF5)
    return read_hdf5 (path, info);
  if (format == TOMO_VOLUME_FORMAT_TIFF_STACK)
    {
      data = tomo_tiff_read_float (path, &w, &h, &n, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (n, ==, info->n_rows);
      g_assert_cmpuint (w, ==, info->width);
      g_assert_cmpuint (h, ==, info->height);
      return data;
    }
  data = g_new (float, plane * info->n_rows);
  for (guint i = 0; i < info->n_rows; i++)
    {
      g_autofree char *name = g_strdup_printf ("slice_%05u.tif", info->row_start + i);
      g_autofree char *file = g_build_filename (path, name, NULL);
      g_autofree float *page = tomo_tiff_read_float (file, &w, &h, &n, &error);

      g_assert_no_error (error);
      g_assert_cmpuint (n, ==, 1);
      memcpy (data + i * plane, page, plane * sizeof (float));
    }
  return data;
}

static void
fill_info (TomoVolumeInfo *info,
           guint           width,
           guint           height,
           guint           n_rows)
{
  *info = (TomoVolumeInfo) {
    .width = width, .height = height, .row_start = 5, .n_rows = n_rows, .roi_x = 3,
    .n_projections = 1234, .center = 345.625, .filter = "shepp-logan", .interp = "linear",
    .backend = "NVIDIA H100", .source = "/data/scan ü.h5", .pixel_size = 6.5e-7,
  };
}

/* Gives `w` every slice of `volume`, in `order` (NULL: row order), each
 * from a buffer that is reused at once, as the pipeline does; finishes and
 * reads `path` back: bit for bit `volume`. */
static void
write_and_compare (TomoVolumeWriter     *w,
                   const char           *path,
                   const TomoVolumeInfo *info,
                   const float          *volume,
                   const guint          *order)
{
  TomoVolumeFormat format = tomo_volume_writer_get_format (w);
  gsize plane = (gsize) info->width * info->height;
  g_autoptr(GError) error = NULL;
  g_autofree float *got = NULL;

  for (guint i = 0; i < info->n_rows; i++)
    {
      guint k = order != NULL ? order[i] : i;
      g_autofree float *slice = g_memdup2 (volume + k * plane, plane * sizeof (float));

      g_assert_true (tomo_volume_writer_add (w, info->row_start + k, slice, &error));
      g_assert_no_error (error);
      if (format != TOMO_VOLUME_FORMAT_TIFF_FOLDER)
        memset (slice, 0xA5, plane * sizeof (float));
    }
  g_assert_true (tomo_volume_writer_finish (w, &error));
  g_assert_no_error (error);
  got = read_back (path, format, info);
  g_assert_cmpmem (got, plane * info->n_rows * sizeof (float), volume,
                   plane * info->n_rows * sizeof (float));
}

/* The ways of writing the one-file formats (info.write_mode). */
static const char *modes[] = { "pwrite", "mmap" };

/* Slices in a shuffled order, by 1, 3 and 8 threads, into every format,
 * in every write mode (pwrite(), the mapped file): the file holds each slice's bytes exactly.  A slice of 700 × 500 floats
 * is 1.4 MB: pieces of 1 MiB, the second short. */
static void
test_bit_equal (void)
{
  TomoVolumeFormat formats[] = { TOMO_VOLUME_FORMAT_HDF5, TOMO_VOLUME_FORMAT_TIFF_STACK,
                                 TOMO_VOLUME_FORMAT_TIFF_FOLDER };
  const char *names[] = { "v.h5", "v.tif", "slices" };
  guint threads[] = { 1, 3, 8 };
  TomoVolumeInfo info;
  g_autofree float *volume = NULL;
  g_autoptr(GRand) rand = g_rand_new_with_seed (3);
  guint order[9];

  fill_info (&info, 700, 500, G_N_ELEMENTS (order));
  volume = make_volume (info.width, info.height, info.n_rows, 17);
  for (guint i = 0; i < info.n_rows; i++)
    order[i] = i;
  for (guint i = info.n_rows - 1; i > 0; i--)
    {
      guint j = g_rand_int_range (rand, 0, i + 1), t = order[i];

      order[i] = order[j];
      order[j] = t;
    }

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
      {
        g_autoptr(GError) error = NULL;
        g_autofree char *path = g_build_filename (tmp_dir, names[f], NULL);
        TomoVolumeWriter *w;

        info.write_mode = modes[m];
        if (formats[f] == TOMO_VOLUME_FORMAT_TIFF_FOLDER)
          g_assert_cmpint (g_mkdir (path, 0700), ==, 0);
        w = tomo_volume_writer_new (path, formats[f], &info, threads[t], &error);
        g_assert_no_error (error);
        g_assert_cmpint (tomo_volume_writer_get_format (w), ==, formats[f]);
        write_and_compare (w, path, &info, volume, order);
        /* Only the output: no temporary left beside it. */
        g_assert_cmpuint (tomo_test_count_entries (tmp_dir), ==, 1);
        tomo_test_remove_tree (path);
        g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
      }
}

/* The multi-page layout on its own, classic and BigTIFF, one strip per
 * page (its offset inline in the directory) and many: pages written in
 * reverse order with pwrite(), read back by libtiff. */
static void
test_tiff_layout (void)
{
  struct { guint width, height, n_pages; gboolean big; } cases[] = {
    { 64, 8, 3, FALSE },    /* one strip per page */
    { 64, 8, 3, TRUE },
    { 300, 211, 4, FALSE }, /* 211 rows in strips of 54 */
    { 300, 211, 4, TRUE },
    { 20000, 3, 2, TRUE },  /* strips of one row */
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *path = g_build_filename (tmp_dir, "layout.tif", NULL);
      TomoTiffStack s;
      gsize plane = (gsize) cases[c].width * cases[c].height;
      g_autofree float *volume = make_volume (cases[c].width, cases[c].height, cases[c].n_pages,
                                              c + 1);
      g_autofree float *got = NULL;
      guint w, h, n;
      int fd;

      tomo_tiff_stack_init (&s, cases[c].width, cases[c].height, cases[c].n_pages);
      g_assert_false (s.big);
      if (cases[c].big)
        {
          /* As above 2 GiB, at a size a test can write. */
          s.big = TRUE;
          s.header_bytes = 16;
        }
      fd = g_open (path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      g_assert_cmpint (fd, >=, 0);
      for (guint p = cases[c].n_pages; p-- > 0;)
        g_assert_true (tomo_pwrite_all (fd, volume + p * plane, plane * sizeof (float),
                                        tomo_tiff_stack_page_offset (&s, p)));
      g_assert_true (tomo_tiff_stack_write_directories (&s, fd, path, &error));
      g_assert_no_error (error);
      g_assert_cmpint (close (fd), ==, 0);
      {
        GStatBuf st;

        g_assert_cmpint (g_stat (path, &st), ==, 0);
        g_assert_cmpuint (st.st_size, ==, tomo_tiff_stack_file_size (&s));
      }
      {
        TIFF *tif = TIFFOpen (path, "r");

        g_assert_nonnull (tif);
        g_assert_cmpint (TIFFIsBigTIFF (tif) != 0, ==, cases[c].big);
        g_assert_cmpint (TIFFNumberOfStrips (tif), ==, s.n_strips);
        TIFFClose (tif);
      }
      got = tomo_tiff_read_float (path, &w, &h, &n, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (w, ==, cases[c].width);
      g_assert_cmpuint (h, ==, cases[c].height);
      g_assert_cmpuint (n, ==, cases[c].n_pages);
      g_assert_cmpmem (got, plane * n * sizeof (float), volume, plane * n * sizeof (float));
      g_assert_cmpint (g_remove (path), ==, 0);
    }
}

/* What the failed writer found under its name is there still, and nothing
 * else is left; then it is removed. */
static void
assert_older_kept (const char *path)
{
  g_autofree char *contents = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "older");
  g_assert_cmpuint (tomo_test_count_entries (tmp_dir), ==, 1);
  g_assert_cmpint (g_remove (path), ==, 0);
}

/* A slice never given: finish fails naming the count, nothing is left and
 * an older file of that name is untouched.  A row outside the volume is an
 * error that names it.  An abort after a few slices leaves nothing. */
static void
test_broken (void)
{
  const char *names[] = { "b.h5", "b.tif" };
  TomoVolumeInfo info;
  g_autofree float *slice = NULL;

  fill_info (&info, 64, 48, 6);
  slice = make_volume (info.width, info.height, 1, 9);
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
  for (guint f = 0; f < G_N_ELEMENTS (names); f++)
    {
      g_autofree char *path = g_build_filename (tmp_dir, names[f], NULL);
      TomoVolumeWriter *w;

      info.write_mode = modes[m];
      g_assert_true (g_file_set_contents (path, "older", -1, NULL));

      /* One slice missing. */
      {
        g_autoptr(GError) error = NULL;

        w = tomo_volume_writer_new (path, TOMO_VOLUME_FORMAT_AUTO, &info, 4, &error);
        g_assert_no_error (error);
        for (guint i = 0; i < info.n_rows; i++)
          if (i != 2)
            g_assert_true (tomo_volume_writer_add (w, info.row_start + i, slice, &error));
        g_assert_false (tomo_volume_writer_finish (w, &error));
        g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
        g_assert_nonnull (strstr (error->message, "1 of 6 slices missing"));
      }
      /* A row out of range, then an abort. */
      {
        g_autoptr(GError) error = NULL;

        w = tomo_volume_writer_new (path, TOMO_VOLUME_FORMAT_AUTO, &info, 4, &error);
        g_assert_no_error (error);
        g_assert_true (tomo_volume_writer_add (w, info.row_start, slice, &error));
        g_assert_false (tomo_volume_writer_add (w, info.row_start + info.n_rows, slice, &error));
        g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
        g_assert_nonnull (strstr (error->message, "row 11"));
        g_assert_cmpuint (tomo_volume_writer_abort (w), ==, 1);
      }
      assert_older_kept (path);
    }
}

/* A writer error inside the pieces: the output is /dev/full, where every
 * write fails with ENOSPC.  The slice's add reports it, naming the output
 * and the reason; later slices and finish fail with it too. */
static void
test_write_error (void)
{
  TomoVolumeInfo info;
  g_autofree float *slice = NULL;
  g_autoptr(GError) error = NULL;
  TomoVolumeWriter *w;

  if (!g_file_test ("/dev/full", G_FILE_TEST_EXISTS))
    {
      g_test_skip ("no /dev/full");
      return;
    }
  fill_info (&info, 640, 480, 3);
  slice = make_volume (info.width, info.height, 1, 4);
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
  info.write_mode = modes[m];
  /* Not a regular file: written in place (nothing of ours to remove), as a
   * multi-page TIFF (HDF5 cannot create its file there). */
  w = tomo_volume_writer_new ("/dev/full", TOMO_VOLUME_FORMAT_TIFF_STACK, &info, 3, &error);
  g_assert_no_error (error);
  g_assert_false (tomo_volume_writer_add (w, info.row_start, slice, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  g_assert_nonnull (strstr (error->message, "/dev/full"));
  g_assert_nonnull (strstr (error->message, g_strerror (ENOSPC)));
  g_clear_error (&error);
  /* Every later slice fails with the first error; finish too. */
  TOMO_TEST_ASSERT_FAILS (tomo_volume_writer_add (w, info.row_start + 1, slice, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  TOMO_TEST_ASSERT_FAILS (tomo_volume_writer_finish (w, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
    }
}

/* A folder writer of `info` with `n_threads` writers; with `volume`, every
 * slice but `skip_row` (an index into the volume; -1: none) given to it. */
static TomoVolumeWriter *
folder_writer_new (const char           *path,
                   const TomoVolumeInfo *info,
                   guint                 n_threads,
                   const float          *volume,
                   int                   skip_row)
{
  gsize plane = (gsize) info->width * info->height;
  g_autoptr(GError) error = NULL;
  TomoVolumeWriter *w;

  w = tomo_volume_writer_new (path, TOMO_VOLUME_FORMAT_TIFF_FOLDER, info, n_threads, &error);
  g_assert_no_error (error);
  for (guint i = 0; volume != NULL && i < info->n_rows; i++)
    if ((int) i != skip_row)
      {
        g_assert_true (tomo_volume_writer_add (w, info->row_start + i, volume + i * plane, &error));
        g_assert_no_error (error);
      }
  return w;
}

/* The folder with more slices than buffers: a memory budget (--max-memory)
 * that leaves the writer two copies, one thread, 24 slices, so that the
 * caller waits for a free buffer again and again.  Every slice arrives bit
 * for bit; an abort with slices still queued leaves nothing in the folder. */
static void
test_folder_queue (void)
{
  g_autofree char *path = g_build_filename (tmp_dir, "q", NULL);
  TomoVolumeInfo info;
  gsize plane;
  g_autofree float *volume = NULL;
  g_autoptr(GError) error = NULL;
  TomoVolumeWriter *w;

  fill_info (&info, 256, 128, 24);
  plane = (gsize) info.width * info.height;
  volume = make_volume (info.width, info.height, info.n_rows, 23);
  g_assert_cmpint (g_mkdir (path, 0700), ==, 0);

  /* The budget is read when the writer is made. */
  tomo_memory_set_limit (8 * 2 * plane * sizeof (float));
  w = folder_writer_new (path, &info, 1, NULL, -1);
  tomo_memory_set_limit (0);
  write_and_compare (w, path, &info, volume, NULL);
  tomo_test_remove_tree (path);

  /* An abort with slices queued. */
  g_assert_cmpint (g_mkdir (path, 0700), ==, 0);
  tomo_memory_set_limit (8 * 2 * plane * sizeof (float));
  w = folder_writer_new (path, &info, 1, volume, -1);
  tomo_memory_set_limit (0);
  tomo_volume_writer_abort (w);
  g_assert_cmpuint (tomo_test_count_entries (path), ==, 0);
  tomo_test_remove_tree (path);

  /* A slice that cannot be written (a folder stands under its name) is
   * refused when the writer is made, before any slice is computed; the
   * folder put there stays. */
  {
    g_autofree char *blocker = g_build_filename (path, "slice_00008.tif", NULL);

    g_assert_cmpint (g_mkdir_with_parents (blocker, 0700), ==, 0);
    g_assert_null (tomo_volume_writer_new (path, TOMO_VOLUME_FORMAT_TIFF_FOLDER, &info, 1,
                                           &error));
    g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
    g_assert_nonnull (strstr (error->message, "slice_00008.tif"));
    g_assert_true (g_file_test (blocker, G_FILE_TEST_IS_DIR));
    g_assert_cmpuint (tomo_test_count_entries (path), ==, 1);
    tomo_test_remove_tree (path);
  }
}

/* The folder's slices of one run, read back; every file of `path` is one
 * of them (no hidden file, no temporary left). */
static void
assert_folder_holds (const char           *path,
                     const TomoVolumeInfo *info,
                     const float          *volume)
{
  gsize plane = (gsize) info->width * info->height;
  g_autofree float *got = read_back (path, TOMO_VOLUME_FORMAT_TIFF_FOLDER, info);

  g_assert_cmpmem (got, plane * info->n_rows * sizeof (float), volume,
                   plane * info->n_rows * sizeof (float));
  g_assert_cmpuint (tomo_test_count_entries (path), ==, info->n_rows);
}

/* A run into a folder that holds an earlier run's slices: a failure half
 * way (a slice never given), an abort with slices written, or a name taken
 * by a folder leave every earlier slice as it was; a complete run replaces
 * them all, keeping each replaced file's mode. */
static void
test_folder_rerun (void)
{
  g_autofree char *path = g_build_filename (tmp_dir, "rerun", NULL);
  g_autofree char *first_file = g_build_filename (path, "slice_00005.tif", NULL);
  TomoVolumeInfo info;
  g_autofree float *first = NULL, *second = NULL;
  g_autoptr(GError) error = NULL;
  TomoVolumeWriter *w;

  fill_info (&info, 96, 64, 20);
  first = make_volume (info.width, info.height, info.n_rows, 31);
  second = make_volume (info.width, info.height, info.n_rows, 32);
  g_assert_cmpint (g_mkdir (path, 0700), ==, 0);
  w = folder_writer_new (path, &info, 4, NULL, -1);
  write_and_compare (w, path, &info, first, NULL);
  g_assert_cmpint (g_chmod (first_file, 0640), ==, 0);

  /* Slice 10 of the second run never arrives: finish fails. */
  w = folder_writer_new (path, &info, 4, second, 10);
  TOMO_TEST_ASSERT_FAILS (tomo_volume_writer_finish (w, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  assert_folder_holds (path, &info, first);

  /* An abort after every slice was given (those still queued are never
   * written): what was written is removed, none of the first run's. */
  w = folder_writer_new (path, &info, 4, second, -1);
  g_assert_cmpuint (tomo_volume_writer_abort (w), <=, info.n_rows);
  assert_folder_holds (path, &info, first);

  /* A folder where slice 15 was: refused before anything is written. */
  {
    g_autofree char *slice = g_build_filename (path, "slice_00015.tif", NULL);
    g_autofree char *kept = g_build_filename (tmp_dir, "slice_00015.tif", NULL);

    g_assert_cmpint (g_rename (slice, kept), ==, 0);
    g_assert_cmpint (g_mkdir (slice, 0700), ==, 0);
    g_assert_null (tomo_volume_writer_new (path, TOMO_VOLUME_FORMAT_TIFF_FOLDER, &info, 4,
                                           &error));
    g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
    g_assert_nonnull (strstr (error->message, "slice_00015.tif"));
    g_clear_error (&error);
    g_assert_cmpint (g_rmdir (slice), ==, 0);
    g_assert_cmpint (g_rename (kept, slice), ==, 0);
    assert_folder_holds (path, &info, first);
  }

  /* Complete: the second run replaces the first. */
  w = folder_writer_new (path, &info, 4, NULL, -1);
  write_and_compare (w, path, &info, second, NULL);
  assert_folder_holds (path, &info, second);
  {
    GStatBuf st;

    g_assert_cmpint (g_stat (first_file, &st), ==, 0);
    g_assert_cmpint (st.st_mode & 0777, ==, 0640);
  }
  tomo_test_remove_tree (path);
}

/* The slices of rows [first, first + n) that stand under their names. */
static guint
count_slices (const char *path,
              guint       first,
              guint       n)
{
  guint count = 0;

  for (guint row = first; row < first + n; row++)
    {
      g_autofree char *name = g_strdup_printf ("slice_%05u.tif", row);
      g_autofree char *file = g_build_filename (path, name, NULL);

      count += g_file_test (file, G_FILE_TEST_IS_REGULAR);
    }
  return count;
}

/* A slice whose name no file has yet takes it as soon as it is written
 * (a run into a new folder has no renames to do at its end), and an abort
 * removes it again; a name an earlier slice has waits for the finish.  So
 * in a folder that holds rows 0–9 of an earlier run, a run of rows 0–19
 * puts rows 10–19 in place before its finish, an abort leaves exactly the
 * earlier ten, and a finish replaces them. */
static void
test_folder_places_new_names (void)
{
  g_autofree char *path = g_build_filename (tmp_dir, "places", NULL);
  TomoVolumeInfo info, half;
  gsize plane;
  g_autofree float *first = NULL, *second = NULL;
  g_autoptr(GError) error = NULL;
  TomoVolumeWriter *w;

  fill_info (&info, 64, 48, 20);
  half = info;
  half.n_rows = 10;
  plane = (gsize) info.width * info.height;
  first = make_volume (info.width, info.height, info.n_rows, 41);
  second = make_volume (info.width, info.height, info.n_rows, 42);
  g_assert_cmpint (g_mkdir (path, 0700), ==, 0);
  w = folder_writer_new (path, &half, 2, NULL, -1);
  write_and_compare (w, path, &half, first, NULL);

  for (guint pass = 0; pass < 2; pass++)
    {
      w = folder_writer_new (path, &info, 2, second, -1);
      /* The new names fill while the writers work; the taken ones wait. */
      for (guint t = 0; t < 5000 && count_slices (path, info.row_start + 10, 10) < 10; t++)
        g_usleep (1000);
      g_assert_cmpuint (count_slices (path, info.row_start + 10, 10), ==, 10);
      {
        g_autofree float *got = read_back (path, TOMO_VOLUME_FORMAT_TIFF_FOLDER, &half);

        g_assert_cmpmem (got, plane * half.n_rows * sizeof (float), first,
                         plane * half.n_rows * sizeof (float));
      }
      if (pass == 0)
        {
          tomo_volume_writer_abort (w);
          g_assert_cmpuint (count_slices (path, info.row_start, info.n_rows), ==, 10);
          g_assert_cmpuint (tomo_test_count_entries (path), ==, 10);
          assert_folder_holds (path, &half, first);
        }
      else
        {
          g_assert_true (tomo_volume_writer_finish (w, &error));
          g_assert_no_error (error);
          assert_folder_holds (path, &info, second);
          g_assert_cmpuint (tomo_test_count_entries (path), ==, 20);
        }
    }
  tomo_test_remove_tree (path);
}

/* "-o vol/" where no vol is: the folder is made and holds the slices; a
 * run that fails leaves no folder behind, one whose parent is missing
 * makes nothing, and a file of that name is no folder. */
static void
test_folder_made (void)
{
  g_autofree char *dir = g_build_filename (tmp_dir, "made", NULL);
  g_autofree char *path = g_strconcat (dir, G_DIR_SEPARATOR_S, NULL);
  g_autofree char *deep = g_build_filename (tmp_dir, "no-parent", "vol", G_DIR_SEPARATOR_S, NULL);
  g_autofree char *file = g_build_filename (tmp_dir, "a-file", NULL);
  g_autofree char *file_slash = g_strconcat (file, G_DIR_SEPARATOR_S, NULL);
  g_autofree float *volume = NULL;
  g_autoptr(GError) error = NULL;
  TomoVolumeInfo info;
  TomoVolumeWriter *w;

  fill_info (&info, 40, 30, 6);
  volume = make_volume (info.width, info.height, info.n_rows, 51);
  g_assert_cmpint (tomo_volume_format_guess (path), ==, TOMO_VOLUME_FORMAT_TIFF_FOLDER);

  /* A run that fails (a slice never given): no folder left. */
  w = tomo_volume_writer_new (path, TOMO_VOLUME_FORMAT_AUTO, &info, 2, &error);
  g_assert_no_error (error);
  g_assert_true (g_file_test (dir, G_FILE_TEST_IS_DIR));
  g_assert_true (tomo_volume_writer_add (w, info.row_start, volume, &error));
  TOMO_TEST_ASSERT_FAILS (tomo_volume_writer_finish (w, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));

  /* A complete one: the folder with its slices. */
  w = tomo_volume_writer_new (path, TOMO_VOLUME_FORMAT_AUTO, &info, 2, &error);
  g_assert_no_error (error);
  write_and_compare (w, dir, &info, volume, NULL);
  assert_folder_holds (dir, &info, volume);
  tomo_test_remove_tree (dir);

  g_assert_null (tomo_volume_writer_new (deep, TOMO_VOLUME_FORMAT_AUTO, &info, 2, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  g_assert_nonnull (strstr (error->message, "cannot create the folder"));
  g_clear_error (&error);
  g_assert_false (g_file_test (deep, G_FILE_TEST_EXISTS));

  g_assert_true (g_file_set_contents (file, "older", -1, NULL));
  g_assert_null (tomo_volume_writer_new (file_slash, TOMO_VOLUME_FORMAT_AUTO, &info, 2, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "not a folder"));
  g_clear_error (&error);
  assert_older_kept (file);
}

/* An unknown write mode, given or from TOMO_VOLUME_WRITE, is refused before
 * anything is created, naming the mode; an existing file stays.  The
 * environment is set in a subprocess, before any thread runs. */
static void
bad_mode (const char *mode)
{
  g_autofree char *path = g_build_filename (tmp_dir, "m.h5", NULL);
  g_autoptr(GError) error = NULL;
  TomoVolumeInfo info;

  fill_info (&info, 32, 16, 2);
  info.write_mode = mode;
  g_assert_true (g_file_set_contents (path, "older", -1, NULL));
  g_assert_null (tomo_volume_writer_new (path, TOMO_VOLUME_FORMAT_AUTO, &info, 2, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  g_assert_nonnull (strstr (error->message, mode != NULL ? mode : "odirect"));
  g_assert_nonnull (strstr (error->message, path));
  assert_older_kept (path);
}

static void
test_bad_mode (void)
{
  bad_mode ("pwrite+fast");
  if (g_test_subprocess ())
    {
      g_assert_true (g_setenv ("TOMO_VOLUME_WRITE", "odirect", TRUE));
      bad_mode (NULL);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tmp_dir = tomo_test_make_tmp_dir ("tomo-volume-writer-XXXXXX");

  g_test_add_func ("/tomo/volume-writer/bit-equal", test_bit_equal);
  g_test_add_func ("/tomo/volume-writer/tiff-layout", test_tiff_layout);
  g_test_add_func ("/tomo/volume-writer/broken", test_broken);
  g_test_add_func ("/tomo/volume-writer/write-error", test_write_error);
  g_test_add_func ("/tomo/volume-writer/bad-mode", test_bad_mode);
  g_test_add_func ("/tomo/volume-writer/folder-queue", test_folder_queue);
  g_test_add_func ("/tomo/volume-writer/folder-rerun", test_folder_rerun);
  g_test_add_func ("/tomo/volume-writer/folder-places-new-names", test_folder_places_new_names);
  g_test_add_func ("/tomo/volume-writer/folder-made", test_folder_made);
  return tomo_test_run_and_remove_tree (tmp_dir);
}
