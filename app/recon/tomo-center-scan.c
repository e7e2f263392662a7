/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-center"

#include "config.h"

#include <math.h>

#include "tomo-center-engine.h"
#include "tomo-center-scan.h"

#define N_TILT_ROWS 16

gboolean
tomo_center_find_in_scan (TomoScan         *scan,
                          int               row,
                          TomoCenterMethod  method,
                          TomoCenterResult *result,
                          GError          **error)
{
  return tomo_center_find_in_scan_with (scan, row, method, NULL, result, error);
}

gboolean
tomo_center_estimate_row (TomoScan         *scan,
                          guint             row,
                          TomoCenterMethod  method,
                          TomoCenterResult *result,
                          GError          **error)
{
  guint w = tomo_scan_get_width (scan), n = tomo_scan_get_n_projections (scan);
  g_autofree float *sino = NULL;
  TomoSinogram s;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), FALSE);
  g_return_val_if_fail (row < tomo_scan_get_height (scan), FALSE);

  sino = g_new (float, (gsize) n * w);
  s = (TomoSinogram) { sino, n, w, tomo_scan_get_angles (scan) };
  return tomo_scan_read_sinogram (scan, row, sino, NULL, error)
         && tomo_center_estimate (&s, method, result, error);
}

/* One row: as tomo_center_estimate(), the sweep's candidates on the engine. */
static gboolean
estimate_row (TomoEngine         *engine,
              guint               row,
              const TomoSinogram *sino,
              TomoCenterMethod    method,
              TomoCenterResult   *result,
              GError            **error)
{
  TomoCenterResult first;

  if (engine == NULL || method != TOMO_CENTER_METHOD_SWEEP)
    return tomo_center_estimate (sino, method, result, error);
  return tomo_center_estimate (sino, TOMO_CENTER_METHOD_AUTO, &first, error)
         && tomo_center_sweep_engine (engine, row, first.center,
                                      MAX (3.0, ceil (4.0 * first.uncertainty)), result, error);
}

gboolean
tomo_center_find_in_scan_with (TomoScan         *scan,
                               int               row,
                               TomoCenterMethod  method,
                               TomoEngine       *engine,
                               TomoCenterResult *result,
                               GError          **error)
{
  guint w, h, n;
  g_autofree float *sino = NULL;
  TomoSinogram s;
  double rows[N_TILT_ROWS], centers[N_TILT_ROWS], sigmas[N_TILT_ROWS];
  guint n_rows = 0, last = G_MAXUINT;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), FALSE);
  g_return_val_if_fail (result != NULL, FALSE);

  w = tomo_scan_get_width (scan);
  h = tomo_scan_get_height (scan);
  n = tomo_scan_get_n_projections (scan);
  if (row < 0)
    row = h / 2;
  if ((guint) row >= h)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID,
                   "Row %d is outside %s (rows 0…%u)", row, tomo_scan_get_path (scan), h - 1);
      return FALSE;
    }
  sino = g_new (float, (gsize) n * w);
  s = (TomoSinogram) { sino, n, w, tomo_scan_get_angles (scan) };
  if (!tomo_scan_read_sinogram (scan, row, sino, NULL, error))
    return FALSE;
  if (!estimate_row (engine, row, &s, method, result, error))
    {
      g_prefix_error (error, "%s, row %d: ", tomo_scan_get_path (scan), row);
      return FALSE;
    }

  if (h < 8)
    return TRUE;
  for (guint k = 0; k < N_TILT_ROWS; k++)
    {
      guint r = (guint) lround ((0.05 + 0.9 * k / (N_TILT_ROWS - 1)) * (h - 1));
      TomoCenterResult one;

      if (r == last)
        continue;
      last = r;
      if (!tomo_scan_read_sinogram (scan, r, sino, NULL, error))
        return FALSE;
      /* Rows without contrast (above or below the sample) just drop out. */
      if (!tomo_center_estimate (&s, TOMO_CENTER_METHOD_AUTO, &one, NULL))
        continue;
      rows[n_rows] = r;
      centers[n_rows] = one.center;
      sigmas[n_rows] = one.uncertainty;
      n_rows++;
    }
  tomo_center_fit_tilt (rows, centers, sigmas, n_rows, result, NULL);
  return TRUE;
}
