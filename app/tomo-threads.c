/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The thread fan-out of the CPU back projections (tomo-fbp.c, tomo-plane.c,
 * tomo-preview.c): one place that starts, degrades and joins.
 */
#define G_LOG_DOMAIN "tomo-threads"

#include "config.h"

#include "tomo-threads.h"

void
_tomo_run_threads (const char  *name,
                   guint        n_threads,
                   guint        n_items,
                   GThreadFunc  worker,
                   gpointer     data)
{
  guint n_extra;
  g_autofree GThread **threads = NULL;

  if (n_threads == 0)
    n_threads = MAX (g_get_num_processors (), 1);
  n_extra = MIN (n_threads, n_items) > 0 ? MIN (n_threads, n_items) - 1 : 0;
  threads = g_new0 (GThread *, n_extra + 1);
  for (guint i = 0; i < n_extra; i++)
    {
      g_autoptr (GError) error = NULL;

      threads[i] = g_thread_try_new (name, worker, data, &error);
      if (threads[i] == NULL)
        {
          /* Fewer threads only cost time; the result is the same. */
          g_debug ("Could not start a %s thread: %s", name, error->message);
          break;
        }
    }
  worker (data);
  for (guint i = 0; i < n_extra && threads[i] != NULL; i++)
    g_thread_join (threads[i]);
}
