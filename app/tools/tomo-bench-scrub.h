/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Row changes on a 2048-wide, 1800-projection phantom file (`height` rows,
 * written in `dir`): request → preprocessed sinogram in host memory for a
 * row not read before, for a row the scrub prefetcher read ahead, and while
 * stepping one row every 33 ms; prefetch off and on.  Prints a Markdown
 * table. */
gboolean tomo_bench_row_scrub (const char *dir,
                               guint       height,
                               GError    **error);

G_END_DECLS
