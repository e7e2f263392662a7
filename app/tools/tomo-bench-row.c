/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-bench-row"
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tomo-bench-row.h"
#include "tomo-center-engine.h"
#include "tomo-error.h"
#include "tomo-filter.h"
#include "tomo-geometry.h"
#include "tomo-median.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"
#include "tomo-scan-private.h"

#define ROW_WIDTH 2048
#define ROW_PROJ 1800
#define ROW_HEIGHT 32
#define ROW_TILT 0.3     /* degrees: the axis tilt of the corrected walks */
#define TILT_LABEL "axis tilt " G_STRINGIFY (ROW_TILT) "° corrected"

/* The stages of a row change, in the table's column order. */
enum { TOTAL, READ, UPLOAD, PREPROCESS, FILTER, BP, N_STAGES };

/* Medians of one way of changing rows, stage by stage (ms). */
typedef struct
{
  const char *what;
  guint n;
  double ms[N_STAGES][ROW_HEIGHT];   /* one value per run (runs < ROW_HEIGHT) */
  double max;
  gboolean device;
} RowTimes;

/* One request timed into run n of `t`. */
static gboolean
time_request (TomoEngine       *engine,
              TomoSliceRequest *request,
              RowTimes         *t,
              const char       *path,
              GError          **error)
{
  g_autoptr(TomoSlice) slice = NULL;
  guint n = t->n;
  gint64 t0;

  t0 = g_get_monotonic_time ();
  slice = tomo_engine_reconstruct (engine, request, NULL, error);
  if (slice == NULL)
    return FALSE;
  t->ms[TOTAL][n] = (g_get_monotonic_time () - t0) / 1e3;
  t->max = MAX (t->max, t->ms[TOTAL][n]);
  t->ms[READ][n] = slice->read_ms;
  t->ms[UPLOAD][n] = slice->upload_ms;
  t->ms[PREPROCESS][n] = slice->preprocess_ms;
  t->ms[FILTER][n] = slice->filter_ms;
  t->ms[BP][n] = slice->backproject_ms;
  t->device = t->device && slice->device_preprocess;
  t->n++;
  if (!isfinite (slice->values.mean))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Row %u of %s reconstructed to non-finite values", request->row, path);
      return FALSE;
    }
  return TRUE;
}

/* `runs` row changes, row += 7 each (7 is prime to the height): `first`
 * decides where the walk starts, so that a second walk meets the rows of
 * the first again. */
static gboolean
walk_rows (TomoEngine       *engine,
           TomoSliceRequest *request,
           guint             first,
           guint             runs,
           RowTimes         *t,
           const char       *path,
           GError          **error)
{
  request->row = first;
  for (guint n = 0; n < runs; n++)
    {
      request->row = (request->row + 7) % ROW_HEIGHT;
      if (!time_request (engine, request, t, path, error))
        return FALSE;
    }
  return TRUE;
}

/* What a walk on one row changes at each step, as the window's controls
 * change it: the axis tilt (0.3° + 0.01°·n, each a new correction of the
 * engine's file, on row 3), the filter (Shepp–Logan and Ram-Lak in turn,
 * every step a switch: a reconfigure and the held rows filtered again, on
 * row 5) or an offset axis (`axis` + 0.25·n columns, each a new stitching
 * of the engine's file, on row 7). */
typedef enum { STEP_TILT, STEP_FILTER, STEP_AXIS } StepKind;

/* `runs` steps of `kind`.  `before`: each step as it cost before the engine
 * kept the file's raw rows and the filter's ramp across scans (the engine
 * sees another scan between tilts, so its raw row cache goes, and the ramp
 * is computed anew). */
static gboolean
walk_on_row (TomoEngine       *engine,
             TomoSliceRequest *request,
             guint             runs,
             StepKind          kind,
             gboolean          before,
             double            axis,
             RowTimes         *t,
             const char       *path,
             GError          **error)
{
  TomoScan *source = tomo_geometry_get_mapped_source (tomo_engine_get_scan (engine));
  g_autoptr(TomoScan) file = NULL;
  gboolean ok = TRUE;

  /* Tilts correct and stitchings map a file's rows. */
  g_return_val_if_fail (source != NULL, FALSE);
  file = g_object_ref (source);

  request->row = kind == STEP_TILT ? 3 : kind == STEP_FILTER ? 5 : 7;
  for (guint n = 0; n < runs && ok; n++)
    {
      g_autoptr(TomoScan) next = NULL;

      if (kind == STEP_TILT)
        next = tomo_geometry_correct_tilt (file, ROW_TILT + 0.01 * (n + 1), error);
      else if (kind == STEP_AXIS)
        {
          const TomoGeometry offset = { TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY };
          TomoFilterType filter = request->params.filter;
          TomoGeometryPlan plan;

          next = tomo_geometry_present (file, &offset, axis + 0.25 * (n + 1), &plan, error);
          if (next != NULL)
            {
              tomo_recon_params_init (&request->params, tomo_scan_get_width (next));
              request->params.filter = filter;
              request->params.center = plan.recon_center;
            }
        }
      else   /* the other of the two than the engine's last request had */
        request->params.filter = request->params.filter == TOMO_FILTER_RAMLAK
                                 ? TOMO_FILTER_SHEPP_LOGAN : TOMO_FILTER_RAMLAK;
      if (kind != STEP_FILTER)
        {
          if (next == NULL)
            return FALSE;
          if (before)
            tomo_engine_set_scan (engine, NULL);
          tomo_engine_set_scan (engine, next);
        }
      if (before)
        _tomo_filter_forget_ramp ();
      ok = time_request (engine, request, t, path, error);
    }
  return ok;
}

static void
print_times (RowTimes *t)
{
  double m[N_STAGES], other;
  char up[32] = "—", pp[32] = "in read";

  for (guint s = 0; s < N_STAGES; s++)
    m[s] = _tomo_median (t->ms[s], t->n);
  other = m[TOTAL] - m[READ] - m[UPLOAD] - m[PREPROCESS] - m[FILTER] - m[BP];
  if (t->device)
    {
      g_snprintf (up, sizeof up, "%.2f", m[UPLOAD]);
      g_snprintf (pp, sizeof pp, "%.2f", m[PREPROCESS]);
    }
  printf ("| %s | **%.1f** | %.1f | %.2f | %s | %s | %.2f | %.2f | %.2f |\n", t->what, m[TOTAL],
          t->max, m[READ], up, pp, m[FILTER], m[BP], other);
}

/* A fresh scan of `path` (its axis tilt of `tilt` degrees corrected) and
 * an engine on `backend` over it, warmed up on the middle row (plans,
 * filter response, device buffers). */
static TomoEngine *
open_engine (const char        *path,
             double             tilt,
             TomoBackend        backend,
             gboolean           device_preprocess,
             TomoSliceRequest  *request,
             double             center,
             GError           **error)
{
  g_autoptr(TomoScan) file = tomo_scan_open (path, NULL, error);
  g_autoptr(TomoScan) tilted = NULL, scan = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) first = NULL;
  const TomoGeometry automatic = { TOMO_GEOMETRY_AUTO };
  TomoGeometryPlan plan;

  /* The geometry as the window presents it: a full turn about an axis near
   * an edge is stitched (offset axis), rows of half the projections. */
  if (file == NULL || (tilted = tomo_geometry_correct_tilt (file, tilt, error)) == NULL
      || (scan = tomo_geometry_present (tilted, &automatic, center, &plan, error)) == NULL)
    return NULL;
  if (isfinite (plan.recon_center))
    center = plan.recon_center;
  engine = tomo_engine_new (backend);
  tomo_engine_set_scan (engine, scan);
  tomo_engine_set_prefetch (engine, 0, 0);
  tomo_engine_set_device_preprocess (engine, device_preprocess);
  tomo_slice_request_init (request, scan);
  request->params.center = center;
  request->keep_on_device = backend == TOMO_BACKEND_GPU;
  request->skip_download = backend == TOMO_BACKEND_GPU;
  first = tomo_engine_reconstruct (engine, request, NULL, error);
  if (first == NULL)
    return NULL;
  return g_steal_pointer (&engine);
}

/* The offset-axis walks on one path: rows cold, the same rows again, then
 * the axis stepped on one row. */
static gboolean
offset_walks (const char       *path,
              TomoBackend       backend,
              gboolean          device_preprocess,
              double            axis,
              guint             runs,
              TomoSliceRequest *request,
              RowTimes         *cold,
              RowTimes         *warm,
              RowTimes         *step,
              GError          **error)
{
  g_autoptr(TomoEngine) engine = open_engine (path, 0.0, backend, device_preprocess, request, axis,
                                              error);

  return engine != NULL
         && walk_rows (engine, request, ROW_HEIGHT / 2, runs, cold, path, error)
         && walk_rows (engine, request, ROW_HEIGHT / 2, runs, warm, path, error)
         && walk_on_row (engine, request, runs, STEP_AXIS, FALSE, axis, step, path, error);
}

/* The baseline of the stitched sweep: the candidates as the sweep made
 * them before their scores came with the slices — each whole slice
 * downloaded, scored on the host, its middle copied there. */
static gboolean
sweep_downloaded (TomoEngine   *engine,
                  TomoScan     *base,
                  guint         row,
                  const double *centers,
                  guint         n,
                  guint         size,
                  float        *images,
                  double       *scores,
                  GError      **error)
{
  const TomoGeometry offset = { TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY };

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(TomoScan) stitched = NULL;
      g_autoptr(TomoSlice) slice = NULL;
      TomoGeometryPlan plan;
      TomoSliceRequest request;
      guint w;

      stitched = tomo_geometry_present (base, &offset, centers[i], &plan, error);
      if (stitched == NULL)
        return FALSE;
      tomo_engine_set_scan (engine, stitched);
      tomo_slice_request_init (&request, stitched);
      request.row = row;
      request.params.filter = TOMO_FILTER_RAMLAK;
      request.params.pad = TOMO_PAD_ZERO;
      request.params.center = plan.recon_center;
      slice = tomo_engine_reconstruct (engine, &request, NULL, error);
      if (slice == NULL)
        return FALSE;
      w = slice->width;
      scores[i] = tomo_center_negativity (slice->data, w, w);
      for (guint y = 0; y < size; y++)
        memcpy (images + ((gsize) i * size + y) * size,
                slice->data + (gsize) ((w - size) / 2 + y) * w + (w - size) / 2,
                sizeof (float) * size);
    }
  return TRUE;
}

/* The sweep window's sweep of an offset-axis scan: `n` candidates 0.5 px
 * apart about `axis`, each stitched about itself, on an engine of
 * `backend` (tomo_center_sweep_stitched, or with `downloaded` the
 * baseline above); a first sweep warms the engine (device, plans, the raw
 * row), then the median of `runs` (ms). */
static gboolean
time_stitched_sweep (const char  *path,
                     TomoBackend  backend,
                     gboolean     downloaded,
                     double       axis,
                     guint        n,
                     guint        runs,
                     double      *ms,
                     GError     **error)
{
  g_autoptr(TomoScan) file = tomo_scan_open (path, NULL, error);
  g_autoptr(TomoEngine) engine = NULL;
  g_autofree double *centers = g_new (double, n);
  g_autofree double *scores = g_new (double, n);
  g_autofree double *t = g_new (double, runs);
  g_autofree float *images = NULL;
  guint size;

  if (file == NULL)
    return FALSE;
  engine = tomo_engine_new (backend);
  tomo_engine_set_prefetch (engine, 0, 0);
  for (guint i = 0; i < n; i++)
    centers[i] = axis + 0.5 * (i - (n - 1) / 2.0);
  if (!tomo_center_stitched_width (file, centers, n, &size, error))
    return FALSE;
  size = MIN (size, 256);
  images = g_new (float, (gsize) n * size * size);
  for (guint r = 0; r <= runs; r++)
    {
      gint64 t0 = g_get_monotonic_time ();

      if (!(downloaded ? sweep_downloaded (engine, file, ROW_HEIGHT / 2, centers, n, size, images,
                                           scores, error)
                       : tomo_center_sweep_stitched (engine, file, ROW_HEIGHT / 2, centers, n,
                                                     size, images, scores, NULL, error)))
        return FALSE;
      if (r > 0)
        t[r - 1] = (g_get_monotonic_time () - t0) / 1e3;
    }
  *ms = _tomo_median (t, runs);
  return TRUE;
}

gboolean
tomo_bench_row_change (const char  *dir,
                       TomoBackend  backend,
                       guint        runs,
                       GError     **error)
{
  g_autofree char *path = g_build_filename (dir, "rowchange.h5", NULL);
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoEngine) baseline = NULL;
  g_autoptr(TomoScan) probe = NULL;
  TomoPhantomParams phantom;
  TomoSliceRequest request;
  RowTimes cold = { "device path, row not read before (slab read from the file)", .device = TRUE };
  RowTimes warm = { "device path, row in the raw row cache (what scrub prefetch serves)", .device = TRUE };
  RowTimes host = { "baseline: host path, read as float + CPU preprocessing, float upload", .device = TRUE };
  RowTimes tilt_cold = { TILT_LABEL ", device path (rows resampled there), row not read before", .device = TRUE };
  RowTimes tilt_warm = { TILT_LABEL ", device path, row in the raw row cache", .device = TRUE };
  RowTimes tilt_host = { TILT_LABEL ", host path (CPU preprocessing and cubic shift)", .device = TRUE };
  RowTimes tilt_step = { "axis tilt stepped by 0.01° on one row, device path (raw rows, angle tables and ramp kept)", .device = TRUE };
  RowTimes tilt_step_before = { "baseline: the same tilt steps as before (raw row cache dropped, ramp recomputed at each)", .device = TRUE };
  RowTimes filter_switch = { "filter switched on one row (Shepp–Logan ↔ Ram-Lak), device path, ramp kept", .device = TRUE };
  RowTimes filter_switch_before = { "baseline: the same switches with the ramp recomputed at each, as before", .device = TRUE };
  RowTimes offset_cold = { "offset axis, 360° stitched on the device (device path), row not read before", .device = TRUE };
  RowTimes offset_warm = { "offset axis, stitched on the device, row in the raw row cache", .device = TRUE };
  RowTimes offset_host = { "baseline: offset axis stitched on the host (host path), row not read before", .device = TRUE };
  RowTimes offset_host_warm = { "baseline: offset axis stitched on the host, row in the scan's row cache", .device = TRUE };
  RowTimes axis_step = { "offset axis moved by 0.25 px on one row, device path (raw rows kept, stitched anew)", .device = TRUE };
  RowTimes axis_step_host = { "baseline: the same axis steps on the host path (stitched on the CPU, float upload)", .device = TRUE };
  g_autofree char *offset_path = g_build_filename (dir, "offset.h5", NULL);
  TomoPhantomParams offset;
  double offset_write_s, sweep_ms = 0, sweep_downloaded_ms = 0, sweep_cpu_ms = 0;
  double write_s;
  gboolean ok;

  runs = CLAMP (runs, 1, ROW_HEIGHT - 2);
  tomo_phantom_params_init (&phantom);   /* with noise, seed 1 */
  tomo_phantom_params_set_size (&phantom, ROW_WIDTH, ROW_HEIGHT, ROW_PROJ);
  phantom.center = (phantom.width - 1) / 2.0;
  if (!tomo_phantom_write_dxchange_timed (&phantom, path, &write_s, error))
    return FALSE;
  probe = tomo_scan_open (path, NULL, error);
  if (probe == NULL)
    return FALSE;

  /* The baseline first, on its own scan (own HDF5 handles and row cache):
   * the earlier path, rows read as floats and preprocessed on the CPU. */
  baseline = open_engine (path, 0.0, backend, FALSE, &request, phantom.center, error);
  ok = baseline != NULL && walk_rows (baseline, &request, ROW_HEIGHT / 2, runs, &host, path, error);
  g_clear_object (&baseline);
  engine = ok ? open_engine (path, 0.0, backend, TRUE, &request, phantom.center, error) : NULL;
  ok = engine != NULL
       && walk_rows (engine, &request, ROW_HEIGHT / 2, runs, &cold, path, error)
       && walk_rows (engine, &request, ROW_HEIGHT / 2, runs, &warm, path, error);
  /* The same walks with the axis tilt corrected, each on a scan of its own. */
  baseline = ok ? open_engine (path, ROW_TILT, backend, FALSE, &request, phantom.center, error) : NULL;
  ok = baseline != NULL && walk_rows (baseline, &request, ROW_HEIGHT / 2, runs, &tilt_host, path, error);
  g_clear_object (&baseline);
  baseline = ok ? open_engine (path, ROW_TILT, backend, TRUE, &request, phantom.center, error) : NULL;
  ok = baseline != NULL
       && walk_rows (baseline, &request, ROW_HEIGHT / 2, runs, &tilt_cold, path, error)
       && walk_rows (baseline, &request, ROW_HEIGHT / 2, runs, &tilt_warm, path, error)
       && walk_on_row (baseline, &request, runs, STEP_TILT, TRUE, 0.0, &tilt_step_before, path, error)
       && walk_on_row (baseline, &request, runs, STEP_TILT, FALSE, 0.0, &tilt_step, path, error)
       && walk_on_row (baseline, &request, runs, STEP_FILTER, TRUE, 0.0, &filter_switch_before, path, error)
       && walk_on_row (baseline, &request, runs, STEP_FILTER, FALSE, 0.0, &filter_switch, path, error);
  g_clear_object (&baseline);
  /* A half-acquisition scan of the same size: a full turn, the axis 248
   * columns from the right edge, the object twice as wide as the detector. */
  offset = phantom;
  offset.angle_range_deg = 360.0;
  offset.center = ROW_WIDTH - 248.5;
  offset.object_width = 2 * ROW_WIDTH - 600;
  ok = ok && tomo_phantom_write_dxchange_timed (&offset, offset_path, &offset_write_s, error);
  /* The host path first (the baseline), then the device path, each on a
   * scan of its own. */
  ok = ok && offset_walks (offset_path, backend, FALSE, offset.center, runs, &request, &offset_host,
                           &offset_host_warm, &axis_step_host, error)
       && offset_walks (offset_path, backend, TRUE, offset.center, runs, &request, &offset_cold,
                        &offset_warm, &axis_step, error);
  /* The sweep window's offset-axis sweep: 16 candidates on this backend,
   * scored where they are and as before; beside it the CPU's, 2
   * candidates once (a whole 3600² slice each). */
  ok = ok && time_stitched_sweep (offset_path, backend, TRUE, offset.center, 16, 5,
                                  &sweep_downloaded_ms, error)
       && time_stitched_sweep (offset_path, backend, FALSE, offset.center, 16, 5, &sweep_ms, error)
       && time_stitched_sweep (offset_path, TOMO_BACKEND_CPU, FALSE, offset.center, 2, 1,
                               &sweep_cpu_ms, error);

  if (ok)
    {
      printf ("## Viewer engine: row change → slice %s (`TomoEngine`, blocking, wall clock, "
              "median of %u)\n\n", backend == TOMO_BACKEND_GPU ? "in device memory" : "in host memory",
              runs);
      printf ("Scan: %u wide, %u projections, %u rows of uint16 (chunks of %u detector row(s)), "
              "phantom with noise written to %s in %.1f s (page cache); prefetch off; every "
              "request another row; engine: %s.  Stages: read = rows from the file or the raw row "
              "cache (wall clock); upload, preprocess, filter, back projection = CUDA events; "
              "other = the rest of the request (slice copy, statistics, host work).\n\n",
              phantom.width, phantom.n_proj, phantom.height, _tomo_scan_get_chunk_rows (probe),
              path, write_s, tomo_engine_get_device_name (engine));
      printf ("| row change | median ms | max ms | read | upload | preprocess | filter | "
              "back projection | other |\n");
      printf ("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      {
        RowTimes *rows[] = {
          &cold, &warm, &host, &tilt_cold,
          &tilt_warm, &tilt_host, &tilt_step, &tilt_step_before,
          &filter_switch, &filter_switch_before, &offset_cold, &offset_warm,
          &offset_host, &offset_host_warm, &axis_step, &axis_step_host,
        };

        for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
          print_times (rows[i]);
      }
      printf ("\n");
      printf ("The offset-axis scan: %u projections over 360°, axis at column %.1f, written in "
              "%.1f s; its rows are presented stitched (%u projections of the first half-turn "
              "blended with their opposites; upload and preprocess are the raw rows', the "
              "stitching counts as preprocessing).\n\n", offset.n_proj, offset.center,
              offset_write_s, offset.n_proj / 2);
      printf ("The centre sweep of the offset-axis scan (the sweep window's: each candidate "
              "stitched about itself, whole slice scored, 256² kept): 16 candidates 0.5 px apart "
              "on %s in **%.1f ms** (median of 5, %.2f ms a candidate; scored where "
              "reconstructed, only the 256² middle copied to the host); baselines: each whole "
              "slice downloaded and scored on the host, as before, %.1f ms (%.2f ms a "
              "candidate); the CPU engine, %.0f ms a candidate (2 candidates, once; %u "
              "threads).\n\n",
              tomo_engine_get_device_name (engine), sweep_ms, sweep_ms / 16, sweep_downloaded_ms,
              sweep_downloaded_ms / 16, sweep_cpu_ms / 2, g_get_num_processors ());
      if (!cold.device)
        printf ("(The engine's backend has no device path: every row went the host path.)\n\n");
      fflush (stdout);
    }
  return ok;
}
