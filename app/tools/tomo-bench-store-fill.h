/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Filling the GPU volume store from a file: a 2048-wide, 1800-projection
 * uint16 phantom of n_rows rows (written in `dir`) filled `runs` times each
 * way, alternating, each on a fresh scan: raw rows in slabs preprocessed on
 * the device, and the baseline of rows read as floats and preprocessed on
 * the host.  Median wall clock and rates.  Prints Markdown. */
gboolean tomo_bench_store_fill (const char  *dir,
                                guint        n_rows,
                                guint        runs,
                                GError     **error);

G_END_DECLS
