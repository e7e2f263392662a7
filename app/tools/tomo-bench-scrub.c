/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-bench-scrub"
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "tomo-bench-scrub.h"
#include "tomo-median.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"
#include "tomo-scrub-prefetch.h"

#define SCRUB_WIDTH 2048
#define SCRUB_PROJ 1800
#define STEP_US (G_USEC_PER_SEC / 30)

static void
summarise (double *v, guint n, double *med, double *max)
{
  *med = _tomo_median (v, n);
  *max = v[n - 1];
}

/* One row request as the engine serves it: the row from the scan (cache or
 * file), then the prefetcher re-aimed around it. */
static gboolean
request_row (TomoScan *scan, TomoScrubPrefetch *prefetch, guint row, int dir,
             float *buf, double *ms, GError **error)
{
  gint64 t0;

  if (prefetch != NULL)
    tomo_scrub_prefetch_cancel (prefetch);
  t0 = g_get_monotonic_time ();
  if (!tomo_scan_read_sinogram (scan, row, buf, NULL, error))
    return FALSE;
  *ms = (g_get_monotonic_time () - t0) / 1e3;
  if (prefetch != NULL)
    tomo_scrub_prefetch_aim (prefetch, scan, row, dir, 4, 2);
  return TRUE;
}

/* Scenario `which`: 0 cold rows, 1 the row after one just served (given the
 * prefetcher time to finish), 2 stepping at 30 Hz. */
static gboolean
measure (const char *path, guint height, gboolean use_prefetch, int which,
         double *med, double *max, GError **error)
{
  g_autoptr(TomoScan) scan = tomo_scan_open (path, NULL, error);
  g_autofree float *buf = NULL;
  g_autofree double *t = NULL;
  TomoScrubPrefetch *prefetch = NULL;
  guint n = 0;
  gboolean ok = TRUE;

  if (scan == NULL)
    return FALSE;
  buf = g_new (float, (gsize) SCRUB_WIDTH * SCRUB_PROJ);
  t = g_new (double, height);
  if (use_prefetch)
    prefetch = tomo_scrub_prefetch_new ();

  if (which == 0)
    {
      /* Every 8th row, further than the prefetcher reaches: never read before. */
      for (guint r = 0; ok && r < height; r += 8)
        {
          ok = request_row (scan, prefetch, r, 1, buf, &t[n++], error);
          if (prefetch != NULL)
            tomo_scrub_prefetch_cancel (prefetch);
        }
    }
  else if (which == 1)
    {
      for (guint r = 0; ok && r + 1 < height; r += 2)
        {
          double ignored;

          ok = request_row (scan, prefetch, r, 1, buf, &ignored, error);
          if (ok && prefetch != NULL)
            tomo_scrub_prefetch_wait_idle (prefetch);
          ok = ok && request_row (scan, prefetch, r + 1, 1, buf, &t[n++], error);
          if (ok && prefetch != NULL)
            tomo_scrub_prefetch_wait_idle (prefetch);
        }
    }
  else
    {
      gint64 next = g_get_monotonic_time ();

      for (guint r = 0; ok && r < height; r++)
        {
          ok = request_row (scan, prefetch, r, 1, buf, &t[n++], error);
          next += STEP_US;
          if (next > g_get_monotonic_time ())
            g_usleep (next - g_get_monotonic_time ());
        }
    }
  g_clear_pointer (&prefetch, tomo_scrub_prefetch_free);
  if (ok)
    summarise (t, n, med, max);
  return ok;
}

gboolean
tomo_bench_row_scrub (const char *dir,
                      guint       height,
                      GError    **error)
{
  static const char *const names[] = { "row not read before", "row after the one shown (prefetcher idle)",
                                       "stepping one row every 33 ms" };
  g_autofree char *path = g_build_filename (dir, "scrub.h5", NULL);
  TomoPhantomParams phantom;
  double write_s;

  tomo_phantom_params_init (&phantom);   /* with noise, seed 1 */
  tomo_phantom_params_set_size (&phantom, SCRUB_WIDTH, MAX (height, 16), SCRUB_PROJ);
  phantom.center = (phantom.width - 1) / 2.0;
  if (!tomo_phantom_write_dxchange_timed (&phantom, path, &write_s, error))
    return FALSE;

  printf ("## Row scrub: request → preprocessed sinogram in host memory (wall clock)\n\n");
  printf ("Scan: %u wide, %u projections, %u rows, phantom with noise written to a temporary "
          "Data Exchange file in %.1f s (in the OS page cache: the file read is a copy, not a "
          "disk seek). Prefetch: 4 rows the way the row moves, 2 back.\n\n",
          phantom.width, phantom.n_proj, phantom.height, write_s);
  printf ("| change | prefetch off: median / max ms | prefetch on: median / max ms |\n");
  printf ("|---|---:|---:|\n");
  for (int which = 0; which < 3; which++)
    {
      double m[2], x[2];

      for (int on = 0; on < 2; on++)
        if (!measure (path, phantom.height, on, which, &m[on], &x[on], error))
          return FALSE;
      printf ("| %s | %.1f / %.1f | %.1f / %.1f |\n", names[which], m[0], x[0], m[1], x[1]);
    }
  printf ("\n");
  fflush (stdout);
  return TRUE;
}
