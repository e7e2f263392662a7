/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-bench-row"
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "tomo-bench-row.h"
#include "tomo-error.h"
#include "tomo-median.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"

#define ROW_WIDTH 2048
#define ROW_PROJ 1800
#define ROW_HEIGHT 32

gboolean
tomo_bench_row_change (const char  *dir,
                       TomoBackend  backend,
                       guint        runs,
                       GError     **error)
{
  g_autofree char *path = g_build_filename (dir, "rowchange.h5", NULL);
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) first = NULL;
  g_autofree double *t = NULL, *t_filter = NULL, *t_bp = NULL;
  TomoPhantomParams phantom;
  TomoSliceRequest request;
  gint64 t0;
  double write_s, max = 0;
  guint n;

  runs = CLAMP (runs, 1, ROW_HEIGHT - 1);
  t = g_new (double, runs);
  t_filter = g_new (double, runs);
  t_bp = g_new (double, runs);
  tomo_phantom_params_init (&phantom);   /* with noise, seed 1 */
  tomo_phantom_params_set_size (&phantom, ROW_WIDTH, ROW_HEIGHT, ROW_PROJ);
  phantom.center = (phantom.width - 1) / 2.0;
  t0 = g_get_monotonic_time ();
  if (!tomo_phantom_write_dxchange (&phantom, path, error))
    return FALSE;
  write_s = (g_get_monotonic_time () - t0) / 1e6;

  scan = tomo_scan_open (path, NULL, error);
  if (scan == NULL)
    return FALSE;
  engine = tomo_engine_new (backend);
  tomo_engine_set_scan (engine, scan);
  tomo_engine_set_prefetch (engine, 0, 0);
  tomo_slice_request_init (&request, scan);
  request.params.center = phantom.center;
  request.keep_on_device = backend == TOMO_BACKEND_GPU;
  request.skip_download = backend == TOMO_BACKEND_GPU;
  /* Warm-up: plans, filter response, device buffers. */
  first = tomo_engine_reconstruct (engine, &request, NULL, error);
  if (first == NULL)
    return FALSE;

  for (n = 0; n < runs; n++)
    {
      g_autoptr(TomoSlice) slice = NULL;

      /* Every row once (7 is prime to the height): never from the row cache. */
      request.row = (request.row + 7) % ROW_HEIGHT;
      t0 = g_get_monotonic_time ();
      slice = tomo_engine_reconstruct (engine, &request, NULL, error);
      if (slice == NULL)
        return FALSE;
      t[n] = (g_get_monotonic_time () - t0) / 1e3;
      max = MAX (max, t[n]);
      t_filter[n] = slice->filter_ms;
      t_bp[n] = slice->backproject_ms;
      if (!isfinite (slice->values.mean))
        {
          g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                       "Row %u of %s reconstructed to non-finite values", request.row, path);
          return FALSE;
        }
    }

  printf ("## Viewer engine: row change → slice %s (`TomoEngine`, blocking, wall clock, "
          "median of %u)\n\n", backend == TOMO_BACKEND_GPU ? "in device memory" : "in host memory",
          runs);
  printf ("Scan: %u wide, %u projections, %u rows, phantom with noise written to %s in %.1f s "
          "(page cache); every request a row not read before, prefetch off; engine: %s.\n\n",
          phantom.width, phantom.n_proj, phantom.height, path, write_s,
          tomo_engine_get_device_name (engine));
  printf ("| change | median ms | max ms | filter ms | back projection ms |\n");
  printf ("|---|---:|---:|---:|---:|\n");
  printf ("| row (read + preprocess + upload + filter + back projection) | %.1f | %.1f | %.1f | %.1f |\n\n",
          _tomo_median (t, runs), max, _tomo_median (t_filter, runs),
          _tomo_median (t_bp, runs));
  fflush (stdout);
  return TRUE;
}
