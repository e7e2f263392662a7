/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The volume store behind the backend interface: one table of planes (XY at
 * a row, XZ, YZ, oblique; odd sizes, a row range, nearest and linear) run
 * through each backend's store_new → store_fill → store_plane and compared
 * with the CPU reference tomo_plane_backproject_reference() on sinograms
 * filtered here with tomo_cpu_fbp_filter().  Bad planes and a store that does
 * not fit are answered with one message; TomoVolume falls back from the GPU
 * to the CPU and says why.  GPU cases skip without a CUDA device.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-backend.h"
#include "tomo-error.h"
#include "tomo-fbp.h"
#include "tomo-geometry.h"
#include "tomo-gpu.h"
#include "tomo-volume.h"
#include "tomo-test-util.h"

#define WIDTH 64
#define HEIGHT 12
#define N_PROJ 60
#define OFFSET 1.5
#define AXIS ((WIDTH - 1) / 2.0 + OFFSET)

static char *tmp_dir;
static char *scan_path;

typedef enum { XY, XZ, YZ, OBLIQUE } Kind;

typedef struct
{
  const char *name;
  Kind kind;
  double at;               /* XY: row; XZ: iy; YZ: ix; oblique: azimuth (°) */
  guint a0, width, z0, height;
  double tilt, spacing;    /* oblique */
  guint row_start, n_rows; /* the store's rows */
  TomoInterp interp;
  double center;
  double axis_tilt;        /* the scan's axis tilt corrected (°): its rows resampled */
} PlaneCase;

static const PlaneCase plane_cases[] = {
  { "xy-row", XY, 5, 0, WIDTH, 0, WIDTH, 0, 0, 0, HEIGHT, TOMO_INTERP_LINEAR, AXIS },
  { "xz", XZ, 20, 0, WIDTH, 0, HEIGHT, 0, 0, 0, HEIGHT, TOMO_INTERP_LINEAR, AXIS },
  { "xz-nearest-off-axis", XZ, 40, 0, WIDTH, 0, HEIGHT, 0, 0, 0, HEIGHT, TOMO_INTERP_NEAREST,
    AXIS - 0.6 },
  { "yz-odd", YZ, 33, 5, 37, 1, 9, 0, 0, 0, HEIGHT, TOMO_INTERP_LINEAR, AXIS },
  { "yz-row-range", YZ, 30, 0, WIDTH, 0, HEIGHT, 0, 0, 3, 6, TOMO_INTERP_LINEAR, AXIS },
  { "oblique", OBLIQUE, 30, 0, 51, 0, 17, 10, 0.8, 0, HEIGHT, TOMO_INTERP_LINEAR, AXIS + 0.3 },
  { "oblique-range", OBLIQUE, 120, 0, 45, 0, 11, 0, 1.2, 2, 8, TOMO_INTERP_LINEAR, AXIS },
  /* Rows up to 0.58 px from where they were: resampled on the device
   * after its preprocessing, on the CPU before its filter. */
  { "xz-tilt-corrected", XZ, 24, 0, WIDTH, 0, HEIGHT, 0, 0, 0, HEIGHT, TOMO_INTERP_LINEAR, AXIS,
    6.0 },
  { "yz-tilt-corrected-range", YZ, 30, 0, WIDTH, 0, HEIGHT, 0, 0, 3, 7, TOMO_INTERP_LINEAR, AXIS,
    -9.0 },
};

static void
plane_of_case (TomoPlane       *plane,
               const PlaneCase *c)
{
  double mid = (WIDTH - 1) / 2.0;

  switch (c->kind)
    {
    case XY:
      *plane = (TomoPlane) { { mid, mid, c->at }, { 1, 0, 0 }, { 0, 1, 0 }, c->width, c->height };
      break;
    case XZ:
      tomo_plane_init_xz (plane, c->at, c->a0, c->width, c->z0, c->height);
      break;
    case YZ:
      tomo_plane_init_yz (plane, c->at, c->a0, c->width, c->z0, c->height);
      break;
    case OBLIQUE:
      {
        double centre[3] = { mid + 2, mid - 3, (HEIGHT - 1) / 2.0 };

        tomo_plane_init_oblique (plane, centre, c->at, c->tilt, c->width, c->height, c->spacing);
      }
      break;
    }
}

/* NULL (and the test skipped) when the backend is not here. */
static TomoBackendImpl *
backend_new (TomoBackend backend)
{
  g_autoptr (GError) error = NULL;
  TomoBackendImpl *impl;

  if (backend == TOMO_BACKEND_CPU)
    return tomo_backend_cpu_new ();
  if (!tomo_test_need_gpu ("the GPU store is tested on the GPU machine"))
    return NULL;
  impl = tomo_backend_gpu_new (&error);
  g_assert_no_error (error);
  return impl;
}

static void
store_setup (TomoBackendStoreSetup *setup,
             TomoScan              *scan,
             guint                  row_start,
             guint                  n_rows)
{
  memset (setup, 0, sizeof *setup);
  setup->setup = (TomoBackendSetup) { WIDTH, N_PROJ, tomo_scan_get_angles (scan),
                                      TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, 2 };
  setup->row_start = row_start;
  setup->n_rows = n_rows;
}

static void
progress_cb (guint    done,
             guint    total,
             gpointer data)
{
  guint *last = data;

  g_assert_cmpuint (done, >, *last);
  g_assert_cmpuint (done, <=, total);
  *last = done;
}

/* impl's store of rows [row_start, row_start + n_rows), made and filled;
 * with `last`, progress_cb checks the progress and keeps the last count. */
static void
store_make (TomoBackendImpl *impl,
            TomoScan        *scan,
            guint            row_start,
            guint            n_rows,
            guint           *last)
{
  g_autoptr (GError) error = NULL;
  TomoBackendStoreSetup setup;

  store_setup (&setup, scan, row_start, n_rows);
  g_assert_true (impl->ops->store->store_new (impl, &setup, &error));
  g_assert_no_error (error);
  g_assert_true (impl->ops->store->store_fill (impl, scan, last != NULL ? progress_cb : NULL, last,
                                               NULL, &error));
  g_assert_no_error (error);
}

/* The reference's input: rows [row_start, row_start + n_rows) filtered on
 * the CPU as the store filters them, one sinogram after another. */
static float *
cpu_filtered_rows (TomoScan *scan,
                   guint     row_start,
                   guint     n_rows)
{
  gsize ns = (gsize) N_PROJ * WIDTH;
  g_autofree float *sino = g_new (float, ns);
  float *filtered = g_new (float, ns * n_rows);
  g_autoptr (TomoCpuFbp) fbp = tomo_cpu_fbp_new (WIDTH, N_PROJ, tomo_scan_get_angles (scan),
                                                 TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE, 2);

  for (guint r = 0; r < n_rows; r++)
    {
      g_assert_true (tomo_scan_read_sinogram (scan, row_start + r, sino, NULL, NULL));
      tomo_cpu_fbp_filter (fbp, sino, filtered + r * ns);
    }
  return filtered;
}

static void
test_plane (gconstpointer data)
{
  const TomoTestBackendCase *td = data;
  const PlaneCase *c = td->item;
  g_autoptr (GError) error = NULL;
  g_autoptr (TomoScan) scan = NULL;
  g_autofree float *filtered = NULL, *got = NULL, *ref = NULL;
  g_autofree char *desc = NULL;
  TomoBackendImpl *impl = backend_new (td->backend);
  TomoPlane plane;
  gsize n;
  guint last = 0;
  double ms = -1, e, tol;
  gboolean half;

  if (impl == NULL)
    return;
  scan = tomo_test_open_scan (scan_path);
  if (c->axis_tilt != 0.0)
    {
      TomoScan *corrected = tomo_geometry_correct_tilt (scan, c->axis_tilt, &error);

      g_assert_no_error (error);
      g_set_object (&scan, corrected);
      g_object_unref (corrected);
    }
  store_make (impl, scan, c->row_start, c->n_rows, &last);
  g_assert_cmpuint (last, ==, c->n_rows);

  /* The reference: the same rows filtered on the CPU, planes in double. */
  filtered = cpu_filtered_rows (scan, c->row_start, c->n_rows);

  plane_of_case (&plane, c);
  n = (gsize) plane.width * plane.height;
  got = g_new (float, n);
  ref = g_new (float, n);
  {
    TomoPlaneSource src = { WIDTH, N_PROJ, tomo_scan_get_angles (scan), c->row_start, c->n_rows,
                            filtered };

    tomo_plane_backproject_reference (&src, c->center, c->interp, &plane, 2, ref);
  }
  g_assert_true (impl->ops->store->store_plane (impl, &plane, c->center, c->interp, got, &ms,
                                                &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (ms, >=, 0.0);

  desc = impl->ops->store->store_describe (impl);
  half = strstr (desc, "half") != NULL;
  /* The GPU fills from the file's raw rows, a tilt correction's included
   * (resampled on the device): not from rows made on the host. */
  if (td->backend == TOMO_BACKEND_GPU)
    g_assert_nonnull (strstr (desc, "rows preprocessed on the device"));
  e = tomo_test_rel_l2 (got, ref, n);
  tol = half || c->interp == TOMO_INTERP_NEAREST ? 2e-3 : 2e-5;
  g_test_message ("%s, %s: relative L2 %.3g (tolerance %g), %.3f ms", desc, c->name, e, tol, ms);
  g_assert_cmpfloat (e, <=, tol);
  /* Samples outside the rows held (row range cases) are exactly 0. */
  for (gsize i = 0; i < n; i++)
    if (ref[i] == 0.0f)
      g_assert_cmpfloat (fabsf (got[i]), <=, 1e-6f);
  tomo_backend_free (impl);
}

static void
test_bad_planes (gconstpointer data)
{
  const TomoTestBackendCase *td = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (TomoScan) scan = NULL;
  TomoBackendImpl *impl = backend_new (td->backend);
  TomoBackendStoreSetup setup;
  TomoPlane plane;
  float out[16];

  if (impl == NULL)
    return;
  scan = tomo_test_open_scan (scan_path);
  tomo_plane_init_xz (&plane, 3, 0, 4, 0, 4);

  /* No store yet. */
  g_assert_false (impl->ops->store->store_plane (impl, &plane, AXIS, TOMO_INTERP_LINEAR, out, NULL,
                                                 &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND);
  g_assert_nonnull (strstr (error->message, "store is not made"));
  g_clear_error (&error);

  store_setup (&setup, scan, 0, HEIGHT);
  g_assert_true (impl->ops->store->store_new (impl, &setup, &error));
  g_assert_no_error (error);
  g_assert_false (impl->ops->store->store_plane (impl, &plane, NAN, TOMO_INTERP_LINEAR, out, NULL,
                                                 &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  g_assert_nonnull (strstr (error->message, "Centre nan"));
  g_clear_error (&error);
  plane.u[0] = INFINITY;
  g_assert_false (impl->ops->store->store_plane (impl, &plane, AXIS, TOMO_INTERP_LINEAR, out, NULL,
                                                 &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  g_clear_error (&error);

  /* A store that does not fit in its memory limit: one message, no store. */
  setup.memory_limit = 1024;
  g_assert_false (impl->ops->store->store_new (impl, &setup, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND);
  g_test_message ("%s: %s", impl->ops->name, error->message);
  g_assert_null (impl->store);
  tomo_backend_free (impl);
}

/* The preview volume (tomo-preview.h), twice:
 * - against tomo_preview_backproject() on sinograms filtered here, at
 *   32 × 32 × 6 (bins of 2 columns, slabs of 2 rows, every projection) and
 *   8 × 8 × 5 (bins of 8, every 3rd projection, slabs of 2 or 3 rows):
 *   relative L2 ≤ 1e-6 on the CPU (the same code), ≤ 1e-4 on the GPU
 *   (float sums, its own filter);
 * - against a stack of full XY slices averaged over each voxel's 2 × 2
 *   pixels and 2 rows, which it approximates: relative L2 ≤ 0.25 (0.17 on
 *   the CPU: the 64-pixel phantom's edges are sharp, the detector box is
 *   radial where the pixel block is square, and the interpolation between
 *   bins smooths by another bin; point samples of the full slices at the
 *   voxel centres are 0.14 from the same stack) and the means within 2 %.
 * A bad size is refused. */
static void
test_preview (gconstpointer data)
{
  const TomoTestBackendCase *td = data;
  g_autoptr (GError) error = NULL;
  g_autoptr (TomoScan) scan = NULL;
  g_autofree float *filtered = NULL, *vol = NULL, *ref = NULL, *xy = NULL, *stack = NULL;
  TomoBackendImpl *impl = backend_new (td->backend);
  double mid = (WIDTH - 1) / 2.0, e, mean_v = 0, mean_s = 0;
  TomoPreviewRequest request;
  const double tol = td->backend == TOMO_BACKEND_CPU ? 1e-6 : 1e-4;
  static const guint sizes[2][3] = { { 32, 32, 6 }, { 8, 8, 5 } };
  enum { NX = 32, NZ = 6 };

  if (impl == NULL)
    return;
  scan = tomo_test_open_scan (scan_path);
  store_make (impl, scan, 0, HEIGHT, NULL);
  filtered = cpu_filtered_rows (scan, 0, HEIGHT);

  TomoPlaneSource src = { WIDTH, N_PROJ, tomo_scan_get_angles (scan), 0, HEIGHT, filtered };

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      const guint nx = sizes[s][0], ny = sizes[s][1], nz = sizes[s][2];
      TomoPreviewGeometry geometry;

      tomo_preview_geometry_init (&geometry, WIDTH, N_PROJ, nx, ny, nz);
      vol = g_renew (float, vol, nx * ny * nz);
      ref = g_renew (float, ref, nx * ny * nz);
      request = (TomoPreviewRequest) { nx, ny, nz, AXIS, TOMO_INTERP_LINEAR, vol, -1 };
      g_assert_true (impl->ops->store->store_preview (impl, &request, &error));
      g_assert_no_error (error);
      g_assert_cmpfloat (request.ms, >=, 0.0);
      tomo_preview_backproject (&src, &geometry, AXIS, TOMO_INTERP_LINEAR, 2, ref);
      e = tomo_test_rel_l2 (vol, ref, nx * ny * nz);
      g_test_message ("%s preview %u × %u × %u (bin %u, step %u) in %.3f ms: relative L2 %.3g "
                      "against tomo_preview_backproject (tolerance %g)", impl->ops->name, nx, ny,
                      nz, geometry.bin, geometry.step, request.ms, e, tol);
      g_assert_cmpfloat (e, <=, tol);
    }

  /* The 32 × 32 × 6 volume against averaged full slices. */
  vol = g_renew (float, vol, NX * NX * NZ);
  request = (TomoPreviewRequest) { NX, NX, NZ, AXIS, TOMO_INTERP_LINEAR, vol, -1 };
  g_assert_true (impl->ops->store->store_preview (impl, &request, &error));
  xy = g_new (float, WIDTH * WIDTH);
  stack = g_new0 (float, NX * NX * NZ);
  for (guint r = 0; r < HEIGHT; r++)
    {
      TomoPlane plane = { { mid, mid, r }, { 1, 0, 0 }, { 0, 1, 0 }, WIDTH, WIDTH };

      tomo_plane_backproject_reference (&src, AXIS, TOMO_INTERP_LINEAR, &plane, 2, xy);
      for (guint iy = 0; iy < WIDTH; iy++)
        for (guint ix = 0; ix < WIDTH; ix++)
          stack[((gsize) (r / 2) * NX + iy / 2) * NX + ix / 2] += xy[iy * WIDTH + ix] / 8.0f;
    }
  e = tomo_test_rel_l2 (vol, stack, NX * NX * NZ);
  for (guint i = 0; i < NX * NX * NZ; i++)
    {
      mean_v += vol[i];
      mean_s += stack[i];
    }
  g_test_message ("%s preview against the averaged XY stack: relative L2 %.3g, means %.5g and "
                  "%.5g", impl->ops->name, e, mean_v, mean_s);
  g_assert_cmpfloat (e, <=, 0.25);
  g_assert_cmpfloat (fabs (mean_v - mean_s), <=, 0.02 * fabs (mean_s));

  request.nx = 0;
  g_assert_false (impl->ops->store->store_preview (impl, &request, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  tomo_backend_free (impl);
}

/* The preview kept on the device (the 3D pane's interop path) through
 * TomoVolume on the GPU: its copy equals the host preview bit for bit, its
 * device min/max the host's; a copy let go is used again for the next (the
 * store keeps its buffers: the same device pointer), two held at once are
 * two buffers.  When keeping fails (TOMO_GPU_FAIL=keep:1),
 * tomo_volume_preview() fails and tomo_volume_preview_or_host() makes the
 * same preview through host memory (bit for bit the host preview) and says
 * why; the next kept preview works again.  A new size after the store's
 * buffers served another: still right. */
static void
test_preview_kept (void)
{
  enum { NX = 32, NZ = 6 };
  const gsize n = NX * NX * NZ;
  TomoPreviewRequest request;
  TomoReconParams params;
  const TomoDeviceBufferOps *ops;
  g_autofree float *host = NULL, *down = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) device_error = NULL;
  g_autoptr (TomoScan) scan = NULL;
  g_autoptr (TomoVolume) vol = NULL;
  const float *p1, *p2, *p3;
  gpointer b1, b2;
  float lo = G_MAXFLOAT, hi = -G_MAXFLOAT;
  int device = -1;

  if (!tomo_test_need_gpu ("the preview kept on the device is tested on the GPU machine"))
    return;
  scan = tomo_test_open_scan (scan_path);
  tomo_recon_params_init (&params, WIDTH);
  params.center = AXIS;
  vol = tomo_volume_new (scan, 0, HEIGHT, &params, TOMO_BACKEND_GPU, 0, &error);
  g_assert_no_error (error);
  g_assert_true (tomo_volume_fill (vol, NULL, NULL, NULL, &error));

  host = g_new (float, n);
  down = g_new (float, n);
  request = (TomoPreviewRequest) { NX, NX, NZ, AXIS, TOMO_INTERP_LINEAR, host };
  g_assert_true (tomo_volume_preview (vol, &request, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < n; i++)
    {
      lo = MIN (lo, host[i]);
      hi = MAX (hi, host[i]);
    }

  request = (TomoPreviewRequest) { NX, NX, NZ, AXIS, TOMO_INTERP_LINEAR, NULL };
  request.keep_on_device = TRUE;
  g_assert_true (tomo_volume_preview (vol, &request, &error));
  g_assert_no_error (error);
  g_assert_nonnull (request.device_buffer);
  ops = request.device_ops;
  b1 = request.device_buffer;
  p1 = ops->data (b1, &device);
  g_assert_cmpint (device, >=, 0);
  g_assert_true (ops->download (b1, down));
  g_assert_cmpmem (down, n * sizeof (float), host, n * sizeof (float));
  g_assert_cmpfloat (request.min, ==, lo);
  g_assert_cmpfloat (request.max, ==, hi);
  ops->free (b1);

  /* Let go: its buffer serves the next; held: another one. */
  g_assert_true (tomo_volume_preview (vol, &request, &error));
  b1 = request.device_buffer;
  p2 = ops->data (b1, &device);
  g_assert_true (p2 == p1);
  g_assert_true (tomo_volume_preview (vol, &request, &error));
  b2 = request.device_buffer;
  p3 = ops->data (b2, &device);
  g_assert_true (p3 != p2);
  g_assert_true (ops->download (b2, down));
  g_assert_cmpmem (down, n * sizeof (float), host, n * sizeof (float));
  ops->free (b1);
  ops->free (b2);

  /* Keeping fails once. */
  g_assert_true (tomo_gpu_fault_configure ("keep:1", 0, &error));
  request = (TomoPreviewRequest) { NX, NX, NZ, AXIS, TOMO_INTERP_LINEAR, NULL };
  request.keep_on_device = TRUE;
  g_assert_false (tomo_volume_preview (vol, &request, &error));
  g_test_message ("kept preview, fault injected: %s", error->message);
  g_clear_error (&error);
  g_assert_true (tomo_gpu_fault_configure ("keep:1", 0, &error));
  g_assert_true (tomo_volume_preview_or_host (vol, &request, &device_error, &error));
  g_assert_no_error (error);
  g_assert_nonnull (device_error);
  g_test_message ("through host memory because: %s", device_error->message);
  g_assert_nonnull (strstr (device_error->message, "injected fault"));
  g_assert_null (request.device_buffer);
  g_assert_false (request.keep_on_device);
  g_assert_nonnull (request.out);
  g_assert_cmpmem (request.out, n * sizeof (float), host, n * sizeof (float));
  g_assert_cmpfloat (request.min, ==, lo);
  g_assert_cmpfloat (request.max, ==, hi);
  g_free (request.out);
  g_assert_true (tomo_gpu_fault_configure (NULL, 0, &error));

  /* Kept again, no fault: on the device, right. */
  g_clear_error (&device_error);
  request = (TomoPreviewRequest) { NX, NX, NZ, AXIS, TOMO_INTERP_LINEAR, NULL };
  request.keep_on_device = TRUE;
  g_assert_true (tomo_volume_preview_or_host (vol, &request, &device_error, &error));
  g_assert_null (device_error);
  g_assert_nonnull (request.device_buffer);
  g_assert_true (ops->download (request.device_buffer, down));
  g_assert_cmpmem (down, n * sizeof (float), host, n * sizeof (float));
  ops->free (request.device_buffer);

  /* Another size: the buffers of the first are let go, this one is right. */
  {
    g_autofree float *h8 = g_new (float, 8 * 8 * 5), *d8 = g_new (float, 8 * 8 * 5);

    request = (TomoPreviewRequest) { 8, 8, 5, AXIS, TOMO_INTERP_LINEAR, h8 };
    g_assert_true (tomo_volume_preview (vol, &request, &error));
    request = (TomoPreviewRequest) { 8, 8, 5, AXIS, TOMO_INTERP_LINEAR, NULL };
    request.keep_on_device = TRUE;
    g_assert_true (tomo_volume_preview (vol, &request, &error));
    g_assert_no_error (error);
    g_assert_true (ops->download (request.device_buffer, d8));
    g_assert_cmpmem (d8, 8 * 8 * 5 * sizeof (float), h8, 8 * 8 * 5 * sizeof (float));
    /* Held past the store: freed for good then. */
    g_clear_pointer (&vol, tomo_volume_free);
    ops->free (request.device_buffer);
  }
}

/* AUTO with a GPU limit too small for even half precision falls back to
 * the CPU store and says why; GPU asked explicitly gives the error. */
static void
test_volume_fallback (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr (TomoVolume) vol = NULL;
  g_autofree char *desc = NULL;
  g_autofree float *xz = g_new (float, WIDTH * HEIGHT);
  TomoReconParams params;
  TomoPlane plane;

  tomo_recon_params_init (&params, WIDTH);
  params.center = AXIS;
  vol = tomo_volume_new (scan, 0, HEIGHT, &params, TOMO_BACKEND_AUTO, 1024, &error);
  g_assert_no_error (error);
  g_assert_cmpint (tomo_volume_get_backend (vol), ==, TOMO_BACKEND_CPU);
  desc = tomo_volume_describe (vol);
  g_test_message ("%s", desc);
  g_assert_true (g_str_has_prefix (desc, "CPU store"));
  g_assert_nonnull (strstr (desc, "GPU not used"));
  g_assert_true (tomo_volume_fill (vol, NULL, NULL, NULL, &error));
  tomo_plane_init_xz (&plane, WIDTH / 2, 0, WIDTH, 0, HEIGHT);
  g_assert_true (tomo_volume_plane (vol, &plane, AXIS, TOMO_INTERP_LINEAR, xz, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (tomo_test_rel_l2 (xz, xz, WIDTH * HEIGHT), ==, 0.0); /* all finite */
  g_clear_pointer (&vol, tomo_volume_free);

  vol = tomo_volume_new (scan, 0, HEIGHT, &params, TOMO_BACKEND_GPU, 1024, &error);
  g_assert_null (vol);
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND);
  g_test_message ("GPU asked: %s", error->message);
}

static void
add_cases (const char    *group,
           gconstpointer  items,
           gsize          item_size,
           gsize          n_items,
           GTestDataFunc  func)
{
  static const TomoBackend backends[] = { TOMO_BACKEND_CPU, TOMO_BACKEND_GPU };

  for (guint b = 0; b < G_N_ELEMENTS (backends); b++)
    for (gsize i = 0; i < n_items; i++)
      tomo_test_add_backend_case ("/tomo/backend-store", backends[b], group,
                                  (const char *) items + i * item_size, func);
}

int
main (int    argc,
      char **argv)
{
  static const char *const bad[] = { "bad" };

  g_test_init (&argc, &argv, NULL);
  scan_path = tomo_test_write_phantom (WIDTH, HEIGHT, N_PROJ, OFFSET, &tmp_dir);
  add_cases ("plane", plane_cases, sizeof plane_cases[0], G_N_ELEMENTS (plane_cases), test_plane);
  add_cases ("errors", bad, sizeof bad[0], 1, test_bad_planes);
  {
    static const char *const preview[] = { "preview" };

    add_cases ("volume", preview, sizeof preview[0], 1, test_preview);
  }
  g_test_add_func ("/tomo/backend-store/volume-fallback", test_volume_fallback);
  g_test_add_func ("/tomo/backend-store/gpu/volume/preview-kept", test_preview_kept);
  return tomo_test_run_and_remove_scan (scan_path, tmp_dir);
}
