/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-io-tiff"

#include "config.h"

#include <stdarg.h>
#include <string.h>

#include <tiffio.h>

#include <sys/stat.h>

#include <glib/gstdio.h>

#include "tomo-error.h"
#include "tomo-memory.h"
#include "tomo-scan-private.h"

typedef struct
{
  char  *file;
  guint  page;
} Frame;

typedef struct
{
  GPtrArray *files;    /* sorted paths */
  Frame     *frames;
  guint      n_frames;
  TomoDType  dtype;    /* flats may be stored unlike the projections */
  gboolean   one_page_per_file;  /* taken from the first and last files */
} Stack;

typedef struct
{
  TomoScanLoader parent;

  Stack stacks[TOMO_N_FRAME_KINDS];
} TiffLoader;

/* libtiff's global handlers print to stderr; per-file handlers let us put
 * its message into the GError instead.  One handler for both: its user data
 * is the slot (errors->message, errors->warning) that keeps the first
 * message.  A warning is kept in case no error follows: a failed read then
 * has a reason. */
static int
tiff_keep_first_handler (TIFF       *tif,
                         void       *user_data,
                         const char *module,
                         const char *fmt,
                         va_list     ap)
{
  char **slot = user_data;

  if (*slot == NULL)
    *slot = g_strdup_vprintf (fmt, ap);
  return 1;
}

TIFF *
_tomo_tiff_open (const char     *path,
                 const char     *mode,
                 TomoTiffErrors *errors)
{
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();
  TIFF *tif;

  TIFFOpenOptionsSetErrorHandlerExtR (opts, tiff_keep_first_handler, &errors->message);
  TIFFOpenOptionsSetWarningHandlerExtR (opts, tiff_keep_first_handler, &errors->warning);
  tif = TIFFOpenExt (path, mode, opts);
  TIFFOpenOptionsFree (opts);
  return tif;
}

const char *
_tomo_tiff_errors_take (TomoTiffErrors *errors)
{
  g_free (errors->last);
  if (errors->message != NULL)
    errors->last = g_steal_pointer (&errors->message);
  else if (errors->warning != NULL)
    errors->last = g_strdup_printf ("libtiff warned: %s", errors->warning);
  else
    errors->last = g_strdup ("the data end early or are invalid (libtiff gave no reason)");
  g_clear_pointer (&errors->warning, g_free);
  return errors->last;
}

void
_tomo_tiff_errors_clear (TomoTiffErrors *errors)
{
  g_clear_pointer (&errors->message, g_free);
  g_clear_pointer (&errors->warning, g_free);
  g_clear_pointer (&errors->last, g_free);
}

/* The sample formats a page may have, as TomoDType. */
static const struct
{
  guint16   format;
  guint16   bits;
  TomoDType dtype;
} tiff_dtypes[] = {
  { SAMPLEFORMAT_UINT, 8, TOMO_DTYPE_UINT8 },
  { SAMPLEFORMAT_UINT, 16, TOMO_DTYPE_UINT16 },
  { SAMPLEFORMAT_UINT, 32, TOMO_DTYPE_UINT32 },
  { SAMPLEFORMAT_IEEEFP, 16, TOMO_DTYPE_FLOAT16 },
  { SAMPLEFORMAT_IEEEFP, 32, TOMO_DTYPE_FLOAT32 },
  { SAMPLEFORMAT_IEEEFP, 64, TOMO_DTYPE_FLOAT64 },
  { SAMPLEFORMAT_INT, 8, TOMO_DTYPE_INT8 },
  { SAMPLEFORMAT_INT, 16, TOMO_DTYPE_INT16 },
  { SAMPLEFORMAT_INT, 32, TOMO_DTYPE_INT32 },
};

gboolean
_tomo_tiff_page_info (TIFF          *tif,
                      const char    *path,
                      guint          page,
                      TomoTiffPage  *info,
                      GError       **error)
{
  guint32 w = 0, h = 0;
  guint16 bps = 1, fmt = SAMPLEFORMAT_UINT, spp = 1, kind;

  TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &h);
  TIFFGetFieldDefaulted (tif, TIFFTAG_BITSPERSAMPLE, &bps);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLEFORMAT, &fmt);
  TIFFGetFieldDefaulted (tif, TIFFTAG_SAMPLESPERPIXEL, &spp);

  info->width = w;
  info->height = h;

  if (spp != 1)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "TIFF %s, page %u: %u samples per pixel; only greyscale images are supported",
                   path, page, spp);
      return FALSE;
    }
  if (w == 0 || h == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "TIFF %s, page %u: empty image (%u × %u)", path, page, w, h);
      return FALSE;
    }

  /* Untyped samples read as unsigned. */
  kind = fmt == SAMPLEFORMAT_VOID ? SAMPLEFORMAT_UINT : fmt;
  for (guint i = 0; i < G_N_ELEMENTS (tiff_dtypes); i++)
    if (tiff_dtypes[i].format == kind && tiff_dtypes[i].bits == bps)
      {
        info->dtype = tiff_dtypes[i].dtype;
        return TRUE;
      }
  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
               "TIFF %s, page %u: unsupported sample format (%u-bit, format %u); "
               "expected 8/16/32-bit integers or 16/32/64-bit floats",
               path, page, bps, fmt);
  return FALSE;
}

static gboolean
out_of_memory (const char *path,
               guint       page,
               gsize       bytes,
               GError    **error)
{
  g_autofree char *size = tomo_memory_format (bytes);

  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
               "TIFF %s, page %u: out of memory for a %s block", path, page, size);
  return FALSE;
}

/* A header may declare any strip or tile size: before allocating one,
 * compare it with the memory budget, and its stored bytes with the file. */
static gboolean
check_strile (TIFF       *tif,
              const char *path,
              guint       page,
              const char *kind,
              guint32     index,
              guint       row,
              tmsize_t    decoded,
              GError    **error)
{
  g_autofree char *what = NULL;
  guint64 stored, offset;
  GStatBuf st;

  what = g_strdup_printf ("TIFF %s, page %u: one %s of %" G_GINT64_FORMAT " bytes",
                          path, page, kind, (gint64) decoded);
  if (!tomo_memory_check (decoded, what, error))
    return FALSE;
  stored = TIFFGetStrileByteCount (tif, index);
  offset = TIFFGetStrileOffset (tif, index);
  if (g_stat (path, &st) == 0 && S_ISREG (st.st_mode)
      && (offset > (guint64) st.st_size || stored > (guint64) st.st_size - offset))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                   "TIFF %s, page %u: cannot read row %u: %s %u declares %" G_GUINT64_FORMAT
                   " bytes at offset %" G_GUINT64_FORMAT " but the file has only %"
                   G_GUINT64_FORMAT " bytes (truncated or corrupt)",
                   path, page, row, kind, index, stored, offset, (guint64) st.st_size);
      return FALSE;
    }
  return TRUE;
}

/* Row `row` of the current page into `out`, converted to float.  Reads only
 * the strip or tiles that hold the row. */
gboolean
_tomo_tiff_read_row (TIFF          *tif,
                     const char    *path,
                     guint          page,
                     TomoTiffErrors *errors,
                     TomoDType      dtype,
                     guint          width,
                     guint          row,
                     float         *out,
                     GError       **error)
{
  gsize elem = _tomo_dtype_size (dtype);
  gsize row_bytes = (gsize) width * elem;

  if (TIFFIsTiled (tif))
    {
      guint32 tw = 0, th = 0;
      tmsize_t tile_size = TIFFTileSize (tif);
      g_autofree guint8 *tile = NULL;

      TIFFGetField (tif, TIFFTAG_TILEWIDTH, &tw);
      TIFFGetField (tif, TIFFTAG_TILELENGTH, &th);
      if (tw == 0 || th == 0 || tile_size <= 0 || (gsize) tile_size < (gsize) tw * th * elem)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                       "TIFF %s, page %u: invalid tile size %u × %u", path, page, tw, th);
          return FALSE;
        }
      if (!check_strile (tif, path, page, "tile", TIFFComputeTile (tif, 0, row, 0, 0), row,
                         tile_size, error))
        return FALSE;
      tile = g_try_malloc (tile_size);
      if (tile == NULL)
        return out_of_memory (path, page, tile_size, error);
      for (guint32 x0 = 0; x0 < width; x0 += tw)
        {
          guint n = MIN (tw, width - x0);
          ttile_t t = TIFFComputeTile (tif, x0, row, 0, 0);

          if (TIFFReadEncodedTile (tif, t, tile, tile_size) < 0)
            {
              g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                           "TIFF %s, page %u: cannot read the tile of row %u, column %u "
                           "(file truncated or corrupt?): %s",
                           path, page, row, x0, _tomo_tiff_errors_take (errors));
              return FALSE;
            }
          _tomo_convert_to_float (tile + ((gsize) (row % th) * tw) * elem, dtype, FALSE, n, out + x0);
        }
      return TRUE;
    }
  else
    {
      guint32 rps = 0, height = 0;
      tstrip_t strip = TIFFComputeStrip (tif, row, 0);
      tmsize_t strip_size = TIFFStripSize (tif);
      g_autofree guint8 *buffer = NULL;
      tmsize_t got;
      gsize needed;

      TIFFGetFieldDefaulted (tif, TIFFTAG_ROWSPERSTRIP, &rps);
      TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &height);
      /* "All rows in one strip" is written as 2^32 − 1. */
      if (rps == 0 || rps > height)
        rps = height;
      needed = ((gsize) (row - (gsize) strip * rps) + 1) * row_bytes;
      if (strip_size <= 0 || strip >= TIFFNumberOfStrips (tif))
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                       "TIFF %s, page %u: no strip holds row %u", path, page, row);
          return FALSE;
        }
      if (!check_strile (tif, path, page, "strip", strip, row, strip_size, error))
        return FALSE;
      buffer = g_try_malloc (strip_size);
      if (buffer == NULL)
        return out_of_memory (path, page, strip_size, error);
      got = TIFFReadEncodedStrip (tif, strip, buffer, strip_size);
      if (got < 0 || (gsize) got < needed)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                       "TIFF %s, page %u: cannot read row %u (file truncated or corrupt?): %s",
                       path, page, row,
                       got < 0 ? _tomo_tiff_errors_take (errors) : "strip shorter than the image");
          return FALSE;
        }
      _tomo_convert_to_float (buffer + needed - row_bytes, dtype, FALSE, width, out);
      return TRUE;
    }
}

static int
natural_compare (const char *a,
                 const char *b)
{
  const char *a0 = a, *b0 = b;

  while (*a != '\0' && *b != '\0')
    {
      if (g_ascii_isdigit (*a) && g_ascii_isdigit (*b))
        {
          const char *ae, *be;
          gsize la, lb;

          while (*a == '0' && g_ascii_isdigit (a[1]))
            a++;
          while (*b == '0' && g_ascii_isdigit (b[1]))
            b++;
          for (ae = a; g_ascii_isdigit (*ae); ae++);
          for (be = b; g_ascii_isdigit (*be); be++);
          la = ae - a;
          lb = be - b;
          if (la != lb)
            return la < lb ? -1 : 1;
          for (gsize i = 0; i < la; i++)
            if (a[i] != b[i])
              return a[i] < b[i] ? -1 : 1;
          a = ae;
          b = be;
        }
      else
        {
          if (*a != *b)
            return (guchar) *a < (guchar) *b ? -1 : 1;
          a++;
          b++;
        }
    }
  if (*a != *b)
    return (guchar) *a < (guchar) *b ? -1 : 1;
  return strcmp (a0, b0);
}

static int
compare_paths (gconstpointer a,
               gconstpointer b)
{
  return natural_compare (*(const char * const *) a, *(const char * const *) b);
}

static gboolean
is_tiff_name (const char *name)
{
  return g_str_has_suffix (name, ".tif") || g_str_has_suffix (name, ".tiff") ||
         g_str_has_suffix (name, ".TIF") || g_str_has_suffix (name, ".TIFF");
}

/* A folder (its .tif/.tiff files), a glob, or one file, as sorted paths. */
static GPtrArray *
list_files (const char  *spec,
            const char  *what,
            GError     **error)
{
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *dirname = NULL;
  g_autoptr(GPatternSpec) pattern = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *name;

  if (g_file_test (spec, G_FILE_TEST_IS_REGULAR))
    {
      g_ptr_array_add (files, g_strdup (spec));
      return g_steal_pointer (&files);
    }

  if (g_file_test (spec, G_FILE_TEST_IS_DIR))
    dirname = g_strdup (spec);
  else if (strpbrk (spec, "*?[") != NULL)
    {
      g_autofree char *base = g_path_get_basename (spec);
      dirname = g_path_get_dirname (spec);
      if (strpbrk (dirname, "*?[") != NULL)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND,
                       "%s %s: wildcards are only allowed in the file name, not in the folder",
                       what, spec);
          return NULL;
        }
      pattern = g_pattern_spec_new (base);
    }
  else
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND,
                   "%s %s: no such file or folder", what, spec);
      return NULL;
    }

  dir = g_dir_open (dirname, 0, &local_error);
  if (dir == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND,
                   "%s %s: cannot list folder: %s", what, spec, local_error->message);
      return NULL;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *full = NULL;

      if (pattern != NULL ? !g_pattern_spec_match_string (pattern, name) : !is_tiff_name (name))
        continue;
      full = g_build_filename (dirname, name, NULL);
      if (g_file_test (full, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add (files, g_steal_pointer (&full));
    }

  if (files->len == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND,
                   pattern ? "%s %s: no file matches" : "%s %s: the folder has no .tif or .tiff files",
                   what, spec);
      return NULL;
    }
  g_ptr_array_sort (files, compare_paths);
  return g_steal_pointer (&files);
}

/* Checks every page header of `file` against the detector size
 * (`*width` == 0: this file sets it, and the stack's type) and counts the
 * pages. */
static gboolean
check_pages (Stack       *stack,
             const char  *file,
             const char  *what,
             gboolean     first,
             guint       *width,
             guint       *height,
             guint       *n_pages,
             GError     **error)
{
  TomoTiffErrors errors = { 0, };
  TIFF *tif = _tomo_tiff_open (file, "r", &errors);
  gboolean ok = TRUE;

  *n_pages = 0;
  if (tif == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "%s %s is not a readable TIFF: %s", what, file,
                   _tomo_tiff_errors_take (&errors));
      _tomo_tiff_errors_clear (&errors);
      return FALSE;
    }
  do
    {
      TomoTiffPage info;

      if (!_tomo_tiff_page_info (tif, file, *n_pages, &info, error))
        {
          ok = FALSE;
          break;
        }
      if (first && *n_pages == 0)
        {
          stack->dtype = info.dtype;
          if (*width == 0)
            {
              *width = info.width;
              *height = info.height;
            }
        }
      if (info.width != *width || info.height != *height)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "%s %s, page %u is %u × %u pixels but the projections are %u × %u",
                       what, file, *n_pages, info.width, info.height, *width, *height);
          ok = FALSE;
        }
      else if (info.dtype != stack->dtype)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                       "%s %s, page %u holds %s but the first page holds %s",
                       what, file, *n_pages, tomo_dtype_to_string (info.dtype),
                       tomo_dtype_to_string (stack->dtype));
          ok = FALSE;
        }
      else if (*n_pages == G_MAXUINT32 / 2)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "%s %s has more than %u pages", what, file, *n_pages);
          ok = FALSE;
        }
      (*n_pages)++;
      if (!ok || TIFFLastDirectory (tif))
        break;
      /* A next page announced but unreadable is a truncated or corrupt
       * stack, never a shorter one. */
      if (!TIFFReadDirectory (tif))
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                       "%s %s: page %u cannot be read (file truncated or corrupt?): %s",
                       what, file, *n_pages, _tomo_tiff_errors_take (&errors));
          ok = FALSE;
        }
    }
  while (ok);

  TIFFClose (tif);
  _tomo_tiff_errors_clear (&errors);
  return ok;
}

/* Builds the frame list of one stack and checks it against the detector
 * size (`*width` == 0: this stack sets it): every page of every file, in
 * file order (beamlines save chunks of N projections per file).  Only
 * headers are read.  A folder whose first and last files hold one page
 * each is taken for a folder of single-page files without opening the
 * others (thousands of them); every file is checked again when read, and
 * one that holds more pages is an error then, not pages skipped. */
static gboolean
open_stack (Stack       *stack,
            const char  *spec,
            const char  *what,
            guint       *width,
            guint       *height,
            GError     **error)
{
  g_autoptr(GPtrArray) files = list_files (spec, what, error);
  g_autofree guint *n_pages = NULL;
  guint n_files, n_frames = 0;

  if (files == NULL)
    return FALSE;
  n_files = files->len;
  n_pages = g_new0 (guint, n_files);

  if (!check_pages (stack, files->pdata[0], what, TRUE, width, height, &n_pages[0], error))
    return FALSE;
  if (n_files > 1 &&
      !check_pages (stack, files->pdata[n_files - 1], what, FALSE, width, height,
                    &n_pages[n_files - 1], error))
    return FALSE;
  stack->one_page_per_file = n_files > 1 && n_pages[0] == 1 && n_pages[n_files - 1] == 1;
  for (guint f = 0; f < n_files; f++)
    {
      if (stack->one_page_per_file)
        n_pages[f] = 1;
      else if (f > 0 && f < n_files - 1 &&
               !check_pages (stack, files->pdata[f], what, FALSE, width, height, &n_pages[f],
                             error))
        return FALSE;
      if (n_frames > G_MAXUINT32 / 2 - n_pages[f])
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "%s %s: more than %u pages in all", what, spec, n_frames);
          return FALSE;
        }
      n_frames += n_pages[f];
    }

  stack->frames = g_new0 (Frame, n_frames);
  stack->n_frames = 0;
  for (guint f = 0; f < n_files; f++)
    for (guint p = 0; p < n_pages[f]; p++)
      {
        stack->frames[stack->n_frames].file = files->pdata[f];
        stack->frames[stack->n_frames].page = p;
        stack->n_frames++;
      }
  stack->files = g_steal_pointer (&files);
  return TRUE;
}

static gboolean
tiff_read_rows (TomoScanLoader *loader,
                TomoFrameKind   kind,
                guint           row,
                float          *out,
                GError        **error)
{
  TiffLoader *self = (TiffLoader *) loader;
  Stack *stack = &self->stacks[kind];
  TomoTiffErrors errors = { 0, };
  TIFF *tif = NULL;
  const char *open_file = NULL;
  guint page = 0;
  gboolean ok = TRUE;

  for (guint i = 0; i < stack->n_frames && ok; i++)
    {
      const Frame *frame = &stack->frames[i];
      TomoTiffPage info;

      if (open_file != frame->file)
        {
          if (tif != NULL)
            TIFFClose (tif);
          open_file = frame->file;
          page = 0;
          tif = _tomo_tiff_open (frame->file, "r", &errors);
          if (tif == NULL)
            {
              g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                           "Cannot open TIFF %s: %s", frame->file, _tomo_tiff_errors_take (&errors));
              ok = FALSE;
              break;
            }
          if (stack->one_page_per_file && !TIFFLastDirectory (tif))
            {
              g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                           "TIFF %s holds more than one page, but %s was opened as one "
                           "projection per file (its first and last files hold one page each)",
                           frame->file, loader->source[kind]);
              ok = FALSE;
              break;
            }
        }

      /* Pages are read in order: step forward rather than seek from the
       * first directory each time. */
      if (frame->page != page)
        {
          gboolean moved = frame->page == page + 1 ? TIFFReadDirectory (tif)
                                                   : TIFFSetDirectory (tif, frame->page);
          if (!moved)
            {
              g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                           "TIFF %s: cannot reach page %u: %s", frame->file, frame->page,
                           _tomo_tiff_errors_take (&errors));
              ok = FALSE;
              break;
            }
          page = frame->page;
        }

      if (!_tomo_tiff_page_info (tif, frame->file, page, &info, error))
        ok = FALSE;
      else if (info.width != loader->width || info.height != loader->height || info.dtype != stack->dtype)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "TIFF %s, page %u is %u × %u %s but the scan is %u × %u %s",
                       frame->file, page, info.width, info.height, tomo_dtype_to_string (info.dtype),
                       loader->width, loader->height, tomo_dtype_to_string (stack->dtype));
          ok = FALSE;
        }
      else
        ok = _tomo_tiff_read_row (tif, frame->file, page, &errors, stack->dtype,
                                  loader->width, row, out + (gsize) i * loader->width, error);
    }

  if (tif != NULL)
    TIFFClose (tif);
  _tomo_tiff_errors_clear (&errors);
  return ok;
}

static void
tiff_free (TomoScanLoader *loader)
{
  TiffLoader *self = (TiffLoader *) loader;

  for (guint k = 0; k < TOMO_N_FRAME_KINDS; k++)
    {
      g_clear_pointer (&self->stacks[k].files, g_ptr_array_unref);
      g_free (self->stacks[k].frames);
    }
  g_free (self);
}

static const TomoScanLoaderClass tiff_class = {
  .name = "TIFF stack",
  .read_rows = tiff_read_rows,
  .free = tiff_free,
};

TomoScanLoader *
_tomo_io_tiff_open (const char            *path,
                    const TomoOpenOptions *options,
                    GError               **error)
{
  g_autoptr(TomoScanLoader) loader = NULL;
  TiffLoader *self;
  const char *specs[TOMO_N_FRAME_KINDS] = { path, options->flats, options->darks };
  static const char *whats[TOMO_N_FRAME_KINDS] = { "Projections", "Flats", "Darks" };

  self = _tomo_scan_loader_new (sizeof (TiffLoader), &tiff_class, TOMO_SCAN_FORMAT_TIFF, path);
  loader = &self->parent;

  for (guint k = 0; k < TOMO_N_FRAME_KINDS; k++)
    {
      guint width = loader->width, height = loader->height;

      if (specs[k] == NULL)
        {
          if (k == TOMO_FRAME_FLAT)
            loader->source[k] = g_strdup ("no flats given");
          continue;
        }
      loader->source[k] = g_strdup (specs[k]);
      if (!open_stack (&self->stacks[k], specs[k], whats[k], &width, &height, error))
        return NULL;
      for (guint f = 0; f < self->stacks[k].files->len; f++)
        _tomo_scan_loader_add_input (loader, self->stacks[k].files->pdata[f]);
      if (k == TOMO_FRAME_PROJECTION)
        {
          loader->width = width;
          loader->height = height;
          loader->dtype = self->stacks[k].dtype;
        }
      loader->n_frames[k] = self->stacks[k].n_frames;
    }

  return g_steal_pointer (&loader);
}
