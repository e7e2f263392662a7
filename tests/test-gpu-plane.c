/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "tomo-fbp.h"
#include "tomo-filter.h"
#include "tomo-gpu-store.h"
#include "tomo-phantom.h"
#include "tomo-plane.h"
#include "tomo-test-util.h"

/* The volume store and its plane kernels against the CPU reference
 * (tomo_plane_backproject_reference, double accumulation).  Tolerances, relative L2
 * over the plane: float store 2e-5 linear / 2e-3 nearest (nearest flips a
 * bin wherever float and double round t to different sides of a half);
 * half store 2e-3 (half's 11-bit mantissa). */

static gboolean have_device;

typedef struct
{
  TomoPhantomParams params;
  guint w, h, n;
  double *angles;
  float *sinos;    /* h × n × w */
  float *filtered; /* h × n × w */
  TomoPlaneSource src;
} Fixture;

static void
fixture_init (Fixture *fx,
              guint    width,
              guint    height,
              guint    n_proj)
{
  g_autoptr (TomoCpuFbp) fbp = NULL;
  g_autofree double *sino_d = g_new (double, (gsize) n_proj * width);
  gsize ns = (gsize) n_proj * width;

  fx->w = width;
  fx->h = height;
  fx->n = n_proj;
  tomo_test_phantom_params (&fx->params, width, height, n_proj);
  fx->angles = tomo_test_half_turn (n_proj);

  fbp = tomo_cpu_fbp_new (width, n_proj, fx->angles, TOMO_FILTER_SHEPP_LOGAN, TOMO_PAD_EDGE, 0);
  fx->sinos = g_new (float, height * ns);
  fx->filtered = g_new (float, height * ns);
  for (guint r = 0; r < height; r++)
    {
      tomo_phantom_sinogram (&fx->params, fx->angles, r, sino_d);
      for (gsize i = 0; i < ns; i++)
        fx->sinos[r * ns + i] = (float) sino_d[i];
      tomo_cpu_fbp_filter (fbp, fx->sinos + r * ns, fx->filtered + r * ns);
    }
  fx->src = (TomoPlaneSource) { width, n_proj, fx->angles, 0, height, fx->filtered };
}

static void
fixture_clear (Fixture *fx)
{
  g_free (fx->angles);
  g_free (fx->sinos);
  g_free (fx->filtered);
}

static TomoGpuStore *
store_new (Fixture              *fx,
           guint                 row_start,
           guint                 n_rows,
           TomoGpuStorePrecision precision)
{
  g_autoptr (GError) error = NULL;
  TomoGpuStore *store = tomo_gpu_store_new (0, fx->w, fx->n, fx->angles, row_start, n_rows,
                                            precision, 0, &error);

  g_assert_no_error (error);
  g_assert_nonnull (store);
  g_assert_true (tomo_gpu_store_put_filtered (store, row_start, n_rows,
                                              fx->filtered + (gsize) row_start * fx->n * fx->w,
                                              &error));
  g_assert_no_error (error);
  return store;
}

/* GPU plane against the CPU reference; returns the relative L2 error. */
static double
compare_plane (Fixture            *fx,
               TomoGpuStore       *store,
               const TomoPlane    *plane,
               TomoInterp          interp,
               TomoGpuPlaneKernel  kernel)
{
  g_autoptr (GError) error = NULL;
  gsize n = (gsize) plane->width * plane->height;
  g_autofree float *ref = g_new (float, n);
  g_autofree float *got = g_new (float, n);
  TomoPlaneSource src = fx->src;
  TomoGpuPlane gp;

  src.row_start = tomo_gpu_store_get_row_start (store);
  src.n_rows = tomo_gpu_store_get_n_rows (store);
  src.filtered = fx->filtered + (gsize) src.row_start * fx->n * fx->w;
  tomo_plane_backproject_reference (&src, fx->params.center, interp, plane, 0, ref);

  G_STATIC_ASSERT (sizeof (TomoGpuPlane) == sizeof (TomoPlane));
  memcpy (&gp, plane, sizeof gp);
  g_assert_true (tomo_gpu_store_plane (store, &gp, fx->params.center, interp, kernel, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_store_download (store, got, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < n; i++)
    g_assert_true (isfinite (got[i]));
  return tomo_test_rel_l2 (got, ref, n);
}

static void
test_planes (gconstpointer data)
{
  TomoGpuStorePrecision precision = GPOINTER_TO_INT (data);
  Fixture fx;
  TomoGpuStore *store;
  TomoPlane planes[7];
  const char *names[7] = { "XZ", "YZ", "XY", "oblique 37°/20° ×0.8", "oblique 120°/−35° ×1.5",
                           "XZ partly above the rows", "XZ with rows tilted 20°" };

  if (!have_device)
    {
      g_test_skip ("no CUDA device");
      return;
    }
  fixture_init (&fx, 161, 11, 181);
  store = store_new (&fx, 0, fx.h, precision);
  g_assert_cmpint (tomo_gpu_store_get_precision (store), ==, precision);
  g_assert_cmpuint (tomo_gpu_store_get_bytes (store), ==,
                    (guint64) fx.h * fx.n * fx.w * (precision == TOMO_GPU_STORE_FLOAT ? 4 : 2));

  tomo_plane_init_xz (&planes[0], 70, 0, fx.w, 0, fx.h);
  tomo_plane_init_yz (&planes[1], 91, 0, fx.w, 0, fx.h);
  tomo_plane_init_xz (&planes[2], 0, 0, fx.w, 0, fx.w);
  planes[2].v[2] = 0.0;
  planes[2].v[1] = 1.0;
  planes[2].centre[1] = (fx.w - 1) / 2.0;
  planes[2].centre[2] = 6.0;    /* XY of row 6 */
  tomo_plane_init_oblique (&planes[3], (double[3]) { 80.0, 77.0, 5.0 }, 37.0, 20.0, 143, 13, 0.8);
  tomo_plane_init_oblique (&planes[4], (double[3]) { 70.0, 85.0, 5.0 }, 120.0, -35.0, 99, 7, 1.5);
  tomo_plane_init_xz (&planes[5], 60, 10, 131, 6, 9);
  planes[6] = planes[0];
  planes[6].u[0] = cos (20.0 * G_PI / 180.0);
  planes[6].u[2] = sin (20.0 * G_PI / 180.0);

  for (guint k = 0; k < G_N_ELEMENTS (planes); k++)
    for (TomoInterp in = TOMO_INTERP_NEAREST; in <= TOMO_INTERP_LINEAR; in++)
      for (TomoGpuPlaneKernel kern = TOMO_GPU_PLANE_AUTO; kern <= TOMO_GPU_PLANE_ROWS; kern++)
        {
          double tol, e;

          if (kern == TOMO_GPU_PLANE_CACHED && (k == 4 || k == 6))
            continue;   /* step 1.5 > 1 pixel, rows not horizontal: checked below */
          if (kern == TOMO_GPU_PLANE_ROWS && k == 6)
            continue;
          e = compare_plane (&fx, store, &planes[k], in, kern);
          tol = precision == TOMO_GPU_STORE_HALF ? 2e-3 : in == TOMO_INTERP_LINEAR ? 2e-5 : 2e-3;
          g_test_message ("%s store, %s, %s, %s kernel (ran %s): relative L2 %.3g (tolerance %g)",
                          tomo_gpu_store_precision_to_string (precision), names[k],
                          tomo_interp_to_string (in), tomo_gpu_plane_kernel_to_string (kern),
                          tomo_gpu_plane_kernel_to_string (tomo_gpu_store_get_last_kernel (store)),
                          e, tol);
          g_assert_cmpfloat (e, <=, tol);
          if (kern == TOMO_GPU_PLANE_AUTO)
            g_assert_cmpint (tomo_gpu_store_get_last_kernel (store), ==,
                             k == 4 || k == 6 ? TOMO_GPU_PLANE_GLOBAL : TOMO_GPU_PLANE_ROWS);
        }

  /* The cached kernel refuses planes it cannot hold; the store survives. */
  {
    g_autoptr (GError) error = NULL;
    TomoGpuPlane gp;

    memcpy (&gp, &planes[4], sizeof gp);
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1,
                                          TOMO_GPU_PLANE_CACHED, &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
    g_clear_error (&error);
    memcpy (&gp, &planes[6], sizeof gp);
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1,
                                          TOMO_GPU_PLANE_ROWS, &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
    g_clear_error (&error);
    gp.centre[0] = NAN;
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1,
                                          TOMO_GPU_PLANE_AUTO, &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  }
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* A store of rows [3, 9): planes against the reference of the same rows,
 * rows outside are 0. */
static void
test_row_range (void)
{
  Fixture fx;
  TomoGpuStore *store;
  TomoPlane plane;

  if (!have_device)
    {
      g_test_skip ("no CUDA device");
      return;
    }
  fixture_init (&fx, 100, 12, 120);
  store = store_new (&fx, 3, 6, TOMO_GPU_STORE_FLOAT);
  tomo_plane_init_yz (&plane, 40, 5, 83, 0, fx.h);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR,
                                    TOMO_GPU_PLANE_CACHED), <=, 2e-5);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR,
                                    TOMO_GPU_PLANE_GLOBAL), <=, 2e-5);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR,
                                    TOMO_GPU_PLANE_ROWS), <=, 2e-5);
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* read and progress get the same user data. */
typedef struct
{
  Fixture *fx;
  guint calls;
  guint last_done;
} ReadData;

static gboolean
read_row (guint    row,
          float   *sino,
          gpointer user_data,
          GError **error)
{
  ReadData *rd = user_data;
  gsize ns = (gsize) rd->fx->n * rd->fx->w;

  g_assert_cmpuint (row, <, rd->fx->h);
  memcpy (sino, rd->fx->sinos + row * ns, ns * sizeof (float));
  rd->calls++;
  return TRUE;
}

static void
count_progress (guint    done,
                guint    total,
                gpointer user_data)
{
  ReadData *rd = user_data;

  g_assert_cmpuint (done, >, rd->last_done);
  g_assert_cmpuint (done, <=, total);
  g_assert_cmpuint (done, ==, rd->calls);
  rd->last_done = done;
}

/* Filled from the raw sinograms through the GPU filter: same planes as
 * from the CPU-filtered rows. */
static void
test_fill (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree double *response = NULL;
  Fixture fx;
  TomoGpuStore *store;
  TomoPlane plane;
  ReadData rd;
  guint padded;

  if (!have_device)
    {
      g_test_skip ("no CUDA device");
      return;
    }
  fixture_init (&fx, 128, 7, 150);  /* 7 rows: groups of 4, 2 and 1 */
  rd = (ReadData) { &fx, 0, 0 };
  store = tomo_gpu_store_new (0, fx.w, fx.n, fx.angles, 0, fx.h, TOMO_GPU_STORE_AUTO, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (tomo_gpu_store_get_precision (store), ==, TOMO_GPU_STORE_FLOAT);

  /* No filter yet: a clear refusal. */
  g_assert_false (tomo_gpu_store_fill (store, read_row, NULL, &rd, NULL, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_clear_error (&error);

  response = tomo_filter_fbp_response (TOMO_FILTER_SHEPP_LOGAN, fx.w, fx.n, &padded);
  g_assert_true (tomo_gpu_store_set_filter (store, padded, response, TOMO_PAD_EDGE, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_store_fill (store, read_row, count_progress, &rd, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rd.last_done, ==, fx.h);
  g_assert_cmpuint (tomo_gpu_store_get_n_filled (store), ==, fx.h);
  g_test_message ("filled %u rows in %.2f ms", fx.h, tomo_gpu_store_get_fill_ms (store));

  tomo_plane_init_xz (&plane, 60, 0, fx.w, 0, fx.h);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR,
                                    TOMO_GPU_PLANE_AUTO), <=, 1e-4);
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* Device-memory caps: float that does not fit → half; half that does not
 * fit → a clear error, no store, nothing crashes. */
static void
test_memory_cap (void)
{
  g_autoptr (GError) error = NULL;
  double angles[16];
  TomoGpuStore *store;
  guint64 elems = 10ull * 16 * 100;

  if (!have_device)
    {
      g_test_skip ("no CUDA device");
      return;
    }
  for (guint p = 0; p < 16; p++)
    angles[p] = G_PI * p / 16;
  store = tomo_gpu_store_new (0, 100, 16, angles, 0, 10, TOMO_GPU_STORE_AUTO, elems * 4 - 1,
                              &error);
  g_assert_no_error (error);
  g_assert_cmpint (tomo_gpu_store_get_precision (store), ==, TOMO_GPU_STORE_HALF);
  tomo_gpu_store_free (store);

  store = tomo_gpu_store_new (0, 100, 16, angles, 0, 10, TOMO_GPU_STORE_AUTO, elems * 2 - 1,
                              &error);
  g_assert_null (store);
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "rows 0…9"));
  g_clear_error (&error);

  /* A scan far larger than any device: refused the same way. */
  store = tomo_gpu_store_new (0, 8192, 8192, angles, 0, 65536, TOMO_GPU_STORE_AUTO, 0, &error);
  g_assert_null (store);
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  have_device = tomo_gpu_get_n_devices () > 0;

  g_test_add_data_func ("/tomo/gpu/store/planes-float", GINT_TO_POINTER (TOMO_GPU_STORE_FLOAT),
                        test_planes);
  g_test_add_data_func ("/tomo/gpu/store/planes-half", GINT_TO_POINTER (TOMO_GPU_STORE_HALF),
                        test_planes);
  g_test_add_func ("/tomo/gpu/store/row-range", test_row_range);
  g_test_add_func ("/tomo/gpu/store/fill", test_fill);
  g_test_add_func ("/tomo/gpu/store/memory-cap", test_memory_cap);
  return g_test_run ();
}
