/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* `tomolive bench --planes`: fills a volume store of n_rows rows of
 * n_proj × width from host memory and times XZ, YZ, XY and oblique planes,
 * cached and global kernels side by side, float and half stores, and a
 * preview volume.  No device: a message and TRUE. */
gboolean tomo_bench_planes (guint        width,
                            guint        n_proj,
                            guint        n_rows,
                            guint        runs,
                            int          device,
                            const char  *cmdline,
                            const char  *date,
                            GError     **error);

G_END_DECLS
