/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One table of cases, run through the engine against every backend: each
 * slice against the CPU reference FBP run directly on the scan's sinogram,
 * its statistics against tomo_slice_stats_compute() of the reference, its
 * sweep scores against tomo_center_negativity() of its values, single
 * values and rectangles read back (from the device for device-only slices), volumes against
 * slices, and bad requests answered at the engine's door with one message.
 * GPU cases skip without a CUDA device.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-backend.h"
#include "tomo-center.h"
#include "tomo-engine.h"
#include "tomo-error.h"
#include "tomo-fbp.h"
#include "tomo-test-util.h"

#define WIDTH 96
#define HEIGHT 6
#define N_PROJ 72
#define AXIS ((WIDTH - 1) / 2.0 + 1.5)
/* Why a test skips without a CUDA device. */
#define NO_GPU "the GPU backend is tested on the GPU machine"

static char *tmp_dir;
static char *scan_path;

typedef struct
{
  const char *name;
  guint row, n_slices;
  double center;
  TomoInterp interp;
  TomoFilterType filter;
  TomoPadMode pad;
  TomoRoi roi;
  TomoKernel kernel;
  gboolean keep_on_device;
  gboolean skip_download;  /* GPU only: the CPU backend always has host data */
} SliceCase;

static const SliceCase slice_cases[] = {
  { "axis-linear", 3, 1, AXIS, TOMO_INTERP_LINEAR, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, { 0 } },
  { "off-axis-nearest", 2, 1, AXIS - 2.25, TOMO_INTERP_NEAREST, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, { 0 } },
  { "hann-zero-pad", 1, 1, AXIS + 0.4, TOMO_INTERP_LINEAR, TOMO_FILTER_HANN, TOMO_PAD_ZERO, { 0 } },
  { "roi", 0, 1, AXIS, TOMO_INTERP_LINEAR, TOMO_FILTER_SHEPP_LOGAN, TOMO_PAD_EDGE,
    { 10, 20, 50, 40 } },
  { "two-slices", 2, 2, AXIS + 1.0, TOMO_INTERP_LINEAR, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, { 0 } },
  { "four-slices-roi", 1, 4, AXIS, TOMO_INTERP_NEAREST, TOMO_FILTER_COSINE, TOMO_PAD_EDGE,
    { 4, 4, 64, 64 } },
  { "kernel-standard", 3, 1, AXIS, TOMO_INTERP_LINEAR, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, { 0 },
    TOMO_KERNEL_STANDARD },
  { "kernel-alu", 3, 1, AXIS, TOMO_INTERP_LINEAR, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, { 0 },
    TOMO_KERNEL_ALU },
  { "device-only", 3, 1, AXIS + 0.7, TOMO_INTERP_LINEAR, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, { 0 },
    TOMO_KERNEL_AUTO, TRUE, TRUE },
  { "device-kept", 4, 2, AXIS, TOMO_INTERP_LINEAR, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, { 0 },
    TOMO_KERNEL_AUTO, TRUE, FALSE },
};

typedef struct
{
  const char *name;
  guint row, n_slices;
  double center;
  TomoRoi roi;
  int kernel;
  gboolean no_scan;
  const char *words;       /* in the one message */
} BadCase;

static const BadCase bad_cases[] = {
  { "no-scan", 0, 1, AXIS, { 0 }, 0, TRUE, "No scan is open" },
  { "row", HEIGHT, 1, AXIS, { 0 }, 0, FALSE, "Row 6 is out of range" },
  { "neighbours", HEIGHT - 1, 2, AXIS, { 0 }, 0, FALSE, "with its neighbours" },
  { "slices", 0, 3, AXIS, { 0 }, 0, FALSE, "1, 2 or 4 slices, not 3" },
  { "centre-right", 0, 1, WIDTH + 0.5, { 0 }, 0, FALSE, "Rotation centre 96.5 is outside" },
  { "centre-left", 0, 1, -1.0, { 0 }, 0, FALSE, "Rotation centre -1 is outside" },
  { "centre-nan", 0, 1, NAN, { 0 }, 0, FALSE, "Rotation centre nan is outside" },
  { "roi", 0, 1, AXIS, { WIDTH - 4, 0, 8, 8 }, 0, FALSE, "ROI 92,0,8,8 does not fit" },
  { "kernel", 0, 1, AXIS, { 0 }, 17, FALSE, "Unknown back-projection kernel 17" },
};

/* NULL (and the test skipped) when the backend is not here; else an
 * engine of that backend and, in *scan, the test scan (set on the engine
 * when `set_scan`). */
static TomoEngine *
engine_for (TomoBackend backend,
            gboolean    set_scan,
            TomoScan  **scan)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoEngine) engine = tomo_engine_new (TOMO_BACKEND_CPU);

  if (!tomo_test_need_backend (backend, NO_GPU))
    return NULL;
  g_assert_true (tomo_engine_set_backend (engine, backend, &error));
  g_assert_no_error (error);
  g_assert_cmpint (tomo_engine_get_backend (engine), ==, backend);
  *scan = tomo_test_open_scan (scan_path);
  if (set_scan)
    tomo_engine_set_scan (engine, *scan);
  return g_steal_pointer (&engine);
}

static void
request_from_case (TomoSliceRequest *request,
                   TomoScan         *scan,
                   const SliceCase  *c,
                   TomoBackend       backend)
{
  tomo_slice_request_init (request, scan);
  request->row = c->row;
  request->n_slices = c->n_slices;
  request->params.center = c->center;
  request->params.interp = c->interp;
  request->params.filter = c->filter;
  request->params.pad = c->pad;
  request->params.roi = c->roi;
  request->kernel = c->kernel;
  request->keep_on_device = c->keep_on_device && backend == TOMO_BACKEND_GPU;
  request->skip_download = c->skip_download && backend == TOMO_BACKEND_GPU;
  request->negativity = TRUE;
}

/* The CPU reference FBP, run directly: n_slices × roi planes. */
static float *
reference (TomoScan        *scan,
           const SliceCase *c)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoCpuFbp) fbp = tomo_cpu_fbp_new (WIDTH, N_PROJ, tomo_scan_get_angles (scan),
                                                c->filter, c->pad, 0);
  g_autofree float *sino = g_new (float, N_PROJ * WIDTH);
  TomoReconParams params;
  TomoRoi roi;
  float *out;

  tomo_recon_params_init (&params, WIDTH);
  params.center = c->center;
  params.interp = c->interp;
  params.filter = c->filter;
  params.pad = c->pad;
  params.roi = c->roi;
  roi = tomo_recon_params_get_roi (&params, WIDTH);
  out = g_new (float, (gsize) roi.width * roi.height * c->n_slices);
  for (guint s = 0; s < c->n_slices; s++)
    {
      g_assert_true (tomo_scan_read_sinogram (scan, c->row + s, sino, NULL, &error));
      g_assert_no_error (error);
      tomo_cpu_fbp_reconstruct (fbp, sino, &params, out + (gsize) s * roi.width * roi.height);
    }
  return out;
}

/* Statistics of the backend's slice against the host function on the
 * reference.  The CPU backend's slice is the reference, so they are equal.
 * A GPU slice differs from it by float rounding (rel L2 ~1e-3): extremes
 * within 2 % and mean and percentiles within 1 % of the value range; its
 * bins are not compared here — neighbouring values cross bin edges — but
 * against the host function on the slice's own values (test_slice_case). */
static void
assert_stats_match (const TomoSliceStats *got,
                    const float          *ref,
                    gsize                 n,
                    gboolean              exact)
{
  TomoSliceStats want;
  double span;

  tomo_slice_stats_compute (ref, n, &want);
  g_assert_true (want.valid);
  g_assert_true (got->valid);
  g_assert_cmpuint (got->n_finite, ==, want.n_finite);
  span = want.max - want.min;
  if (exact)
    {
      g_assert_cmpmem (got, sizeof *got, &want, sizeof want);
      return;
    }
  g_assert_cmpfloat (fabs (got->min - want.min), <=, 0.02 * span);
  g_assert_cmpfloat (fabs (got->max - want.max), <=, 0.02 * span);
  g_assert_cmpfloat (fabs (got->mean - want.mean), <=, 0.01 * span);
  g_assert_cmpfloat (fabs (got->lo - want.lo), <=, 0.01 * span);
  g_assert_cmpfloat (fabs (got->hi - want.hi), <=, 0.01 * span);
  g_assert_cmpfloat (fabs (got->range_lo - want.range_lo), <=, 0.01 * span);
  g_assert_cmpfloat (fabs (got->range_hi - want.range_hi), <=, 0.01 * span);
}

static void
test_slice_case (gconstpointer data)
{
  const TomoTestBackendCase *td = data;
  const SliceCase *c = td->item;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = engine_for (td->backend, TRUE, &scan);
  g_autoptr(TomoSlice) slice = NULL;
  g_autoptr(TomoSlice) again = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree float *ref = NULL;
  g_autofree float *values = NULL;
  TomoSliceRequest request;
  gboolean exact = td->backend == TOMO_BACKEND_CPU;
  gsize plane, n;
  double err;

  if (engine == NULL)
    return;
  request_from_case (&request, scan, c, td->backend);
  slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (slice);
  ref = reference (scan, c);

  g_assert_cmpint (slice->backend, ==, td->backend);
  g_assert_cmpuint (slice->n_slices, ==, c->n_slices);
  g_assert_cmpuint (slice->width, ==, c->roi.width ? c->roi.width : WIDTH);
  g_assert_cmpuint (slice->height, ==, c->roi.height ? c->roi.height : WIDTH);
  plane = (gsize) slice->width * slice->height;
  n = plane * c->n_slices;
  if (td->backend == TOMO_BACKEND_GPU && c->kernel != TOMO_KERNEL_AUTO)
    g_assert_cmpstr (slice->kernel, ==, tomo_kernel_to_string (c->kernel));
  g_assert_true ((slice->device_buffer != NULL) == request.keep_on_device);
  g_assert_true ((slice->data == NULL) == request.skip_download);
  g_assert_true ((tomo_slice_get_device_data (slice, NULL) != NULL) == request.keep_on_device);

  /* Every value, through the host data or one by one from the device. */
  values = g_new (float, n);
  if (slice->data != NULL)
    memcpy (values, slice->data, n * sizeof (float));
  else
    for (guint s = 0; s < c->n_slices; s++)
      for (guint y = 0; y < slice->height; y++)
        for (guint x = 0; x < slice->width; x++)
          g_assert_true (tomo_slice_get_value (slice, s, x, y,
                                               values + s * plane + (gsize) y * slice->width + x));
  err = tomo_test_rel_l2 (values, ref, n);
  g_test_message ("%s %s (%s): rel L2 %.3g against the reference", tomo_backend_to_string (td->backend),
                  c->name, slice->kernel, err);
  if (exact)
    g_assert_cmpmem (values, n * sizeof (float), ref, n * sizeof (float));
  else
    g_assert_cmpfloat (err, <=, c->n_slices == 4 ? 1e-2 : 3e-3);

  /* One value from each corner and the middle agrees with the plane. */
  {
    const guint xs[] = { 0, slice->width - 1, slice->width / 2 };
    const guint ys[] = { 0, slice->height - 1, slice->height / 2 };
    float v;

    for (guint i = 0; i < G_N_ELEMENTS (xs); i++)
      {
        guint s = c->n_slices - 1;

        g_assert_true (tomo_slice_get_value (slice, s, xs[i], ys[i], &v));
        g_assert_cmpfloat (v, ==, values[s * plane + (gsize) ys[i] * slice->width + xs[i]]);
      }
    g_assert_false (tomo_slice_get_value (slice, c->n_slices, 0, 0, &v));
    g_assert_false (tomo_slice_get_value (slice, 0, slice->width, 0, &v));
  }

  /* A rectangle of the last plane in one read (one copy from the device
   * for a device-only slice); one that reaches outside is refused. */
  {
    guint s = c->n_slices - 1, x0 = slice->width / 4, y0 = slice->height / 3;
    guint rw = slice->width / 2, rh = slice->height / 2;
    g_autofree float *rect = g_new (float, (gsize) rw * rh);
    float v;

    g_assert_true (tomo_slice_read_rect (slice, s, x0, y0, rw, rh, rect, &error));
    g_assert_no_error (error);
    for (guint y = 0; y < rh; y++)
      g_assert_cmpmem (rect + (gsize) y * rw, rw * sizeof (float),
                       values + s * plane + (gsize) (y0 + y) * slice->width + x0,
                       rw * sizeof (float));
    g_assert_false (tomo_slice_read_rect (slice, s, x0, y0, slice->width - x0 + 1, 1, rect,
                                          &error));
    g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
    g_assert_nonnull (strstr (error->message, "do not fit"));
    g_clear_error (&error);
    g_assert_false (tomo_slice_read_rect (slice, c->n_slices, 0, 0, 1, 1, &v, &error));
    g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
    g_clear_error (&error);
  }

  /* The sweep's score of each plane, computed where the slice is: the
   * host function's on the same values (on the device summed in another
   * order). */
  g_assert_nonnull (slice->negativity);
  for (guint s = 0; s < c->n_slices; s++)
    {
      double want = tomo_center_negativity (values + s * plane, slice->width, slice->height);

      /* A whole slice through the object has the filter's undershoot
       * around it (each case's first row does); a region inside it, or
       * the scan's last row (no object), may have none. */
      g_test_message ("plane %u: negativity %.4e", s, want);
      g_assert_cmpfloat (want, >=, 0);
      g_assert_cmpfloat (want, <, 1);
      if (c->roi.width == 0 && s == 0)
        g_assert_cmpfloat (want, >, 1e-4);
      if (exact)
        g_assert_cmpfloat (slice->negativity[s], ==, want);
      else
        g_assert_cmpfloat (fabs (slice->negativity[s] - want), <=, 1e-9 * want);
    }

  /* A slice shown without interop gets its host copy after all. */
  g_assert_true (tomo_slice_ensure_data (slice, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (slice->data, n * sizeof (float), values, n * sizeof (float));

  assert_stats_match (&slice->values, ref, n, exact);
  /* On the slice's own values the device's statistics are the host's. */
  {
    TomoSliceStats host;

    tomo_slice_stats_compute (values, n, &host);
    g_assert_cmpuint (slice->values.n_finite, ==, host.n_finite);
    g_assert_cmpfloat (slice->values.min, ==, host.min);
    g_assert_cmpfloat (slice->values.max, ==, host.max);
    g_assert_cmpfloat (slice->values.lo, ==, host.lo);
    g_assert_cmpfloat (slice->values.hi, ==, host.hi);
    g_assert_cmpfloat (slice->values.range_lo, ==, host.range_lo);
    g_assert_cmpfloat (slice->values.range_hi, ==, host.range_hi);
    g_assert_cmpfloat (fabs (slice->values.mean - host.mean), <=, 1e-9 * (host.max - host.min));
    g_assert_cmpmem (slice->values.bins, sizeof host.bins, host.bins, sizeof host.bins);
  }

  /* A new centre re-uses the filtered rows: no filtering. */
  request.params.center += 0.5;
  request.negativity = FALSE;
  again = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (again->filter_ms, ==, 0.0);
  g_assert_null (again->negativity);
  g_assert_cmpfloat (again->params.center, ==, c->center + 0.5);
}

/* A volume gives, row by row, what slices of those rows give. */
static void
test_volume (gconstpointer data)
{
  const TomoTestBackendCase *td = data;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = engine_for (td->backend, TRUE, &scan);
  g_autoptr(GError) error = NULL;
  g_auto(TomoTestVolume) collected = { 0 };
  TomoReconParams params;

  if (engine == NULL)
    return;
  tomo_recon_params_init (&params, WIDTH);
  params.center = AXIS - 0.3;
  params.roi = (TomoRoi) { 8, 16, 72, 48 };
  tomo_test_volume_init (&collected, 1, 72, 48);
  g_assert_true (tomo_engine_reconstruct_volume (engine, 1, 5, &params, TOMO_KERNEL_AUTO,
                                                 tomo_test_volume_sink, NULL, &collected, NULL,
                                                 &error));
  g_assert_no_error (error);
  g_assert_cmpuint (collected.slices->len, ==, 4);
  for (guint i = 0; i < collected.slices->len; i++)
    {
      TomoSliceRequest request;
      g_autoptr(TomoSlice) slice = NULL;

      tomo_slice_request_init (&request, scan);
      request.row = 1 + i;
      request.params = params;
      slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
      g_assert_no_error (error);
      /* The GPU volume back-projects these four rows as one 4-slice pack,
       * whose bins travel as halves (1.1e-4 measured on the H100); the
       * single slices stay in float. */
      g_assert_cmpfloat (tomo_test_rel_l2 (collected.slices->pdata[i], slice->data, 72 * 48), <=,
                         td->backend == TOMO_BACKEND_CPU ? 0 : 1e-3);
    }

  /* Rows past the end: the engine's message, nothing delivered. */
  g_ptr_array_set_size (collected.slices, 0);
  collected.next_row = 2;
  g_assert_false (tomo_engine_reconstruct_volume (engine, 2, HEIGHT + 3, &params,
                                                  TOMO_KERNEL_AUTO, tomo_test_volume_sink, NULL,
                                                  &collected, NULL, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (error->message, "Rows 2:9 are out of range"));
  g_assert_cmpuint (collected.slices->len, ==, 0);
}

static void
test_bad_case (gconstpointer data)
{
  const TomoTestBackendCase *td = data;
  const BadCase *c = td->item;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = engine_for (td->backend, !c->no_scan, &scan);
  g_autoptr(TomoSlice) slice = NULL;
  g_autoptr(GError) error = NULL;
  TomoSliceRequest request;

  if (engine == NULL)
    return;
  tomo_slice_request_init (&request, scan);
  request.row = c->row;
  request.n_slices = c->n_slices;
  request.params.center = c->center;
  request.params.roi = c->roi;
  request.kernel = c->kernel;
  slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_null (slice);
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  g_test_message ("%s: %s", c->name, error->message);
  g_assert_nonnull (strstr (error->message, c->words));

  /* The same door for volumes (rows and kernel aside, the same words). */
  if (c->n_slices == 1 && c->row < HEIGHT)
    {
      g_clear_error (&error);
      g_assert_false (tomo_engine_reconstruct_volume (engine, c->row, c->row + 1, &request.params,
                                                      c->kernel, tomo_test_volume_sink, NULL,
                                                      NULL, NULL, &error));
      g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
      g_assert_nonnull (strstr (error->message, c->words));
    }

  /* The engine still works afterwards. */
  if (c->no_scan)
    tomo_engine_set_scan (engine, scan);
  g_clear_pointer (&slice, tomo_slice_unref);
  g_clear_error (&error);
  tomo_slice_request_init (&request, scan);
  slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (slice->values.valid);
}

static void
test_kernel_names (void)
{
  g_autoptr(GError) error = NULL;
  TomoKernel k;

  for (TomoKernel i = 0; i < TOMO_N_KERNELS; i++)
    {
      g_assert_true (tomo_kernel_from_string (tomo_kernel_to_string (i), &k, &error));
      g_assert_no_error (error);
      g_assert_cmpint (k, ==, i);
    }
  g_assert_cmpstr (tomo_kernel_to_string (TOMO_KERNEL_HYBRID), ==, "hybrid");
  g_assert_cmpstr (tomo_kernel_to_string (TOMO_N_KERNELS), ==, "invalid");
  g_assert_false (tomo_kernel_from_string ("warp", &k, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (error->message, "“warp”"));
}

/* A backend of `backend`, asserted made. */
static TomoBackendImpl *
backend_new (TomoBackend backend)
{
  g_autoptr(GError) error = NULL;
  TomoBackendImpl *impl = backend == TOMO_BACKEND_GPU ? tomo_backend_gpu_new (&error)
                                                      : tomo_backend_cpu_new ();

  g_assert_no_error (error);
  return impl;
}

/* The centre sweep op against the CPU reference at each centre: candidates
 * 0.5 px apart (two groups that differ by whole pixels, which the GPU packs
 * four to a launch, the last one padded) and one alone.  Compared inside
 * the disc every candidate's detector covers; the CPU loop exactly, the GPU
 * within the 4-slice path's half-precision tolerance (test-gpu-bp: 1e-2). */
static void
test_centers (gconstpointer data)
{
  const TomoTestBackendCase *td = data;
  const double centers[] = { AXIS - 1.5, AXIS - 1.0, AXIS - 0.5, AXIS, AXIS + 0.5, AXIS + 1.0,
                             AXIS + 1.5, AXIS + 0.3 };
  const guint n = G_N_ELEMENTS (centers), row = 3;
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autofree float *images = NULL, *ref = NULL;
  TomoBackendImpl *impl;
  TomoBackendSetup setup = { 0 };
  TomoBackendCenters sweep = { .centers = centers, .n_centers = n, .ms = -1 };
  SliceCase c = { "centre", row, 1, AXIS, TOMO_INTERP_LINEAR, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE };
  const gsize px = (gsize) WIDTH * WIDTH;
  double filter_ms, radius = INFINITY;

  if (!tomo_test_need_backend (td->backend, NO_GPU))
    return;
  scan = tomo_test_open_scan (scan_path);
  impl = backend_new (td->backend);
  g_assert_nonnull (impl->ops->backproject_centers);
  setup.width = WIDTH;
  setup.n_proj = N_PROJ;
  setup.angles = tomo_scan_get_angles (scan);
  setup.filter = c.filter;
  setup.pad = c.pad;
  setup.n_threads = 1;
  g_assert_true (impl->ops->configure (impl, &setup, &error));
  g_assert_true (impl->ops->load_rows (impl, scan, row, 1, NULL, NULL, &error));
  g_assert_true (impl->ops->filter (impl, &filter_ms, &error));
  g_assert_no_error (error);
  sweep.plane.interp = TOMO_INTERP_LINEAR;
  sweep.plane.roi = (TomoRoi) { 0, 0, WIDTH, WIDTH };
  images = sweep.images = g_new (float, n * px);
  g_assert_true (impl->ops->backproject_centers (impl, &sweep, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (sweep.ms, >=, 0);

  for (guint i = 0; i < n; i++)
    radius = MIN (radius, MIN (centers[i], WIDTH - 1 - centers[i]) - 1.0);
  for (guint i = 0; i < n; i++)
    {
      double err2 = 0, ref2 = 0, max_diff = 0;

      c.center = centers[i];
      g_free (ref);
      ref = reference (scan, &c);
      for (guint y = 0; y < WIDTH; y++)
        for (guint x = 0; x < WIDTH; x++)
          {
            double dx = x - (WIDTH - 1) / 2.0, dy = y - (WIDTH - 1) / 2.0;
            double d = images[i * px + (gsize) y * WIDTH + x] - ref[(gsize) y * WIDTH + x];

            if (dx * dx + dy * dy > radius * radius)
              continue;
            err2 += d * d;
            ref2 += (double) ref[(gsize) y * WIDTH + x] * ref[(gsize) y * WIDTH + x];
            max_diff = MAX (max_diff, fabs (d));
          }
      g_test_message ("centre %.2f: relative L2 error %.3g inside r = %.1f", centers[i],
                      sqrt (err2 / ref2), radius);
      g_assert_cmpfloat (ref2, >, 0);
      if (td->backend == TOMO_BACKEND_CPU)
        g_assert_cmpfloat (max_diff, ==, 0);
      else
        g_assert_cmpfloat (sqrt (err2 / ref2), <=, 1e-2);
    }
  tomo_backend_free (impl);
}

/* One slice at the axis from `impl` configured with `angles`. */
static float *
slice_with_angles (TomoBackendImpl *impl,
                   TomoScan        *scan,
                   const double    *angles)
{
  g_autoptr(GError) error = NULL;
  const double center = AXIS;
  TomoBackendSetup setup = { WIDTH, N_PROJ, angles, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, 1 };
  TomoBackendCenters sweep = { .centers = &center, .n_centers = 1, .ms = -1 };
  double filter_ms;

  g_assert_true (impl->ops->configure (impl, &setup, &error));
  g_assert_true (impl->ops->load_rows (impl, scan, 3, 1, NULL, NULL, &error));
  g_assert_true (impl->ops->filter (impl, &filter_ms, &error));
  sweep.plane.interp = TOMO_INTERP_LINEAR;
  sweep.plane.roi = (TomoRoi) { 0, 0, WIDTH, WIDTH };
  sweep.images = g_new (float, (gsize) WIDTH * WIDTH);
  g_assert_true (impl->ops->backproject_centers (impl, &sweep, &error));
  g_assert_no_error (error);
  return sweep.images;
}

/* A backend configured again with other angles at the same address (a
 * freed scan's array reused by the next scan's) back-projects with the new
 * angles: the slice equals a fresh backend's with those angles, and the
 * turn by 0.2 rad did change it. */
static void
test_reconfigure_same_address (gconstpointer data)
{
  const TomoTestBackendCase *td = data;
  g_autoptr(TomoScan) scan = NULL;
  g_autofree double *angles = NULL, *turned = NULL;
  g_autofree float *first = NULL, *again = NULL, *fresh = NULL;
  TomoBackendImpl *impl, *other;
  const gsize px = (gsize) WIDTH * WIDTH;

  if (!tomo_test_need_backend (td->backend, NO_GPU))
    return;
  scan = tomo_test_open_scan (scan_path);
  angles = g_memdup2 (tomo_scan_get_angles (scan), sizeof (double) * N_PROJ);
  turned = g_new (double, N_PROJ);
  for (guint p = 0; p < N_PROJ; p++)
    turned[p] = angles[p] + 0.2;
  impl = backend_new (td->backend);
  first = slice_with_angles (impl, scan, angles);
  memcpy (angles, turned, sizeof (double) * N_PROJ);
  again = slice_with_angles (impl, scan, angles);
  other = backend_new (td->backend);
  fresh = slice_with_angles (other, scan, turned);
  g_test_message ("same address, new angles: vs a fresh backend %.3g, vs the old angles %.3g",
                  tomo_test_rel_l2 (again, fresh, px), tomo_test_rel_l2 (again, first, px));
  g_assert_cmpfloat (tomo_test_rel_l2 (again, fresh, px), ==, 0);
  g_assert_cmpfloat (tomo_test_rel_l2 (again, first, px), >, 0.1);
  tomo_backend_free (other);
  tomo_backend_free (impl);
}

static void
add_tests (void)
{
  const TomoBackend backends[] = { TOMO_BACKEND_CPU, TOMO_BACKEND_GPU };

  for (guint b = 0; b < G_N_ELEMENTS (backends); b++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (slice_cases); i++)
        tomo_test_add_backend_case ("/tomo/backend", backends[b], "slice", &slice_cases[i],
                                    test_slice_case);
      for (guint i = 0; i < G_N_ELEMENTS (bad_cases); i++)
        tomo_test_add_backend_case ("/tomo/backend", backends[b], "bad", &bad_cases[i], test_bad_case);
      tomo_test_add_backend_case ("/tomo/backend", backends[b], "volume", NULL, test_volume);
      tomo_test_add_backend_case ("/tomo/backend", backends[b], "centers", NULL, test_centers);
      tomo_test_add_backend_case ("/tomo/backend", backends[b], "reconfigure-same-address", NULL,
                                  test_reconfigure_same_address);
    }
  g_test_add_func ("/tomo/backend/kernel-names", test_kernel_names);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  scan_path = tomo_test_write_phantom (WIDTH, HEIGHT, N_PROJ, 1.5, &tmp_dir);

  add_tests ();
  return tomo_test_run_and_remove_scan (scan_path, tmp_dir);
}
