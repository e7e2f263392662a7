/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-tiff-stack"

#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "tomo-error.h"
#include "tomo-tiff-stack.h"

/* As tomo-tiff-writer.c: BigTIFF above 2 GiB, strips of about 64 KiB. */
#define BIGTIFF_THRESHOLD ((guint64) 2 * 1024 * 1024 * 1024)
#define STRIP_BYTES (64 * 1024)

#define SOFTWARE PACKAGE_NAME " " PACKAGE_VERSION

enum
{
  T_ASCII = 2,
  T_SHORT = 3,
  T_LONG = 4,
  T_LONG8 = 16,
};

#define N_TAGS 13

gboolean
tomo_pwrite_all (int         fd,
                 const void *data,
                 gsize       len,
                 goffset     offset)
{
  const char *p = data;

  while (len > 0)
    {
      ssize_t n = pwrite (fd, p, len, offset);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (n == 0)
            errno = ENOSPC;
          return FALSE;
        }
      p += n;
      len -= n;
      offset += n;
    }
  return TRUE;
}

void
tomo_tiff_stack_init (TomoTiffStack *stack,
                      guint          width,
                      guint          height,
                      guint          n_pages)
{
  memset (stack, 0, sizeof *stack);
  stack->width = width;
  stack->height = height;
  stack->n_pages = n_pages;
  stack->page_bytes = (guint64) width * height * sizeof (float);
  stack->big = stack->page_bytes * n_pages > BIGTIFF_THRESHOLD;
  stack->header_bytes = stack->big ? 16 : 8;
  stack->rows_per_strip = MAX (1, STRIP_BYTES / ((gsize) MAX (width, 1) * sizeof (float)));
  stack->rows_per_strip = MIN (stack->rows_per_strip, MAX (height, 1));
  stack->n_strips = (height + stack->rows_per_strip - 1) / stack->rows_per_strip;
}

guint64
tomo_tiff_stack_page_offset (const TomoTiffStack *stack,
                             guint                page)
{
  return stack->header_bytes + (guint64) page * stack->page_bytes;
}

/* One page's directory block: the directory, then its strip offsets and
 * byte counts and the software string where they do not fit in an entry. */
static gsize
entry_bytes (const TomoTiffStack *s)
{
  return s->big ? 20 : 12;
}

static gsize
value_bytes (const TomoTiffStack *s)
{
  return s->big ? 8 : 4;
}

static gsize
array_bytes (const TomoTiffStack *s)
{
  /* Out of line only when more than one strip. */
  return s->n_strips > 1 ? (gsize) s->n_strips * value_bytes (s) : 0;
}

static gsize
block_bytes (const TomoTiffStack *s)
{
  gsize dir = (s->big ? 8 : 2) + N_TAGS * entry_bytes (s) + value_bytes (s);
  gsize software = (sizeof SOFTWARE + 7) & ~(gsize) 7;

  return ((dir + 7) & ~(gsize) 7) + 2 * array_bytes (s) + software;
}

static guint64
directories_offset (const TomoTiffStack *s)
{
  guint64 end = tomo_tiff_stack_page_offset (s, s->n_pages);

  return (end + 7) & ~(guint64) 7;
}

guint64
tomo_tiff_stack_file_size (const TomoTiffStack *stack)
{
  return directories_offset (stack) + (guint64) stack->n_pages * block_bytes (stack);
}

static void
put (guint8  *p,
     gsize    n,
     guint64  v)
{
  for (gsize i = 0; i < n; i++)
    p[i] = (guint8) (v >> (8 * i));
}

typedef struct
{
  const TomoTiffStack *s;
  guint8 *p;       /* next entry */
} Dir;

static void
entry (Dir     *d,
       guint16  tag,
       guint16  type,
       guint64  count,
       guint64  value)
{
  gboolean big = d->s->big;

  put (d->p, 2, tag);
  put (d->p + 2, 2, type);
  put (d->p + 4, big ? 8 : 4, count);
  put (d->p + (big ? 12 : 8), big ? 8 : 4, value);
  d->p += entry_bytes (d->s);
}

/* The block of `page`, at file offset `at`, into `out` (block_bytes). */
static void
fill_block (const TomoTiffStack *s,
            guint                page,
            guint64              at,
            guint64              next,
            guint8              *out)
{
  gsize vb = value_bytes (s);
  gsize dir = (s->big ? 8 : 2) + N_TAGS * entry_bytes (s) + vb;
  guint64 offsets_at = at + ((dir + 7) & ~(gsize) 7);
  guint64 counts_at = offsets_at + array_bytes (s);
  guint64 software_at = counts_at + array_bytes (s);
  guint64 page_at = tomo_tiff_stack_page_offset (s, page);
  guint16 strip_type = s->big ? T_LONG8 : T_LONG;
  guint64 strip_bytes = (guint64) s->rows_per_strip * s->width * sizeof (float);
  Dir d = { s, out + (s->big ? 8 : 2) };
  guint8 *offsets = out + (offsets_at - at), *counts = out + (counts_at - at);

  memset (out, 0, block_bytes (s));
  put (out, s->big ? 8 : 2, N_TAGS);
  for (guint i = 0; i < s->n_strips; i++)
    {
      guint rows = MIN (s->rows_per_strip, s->height - i * s->rows_per_strip);

      put (offsets + i * vb, vb, page_at + i * strip_bytes);
      put (counts + i * vb, vb, (guint64) rows * s->width * sizeof (float));
    }
  /* Tags in ascending order. */
  entry (&d, 254, T_LONG, 1, 2);                      /* NewSubfileType: page */
  entry (&d, 256, T_LONG, 1, s->width);
  entry (&d, 257, T_LONG, 1, s->height);
  entry (&d, 258, T_SHORT, 1, 32);                    /* BitsPerSample */
  entry (&d, 259, T_SHORT, 1, 1);                     /* no compression */
  entry (&d, 262, T_SHORT, 1, 1);                     /* min is black */
  entry (&d, 273, strip_type, s->n_strips,
         s->n_strips > 1 ? offsets_at : page_at);     /* StripOffsets */
  entry (&d, 277, T_SHORT, 1, 1);                     /* SamplesPerPixel */
  entry (&d, 278, T_LONG, 1, s->rows_per_strip);
  entry (&d, 279, strip_type, s->n_strips,
         s->n_strips > 1 ? counts_at : s->page_bytes); /* StripByteCounts */
  entry (&d, 284, T_SHORT, 1, 1);                     /* contiguous */
  entry (&d, 305, T_ASCII, sizeof SOFTWARE, software_at);
  entry (&d, 339, T_SHORT, 1, 3);                     /* IEEE float */
  put (d.p, vb, next);
  memcpy (out + (software_at - at), SOFTWARE, sizeof SOFTWARE);
}

gboolean
tomo_tiff_stack_write_directories (const TomoTiffStack *s,
                                   int                  fd,
                                   const char          *name,
                                   GError             **error)
{
  guint8 header[16] = { 'I', 'I' };
  gsize block = block_bytes (s);
  guint64 first = directories_offset (s);
  /* Many pages' blocks per write. */
  guint per_write = MAX (1, (guint) ((4u << 20) / block));
  g_autofree guint8 *buf = g_malloc ((gsize) per_write * block);

  if (s->big)
    {
      put (header + 2, 2, 43);
      put (header + 4, 2, 8);
      put (header + 8, 8, first);
    }
  else
    {
      put (header + 2, 2, 42);
      put (header + 4, 4, first);
    }
  for (guint p0 = 0; p0 < s->n_pages; p0 += per_write)
    {
      guint n = MIN (per_write, s->n_pages - p0);

      for (guint i = 0; i < n; i++)
        {
          guint page = p0 + i;
          guint64 at = first + (guint64) page * block;
          guint64 next = page + 1 < s->n_pages ? at + block : 0;

          fill_block (s, page, at, next, buf + (gsize) i * block);
        }
      if (!tomo_pwrite_all (fd, buf, (gsize) n * block, first + (guint64) p0 * block))
        goto failed;
    }
  if (!tomo_pwrite_all (fd, header, s->header_bytes, 0))
    goto failed;
  return TRUE;

failed:
  {
    int saved = errno;

    g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                 "Cannot write the page directories of TIFF %s: %s", name, g_strerror (saved));
    return FALSE;
  }
}
