/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-io-hdf5"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include <hdf5.h>

#include "tomo-error.h"
#include "tomo-hdf5-private.h"
#include "tomo-memory.h"
#include "tomo-scan-private.h"

/* The serial HDF5 library keeps global state (error stacks, id tables): every
 * call, from any scan in any thread, goes through this one lock. */
static GRecMutex hdf5_lock;

/* A row read touches every chunk that crosses it; more than this and we let
 * HDF5 read chunks uncached rather than hold the dataset in memory. */
#define MAX_CHUNK_CACHE ((gsize) 1024 * 1024 * 1024)

typedef struct
{
  hid_t  dset;      /* -1 when the kind is absent */
  char  *name;      /* dataset path, for messages */
  guint *index;     /* frame indices in the dataset; NULL = all, in order */
  /* Direct reads (projections only): the raw bytes of an unfiltered
   * dataset read with pread() from the file that holds them, on any number
   * of threads, without the HDF5 lock.  fd −1: through HDF5. */
  int     fd;
  gsize   elt;          /* bytes per value */
  gboolean chunked;
  hsize_t chunk[3];
  haddr_t base;         /* contiguous: where the data start */
} Part;

typedef struct
{
  TomoScanLoader parent;

  hid_t file;
  Part  parts[TOMO_N_FRAME_KINDS];
} Hdf5Loader;

static void
hdf5_lock_acquire (void)
{
  static gsize silenced = 0;

  g_rec_mutex_lock (&hdf5_lock);
  if (g_once_init_enter (&silenced))
    {
      /* Failures become GErrors; HDF5 must not print its stack to stderr. */
      H5Eset_auto2 (H5E_DEFAULT, NULL, NULL);
      g_once_init_leave (&silenced, 1);
    }
}

static void
hdf5_lock_release (void)
{
  g_rec_mutex_unlock (&hdf5_lock);
}

void
_tomo_hdf5_lock (void)
{
  hdf5_lock_acquire ();
}

void
_tomo_hdf5_unlock (void)
{
  hdf5_lock_release ();
}

gboolean
_tomo_hdf5_write_doubles (hid_t         loc,
                          const char   *name,
                          hsize_t       n,
                          const double *values)
{
  hid_t space = n > 0 ? H5Screate_simple (1, &n, NULL) : H5Screate (H5S_SCALAR);
  hid_t dset = H5Dcreate2 (loc, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT,
                           H5P_DEFAULT);
  herr_t status = -1;

  if (dset >= 0)
    {
      status = H5Dwrite (dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
      H5Dclose (dset);
    }
  H5Sclose (space);
  return dset >= 0 && status >= 0;
}

gboolean
_tomo_hdf5_write_attr (hid_t       loc,
                       const char *name,
                       hid_t       file_type,
                       hid_t       mem_type,
                       const void *value)
{
  hid_t space = H5Screate (H5S_SCALAR);
  hid_t attr = H5Acreate2 (loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t status = -1;

  if (attr >= 0)
    {
      status = H5Awrite (attr, mem_type, value);
      H5Aclose (attr);
    }
  H5Sclose (space);
  return attr >= 0 && status >= 0;
}

static herr_t
walk_first_error (unsigned          n,
                  const H5E_error2_t *err,
                  void              *user_data)
{
  char **message = user_data;

  if (*message == NULL && err->desc != NULL && err->desc[0] != '\0')
    *message = g_strdup (err->desc);
  return 0;
}

/* The innermost message HDF5 left on its error stack ("wrong B-tree
 * signature", "addr overflow"…), or a generic one. */
static char *
hdf5_error_message (void)
{
  char *message = NULL;

  H5Ewalk2 (H5E_DEFAULT, H5E_WALK_UPWARD, walk_first_error, &message);
  H5Eclear2 (H5E_DEFAULT);
  return message ? message : g_strdup ("HDF5 library error");
}

gboolean
_tomo_io_is_hdf5 (const char *path)
{
  htri_t ret;

  hdf5_lock_acquire ();
  ret = H5Fis_hdf5 (path);
  H5Eclear2 (H5E_DEFAULT);
  hdf5_lock_release ();

  return ret > 0;
}

/* H5Lexists fails, rather than answering no, when an intermediate group is
 * missing: walk the path one component at a time. */
static gboolean
path_exists (hid_t       loc,
             const char *path)
{
  g_autofree char *prefix = g_strdup (path);
  char *p = prefix;

  if (*p == '/')
    p++;
  while (p != NULL && *p != '\0')
    {
      char *slash = strchr (p, '/');
      htri_t ret;

      if (slash != NULL)
        *slash = '\0';
      ret = H5Lexists (loc, prefix, H5P_DEFAULT);
      if (ret <= 0)
        {
          H5Eclear2 (H5E_DEFAULT);
          return FALSE;
        }
      if (slash == NULL)
        break;
      *slash = '/';
      p = slash + 1;
    }

  /* A dangling soft or external link exists but cannot be opened. */
  if (H5Oexists_by_name (loc, path, H5P_DEFAULT) <= 0)
    {
      H5Eclear2 (H5E_DEFAULT);
      return FALSE;
    }
  return TRUE;
}

/* Reads a string dataset or attribute (fixed or variable length) and
 * closes it; NULL where it could not be opened (obj < 0). */
static char *
read_string (hid_t    obj,
             gboolean is_attr)
{
  hid_t type, space;
  char *result = NULL;

  if (obj < 0)
    {
      H5Eclear2 (H5E_DEFAULT);
      return NULL;
    }
  type = is_attr ? H5Aget_type (obj) : H5Dget_type (obj);
  space = is_attr ? H5Aget_space (obj) : H5Dget_space (obj);
  if (type < 0 || space < 0 || H5Tget_class (type) != H5T_STRING ||
      H5Sget_simple_extent_npoints (space) != 1)
    goto out;

  if (H5Tis_variable_str (type) > 0)
    {
      hid_t mem = H5Tcopy (H5T_C_S1);
      char *value = NULL;
      herr_t ret;

      H5Tset_size (mem, H5T_VARIABLE);
      ret = is_attr ? H5Aread (obj, mem, &value)
                    : H5Dread (obj, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, &value);
      if (ret >= 0 && value != NULL)
        {
          result = g_strdup (value);
          H5free_memory (value);
        }
      H5Tclose (mem);
    }
  else
    {
      gsize size = H5Tget_size (type);
      hid_t mem = H5Tcopy (H5T_C_S1);
      g_autofree char *buffer = g_malloc0 (size + 1);
      herr_t ret;

      H5Tset_size (mem, size + 1);
      H5Tset_strpad (mem, H5T_STR_NULLTERM);
      ret = is_attr ? H5Aread (obj, mem, buffer)
                    : H5Dread (obj, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
      if (ret >= 0)
        result = g_strdup (buffer);
      H5Tclose (mem);
    }

out:
  if (type >= 0)
    H5Tclose (type);
  if (space >= 0)
    H5Sclose (space);
  if (is_attr)
    H5Aclose (obj);
  else
    H5Dclose (obj);
  H5Eclear2 (H5E_DEFAULT);
  if (result != NULL)
    g_strstrip (result);
  return result;
}

static char *
read_string_dataset (hid_t       loc,
                     const char *path)
{
  if (!path_exists (loc, path))
    return NULL;
  return read_string (H5Dopen2 (loc, path, H5P_DEFAULT), FALSE);
}

static char *
read_string_attribute (hid_t       obj,
                       const char *name)
{
  if (H5Aexists (obj, name) <= 0)
    {
      H5Eclear2 (H5E_DEFAULT);
      return NULL;
    }
  return read_string (H5Aopen (obj, name, H5P_DEFAULT), TRUE);
}

/* A scalar integer attribute that is not 0 (a missing or odd one: FALSE). */
static gboolean
read_flag_attribute (hid_t       obj,
                     const char *name)
{
  hid_t attr, space, type;
  gint64 value = 0;
  gboolean ok = FALSE;

  if (H5Aexists (obj, name) <= 0)
    {
      H5Eclear2 (H5E_DEFAULT);
      return FALSE;
    }
  attr = H5Aopen (obj, name, H5P_DEFAULT);
  space = attr >= 0 ? H5Aget_space (attr) : -1;
  type = attr >= 0 ? H5Aget_type (attr) : -1;
  if (space >= 0 && type >= 0 && H5Sget_simple_extent_npoints (space) == 1 &&
      H5Tget_class (type) == H5T_INTEGER)
    ok = H5Aread (attr, H5T_NATIVE_INT64, &value) >= 0;
  if (type >= 0)
    H5Tclose (type);
  if (space >= 0)
    H5Sclose (space);
  if (attr >= 0)
    H5Aclose (attr);
  H5Eclear2 (H5E_DEFAULT);
  return ok && value != 0;
}

/* `file`, named by a dataset of a file in folder `dir`: relative names are
 * looked for in the working folder and beside that file (as HDF5 does for
 * external storage and virtual sources), so both are inputs. */
static void
add_named_file (TomoScanLoader *loader,
                const char     *dir,
                const char     *file)
{
  _tomo_scan_loader_add_input (loader, file);
  if (!g_path_is_absolute (file))
    {
      g_autofree char *beside = g_build_filename (dir, file, NULL);

      _tomo_scan_loader_add_input (loader, beside);
    }
}

/* Every path below `where` that `parts` (the rest of a source name split
 * at "/", "*" standing for a block number) matches: a literal part is
 * followed as it is, one with a "*" is matched against the folder's
 * names.  The matches are inputs of `loader`. */
static void
add_matching_files (TomoScanLoader *loader,
                    const char     *where,
                    char          **parts)
{
  while (parts[0] != NULL && parts[0][0] == '\0')
    parts++;   /* "a//b" */
  if (parts[0] == NULL)
    {
      _tomo_scan_loader_add_input (loader, where);
      return;
    }
  if (strchr (parts[0], '*') == NULL)
    {
      g_autofree char *path = g_build_filename (where, parts[0], NULL);

      if (parts[1] == NULL || g_file_test (path, G_FILE_TEST_IS_DIR))
        add_matching_files (loader, path, parts + 1);
    }
  else
    {
      g_autoptr(GDir) d = g_dir_open (where, 0, NULL);
      const char *name;

      while (d != NULL && (name = g_dir_read_name (d)) != NULL)
        if (g_pattern_match_simple (parts[0], name))
          {
            g_autofree char *path = g_build_filename (where, name, NULL);

            if (parts[1] == NULL || g_file_test (path, G_FILE_TEST_IS_DIR))
              add_matching_files (loader, path, parts + 1);
          }
    }
}

/* The files a virtual dataset's source name `file` stands for.  A name
 * with "%b" maps one file per block of an unlimited dimension ("frames-%b.h5":
 * frames-0.h5, frames-1.h5, …, or "run-%b/frames.h5": one folder a block;
 * "%%" is a "%"): every file of that pattern in the folders HDF5 looks in
 * is an input, the ones added later included when the scan is opened
 * again. */
static void
add_virtual_source (TomoScanLoader *loader,
                    const char     *dir,
                    const char     *file)
{
  g_autoptr(GString) pattern = NULL;
  g_auto(GStrv) parts = NULL;
  gboolean blocks = FALSE;

  pattern = g_string_new (NULL);
  for (const char *c = file; *c != '\0'; c++)
    {
      if (c[0] == '%' && (c[1] == 'b' || c[1] == '%'))
        {
          blocks |= c[1] == 'b';
          g_string_append_c (pattern, *++c == 'b' ? '*' : '%');
        }
      else
        g_string_append_c (pattern, *c);
    }
  if (!blocks)
    {
      /* One file (a "%%" in its name is a "%"). */
      add_named_file (loader, dir, pattern->str);
      return;
    }
  parts = g_strsplit (pattern->str, G_DIR_SEPARATOR_S, -1);
  if (g_path_is_absolute (pattern->str))
    add_matching_files (loader, G_DIR_SEPARATOR_S, parts);
  else
    {
      /* The working folder's, and the ones beside the file. */
      add_matching_files (loader, ".", parts);
      add_matching_files (loader, dir, parts);
    }
}

/* The files that hold `dset`'s values, when they are not the loader's own
 * file: the one an external link leads to, external raw storage, and the
 * sources a virtual dataset maps (a detector's frame files beside the
 * master file).  Each is an input of the scan (tomo-output.h: no output
 * may overwrite one). */
static void
add_dataset_files (TomoScanLoader *loader,
                   hid_t           dset)
{
  ssize_t len = H5Fget_name (dset, NULL, 0);
  g_autofree char *name = NULL;
  g_autofree char *dir = NULL;
  hid_t dcpl;
  int n_external;

  if (loader == NULL || len <= 0)
    return;
  name = g_malloc (len + 1);
  if (H5Fget_name (dset, name, len + 1) != len)
    return;
  if (g_strcmp0 (name, loader->path) != 0)
    _tomo_scan_loader_add_input (loader, name);
  dir = g_path_get_dirname (name);
  dcpl = H5Dget_create_plist (dset);
  n_external = dcpl >= 0 ? H5Pget_external_count (dcpl) : 0;
  for (int i = 0; i < n_external; i++)
    {
      char file[4096] = "";
      off_t offset;
      hsize_t size;

      if (H5Pget_external (dcpl, i, sizeof file - 1, file, &offset, &size) >= 0 && file[0])
        add_named_file (loader, dir, file);
    }
  if (dcpl >= 0 && H5Pget_layout (dcpl) == H5D_VIRTUAL)
    {
      size_t n_virtual = 0;

      if (H5Pget_virtual_count (dcpl, &n_virtual) < 0)
        n_virtual = 0;
      for (size_t i = 0; i < n_virtual; i++)
        {
          ssize_t flen = H5Pget_virtual_filename (dcpl, i, NULL, 0);
          g_autofree char *file = flen > 0 ? g_malloc (flen + 1) : NULL;

          /* "." is the file of the dataset itself, registered above. */
          if (file != NULL && H5Pget_virtual_filename (dcpl, i, file, flen + 1) == flen
              && !g_str_equal (file, "."))
            add_virtual_source (loader, dir, file);
        }
    }
  if (dcpl >= 0)
    H5Pclose (dcpl);
  H5Eclear2 (H5E_DEFAULT);
}

/* Dataset `path` of `file` (file_path for the message); −1 and the error
 * otherwise.  The files that hold it become inputs of `loader` (may be
 * NULL). */
static hid_t
open_dataset (TomoScanLoader *loader,
              hid_t           file,
              const char     *file_path,
              const char     *path,
              GError        **error)
{
  hid_t dset = H5Dopen2 (file, path, H5P_DEFAULT);

  if (dset < 0)
    {
      g_autofree char *msg = hdf5_error_message ();
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_MISSING_DATASET,
                   "%s: cannot open dataset %s: %s", file_path, path, msg);
    }
  else
    add_dataset_files (loader, dset);
  return dset;
}

/* Reads a whole 1-D (or scalar) numeric dataset as doubles. */
static double *
read_doubles (TomoScanLoader *loader,
              hid_t           file,
              const char     *file_path,
              const char     *path,
              guint          *n_values,
              char          **units,
              GError        **error)
{
  hid_t dset, space;
  hssize_t n;
  int rank;
  g_autofree double *values = NULL;
  g_autofree char *what = NULL;
  hid_t type;
  H5T_class_t klass;

  dset = open_dataset (loader, file, file_path, path, error);
  if (dset < 0)
    return NULL;

  type = H5Dget_type (dset);
  klass = H5Tget_class (type);
  H5Tclose (type);
  space = H5Dget_space (dset);
  rank = H5Sget_simple_extent_ndims (space);
  n = H5Sget_simple_extent_npoints (space);
  H5Sclose (space);

  if ((klass != H5T_INTEGER && klass != H5T_FLOAT) || rank > 1 || n < 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "%s: dataset %s must be a list of numbers (found rank %d, %s)",
                   file_path, path, rank,
                   klass == H5T_INTEGER || klass == H5T_FLOAT ? "numeric" : "not numeric");
      H5Dclose (dset);
      return NULL;
    }

  if (!tomo_memory_check ((guint64) n * sizeof (double),
                          (what = g_strdup_printf ("%s: dataset %s of %" G_GINT64_FORMAT " values",
                                                   file_path, path, (gint64) n)), error))
    {
      H5Dclose (dset);
      return NULL;
    }
  values = g_try_new0 (double, MAX (n, 1));
  if (values == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "%s: out of memory reading the %" G_GINT64_FORMAT " values of %s",
                   file_path, (gint64) n, path);
      H5Dclose (dset);
      return NULL;
    }
  if (n > 0 && H5Dread (dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)
    {
      g_autofree char *msg = hdf5_error_message ();
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "%s: cannot read dataset %s: %s", file_path, path, msg);
      H5Dclose (dset);
      return NULL;
    }

  if (units != NULL)
    *units = read_string_attribute (dset, "units");
  H5Dclose (dset);

  *n_values = (guint) n;
  return g_steal_pointer (&values);
}

static double
units_to_metres (const char *units,
                 double      value)
{
  if (units == NULL)
    /* No unit: detector pixels are microns to a few hundred microns, so a
     * value above a millimetre can only have been written in micrometres. */
    return value > 1e-3 ? value * 1e-6 : value;
  if (g_ascii_strcasecmp (units, "m") == 0 || g_ascii_strcasecmp (units, "metre") == 0 ||
      g_ascii_strcasecmp (units, "meter") == 0)
    return value;
  if (g_ascii_strcasecmp (units, "mm") == 0)
    return value * 1e-3;
  if (g_ascii_strcasecmp (units, "um") == 0 || g_ascii_strcasecmp (units, "µm") == 0 ||
      g_ascii_strcasecmp (units, "micron") == 0 || g_ascii_strcasecmp (units, "microns") == 0 ||
      g_ascii_strcasecmp (units, "micrometer") == 0 || g_ascii_strcasecmp (units, "micrometre") == 0)
    return value * 1e-6;
  if (g_ascii_strcasecmp (units, "nm") == 0)
    return value * 1e-9;
  return units_to_metres (NULL, value);
}

static double
read_pixel_size (TomoScanLoader *loader,
                 hid_t           file,
                 const char     *path)
{
  g_autofree double *values = NULL;
  g_autofree char *units = NULL;
  guint n = 0;

  if (!path_exists (file, path))
    return 0.0;
  values = read_doubles (loader, file, "", path, &n, &units, NULL);
  H5Eclear2 (H5E_DEFAULT);
  if (values == NULL || n < 1 || !isfinite (values[0]) || values[0] <= 0.0)
    return 0.0;
  return units_to_metres (units, values[0]);
}

static TomoDType
dtype_from_h5 (hid_t dset)
{
  hid_t type = H5Dget_type (dset);
  H5T_class_t klass = H5Tget_class (type);
  gsize size = H5Tget_size (type);
  TomoDType dtype;

  H5T_sign_t sign = klass == H5T_INTEGER ? H5Tget_sign (type) : H5T_SGN_NONE;

  H5Tclose (type);
  /* HDF5 converts any of these to float when reading; the type is what
   * `info` reports and what a pipeline streaming raw data would upload. */
  if (klass == H5T_FLOAT)
    dtype = size > 4 ? TOMO_DTYPE_FLOAT64 : size > 2 ? TOMO_DTYPE_FLOAT32 : TOMO_DTYPE_FLOAT16;
  else if (size == 1)
    dtype = sign == H5T_SGN_2 ? TOMO_DTYPE_INT8 : TOMO_DTYPE_UINT8;
  else if (size == 2)
    dtype = sign == H5T_SGN_2 ? TOMO_DTYPE_INT16 : TOMO_DTYPE_UINT16;
  else if (size == 4)
    dtype = sign == H5T_SGN_2 ? TOMO_DTYPE_INT32 : TOMO_DTYPE_UINT32;
  else
    dtype = TOMO_DTYPE_FLOAT64;
  return dtype;
}

/* libhdf5 trusts a dataset's stored size: a compact or contiguous dataset
 * whose storage is smaller than its dimensions say is read past its end
 * (a heap over-read inside H5Dread, found by fuzzing; HDF5 1.10.8).  Check
 * it, and that contiguous data lie inside the file that holds them (the
 * target of an external link, not the file that links to it), before any
 * read. */
static gboolean
check_storage (hid_t          dset,
               const char    *file_path,
               const char    *path,
               const hsize_t  dims[3],
               GError       **error)
{
  hid_t dcpl = H5Dget_create_plist (dset);
  hid_t type = H5Dget_type (dset);
  H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout (dcpl) : H5D_LAYOUT_ERROR;
  guint64 elem = type >= 0 ? H5Tget_size (type) : 0;
  guint64 expected = 0, stored, file_size = 0;
  haddr_t offset;
  hid_t holder;
  gboolean ok = TRUE;

  if (type >= 0)
    H5Tclose (type);
  if (dcpl >= 0)
    H5Pclose (dcpl);
  if (layout != H5D_COMPACT && layout != H5D_CONTIGUOUS)
    return TRUE;   /* chunks are checked by HDF5 one by one */

  stored = H5Dget_storage_size (dset);
  if (!tomo_size_mul3 (dims[0], dims[1], dims[2], &expected)
      || !g_uint64_checked_mul (&expected, expected, elem))
    expected = G_MAXUINT64;
  offset = layout == H5D_CONTIGUOUS ? H5Dget_offset (dset) : HADDR_UNDEF;
  holder = H5Iget_file_id (dset);
  if (holder >= 0)
    {
      H5Fget_filesize (holder, (hsize_t *) &file_size);
      H5Fclose (holder);
    }
  H5Eclear2 (H5E_DEFAULT);

  if (layout == H5D_COMPACT && stored != expected)
    ok = FALSE;
  else if (layout == H5D_CONTIGUOUS && offset != HADDR_UNDEF
           && (stored != expected || offset > file_size || expected > file_size - offset))
    ok = FALSE;
  if (!ok)
    g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                 "%s: dataset %s is corrupt: %" G_GUINT64_FORMAT " × %" G_GUINT64_FORMAT " × %"
                 G_GUINT64_FORMAT " values of %" G_GUINT64_FORMAT " bytes need %" G_GUINT64_FORMAT
                 " bytes but %" G_GUINT64_FORMAT " are stored%s",
                 file_path, path, (guint64) dims[0], (guint64) dims[1], (guint64) dims[2], elem,
                 expected, stored,
                 layout == H5D_CONTIGUOUS ? " (or they lie past the end of the file)" : "");
  return ok;
}

/* Opens a 3-D image dataset with a chunk cache that holds every chunk one
 * detector row of all `n_frames` frames crosses, so that reading the next
 * rows of the same chunks costs no decompression. */
static hid_t
open_image_dataset (TomoScanLoader *loader,
                    hid_t           file,
                    const char     *file_path,
                    const char     *path,
                    hsize_t         dims[3],
                    GError        **error)
{
  hid_t dset, space, type, dcpl, dapl;
  H5T_class_t klass;
  gsize elem;
  int rank;

  dset = open_dataset (loader, file, file_path, path, error);
  if (dset < 0)
    return -1;

  space = H5Dget_space (dset);
  rank = H5Sget_simple_extent_ndims (space);
  if (rank == 3)
    H5Sget_simple_extent_dims (space, dims, NULL);
  H5Sclose (space);
  type = H5Dget_type (dset);
  klass = H5Tget_class (type);
  elem = H5Tget_size (type);
  H5Tclose (type);

  if (rank != 3)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "%s: dataset %s has %d dimensions, expected 3 (frames, rows, columns)",
                   file_path, path, rank);
      H5Dclose (dset);
      return -1;
    }
  if (klass != H5T_INTEGER && klass != H5T_FLOAT)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "%s: dataset %s does not hold numbers (HDF5 type class %s)", file_path, path,
                   klass == H5T_STRING ? "string" : klass == H5T_COMPOUND ? "compound"
                   : klass == H5T_ARRAY ? "array" : klass == H5T_ENUM ? "enum" : "other");
      H5Dclose (dset);
      return -1;
    }
  /* A corrupt type may declare any size; libhdf5 then reads far past its
   * buffers (found by fuzzing).  Numbers are 1, 2, 4 or 8 bytes. */
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "%s: dataset %s holds %s numbers of %zu bytes; only 1, 2, 4 and 8 are read",
                   file_path, path, klass == H5T_FLOAT ? "floating-point" : "integer", elem);
      H5Dclose (dset);
      return -1;
    }
  if (dims[1] > G_MAXUINT || dims[2] > G_MAXUINT || dims[0] > G_MAXUINT)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "%s: dataset %s is too large (%" G_GUINT64_FORMAT " × %" G_GUINT64_FORMAT
                   " × %" G_GUINT64_FORMAT ")", file_path, path,
                   (guint64) dims[0], (guint64) dims[1], (guint64) dims[2]);
      H5Dclose (dset);
      return -1;
    }
  if (!_tomo_scan_check_memory (file_path, path, dims[0], dims[1], dims[2], error))
    {
      H5Dclose (dset);
      return -1;
    }

  if (!check_storage (dset, file_path, path, dims, error))
    {
      H5Dclose (dset);
      return -1;
    }

  dcpl = H5Dget_create_plist (dset);
  if (dcpl >= 0 && H5Pget_layout (dcpl) == H5D_CHUNKED)
    {
      hsize_t chunk[3] = { 1, 1, 1 };

      if (H5Pget_chunk (dcpl, 3, chunk) == 3 && chunk[0] && chunk[1] && chunk[2])
        {
          guint64 n_chunks = ((dims[0] + chunk[0] - 1) / chunk[0]) *
                             ((dims[2] + chunk[2] - 1) / chunk[2]);
          guint64 bytes = n_chunks * chunk[0] * chunk[1] * chunk[2] * elem;

          if (bytes <= MAX_CHUNK_CACHE)
            {
              dapl = H5Pcreate (H5P_DATASET_ACCESS);
              H5Pset_chunk_cache (dapl, MIN (n_chunks * 100 + 1, 1000003),
                                  MAX (bytes, 1024 * 1024), 0.75);
              H5Dclose (dset);
              dset = H5Dopen2 (file, path, dapl);
              H5Pclose (dapl);
              if (dset < 0)
                {
                  g_autofree char *msg = hdf5_error_message ();
                  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                               "%s: cannot open dataset %s: %s", file_path, path, msg);
                }
            }
        }
    }
  if (dcpl >= 0)
    H5Pclose (dcpl);
  H5Eclear2 (H5E_DEFAULT);

  return dset;
}

/* Rows [row, row + n_rows) of every frame of `kind` into `out` as
 * `mem_type` (n_frames × n_rows × width); `counts` (uint16 files read as
 * floats) converts after the read. */
static gboolean
hdf5_read_rows_as (TomoScanLoader *loader,
                   TomoFrameKind   kind,
                   guint           row,
                   guint           n_rows,
                   hid_t           mem_type,
                   void           *out,
                   GError        **error)
{
  Hdf5Loader *self = (Hdf5Loader *) loader;
  Part *part = &self->parts[kind];
  guint n = loader->n_frames[kind];
  hid_t fspace, mspace;
  herr_t ret = 0;
  gboolean ok = TRUE;

  g_assert (part->dset >= 0);

  hdf5_lock_acquire ();
  fspace = H5Dget_space (part->dset);
  if (part->index == NULL)
    {
      hsize_t start[3] = { 0, row, 0 };
      hsize_t count[3] = { n, n_rows, loader->width };
      ret = H5Sselect_hyperslab (fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    }
  else
    {
      /* Mixed NXtomo frames: one hyperslab per run of consecutive frames. */
      H5Sselect_none (fspace);
      for (guint i = 0; i < n && ret >= 0;)
        {
          guint j = i + 1;
          hsize_t start[3], count[3];

          while (j < n && part->index[j] == part->index[j - 1] + 1)
            j++;
          start[0] = part->index[i]; start[1] = row; start[2] = 0;
          count[0] = j - i; count[1] = n_rows; count[2] = loader->width;
          ret = H5Sselect_hyperslab (fspace, H5S_SELECT_OR, start, NULL, count, NULL);
          i = j;
        }
    }

  /* The memory space has the file selection's shape: with a flat one HDF5
   * walks both selections element by element (~300 ms for a 2048 × 2048
   * row instead of a few). */
  {
    hsize_t mshape[3] = { n, n_rows, loader->width };

    mspace = H5Screate_simple (3, mshape, NULL);
  }
  if (ret < 0 || H5Dread (part->dset, mem_type, mspace, fspace, H5P_DEFAULT, out) < 0)
    {
      g_autofree char *msg = hdf5_error_message ();
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "%s: cannot read row%s %u of dataset %s: %s",
                   loader->path, n_rows > 1 ? "s from" : "", row, part->name, msg);
      ok = FALSE;
    }
  H5Sclose (mspace);
  H5Sclose (fspace);
  hdf5_lock_release ();
  return ok;
}

/* Is the dataset of `kind` unsigned 16-bit integers? */
static gboolean
hdf5_is_uint16 (Hdf5Loader   *self,
                TomoFrameKind kind)
{
  hid_t ftype;
  gboolean yes = FALSE;

  hdf5_lock_acquire ();
  ftype = H5Dget_type (self->parts[kind].dset);
  if (ftype >= 0)
    {
      yes = H5Tget_class (ftype) == H5T_INTEGER && H5Tget_size (ftype) == 2 &&
            H5Tget_sign (ftype) == H5T_SGN_NONE;
      H5Tclose (ftype);
    }
  hdf5_lock_release ();
  return yes;
}

static gboolean
hdf5_read_rows (TomoScanLoader *loader,
                TomoFrameKind   kind,
                guint           row,
                float          *out,
                GError        **error)
{
  gsize n = (gsize) loader->n_frames[kind] * loader->width;
  g_autofree guint16 *counts = NULL;

  /* uint16 counts (most detectors) are read as they are stored and made
   * floats here: HDF5's own conversion on a hyperslab costs ~45 ns a
   * value, twenty times this loop. */
  if (hdf5_is_uint16 ((Hdf5Loader *) loader, kind))
    counts = g_try_new (guint16, n);
  if (counts == NULL)
    return hdf5_read_rows_as (loader, kind, row, 1, H5T_NATIVE_FLOAT, out, error);
  if (!hdf5_read_rows_as (loader, kind, row, 1, H5T_NATIVE_UINT16, counts, error))
    return FALSE;
  for (gsize i = 0; i < n; i++)
    out[i] = counts[i];
  return TRUE;
}

/* Can the projections be read directly?  Unfiltered, contiguous or
 * chunked, in the host's own (little-endian) uint16 or float32, in this
 * file (no external storage) without a user block.  Under the HDF5 lock. */
static void
direct_setup (Hdf5Loader *self)
{
  TomoScanLoader *loader = &self->parent;
  Part *part = &self->parts[TOMO_FRAME_PROJECTION];
  hid_t dcpl = -1, ftype = -1, fcpl = -1, holder = -1;
  hsize_t userblock = 1;
  gboolean ok = FALSE;
  H5D_layout_t layout;
  ssize_t name_len;

  part->fd = -1;
  if (G_BYTE_ORDER != G_LITTLE_ENDIAN || part->dset < 0 || part->index != NULL ||
      (loader->dtype != TOMO_DTYPE_UINT16 && loader->dtype != TOMO_DTYPE_FLOAT32))
    return;
  dcpl = H5Dget_create_plist (part->dset);
  ftype = H5Dget_type (part->dset);
  /* The file that holds the data (an external link's target), whose user
   * block shifts every address. */
  holder = H5Iget_file_id (part->dset);
  fcpl = holder >= 0 ? H5Fget_create_plist (holder) : -1;
  if (dcpl < 0 || ftype < 0 || fcpl < 0 || H5Pget_nfilters (dcpl) != 0 ||
      H5Pget_external_count (dcpl) != 0 || H5Pget_userblock (fcpl, &userblock) < 0 ||
      userblock != 0 ||
      H5Tequal (ftype, loader->dtype == TOMO_DTYPE_UINT16 ? H5T_STD_U16LE : H5T_IEEE_F32LE) <= 0)
    goto out;
  part->elt = loader->dtype == TOMO_DTYPE_UINT16 ? 2 : 4;
  layout = H5Pget_layout (dcpl);
  if (layout == H5D_CHUNKED)
    {
      part->chunked = TRUE;
      if (H5Pget_chunk (dcpl, 3, part->chunk) != 3 || part->chunk[0] == 0 ||
          part->chunk[1] == 0 || part->chunk[2] == 0)
        goto out;
    }
  else if (layout == H5D_CONTIGUOUS)
    {
      part->base = H5Dget_offset (part->dset);
      if (part->base == HADDR_UNDEF)
        goto out;
    }
  else
    goto out;
  name_len = H5Fget_name (part->dset, NULL, 0);
  if (name_len > 0)
    {
      g_autofree char *name = g_malloc (name_len + 1);

      if (H5Fget_name (part->dset, name, name_len + 1) == name_len)
        part->fd = g_open (name, O_RDONLY | O_CLOEXEC, 0);
    }
  ok = part->fd >= 0;

out:
  if (!ok)
    part->fd = -1;
  if (dcpl >= 0)
    H5Pclose (dcpl);
  if (ftype >= 0)
    H5Tclose (ftype);
  if (fcpl >= 0)
    H5Pclose (fcpl);
  if (holder >= 0)
    H5Fclose (holder);
  H5Eclear2 (H5E_DEFAULT);
}

static gboolean
direct_pread (Hdf5Loader  *self,
              guint        row,
              void        *dst,
              gsize        len,
              goffset      at,
              GError     **error)
{
  char *p = dst;

  while (len > 0)
    {
      ssize_t n = pread (self->parts[TOMO_FRAME_PROJECTION].fd, p, len, at);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                       "%s: cannot read row %u of dataset %s: %s", self->parent.path, row,
                       self->parts[TOMO_FRAME_PROJECTION].name,
                       n < 0 ? g_strerror (errno) : "the file ends inside its data");
          return FALSE;
        }
      p += n;
      len -= n;
      at += n;
    }
  return TRUE;
}

/* Row `row` of every projection, in the file's type, straight from the
 * file.  *handled FALSE (and TRUE returned): not possible here (a chunk
 * never written reads as the fill value only through HDF5). */
static gboolean
hdf5_read_rows_direct (TomoScanLoader *loader,
                       TomoFrameKind   kind,
                       guint           row,
                       void           *out,
                       gboolean       *handled,
                       GError        **error)
{
  Hdf5Loader *self = (Hdf5Loader *) loader;
  Part *part = &self->parts[kind];
  gsize elt = part->elt;
  guint n = loader->n_frames[kind], w = loader->width, h = loader->height;
  char *dst = out;

  *handled = FALSE;
  if (kind != TOMO_FRAME_PROJECTION || part->fd < 0)
    return TRUE;
  if (!part->chunked)
    {
      for (guint p = 0; p < n; p++)
        if (!direct_pread (self, row, dst + (gsize) p * w * elt, (gsize) w * elt,
                           part->base + (((guint64) p * h + row) * w) * elt, error))
          return FALSE;
      *handled = TRUE;
      return TRUE;
    }
  {
    hsize_t cp = part->chunk[0], cr = part->chunk[1], cw = part->chunk[2];
    hsize_t rc = row / cr * cr, rl = row % cr;
    guint n_pc = (n + cp - 1) / cp, n_xc = (w + cw - 1) / cw;
    g_autofree haddr_t *addr = g_new (haddr_t, (gsize) n_pc * n_xc);
    gboolean all = TRUE;

    /* Where this row's chunks are: asked of HDF5 (its lock held briefly). */
    hdf5_lock_acquire ();
    for (guint pc = 0; pc < n_pc && all; pc++)
      for (guint xc = 0; xc < n_xc && all; xc++)
        {
          hsize_t at[3] = { pc * cp, rc, xc * cw };
          unsigned mask = 0;
          hsize_t size = 0;
          haddr_t a = HADDR_UNDEF;

          all = H5Dget_chunk_info_by_coord (part->dset, at, &mask, &a, &size) >= 0 &&
                a != HADDR_UNDEF && mask == 0 && size == cp * cr * cw * elt;
          addr[pc * n_xc + xc] = a;
        }
    H5Eclear2 (H5E_DEFAULT);
    hdf5_lock_release ();
    if (!all)
      return TRUE;

    for (guint pc = 0; pc < n_pc; pc++)
      for (guint xc = 0; xc < n_xc; xc++)
        {
          haddr_t a = addr[pc * n_xc + xc];
          guint np = MIN (cp, n - pc * cp), nx = MIN (cw, w - xc * cw);
          char *to = dst + ((gsize) pc * cp * w + xc * cw) * elt;

          if (cr == 1 && cw == w)
            {
              /* The row's values of np projections, one run. */
              if (!direct_pread (self, row, to, (gsize) np * w * elt, a, error))
                return FALSE;
              continue;
            }
          for (guint pl = 0; pl < np; pl++)
            if (!direct_pread (self, row, to + (gsize) pl * w * elt, (gsize) nx * elt,
                               a + ((pl * cr + rl) * cw) * elt, error))
              return FALSE;
        }
  }
  *handled = TRUE;
  return TRUE;
}

/* In the file's type: the types the scan reports as uint16 or float32 are
 * read without conversion; n_rows rows at once. */
static gboolean
hdf5_read_slab_native (TomoScanLoader *loader,
                       TomoFrameKind   kind,
                       guint           row,
                       guint           n_rows,
                       void           *out,
                       GError        **error)
{
  hid_t mem_type = loader->dtype == TOMO_DTYPE_UINT16 ? H5T_NATIVE_UINT16 : H5T_NATIVE_FLOAT;

  if (loader->dtype != TOMO_DTYPE_UINT16 && loader->dtype != TOMO_DTYPE_FLOAT32)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "%s: rows of type %s cannot be read without conversion",
                   loader->path, tomo_dtype_to_string (loader->dtype));
      return FALSE;
    }
  if (n_rows == 0 || row >= loader->height || n_rows > loader->height - row)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "%s: rows %u to %u are out of range (the detector has %u rows)",
                   loader->path, row, row + n_rows - 1, loader->height);
      return FALSE;
    }
  return hdf5_read_rows_as (loader, kind, row, n_rows, mem_type, out, error);
}

/* Detector rows per chunk of the projections; 0 when not chunked. */
static guint
hdf5_chunk_rows (TomoScanLoader *loader)
{
  Hdf5Loader *self = (Hdf5Loader *) loader;
  hsize_t chunk[3] = { 0, 0, 0 };
  guint rows = 0;
  hid_t dcpl;

  hdf5_lock_acquire ();
  dcpl = H5Dget_create_plist (self->parts[TOMO_FRAME_PROJECTION].dset);
  if (dcpl >= 0 && H5Pget_layout (dcpl) == H5D_CHUNKED && H5Pget_chunk (dcpl, 3, chunk) == 3)
    rows = (guint) MIN (chunk[1], (hsize_t) loader->height);
  if (dcpl >= 0)
    H5Pclose (dcpl);
  H5Eclear2 (H5E_DEFAULT);
  hdf5_lock_release ();
  return rows;
}

static void
hdf5_free (TomoScanLoader *loader)
{
  Hdf5Loader *self = (Hdf5Loader *) loader;

  hdf5_lock_acquire ();
  for (guint k = 0; k < TOMO_N_FRAME_KINDS; k++)
    {
      if (self->parts[k].fd >= 0)
        close (self->parts[k].fd);
      if (self->parts[k].dset >= 0)
        H5Dclose (self->parts[k].dset);
      g_free (self->parts[k].name);
      g_free (self->parts[k].index);
    }
  if (self->file >= 0)
    H5Fclose (self->file);
  H5Eclear2 (H5E_DEFAULT);
  hdf5_lock_release ();
  g_free (self);
}

/* Both layouts read the same way; only the name differs. */
#define HDF5_LOADER_CLASS(label) {              \
    .name = label,                              \
    .read_rows = hdf5_read_rows,                \
    .read_slab_native = hdf5_read_slab_native,  \
    .chunk_rows = hdf5_chunk_rows,              \
    .read_rows_direct = hdf5_read_rows_direct,  \
    .free = hdf5_free,                          \
  }

static const TomoScanLoaderClass dxchange_class = HDF5_LOADER_CLASS ("Data Exchange (HDF5)");
static const TomoScanLoaderClass nxtomo_class = HDF5_LOADER_CLASS ("NeXus NXtomo (HDF5)");

static gboolean
open_dxchange (Hdf5Loader  *self,
               GError     **error)
{
  TomoScanLoader *loader = &self->parent;
  const char *path = loader->path;
  static const char *names[TOMO_N_FRAME_KINDS] = {
    "/exchange/data", "/exchange/data_white", "/exchange/data_dark",
  };
  hsize_t dims[3] = { 0, };

  for (guint k = 0; k < TOMO_N_FRAME_KINDS; k++)
    {
      hsize_t kdims[3] = { 0, };

      if (k != TOMO_FRAME_PROJECTION && !path_exists (self->file, names[k]))
        continue;

      self->parts[k].name = g_strdup (names[k]);
      loader->source[k] = g_strdup (names[k]);
      self->parts[k].dset = open_image_dataset (loader, self->file, path, names[k], kdims, error);
      if (self->parts[k].dset < 0)
        return FALSE;

      if (k == TOMO_FRAME_PROJECTION)
        memcpy (dims, kdims, sizeof dims);
      else if (kdims[1] != dims[1] || kdims[2] != dims[2])
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "%s: %s frames are %u × %u pixels but %s frames are %u × %u",
                       path, names[k], (guint) kdims[2], (guint) kdims[1],
                       names[0], (guint) dims[2], (guint) dims[1]);
          return FALSE;
        }
      loader->n_frames[k] = kdims[0];
    }
  if (loader->source[TOMO_FRAME_FLAT] == NULL)
    loader->source[TOMO_FRAME_FLAT] = g_strdup ("no /exchange/data_white");

  loader->height = dims[1];
  loader->width = dims[2];
  loader->dtype = dtype_from_h5 (self->parts[TOMO_FRAME_PROJECTION].dset);
  /* tomolive's recordings say when the data came as line integrals, and
   * when they came normalised (their unit flat and any darks are not to
   * be applied). */
  loader->already_linear = read_flag_attribute (self->parts[TOMO_FRAME_PROJECTION].dset,
                                                "already_linear");
  loader->already_normalised = read_flag_attribute (self->parts[TOMO_FRAME_PROJECTION].dset,
                                                    "already_normalised");

  if (path_exists (self->file, "/exchange/theta"))
    {
      guint n = 0;
      g_autofree char *units = NULL;

      loader->angles_deg = read_doubles (loader, self->file, path, "/exchange/theta", &n, &units, error);
      if (loader->angles_deg == NULL)
        return FALSE;
      if (n != loader->n_frames[TOMO_FRAME_PROJECTION])
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "%s: /exchange/theta has %u angles but /exchange/data has %u projections",
                       path, n, loader->n_frames[TOMO_FRAME_PROJECTION]);
          return FALSE;
        }
      if (units != NULL && g_str_has_prefix (units, "rad"))
        for (guint i = 0; i < n; i++)
          loader->angles_deg[i] *= 180.0 / G_PI;
    }

  loader->pixel_size = read_pixel_size (loader, self->file, "/measurement/instrument/detector/actual_pixel_size_x");
  return TRUE;
}

static herr_t
collect_group_names (hid_t             group,
                     const char       *name,
                     const H5L_info_t *info,
                     void             *user_data)
{
  g_ptr_array_add (user_data, g_strdup (name));
  return 0;
}

static void
free_index (gpointer data)
{
  if (data != NULL)
    g_array_unref (data);
}

/* The NXentry whose definition is NXtomo, else the first entry that has a
 * detector with data. */
static char *
find_nxtomo_entry (hid_t file)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  char *fallback = NULL;

  H5Literate (file, H5_INDEX_NAME, H5_ITER_INC, NULL, collect_group_names, names);
  H5Eclear2 (H5E_DEFAULT);

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *def_path = g_strdup_printf ("/%s/definition", name);
      g_autofree char *data_path = g_strdup_printf ("/%s/instrument/detector/data", name);
      g_autofree char *definition = read_string_dataset (file, def_path);

      if (definition != NULL && g_ascii_strcasecmp (definition, "NXtomo") == 0)
        {
          g_free (fallback);
          return g_strdup_printf ("/%s", name);
        }
      if (fallback == NULL && path_exists (file, data_path))
        fallback = g_strdup_printf ("/%s", name);
      /* NXtomo files written without a definition often keep the frames
       * in the NXdata group only: entry/data/data beside an image_key. */
      if (fallback == NULL)
        {
          g_autofree char *nxdata = g_strdup_printf ("/%s/data/data", name);
          g_autofree char *key = g_strdup_printf ("/%s/data/image_key", name);
          g_autofree char *key2 = g_strdup_printf ("/%s/instrument/detector/image_key", name);

          if (path_exists (file, nxdata) && (path_exists (file, key) || path_exists (file, key2)))
            fallback = g_strdup_printf ("/%s", name);
        }
    }

  return fallback;
}

static gboolean
open_nxtomo (Hdf5Loader  *self,
             const char  *entry,
             GError     **error)
{
  TomoScanLoader *loader = &self->parent;
  const char *path = loader->path;
  g_autofree char *data_path = NULL;
  g_autofree char *key_path = NULL;
  g_autofree char *angle_path = NULL;
  g_autofree double *keys = NULL;
  g_autofree double *angles = NULL;
  g_autofree char *angle_units = NULL;
  g_autoptr(GPtrArray) indices = g_ptr_array_new_with_free_func (free_index);
  GArray **index;
  hsize_t dims[3] = { 0, };
  guint n_keys = 0, n_angles = 0, n_frames;
  hid_t dset;

  data_path = g_strdup_printf ("%s/instrument/detector/data", entry);
  if (!path_exists (self->file, data_path))
    {
      g_free (data_path);
      data_path = g_strdup_printf ("%s/data/data", entry);
      if (!path_exists (self->file, data_path))
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_MISSING_DATASET,
                       "%s: NXtomo entry %s has neither instrument/detector/data nor data/data",
                       path, entry);
          return FALSE;
        }
    }

  dset = open_image_dataset (loader, self->file, path, data_path, dims, error);
  if (dset < 0)
    return FALSE;
  self->parts[TOMO_FRAME_PROJECTION].dset = dset;
  n_frames = dims[0];

  key_path = g_strdup_printf ("%s/instrument/detector/image_key", entry);
  if (!path_exists (self->file, key_path))
    {
      g_free (key_path);
      key_path = g_strdup_printf ("%s/data/image_key", entry);
    }
  if (path_exists (self->file, key_path))
    {
      keys = read_doubles (loader, self->file, path, key_path, &n_keys, NULL, error);
      if (keys == NULL)
        return FALSE;
      if (n_keys != n_frames)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "%s: %s has %u values but %s has %u frames",
                       path, key_path, n_keys, data_path, n_frames);
          return FALSE;
        }
    }
  else
    g_clear_pointer (&key_path, g_free);

  for (guint k = 0; k < TOMO_N_FRAME_KINDS; k++)
    g_ptr_array_add (indices, g_array_new (FALSE, FALSE, sizeof (guint)));
  index = (GArray **) indices->pdata;
  for (guint i = 0; i < n_frames; i++)
    {
      double key = keys ? keys[i] : 0.0;

      if (key == 0.0)
        g_array_append_val (index[TOMO_FRAME_PROJECTION], i);
      else if (key == 1.0)
        g_array_append_val (index[TOMO_FRAME_FLAT], i);
      else if (key == 2.0)
        g_array_append_val (index[TOMO_FRAME_DARK], i);
      else if (key != 3.0)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                       "%s: %s[%u] is %g; expected 0 (projection), 1 (flat), 2 (dark) or 3 (invalid)",
                       path, key_path, i, key);
          return FALSE;
        }
    }

  for (guint k = 0; k < TOMO_N_FRAME_KINDS; k++)
    {
      static const char *kinds[] = { "projections", "flats", "darks" };

      loader->n_frames[k] = index[k]->len;
      if (key_path != NULL)
        loader->source[k] = g_strdup_printf ("%s, %s of %s", data_path, kinds[k], key_path);
      else
        loader->source[k] = g_strdup_printf ("%s, no image_key", data_path);
      if (k != TOMO_FRAME_PROJECTION && index[k]->len == 0)
        continue;

      self->parts[k].name = g_strdup (data_path);
      if (k != TOMO_FRAME_PROJECTION)
        self->parts[k].dset = H5Iinc_ref (dset) >= 0 ? dset : -1;
      /* Identity order needs no index list: one hyperslab reads it. */
      if (index[k]->len != n_frames)
        self->parts[k].index = (guint *) g_array_free (g_steal_pointer (&index[k]), FALSE);
    }

  loader->height = dims[1];
  loader->width = dims[2];
  loader->dtype = dtype_from_h5 (dset);

  angle_path = g_strdup_printf ("%s/sample/rotation_angle", entry);
  if (path_exists (self->file, angle_path))
    {
      guint n_proj = loader->n_frames[TOMO_FRAME_PROJECTION];
      const guint *proj = self->parts[TOMO_FRAME_PROJECTION].index;

      angles = read_doubles (loader, self->file, path, angle_path, &n_angles, &angle_units, error);
      if (angles == NULL)
        return FALSE;
      if (n_angles != n_frames && n_angles != n_proj)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "%s: %s has %u angles but %s has %u frames (%u projections)",
                       path, angle_path, n_angles, data_path, n_frames, n_proj);
          return FALSE;
        }
      loader->angles_deg = g_new (double, MAX (n_proj, 1));
      for (guint i = 0; i < n_proj; i++)
        {
          double a = n_angles == n_frames && proj != NULL ? angles[proj[i]] : angles[i];

          if (angle_units != NULL && g_str_has_prefix (angle_units, "rad"))
            a *= 180.0 / G_PI;
          loader->angles_deg[i] = a;
        }
    }

  {
    g_autofree char *px = g_strdup_printf ("%s/instrument/detector/x_pixel_size", entry);
    loader->pixel_size = read_pixel_size (loader, self->file, px);
  }

  return TRUE;
}

static TomoScanLoader *
hdf5_open (const char     *path,
           const void     *image,
           gsize           image_size,
           TomoScanFormat  format,
           GError        **error)
{
  g_autoptr(TomoScanLoader) loader = NULL;
  g_autofree char *entry = NULL;
  Hdf5Loader *self;
  gboolean ok;

  self = _tomo_scan_loader_new (sizeof (Hdf5Loader), &dxchange_class, TOMO_SCAN_FORMAT_DXCHANGE,
                                path);
  self->file = -1;
  for (guint k = 0; k < TOMO_N_FRAME_KINDS; k++)
    {
      self->parts[k].dset = -1;
      self->parts[k].fd = -1;
    }
  loader = &self->parent;

  hdf5_lock_acquire ();

  if (image != NULL)
    {
      hid_t fapl = H5Pcreate (H5P_FILE_ACCESS);

      /* HDF5 copies the image; nothing is written back (no backing store). */
      H5Pset_fapl_core (fapl, 64 * 1024, FALSE);
      H5Pset_file_image (fapl, (void *) image, image_size);
      self->file = H5Fopen (path, H5F_ACC_RDONLY, fapl);
      H5Pclose (fapl);
    }
  else
    self->file = H5Fopen (path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (self->file < 0)
    {
      g_autofree char *msg = hdf5_error_message ();
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "%s is not a readable HDF5 file: %s", path, msg);
      ok = FALSE;
    }
  else if (format != TOMO_SCAN_FORMAT_NXTOMO && path_exists (self->file, "/exchange/data"))
    ok = open_dxchange (self, error);
  else if (format != TOMO_SCAN_FORMAT_DXCHANGE && (entry = find_nxtomo_entry (self->file)) != NULL)
    {
      loader->klass = &nxtomo_class;
      loader->format = TOMO_SCAN_FORMAT_NXTOMO;
      ok = open_nxtomo (self, entry, error);
    }
  else if (format != TOMO_SCAN_FORMAT_NXTOMO && path_exists (self->file, "/exchange")
           && H5Lexists (self->file, "/exchange/data", H5P_DEFAULT) > 0)
    {
      H5L_info_t info = { 0 };
      char target[1024] = "";

      /* The name is there but leads nowhere: say where it points. */
      if (H5Lget_info (self->file, "/exchange/data", &info, H5P_DEFAULT) >= 0
          && info.type != H5L_TYPE_HARD)
        H5Lget_val (self->file, "/exchange/data", target, sizeof target - 1, H5P_DEFAULT);
      if (info.type == H5L_TYPE_EXTERNAL)
        {
          const char *file_name = NULL, *obj_name = NULL;
          unsigned flags;

          H5Lunpack_elink_val (target, info.u.val_size, &flags, &file_name, &obj_name);
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_MISSING_DATASET,
                       "HDF5 file %s: /exchange/data is an external link to %s in %s, "
                       "which cannot be opened", path, obj_name ? obj_name : "?",
                       file_name ? file_name : "?");
        }
      else
        g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_MISSING_DATASET,
                     "HDF5 file %s: /exchange/data is a link that leads nowhere%s%s%s",
                     path, target[0] ? " (to " : "", target, target[0] ? ")" : "");
      ok = FALSE;
    }
  else
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_MISSING_DATASET,
                   format == TOMO_SCAN_FORMAT_DXCHANGE
                   ? "HDF5 file %s has no /exchange/data dataset (Data Exchange)"
                   : format == TOMO_SCAN_FORMAT_NXTOMO
                   ? "HDF5 file %s has no NXtomo entry (a group with definition NXtomo or instrument/detector/data)"
                   : "HDF5 file %s has neither /exchange/data (Data Exchange) nor an NXtomo entry",
                   path);
      ok = FALSE;
    }

  if (ok && image == NULL)
    direct_setup (self);
  H5Eclear2 (H5E_DEFAULT);
  hdf5_lock_release ();

  if (!ok)
    return NULL;
  return g_steal_pointer (&loader);
}

TomoScanLoader *
_tomo_io_hdf5_open (const char            *path,
                    TomoScanFormat         format,
                    const TomoOpenOptions *options,
                    GError               **error)
{
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND,
                   "HDF5 file %s does not exist", path);
      return NULL;
    }
  return hdf5_open (path, NULL, 0, format, error);
}

TomoScanLoader *
_tomo_io_hdf5_open_image (const void            *data,
                          gsize                  size,
                          const char            *name,
                          TomoScanFormat         format,
                          const TomoOpenOptions *options,
                          GError               **error)
{
  g_return_val_if_fail (data != NULL && name != NULL, NULL);
  return hdf5_open (name, data, size, format, error);
}
