/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-io-raw"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tomo-error.h"
#include "tomo-memory.h"
#include "tomo-scan-private.h"

typedef struct
{
  TomoScanLoader parent;

  int      fd;
  guint64  offset;
  gsize    elem_size;
  gboolean swap;
} RawLoader;

static gboolean
raw_read_rows (TomoScanLoader *loader,
               TomoFrameKind   kind,
               guint           row,
               float          *out,
               GError        **error)
{
  RawLoader *self = (RawLoader *) loader;
  gsize row_bytes = (gsize) loader->width * self->elem_size;
  g_autofree guint8 *buffer = g_malloc (row_bytes);

  g_assert (kind == TOMO_FRAME_PROJECTION);

  for (guint p = 0; p < loader->n_frames[TOMO_FRAME_PROJECTION]; p++)
    {
      guint64 pos = self->offset + ((guint64) p * loader->height + row) * row_bytes;
      gsize done = 0;

      /* pread, not a shared file position: readers never race on a seek. */
      while (done < row_bytes)
        {
          gssize n = pread (self->fd, buffer + done, row_bytes - done, (off_t) (pos + done));

          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            {
              int saved_errno = errno;
              g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ,
                           "Raw file %s: cannot read projection %u, row %u at byte %" G_GUINT64_FORMAT ": %s",
                           loader->path, p, row, pos + done,
                           n < 0 ? g_strerror (saved_errno) : "unexpected end of file");
              return FALSE;
            }
          done += n;
        }

      _tomo_convert_to_float (buffer, loader->dtype, self->swap, loader->width,
                              out + (gsize) p * loader->width);
    }

  return TRUE;
}

static void
raw_free (TomoScanLoader *loader)
{
  RawLoader *self = (RawLoader *) loader;

  if (self->fd >= 0)
    close (self->fd);
  g_free (self);
}

static const TomoScanLoaderClass raw_class = {
  .name = "raw",
  .read_rows = raw_read_rows,
  .free = raw_free,
};

TomoScanLoader *
_tomo_io_raw_open (const char            *path,
                   const TomoOpenOptions *options,
                   GError               **error)
{
  g_autoptr(TomoScanLoader) loader = NULL;
  RawLoader *self;
  gsize elem_size = _tomo_dtype_size (options->raw_dtype);
  GStatBuf st;
  guint64 expected;

  if (elem_size == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "Raw file %s: unknown data type %d", path, options->raw_dtype);
      return NULL;
    }
  if (options->raw_width == 0 || options->raw_height == 0 || options->raw_n_projections == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Raw file %s: width, height and number of projections must all be given "
                   "(got %u × %u × %u)",
                   path, options->raw_width, options->raw_height, options->raw_n_projections);
      return NULL;
    }

  self = _tomo_scan_loader_new (sizeof (RawLoader), &raw_class, TOMO_SCAN_FORMAT_RAW, path);
  self->fd = -1;
  loader = &self->parent;
  loader->width = options->raw_width;
  loader->height = options->raw_height;
  loader->n_frames[TOMO_FRAME_PROJECTION] = options->raw_n_projections;
  loader->dtype = options->raw_dtype;
  loader->source[TOMO_FRAME_PROJECTION] = g_strdup_printf ("%s data", tomo_dtype_to_string (options->raw_dtype));
  loader->source[TOMO_FRAME_FLAT] = g_strdup ("raw files carry no flat fields");
  self->offset = options->raw_offset;
  self->elem_size = elem_size;
  self->swap = (G_BYTE_ORDER == G_LITTLE_ENDIAN) == !!options->raw_big_endian;

  self->fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (self->fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, TOMO_IO_ERROR,
                   saved_errno == ENOENT ? TOMO_IO_ERROR_NOT_FOUND : TOMO_IO_ERROR_READ,
                   "Cannot open raw file %s: %s", path, g_strerror (saved_errno));
      return NULL;
    }
  if (fstat (self->fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_FORMAT,
                   "Raw file %s is not a regular file", path);
      return NULL;
    }

  if (!tomo_size_mul3 ((guint64) options->raw_n_projections * options->raw_height,
                       options->raw_width, elem_size, &expected)
      || !g_uint64_checked_add (&expected, expected, options->raw_offset))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Raw file %s: %u projections of %u × %u %s after a %" G_GUINT64_FORMAT
                   "-byte header do not fit in any file (the size overflows 64 bits)",
                   path, options->raw_n_projections, options->raw_width, options->raw_height,
                   tomo_dtype_to_string (options->raw_dtype), options->raw_offset);
      return NULL;
    }
  if (options->raw_offset > (guint64) st.st_size)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Raw file %s has %" G_GUINT64_FORMAT " bytes: the header offset %"
                   G_GUINT64_FORMAT " lies past its end",
                   path, (guint64) st.st_size, options->raw_offset);
      return NULL;
    }
  if ((guint64) st.st_size != expected)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Raw file %s has %" G_GUINT64_FORMAT " bytes but %u projections of "
                   "%u × %u %s after a %" G_GUINT64_FORMAT "-byte header need %" G_GUINT64_FORMAT,
                   path, (guint64) st.st_size, options->raw_n_projections,
                   options->raw_width, options->raw_height,
                   tomo_dtype_to_string (options->raw_dtype),
                   options->raw_offset, expected);
      return NULL;
    }

  return g_steal_pointer (&loader);
}
