/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The layout of a multi-page float32 TIFF fixed before any page is written:
 * the pixels of page i lie at tomo_tiff_stack_page_offset(), one after the
 * other behind the header, and the page directories (with the same tags and
 * 64 KiB strips as TomoTiffWriter's pages) follow the last page.  So pages
 * can be written with pwrite() by many threads in any order, and the header
 * and directories last.  BigTIFF above 2 GiB, as TomoTiffWriter. */
typedef struct
{
  guint width, height, n_pages;
  gboolean big;           /* BigTIFF */
  guint64 header_bytes;   /* 8 or 16 */
  guint64 page_bytes;     /* width × height × 4 */
  guint rows_per_strip, n_strips;
} TomoTiffStack;

void     tomo_tiff_stack_init        (TomoTiffStack *stack,
                                      guint          width,
                                      guint          height,
                                      guint          n_pages);
guint64  tomo_tiff_stack_page_offset (const TomoTiffStack *stack,
                                      guint                page);
/* The whole file's size once the directories are written. */
guint64  tomo_tiff_stack_file_size   (const TomoTiffStack *stack);
/* Writes the header and every page's directory into `fd` (the pages'
 * pixels are the caller's).  `name` is for messages. */
gboolean tomo_tiff_stack_write_directories (const TomoTiffStack *stack,
                                            int                  fd,
                                            const char          *name,
                                            GError             **error);
/* pwrite() of all `len` bytes at `offset`, retried on EINTR and short
 * writes; errno set on failure (ENOSPC for a write of nothing). */
gboolean tomo_pwrite_all             (int         fd,
                                      const void *data,
                                      gsize       len,
                                      goffset     offset);

G_END_DECLS
