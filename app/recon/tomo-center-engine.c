/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The centre sweep with its candidates reconstructed by the engine, so
 * `find-center --method sweep --backend gpu` runs them on the device; and
 * the window's sweep of an offset-axis scan, each candidate in the rows
 * stitched about it.
 */
#define G_LOG_DOMAIN "tomo-center"

#include "config.h"

#include <string.h>

#include "tomo-center-engine.h"
#include "tomo-center-private.h"
#include "tomo-geometry.h"

/* Candidates per engine request: bounds the host memory of a large scan's
 * slices (8 × 2048² floats = 128 MiB). */
#define CHUNK 8

typedef struct
{
  TomoEngine *engine;
  guint row;
} EngineScores;

/* The sweep's request on `scan`: Ram-Lak, zero padding, linear, each
 * plane scored where it is reconstructed (on the GPU: not downloaded). */
static void
sweep_request_init (TomoSliceRequest *request,
                    TomoScan         *scan,
                    guint             row)
{
  tomo_slice_request_init (request, scan);
  request->row = row;
  request->params.filter = TOMO_FILTER_RAMLAK;
  request->params.pad = TOMO_PAD_ZERO;
  request->params.interp = TOMO_INTERP_LINEAR;
  request->negativity = TRUE;
  request->skip_download = TRUE;
}

static gboolean
engine_scores (const double *centers,
               guint         n_centers,
               double       *scores,
               gpointer      user_data,
               GError      **error)
{
  EngineScores *e = user_data;
  TomoSliceRequest request;

  sweep_request_init (&request, tomo_engine_get_scan (e->engine), e->row);
  for (guint first = 0; first < n_centers; first += CHUNK)
    {
      guint n = MIN (CHUNK, n_centers - first);
      g_autoptr(TomoSlice) slice = tomo_engine_reconstruct_centers (e->engine, &request,
                                                                    centers + first, n, NULL,
                                                                    error);

      if (slice == NULL)
        return FALSE;
      memcpy (scores + first, slice->negativity, n * sizeof (double));
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

static const TomoGeometry offset_geometry = { TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY };

gboolean
tomo_center_stitched_width (TomoScan     *base,
                            const double *centers,
                            guint         n_centers,
                            guint        *narrowest,
                            GError      **error)
{
  g_return_val_if_fail (TOMO_IS_SCAN (base), FALSE);
  g_return_val_if_fail (centers != NULL && narrowest != NULL, FALSE);

  *narrowest = G_MAXUINT;
  for (guint i = 0; i < n_centers; i++)
    {
      TomoGeometryPlan plan;

      if (!tomo_geometry_resolve (base, &offset_geometry, centers[i], &plan, error))
        {
          g_prefix_error (error, "Candidate %.2f px: ", centers[i]);
          return FALSE;
        }
      *narrowest = MIN (*narrowest, plan.width);
    }
  return TRUE;
}

gboolean
tomo_center_sweep_stitched (TomoEngine   *engine,
                            TomoScan     *base,
                            guint         row,
                            const double *centers,
                            guint         n_centers,
                            guint         size,
                            float        *images,
                            double       *scores,
                            GCancellable *cancellable,
                            GError      **error)
{
  g_return_val_if_fail (TOMO_IS_ENGINE (engine), FALSE);
  g_return_val_if_fail (TOMO_IS_SCAN (base), FALSE);
  g_return_val_if_fail (centers != NULL && scores != NULL && size > 0, FALSE);

  for (guint i = 0; i < n_centers; i++)
    {
      g_autoptr(TomoScan) stitched = NULL;
      g_autoptr(TomoSlice) slice = NULL;
      TomoGeometryPlan plan;
      TomoSliceRequest request;
      guint w;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      stitched = tomo_geometry_present (base, &offset_geometry, centers[i], &plan, error);
      if (stitched == NULL)
        {
          g_prefix_error (error, "Candidate %.2f px: ", centers[i]);
          return FALSE;
        }
      w = tomo_scan_get_width (stitched);
      if (size > w)
        {
          g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID,
                       "Candidate %.2f px: its stitched slice is %u wide, narrower than the %u² "
                       "view", centers[i], w, size);
          return FALSE;
        }
      tomo_engine_set_scan (engine, stitched);
      sweep_request_init (&request, stitched, row);
      request.params.center = plan.recon_center;
      /* On the GPU only the middle comes down. */
      request.keep_on_device = images != NULL;
      slice = tomo_engine_reconstruct (engine, &request, cancellable, error);
      if (slice == NULL
          || (images != NULL
              && !tomo_slice_read_rect (slice, 0, (w - size) / 2, (w - size) / 2, size, size,
                                        images + (gsize) i * size * size, error)))
        {
          g_prefix_error (error, "Candidate %.2f px: ", centers[i]);
          return FALSE;
        }
      g_return_val_if_fail (slice->width == w && slice->height == w, FALSE);
      scores[i] = slice->negativity[0];
    }
  return TRUE;
}
