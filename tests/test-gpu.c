/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The GPU context against the CPU double-precision reference: filtering
 * (both cuFFT paths, every filter, both paddings), whole slices, the cached
 * filtered sinogram, the volume pipeline, and the error paths.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-center.h"
#include "tomo-fbp.h"
#include "tomo-filter.h"
#include "tomo-engine.h"
#include "tomo-gpu.h"
#include "tomo-gpu-tune.h"
#include "tomo-phantom.h"
#include "tomo-test-util.h"

static int n_devices;

#define REQUIRE_GPU() TOMO_TEST_REQUIRE_GPU ("tomo_gpu_get_n_devices() returned 0")

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoGpuContext, tomo_gpu_context_free)

/* n values in [0, 2), the same for the same seed. */
static float *
random_sinos (guint   n,
              guint32 seed)
{
  return tomo_test_random_floats (n, seed, 0.0, 2.0);
}

/* A sinogram with structure (a phantom row) is a fairer check of the filter
 * than noise alone: the energy sits at low frequencies as in real data. */
static float *
phantom_sinos (guint    width,
               guint    n_proj,
               guint    n_rows,
               guint    first_row,
               guint    height,
               const double *angles)
{
  TomoPhantomParams pp;
  g_autofree double *row = g_new (double, (gsize) n_proj * width);
  float *out = g_new (float, (gsize) n_rows * n_proj * width);

  tomo_test_phantom_params (&pp, width, height, n_proj);
  for (guint r = 0; r < n_rows; r++)
    {
      tomo_phantom_sinogram (&pp, angles, first_row + r, row);
      for (gsize i = 0; i < (gsize) n_proj * width; i++)
        out[r * (gsize) n_proj * width + i] = (float) row[i];
    }
  return out;
}

static double
rel_l2_fd (const float  *a,
           const double *ref,
           gsize         n)
{
  double num = 0.0, den = 0.0;

  for (gsize i = 0; i < n; i++)
    {
      g_assert_true (isfinite (a[i]));
      num += (a[i] - ref[i]) * (a[i] - ref[i]);
      den += ref[i] * ref[i];
    }
  return den > 0.0 ? sqrt (num / den) : sqrt (num);
}

/* The FBP-scaled response of `filter` for `width` columns and n_proj
 * projections: tomo_filter_padded_width (width) / 2 + 1 values. */
static double *
response_new (TomoFilterType filter,
              guint          width,
              guint          n_proj)
{
  guint padded = tomo_filter_padded_width (width);
  double *resp = g_new (double, padded / 2 + 1);

  tomo_filter_response (filter, padded, tomo_fbp_scale (n_proj) / padded, resp);
  return resp;
}

static TomoGpuContext *
make_context (guint          width,
              guint          n_proj,
              const double  *angles,
              TomoFilterType filter,
              TomoPadMode    pad)
{
  g_autoptr(GError) error = NULL;
  g_autofree double *resp = response_new (filter, width, n_proj);
  TomoGpuContext *ctx;

  ctx = tomo_gpu_context_new (0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (ctx);
  g_assert_true (tomo_gpu_context_set_geometry (ctx, width, n_proj, angles, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_context_set_filter (ctx, tomo_filter_padded_width (width), resp, pad,
                                              &error));
  g_assert_no_error (error);
  return ctx;
}

/* ---------------------------------------------------------------------- */

static void
test_no_device (void)
{
  g_autoptr(GError) error = NULL;
  TomoGpuContext *ctx;
  TomoGpuKernel k;

  /* Runs everywhere: with no device the context must fail cleanly; with
   * devices, asking for one past the last must fail the same way. */
  ctx = tomo_gpu_context_new (n_devices, &error);
  g_assert_null (ctx);
  g_assert_nonnull (error);
  g_assert_true (g_error_matches (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE) ||
                 g_error_matches (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NOT_BUILT));
  g_assert_null (tomo_gpu_get_device_name (n_devices));
  g_clear_error (&error);

  for (int i = 0; i < TOMO_GPU_N_KERNELS; i++)
    {
      g_assert_true (tomo_gpu_kernel_from_string (tomo_gpu_kernel_to_string (i), &k, &error));
      g_assert_no_error (error);
      g_assert_cmpint (k, ==, i);
    }
  g_assert_false (tomo_gpu_kernel_from_string ("fastest", &k, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "fastest"));
}

typedef struct
{
  TomoFilterType filter;
  TomoPadMode pad;
} FilterCase;

static void
check_filter (TomoFilterType      filter,
              TomoPadMode         pad,
              TomoGpuFilterMethod method,
              guint               width,
              guint               n_proj,
              guint               n_slices)
{
  g_autoptr(GError) error = NULL;
  g_autofree double *angles = tomo_test_half_turn (n_proj);
  gsize plane = (gsize) n_proj * width;
  g_autofree float *sinos = phantom_sinos (width, n_proj, n_slices, 6, 16, angles);
  g_autofree float *gpu = g_new (float, n_slices * plane);
  g_autofree double *ref = g_new (double, plane);
  g_autoptr(TomoCpuFbp) fbp = tomo_cpu_fbp_new (width, n_proj, angles, filter, pad, 0);
  g_autoptr(TomoGpuContext) ctx = make_context (width, n_proj, angles, filter, pad);

  /* Noise on top of the phantom: also checks the high frequencies. */
  {
    g_autofree float *noise = random_sinos (n_slices * plane, 7 + filter);
    for (gsize i = 0; i < n_slices * plane; i++)
      sinos[i] += 0.05f * noise[i];
  }
  tomo_gpu_context_set_filter_method (ctx, method);
  g_assert_cmpint (tomo_gpu_context_get_filter_method (ctx), ==, method);
  g_assert_true (tomo_gpu_context_load_sinograms (ctx, n_slices, sinos, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_context_download_filtered (ctx, gpu, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (tomo_gpu_context_get_filter_ms (ctx), >, 0.0);

  for (guint s = 0; s < n_slices; s++)
    {
      double err;

      tomo_cpu_fbp_filter_double (fbp, sinos + s * plane, ref);
      err = rel_l2_fd (gpu + s * plane, ref, plane);
      g_test_message ("%s pad %d method %d slice %u: rel L2 %.3g",
                      tomo_filter_type_to_string (filter), pad, method, s, err);
      g_assert_cmpfloat (err, <=, 1e-5);
    }
}

static void
test_filter (gconstpointer data)
{
  const FilterCase *fc = data;

  REQUIRE_GPU ();
  /* Odd width and an odd number of rows: the last C2C pair has no partner. */
  check_filter (fc->filter, fc->pad, TOMO_GPU_FILTER_METHOD_C2C_PAIR, 257, 45, 1);
  check_filter (fc->filter, fc->pad, TOMO_GPU_FILTER_METHOD_R2C, 257, 45, 1);
  check_filter (fc->filter, fc->pad, TOMO_GPU_FILTER_METHOD_C2C_PAIR, 200, 31, 4);
}

static void
test_filter_methods_agree (void)
{
  g_autoptr(GError) error = NULL;
  const guint W = 512, N = 301;
  g_autofree double *angles = tomo_test_half_turn (N);
  g_autofree float *sinos = random_sinos (2 * W * N, 99);
  g_autofree float *a = g_new (float, 2 * W * N);
  g_autofree float *b = g_new (float, 2 * W * N);
  g_autoptr(TomoGpuContext) ctx = NULL;

  REQUIRE_GPU ();
  ctx = make_context (W, N, angles, TOMO_FILTER_SHEPP_LOGAN, TOMO_PAD_EDGE);
  tomo_gpu_context_set_filter_method (ctx, TOMO_GPU_FILTER_METHOD_C2C_PAIR);
  g_assert_true (tomo_gpu_context_load_sinograms (ctx, 2, sinos, &error));
  g_assert_true (tomo_gpu_context_download_filtered (ctx, a, &error));
  tomo_gpu_context_set_filter_method (ctx, TOMO_GPU_FILTER_METHOD_R2C);
  g_assert_true (tomo_gpu_context_load_sinograms (ctx, 2, sinos, &error));
  g_assert_true (tomo_gpu_context_download_filtered (ctx, b, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (tomo_test_rel_l2 (a, b, 2 * W * N), <=, 1e-6);
  /* And they differ from the input: the filter ran. */
  g_assert_cmpfloat (tomo_test_rel_l2 (a, sinos, 2 * W * N), >, 0.1);
}

typedef struct
{
  TomoGpuKernel kernel;
  int interp;
  double tolerance;
} SliceCase;

static void
test_slice (gconstpointer data)
{
  const SliceCase *sc = data;
  g_autoptr(GError) error = NULL;
  const guint W = 256, N = 180;
  const double center = (W - 1) / 2.0 + 3.37;
  g_autofree double *angles = tomo_test_half_turn (N);
  g_autofree float *sinos = NULL;
  g_autofree double *filt = g_new (double, (gsize) W * N);
  g_autofree double *ref = g_new (double, (gsize) W * W);
  g_autofree float *gpu = NULL;
  g_autoptr(TomoCpuFbp) fbp = NULL;
  TomoGpuBackprojectParams params;
  TomoRoi roi = { 0, 0, W, W };
  g_autoptr(TomoGpuContext) ctx = NULL;
  guint slice_counts[] = { 1, 2, 4 };

  REQUIRE_GPU ();
  sinos = phantom_sinos (W, N, 4, 5, 16, angles);
  gpu = g_new (float, 4 * (gsize) W * W);
  fbp = tomo_cpu_fbp_new (W, N, angles, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO, 0);
  ctx = make_context (W, N, angles, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO);
  tomo_gpu_backproject_params_init (&params);
  params.center = center;
  params.interp = sc->interp;
  params.kernel = sc->kernel;

  for (guint c = 0; c < G_N_ELEMENTS (slice_counts); c++)
    {
      guint n = slice_counts[c];
      gboolean ok;

      g_assert_true (tomo_gpu_context_load_sinograms (ctx, n, sinos, &error));
      g_assert_no_error (error);
      ok = tomo_gpu_context_backproject (ctx, &params, &error);
      if (!ok && g_error_matches (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID))
        {
          /* A kernel without this mode must say so, never run something else. */
          g_test_message ("%s: %s", tomo_gpu_kernel_to_string (sc->kernel), error->message);
          g_clear_error (&error);
          continue;
        }
      g_assert_no_error (error);
      g_assert_true (ok);
      g_assert_cmpfloat (tomo_gpu_context_get_backproject_ms (ctx), >, 0.0);
      if (sc->kernel != TOMO_GPU_KERNEL_AUTO)
        g_assert_cmpint (tomo_gpu_context_get_last_kernel (ctx), ==, sc->kernel);
      g_assert_true (tomo_gpu_context_download (ctx, gpu, &error));
      g_assert_no_error (error);
      for (guint s = 0; s < n; s++)
        {
          double err, tol = sc->tolerance;

          tomo_cpu_fbp_filter_double (fbp, sinos + s * (gsize) W * N, filt);
          tomo_cpu_fbp_backproject_double (fbp, filt, center, sc->interp, &roi, ref);
          err = rel_l2_fd (gpu + s * (gsize) W * W, ref, (gsize) W * W);
          /* Four slices at once may be kept in half precision. */
          if (n == 4 && tol < 1e-2 && tomo_gpu_context_get_last_kernel (ctx) != TOMO_GPU_KERNEL_ALU)
            tol = 1e-2;
          g_test_message ("%s %s %u slices, slice %u: rel L2 %.3g (≤ %.1g)",
                          tomo_gpu_kernel_to_string (tomo_gpu_context_get_last_kernel (ctx)),
                          sc->interp ? "linear" : "nearest", n, s, err, tol);
          g_assert_cmpfloat (err, <=, tol);
        }
    }
}

static void
test_cached_center (void)
{
  g_autoptr(GError) error = NULL;
  const guint W = 320, N = 200;
  g_autofree double *angles = tomo_test_half_turn (N);
  g_autofree float *sinos = NULL;
  g_autofree float *a = g_new (float, 2 * W * W);
  g_autofree float *b = g_new (float, 2 * W * W);
  g_autofree float *c = g_new (float, 2 * W * W);
  TomoGpuBackprojectParams params;
  g_autoptr(TomoGpuContext) ctx = NULL;
  TomoGpuBuffer *buf;

  REQUIRE_GPU ();
  sinos = phantom_sinos (W, N, 2, 7, 16, angles);
  ctx = make_context (W, N, angles, TOMO_FILTER_HANN, TOMO_PAD_EDGE);
  tomo_gpu_backproject_params_init (&params);
  params.kernel = TOMO_GPU_KERNEL_STANDARD;
  params.center = (W - 1) / 2.0 - 4.1;

  g_assert_true (tomo_gpu_context_load_sinograms (ctx, 2, sinos, &error));
  g_assert_true (tomo_gpu_context_backproject (ctx, &params, &error));
  g_assert_true (tomo_gpu_context_download (ctx, c, &error));
  buf = tomo_gpu_buffer_copy_output (ctx, &error);
  g_assert_no_error (error);
  g_assert_nonnull (buf);
  g_assert_cmpint (tomo_gpu_buffer_get_device (buf), ==, 0);

  /* Only the centre changes: back projection of the cached sinograms. */
  params.center = (W - 1) / 2.0 + 2.6;
  g_assert_true (tomo_gpu_context_backproject (ctx, &params, &error));
  g_assert_true (tomo_gpu_context_download (ctx, a, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (tomo_test_rel_l2 (a, c, 2 * W * W), >, 1e-3);

  g_assert_true (tomo_gpu_context_load_sinograms (ctx, 2, sinos, &error));
  g_assert_true (tomo_gpu_context_backproject (ctx, &params, &error));
  g_assert_true (tomo_gpu_context_download (ctx, b, &error));
  g_assert_no_error (error);
  g_assert_cmpint (memcmp (a, b, sizeof (float) * 2 * W * W), ==, 0);

  /* The copied buffer still holds the first result: a rectangle of its
   * second plane, one value, and refusals of what reaches outside. */
  g_assert_nonnull (tomo_gpu_buffer_get_data (buf));
  {
    const guint x0 = 17, y0 = 40, rw = 100, rh = 31;
    g_autofree float *rect = g_new (float, rw * rh);
    gsize at = (gsize) W * W + (gsize) y0 * W + x0;
    float v;

    g_assert_true (tomo_gpu_buffer_read_rect (buf, at, W, rw, rh, rect, &error));
    g_assert_no_error (error);
    for (guint y = 0; y < rh; y++)
      g_assert_cmpmem (rect + y * rw, rw * sizeof (float), c + at + (gsize) y * W,
                       rw * sizeof (float));
    g_assert_true (tomo_gpu_buffer_read_rect (buf, 2 * W * W - 1, 1, 1, 1, &v, &error));
    g_assert_cmpfloat (v, ==, c[2 * W * W - 1]);
    TOMO_TEST_ASSERT_FAILS (tomo_gpu_buffer_read_rect (buf, 2 * W * W, 1, 1, 1, &v, &error),
                            error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
    TOMO_TEST_ASSERT_FAILS (tomo_gpu_buffer_read_rect (buf, at, W, rw, W, rect, &error),
                            error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
    TOMO_TEST_ASSERT_FAILS (tomo_gpu_buffer_read_rect (buf, 0, 8, 9, 1, rect, &error),
                            error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  }
  tomo_gpu_buffer_free (buf);
}

typedef struct
{
  guint W, N, first;
  const float *sinos;
  float *out;
  guint next_row;
  gboolean in_order;
  guint progress_calls, last_done, total;
  volatile gint *cancel;
  guint cancel_after;
} VolumeData;

static gboolean
vol_read (guint row, float *sino, gpointer user_data, GError **error)
{
  VolumeData *vd = user_data;

  memcpy (sino, vd->sinos + (gsize) (row - vd->first) * vd->N * vd->W,
          sizeof (float) * vd->N * vd->W);
  return TRUE;
}

static gboolean
vol_write (guint row, const float *slice, gpointer user_data, GError **error)
{
  VolumeData *vd = user_data;

  if (row != vd->next_row)
    vd->in_order = FALSE;
  vd->next_row = row + 1;
  memcpy (vd->out + (gsize) (row - vd->first) * vd->W * vd->W, slice,
          sizeof (float) * vd->W * vd->W);
  return TRUE;
}

static void
vol_progress (guint done, guint total, gpointer user_data)
{
  VolumeData *vd = user_data;

  g_assert_cmpuint (done, >, vd->last_done);
  g_assert_cmpuint (done, <=, total);
  vd->progress_calls++;
  vd->last_done = done;
  vd->total = total;
  if (vd->cancel && done >= vd->cancel_after)
    g_atomic_int_set (vd->cancel, 1);
}

/* A volume job over vd's sinograms (vol_read, vol_write, vol_progress on
 * vd) with the filter response `resp` (tomo_filter_padded_width() of the
 * width) and default back projection parameters; the axis, the rows and
 * the rest are the caller's to set. */
static void
volume_job_init (TomoGpuVolumeJob *job,
                 VolumeData       *vd,
                 const double     *angles,
                 const double     *resp)
{
  *job = (TomoGpuVolumeJob) {
    .width = vd->W, .n_proj = vd->N, .angles = angles,
    .padded_width = tomo_filter_padded_width (vd->W), .response = resp,
    .read = vol_read, .write = vol_write, .progress = vol_progress, .user_data = vd,
  };
  tomo_gpu_backproject_params_init (&job->bp);
}

typedef struct
{
  TomoGpuKernel kernel;
  int interp;
  double tol;   /* against slice by slice */
} VolumeCase;

static void
test_volume (gconstpointer data)
{
  const VolumeCase *vc = data;
  g_autoptr(GError) error = NULL;
  const guint W = 256, N = 180, first = 3, rows = 61;  /* 61: last group partial */
  g_autofree double *angles = tomo_test_half_turn (N);
  g_autofree double *resp = NULL;
  g_autofree float *sinos = NULL;
  g_autofree float *vol = g_new0 (float, (gsize) rows * W * W);
  g_autofree float *one = g_new (float, (gsize) W * W);
  TomoGpuVolumeJob job;
  VolumeData vd;
  g_autoptr(TomoGpuContext) ctx = NULL;
  double worst = 0.0;

  REQUIRE_GPU ();
  resp = response_new (TOMO_FILTER_SHEPP_LOGAN, W, N);
  sinos = phantom_sinos (W, N, rows, first, 64, angles);
  vd = (VolumeData) { .W = W, .N = N, .first = first, .sinos = sinos, .out = vol,
                      .next_row = first, .in_order = TRUE };

  volume_job_init (&job, &vd, angles, resp);
  job.bp.center = (W - 1) / 2.0 + 3.37;
  job.pad_mode = TOMO_PAD_ZERO;
  job.bp.kernel = vc->kernel;
  job.bp.interp = vc->interp;
  job.row_start = first;
  job.row_end = first + rows;

  g_assert_true (tomo_gpu_reconstruct_volume (&job, &error));
  g_assert_no_error (error);
  g_assert_true (vd.in_order);
  g_assert_cmpuint (vd.next_row, ==, first + rows);
  g_assert_cmpuint (vd.progress_calls, >, 0);
  g_assert_cmpuint (vd.last_done, ==, rows);
  g_assert_cmpuint (vd.total, ==, rows);

  ctx = make_context (W, N, angles, TOMO_FILTER_SHEPP_LOGAN, TOMO_PAD_ZERO);
  for (guint r = 0; r < rows; r++)
    {
      double err;

      g_assert_true (tomo_gpu_context_load_sinograms (ctx, 1, sinos + (gsize) r * N * W, &error));
      g_assert_true (tomo_gpu_context_backproject (ctx, &job.bp, &error));
      g_assert_true (tomo_gpu_context_download (ctx, one, &error));
      g_assert_no_error (error);
      err = tomo_test_rel_l2 (vol + (gsize) r * W * W, one, (gsize) W * W);
      worst = MAX (worst, err);
    }
  g_test_message ("volume vs slice by slice: worst rel L2 %.3g", worst);
  g_assert_cmpfloat (worst, <=, vc->tol);
}

static void
test_volume_cancel (void)
{
  g_autoptr(GError) error = NULL;
  const guint W = 128, N = 90, rows = 40;
  g_autofree double *angles = tomo_test_half_turn (N);
  g_autofree double *resp = NULL;
  g_autofree float *sinos = NULL;
  g_autofree float *vol = g_new0 (float, (gsize) rows * W * W);
  volatile gint cancel = 0;
  TomoGpuVolumeJob job;
  VolumeData vd;

  REQUIRE_GPU ();
  resp = response_new (TOMO_FILTER_RAMLAK, W, N);
  sinos = random_sinos (rows * N * W, 3);
  vd = (VolumeData) { .W = W, .N = N, .sinos = sinos, .out = vol, .in_order = TRUE,
                      .cancel = &cancel, .cancel_after = 4 };

  volume_job_init (&job, &vd, angles, resp);
  job.bp.center = (W - 1) / 2.0;
  job.row_end = rows;
  job.cancel = &cancel;

  g_assert_false (tomo_gpu_reconstruct_volume (&job, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "cancel"));
  g_assert_true (vd.in_order);
  g_assert_cmpuint (vd.last_done, <, rows);
}

static void
test_out_of_memory (void)
{
  g_autoptr(GError) error = NULL;
  /* Four 100000² slices are 160 GB of floats: more than any GPU has, while
   * a row still fits a texture. */
  const guint W = 100000, N = 2;
  g_autofree double *angles = tomo_test_half_turn (N);
  g_autofree float *sinos = random_sinos (4 * N * W, 5);
  guint padded = tomo_filter_padded_width (W);
  g_autofree double *resp = NULL;
  TomoGpuBackprojectParams params;
  g_autoptr(TomoGpuContext) ctx = NULL;
  gboolean ok;

  REQUIRE_GPU ();
  /* Seconds of direct summation at this width: only where the test runs. */
  resp = response_new (TOMO_FILTER_RAMLAK, W, N);
  ctx = tomo_gpu_context_new (0, &error);
  g_assert_no_error (error);
  tomo_gpu_backproject_params_init (&params);
  params.center = W / 2.0;
  ok = tomo_gpu_context_set_geometry (ctx, W, N, angles, &error) &&
       tomo_gpu_context_set_filter (ctx, padded, resp, 0, &error) &&
       tomo_gpu_context_load_sinograms (ctx, 4, sinos, &error) &&
       tomo_gpu_context_backproject (ctx, &params, &error);
  g_assert_false (ok);
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY);
  g_test_message ("%s", error->message);
  g_clear_error (&error);

  /* The context is still usable. */
  {
    const guint w = 64, n = 30;
    g_autofree double *ang = tomo_test_half_turn (n);
    g_autofree float *s = random_sinos (n * w, 6);
    g_autofree float *out = g_new (float, w * w);
    g_autofree double *r = response_new (TOMO_FILTER_RAMLAK, w, n);

    params.center = (w - 1) / 2.0;
    g_assert_true (tomo_gpu_context_set_geometry (ctx, w, n, ang, &error));
    g_assert_true (tomo_gpu_context_set_filter (ctx, tomo_filter_padded_width (w), r, 0, &error));
    g_assert_true (tomo_gpu_context_load_sinograms (ctx, 1, s, &error));
    g_assert_true (tomo_gpu_context_backproject (ctx, &params, &error));
    g_assert_true (tomo_gpu_context_download (ctx, out, &error));
    g_assert_no_error (error);
    tomo_test_assert_finite (out, (gsize) w * w);
  }
}

static void
test_invalid (void)
{
  g_autoptr(GError) error = NULL;
  const guint W = 64, N = 16;
  g_autofree double *angles = tomo_test_half_turn (N);
  g_autofree float *sinos = random_sinos (4 * N * W, 8);
  TomoGpuBackprojectParams params;
  g_autoptr(TomoGpuContext) ctx = NULL;

  REQUIRE_GPU ();
  ctx = tomo_gpu_context_new (0, &error);
  g_assert_no_error (error);

  TOMO_TEST_ASSERT_FAILS (tomo_gpu_context_set_geometry (ctx, 0, N, angles, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  TOMO_TEST_ASSERT_FAILS (tomo_gpu_context_load_sinograms (ctx, 1, sinos, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  tomo_gpu_context_free (ctx);

  ctx = make_context (W, N, angles, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO);
  g_assert_false (tomo_gpu_context_load_sinograms (ctx, 3, sinos, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "3"));
  g_clear_error (&error);
  TOMO_TEST_ASSERT_FAILS (tomo_gpu_context_set_filter (ctx, W, NULL, 0, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);

  tomo_gpu_backproject_params_init (&params);
  g_assert_true (tomo_gpu_context_load_sinograms (ctx, 1, sinos, &error));
  params.roi_x = 60;
  params.roi_width = 10;
  params.roi_height = 10;
  TOMO_TEST_ASSERT_FAILS (tomo_gpu_context_backproject (ctx, &params, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  params.roi_width = 0;
  params.center = NAN;
  TOMO_TEST_ASSERT_FAILS (tomo_gpu_context_backproject (ctx, &params, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
}

/* Statistics on the device are the host function's on the same values:
 * extremes, percentiles, counts and bins identical, the mean to 1e-9 of
 * the value range (summation order).  Cases: a slice of noise (1 and 4
 * planes, an ROI), a constant slice, a slice with NaN and ±Inf streaks, one
 * without a finite value, and one where only the 12 outermost detector
 * columns are non-zero (and positive): no ray through the inner disc of
 * radius 120 px touches them, so about 70 % of the pixels are exactly 0, the
 * minimum, and both low percentiles fall in that one crowded bin. */
static void
assert_same_stats (const TomoGpuStats   *g,
                   const TomoSliceStats *h)
{
  g_assert_cmpint (g->valid, ==, h->valid);
  g_assert_cmpuint (g->n_finite, ==, h->n_finite);
  if (!h->valid)
    return;
  g_assert_cmpfloat (g->min, ==, h->min);
  g_assert_cmpfloat (g->max, ==, h->max);
  g_assert_cmpfloat (g->lo, ==, h->lo);
  g_assert_cmpfloat (g->hi, ==, h->hi);
  g_assert_cmpfloat (g->range_lo, ==, h->range_lo);
  g_assert_cmpfloat (g->range_hi, ==, h->range_hi);
  g_assert_cmpfloat_with_epsilon (g->mean, h->mean, 1e-9 * MAX (h->max - h->min, 1e-30));
  g_assert_cmpmem (g->bins, sizeof g->bins, h->bins, sizeof h->bins);
}

static void
test_stats (void)
{
  const guint W = 256, N = 90;
  g_autofree double *angles = tomo_test_half_turn (N);
  g_autofree float *sinos = random_sinos (4 * N * W, 11);
  g_autofree float *out = g_new (float, 4 * W * W);
  g_autoptr(GError) error = NULL;
  TomoGpuBackprojectParams params;
  g_autoptr(TomoGpuContext) ctx = NULL;
  TomoGpuStats g;
  TomoSliceStats h;
  double scores[4];
  struct { guint n_slices; guint roi_w, roi_h; int fill; } cases[] = {
    { 1, 0, 0, 0 },     /* noise */
    { 4, 0, 0, 0 },
    { 1, 100, 60, 0 },
    { 1, 0, 0, 1 },     /* constant */
    { 2, 0, 0, 2 },     /* NaN and ±Inf streaks */
    { 1, 0, 0, 3 },     /* no finite value */
    { 2, 0, 0, 4 },     /* mostly zeros: the low percentiles in one crowded bin */
  };

  REQUIRE_GPU ();
  ctx = make_context (W, N, angles, TOMO_FILTER_RAMLAK, TOMO_PAD_EDGE);
  TOMO_TEST_ASSERT_FAILS (tomo_gpu_context_stats (ctx, &g, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  TOMO_TEST_ASSERT_FAILS (tomo_gpu_context_negativity (ctx, scores, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree float *in = g_memdup2 (sinos, (gsize) 4 * N * W * sizeof (float));
      gsize n;

      for (gsize i = 0; i < (gsize) cases[c].n_slices * N * W; i++)
        {
          if (cases[c].fill == 1)
            in[i] = 0.0f;
          else if (cases[c].fill == 3)
            in[i] = NAN;
          else if (cases[c].fill == 4)
            in[i] = (i % W >= 250 || i % W < 6) ? in[i] * 40.0f : 0.0f;
          else if (cases[c].fill == 2 && i % W == 7 && (i / W) % N == 3)
            in[i] = NAN;
          else if (cases[c].fill == 2 && i % W == 200 && (i / W) % N == 50)
            in[i] = (i / W / N) % 2 ? INFINITY : -INFINITY;
          else
            in[i] -= 1.0f;    /* negative values too */
        }
      g_assert_true (tomo_gpu_context_load_filtered (ctx, cases[c].n_slices, in, &error));
      g_assert_no_error (error);
      tomo_gpu_backproject_params_init (&params);
      params.center = (W - 1) / 2.0 + 0.3;
      params.roi_x = cases[c].roi_w ? 20 : 0;
      params.roi_y = cases[c].roi_w ? 30 : 0;
      params.roi_width = cases[c].roi_w;
      params.roi_height = cases[c].roi_h;
      g_assert_true (tomo_gpu_context_backproject (ctx, &params, &error));
      g_assert_no_error (error);
      g_assert_true (tomo_gpu_context_stats (ctx, &g, &error));
      g_assert_no_error (error);
      g_assert_true (tomo_gpu_context_download (ctx, out, &error));
      g_assert_no_error (error);
      n = (gsize) cases[c].n_slices * (cases[c].roi_w ? cases[c].roi_w * cases[c].roi_h : W * W);
      tomo_slice_stats_compute (out, n, &h);
      g_test_message ("case %u: %" G_GUINT64_FORMAT " finite of %" G_GSIZE_FORMAT
                      ", [%g, %g], window [%g, %g]", c, h.n_finite, n, h.min, h.max, h.lo, h.hi);
      if (cases[c].fill == 2)
        g_assert_cmpuint (h.n_finite, <, n);
      if (cases[c].fill == 3)
        g_assert_false (h.valid);
      if (cases[c].fill == 1)
        g_assert_cmpfloat (h.min, ==, h.max);
      assert_same_stats (&g, &h);
      /* The sweep's score of each plane: the host's, summed in another
       * order; non-finite values passed over, 0 with none finite. */
      g_assert_true (tomo_gpu_context_negativity (ctx, scores, &error));
      g_assert_no_error (error);
      for (guint s = 0; s < cases[c].n_slices; s++)
        {
          guint pw = cases[c].roi_w ? cases[c].roi_w : W, ph = cases[c].roi_w ? cases[c].roi_h : W;
          double want = tomo_center_negativity (out + (gsize) s * pw * ph, pw, ph);

          g_assert_true (isfinite (scores[s]));
          g_assert_cmpfloat (fabs (scores[s] - want), <=, 1e-9 * want);
          if (cases[c].fill == 0 || cases[c].fill == 2)
            g_assert_cmpfloat (want, >, 0.1);
          if (cases[c].fill == 3)
            g_assert_cmpfloat (want, ==, 0.0);
        }
      if (cases[c].fill == 4)
        {
          g_assert_cmpfloat (h.min, ==, 0.0f);
          g_assert_cmpfloat (h.lo, ==, h.range_lo);
          g_assert_cmpuint (h.bins[0], >, h.n_finite * 6 / 10);
        }
    }
}

int
main (int    argc,
      char **argv)
{
  static FilterCase filter_cases[TOMO_N_FILTERS * 2];
  static const SliceCase slice_cases[] = {
    { TOMO_GPU_KERNEL_STANDARD, 1, 3e-3 },
    { TOMO_GPU_KERNEL_STANDARD, 0, 3e-3 },
    { TOMO_GPU_KERNEL_TEXTURE, 1, 3e-3 },
    { TOMO_GPU_KERNEL_TEXTURE, 0, 3e-3 },
    { TOMO_GPU_KERNEL_ALU, 1, 1e-5 },
    /* Nearest: where t lands within rounding of a bin boundary, float and
     * double pick neighbouring bins — measured ~1e-4 even on the FP units. */
    { TOMO_GPU_KERNEL_ALU, 0, 3e-3 },
    { TOMO_GPU_KERNEL_HYBRID, 1, 3e-3 },
    { TOMO_GPU_KERNEL_HYBRID, 0, 3e-3 },
    { TOMO_GPU_KERNEL_AUTO, 1, 3e-3 },
    { TOMO_GPU_KERNEL_AUTO, 0, 3e-3 },
  };

  static const VolumeCase volume_cases[] = {
    { TOMO_GPU_KERNEL_STANDARD, 1, 1e-5 },
    { TOMO_GPU_KERNEL_ALU, 0, 1e-5 },
    /* four slices in halves (the hybrid's half4 texture and half cache)
     * against one slice in floats */
    { TOMO_GPU_KERNEL_AUTO, 1, 1e-2 },
  };

  g_test_init (&argc, &argv, NULL);
  n_devices = tomo_gpu_get_n_devices ();

  g_test_add_func ("/tomo/gpu/no-device", test_no_device);
  for (int f = 0; f < TOMO_N_FILTERS; f++)
    for (int p = 0; p < 2; p++)
      {
        FilterCase *fc = &filter_cases[f * 2 + p];
        g_autofree char *path = NULL;

        fc->filter = f;
        fc->pad = p;
        path = g_strdup_printf ("/tomo/gpu/filter/%s/%s", tomo_filter_type_to_string (f),
                                p ? "edge" : "zero");
        g_test_add_data_func (path, fc, test_filter);
      }
  g_test_add_func ("/tomo/gpu/filter/c2c-pair-vs-r2c", test_filter_methods_agree);
  for (guint i = 0; i < G_N_ELEMENTS (slice_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/tomo/gpu/slice/%s/%s",
                                               tomo_gpu_kernel_to_string (slice_cases[i].kernel),
                                               slice_cases[i].interp ? "linear" : "nearest");
      g_test_add_data_func (path, &slice_cases[i], test_slice);
    }
  g_test_add_func ("/tomo/gpu/slice/cached-centre", test_cached_center);
  /* Two slices per pass (standard), four per pass (the others). */
  g_test_add_data_func ("/tomo/gpu/volume/standard-linear", &volume_cases[0], test_volume);
  g_test_add_data_func ("/tomo/gpu/volume/alu-nearest", &volume_cases[1], test_volume);
  g_test_add_data_func ("/tomo/gpu/volume/auto-linear", &volume_cases[2], test_volume);
  g_test_add_func ("/tomo/gpu/volume/cancel", test_volume_cancel);
  g_test_add_func ("/tomo/gpu/out-of-memory", test_out_of_memory);
  g_test_add_func ("/tomo/gpu/invalid", test_invalid);
  g_test_add_func ("/tomo/gpu/stats", test_stats);

  return g_test_run ();
}
