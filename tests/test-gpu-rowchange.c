/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The viewer engine's row change on the device path: raw uint16 rows from
 * the raw row cache, preprocessed on the GPU.  Against the host path of the
 * same engine (rows read as floats and preprocessed on the CPU): the slice
 * within 1e-5 relative (L2); against the CPU backend within its usual 3e-3
 * (1e-2 with 4 slices, half precision); the clamp and replacement counts
 * equal to both, for 1, 2 and 4 slices; a row served from the
 * raw cache gives the slice of a cold read bit for bit; scrubbing prefetches
 * the next rows into the raw cache; a change of axis tilt reads nothing; a
 * row out of range and a file cut short give clear errors; stitched and
 * weighted rows are made on the device from the file's raw rows like the
 * host makes them, and another axis position reads nothing.  Skips without
 * a CUDA device.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tomo-engine.h"
#include "tomo-error.h"
#include "tomo-geometry.h"
#include "tomo-gpu.h"
#include "tomo-phantom.h"
#include "tomo-scan-private.h"
#include "tomo-test-util.h"

#define W 256
#define H 8
#define N 180

static char *scan_dir, *scan_path;

/* Why a test skips without a CUDA device. */
#define NO_GPU "the device path of a row change is tested on the GPU machine"

static TomoEngine *
engine_for (TomoScan    *scan,
            TomoBackend  backend,
            gboolean     device_preprocess)
{
  TomoEngine *engine = tomo_test_engine_new (backend, scan);

  tomo_engine_set_prefetch (engine, 0, 0);
  tomo_engine_set_device_preprocess (engine, device_preprocess);
  return engine;
}

/* Rows [row, row + n_slices) at the phantom's axis, downloaded. */
static TomoSlice *
reconstruct (TomoEngine *engine,
             guint       row,
             guint       n_slices)
{
  TomoSlice *slice = tomo_test_reconstruct (engine, row, n_slices, (W - 1) / 2.0 + 3.37);

  g_assert_nonnull (slice->data);
  return slice;
}

/* 1, 2, 4 slices: device path against the host path and the CPU backend. */
static void
test_equals_host (gconstpointer data)
{
  guint n_slices = GPOINTER_TO_UINT (data);
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) device = NULL, host = NULL, cpu = NULL;
  g_autoptr(TomoSlice) a = NULL, b = NULL, c = NULL;
  gsize n;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  scan = tomo_test_open_scan (scan_path);
  device = engine_for (scan, TOMO_BACKEND_GPU, TRUE);
  host = engine_for (scan, TOMO_BACKEND_GPU, FALSE);
  cpu = engine_for (scan, TOMO_BACKEND_CPU, TRUE);
  a = reconstruct (device, 2, n_slices);
  b = reconstruct (host, 2, n_slices);
  c = reconstruct (cpu, 2, n_slices);
  g_assert_true (a->device_preprocess);
  g_assert_false (b->device_preprocess);
  g_assert_false (c->device_preprocess);
  n = (gsize) a->width * a->height * n_slices;
  g_test_message ("%u slice(s): device path vs host path %.2e, vs CPU backend %.2e; "
                  "%" G_GUINT64_FORMAT " values, %" G_GUINT64_FORMAT " clamped, %"
                  G_GUINT64_FORMAT " replaced", n_slices, tomo_test_rel_l2 (a->data, b->data, n),
                  tomo_test_rel_l2 (a->data, c->data, n), a->stats.n_values,
                  a->stats.n_nonpositive, a->stats.n_nonfinite);
  g_assert_cmpfloat (tomo_test_rel_l2 (a->data, b->data, n), <, 1e-5);
  /* The GPU against the CPU's double-precision FBP: float rounding, and
   * half precision in the 4-slice path (test-backend's tolerances). */
  g_assert_cmpfloat (tomo_test_rel_l2 (a->data, c->data, n), <=, n_slices == 4 ? 1e-2 : 3e-3);
  /* The dead pixels were there to be counted, and were, the same way. */
  g_assert_cmpuint (a->stats.n_nonpositive, >, (guint64) N * n_slices);
  tomo_test_assert_stats_equal (&a->stats, &b->stats);
  tomo_test_assert_stats_equal (&a->stats, &c->stats);
}

/* Row 3 cold, row 5, row 3 again from the raw cache (no file read): bit for
 * bit the first slice, and the slice of a fresh engine's cold read. */
static void
test_cached_equals_cold (void)
{
  g_autoptr(TomoScan) scan = NULL, fresh_scan = NULL;
  g_autoptr(TomoEngine) engine = NULL, fresh = NULL;
  g_autoptr(TomoSlice) cold = NULL, other = NULL, cached = NULL, reference = NULL;
  guint64 reads;
  gsize bytes;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  scan = tomo_test_open_scan (scan_path);
  fresh_scan = tomo_test_open_scan (scan_path);
  engine = engine_for (scan, TOMO_BACKEND_GPU, TRUE);
  fresh = engine_for (fresh_scan, TOMO_BACKEND_GPU, TRUE);
  cold = reconstruct (engine, 3, 1);
  other = reconstruct (engine, 5, 1);
  reads = _tomo_scan_get_n_row_reads (scan);
  cached = reconstruct (engine, 3, 1);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), ==, reads);
  g_assert_true (cached->device_preprocess);
  bytes = sizeof (float) * cold->width * cold->height;
  g_assert_cmpmem (cached->data, bytes, cold->data, bytes);
  g_assert_cmpuint (cached->stats.n_nonpositive, ==, cold->stats.n_nonpositive);
  reference = reconstruct (fresh, 3, 1);
  g_assert_cmpmem (reference->data, bytes, cold->data, bytes);
}

/* Scrubbing from row 1 up: the rows ahead are in the raw cache before the
 * slider gets there, and the next row change reads nothing from the file. */
static void
test_prefetch (void)
{
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) first = NULL, second = NULL;
  guint64 reads;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  scan = tomo_test_open_scan (scan_path);
  engine = engine_for (scan, TOMO_BACKEND_GPU, TRUE);
  tomo_engine_set_prefetch (engine, 4, 2);
  first = tomo_test_submit_row (engine, 1, (W - 1) / 2.0 + 3.37);
  g_assert_true (first->device_preprocess);
  /* 4 ahead (2..5), of 2 behind only row 0 exists. */
  g_assert_cmpuint (tomo_engine_wait_prefetch (engine), ==, 5);
  reads = _tomo_scan_get_n_row_reads (scan);
  g_assert_cmpuint (reads, ==, 6);
  second = tomo_test_submit_row (engine, 2, (W - 1) / 2.0 + 3.37);
  g_assert_true (second->device_preprocess);
  tomo_engine_wait_prefetch (engine);
  /* Row 2 came from memory; the new aim read only row 6. */
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), ==, reads + 1);
}

/* Tuning the axis tilt on one row: each new tilt of the same file is a new
 * scan for the engine, whose raw rows are the file's — they stay cached and
 * the file is not read again; each slice is bit for bit a fresh engine's
 * cold read of that tilt.  Another file's scan drops them. */
static void
test_tilt_keeps_raw_rows (void)
{
  g_autoptr(TomoScan) file = NULL, other = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) first = NULL;
  guint64 reads;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  file = tomo_test_open_scan (scan_path);
  engine = engine_for (file, TOMO_BACKEND_GPU, TRUE);
  first = reconstruct (engine, 0, 1);
  reads = _tomo_scan_get_n_row_reads (file);
  g_assert_cmpuint (reads, >, 0);
  for (guint k = 1; k <= 3; k++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TomoScan) tilted = tomo_geometry_correct_tilt (file, 2.0 * k, &error);
      g_autoptr(TomoScan) fresh_file = tomo_test_open_scan (scan_path);
      g_autoptr(TomoScan) fresh_tilted = tomo_geometry_correct_tilt (fresh_file, 2.0 * k, &error);
      g_autoptr(TomoEngine) fresh = engine_for (fresh_tilted, TOMO_BACKEND_GPU, TRUE);
      g_autoptr(TomoSlice) slice = NULL, reference = NULL;
      gsize bytes;

      g_assert_no_error (error);
      tomo_engine_set_scan (engine, tilted);
      slice = reconstruct (engine, 0, 1);
      g_assert_true (slice->device_preprocess);
      g_assert_cmpuint (_tomo_scan_get_n_row_reads (file), ==, reads);
      reference = reconstruct (fresh, 0, 1);
      g_assert_cmpuint (_tomo_scan_get_n_row_reads (fresh_file), >, 0);
      bytes = sizeof (float) * slice->width * slice->height;
      g_assert_cmpmem (slice->data, bytes, reference->data, bytes);
      /* The tilt did shift the row (3.5 rows off the middle: by
       * 0.12 px and more). */
      g_assert_cmpfloat (tomo_test_rel_l2 (slice->data, first->data,
                                           (gsize) slice->width * slice->height), >, 1e-5);
    }
  /* Back to the file itself: still no read. */
  tomo_engine_set_scan (engine, file);
  g_clear_pointer (&first, tomo_slice_unref);
  first = reconstruct (engine, 0, 1);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (file), ==, reads);
  /* Another scan of the same path is another file handle: read anew. */
  other = tomo_test_open_scan (scan_path);
  tomo_engine_set_scan (engine, other);
  g_clear_pointer (&first, tomo_slice_unref);
  first = reconstruct (engine, 0, 1);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (other), >, 0);
}

/* The mapped tests' files, written on first use: a 360° scan with the axis
 * 40.5 columns from its right edge (offset.h5) and a 270° scan with the axis
 * near the middle (uneven.h5, weighted). */
static char *mapped_paths[2];
#define OFFSET_AXIS (W - 1 - 40.5)
#define UNEVEN_AXIS ((W - 1) / 2.0 + 3.37)

static const char *
mapped_scan_path (gboolean weighted)
{
  g_autoptr(GError) error = NULL;
  TomoPhantomParams p;

  if (mapped_paths[weighted] != NULL)
    return mapped_paths[weighted];
  tomo_test_phantom_params (&p, W, H, weighted ? N + N / 2 : 2 * N);
  p.angle_range_deg = weighted ? 270.0 : 360.0;
  p.center = weighted ? UNEVEN_AXIS : OFFSET_AXIS;
  if (!weighted)
    {
      p.object_width = 2 * W - 120;
      p.max_attenuation = 4.0 / p.object_width;
    }
  mapped_paths[weighted] = g_build_filename (scan_dir, weighted ? "uneven.h5" : "offset.h5", NULL);
  g_assert_true (tomo_phantom_write_dxchange (&p, mapped_paths[weighted], &error));
  g_assert_no_error (error);
  return mapped_paths[weighted];
}

/* Rows [row, row + n_slices) at `center` with the ALU kernel: the hybrid
 * one shares each launch's blocks between texture and ALU units by a
 * counter, so its floats vary from run to run by the texture's
 * interpolation precision (3e-4 relative here), and the rows are what is
 * compared. */
static TomoSlice *
reconstruct_alu (TomoEngine *engine,
                 guint       row,
                 guint       n_slices,
                 double      center)
{
  TomoSlice *slice = tomo_test_reconstruct_kernel (engine, row, n_slices, center, TOMO_KERNEL_ALU);

  g_assert_cmpstr (slice->kernel, ==, "alu");
  return slice;
}

typedef enum { MAPPED_OFFSET, MAPPED_OFFSET_TILTED, MAPPED_WEIGHTED } MappedKind;

/* The file presented as `kind` asks (the axis at `center` on the detector). */
static TomoScan *
present (TomoScan   *file,
         MappedKind  kind,
         double      center,
         double     *recon_center)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) base = NULL;
  TomoGeometry g = { kind == MAPPED_WEIGHTED ? TOMO_GEOMETRY_360 : TOMO_GEOMETRY_OFFSET,
                     TOMO_AXIS_SIDE_ANY };
  TomoGeometryPlan plan;
  TomoGeometryRowMap map;
  TomoScan *presented;

  base = kind == MAPPED_OFFSET_TILTED ? tomo_geometry_correct_tilt (file, 1.5, &error)
                                      : g_object_ref (file);
  g_assert_no_error (error);
  presented = tomo_geometry_present (base, &g, center, &plan, &error);
  g_assert_no_error (error);
  g_assert_nonnull (presented);
  g_assert_true (tomo_geometry_get_mapped_source (presented) == file);
  g_assert_true (tomo_geometry_get_row_map (presented, &map) == base);
  g_assert_true ((map.weights != NULL) == (kind == MAPPED_WEIGHTED));
  *recon_center = plan.recon_center;
  return presented;
}

/* Stitched (offset axis, over a tilt correction too) and weighted (360°)
 * rows made on the device from the file's raw rows: the slice within 1e-5
 * of the host path's (rows preprocessed and mapped on the CPU) and the
 * counts equal, for 1, 2 and 4 slices (the ALU kernel); a new axis position of the same file
 * (another stitching) reads nothing and gives a fresh engine's slice bit
 * for bit. */
static void
test_mapped (gconstpointer data)
{
  MappedKind kind = GPOINTER_TO_INT (data);
  g_autoptr(TomoScan) file = NULL, scan = NULL;
  g_autoptr(TomoEngine) device = NULL, host = NULL;
  double axis = kind == MAPPED_WEIGHTED ? UNEVEN_AXIS : OFFSET_AXIS, rc;
  guint64 reads;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  file = tomo_test_open_scan (mapped_scan_path (kind == MAPPED_WEIGHTED));
  scan = present (file, kind, axis, &rc);
  device = engine_for (scan, TOMO_BACKEND_GPU, TRUE);
  host = engine_for (scan, TOMO_BACKEND_GPU, FALSE);
  for (guint n_slices = 1; n_slices <= 4; n_slices *= 2)
    {
      g_autoptr(TomoSlice) a = reconstruct_alu (device, 2, n_slices, rc);
      g_autoptr(TomoSlice) b = reconstruct_alu (host, 2, n_slices, rc);
      gsize n = (gsize) a->width * a->height * n_slices;
      double rel = tomo_test_rel_l2 (a->data, b->data, n);

      g_assert_true (a->device_preprocess);
      g_assert_false (b->device_preprocess);
      g_assert_cmpuint (a->width, ==, tomo_scan_get_width (scan));
      g_test_message ("%s, %u slice(s) of %u × %u: device path vs host path %.2e",
                      kind == MAPPED_WEIGHTED ? "weighted 360°" : kind == MAPPED_OFFSET
                      ? "offset axis" : "offset axis over a tilt", n_slices, a->width, a->height,
                      rel);
      g_assert_cmpfloat (rel, <, 1e-5);
      tomo_test_assert_stats_equal (&a->stats, &b->stats);
    }

  /* The axis a little further in: another stitching (or weighting) of the
   * same file. */
  reads = _tomo_scan_get_n_row_reads (file);
  for (guint k = 1; k <= 2; k++)
    {
      g_autoptr(TomoScan) moved = present (file, kind, axis - 2.25 * k, &rc);
      g_autoptr(TomoScan) fresh_file = tomo_test_open_scan (mapped_scan_path (kind == MAPPED_WEIGHTED));
      g_autoptr(TomoScan) fresh_scan = present (fresh_file, kind, axis - 2.25 * k, &rc);
      g_autoptr(TomoEngine) fresh = engine_for (fresh_scan, TOMO_BACKEND_GPU, TRUE);
      g_autoptr(TomoSlice) slice = NULL, reference = NULL;
      gsize bytes;

      tomo_engine_set_scan (device, moved);
      slice = reconstruct_alu (device, 2, 1, rc);
      g_assert_true (slice->device_preprocess);
      g_assert_cmpuint (_tomo_scan_get_n_row_reads (file), ==, reads);
      reference = reconstruct_alu (fresh, 2, 1, rc);
      g_assert_cmpuint (slice->width, ==, reference->width);
      bytes = sizeof (float) * slice->width * slice->height;
      g_assert_cmpmem (slice->data, bytes, reference->data, bytes);
    }
}

/* A row out of range; a file cut short after opening: errors naming the
 * file, no crash, and the engine goes on serving the rows it holds. */
static void
test_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL, *path = NULL, *contents = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) kept = NULL, again = NULL;
  TomoSliceRequest request;
  TomoSlice *slice;
  gsize length;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  dir = tomo_test_make_tmp_dir ("tomo-rowchange-XXXXXX");
  path = g_build_filename (dir, "cut.h5", NULL);
  g_assert_true (g_file_get_contents (scan_path, &contents, &length, &error));
  g_assert_true (g_file_set_contents (path, contents, length, &error));
  scan = tomo_test_open_scan (path);
  engine = engine_for (scan, TOMO_BACKEND_GPU, TRUE);

  tomo_slice_request_init (&request, scan);
  request.row = H;
  slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_null (slice);
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (error->message, "out of range"));
  g_clear_error (&error);

  kept = reconstruct (engine, 1, 1);
  g_assert_cmpint (truncate (path, 4096), ==, 0);
  request.row = 6;
  slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_null (slice);
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "cut short"));
  g_test_message ("cut file: %s", error->message);
  g_clear_error (&error);
  /* Row 1 is still in the raw cache: it reconstructs as before. */
  again = reconstruct (engine, 1, 1);
  g_assert_cmpmem (again->data, sizeof (float) * again->width * again->height, kept->data,
                   sizeof (float) * kept->width * kept->height);
  /* Gone altogether. */
  g_assert_cmpint (g_unlink (path), ==, 0);
  request.row = 7;
  slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_null (slice);
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ);
  g_assert_nonnull (strstr (error->message, "is gone"));
  g_clear_error (&error);
  g_clear_object (&engine);
  g_clear_object (&scan);
  tomo_test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  scan_path = tomo_test_write_dead_pixel_scan (W, H, N, 3.37, &scan_dir);

  g_test_add_data_func ("/tomo/gpu/rowchange/equals-host/1", GUINT_TO_POINTER (1),
                        test_equals_host);
  g_test_add_data_func ("/tomo/gpu/rowchange/equals-host/2", GUINT_TO_POINTER (2),
                        test_equals_host);
  g_test_add_data_func ("/tomo/gpu/rowchange/equals-host/4", GUINT_TO_POINTER (4),
                        test_equals_host);
  g_test_add_func ("/tomo/gpu/rowchange/cached-equals-cold", test_cached_equals_cold);
  g_test_add_func ("/tomo/gpu/rowchange/prefetch", test_prefetch);
  g_test_add_func ("/tomo/gpu/rowchange/tilt-keeps-raw-rows", test_tilt_keeps_raw_rows);
  g_test_add_data_func ("/tomo/gpu/rowchange/mapped/offset", GINT_TO_POINTER (MAPPED_OFFSET),
                        test_mapped);
  g_test_add_data_func ("/tomo/gpu/rowchange/mapped/offset-tilted",
                        GINT_TO_POINTER (MAPPED_OFFSET_TILTED), test_mapped);
  g_test_add_data_func ("/tomo/gpu/rowchange/mapped/weighted-360",
                        GINT_TO_POINTER (MAPPED_WEIGHTED), test_mapped);
  g_test_add_func ("/tomo/gpu/rowchange/errors", test_errors);
  status = g_test_run ();
  for (guint i = 0; i < G_N_ELEMENTS (mapped_paths); i++)
    if (mapped_paths[i] != NULL)
      {
        g_unlink (mapped_paths[i]);
        g_free (mapped_paths[i]);
      }
  tomo_test_remove_scan (scan_path, scan_dir);
  return status;
}
