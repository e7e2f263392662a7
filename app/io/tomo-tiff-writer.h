/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Float32 TIFF output: one page per slice, written as slices arrive, so a
 * volume never has to fit in memory.  BigTIFF is used above 2 GiB.  The
 * file is written through TomoOutput (tomo-output.h): into a temporary
 * file renamed over `path` by a successful close, removed by abort. */
typedef struct _TomoTiffWriter TomoTiffWriter;

TomoTiffWriter *tomo_tiff_writer_new      (const char *path,
                                           guint64     expected_bytes,
                                           GError    **error);
/* Also refuses a `path` that is one of `inputs` (NULL-terminated). */
TomoTiffWriter *tomo_tiff_writer_new_full (const char         *path,
                                           const char * const *inputs,
                                           guint64             expected_bytes,
                                           GError            **error);
gboolean        tomo_tiff_writer_add_page (TomoTiffWriter *writer,
                                           const float    *data,
                                           guint           width,
                                           guint           height,
                                           GError        **error);
/* Closes, puts the file in place and frees; FALSE if flushing or the
 * rename failed (then nothing is left behind). */
gboolean        tomo_tiff_writer_close    (TomoTiffWriter *writer,
                                           GError        **error);
/* Closes and frees, removing the incomplete file; `path` is untouched. */
void            tomo_tiff_writer_abort    (TomoTiffWriter *writer);

/* One-shot helper: n_pages pages of width × height floats, complete or
 * not at all. */
gboolean        tomo_tiff_write_float     (const char  *path,
                                           const float *data,
                                           guint        width,
                                           guint        height,
                                           guint        n_pages,
                                           GError     **error);

/* Reads every page of a float32 (or integer) TIFF as floats; used by tests
 * and to compare exports.  All pages must have the same size. */
float          *tomo_tiff_read_float      (const char *path,
                                           guint      *width,
                                           guint      *height,
                                           guint      *n_pages,
                                           GError    **error);

G_END_DECLS
