/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-bench-store-fill"
#include "config.h"

#include <stdio.h>

#include <glib/gstdio.h>

#include "tomo-backend.h"
#include "tomo-bench-store-fill.h"
#include "tomo-error.h"
#include "tomo-median.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"
#include "tomo-scan-private.h"

#define FILL_WIDTH 2048
#define FILL_PROJ 1800

/* One fill of the whole scan on a fresh scan (nothing in its row cache):
 * its wall time (ms) and counts. */
static gboolean
fill_once (const char          *path,
           gboolean             host_preprocess,
           double              *ms,
           TomoPreprocessStats *stats,
           char               **describe,
           GError             **error)
{
  g_autoptr(TomoScan) scan = tomo_scan_open (path, NULL, error);
  TomoBackendImpl *impl;
  TomoBackendStoreSetup setup = { 0 };
  gint64 t0;
  gboolean ok;

  if (scan == NULL)
    return FALSE;
  impl = tomo_backend_gpu_new (error);
  if (impl == NULL)
    return FALSE;
  setup.setup = (TomoBackendSetup) { tomo_scan_get_width (scan), tomo_scan_get_n_projections (scan),
                                     tomo_scan_get_angles (scan), TOMO_FILTER_SHEPP_LOGAN,
                                     TOMO_PAD_EDGE, 0 };
  setup.n_rows = tomo_scan_get_height (scan);
  setup.host_preprocess = host_preprocess;
  ok = impl->ops->store->store_new (impl, &setup, error);
  t0 = g_get_monotonic_time ();
  ok = ok && impl->ops->store->store_fill (impl, scan, NULL, NULL, NULL, error);
  *ms = (g_get_monotonic_time () - t0) / 1e3;
  if (ok)
    {
      tomo_backend_store_stats (impl, stats);
      if (describe != NULL && *describe == NULL)
        *describe = impl->ops->store->store_describe (impl);
    }
  tomo_backend_free (impl);
  return ok;
}

gboolean
tomo_bench_store_fill (const char  *dir,
                       guint        n_rows,
                       guint        runs,
                       GError     **error)
{
  g_autofree char *path = g_build_filename (dir, "storefill.h5", NULL);
  g_autofree char *describe = NULL;
  g_autofree double *t_raw = NULL, *t_host = NULL;
  g_autoptr(TomoScan) probe = NULL;
  TomoPhantomParams phantom;
  TomoPreprocessStats s_raw = { 0 }, s_host = { 0 };
  double write_s, ms, med_raw, med_host, raw_gb, float_gb;
  gboolean ok = TRUE;

  runs = MAX (runs, 1);
  tomo_phantom_params_init (&phantom);   /* with noise, seed 1 */
  tomo_phantom_params_set_size (&phantom, FILL_WIDTH, n_rows, FILL_PROJ);
  if (!tomo_phantom_write_dxchange_timed (&phantom, path, &write_s, error))
    return FALSE;
  probe = tomo_scan_open (path, NULL, error);
  if (probe == NULL)
    {
      g_remove (path);
      return FALSE;
    }

  /* A warm-up of each (plans, pinned memory, the file in the page cache),
   * then the two ways alternately. */
  ok = fill_once (path, TRUE, &ms, &s_host, NULL, error)
       && fill_once (path, FALSE, &ms, &s_raw, &describe, error);
  t_raw = g_new (double, runs);
  t_host = g_new (double, runs);
  for (guint r = 0; ok && r < runs; r++)
    ok = fill_once (path, TRUE, &t_host[r], &s_host, NULL, error)
         && fill_once (path, FALSE, &t_raw[r], &s_raw, NULL, error);
  if (ok && (s_raw.n_values != s_host.n_values || s_raw.n_nonpositive != s_host.n_nonpositive
             || s_raw.n_nonfinite != s_host.n_nonfinite))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "The device and host fills of %s counted differently: clamped %"
                   G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT ", replaced %" G_GUINT64_FORMAT
                   " / %" G_GUINT64_FORMAT, path, s_raw.n_nonpositive, s_host.n_nonpositive,
                   s_raw.n_nonfinite, s_host.n_nonfinite);
      ok = FALSE;
    }
  if (ok)
    {
      med_raw = _tomo_median (t_raw, runs);
      med_host = _tomo_median (t_host, runs);
      raw_gb = (double) n_rows * FILL_PROJ * FILL_WIDTH * 2 / 1e9;
      float_gb = raw_gb * 2;
      printf ("## Volume store fill from a file (GPU backend, `store_fill`, wall clock, median of %u)"
              "\n\n", runs);
      printf ("Scan: %u wide, %u projections, %u rows of uint16 (chunks of %u detector row(s)), "
              "phantom with noise written to %s in %.1f s (page cache); each fill on a freshly "
              "opened scan; store: %s; Shepp–Logan filter.  Counts equal both ways: %"
              G_GUINT64_FORMAT " values, %" G_GUINT64_FORMAT " clamped, %" G_GUINT64_FORMAT
              " replaced.\n\n",
              FILL_WIDTH, FILL_PROJ, n_rows, _tomo_scan_get_chunk_rows (probe), path, write_s,
              describe, s_raw.n_values, s_raw.n_nonpositive, s_raw.n_nonfinite);
      printf ("| fill | median ms | ms per row | rows/s | GB/s of uint16 counts | "
              "GB/s of float sinograms stored |\n");
      printf ("|---|---:|---:|---:|---:|---:|\n");
      printf ("| device path: raw uint16 slabs, preprocessed + filtered on the GPU | **%.0f** | "
              "%.2f | %.0f | %.2f | %.2f |\n", med_raw, med_raw / n_rows, n_rows * 1e3 / med_raw,
              raw_gb * 1e3 / med_raw, float_gb * 1e3 / med_raw);
      printf ("| baseline: rows read as float + CPU preprocessing, float upload, GPU filter | "
              "%.0f | %.2f | %.0f | %.2f | %.2f |\n\n", med_host, med_host / n_rows,
              n_rows * 1e3 / med_host, raw_gb * 1e3 / med_host, float_gb * 1e3 / med_host);
      printf ("Speed-up of the device path: %.1f×.\n\n", med_host / med_raw);
      fflush (stdout);
    }
  g_clear_object (&probe);
  g_remove (path);
  return ok;
}
