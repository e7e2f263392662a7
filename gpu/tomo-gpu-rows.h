/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Reading a group of rows on several threads: the volume pipeline's host
 * read when the job's source allows concurrent calls.  Plain C (no CUDA),
 * so its ordering and error rules are tested without a device.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _TomoGpuRowPool TomoGpuRowPool;

/* Reads item `i` of a batch; FALSE with `error` set on failure. */
typedef gboolean (*TomoGpuRowTask) (guint     i,
                                    gpointer  data,
                                    GError  **error);

/* A pool of `n_threads` helper threads (0: every batch runs serially on the
 * calling thread). */
TomoGpuRowPool *_tomo_gpu_row_pool_new  (guint           n_threads);
void            _tomo_gpu_row_pool_free (TomoGpuRowPool *pool);

/* Runs task(0 … n−1, data), each index once, on the calling thread and the
 * pool's threads; returns when all have returned.  After a failure no
 * further index is started; the error of the lowest failed index is
 * returned, so the report does not depend on the threads' timing.  A
 * non-zero *stop (may be NULL) also stops starting indices; that alone is
 * no error. */
gboolean        _tomo_gpu_row_pool_run  (TomoGpuRowPool *pool,
                                         guint           n,
                                         TomoGpuRowTask  task,
                                         gpointer        data,
                                         volatile gint  *stop,
                                         GError        **error);

G_END_DECLS
