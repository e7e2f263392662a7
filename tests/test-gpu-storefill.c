/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The GPU volume store filled from raw rows (uint16 in slabs, preprocessed
 * and filtered on the device), against the store filled from rows
 * preprocessed on the host: the same XY, XZ, YZ and oblique planes within
 * 1e-5 relative (L2) of the GPU's host-preprocessed fill and 1e-4 of the
 * CPU backend's store (its single-precision plane back projector), with
 * the clamp and replacement counts equal to both, for the whole scan and a
 * row range; the slab size (1, 3, all rows) changes a plane by at most
 * 1e-6 relative; a corrupt row, a failing read, a fill without a filter, a
 * cancelled fill and a bad raw type give clear errors and an empty store;
 * a second fill of the same store renews the preview's copy of the rows.
 * The device cases skip without a CUDA device; the scan's clamps are
 * checked on the host everywhere.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-backend.h"
#include "tomo-error.h"
#include "tomo-filter.h"
#include "tomo-gpu.h"
#include "tomo-gpu-store-fill.h"
#include "tomo-phantom.h"
#include "tomo-preview.h"
#include "tomo-test-util.h"

#define W 128
#define H 8
#define N 120
#define AXIS ((W - 1) / 2.0 + 3.37)

static char *scan_dir, *scan_path;

/* Why a test skips without a CUDA device. */
#define NO_GPU "the raw store fill is tested on the GPU machine"

/* A backend with its store of rows [row_start, row_start + n_rows) filled. */
static TomoBackendImpl *
filled_store (TomoScan    *scan,
              TomoBackend  backend,
              gboolean     host_preprocess,
              guint        row_start,
              guint        n_rows,
              TomoPreprocessStats *stats)
{
  g_autoptr(GError) error = NULL;
  TomoBackendImpl *impl;
  TomoBackendStoreSetup setup = { 0 };

  impl = backend == TOMO_BACKEND_CPU ? tomo_backend_cpu_new () : tomo_backend_gpu_new (&error);
  g_assert_no_error (error);
  setup.setup = (TomoBackendSetup) { W, N, tomo_scan_get_angles (scan), TOMO_FILTER_SHEPP_LOGAN,
                                     TOMO_PAD_EDGE, 2 };
  setup.row_start = row_start;
  setup.n_rows = n_rows;
  setup.host_preprocess = host_preprocess;
  g_assert_true (impl->ops->store->store_new (impl, &setup, &error));
  g_assert_no_error (error);
  g_assert_true (impl->ops->store->store_fill (impl, scan, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  tomo_backend_store_stats (impl, stats);
  return impl;
}

static float *
plane_of (TomoBackendImpl *impl,
          const TomoPlane *plane)
{
  g_autoptr(GError) error = NULL;
  float *out = g_new (float, (gsize) plane->width * plane->height);

  g_assert_true (impl->ops->store->store_plane (impl, plane, AXIS, TOMO_INTERP_LINEAR, out, NULL,
                                                &error));
  g_assert_no_error (error);
  return out;
}

static void
check_fill (guint row_start,
            guint n_rows)
{
  g_autoptr(TomoScan) scan = NULL;
  TomoBackendImpl *raw, *host, *cpu;
  TomoPreprocessStats s_raw, s_host, s_cpu;
  double mid = (W - 1) / 2.0, zmid = row_start + (n_rows - 1) / 2.0;
  TomoPlane planes[4];
  const char *names[4] = { "XY", "XZ", "YZ", "oblique" };

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  scan = tomo_test_open_scan (scan_path);
  g_assert_cmpint (tomo_scan_get_raw_dtype (scan), ==, TOMO_DTYPE_UINT16);
  raw = filled_store (scan, TOMO_BACKEND_GPU, FALSE, row_start, n_rows, &s_raw);
  host = filled_store (scan, TOMO_BACKEND_GPU, TRUE, row_start, n_rows, &s_host);
  cpu = filled_store (scan, TOMO_BACKEND_CPU, FALSE, row_start, n_rows, &s_cpu);

  g_test_message ("rows %u:%u: values %" G_GUINT64_FORMAT ", clamped %" G_GUINT64_FORMAT
                  " (host %" G_GUINT64_FORMAT ", CPU %" G_GUINT64_FORMAT "), replaced %"
                  G_GUINT64_FORMAT, row_start, row_start + n_rows, s_raw.n_values,
                  s_raw.n_nonpositive, s_host.n_nonpositive, s_cpu.n_nonpositive,
                  s_raw.n_nonfinite);
  /* The projections' values and the flat/dark frames' of every row. */
  g_assert_cmpuint (s_raw.n_values, >=, (guint64) n_rows * N * W);
  g_assert_cmpuint (s_raw.n_nonpositive, >=, (guint64) n_rows * (N + N * W / 53 / 2));
  tomo_test_assert_stats_equal (&s_raw, &s_cpu);
  tomo_test_assert_stats_equal (&s_host, &s_cpu);

  planes[0] = (TomoPlane) { { mid, mid, row_start + 1.5 }, { 1, 0, 0 }, { 0, 1, 0 }, W, W };
  tomo_plane_init_xz (&planes[1], 50, 0, W, row_start, n_rows);
  tomo_plane_init_yz (&planes[2], 71, 3, W - 7, row_start, n_rows);
  {
    double centre[3] = { mid + 2, mid - 3, zmid };

    tomo_plane_init_oblique (&planes[3], centre, 30, 10, 91, n_rows + 3, 0.8);
  }
  for (guint k = 0; k < G_N_ELEMENTS (planes); k++)
    {
      g_autofree float *a = plane_of (raw, &planes[k]);
      g_autofree float *b = plane_of (host, &planes[k]);
      g_autofree float *c = plane_of (cpu, &planes[k]);
      gsize n = (gsize) planes[k].width * planes[k].height;
      double e_host = tomo_test_rel_l2 (a, b, n), e_cpu = tomo_test_rel_l2 (a, c, n);
      double norm = 0;

      for (gsize i = 0; i < n; i++)
        {
          g_assert_true (isfinite (a[i]));
          norm += (double) a[i] * a[i];
        }
      g_test_message ("%s: relative L2 %.3g to the host-preprocessed GPU fill (tolerance 1e-5), "
                      "%.3g to the CPU store (tolerance 1e-4)", names[k], e_host, e_cpu);
      g_assert_cmpfloat (norm, >, 0.0);
      g_assert_cmpfloat (e_host, <=, 1e-5);
      g_assert_cmpfloat (e_cpu, <=, 1e-4);
    }
  tomo_backend_free (raw);
  tomo_backend_free (host);
  tomo_backend_free (cpu);
}

static void
test_whole_scan (void)
{
  check_fill (0, H);
}

static void
test_row_range (void)
{
  check_fill (2, 5);
}

/* Without a device too: the scan's dead pixels are clamped on the host,
 * column 17 in every projection and about every 53rd value besides. */
static void
test_scan_clamps (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autofree float *sino = g_new (float, (gsize) N * W);
  TomoPreprocessStats stats = { 0 };

  for (guint r = 0; r < H; r++)
    {
      g_assert_true (tomo_scan_read_sinogram (scan, r, sino, &stats, &error));
      g_assert_no_error (error);
    }
  g_test_message ("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " values clamped",
                  stats.n_nonpositive, stats.n_values);
  g_assert_cmpuint (stats.n_nonpositive, >=, (guint64) H * (N + N * W / 53 / 2));
  g_assert_cmpuint (stats.n_nonpositive, <=, (guint64) H * (N + N * W / 53 * 2));
}

/* The device API with a reader of our own: rows of float32 counts. */
typedef struct
{
  guint n_calls, fail_at, nan_row;
  volatile gint *cancel;
  guint shift;   /* moves the pattern of counts: another scan of the same size */
} Reader;

static gboolean
read_floats (guint     row,
             guint     n,
             void     *raw,
             float    *flat,
             float    *dark,
             gpointer  data,
             GError  **error)
{
  Reader *rd = data;
  float *v = raw;

  rd->n_calls++;
  if (rd->cancel != NULL)
    g_atomic_int_set (rd->cancel, 1);
  if (rd->fail_at > 0 && rd->n_calls == rd->fail_at)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ, "test read failure at row %u", row);
      return FALSE;
    }
  for (guint r = 0; r < n; r++)
    for (gsize i = 0; i < (gsize) N * W; i++)
      v[r * (gsize) N * W + i] = row + r == rd->nan_row && i % 3 != 0
                                   ? NAN : 1000.0f + (float) ((i * 7 + (row + r) * 13 + rd->shift) % 101);
  for (gsize i = 0; i < (gsize) n * W; i++)
    {
      flat[i] = 1200.0f;
      dark[i] = 10.0f;
    }
  return TRUE;
}

static TomoGpuStore *
device_store (gboolean with_filter)
{
  g_autoptr(GError) error = NULL;
  g_autofree double *angles = tomo_test_half_turn (N);
  g_autofree double *response = NULL;
  TomoGpuStore *store;
  guint padded;

  store = tomo_gpu_store_new (0, W, N, angles, 0, H, TOMO_GPU_STORE_FLOAT, 0, &error);
  g_assert_no_error (error);
  if (with_filter)
    {
      response = tomo_filter_fbp_response (TOMO_FILTER_RAMLAK, W, N, &padded);
      g_assert_true (tomo_gpu_store_set_filter (store, padded, response, 1, &error));
      g_assert_no_error (error);
    }
  return store;
}

static float *
fill_and_read (TomoGpuStore *store,
               guint         slab_rows)
{
  g_autoptr(GError) error = NULL;
  Reader rd = { 0, 0, G_MAXUINT, NULL };
  TomoGpuStoreRawFill fill = { TOMO_GPU_RAW_FLOAT32, TRUE, TRUE, slab_rows, read_floats,
                               NULL, &rd, NULL, NULL };
  TomoGpuPlane xz = { { (W - 1) / 2.0, 40, (H - 1) / 2.0 }, { 1, 0, 0 }, { 0, 0, 1 }, W, H };
  float *out = g_new (float, (gsize) W * H);

  g_assert_true (tomo_gpu_store_fill_raw (store, &fill, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rd.n_calls, ==, (H + slab_rows - 1) / slab_rows);
  g_assert_cmpuint (tomo_gpu_store_get_n_filled (store), ==, H);
  g_assert_true (tomo_gpu_store_plane (store, &xz, AXIS, 1, TOMO_GPU_PLANE_AUTO, &error));
  g_assert_true (tomo_gpu_store_download (store, out, &error));
  g_assert_no_error (error);
  return out;
}

static void
test_slabs (void)
{
  TomoGpuStore *store;
  g_autofree float *one = NULL, *three = NULL, *all = NULL;
  double norm = 0;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  store = device_store (TRUE);
  one = fill_and_read (store, 1);
  three = fill_and_read (store, 3);
  all = fill_and_read (store, H);
  tomo_gpu_store_free (store);
  for (gsize i = 0; i < (gsize) W * H; i++)
    norm += fabs (one[i]);
  g_assert_cmpfloat (norm, >, 0.0);
  /* Only the cuFFT batches differ (1, 2 or 4 rows). */
  g_test_message ("slabs of 3 rows: %.3g, of all: %.3g relative L2 to slabs of 1",
                  tomo_test_rel_l2 (three, one, W * H), tomo_test_rel_l2 (all, one, W * H));
  g_assert_cmpfloat (tomo_test_rel_l2 (three, one, W * H), <=, 1e-6);
  g_assert_cmpfloat (tomo_test_rel_l2 (all, one, W * H), <=, 1e-6);
}

/* Fills the store from counts shifted by `shift` and returns its preview. */
static float *
refill_preview (TomoGpuStore              *store,
                guint                      shift,
                const TomoPreviewGeometry *geo)
{
  g_autoptr(GError) error = NULL;
  Reader rd = { 0, 0, G_MAXUINT, NULL, shift };
  TomoGpuStoreRawFill fill = { TOMO_GPU_RAW_FLOAT32, TRUE, TRUE, 3, read_floats,
                               NULL, &rd, NULL, NULL };
  TomoGpuPreview pv = { geo->nx, geo->ny, geo->nz, geo->bin, geo->step };
  float *out = g_new (float, (gsize) geo->nx * geo->ny * geo->nz);

  g_assert_true (tomo_gpu_store_fill_raw (store, &fill, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_store_preview (store, &pv, AXIS, 1, &error));
  g_assert_true (tomo_gpu_store_download (store, out, &error));
  g_assert_no_error (error);
  return out;
}

/* A second raw fill of the same store (another scan, the same filter)
 * replaces the preview's reduced copy of the rows: the preview equals a
 * fresh store's, not the first scan's. */
static void
test_refill_preview (void)
{
  TomoGpuStore *store, *fresh;
  TomoPreviewGeometry geo;
  g_autofree float *first = NULL, *second = NULL, *ref = NULL;
  gsize n;
  double stale, err;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  tomo_preview_geometry_init (&geo, W, N, 32, 32, 4);
  n = (gsize) geo.nx * geo.ny * geo.nz;
  store = device_store (TRUE);
  fresh = device_store (TRUE);
  first = refill_preview (store, 0, &geo);
  second = refill_preview (store, 50, &geo);
  ref = refill_preview (fresh, 50, &geo);
  tomo_gpu_store_free (store);
  tomo_gpu_store_free (fresh);
  stale = tomo_test_rel_l2 (first, ref, n);
  err = tomo_test_rel_l2 (second, ref, n);
  g_test_message ("preview %u × %u × %u after a refill: %.3g relative L2 to a fresh store's "
                  "(the first scan's: %.3g)", geo.nx, geo.ny, geo.nz, err, stale);
  g_assert_cmpfloat (stale, >, 1e-2);
  g_assert_cmpfloat (err, <=, 1e-6);
}

static void
test_bad_input (void)
{
  g_autoptr(GError) error = NULL;
  TomoGpuStore *store;
  TomoGpuPreprocessCounts counts[H];
  Reader rd = { 0, 0, 5, NULL };
  TomoGpuStoreRawFill fill = { TOMO_GPU_RAW_FLOAT32, TRUE, TRUE, 3, read_floats, NULL, &rd, NULL,
                               counts };
  TomoGpuPlane xz = { { (W - 1) / 2.0, 40, (H - 1) / 2.0 }, { 1, 0, 0 }, { 0, 0, 1 }, W, H };
  volatile gint cancel = 0;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  /* No filter yet. */
  store = device_store (FALSE);
  g_assert_false (tomo_gpu_store_fill_raw (store, &fill, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "no filter"));
  g_clear_error (&error);
  tomo_gpu_store_free (store);

  store = device_store (TRUE);
  /* Row 5 two-thirds NaN: refused, named, counted; the store stays empty. */
  g_assert_false (tomo_gpu_store_fill_raw (store, &fill, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "Row 5"));
  g_assert_nonnull (strstr (error->message, "corrupt"));
  g_clear_error (&error);
  g_assert_cmpuint (counts[5].n_nonfinite, ==, (guint64) N * W - (N * W + 2) / 3);
  g_assert_cmpuint (counts[4].n_nonfinite, ==, 0);
  g_assert_cmpuint (counts[5].n_values, ==, (guint64) N * W);
  g_assert_cmpuint (tomo_gpu_store_get_n_filled (store), ==, 0);
  g_assert_false (tomo_gpu_store_plane (store, &xz, AXIS, 1, TOMO_GPU_PLANE_AUTO, &error));
  g_assert_nonnull (strstr (error->message, "fill it first"));
  g_clear_error (&error);

  /* A read that fails on the second slab: its error, as the reader said it. */
  rd = (Reader) { 0, 2, G_MAXUINT, NULL };
  g_assert_false (tomo_gpu_store_fill_raw (store, &fill, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_READ);
  g_assert_nonnull (strstr (error->message, "row 3"));
  g_clear_error (&error);
  g_assert_cmpuint (tomo_gpu_store_get_n_filled (store), ==, 0);

  /* Cancelled during the first read: stops before the second. */
  rd = (Reader) { 0, 0, G_MAXUINT, &cancel };
  fill.cancel = &cancel;
  g_assert_false (tomo_gpu_store_fill_raw (store, &fill, &error));
  g_assert_nonnull (strstr (error->message, "cancelled"));
  g_clear_error (&error);
  g_assert_cmpuint (rd.n_calls, ==, 1);

  /* A raw type that does not exist. */
  fill.cancel = NULL;
  fill.type = (TomoGpuRawType) 7;
  g_assert_false (tomo_gpu_store_fill_raw (store, &fill, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "raw type 7"));
  g_clear_error (&error);
  tomo_gpu_store_free (store);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  scan_path = tomo_test_write_dead_pixel_scan (W, H, N, 3.37, &scan_dir);
  g_test_add_func ("/gpu-storefill/scan-clamps", test_scan_clamps);
  g_test_add_func ("/gpu-storefill/whole-scan", test_whole_scan);
  g_test_add_func ("/gpu-storefill/row-range", test_row_range);
  g_test_add_func ("/gpu-storefill/slabs", test_slabs);
  g_test_add_func ("/gpu-storefill/refill-preview", test_refill_preview);
  g_test_add_func ("/gpu-storefill/bad-input", test_bad_input);
  return tomo_test_run_and_remove_scan (scan_path, scan_dir);
}
