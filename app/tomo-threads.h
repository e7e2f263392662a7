/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Runs worker (data) on the calling thread and on MIN (n_threads, n_items)
 * − 1 threads more (n_threads 0: one per processor), named `name`, and
 * returns when all have returned.  The workers share `data` and take their
 * items from it.  A thread that cannot start only costs time: the others
 * take its items. */
void _tomo_run_threads (const char  *name,
                        guint        n_threads,
                        guint        n_items,
                        GThreadFunc  worker,
                        gpointer     data);

G_END_DECLS
