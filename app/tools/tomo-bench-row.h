/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-engine.h"

G_BEGIN_DECLS

/* The viewer engine's row change on `backend`: a 2048-wide, 1800-projection
 * phantom file (32 rows, written in `dir`); each request is a row not read
 * before → slice in device memory (keep_on_device, skip_download: what the
 * window shows through interop).  Median and max of `runs` changes, with
 * the engine's own filter and back-projection times (`runs` clamped to
 * 1 … 30).  Prints Markdown. */
gboolean tomo_bench_row_change (const char  *dir,
                                TomoBackend  backend,
                                guint        runs,
                                GError     **error);

G_END_DECLS
