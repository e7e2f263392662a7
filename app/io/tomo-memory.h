/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Memory budget for sizes that come from files, packets or the command
 * line.  Every such size is multiplied with overflow checks and compared
 * with the budget *before* anything is allocated, so a header declaring
 * 10⁹ projections or a 2·10⁹-pixel width is a clear error, never a
 * GLib-ERROR abort or the kernel's OOM killer.
 *
 * The budget is half the physical memory unless set (`--max-memory`). */

/* Bytes a process may plan to allocate for one scan. */
guint64  tomo_memory_get_limit     (void);
/* 0 restores the default. */
void     tomo_memory_set_limit     (guint64 bytes);

/* Parses "8G", "512M", "1.5T", "1000000" (bytes), "50%" (of physical
 * memory).  FALSE with a message naming `option` on anything else. */
gboolean tomo_memory_parse_size    (const char *option,
                                    const char *text,
                                    guint64    *bytes,
                                    GError    **error);

/* *out = a × b × c (c may be 1); FALSE on overflow of 64 bits. */
gboolean tomo_size_mul3            (guint64  a,
                                    guint64  b,
                                    guint64  c,
                                    guint64 *out);

/* TRUE when `bytes` fits the budget; otherwise TOMO_IO_ERROR_SHAPE with
 * "`what` would need N GiB but the limit is M GiB (--max-memory)".
 * `bytes` = G_MAXUINT64 means "overflowed". */
gboolean tomo_memory_check         (guint64     bytes,
                                    const char *what,
                                    GError    **error);

/* "1.5 GiB", "12 MiB", "512 bytes"; G_MAXUINT64 → "more than 16 EiB". */
char    *tomo_memory_format        (guint64 bytes);

G_END_DECLS
