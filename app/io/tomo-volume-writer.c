/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-volume-writer"
#define _GNU_SOURCE   /* fallocate() */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <glib/gstdio.h>
#include <hdf5.h>

#include "tomo-error.h"
#include "tomo-memory.h"
#include "tomo-output.h"
#include "tomo-hdf5-private.h"
#include "tomo-scan-private.h"
#include "tomo-tiff-stack.h"
#include "tomo-volume-writer.h"

/* The one-file formats have their layout fixed before the first slice, so
 * every slice has a known offset in the file and is written there with
 * pwrite(), cut into pieces that the writer threads write at once, straight
 * from the caller's memory (no copy, no library call, no library lock):
 *
 *  - HDF5: the file, /exchange/data (float32, one chunk per slice, every
 *    chunk allocated at creation and never filled) and its attributes are
 *    made through the HDF5 library up front, which then closes the file;
 *    the chunks' addresses are asked from it, and the bytes written there
 *    are exactly the library's raw chunk layout (no filters), so any HDF5
 *    reader sees the data;
 *  - multi-page TIFF: pages one after the other behind the header
 *    (tomo-tiff-stack.h), the page directories written at the end.
 *
 * O_DIRECT is not used: on the H100 machine (ext4 on a virtio disk;
 * docs/PERFORMANCE.md, "One file against several") it writes at the
 * disk's 1.7 GB/s whatever the thread count, file count or preallocation,
 * below buffered writes into one file.  Three other ways measured there end
 * to end were slower than plain pwrite() and were removed: the page cache
 * prefaulted before each piece, the writeback started per slice, and whole
 * slices copied and written behind the caller.
 *
 * The TIFF-per-slice folder copies each slice and writes whole files on the
 * threads, several slices at once, under hidden names beside their own
 * (TomoOutputFolder): a slice takes its name at once where none stands,
 * finish renames the others into place, so that a failed or interrupted
 * run leaves an earlier run's slices as they were. */

typedef struct
{
  guint row;
  float *data;        /* folder: the writer's copy of the slice */
  const char *bytes;  /* one file: a piece of the caller's slice … */
  gsize len;
  goffset at;         /* … and where it goes */
} Item;

struct _TomoVolumeWriter
{
  TomoVolumeFormat format;
  TomoVolumeInfo info;
  char *path;        /* final output: file or folder */
  TomoOutput *output;      /* one file: the temporary file and its rename */
  TomoOutputFolder *folder; /* folder: the hidden names and the renames */
  const char *tmp_path;    /* one file: where it is written (owned by output) */
  gsize slice_floats;
  gboolean one_file;       /* HDF5 or multi-page TIFF: slices by pieces at offsets */
  gboolean made_folder;    /* folder: this writer created it (removed again if empty) */
  guint n_threads;

  GThreadPool *pool;
  GAsyncQueue *free_buffers;
  float **buffers;
  guint n_buffers;

  /* One file */
  TomoTiffStack stack;
  int fd;
  goffset *slice_offset;   /* per slice */
  char *map;               /* TOMO_VOLUME_WRITE=mmap: the file mapped, or NULL */
  gsize map_len;
  guint pending;           /* pieces queued and not yet written (under lock) */
  GCond pieces_done;

  GMutex lock;
  GError *error;           /* first failure */
  gint failed;             /* atomic mirror of error != NULL, or aborted */
  gboolean *written;       /* per slice */
  double busy_ms;
};

/* The format `path` names (a folder, an HDF5 or a TIFF ending), or AUTO
 * where it names none. */
static TomoVolumeFormat
format_named (const char *path)
{
  g_autofree char *lower = NULL;

  /* "vol/": a folder, whether or not it is there yet. */
  if (g_file_test (path, G_FILE_TEST_IS_DIR) || g_str_has_suffix (path, G_DIR_SEPARATOR_S))
    return TOMO_VOLUME_FORMAT_TIFF_FOLDER;
  lower = g_ascii_strdown (path, -1);
  if (g_str_has_suffix (lower, ".h5") || g_str_has_suffix (lower, ".hdf5") ||
      g_str_has_suffix (lower, ".hdf") || g_str_has_suffix (lower, ".nxs"))
    return TOMO_VOLUME_FORMAT_HDF5;
  if (g_str_has_suffix (lower, ".tif") || g_str_has_suffix (lower, ".tiff"))
    return TOMO_VOLUME_FORMAT_TIFF_STACK;
  return TOMO_VOLUME_FORMAT_AUTO;
}

TomoVolumeFormat
tomo_volume_format_guess (const char *path)
{
  TomoVolumeFormat format;

  g_return_val_if_fail (path != NULL, TOMO_VOLUME_FORMAT_TIFF_STACK);

  format = format_named (path);
  return format != TOMO_VOLUME_FORMAT_AUTO ? format : TOMO_VOLUME_FORMAT_TIFF_STACK;
}

gboolean
tomo_volume_format_is_named (const char *path)
{
  g_return_val_if_fail (path != NULL, FALSE);

  return format_named (path) != TOMO_VOLUME_FORMAT_AUTO;
}

static void
set_failed (TomoVolumeWriter *w,
            GError           *error)
{
  g_mutex_lock (&w->lock);
  if (w->error == NULL && error != NULL)
    w->error = error;
  else if (error != NULL)
    g_error_free (error);
  g_mutex_unlock (&w->lock);
  g_atomic_int_set (&w->failed, 1);
}

static gboolean
write_piece (TomoVolumeWriter *w,
             const Item       *item,
             GError          **error)
{
  if (w->map != NULL)
    {
      memcpy (w->map + item->at, item->bytes, item->len);
      return TRUE;
    }
  if (!tomo_pwrite_all (w->fd, item->bytes, item->len, item->at))
    {
      int saved = errno;

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Cannot write slice %u to %s: %s",
                   item->row, w->path, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* Never with O_TRUNC (the temporary file is new and empty, or the output
 * is not a regular file): on ext4 a truncation to zero marks the file, and
 * its close() then starts writing every dirty page to the disk and waits
 * for them to be submitted — 9 s for a 34 GB volume on the H100 machine. */
static int
open_no_trunc (const char *path,
               GError    **error)
{
  int fd = g_open (path, O_RDWR | O_CLOEXEC, 0);

  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Cannot open %s for writing: %s",
                   path, g_strerror (saved));
    }
  return fd;
}

/* One page of the fixed layout, with pwrite() into a new file under its
 * hidden name, created with O_EXCL and never truncated (libtiff
 * would: see open_no_trunc()). */
static gboolean
write_folder_slice (TomoVolumeWriter *w,
                    guint             row,
                    const float      *data,
                    GError          **error)
{
  g_autofree char *staged = tomo_output_folder_get_write_path (w->folder, row);
  g_autofree char *name = tomo_output_folder_get_name (w->folder, row);
  g_autofree char *final = g_build_filename (w->path, name, NULL);
  TomoTiffStack page;
  int fd;
  gboolean ok;

  tomo_tiff_stack_init (&page, w->info.width, w->info.height, 1);
  fd = g_open (staged, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    {
      int saved = errno;

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Cannot write slice %u to %s: %s",
                   row, final, g_strerror (saved));
      return FALSE;
    }
  ok = tomo_pwrite_all (fd, data, w->slice_floats * sizeof (float),
                        tomo_tiff_stack_page_offset (&page, 0));
  if (!ok)
    {
      int saved = errno;

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Cannot write slice %u to %s: %s",
                   row, final, g_strerror (saved));
    }
  ok = ok && tomo_tiff_stack_write_directories (&page, fd, final, error);
  if (close (fd) != 0 && ok)
    {
      int saved = errno;

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Cannot write %s: %s", final,
                   g_strerror (saved));
      ok = FALSE;
    }
  /* A slice half-written stays under its hidden name, which goes; a whole
   * one takes its name at once where none stands (no renames at the end of
   * a run into a new folder). */
  if (ok)
    tomo_output_folder_place (w->folder, row);
  return ok;
}

static void
write_run (gpointer data,
           gpointer user_data)
{
  Item *item = data;
  TomoVolumeWriter *w = user_data;
  GError *error = NULL;
  gint64 t0 = g_get_monotonic_time ();

  if (!g_atomic_int_get (&w->failed))
    {
      gboolean ok;

      ok = w->one_file ? write_piece (w, item, &error)
                       : write_folder_slice (w, item->row, item->data, &error);
      /* A folder's slice: done.  Pieces are counted by the thread that
       * queued them. */
      if (ok && !w->one_file)
        w->written[item->row - w->info.row_start] = TRUE;
      if (!ok)
        set_failed (w, error);
    }
  g_mutex_lock (&w->lock);
  w->busy_ms += (g_get_monotonic_time () - t0) / 1e3;
  if (w->one_file && --w->pending == 0)
    g_cond_broadcast (&w->pieces_done);
  g_mutex_unlock (&w->lock);
  if (item->data != NULL)
    g_async_queue_push (w->free_buffers, item->data);
  g_free (item);
}

/* TOMO_VOLUME_WRITE or info->write_mode: "pwrite" (the default) or "mmap".
 * FALSE for anything else. */
static gboolean
parse_write_mode (TomoVolumeWriter     *w,
                  const TomoVolumeInfo *info,
                  gboolean             *map,
                  GError              **error)
{
  const char *mode = info->write_mode;

  if (mode == NULL)
    mode = g_getenv ("TOMO_VOLUME_WRITE");
  if (mode == NULL || mode[0] == '\0')
    mode = "pwrite";
  *map = g_str_equal (mode, "mmap");
  if (!*map && !g_str_equal (mode, "pwrite"))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write volume %s: unknown write mode “%s” (TOMO_VOLUME_WRITE: "
                   "pwrite or mmap)", w->path, mode);
      return FALSE;
    }
  return TRUE;
}

static gboolean
attr_string (hid_t       loc,
             const char *name,
             const char *value)
{
  hid_t type = H5Tcopy (H5T_C_S1);
  gboolean ok;

  H5Tset_size (type, strlen (value) + 1);
  H5Tset_cset (type, H5T_CSET_UTF8);
  ok = _tomo_hdf5_write_attr (loc, name, type, type, value);
  H5Tclose (type);
  return ok;
}

static gboolean
attr_double (hid_t       loc,
             const char *name,
             double      value)
{
  return _tomo_hdf5_write_attr (loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

static gboolean
open_for_pwrite (TomoVolumeWriter *w,
                 GError          **error)
{
  w->fd = open_no_trunc (w->tmp_path, error);
  return w->fd >= 0;
}

/* Creates the HDF5 file at w->tmp_path with every chunk allocated, and
 * learns where each chunk lies. */
static gboolean
create_hdf5 (TomoVolumeWriter     *w,
             const TomoVolumeInfo *in,   /* the caller's: w->info keeps no strings */
             GError              **error)
{
  hsize_t dims[3] = { in->n_rows, in->height, in->width };
  hsize_t chunk[3] = { 1, in->height, in->width };
  hid_t file = -1, group = -1, space = -1, dcpl = -1, dset = -1;
  const char *failed = NULL;

  _tomo_hdf5_lock ();
  file = H5Fcreate (w->tmp_path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0)
    {
      failed = "create the file";
      goto out;
    }
  group = H5Gcreate2 (file, "/exchange", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  space = H5Screate_simple (3, dims, NULL);
  dcpl = H5Pcreate (H5P_DATASET_CREATE);
  if (group < 0 || space < 0 || dcpl < 0 ||
      H5Pset_chunk (dcpl, 3, chunk) < 0 ||
      H5Pset_alloc_time (dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
      H5Pset_fill_time (dcpl, H5D_FILL_TIME_NEVER) < 0)
    {
      failed = "create /exchange";
      goto out;
    }
  dset = H5Dcreate2 (file, "/exchange/data", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl,
                     H5P_DEFAULT);
  if (dset < 0)
    {
      failed = "create /exchange/data";
      goto out;
    }
  if (!attr_string (dset, "units", "attenuation per pixel") ||
      !attr_string (dset, "axes", "row:y:x") ||
      !attr_string (dset, "software", "tomolive " PACKAGE_VERSION) ||
      !attr_string (dset, "source", in->source ? in->source : "") ||
      !attr_string (dset, "filter", in->filter ? in->filter : "") ||
      !attr_string (dset, "interpolation", in->interp ? in->interp : "") ||
      !attr_string (dset, "backend", in->backend ? in->backend : "") ||
      !attr_double (dset, "center", in->center) ||
      !attr_double (dset, "axis_tilt_deg", in->axis_tilt_deg) ||
      !attr_double (dset, "row_start", in->row_start) ||
      !attr_double (dset, "roi_x", in->roi_x) ||
      !attr_double (dset, "roi_y", in->roi_y) ||
      !attr_double (dset, "n_projections", in->n_projections) ||
      !attr_double (dset, "pixel_size", in->pixel_size))
    {
      failed = "write the attributes of /exchange/data";
      goto out;
    }
  for (guint i = 0; i < in->n_rows; i++)
    {
      hsize_t at[3] = { i, 0, 0 };
      unsigned mask = 0;
      haddr_t addr = HADDR_UNDEF;
      hsize_t size = 0;

      if (H5Dget_chunk_info_by_coord (dset, at, &mask, &addr, &size) < 0 ||
          addr == HADDR_UNDEF || size != w->slice_floats * sizeof (float))
        {
          failed = "allocate the chunks of /exchange/data";
          goto out;
        }
      w->slice_offset[i] = (goffset) addr;
    }

out:
  if (dset >= 0)
    H5Dclose (dset);
  if (dcpl >= 0)
    H5Pclose (dcpl);
  if (space >= 0)
    H5Sclose (space);
  if (group >= 0)
    H5Gclose (group);
  if (file >= 0 && H5Fclose (file) < 0 && failed == NULL)
    failed = "close the file";
  _tomo_hdf5_unlock ();
  if (failed != NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write volume %s: could not %s (temporary file %s)", w->path, failed,
                   w->tmp_path);
      return FALSE;
    }
  return open_for_pwrite (w, error);
}

/* The multi-page TIFF: pages at fixed offsets, directories at finish. */
static gboolean
create_tiff_stack (TomoVolumeWriter *w,
                   GError          **error)
{
  tomo_tiff_stack_init (&w->stack, w->info.width, w->info.height, w->info.n_rows);
  for (guint i = 0; i < w->info.n_rows; i++)
    w->slice_offset[i] = (goffset) tomo_tiff_stack_page_offset (&w->stack, i);
  return open_for_pwrite (w, error);
}

/* TOMO_VOLUME_WRITE=mmap (an alternative to measure against pwrite()):
 * the file's blocks reserved with fallocate() — so that no page fault can
 * meet a full disk (SIGBUS) — and mapped; the pieces are copied into the
 * mapping, whose page faults run in parallel where buffered writes to one
 * file take the file's lock.  Anything missing: pwrite(). */
static void
map_output (TomoVolumeWriter *w)
{
  guint64 end = 0;
  struct stat st;
  void *p;

  for (guint i = 0; i < w->info.n_rows; i++)
    end = MAX (end, (guint64) w->slice_offset[i] + w->slice_floats * sizeof (float));
  if (w->format == TOMO_VOLUME_FORMAT_TIFF_STACK)
    end = tomo_tiff_stack_file_size (&w->stack);
  if (fstat (w->fd, &st) != 0 || !S_ISREG (st.st_mode))
    return;
  end = MAX (end, (guint64) st.st_size);
  if (fallocate (w->fd, 0, 0, (off_t) end) != 0)
    {
      g_debug ("%s: no fallocate (%s): writing with pwrite()", w->tmp_path, g_strerror (errno));
      return;
    }
  p = mmap (NULL, end, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
  if (p == MAP_FAILED)
    return;
  w->map = p;
  w->map_len = end;
}

static void
unmap_output (TomoVolumeWriter *w)
{
  if (w->map != NULL)
    munmap (w->map, w->map_len);
  w->map = NULL;
}

/* Fails early, before minutes of computing, when the volume cannot fit:
 * the free space of the output's file system, or the process's file size
 * limit.  (HDF5 itself must not meet a full disk: a failed H5Fclose()
 * leaves the library holding a broken file.) */
static gboolean
check_room (const char *path,
            guint64     bytes,
            gboolean    one_file,
            GError    **error)
{
  g_autofree char *dir = g_file_test (path, G_FILE_TEST_IS_DIR) ? g_strdup (path)
                                                                 : g_path_get_dirname (path);
  struct statvfs vfs;
  struct rlimit limit;

  if (statvfs (dir, &vfs) == 0 && (guint64) vfs.f_bavail * vfs.f_frsize < bytes)
    {
      g_autofree char *need = g_format_size (bytes);
      g_autofree char *have = g_format_size ((guint64) vfs.f_bavail * vfs.f_frsize);

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Not enough space for %s: the volume needs %s, %s has %s free", path, need,
                   dir, have);
      return FALSE;
    }
  if (one_file && getrlimit (RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      (guint64) limit.rlim_cur < bytes)
    {
      g_autofree char *need = g_format_size (bytes);
      g_autofree char *have = g_format_size (limit.rlim_cur);

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write %s: the volume needs %s, the file size limit is %s", path,
                   need, have);
      return FALSE;
    }
  return TRUE;
}

/* The folder's copies: every thread busy and as many waiting,
 * but no more than the volume has slices, and, beyond two (one written, one
 * filled), no more than an eighth of the memory budget (--max-memory): with
 * 8 threads that is 18 slices, 4.5 GiB for slices of 8192 × 8192. */
static guint
n_copy_buffers (const TomoVolumeWriter *w)
{
  guint64 bytes = (guint64) w->slice_floats * sizeof (float);
  guint64 budget = tomo_memory_get_limit () / 8;
  guint n = MIN (2 * w->n_threads + 2, w->info.n_rows);

  while (n > 2 && n * bytes > budget)
    n--;
  return n;
}

static void
writer_free (TomoVolumeWriter *w)
{
  if (w->pool != NULL)
    g_thread_pool_free (w->pool, FALSE, TRUE);
  unmap_output (w);
  if (w->fd >= 0)
    close (w->fd);
  g_clear_pointer (&w->output, tomo_output_free);
  g_clear_pointer (&w->folder, tomo_output_folder_free);
  for (guint i = 0; i < w->n_buffers; i++)
    g_free (w->buffers[i]);
  g_free (w->buffers);
  if (w->free_buffers != NULL)
    g_async_queue_unref (w->free_buffers);
  g_clear_error (&w->error);
  g_free (w->written);
  g_free (w->slice_offset);
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->pieces_done);
  g_free (w->path);
  g_free (w);
}

TomoVolumeWriter *
tomo_volume_writer_new (const char           *path,
                        TomoVolumeFormat      format,
                        const TomoVolumeInfo *info,
                        guint                 n_threads,
                        GError              **error)
{
  TomoVolumeWriter *w;
  GError *local = NULL;
  gboolean map = FALSE, made_folder = FALSE;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (info != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (info->width == 0 || info->height == 0 || info->n_rows == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write volume %s: empty volume of %u × %u × %u", path, info->n_rows,
                   info->height, info->width);
      return NULL;
    }
  if (format == TOMO_VOLUME_FORMAT_AUTO)
    format = tomo_volume_format_guess (path);
  if (format == TOMO_VOLUME_FORMAT_TIFF_FOLDER && !g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autofree char *bare = g_strdup (path);
      gsize len = strlen (bare);
      int made, saved;

      /* "a-file/": the file is there, and no folder. */
      while (len > 1 && bare[len - 1] == G_DIR_SEPARATOR)
        bare[--len] = '\0';
      if (g_file_test (bare, G_FILE_TEST_EXISTS))
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND,
                       "Cannot write slices into %s: not a folder", path);
          return NULL;
        }
      /* A folder not there yet is made (not its parents: a mistyped
       * parent is an error, not a new tree); one made meanwhile by
       * another is used as it is. */
      made = g_mkdir (path, 0777);
      saved = errno;

      if (made == 0)
        made_folder = TRUE;
      else if (saved != EEXIST || !g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "Cannot write slices into %s: cannot create the folder: %s", path,
                       g_strerror (saved));
          return NULL;
        }
    }

  w = g_new0 (TomoVolumeWriter, 1);
  w->format = format;
  w->made_folder = made_folder;
  w->info = *info;
  w->info.filter = w->info.interp = w->info.backend = w->info.source = NULL;
  w->info.inputs = NULL;
  w->info.write_mode = NULL;
  w->path = g_strdup (path);
  w->fd = -1;
  w->slice_floats = (gsize) info->width * info->height;
  w->written = g_new0 (gboolean, info->n_rows);
  g_mutex_init (&w->lock);
  g_cond_init (&w->pieces_done);
  w->one_file = format != TOMO_VOLUME_FORMAT_TIFF_FOLDER;
  /* One file takes one buffered write at a time (ext4 holds the file's
   * lock through the copy), so more threads only wait for it: on the H100
   * machine 1 writer was as fast as 8, or faster, at a quarter of the CPU
   * (docs/PERFORMANCE.md, "Writer threads for one file"). */
  w->n_threads = n_threads = n_threads > 0 ? n_threads : w->one_file ? 1 : 8;

  if (!parse_write_mode (w, info, &map, &local))
    goto fail;
  /* Slices plus headers and strip tables (well under 1 %). */
  if (!check_room (path, (guint64) w->slice_floats * sizeof (float) * info->n_rows * 101 / 100
                           + 65536, format != TOMO_VOLUME_FORMAT_TIFF_FOLDER, &local))
    goto fail;
  if (w->one_file)
    {
      w->output = tomo_output_open (path, info->inputs, &local);
      if (w->output == NULL)
        goto fail;
      w->tmp_path = tomo_output_get_write_path (w->output);
      w->slice_offset = g_new0 (goffset, info->n_rows);
      if (!(format == TOMO_VOLUME_FORMAT_HDF5 ? create_hdf5 (w, info, &local)
                                              : create_tiff_stack (w, &local)))
        goto fail;
      if (map)
        map_output (w);
    }
  else
    {
      /* Every slice's name checked (no folder in the way, no input) before
       * any work. */
      w->folder = tomo_output_folder_open (path, "slice_", ".tif", info->row_start,
                                           info->n_rows, info->inputs, &local);
      if (w->folder == NULL)
        goto fail;
      if (w->made_folder)
        tomo_output_folder_set_made (w->folder);
    }

  w->n_buffers = w->one_file ? 0 : n_copy_buffers (w);
  w->buffers = g_new0 (float *, w->n_buffers);
  w->free_buffers = g_async_queue_new ();
  for (guint i = 0; i < w->n_buffers; i++)
    {
      w->buffers[i] = g_try_malloc (w->slice_floats * sizeof (float));
      if (w->buffers[i] == NULL)
        {
          g_set_error (&local, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "Cannot write volume %s: out of memory for %u slice buffers of %u × %u",
                       path, w->n_buffers, info->width, info->height);
          goto fail;
        }
      g_async_queue_push (w->free_buffers, w->buffers[i]);
    }
  w->pool = g_thread_pool_new (write_run, w, n_threads, TRUE, &local);
  if (w->pool == NULL)
    goto fail;
  return w;

fail:
  g_propagate_error (error, local);
  tomo_volume_writer_abort (w);
  return NULL;
}

gboolean
tomo_volume_writer_add (TomoVolumeWriter *w,
                        guint             row,
                        const float      *slice,
                        GError          **error)
{
  Item *item;

  g_return_val_if_fail (w != NULL, FALSE);
  g_return_val_if_fail (slice != NULL, FALSE);

  if (row < w->info.row_start || row - w->info.row_start >= w->info.n_rows)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write row %u to %s: the volume holds rows %u to %u", row, w->path,
                   w->info.row_start, w->info.row_start + w->info.n_rows - 1);
      return FALSE;
    }
  if (g_atomic_int_get (&w->failed))
    goto failed;
  if (w->one_file)
    {
      /* Pieces of at least 1 MiB, page-aligned, one per thread. */
      gsize bytes = w->slice_floats * sizeof (float);
      gsize piece = MAX ((gsize) 1 << 20, (bytes / w->n_threads + 4095) & ~(gsize) 4095);
      guint index = row - w->info.row_start;

      g_mutex_lock (&w->lock);
      w->pending += (guint) ((bytes + piece - 1) / piece);
      g_mutex_unlock (&w->lock);
      for (gsize at = 0; at < bytes; at += piece)
        {
          item = g_new0 (Item, 1);
          item->row = row;
          item->bytes = (const char *) slice + at;
          item->len = MIN (piece, bytes - at);
          item->at = w->slice_offset[index] + (goffset) at;
          g_thread_pool_push (w->pool, item, NULL);
        }
      /* The slice is the caller's: back only when written. */
      g_mutex_lock (&w->lock);
      while (w->pending > 0)
        g_cond_wait (&w->pieces_done, &w->lock);
      g_mutex_unlock (&w->lock);
      if (g_atomic_int_get (&w->failed))
        goto failed;
      w->written[index] = TRUE;
      return TRUE;
    }
  item = g_new0 (Item, 1);
  item->row = row;
  item->data = g_async_queue_pop (w->free_buffers);
  memcpy (item->data, slice, w->slice_floats * sizeof (float));
  g_thread_pool_push (w->pool, item, NULL);
  return TRUE;

failed:
  g_mutex_lock (&w->lock);
  if (w->error != NULL)
    g_set_error_literal (error, w->error->domain, w->error->code, w->error->message);
  else
    g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Writing %s was stopped", w->path);
  g_mutex_unlock (&w->lock);
  return FALSE;
}

gboolean
tomo_volume_writer_finish (TomoVolumeWriter *w,
                           GError          **error)
{
  GError *local = NULL;
  guint missing = 0;

  g_return_val_if_fail (w != NULL, FALSE);

  /* Every queued slice written (or skipped after a failure). */
  g_thread_pool_free (g_steal_pointer (&w->pool), FALSE, TRUE);
  if (w->error != NULL)
    {
      local = g_steal_pointer (&w->error);
      goto fail;
    }
  for (guint i = 0; i < w->info.n_rows; i++)
    missing += !w->written[i];
  if (missing > 0)
    {
      g_set_error (&local, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Volume %s is incomplete: %u of %u slices missing", w->path, missing,
                   w->info.n_rows);
      goto fail;
    }
  unmap_output (w);
  if (w->format == TOMO_VOLUME_FORMAT_TIFF_STACK &&
      !tomo_tiff_stack_write_directories (&w->stack, w->fd, w->path, &local))
    goto fail;
  if (w->fd >= 0)
    {
      int fd = w->fd;

      w->fd = -1;
      if (close (fd) != 0)
        {
          int saved = errno;

          g_set_error (&local, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Cannot write volume %s: %s",
                       w->path, g_strerror (saved));
          goto fail;
        }
    }
  if (w->output != NULL && !tomo_output_commit (w->output, &local))
    goto fail;
  if (w->folder != NULL && !tomo_output_folder_commit (w->folder, &local))
    goto fail;
  writer_free (w);
  return TRUE;

fail:
  g_propagate_error (error, local);
  tomo_volume_writer_abort (w);
  return FALSE;
}

guint
tomo_volume_writer_abort (TomoVolumeWriter *w)
{
  guint n_removed = 0;

  g_return_val_if_fail (w != NULL, 0);

  g_atomic_int_set (&w->failed, 1);
  if (w->pool != NULL)
    g_thread_pool_free (g_steal_pointer (&w->pool), FALSE, TRUE);
  unmap_output (w);
  if (w->fd >= 0)
    {
      close (w->fd);
      w->fd = -1;
    }
  if (w->output != NULL)
    {
      tomo_output_abort (w->output);
      n_removed++;
    }
  if (w->folder != NULL)
    n_removed += tomo_output_folder_abort (w->folder);
  g_clear_pointer (&w->folder, tomo_output_folder_free);
  /* The folder it made, were it empty now, as it was not there before. */
  if (w->made_folder)
    g_rmdir (w->path);
  writer_free (w);
  return n_removed;
}

double
tomo_volume_writer_get_busy_ms (TomoVolumeWriter *w)
{
  double ms;

  g_return_val_if_fail (w != NULL, 0);

  g_mutex_lock (&w->lock);
  ms = w->busy_ms;
  g_mutex_unlock (&w->lock);
  return ms;
}

TomoVolumeFormat
tomo_volume_writer_get_format (TomoVolumeWriter *w)
{
  g_return_val_if_fail (w != NULL, TOMO_VOLUME_FORMAT_AUTO);

  return w->format;
}
