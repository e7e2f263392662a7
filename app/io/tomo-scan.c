/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-scan"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "tomo-error.h"
#include "tomo-memory.h"
#include "tomo-output.h"
#include "tomo-scan-private.h"
#include "tomo-types.h"

#define DEFAULT_CACHE_BYTES ((gsize) 256 * 1024 * 1024)

typedef struct
{
  guint               row;
  GList               link;   /* in lru; data points back here */
  TomoPreprocessStats stats;  /* what repairing this row took */
  float              *data;
} CacheEntry;

struct _TomoScan
{
  GObject parent_instance;

  TomoScanLoader *loader;
  TomoOpenOptions options;
  char           *angles_path;

  double         *angles;     /* radians */
  gboolean        angles_from_file;

  /* Guards the loader and the cache: loaders are not re-entrant. */
  GMutex          lock;
  GHashTable     *cache;      /* row → CacheEntry */
  GQueue          lru;        /* head = most recently used */
  gsize           cache_bytes;
  gsize           cache_limit;
  /* Rows being read for the cache, outside the lock: a second reader of
   * the same row waits on cache_cond instead of reading it again. */
  GHashTable     *in_flight;
  GCond           cache_cond;
  /* Bumped by _tomo_scan_invalidate(): a row read under an older
   * generation is handed to its reader but not cached. */
  guint64         cache_generation;
  guint64         n_row_reads; /* projection rows read from the file */
  guint64         n_direct_reads; /* of those, by read_rows_direct() */
};

typedef struct _DerivedLoader DerivedLoader;
static const TomoScanLoaderClass derived_class;
static gboolean derived_read (DerivedLoader *d, guint row, float *out,
                              TomoPreprocessStats *stats, GError **error);

G_DEFINE_FINAL_TYPE (TomoScan, tomo_scan, G_TYPE_OBJECT)

static void
cache_entry_free (gpointer data)
{
  CacheEntry *entry = data;

  g_free (entry->data);
  g_free (entry);
}

static void
tomo_scan_finalize (GObject *object)
{
  TomoScan *self = TOMO_SCAN (object);

  g_clear_pointer (&self->cache, g_hash_table_unref);
  g_clear_pointer (&self->in_flight, g_hash_table_unref);
  g_queue_init (&self->lru);
  g_clear_pointer (&self->loader, _tomo_scan_loader_free);
  g_clear_pointer (&self->angles, g_free);
  g_clear_pointer (&self->angles_path, g_free);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cache_cond);

  G_OBJECT_CLASS (tomo_scan_parent_class)->finalize (object);
}

static void
tomo_scan_class_init (TomoScanClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tomo_scan_finalize;
}

static void
tomo_scan_init (TomoScan *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->cache_cond);
  self->in_flight = g_hash_table_new (NULL, NULL);
  g_queue_init (&self->lru);
  self->cache = g_hash_table_new_full (NULL, NULL, NULL, cache_entry_free);
}

void
tomo_open_options_init (TomoOpenOptions *options)
{
  g_return_if_fail (options != NULL);

  memset (options, 0, sizeof *options);
  options->format = TOMO_SCAN_FORMAT_AUTO;
  options->raw_dtype = TOMO_DTYPE_FLOAT32;
  options->angle_range_deg = 180.0;
}

static const struct
{
  const char    *name;
  TomoScanFormat format;
} format_names[] = {
  { "auto", TOMO_SCAN_FORMAT_AUTO },
  { "dxchange", TOMO_SCAN_FORMAT_DXCHANGE },
  { "dx", TOMO_SCAN_FORMAT_DXCHANGE },
  { "nxtomo", TOMO_SCAN_FORMAT_NXTOMO },
  { "nexus", TOMO_SCAN_FORMAT_NXTOMO },
  { "tiff", TOMO_SCAN_FORMAT_TIFF },
  { "tif", TOMO_SCAN_FORMAT_TIFF },
  { "raw", TOMO_SCAN_FORMAT_RAW },
};

gboolean
tomo_scan_format_from_string (const char     *name,
                              TomoScanFormat *format,
                              GError        **error)
{
  g_return_val_if_fail (format != NULL, FALSE);

  for (guint i = 0; name != NULL && i < G_N_ELEMENTS (format_names); i++)
    if (g_ascii_strcasecmp (name, format_names[i].name) == 0)
      {
        *format = format_names[i].format;
        return TRUE;
      }

  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
               "Unknown scan format “%s” (expected auto, dxchange, nxtomo, tiff or raw)",
               name ? name : "(null)");
  return FALSE;
}

static const char *const dtype_names[] = {
  [TOMO_DTYPE_UINT8] = "uint8",
  [TOMO_DTYPE_UINT16] = "uint16",
  [TOMO_DTYPE_UINT32] = "uint32",
  [TOMO_DTYPE_FLOAT32] = "float32",
  [TOMO_DTYPE_FLOAT64] = "float64",
  [TOMO_DTYPE_INT8] = "int8",
  [TOMO_DTYPE_INT16] = "int16",
  [TOMO_DTYPE_INT32] = "int32",
  [TOMO_DTYPE_FLOAT16] = "float16",
};

gboolean
tomo_dtype_from_string (const char *name,
                        TomoDType  *dtype,
                        GError    **error)
{
  static const struct { const char *alias; TomoDType dtype; } aliases[] = {
    { "u8", TOMO_DTYPE_UINT8 }, { "u16", TOMO_DTYPE_UINT16 },
    { "u32", TOMO_DTYPE_UINT32 }, { "f32", TOMO_DTYPE_FLOAT32 },
    { "float", TOMO_DTYPE_FLOAT32 }, { "f64", TOMO_DTYPE_FLOAT64 },
    { "double", TOMO_DTYPE_FLOAT64 },
  };

  guint i;

  g_return_val_if_fail (dtype != NULL, FALSE);

  if (_tomo_name_lookup (dtype_names, G_N_ELEMENTS (dtype_names), name, &i))
    {
      *dtype = i;
      return TRUE;
    }
  for (i = 0; name != NULL && i < G_N_ELEMENTS (aliases); i++)
    if (g_ascii_strcasecmp (name, aliases[i].alias) == 0)
      {
        *dtype = aliases[i].dtype;
        return TRUE;
      }

  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
               "Unknown data type “%s” (expected uint8, uint16, uint32, float32 or float64)",
               name ? name : "(null)");
  return FALSE;
}

const char *
tomo_dtype_to_string (TomoDType dtype)
{
  return _tomo_name_of (dtype_names, G_N_ELEMENTS (dtype_names), dtype);
}

gsize
_tomo_dtype_size (TomoDType dtype)
{
  switch (dtype)
    {
    case TOMO_DTYPE_UINT8: return 1;
    case TOMO_DTYPE_UINT16: return 2;
    case TOMO_DTYPE_UINT32: return 4;
    case TOMO_DTYPE_FLOAT32: return 4;
    case TOMO_DTYPE_FLOAT64: return 8;
    case TOMO_DTYPE_INT8: return 1;
    case TOMO_DTYPE_INT16: return 2;
    case TOMO_DTYPE_INT32: return 4;
    case TOMO_DTYPE_FLOAT16: return 2;
    default: return 0;
    }
}

static float
half_to_float (guint16 h)
{
  guint sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;

  if (exp == 0)
    v = ldexpf ((float) mant, -24);               /* zero and subnormals */
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = ldexpf ((float) (mant | 0x400), (int) exp - 25);
  return sign ? -v : v;
}

/* load16/32/64: 2, 4 or 8 bytes at any alignment, byte-swapped on request. */
#define DEFINE_LOAD(bits)                                               \
  static inline guint##bits                                             \
  load##bits (const guint8 *p, gboolean swap)                           \
  {                                                                     \
    guint##bits v;                                                      \
    memcpy (&v, p, sizeof v);                                           \
    return swap ? GUINT##bits##_SWAP_LE_BE (v) : v;                     \
  }
DEFINE_LOAD (16)
DEFINE_LOAD (32)
DEFINE_LOAD (64)
#undef DEFINE_LOAD

static inline float
float_of_bits (guint32 v)
{
  float f;

  memcpy (&f, &v, sizeof f);
  return f;
}

static inline double
double_of_bits (guint64 v)
{
  double d;

  memcpy (&d, &v, sizeof d);
  return d;
}

void
_tomo_convert_to_float (const void *src,
                        TomoDType   dtype,
                        gboolean    swap,
                        gsize       n,
                        float      *out)
{
  const guint8 *s = src;

  /* A loop per type, the switch outside it: element i is at s + size × i. */
#define CONVERT(value) for (gsize i = 0; i < n; i++) out[i] = (value); break
  switch (dtype)
    {
    case TOMO_DTYPE_UINT8:   CONVERT (s[i]);
    case TOMO_DTYPE_UINT16:  CONVERT (load16 (s + 2 * i, swap));
    case TOMO_DTYPE_UINT32:  CONVERT (load32 (s + 4 * i, swap));
    case TOMO_DTYPE_FLOAT32: CONVERT (float_of_bits (load32 (s + 4 * i, swap)));
    case TOMO_DTYPE_FLOAT64: CONVERT ((float) double_of_bits (load64 (s + 8 * i, swap)));
    case TOMO_DTYPE_INT8:    CONVERT ((gint8) s[i]);
    case TOMO_DTYPE_INT16:   CONVERT ((gint16) load16 (s + 2 * i, swap));
    case TOMO_DTYPE_INT32:   CONVERT ((gint32) load32 (s + 4 * i, swap));
    case TOMO_DTYPE_FLOAT16: CONVERT (half_to_float (load16 (s + 2 * i, swap)));
    default:
      g_assert_not_reached ();
    }
#undef CONVERT
}

/* An angle file is read whole, so its size is checked first: a line per
 * angle of at most ANGLE_LINE_BYTES on average, plus room for a header. */
#define ANGLE_LINE_BYTES 64
#define ANGLE_HEADER_BYTES (64 * 1024)

static void
angle_file_error (const char  *path,
                  int          saved_errno,
                  GError     **error)
{
  g_set_error (error, TOMO_IO_ERROR,
               saved_errno == ENOENT ? TOMO_IO_ERROR_NOT_FOUND : TOMO_IO_ERROR_READ,
               "Cannot read angle file %s: %s", path, g_strerror (saved_errno));
}

/* The text of angle file `path` if it is a regular file that can hold no
 * more than `max_angles` angles; never reads more than that allows. */
static char *
read_angle_text (const char *path,
                 guint       max_angles,
                 gsize      *length,
                 GError    **error)
{
  guint64 limit = (guint64) max_angles * ANGLE_LINE_BYTES + ANGLE_HEADER_BYTES;
  g_autofree char *text = NULL;
  struct stat st;
  gsize got = 0;
  int fd;

  /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
  fd = g_open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK, 0);
  if (fd < 0)
    {
      angle_file_error (path, errno, error);
      return NULL;
    }
  if (fstat (fd, &st) != 0)
    {
      angle_file_error (path, errno, error);
      close (fd);
      return NULL;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "Angle file %s is not a regular file (%s): one angle in degrees per line",
                   path, S_ISDIR (st.st_mode) ? "a folder" : S_ISFIFO (st.st_mode) ? "a FIFO"
                   : S_ISCHR (st.st_mode) || S_ISBLK (st.st_mode) ? "a device" : "not a file");
      close (fd);
      return NULL;
    }
  if ((guint64) st.st_size > limit)
    {
      g_autofree char *size = g_format_size (st.st_size);
      g_autofree char *most = g_format_size (limit);

      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "Angle file %s is too large (%s): %u angles, one per line, need at most %s",
                   path, size, max_angles, most);
      close (fd);
      return NULL;
    }
  /* One byte more than the file had: it may have grown since. */
  text = g_try_malloc ((gsize) st.st_size + 1);
  while (text != NULL && got < (gsize) st.st_size + 1)
    {
      gssize n = read (fd, text + got, (gsize) st.st_size + 1 - got);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          angle_file_error (path, errno, error);
          close (fd);
          return NULL;
        }
      if (n == 0)
        break;
      got += n;
    }
  close (fd);
  if (text == NULL || got > (gsize) st.st_size)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   text == NULL ? "Cannot read angle file %s: out of memory"
                                : "Cannot read angle file %s: it grew while it was read", path);
      return NULL;
    }
  *length = got;
  return g_steal_pointer (&text);
}

/* At most `max_angles` angles (the scan's projections): the file's size is
 * checked against that before it is read. */
static double *
read_angle_file (const char *path,
                 guint       max_angles,
                 guint      *n_angles,
                 GError    **error)
{
  g_autofree char *contents = NULL;
  gsize length = 0;

  contents = read_angle_text (path, max_angles, &length, error);
  if (contents == NULL)
    return NULL;
  return _tomo_parse_angles (path, contents, length, n_angles, error);
}

double *
_tomo_read_angle_file (const char *path,
                       guint      *n_angles,
                       GError    **error)
{
  return read_angle_file (path, TOMO_MAX_ANGLES, n_angles, error);
}

double *
_tomo_parse_angles (const char *name,
                    const char *text,
                    gsize       length,
                    guint      *n_angles,
                    GError    **error)
{
  g_autofree char *contents = NULL;
  g_autoptr(GArray) angles = g_array_new (FALSE, FALSE, sizeof (double));
  g_auto(GStrv) lines = NULL;
  const char *path = name;

  if (memchr (text, '\0', length) != NULL || !g_utf8_validate (text, length, NULL))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "Angle file %s is not a text file (one angle in degrees per line)", name);
      return NULL;
    }
  contents = g_strndup (text, length);
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *line = lines[i];
      char *hash = strchr (line, '#');
      char *end = NULL;
      double value;

      if (hash != NULL)
        *hash = '\0';
      g_strstrip (line);
      if (*line == '\0')
        continue;

      errno = 0;
      value = g_ascii_strtod (line, &end);
      if (end == line || *end != '\0' || errno == ERANGE || !isfinite (value))
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                       "Angle file %s, line %u: “%s” is not a finite number of degrees",
                       path, i + 1, line);
          return NULL;
        }
      if (fabs (value) > TOMO_MAX_ANGLE_DEG)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                       "Angle file %s, line %u: %g° is not a plausible rotation angle "
                       "(more than %g turns)", path, i + 1, value, TOMO_MAX_ANGLE_DEG / 360);
          return NULL;
        }
      g_array_append_val (angles, value);
    }

  /* An empty GArray frees to NULL: that must be an error, not a silent
   * failure (found by fuzzing: an empty angle file failed without a word). */
  if (angles->len == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                   "Angle file %s holds no angles (one angle in degrees per line)", name);
      return NULL;
    }
  *n_angles = angles->len;
  return (double *) g_array_free (g_steal_pointer (&angles), FALSE);
}

gpointer
_tomo_scan_loader_new (gsize                      size,
                       const TomoScanLoaderClass *klass,
                       TomoScanFormat             format,
                       const char                *path)
{
  TomoScanLoader *loader = g_malloc0 (size);

  g_assert (size >= sizeof (TomoScanLoader));
  loader->klass = klass;
  loader->format = format;
  loader->path = g_strdup (path);
  return loader;
}

void
_tomo_scan_loader_free (TomoScanLoader *loader)
{
  if (loader == NULL)
    return;

  g_free (loader->path);
  g_free (loader->angles_deg);
  for (guint k = 0; k < TOMO_N_FRAME_KINDS; k++)
    g_free (loader->source[k]);
  g_clear_pointer (&loader->inputs, g_ptr_array_unref);
  if (loader->input_ids != NULL)
    {
      for (guint i = 0; i < loader->input_ids->len; i++)
        tomo_output_release_input (&g_array_index (loader->input_ids, TomoInputId, i));
      g_array_unref (loader->input_ids);
    }
  loader->klass->free (loader);
}

gboolean
_tomo_scan_check_memory (const char *file,
                         const char *dataset,
                         guint64     n_frames,
                         guint64     height,
                         guint64     width,
                         GError    **error)
{
  guint64 rows, filtered, slice, total = G_MAXUINT64;
  g_autofree char *what = NULL;

  /* One row of every frame three times (file type, float, preprocessed),
   * its filtered copy padded to at least twice the width as complex
   * numbers, and the square slice with a spare. */
  if (tomo_size_mul3 (n_frames, width, 3 * sizeof (float), &rows)
      && tomo_size_mul3 (n_frames, width, 4 * sizeof (float), &filtered)
      && tomo_size_mul3 (width, width, 2 * sizeof (float), &slice)
      && g_uint64_checked_add (&total, rows, filtered)
      && g_uint64_checked_add (&total, total, slice))
    {
      if (total <= tomo_memory_get_limit ())
        return TRUE;
    }
  else
    total = G_MAXUINT64;
  what = g_strdup_printf ("%s: %s of %" G_GUINT64_FORMAT " frames × %" G_GUINT64_FORMAT
                          " rows × %" G_GUINT64_FORMAT " columns (one row reconstructed)",
                          file, dataset, n_frames, height, width);
  return tomo_memory_check (total, what, error);
}

void
_tomo_scan_loader_add_input (TomoScanLoader *loader,
                             const char     *path)
{
  TomoInputId id;

  if (path == NULL || !tomo_output_register_input (path, &id))
    return;
  if (loader->inputs == NULL)
    {
      loader->inputs = g_ptr_array_new_with_free_func (g_free);
      g_ptr_array_add (loader->inputs, NULL);
      loader->input_ids = g_array_new (FALSE, FALSE, sizeof (TomoInputId));
    }
  g_array_append_val (loader->input_ids, id);
  /* Kept NULL-terminated: the array is handed out as a string vector. */
  g_ptr_array_index (loader->inputs, loader->inputs->len - 1) = g_strdup (path);
  g_ptr_array_add (loader->inputs, NULL);
}

const char * const *
tomo_scan_get_input_files (TomoScan *self)
{
  static const char * const none[] = { NULL };

  g_return_val_if_fail (TOMO_IS_SCAN (self), NULL);
  if (self->loader->inputs == NULL)
    return none;
  return (const char * const *) self->loader->inputs->pdata;
}

static gboolean
has_glob_chars (const char *path)
{
  return strpbrk (path, "*?[") != NULL;
}

static TomoScanLoader *
open_loader (const char            *path,
             const TomoOpenOptions *options,
             GError               **error)
{
  TomoScanFormat format = options->format;
  guint8 magic[4] = { 0, };
  gssize n_read = 0;
  FILE *fp;

  if (format == TOMO_SCAN_FORMAT_RAW)
    return _tomo_io_raw_open (path, options, error);
  if (format == TOMO_SCAN_FORMAT_TIFF)
    return _tomo_io_tiff_open (path, options, error);
  if (format == TOMO_SCAN_FORMAT_DXCHANGE || format == TOMO_SCAN_FORMAT_NXTOMO)
    return _tomo_io_hdf5_open (path, format, options, error);

  if (g_file_test (path, G_FILE_TEST_IS_DIR) ||
      (!g_file_test (path, G_FILE_TEST_EXISTS) && has_glob_chars (path)))
    return _tomo_io_tiff_open (path, options, error);

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND,
                   "Scan %s: no such file or folder", path);
      return NULL;
    }

  fp = g_fopen (path, "rb");
  if (fp == NULL)
    {
      int saved_errno = errno;
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "Cannot open scan %s: %s", path, g_strerror (saved_errno));
      return NULL;
    }
  n_read = fread (magic, 1, sizeof magic, fp);
  fclose (fp);

  if (n_read == 4 &&
      ((magic[0] == 'I' && magic[1] == 'I' && (magic[2] == 42 || magic[2] == 43) && magic[3] == 0) ||
       (magic[0] == 'M' && magic[1] == 'M' && magic[2] == 0 && (magic[3] == 42 || magic[3] == 43))))
    return _tomo_io_tiff_open (path, options, error);

  if (_tomo_io_is_hdf5 (path))
    return _tomo_io_hdf5_open (path, TOMO_SCAN_FORMAT_AUTO, options, error);

  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
               "Scan %s is neither HDF5 (Data Exchange, NXtomo) nor TIFF; "
               "for raw binary data pass the format and dimensions explicitly",
               path);
  return NULL;
}

/* Absurd angles (corrupt data) and scans whose projections all look from
 * one direction (modulo 180°) cannot give a slice: say so. */
static gboolean
check_angles (const double *rad,
              guint         n,
              const char   *source,
              GError      **error)
{
  double first = 0;
  gboolean two = FALSE;

  for (guint i = 0; i < n; i++)
    {
      double deg = rad[i] * 180.0 / G_PI;

      if (!isfinite (deg) || fabs (deg) > TOMO_MAX_ANGLE_DEG)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                       "%s: angle %u (%g°) is not a plausible rotation angle", source, i, deg);
          return FALSE;
        }
      deg = fmod (deg, 180.0);
      if (deg < 0)
        deg += 180.0;
      if (i == 0)
        first = deg;
      else if (fabs (deg - first) > 1e-6 && fabs (fabs (deg - first) - 180.0) > 1e-6)
        two = TRUE;
    }
  /* One projection is a picture, not a scan: it may be described (info),
   * and reconstruction refuses it (tomo_scan_check_reconstructible). */
  if (!two && n > 1)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                   "%s: the %u projection angles give fewer than two distinct directions "
                   "(all %g° modulo 180°): no slice can be reconstructed from them",
                   source, n, first);
      return FALSE;
    }
  return TRUE;
}

TomoScan *
tomo_scan_open (const char            *path,
                const TomoOpenOptions *options,
                GError               **error)
{
  TomoOpenOptions defaults;
  TomoScanLoader *loader;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (options == NULL)
    {
      tomo_open_options_init (&defaults);
      options = &defaults;
    }
  loader = open_loader (path, options, error);
  if (loader == NULL)
    return NULL;
  return _tomo_scan_new_from_loader (loader, options, error);
}

TomoScan *
_tomo_scan_new_from_loader (TomoScanLoader        *loader,
                            const TomoOpenOptions *options,
                            GError               **error)
{
  g_autoptr(TomoScan) self = NULL;
  const char *path = loader->path;
  guint n_proj;

  self = g_object_new (TOMO_TYPE_SCAN, NULL);
  self->options = *options;
  /* The caller's strings may not outlive the scan: keep none of them. */
  self->options.flats = NULL;
  self->options.darks = NULL;
  self->options.angles = NULL;
  /* A file that says its data are line integrals, or normalised already
   * (tomolive's recordings of such live data), opens as if --already-linear
   * or --already-sinogram were given. */
  self->options.already_linear |= loader->already_linear;
  self->options.already_sinogram |= loader->already_normalised;
  self->angles_path = g_strdup (options->angles);
  if (!(self->options.angle_range_deg > 0.0) || !isfinite (self->options.angle_range_deg))
    self->options.angle_range_deg = 180.0;
  self->cache_limit = options->cache_bytes ? options->cache_bytes : DEFAULT_CACHE_BYTES;

  self->loader = loader;
  _tomo_scan_loader_add_input (loader, path);
  _tomo_scan_loader_add_input (loader, self->angles_path);
  _tomo_scan_loader_add_input (loader, options->flats);
  _tomo_scan_loader_add_input (loader, options->darks);

  n_proj = loader->n_frames[TOMO_FRAME_PROJECTION];
  if (n_proj == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Scan %s has no projections (%s)", path,
                   loader->source[TOMO_FRAME_PROJECTION] ? loader->source[TOMO_FRAME_PROJECTION] : "data");
      return NULL;
    }
  if (loader->width == 0 || loader->height == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Scan %s: empty detector (%u × %u pixels)", path,
                   loader->width, loader->height);
      return NULL;
    }
  if (!_tomo_scan_check_memory (path,
                                loader->source[TOMO_FRAME_PROJECTION] ? loader->source[TOMO_FRAME_PROJECTION] : "data",
                                (guint64) n_proj + loader->n_frames[TOMO_FRAME_FLAT] + loader->n_frames[TOMO_FRAME_DARK],
                                loader->height, loader->width, error))
    return NULL;

  if (loader->n_frames[TOMO_FRAME_FLAT] == 0 && !self->options.already_sinogram)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_MISSING_DATASET,
                   "Scan %s has no flat fields (%s); pass --already-sinogram if the data is normalised",
                   path,
                   loader->source[TOMO_FRAME_FLAT] ? loader->source[TOMO_FRAME_FLAT] : "flats");
      return NULL;
    }

  self->angles = g_new (double, n_proj);
  if (self->angles_path != NULL)
    {
      g_autofree double *deg = NULL;
      guint n_angles = 0;

      deg = read_angle_file (self->angles_path, n_proj, &n_angles, error);
      if (deg == NULL)
        return NULL;
      if (n_angles != n_proj)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "Angle file %s has %u angles but scan %s has %u projections",
                       self->angles_path, n_angles, path, n_proj);
          return NULL;
        }
      for (guint i = 0; i < n_proj; i++)
        self->angles[i] = deg[i] * G_PI / 180.0;
      self->angles_from_file = TRUE;
    }
  else if (loader->angles_deg != NULL)
    {
      for (guint i = 0; i < n_proj; i++)
        {
          if (!isfinite (loader->angles_deg[i]))
            {
              g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                           "Scan %s: angle %u is not finite", path, i);
              return NULL;
            }
          self->angles[i] = loader->angles_deg[i] * G_PI / 180.0;
        }
      self->angles_from_file = TRUE;
    }
  else
    {
      /* Endpoint excluded: 0° and 180° are the same line in parallel beam. */
      for (guint i = 0; i < n_proj; i++)
        self->angles[i] = (self->options.angle_range_deg * G_PI / 180.0) * i / n_proj;
    }
  if (!check_angles (self->angles, n_proj,
                     self->angles_path ? self->angles_path
                     : self->angles_from_file ? path : "--angle-range", error))
    return NULL;

  return g_steal_pointer (&self);
}

gboolean
tomo_scan_check_reconstructible (TomoScan *self,
                                 GError  **error)
{
  guint n;

  g_return_val_if_fail (TOMO_IS_SCAN (self), FALSE);

  n = self->loader->n_frames[TOMO_FRAME_PROJECTION];
  if (n < 2)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Scan %s has %u projection: a slice needs projections from at least two "
                   "directions", self->loader->path, n);
      return FALSE;
    }
  return TRUE;
}

const char *
tomo_scan_get_path (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), NULL);
  return self->loader->path;
}

const char *
tomo_scan_get_format_name (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), NULL);
  if (self->loader->klass == &derived_class)
    return tomo_scan_get_format_name (_tomo_scan_get_base (self));
  return self->loader->klass->name;
}

guint
tomo_scan_get_width (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), 0);
  return self->loader->width;
}

guint
tomo_scan_get_height (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), 0);
  return self->loader->height;
}

guint
tomo_scan_get_n_projections (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), 0);
  return self->loader->n_frames[TOMO_FRAME_PROJECTION];
}

guint
tomo_scan_get_n_flats (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), 0);
  return self->loader->n_frames[TOMO_FRAME_FLAT];
}

guint
tomo_scan_get_n_darks (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), 0);
  return self->loader->n_frames[TOMO_FRAME_DARK];
}

TomoDType
tomo_scan_get_dtype (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), TOMO_DTYPE_FLOAT32);
  return self->loader->dtype;
}

const double *
tomo_scan_get_angles (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), NULL);
  return self->angles;
}

double
tomo_scan_get_pixel_size (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), 0.0);
  return self->loader->pixel_size;
}

double
tomo_scan_get_axis_tilt_correction (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), 0.0);
  return self->loader->axis_tilt_deg;
}

void
_tomo_scan_set_axis_tilt (TomoScan *self,
                          double    deg)
{
  g_return_if_fail (TOMO_IS_SCAN (self) && _tomo_scan_get_base (self) != NULL);
  self->loader->axis_tilt_deg = deg;
}

gboolean
tomo_scan_get_angles_from_file (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), FALSE);
  return self->angles_from_file;
}

static gboolean
check_row (TomoScan  *self,
           guint      row,
           GError   **error)
{
  if (row < self->loader->height)
    return TRUE;

  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
               "Scan %s: row %u is out of range (the detector has %u rows)",
               self->loader->path, row, self->loader->height);
  return FALSE;
}

static gboolean
read_frames_locked (TomoScan       *self,
                    TomoFrameKind   kind,
                    guint           row,
                    float          *out,
                    GError        **error)
{
  return self->loader->klass->read_rows (self->loader, kind, row, out, error);
}

/* Averages of the flats and darks of one row; a missing kind gives the
 * neutral value so that the formula needs no special case. */
static gboolean
read_flat_dark_locked (TomoScan            *self,
                       guint                row,
                       float               *flat,
                       float               *dark,
                       TomoPreprocessStats *stats,
                       GError             **error)
{
  guint width = self->loader->width;
  struct { TomoFrameKind kind; float *out; float neutral; } parts[] = {
    { TOMO_FRAME_FLAT, flat, 1.0f },
    { TOMO_FRAME_DARK, dark, 0.0f },
  };

  for (guint i = 0; i < G_N_ELEMENTS (parts); i++)
    {
      guint n = self->loader->n_frames[parts[i].kind];
      g_autofree float *frames = NULL;

      if (parts[i].out == NULL)
        continue;
      if (n == 0)
        {
          for (guint x = 0; x < width; x++)
            parts[i].out[x] = parts[i].neutral;
          continue;
        }

      frames = g_try_new (float, (gsize) n * width);
      if (frames == NULL)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                       "Scan %s: out of memory reading %u frames of row %u",
                       self->loader->path, n, row);
          return FALSE;
        }
      if (!read_frames_locked (self, parts[i].kind, row, frames, error))
        return FALSE;
      tomo_average_frames (frames, n, width, parts[i].out, stats);
    }

  return TRUE;
}

static void
cache_trim_locked (TomoScan *self)
{
  while (self->cache_bytes > self->cache_limit && self->lru.tail != NULL)
    {
      CacheEntry *victim = self->lru.tail->data;

      g_queue_unlink (&self->lru, &victim->link);
      self->cache_bytes -= (gsize) self->loader->n_frames[TOMO_FRAME_PROJECTION] *
                           self->loader->width * sizeof (float);
      g_hash_table_remove (self->cache, GUINT_TO_POINTER (victim->row));
    }
}

/* The file part of a sinogram row: raw projections into `out` and, unless
 * the data is already normalised, the row's averaged flat and dark. */
static gboolean
read_row_locked (TomoScan            *self,
                 guint                row,
                 float               *out,
                 float               *flat,
                 float               *dark,
                 TomoPreprocessStats *stats,
                 GError             **error)
{
  self->n_row_reads++;
  if (!read_frames_locked (self, TOMO_FRAME_PROJECTION, row, out, error))
    return FALSE;
  return self->options.already_sinogram || read_flat_dark_locked (self, row, flat, dark, stats, error);
}

/* An isolated dead pixel is clamped and counted; a row where most of the
 * flat is not above the dark means the flats are wrong. */
static gboolean
check_flat_dark (TomoScan    *self,
                 guint        row,
                 const float *flat,
                 const float *dark,
                 GError     **error)
{
  guint width = self->loader->width;
  guint n_bad = 0;

  for (guint x = 0; x < width; x++)
    if (!(flat[x] - dark[x] > 0.0f))
      n_bad++;
  if (n_bad * 2 > width)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                   "Scan %s: flat field (%s) is not above the dark field (%s) "
                   "in %u of %u pixels of row %u",
                   self->loader->path,
                   self->loader->source[TOMO_FRAME_FLAT],
                   self->loader->source[TOMO_FRAME_DARK] ? self->loader->source[TOMO_FRAME_DARK] : "none",
                   n_bad, width, row);
      return FALSE;
    }
  return TRUE;
}

/* The arithmetic part, on values read by read_row_locked(); needs no lock. */
static gboolean
preprocess_row (TomoScan            *self,
                guint                row,
                float               *out,
                const float         *flat,
                const float         *dark,
                TomoPreprocessStats *stats,
                GError             **error)
{
  guint width = self->loader->width;
  guint n_proj = self->loader->n_frames[TOMO_FRAME_PROJECTION];
  gboolean normalise = !self->options.already_sinogram;

  if (normalise && !check_flat_dark (self, row, flat, dark, error))
    return FALSE;

  {
    TomoPreprocessStats local = { 0 };
    guint64 n_values = (guint64) n_proj * width;
    TomoFlatField ff = { normalise ? flat : NULL, normalise ? dark : NULL,
                         !self->options.already_linear };

    tomo_preprocess_row (out, n_proj, width, &ff, out, &local);
    /* A few bad pixels are repaired; a row that is mostly NaN or infinite
     * is corrupt data, and a slice from it would be meaningless. */
    if (local.n_nonfinite * 2 > n_values)
      {
        g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                     "Scan %s: %" G_GUINT64_FORMAT " of the %" G_GUINT64_FORMAT
                     " values of row %u (%s) are NaN, infinite or absurdly large: the data are corrupt",
                     self->loader->path, local.n_nonfinite, n_values, row,
                     self->loader->source[TOMO_FRAME_PROJECTION] ? self->loader->source[TOMO_FRAME_PROJECTION] : "data");
        return FALSE;
      }
    if (stats != NULL)
      tomo_preprocess_stats_add (stats, &local);
  }
  return TRUE;
}

gboolean
tomo_scan_read_sinogram (TomoScan            *self,
                         guint                row,
                         float               *out,
                         TomoPreprocessStats *stats,
                         GError             **error)
{
  gsize row_bytes;
  CacheEntry *entry;
  guint64 generation;

  g_return_val_if_fail (TOMO_IS_SCAN (self), FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_row (self, row, error))
    return FALSE;

  row_bytes = (gsize) self->loader->n_frames[TOMO_FRAME_PROJECTION] *
              self->loader->width * sizeof (float);

  g_mutex_lock (&self->lock);
  for (;;)
    {
      entry = g_hash_table_lookup (self->cache, GUINT_TO_POINTER (row));
      if (entry != NULL)
        {
          g_queue_unlink (&self->lru, &entry->link);
          g_queue_push_head_link (&self->lru, &entry->link);
          memcpy (out, entry->data, row_bytes);
          /* The counts describe the data handed out, cached or not. */
          if (stats != NULL)
            tomo_preprocess_stats_add (stats, &entry->stats);
          g_mutex_unlock (&self->lock);
          return TRUE;
        }
      if (!g_hash_table_contains (self->in_flight, GUINT_TO_POINTER (row)))
        break;
      /* Another thread reads this row: take its result (or, if it
       * failed or the cache was invalidated meanwhile, read the row
       * here). */
      g_cond_wait (&self->cache_cond, &self->lock);
    }
  g_hash_table_add (self->in_flight, GUINT_TO_POINTER (row));
  generation = self->cache_generation;
  g_mutex_unlock (&self->lock);

  {
    TomoPreprocessStats row_stats = { 0, };
    /* Only the file read takes the lock: readers of other rows (and
     * cache hits) go on while this row is preprocessed. */
    gboolean ok = tomo_scan_read_sinogram_direct (self, row, out, &row_stats, error);

    g_mutex_lock (&self->lock);
    g_hash_table_remove (self->in_flight, GUINT_TO_POINTER (row));
    if (ok && stats != NULL)
      tomo_preprocess_stats_add (stats, &row_stats);
    /* Invalidated while it was read (new frames of a live scan): the
     * values may predate them, so they go to this caller only; waiters
     * find the row neither cached nor in flight and read it again. */
    if (ok && row_bytes <= self->cache_limit && generation == self->cache_generation)
      {
        entry = g_new0 (CacheEntry, 1);
        entry->row = row;
        entry->stats = row_stats;
        entry->data = g_memdup2 (out, row_bytes);
        entry->link.data = entry;
        g_hash_table_insert (self->cache, GUINT_TO_POINTER (row), entry);
        g_queue_push_head_link (&self->lru, &entry->link);
        self->cache_bytes += row_bytes;
        cache_trim_locked (self);
      }
    g_cond_broadcast (&self->cache_cond);
    g_mutex_unlock (&self->lock);
    return ok;
  }
}

guint64
_tomo_scan_get_n_row_reads (TomoScan *self)
{
  g_autoptr(GMutexLocker) locker = NULL;

  g_return_val_if_fail (TOMO_IS_SCAN (self), 0);

  locker = g_mutex_locker_new (&self->lock);
  return self->n_row_reads;
}

guint64
_tomo_scan_get_n_direct_reads (TomoScan *self)
{
  g_autoptr(GMutexLocker) locker = NULL;

  g_return_val_if_fail (TOMO_IS_SCAN (self), 0);

  locker = g_mutex_locker_new (&self->lock);
  return self->n_direct_reads;
}

gboolean
tomo_scan_read_sinogram_direct (TomoScan            *self,
                                guint                row,
                                float               *out,
                                TomoPreprocessStats *stats,
                                GError             **error)
{
  g_autofree float *flat = NULL;
  g_autofree float *dark = NULL;

  g_return_val_if_fail (TOMO_IS_SCAN (self), FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_row (self, row, error))
    return FALSE;
  /* A derived scan reads its base without taking its own lock: the base
   * has its own, and rows of the base preprocess in parallel. */
  if (self->loader->klass == &derived_class)
    return derived_read ((DerivedLoader *) self->loader, row, out, stats, error);
  flat = g_new (float, self->loader->width);
  dark = g_new (float, self->loader->width);
  if (self->loader->klass->read_rows_direct != NULL
      && tomo_scan_get_raw_dtype (self) == self->loader->dtype)
    {
      /* The projections as tomo_scan_read_raw_row() reads them: without the
       * lock where the file allows (many rows at once: a derived scan's
       * readers, the viewer's prefetch), then made floats here. */
      gsize n = (gsize) self->loader->n_frames[TOMO_FRAME_PROJECTION] * self->loader->width;
      g_autofree void *raw = self->loader->dtype == TOMO_DTYPE_FLOAT32
                             ? NULL : g_try_malloc (n * _tomo_dtype_size (self->loader->dtype));

      if (self->loader->dtype != TOMO_DTYPE_FLOAT32 && raw == NULL)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                       "Scan %s: out of memory reading row %u", self->loader->path, row);
          return FALSE;
        }
      if (!tomo_scan_read_raw_row (self, row, raw != NULL ? raw : (void *) out, flat, dark, stats,
                                   error))
        return FALSE;
      if (raw != NULL)
        _tomo_convert_to_float (raw, self->loader->dtype, FALSE, n, out);
      return preprocess_row (self, row, out, flat, dark, stats, error);
    }
  g_mutex_lock (&self->lock);
  if (!read_row_locked (self, row, out, flat, dark, stats, error))
    {
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  g_mutex_unlock (&self->lock);
  return preprocess_row (self, row, out, flat, dark, stats, error);
}

TomoDType
tomo_scan_get_raw_dtype (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), TOMO_DTYPE_FLOAT32);

  if (self->loader->klass->read_slab_native != NULL &&
      (self->loader->dtype == TOMO_DTYPE_UINT16 || self->loader->dtype == TOMO_DTYPE_FLOAT32))
    return self->loader->dtype;
  return TOMO_DTYPE_FLOAT32;
}

void
tomo_scan_get_preprocessing (TomoScan *self,
                             gboolean *normalise,
                             gboolean *apply_log)
{
  g_return_if_fail (TOMO_IS_SCAN (self));

  if (normalise != NULL)
    *normalise = !self->options.already_sinogram;
  if (apply_log != NULL)
    *apply_log = !self->options.already_linear;
}

gboolean
tomo_scan_read_raw_row (TomoScan            *self,
                        guint                row,
                        void                *out,
                        float               *flat,
                        float               *dark,
                        TomoPreprocessStats *stats,
                        GError             **error)
{
  gboolean ok, direct = FALSE;

  g_return_val_if_fail (TOMO_IS_SCAN (self), FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (self->options.already_sinogram || (flat != NULL && dark != NULL), FALSE);

  if (!check_row (self, row, error))
    return FALSE;
  /* Derived rows are line integrals already (float32, no flat or dark),
   * read without this scan's lock as in tomo_scan_read_sinogram_direct(). */
  if (self->loader->klass == &derived_class)
    return derived_read ((DerivedLoader *) self->loader, row, out, stats, error);
  /* The projections without the lock where the loader can (many reader
   * threads at once); the flats and darks under it. */
  if (self->loader->klass->read_rows_direct != NULL &&
      tomo_scan_get_raw_dtype (self) == self->loader->dtype &&
      !self->loader->klass->read_rows_direct (self->loader, TOMO_FRAME_PROJECTION, row, out,
                                              &direct, error))
    return FALSE;
  g_mutex_lock (&self->lock);
  self->n_row_reads++;
  self->n_direct_reads += direct;
  if (direct)
    ok = TRUE;
  else if (self->loader->klass->read_slab_native != NULL &&
           tomo_scan_get_raw_dtype (self) == self->loader->dtype)
    ok = self->loader->klass->read_slab_native (self->loader, TOMO_FRAME_PROJECTION, row, 1, out,
                                                error);
  else
    ok = read_frames_locked (self, TOMO_FRAME_PROJECTION, row, out, error);
  ok = ok && (self->options.already_sinogram ||
              read_flat_dark_locked (self, row, flat, dark, stats, error));
  g_mutex_unlock (&self->lock);
  return ok && (self->options.already_sinogram || check_flat_dark (self, row, flat, dark, error));
}

/* One hyperslab of n_rows rows (n_proj × n_rows × width as the file lays
 * them) made into n_rows planes of n_proj × width. */
static gboolean
read_slab_locked (TomoScan *self,
                  guint     row,
                  guint     n_rows,
                  guchar   *out,
                  GError  **error)
{
  gsize elem = _tomo_dtype_size (self->loader->dtype);
  gsize line = (gsize) self->loader->width * elem;
  guint n_proj = self->loader->n_frames[TOMO_FRAME_PROJECTION];
  g_autofree guchar *slab = g_try_malloc ((gsize) n_proj * n_rows * line);

  if (slab == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "Scan %s: out of memory reading rows %u to %u", self->loader->path, row,
                   row + n_rows - 1);
      return FALSE;
    }
  self->n_row_reads += n_rows;
  if (!self->loader->klass->read_slab_native (self->loader, TOMO_FRAME_PROJECTION, row, n_rows,
                                              slab, error))
    return FALSE;
  for (guint p = 0; p < n_proj; p++)
    for (guint r = 0; r < n_rows; r++)
      memcpy (out + ((gsize) r * n_proj + p) * line, slab + ((gsize) p * n_rows + r) * line, line);
  return TRUE;
}

gboolean
_tomo_scan_read_raw_rows (TomoScan            *self,
                          guint                row,
                          guint                n_rows,
                          void                *out,
                          float               *flat,
                          float               *dark,
                          TomoPreprocessStats *stats,
                          GError             **error)
{
  gsize plane_bytes;
  guint width;
  gboolean ok = TRUE;

  g_return_val_if_fail (TOMO_IS_SCAN (self), FALSE);
  g_return_val_if_fail (out != NULL, FALSE);
  g_return_val_if_fail (self->options.already_sinogram || (flat != NULL && dark != NULL), FALSE);

  if (n_rows == 0 || !check_row (self, row, error)
      || (n_rows > 1 && !check_row (self, row + n_rows - 1, error)))
    return n_rows == 0;
  width = self->loader->width;
  plane_bytes = (gsize) self->loader->n_frames[TOMO_FRAME_PROJECTION] * width
                * _tomo_dtype_size (tomo_scan_get_raw_dtype (self));
  if (n_rows == 1 || self->loader->klass->read_slab_native == NULL
      || tomo_scan_get_raw_dtype (self) != self->loader->dtype)
    {
      for (guint r = 0; r < n_rows && ok; r++)
        ok = tomo_scan_read_raw_row (self, row + r, (guchar *) out + r * plane_bytes,
                                     flat != NULL ? flat + (gsize) r * width : NULL,
                                     dark != NULL ? dark + (gsize) r * width : NULL,
                                     stats != NULL ? &stats[r] : NULL, error);
      return ok;
    }
  g_mutex_lock (&self->lock);
  ok = read_slab_locked (self, row, n_rows, out, error);
  for (guint r = 0; r < n_rows && ok && !self->options.already_sinogram; r++)
    ok = read_flat_dark_locked (self, row + r, flat + (gsize) r * width,
                                dark + (gsize) r * width, stats != NULL ? &stats[r] : NULL,
                                error);
  g_mutex_unlock (&self->lock);
  for (guint r = 0; r < n_rows && ok && !self->options.already_sinogram; r++)
    ok = check_flat_dark (self, row + r, flat + (gsize) r * width, dark + (gsize) r * width,
                          error);
  return ok;
}

guint
_tomo_scan_get_chunk_rows (TomoScan *self)
{
  g_autoptr(GMutexLocker) locker = NULL;

  g_return_val_if_fail (TOMO_IS_SCAN (self), 0);

  if (self->loader->klass->chunk_rows == NULL)
    return 0;
  locker = g_mutex_locker_new (&self->lock);
  return self->loader->klass->chunk_rows (self->loader);
}

gboolean
tomo_scan_read_raw_sinogram (TomoScan *self,
                             guint     row,
                             float    *out,
                             GError  **error)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), FALSE);
  g_return_val_if_fail (out != NULL, FALSE);

  return _tomo_scan_read_frames (self, TOMO_FRAME_PROJECTION, row, out, error);
}

gboolean
_tomo_scan_read_frames (TomoScan      *self,
                        TomoFrameKind  kind,
                        guint          row,
                        float         *out,
                        GError       **error)
{
  g_autoptr(GMutexLocker) locker = NULL;

  if (!check_row (self, row, error))
    return FALSE;
  if (self->loader->n_frames[kind] == 0)
    return TRUE;
  locker = g_mutex_locker_new (&self->lock);
  return read_frames_locked (self, kind, row, out, error);
}

void
_tomo_scan_invalidate (TomoScan *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  g_hash_table_remove_all (self->cache);
  g_queue_init (&self->lru);
  self->cache_bytes = 0;
  /* Rows in flight were read before this: they must not be cached. */
  self->cache_generation++;
}

gboolean
tomo_scan_read_flat_dark (TomoScan *self,
                          guint     row,
                          float    *flat,
                          float    *dark,
                          GError  **error)
{
  g_autoptr(GMutexLocker) locker = NULL;

  g_return_val_if_fail (TOMO_IS_SCAN (self), FALSE);

  if (!check_row (self, row, error))
    return FALSE;

  locker = g_mutex_locker_new (&self->lock);
  return read_flat_dark_locked (self, row, flat, dark, NULL, error);
}

void
_tomo_scan_get_cache_usage (TomoScan *self,
                            guint    *n_rows,
                            gsize    *bytes,
                            gsize    *limit)
{
  g_autoptr(GMutexLocker) locker = NULL;

  g_return_if_fail (TOMO_IS_SCAN (self));

  locker = g_mutex_locker_new (&self->lock);
  if (n_rows)
    *n_rows = g_hash_table_size (self->cache);
  if (bytes)
    *bytes = self->cache_bytes;
  if (limit)
    *limit = self->cache_limit;
}

/* --- derived scans --------------------------------------------------------- */

struct _DerivedLoader
{
  TomoScanLoader        parent;
  TomoScan             *base;
  TomoScanRowTransform  transform;
  gpointer              user_data;
  GDestroyNotify        destroy;
};

static gboolean
derived_read (DerivedLoader       *d,
              guint                row,
              float               *out,
              TomoPreprocessStats *stats,
              GError             **error)
{
  gsize n = (gsize) tomo_scan_get_n_projections (d->base) * tomo_scan_get_width (d->base);
  g_autofree float *in = g_try_new (float, n);

  if (in == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "Scan %s: out of memory reading row %u", d->parent.path, row);
      return FALSE;
    }
  if (!tomo_scan_read_sinogram_direct (d->base, row, in, stats, error))
    return FALSE;
  return d->transform (d->user_data, row, in, out, error);
}

static gboolean
derived_read_rows (TomoScanLoader *loader,
                   TomoFrameKind   kind,
                   guint           row,
                   float          *out,
                   GError        **error)
{
  /* Only projections exist: the rows are already line integrals. */
  g_return_val_if_fail (kind == TOMO_FRAME_PROJECTION, FALSE);
  return derived_read ((DerivedLoader *) loader, row, out, NULL, error);
}

static void
derived_free (TomoScanLoader *loader)
{
  DerivedLoader *d = (DerivedLoader *) loader;

  if (d->destroy != NULL)
    d->destroy (d->user_data);
  g_clear_object (&d->base);
  g_free (d);
}

static const TomoScanLoaderClass derived_class = {
  .name = "derived",
  .read_rows = derived_read_rows,
  .free = derived_free,
};

TomoScan *
_tomo_scan_new_derived (TomoScan             *base,
                        guint                 width,
                        guint                 n_proj,
                        const double         *angles,
                        TomoScanRowTransform  transform,
                        gpointer              user_data,
                        GDestroyNotify        destroy,
                        GError              **error)
{
  DerivedLoader *d;
  TomoScanLoader *l;
  TomoOpenOptions options;
  const char * const *inputs;

  g_return_val_if_fail (TOMO_IS_SCAN (base), NULL);
  g_return_val_if_fail (transform != NULL && angles != NULL, NULL);

  d = _tomo_scan_loader_new (sizeof (DerivedLoader), &derived_class, base->loader->format,
                             base->loader->path);
  d->base = g_object_ref (base);
  d->transform = transform;
  d->user_data = user_data;
  d->destroy = destroy;
  l = &d->parent;
  l->width = width;
  l->height = base->loader->height;
  l->n_frames[TOMO_FRAME_PROJECTION] = n_proj;
  l->dtype = TOMO_DTYPE_FLOAT32;
  l->pixel_size = base->loader->pixel_size;
  l->axis_tilt_deg = base->loader->axis_tilt_deg;
  l->angles_deg = g_new (double, n_proj);
  for (guint i = 0; i < n_proj; i++)
    l->angles_deg[i] = angles[i] * 180.0 / G_PI;
  for (guint k = 0; k < TOMO_N_FRAME_KINDS; k++)
    l->source[k] = g_strdup (base->loader->source[k]);
  inputs = tomo_scan_get_input_files (base);
  for (guint i = 0; inputs[i] != NULL; i++)
    _tomo_scan_loader_add_input (l, inputs[i]);

  options = base->options;
  options.already_sinogram = TRUE;
  options.already_linear = TRUE;
  options.angles = NULL;
  options.flats = NULL;
  options.darks = NULL;
  options.cache_bytes = base->cache_limit;
  return _tomo_scan_new_from_loader (l, &options, error);
}

TomoScan *
_tomo_scan_get_base (TomoScan *self)
{
  g_return_val_if_fail (TOMO_IS_SCAN (self), NULL);
  if (self->loader->klass != &derived_class)
    return NULL;
  return ((DerivedLoader *) self->loader)->base;
}

TomoScanRowTransform
_tomo_scan_get_transform (TomoScan *self,
                          gpointer *user_data)
{
  DerivedLoader *d;

  g_return_val_if_fail (TOMO_IS_SCAN (self), NULL);
  if (self->loader->klass != &derived_class)
    return NULL;
  d = (DerivedLoader *) self->loader;
  if (user_data != NULL)
    *user_data = d->user_data;
  return d->transform;
}

char *
tomo_scan_describe (TomoScan *self)
{
  GString *s;
  TomoScanLoader *l;
  guint n_proj;
  double first, last;

  g_return_val_if_fail (TOMO_IS_SCAN (self), NULL);

  l = self->loader;
  n_proj = l->n_frames[TOMO_FRAME_PROJECTION];
  first = self->angles[0] * 180.0 / G_PI;
  last = self->angles[n_proj - 1] * 180.0 / G_PI;

  s = g_string_new (NULL);
  g_string_append_printf (s, "Path:        %s\n", l->path);
  g_string_append_printf (s, "Format:      %s\n", l->klass->name);
  g_string_append_printf (s, "Projections: %u", n_proj);
  if (l->source[TOMO_FRAME_PROJECTION])
    g_string_append_printf (s, " (%s)", l->source[TOMO_FRAME_PROJECTION]);
  g_string_append_printf (s, "\nFlats:       %u", l->n_frames[TOMO_FRAME_FLAT]);
  if (l->source[TOMO_FRAME_FLAT] && l->n_frames[TOMO_FRAME_FLAT])
    g_string_append_printf (s, " (%s)", l->source[TOMO_FRAME_FLAT]);
  g_string_append_printf (s, "\nDarks:       %u", l->n_frames[TOMO_FRAME_DARK]);
  if (l->source[TOMO_FRAME_DARK] && l->n_frames[TOMO_FRAME_DARK])
    g_string_append_printf (s, " (%s)", l->source[TOMO_FRAME_DARK]);
  g_string_append_printf (s, "\nDetector:    %u × %u pixels (width × height)\n",
                          l->width, l->height);
  g_string_append_printf (s, "Data type:   %s\n", tomo_dtype_to_string (l->dtype));
  g_string_append_printf (s, "Angles:      %.6g° to %.6g° over %u projections (%s)\n",
                          first, last, n_proj,
                          self->angles_from_file
                            ? (self->angles_path ? self->angles_path : "from the file")
                            : "evenly spaced, not in the file");
  if (l->pixel_size > 0.0)
    g_string_append_printf (s, "Pixel size:  %.6g µm\n", l->pixel_size * 1e6);
  else
    g_string_append (s, "Pixel size:  unknown\n");
  if (self->options.already_sinogram)
    g_string_append (s, "Preprocess:  already normalised (no flat/dark division)\n");
  if (self->options.already_linear)
    g_string_append (s, "Preprocess:  already line integrals (no −log)\n");

  return g_string_free (s, FALSE);
}
