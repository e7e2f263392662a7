/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The centre sweep with its candidates reconstructed by the engine, so
 * `find-center --method sweep --backend gpu` runs them on the device.
 */
#define G_LOG_DOMAIN "tomo-center"

#include "config.h"

#include "tomo-center-engine.h"
#include "tomo-center-private.h"

/* Candidates per engine request: bounds the host memory of a large scan's
 * slices (8 × 2048² floats = 128 MiB). */
#define CHUNK 8

typedef struct
{
  TomoEngine *engine;
  guint row;
} EngineScores;

static gboolean
engine_scores (const double *centers,
               guint         n_centers,
               double       *scores,
               gpointer      user_data,
               GError      **error)
{
  EngineScores *e = user_data;
  TomoSliceRequest request;

  tomo_slice_request_init (&request, tomo_engine_get_scan (e->engine));
  request.row = e->row;
  request.params.filter = TOMO_FILTER_RAMLAK;
  request.params.pad = TOMO_PAD_ZERO;
  request.params.interp = TOMO_INTERP_LINEAR;
  for (guint first = 0; first < n_centers; first += CHUNK)
    {
      guint n = MIN (CHUNK, n_centers - first);
      g_autoptr(TomoSlice) slice = tomo_engine_reconstruct_centers (e->engine, &request,
                                                                    centers + first, n, NULL,
                                                                    error);
      gsize plane;

      if (slice == NULL)
        return FALSE;
      g_return_val_if_fail (slice->width == slice->height, FALSE);
      plane = (gsize) slice->width * slice->height;
      for (guint i = 0; i < n; i++)
        scores[first + i] = _tomo_center_score_negativity (slice->data + i * plane, slice->width);
    }
  return TRUE;
}

gboolean
tomo_center_sweep_engine (TomoEngine       *engine,
                          guint             row,
                          double            guess,
                          double            half_range,
                          TomoCenterResult *result,
                          GError          **error)
{
  EngineScores e = { engine, row };
  TomoScan *scan;

  g_return_val_if_fail (TOMO_IS_ENGINE (engine), FALSE);
  scan = tomo_engine_get_scan (engine);
  if (scan == NULL)
    {
      g_set_error_literal (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID,
                           "Centre sweep: the engine has no scan");
      return FALSE;
    }
  return _tomo_center_sweep_with (tomo_scan_get_width (scan), guess, half_range, engine_scores,
                                  &e, result, error);
}
