/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-tiff-writer"

#include "config.h"

#include <tiffio.h>

#include "tomo-error.h"
#include "tomo-memory.h"
#include "tomo-output.h"
#include "tomo-scan-private.h"
#include "tomo-tiff-writer.h"

/* Classic TIFF addresses 4 GiB; leave room for headers and rounding. */
#define BIGTIFF_THRESHOLD ((guint64) 2 * 1024 * 1024 * 1024)

/* About 64 KiB per strip: small enough that a reader fetching one row
 * decodes little, large enough that the strip tables stay short. */
#define STRIP_BYTES (64 * 1024)

struct _TomoTiffWriter
{
  TIFF          *tif;
  TomoOutput    *output;
  char          *path;
  TomoTiffErrors errors;
  guint          n_pages;
};

TomoTiffWriter *
tomo_tiff_writer_new_full (const char         *path,
                           const char * const *inputs,
                           guint64             expected_bytes,
                           GError            **error)
{
  TomoTiffWriter *writer;
  TomoOutput *output;

  g_return_val_if_fail (path != NULL, NULL);

  output = tomo_output_open (path, inputs, error);
  if (output == NULL)
    return NULL;
  writer = g_new0 (TomoTiffWriter, 1);
  writer->path = g_strdup (path);
  writer->output = output;
  writer->tif = _tomo_tiff_open (tomo_output_get_write_path (output),
                                 expected_bytes > BIGTIFF_THRESHOLD ? "w8" : "w",
                                 &writer->errors);
  if (writer->tif == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot create TIFF %s: %s", path, _tomo_tiff_errors_take (&writer->errors));
      _tomo_tiff_errors_clear (&writer->errors);
      tomo_output_free (writer->output);
      g_free (writer->path);
      g_free (writer);
      return NULL;
    }

  return writer;
}

TomoTiffWriter *
tomo_tiff_writer_new (const char *path,
                      guint64     expected_bytes,
                      GError    **error)
{
  return tomo_tiff_writer_new_full (path, NULL, expected_bytes, error);
}

gboolean
tomo_tiff_writer_add_page (TomoTiffWriter *writer,
                           const float    *data,
                           guint           width,
                           guint           height,
                           GError        **error)
{
  TIFF *tif;
  guint32 rows_per_strip;

  g_return_val_if_fail (writer != NULL, FALSE);
  g_return_val_if_fail (data != NULL, FALSE);

  tif = writer->tif;
  if (width == 0 || height == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "TIFF %s, page %u: cannot write an empty %u × %u image",
                   writer->path, writer->n_pages, width, height);
      return FALSE;
    }

  rows_per_strip = MAX (1, STRIP_BYTES / ((gsize) width * sizeof (float)));
  rows_per_strip = MIN (rows_per_strip, height);

  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, (guint32) width);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, (guint32) height);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, 32);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, 1);
  TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
  TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField (tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
  TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip);
  TIFFSetField (tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
  TIFFSetField (tif, TIFFTAG_SOFTWARE, PACKAGE_NAME " " PACKAGE_VERSION);

  for (guint32 y = 0, strip = 0; y < height; y += rows_per_strip, strip++)
    {
      guint32 rows = MIN (rows_per_strip, height - y);
      tmsize_t bytes = (tmsize_t) rows * width * sizeof (float);

      /* libtiff does not modify the buffer for uncompressed output. */
      if (TIFFWriteEncodedStrip (tif, strip, (void *) (data + (gsize) y * width), bytes) != bytes)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "Cannot write page %u of TIFF %s: %s",
                       writer->n_pages, writer->path, _tomo_tiff_errors_take (&writer->errors));
          return FALSE;
        }
    }

  if (!TIFFWriteDirectory (tif))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot finish page %u of TIFF %s: %s",
                   writer->n_pages, writer->path, _tomo_tiff_errors_take (&writer->errors));
      return FALSE;
    }

  writer->n_pages++;
  return TRUE;
}

static gboolean
writer_finish (TomoTiffWriter *writer,
               gboolean        commit,
               GError        **error)
{
  gboolean ok = commit;

  if (commit && (TIFFFlush (writer->tif) != 1 || writer->errors.message != NULL))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot flush TIFF %s: %s", writer->path,
                   _tomo_tiff_errors_take (&writer->errors));
      ok = FALSE;
    }
  TIFFClose (writer->tif);
  if (ok)
    ok = tomo_output_commit (writer->output, error);
  else
    tomo_output_abort (writer->output);

  tomo_output_free (writer->output);
  _tomo_tiff_errors_clear (&writer->errors);
  g_free (writer->path);
  g_free (writer);
  return ok;
}

gboolean
tomo_tiff_writer_close (TomoTiffWriter *writer,
                        GError        **error)
{
  if (writer == NULL)
    return TRUE;
  return writer_finish (writer, TRUE, error);
}

void
tomo_tiff_writer_abort (TomoTiffWriter *writer)
{
  if (writer != NULL)
    writer_finish (writer, FALSE, NULL);
}

gboolean
tomo_tiff_write_float (const char  *path,
                       const float *data,
                       guint        width,
                       guint        height,
                       guint        n_pages,
                       GError     **error)
{
  guint64 page_bytes = (guint64) width * height * sizeof (float);
  TomoTiffWriter *writer;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (data != NULL || n_pages == 0, FALSE);

  writer = tomo_tiff_writer_new (path, page_bytes * n_pages, error);
  if (writer == NULL)
    return FALSE;

  for (guint p = 0; p < n_pages; p++)
    if (!tomo_tiff_writer_add_page (writer, data + (gsize) p * width * height, width, height, error))
      {
        tomo_tiff_writer_abort (writer);
        return FALSE;
      }

  return tomo_tiff_writer_close (writer, error);
}

float *
tomo_tiff_read_float (const char *path,
                      guint      *width,
                      guint      *height,
                      guint      *n_pages,
                      GError    **error)
{
  TomoTiffErrors errors = { 0, };
  g_autoptr(GArray) pixels = g_array_new (FALSE, FALSE, sizeof (float));
  TomoTiffPage first = { 0, };
  guint page = 0;
  gboolean ok = TRUE;
  TIFF *tif;

  g_return_val_if_fail (path != NULL, NULL);

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_NOT_FOUND,
                   "TIFF %s does not exist", path);
      return NULL;
    }

  tif = _tomo_tiff_open (path, "r", &errors);
  if (tif == NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "%s is not a readable TIFF: %s", path, _tomo_tiff_errors_take (&errors));
      _tomo_tiff_errors_clear (&errors);
      return NULL;
    }

  do
    {
      TomoTiffPage info;
      gsize at = pixels->len;

      if (!_tomo_tiff_page_info (tif, path, page, &info, error))
        {
          ok = FALSE;
          break;
        }
      if (page == 0)
        first = info;
      else if (info.width != first.width || info.height != first.height)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "TIFF %s, page %u is %u × %u pixels but page 0 is %u × %u",
                       path, page, info.width, info.height, first.width, first.height);
          ok = FALSE;
          break;
        }

      {
        guint64 bytes = G_MAXUINT64;
        g_autofree char *what = g_strdup_printf ("TIFF %s, page %u of %u × %u pixels",
                                                 path, page, info.width, info.height);

        if (!tomo_size_mul3 ((guint64) at + (guint64) info.width * info.height, sizeof (float), 1, &bytes)
            || !tomo_memory_check (bytes, what, error))
          {
            ok = FALSE;
            break;
          }
      }
      g_array_set_size (pixels, at + (gsize) info.width * info.height);
      for (guint y = 0; y < info.height && ok; y++)
        ok = _tomo_tiff_read_row (tif, path, page, &errors, info.dtype, info.width, y,
                                  &g_array_index (pixels, float, at + (gsize) y * info.width),
                                  error);
      page++;
    }
  while (ok && TIFFReadDirectory (tif));

  TIFFClose (tif);
  _tomo_tiff_errors_clear (&errors);
  if (!ok)
    return NULL;

  if (width)
    *width = first.width;
  if (height)
    *height = first.height;
  if (n_pages)
    *n_pages = page;
  return (float *) g_array_free (g_steal_pointer (&pixels), FALSE);
}
