/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A group's rows read on several threads: the calling thread and the
 * pool's threads take indices from one counter until none is left.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include "tomo-gpu.h"
#include "tomo-gpu-rows.h"

struct _TomoGpuRowPool
{
  GThreadPool *threads;   /* NULL: serial */
  guint n_threads;
};

typedef struct
{
  guint n;
  TomoGpuRowTask task;
  gpointer data;
  volatile gint *stop;
  gint next;              /* next index to start (atomic) */
  gint failed;            /* atomic: an index failed, start no more */
  GMutex lock;
  GCond cond;
  guint running;          /* helper items not yet finished */
  GError *error;          /* of the lowest failed index */
  guint error_index;
} Batch;

static void
batch_work (Batch *b)
{
  for (;;)
    {
      GError *error = NULL;
      guint i;

      if (g_atomic_int_get (&b->failed) || (b->stop != NULL && g_atomic_int_get (b->stop)))
        return;
      i = (guint) g_atomic_int_add (&b->next, 1);
      if (i >= b->n)
        return;
      if (b->task (i, b->data, &error))
        continue;
      if (error == NULL)
        error = g_error_new (TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "Reading item %u failed (no reason given)", i);
      g_atomic_int_set (&b->failed, 1);
      g_mutex_lock (&b->lock);
      if (b->error == NULL || i < b->error_index)
        {
          g_clear_error (&b->error);
          b->error = error;
          b->error_index = i;
        }
      else
        g_error_free (error);
      g_mutex_unlock (&b->lock);
    }
}

static void
pool_run (gpointer item,
          gpointer user_data)
{
  Batch *b = item;

  batch_work (b);
  g_mutex_lock (&b->lock);
  b->running--;
  g_cond_signal (&b->cond);
  g_mutex_unlock (&b->lock);
}

TomoGpuRowPool *
_tomo_gpu_row_pool_new (guint n_threads)
{
  TomoGpuRowPool *pool = g_new0 (TomoGpuRowPool, 1);

  if (n_threads > 0)
    pool->threads = g_thread_pool_new (pool_run, NULL, (gint) n_threads, TRUE, NULL);
  pool->n_threads = pool->threads != NULL ? n_threads : 0;
  return pool;
}

void
_tomo_gpu_row_pool_free (TomoGpuRowPool *pool)
{
  if (pool == NULL)
    return;
  if (pool->threads != NULL)
    g_thread_pool_free (pool->threads, FALSE, TRUE);
  g_free (pool);
}

gboolean
_tomo_gpu_row_pool_run (TomoGpuRowPool *pool,
                        guint           n,
                        TomoGpuRowTask  task,
                        gpointer        data,
                        volatile gint  *stop,
                        GError        **error)
{
  Batch b = { n, task, data, stop, 0, 0 };
  guint helpers = pool != NULL && n > 1 ? MIN (pool->n_threads, n - 1) : 0;

  g_mutex_init (&b.lock);
  g_cond_init (&b.cond);
  b.running = helpers;
  for (guint h = 0; h < helpers; h++)
    g_thread_pool_push (pool->threads, &b, NULL);
  batch_work (&b);
  /* `b` lives on this stack: every helper must be done with it. */
  g_mutex_lock (&b.lock);
  while (b.running > 0)
    g_cond_wait (&b.cond, &b.lock);
  g_mutex_unlock (&b.lock);
  g_mutex_clear (&b.lock);
  g_cond_clear (&b.cond);
  if (b.error != NULL)
    {
      g_propagate_error (error, b.error);
      return FALSE;
    }
  return TRUE;
}
