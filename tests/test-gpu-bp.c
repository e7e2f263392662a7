/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-test"

#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "tomo-fbp.h"
#include "tomo-phantom.h"
#include "tomo-test-util.h"

#if HAVE_CUDA
#include <cuda_runtime.h>

#include "tomo-gpu-bp.h"
#endif

static char skip_reason[256] = "no CUDA device: tomolive was built without CUDA";

#if HAVE_CUDA
static gboolean have_device;

typedef enum { DATA_RANDOM, DATA_PHANTOM } DataKind;

typedef struct
{
  const char *name;
  guint width, n_proj;
  double center;
  gboolean full_circle;   /* angles at random over 2π instead of even over π */
  guint roi_x, roi_y, roi_w, roi_h;
  DataKind data;
} Case;

static const Case cases[] = {
  { "w1-p1", 1, 1, 0.0, TRUE, 0, 0, 0, 0, DATA_RANDOM },
  { "w1-p7", 1, 7, 0.0, TRUE, 0, 0, 0, 0, DATA_RANDOM },
  { "w257-p7", 257, 7, 128.37, TRUE, 0, 0, 0, 0, DATA_RANDOM },
  { "w65-p5000", 65, 5000, 32.6, FALSE, 0, 0, 0, 0, DATA_RANDOM },
  { "w1001-p37-roi", 1001, 37, 499.71, TRUE, 13, 77, 333, 290, DATA_RANDOM },
  { "w130-p31-center0", 130, 31, 0.0, TRUE, 0, 0, 0, 0, DATA_RANDOM },
  { "w130-p31-center129", 130, 31, 129.0, TRUE, 0, 0, 0, 0, DATA_RANDOM },
  { "w256-p16-integer-center", 256, 16, 128.0, FALSE, 0, 0, 0, 0, DATA_RANDOM },
  { "phantom-w255-p90", 255, 90, 127.37, FALSE, 0, 0, 0, 0, DATA_PHANTOM },
  { "w4097-p3", 4097, 3, 2047.8, TRUE, 0, 0, 0, 0, DATA_RANDOM },
  /* ≥ 1024² pixels: the 64×64 tiles, over many full and one partial pass,
   * tiles that reach past the detector and past the ROI. */
  { "w1100-p100-roi", 1100, 100, 551.3, TRUE, 30, 20, 1040, 1030, DATA_RANDOM },
};

typedef struct
{
  TomoGpuKernel kernel;
  guint n_slices;
  int interp;
  gboolean half;
  const Case *c;
  int variant;   /* tomo_bp_set_variant() for this test; -1: the default */
} BpTest;

static const char *
kernel_name (TomoGpuKernel k)
{
  static const char *const names[] = { "auto", "standard", "texture", "alu", "hybrid" };
  return names[k];
}

#define CUDA_OK(call)                                                        \
  G_STMT_START {                                                             \
    cudaError_t _r = (call);                                                 \
    if (_r != cudaSuccess)                                                   \
      g_error ("%s: %s", #call, cudaGetErrorString (_r));                    \
  } G_STMT_END

static double *
make_angles (const Case *c, GRand *rand)
{
  double *a = g_new (double, c->n_proj);

  for (guint p = 0; p < c->n_proj; p++)
    a[p] = c->full_circle ? g_rand_double_range (rand, 0, 2 * G_PI) : G_PI * p / c->n_proj;
  return a;
}

/* n_slices planes of n_proj × width; phantom slices are the same line
 * integrals at different scales and signs. */
static float *
make_sinograms (const Case *c, guint n_slices, const double *angles, GRand *rand)
{
  const gsize plane = (gsize) c->n_proj * c->width;
  float *s = g_new (float, plane * n_slices);

  if (c->data == DATA_PHANTOM)
    {
      TomoPhantomParams pp;
      g_autofree double *d = g_new (double, plane);
      static const double scale[4] = { 1.0, -0.5, 2.0, 0.25 };

      tomo_phantom_params_init (&pp);
      pp.kind = TOMO_PHANTOM_SHEPP_LOGAN;
      pp.width = c->width;
      pp.height = 8;
      pp.n_proj = c->n_proj;
      pp.center = c->center;
      tomo_phantom_sinogram (&pp, angles, 4, d);
      for (guint k = 0; k < n_slices; k++)
        for (gsize i = 0; i < plane; i++)
          s[k * plane + i] = (float) (scale[k] * d[i]);
    }
  else
    {
      for (gsize i = 0; i < plane * n_slices; i++)
        s[i] = (float) g_rand_double_range (rand, -1.0, 1.0);
    }
  return s;
}

/* For nearest: the sum, per pixel, of |value at the other candidate bin −
 * value at floor(t + 0.5)| over the projections where t + 0.5 lies within
 * `delta` of a bin edge, i.e. where float and double positions may round to
 * different bins.  Errors up to this bound are rounding, not bugs. */
static void
nearest_allowance (const Case *c, const TomoRoi *roi, const double *angles,
                   const double *filtered, double delta, double *allow)
{
  const double h = (c->width - 1) / 2.0;
  const int w = c->width;

  memset (allow, 0, sizeof (double) * roi->width * roi->height);
  for (guint p = 0; p < c->n_proj; p++)
    {
      const double cs = cos (angles[p]), sn = sin (angles[p]);
      const double *row = filtered + (gsize) p * w;

      for (guint j = 0; j < roi->height; j++)
        {
          const double y = roi->y + j - h;

          for (guint i = 0; i < roi->width; i++)
            {
              const double x = roi->x + i - h;
              const double u = x * cs - y * sn + c->center + 0.5;
              const double k = floor (u);
              const double fr = u - k;
              double alt;

              if (fr < delta)
                alt = k - 1;
              else if (fr > 1 - delta)
                alt = k + 1;
              else
                continue;
              double v0 = (k >= 0 && k < w) ? row[(gsize) k] : 0.0;
              double v1 = (alt >= 0 && alt < w) ? row[(gsize) alt] : 0.0;
              allow[(gsize) j * roi->width + i] += fabs (v1 - v0);
            }
        }
    }
}

static double
tolerance (const BpTest *t,
           TomoGpuKernel used)
{
  gboolean half = t->half || (t->n_slices == 4 && used != TOMO_GPU_KERNEL_ALU);

  if (half)
    return 1e-2;
  if (t->interp == 1 && used != TOMO_GPU_KERNEL_ALU)
    return 3e-3;   /* the texture unit's 8-bit interpolation weights */
  return 1e-5;
}

#define GUARD 4096
#define GUARD_BYTE 0xAB

/* Uploads, back projects with the poisoned output, downloads; checks that
 * nothing past the output was touched.  Returns host output. */
static float *
gpu_run (TomoBp *bp, const Case *c, guint n_slices, const float *sino, const double *angles,
         const TomoGpuBackprojectParams *params, guint out_w, guint out_h, TomoGpuKernel *used)
{
  g_autoptr (GError) error = NULL;
  const gsize plane = (gsize) c->n_proj * c->width;
  const gsize out_len = (gsize) out_w * out_h * n_slices;
  float *d_sino = NULL, *d_out = NULL;
  float *host = g_new (float, out_len);
  guint8 guard[GUARD];

  CUDA_OK (cudaMalloc ((void **) &d_sino, plane * n_slices * sizeof (float)));
  CUDA_OK (cudaMalloc ((void **) &d_out, out_len * sizeof (float) + GUARD));
  CUDA_OK (cudaMemcpy (d_sino, sino, plane * n_slices * sizeof (float), cudaMemcpyHostToDevice));
  /* All-ones bytes are a NaN: every pixel the kernel forgets stays NaN. */
  CUDA_OK (cudaMemset (d_out, 0xFF, out_len * sizeof (float)));
  CUDA_OK (cudaMemset ((char *) d_out + out_len * sizeof (float), GUARD_BYTE, GUARD));

  g_assert_true (tomo_bp_set_geometry (bp, c->width, c->n_proj, angles, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_bp_set_sinograms (bp, d_sino, n_slices, 0, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_bp_run (bp, params, d_out, 0, used, &error));
  g_assert_no_error (error);
  CUDA_OK (cudaDeviceSynchronize ());
  CUDA_OK (cudaMemcpy (host, d_out, out_len * sizeof (float), cudaMemcpyDeviceToHost));
  CUDA_OK (cudaMemcpy (guard, (char *) d_out + out_len * sizeof (float), GUARD, cudaMemcpyDeviceToHost));
  for (guint i = 0; i < GUARD; i++)
    if (guard[i] != GUARD_BYTE)
      g_error ("byte %u after the output was overwritten", i);
  CUDA_OK (cudaFree (d_sino));
  CUDA_OK (cudaFree (d_out));
  return host;
}

static void
init_params (TomoGpuBackprojectParams *p, const BpTest *t)
{
  memset (p, 0, sizeof *p);
  p->center = t->c->center;
  p->interp = t->interp;
  p->kernel = t->kernel;
  p->roi_x = t->c->roi_x;
  p->roi_y = t->c->roi_y;
  p->roi_width = t->c->roi_w;
  p->roi_height = t->c->roi_h;
  p->half_cache = t->half;
  p->hybrid_ratio = 0.f;
}

static void
test_against_reference (gconstpointer data)
{
  const BpTest *t = data;
  const Case *c = t->c;
  g_autoptr (GError) error = NULL;
  g_autoptr (GRand) rand = NULL;
  g_autofree double *angles = NULL;
  g_autofree float *sino = NULL;
  g_autofree float *out = NULL;
  g_autofree double *filtered = NULL;
  g_autofree double *ref = NULL;
  g_autofree double *allow = NULL;
  g_autoptr (TomoCpuFbp) fbp = NULL;
  TomoGpuBackprojectParams params;
  TomoGpuKernel used = TOMO_GPU_KERNEL_AUTO;
  TomoBp *bp;
  TomoRoi roi;
  double err2 = 0, ref2 = 0, tol, delta;
  const gsize plane = (gsize) c->n_proj * c->width;

  if (!have_device)
    {
      g_test_skip (skip_reason);
      return;
    }
  rand = g_rand_new_with_seed (0x5eed + c->width * 31 + c->n_proj);
  angles = make_angles (c, rand);
  sino = make_sinograms (c, t->n_slices, angles, rand);
  roi = (TomoRoi) { c->roi_x, c->roi_y, c->roi_w, c->roi_h };
  if (roi.width == 0)
    roi = (TomoRoi) { 0, 0, c->width, c->width };

  bp = tomo_bp_new (0, &error);
  g_assert_no_error (error);
  init_params (&params, t);
  if (t->variant >= 0)
    tomo_bp_set_variant (t->variant);
  out = gpu_run (bp, c, t->n_slices, sino, angles, &params, roi.width, roi.height, &used);
  tomo_bp_set_variant (-1);
  if (t->kernel == TOMO_GPU_KERNEL_AUTO)
    g_assert_true (used != TOMO_GPU_KERNEL_AUTO && tomo_bp_supports (used, t->n_slices, t->interp));
  else
    g_assert_cmpint (used, ==, t->kernel);
  tomo_bp_free (bp);

  fbp = tomo_cpu_fbp_new (c->width, c->n_proj, angles, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO, 0);
  filtered = g_new (double, plane);
  ref = g_new (double, (gsize) roi.width * roi.height);
  allow = g_new0 (double, (gsize) roi.width * roi.height);
  tol = tolerance (t, used);
  /* Bound on the GPU's position error near the magnitude of t. */
  delta = 1e-6 + 1e-6 * (c->width + fabs (c->center));

  for (guint s = 0; s < t->n_slices; s++)
    {
      const float *o = out + (gsize) s * roi.width * roi.height;

      for (gsize i = 0; i < plane; i++)
        filtered[i] = sino[s * plane + i];
      tomo_cpu_fbp_backproject_double (fbp, filtered, c->center, (TomoInterp) t->interp, &roi, ref);
      if (t->interp == 0)
        nearest_allowance (c, &roi, angles, filtered, delta, allow);
      for (gsize i = 0; i < (gsize) roi.width * roi.height; i++)
        {
          double e;

          if (!isfinite (o[i]))
            g_error ("slice %u pixel %" G_GSIZE_FORMAT " (x %u, y %u) is %g: not written or not finite",
                     s, i, (guint) (i % roi.width), (guint) (i / roi.width), o[i]);
          e = fabs (o[i] - ref[i]) - allow[i];
          if (e > 0)
            err2 += e * e;
          ref2 += ref[i] * ref[i];
        }
    }
  g_assert_cmpfloat (ref2, >, 0.0);
  g_test_message ("%s (%s) %u-slice %s%s %s: relative L2 error %.3g (tolerance %.g)",
                  kernel_name (t->kernel), kernel_name (used), t->n_slices, t->interp ? "linear" : "nearest",
                  t->half ? " half" : "", c->name, sqrt (err2 / ref2), tol);
  g_assert_cmpfloat (sqrt (err2 / ref2), <=, tol);
}

/* The hybrid with every block on the ALU path must be the ALU kernel. */
static void
test_hybrid_all_alu (void)
{
  const Case *c = &cases[4];
  g_autoptr (GRand) rand = NULL;
  g_autofree double *angles = NULL;
  g_autofree float *sino = NULL;
  g_autofree float *a = NULL, *h = NULL, *h_tex = NULL;
  g_autoptr (GError) error = NULL;
  TomoGpuBackprojectParams params;
  BpTest t = { TOMO_GPU_KERNEL_ALU, 2, 1, FALSE, c, -1 };
  TomoBp *bp;
  gsize n = (gsize) c->roi_w * c->roi_h * 2;

  if (!have_device)
    {
      g_test_skip (skip_reason);
      return;
    }
  rand = g_rand_new_with_seed (7);
  angles = make_angles (c, rand);
  sino = make_sinograms (c, 2, angles, rand);
  bp = tomo_bp_new (0, &error);
  g_assert_no_error (error);
  init_params (&params, &t);
  a = gpu_run (bp, c, 2, sino, angles, &params, c->roi_w, c->roi_h, NULL);
  params.kernel = TOMO_GPU_KERNEL_HYBRID;
  params.hybrid_ratio = 1.0f;
  h = gpu_run (bp, c, 2, sino, angles, &params, c->roi_w, c->roi_h, NULL);
  g_assert_cmpmem (a, n * sizeof (float), h, n * sizeof (float));
  /* And some blocks on the texture path change the result (8-bit weights). */
  params.hybrid_ratio = 0.5f;
  h_tex = gpu_run (bp, c, 2, sino, angles, &params, c->roi_w, c->roi_h, NULL);
  g_assert_true (memcmp (a, h_tex, n * sizeof (float)) != 0);
  tomo_bp_free (bp);
}

static void
test_errors (void)
{
  g_autoptr (GError) error = NULL;
  TomoGpuBackprojectParams params;
  double angles[4] = { 0, 0.5, 1.0, 1.5 };
  float *d_sino = NULL, *d_out = NULL;
  TomoBp *bp;

  if (!have_device)
    {
      g_test_skip (skip_reason);
      return;
    }
  TOMO_TEST_ASSERT_FAILS (tomo_bp_new (999, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE);

  bp = tomo_bp_new (0, &error);
  g_assert_no_error (error);
  CUDA_OK (cudaMalloc ((void **) &d_sino, 4 * 8 * 4 * sizeof (float)));
  CUDA_OK (cudaMemset (d_sino, 0, 4 * 8 * 4 * sizeof (float)));
  CUDA_OK (cudaMalloc ((void **) &d_out, 4 * 8 * 8 * sizeof (float)));

  TOMO_TEST_ASSERT_FAILS (tomo_bp_set_sinograms (bp, d_sino, 1, 0, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  TOMO_TEST_ASSERT_FAILS (tomo_bp_set_geometry (bp, 8, 0, angles, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  angles[2] = NAN;
  g_assert_false (tomo_bp_set_geometry (bp, 8, 4, angles, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "angle 2"));
  g_clear_error (&error);
  angles[2] = 1.0;
  g_assert_true (tomo_bp_set_geometry (bp, 8, 4, angles, &error));
  g_assert_no_error (error);

  memset (&params, 0, sizeof params);
  params.center = 3.5;
  params.interp = 1;
  params.kernel = TOMO_GPU_KERNEL_ALU;
  TOMO_TEST_ASSERT_FAILS (tomo_bp_run (bp, &params, d_out, 0, NULL, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);

  TOMO_TEST_ASSERT_FAILS (tomo_bp_set_sinograms (bp, d_sino, 3, 0, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_true (tomo_bp_set_sinograms (bp, d_sino, 4, 0, &error));
  g_assert_no_error (error);

  params.kernel = TOMO_GPU_KERNEL_STANDARD;
  TOMO_TEST_ASSERT_FAILS (tomo_bp_run (bp, &params, d_out, 0, NULL, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  params.kernel = TOMO_GPU_KERNEL_ALU;
  params.roi_x = 5;
  params.roi_width = 4;
  params.roi_height = 2;
  g_assert_false (tomo_bp_run (bp, &params, d_out, 0, NULL, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "ROI 5,0,4,2"));
  g_clear_error (&error);
  params.roi_x = 0;
  params.center = NAN;
  TOMO_TEST_ASSERT_FAILS (tomo_bp_run (bp, &params, d_out, 0, NULL, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  params.center = 3.5;
  params.interp = 7;
  TOMO_TEST_ASSERT_FAILS (tomo_bp_run (bp, &params, d_out, 0, NULL, &error),
                          error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  params.interp = 0;
  g_assert_true (tomo_bp_run (bp, &params, d_out, 0, NULL, &error));
  g_assert_no_error (error);

  g_assert_true (tomo_bp_supports (TOMO_GPU_KERNEL_TEXTURE, 4, 0));
  g_assert_true (tomo_bp_supports (TOMO_GPU_KERNEL_TEXTURE, 4, 1));
  g_assert_true (tomo_bp_supports (TOMO_GPU_KERNEL_HYBRID, 4, 1));
  g_assert_false (tomo_bp_supports (TOMO_GPU_KERNEL_STANDARD, 4, 0));
  g_assert_false (tomo_bp_supports (TOMO_GPU_KERNEL_ALU, 3, 0));
  tomo_bp_free (bp);
  CUDA_OK (cudaFree (d_sino));
  CUDA_OK (cudaFree (d_out));
}

/* Median of 20 timings (sorts them). */
static double
median20 (float *ms)
{
  for (int a = 0; a < 20; a++)
    for (int b = a + 1; b < 20; b++)
      if (ms[b] < ms[a])
        {
          float x = ms[a];
          ms[a] = ms[b];
          ms[b] = x;
        }
  return (ms[9] + ms[10]) / 2;
}

/* Median of 20 timed back projections after one warm-up. */
static double
time_run (TomoBp                         *bp,
          const TomoGpuBackprojectParams *params,
          float                          *d_out,
          cudaEvent_t                     e0,
          cudaEvent_t                     e1)
{
  g_autoptr (GError) error = NULL;
  float ms[20];

  g_assert_true (tomo_bp_run (bp, params, d_out, 0, NULL, &error));
  for (int r = 0; r < 20; r++)
    {
      CUDA_OK (cudaEventRecord (e0, 0));
      g_assert_true (tomo_bp_run (bp, params, d_out, 0, NULL, &error));
      CUDA_OK (cudaEventRecord (e1, 0));
      CUDA_OK (cudaEventSynchronize (e1));
      CUDA_OK (cudaEventElapsedTime (&ms[r], e0, e1));
    }
  return median20 (ms);
}

/* What the timing runs share: 4 random sinograms of W × P columns on the
 * device, room for 4 slices of W², two events and a TomoBp with the
 * geometry (P angles over π) set. */
typedef struct
{
  float *d_sino, *d_out;
  cudaEvent_t e0, e1;
  TomoBp *bp;
} Timing;

/* FALSE (and the reason printed) without a device. */
static gboolean
timing_init (Timing *t,
             guint   W,
             guint   P)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (1);
  g_autofree double *angles = g_new (double, P);
  g_autofree float *sino = g_new (float, (gsize) W * P * 4);
  g_autoptr (GError) error = NULL;

  if (!have_device)
    {
      g_print ("%s\n", skip_reason);
      return FALSE;
    }
  for (guint p = 0; p < P; p++)
    angles[p] = G_PI * p / P;
  for (gsize i = 0; i < (gsize) W * P * 4; i++)
    sino[i] = (float) g_rand_double_range (rand, -1, 1);
  CUDA_OK (cudaMalloc ((void **) &t->d_sino, (gsize) W * P * 4 * sizeof (float)));
  CUDA_OK (cudaMalloc ((void **) &t->d_out, (gsize) W * W * 4 * sizeof (float)));
  CUDA_OK (cudaMemcpy (t->d_sino, sino, (gsize) W * P * 4 * sizeof (float), cudaMemcpyHostToDevice));
  CUDA_OK (cudaEventCreate (&t->e0));
  CUDA_OK (cudaEventCreate (&t->e1));
  t->bp = tomo_bp_new (0, &error);
  g_assert_no_error (error);
  g_assert_true (tomo_bp_set_geometry (t->bp, W, P, angles, &error));
  return TRUE;
}

static void
timing_clear (Timing *t)
{
  tomo_bp_free (t->bp);
  CUDA_OK (cudaFree (t->d_sino));
  CUDA_OK (cudaFree (t->d_out));
  CUDA_OK (cudaEventDestroy (t->e0));
  CUDA_OK (cudaEventDestroy (t->e1));
}

/* --timing: GU/s at 2048² × 2048 projections, median of 20 launches. */
static int
run_timing (void)
{
  const guint W = 2048, P = 2048;
  g_autoptr (GError) error = NULL;
  Timing t;

  if (!timing_init (&t, W, P))
    return 0;

  static const guint slices[] = { 1, 2, 4 };
  static const float ratios[] = { 0.f, 0.25f, 0.3125f, 0.375f, 0.4375f, 0.5f, 0.625f, 0.75f, 0.8125f,
                                  0.875f, 0.9375f };
  for (guint si = 0; si < 3; si++)
    {
      const guint S = slices[si];

      g_assert_true (tomo_bp_set_sinograms (t.bp, t.d_sino, S, 0, &error));
      for (int interp = 1; interp >= 0; interp--)
        for (int k = TOMO_GPU_KERNEL_STANDARD; k < TOMO_GPU_N_KERNELS; k++)
          for (int half = 0; half < 2; half++)
            for (guint ri = 0; ri < G_N_ELEMENTS (ratios); ri++)
              {
                TomoGpuBackprojectParams params;

                if (!tomo_bp_supports (k, S, interp))
                  continue;
                if (half && k != TOMO_GPU_KERNEL_ALU && k != TOMO_GPU_KERNEL_HYBRID)
                  continue;
                if (ri > 0 && (k != TOMO_GPU_KERNEL_HYBRID || (half && S != 4)))
                  continue;
                memset (&params, 0, sizeof params);
                params.center = (W - 1) / 2.0 + 0.3;
                params.interp = interp;
                params.kernel = k;
                params.half_cache = half;
                params.hybrid_ratio = ratios[ri];
                double med = time_run (t.bp, &params, t.d_out, t.e0, t.e1);
                g_print ("%-8s %u-slice %-7s %-5s ratio %.3f: %8.3f ms %8.1f GU/s\n",
                         kernel_name (k), S, interp ? "linear" : "nearest", half ? "half" : "float",
                         ratios[ri], med, (double) W * W * P * S / (med * 1e-3) / 1e9);
              }
    }
  timing_clear (&t);
  return 0;
}

/* --timing4: 4 slices linear from halves at 2048² × 2048 projections, every
 * kernel variant (tomo_bp_set_variant) on the ALU kernel and on the hybrid
 * at several shares of ALU blocks (1/16: all texture), median of 20. */
static int
run_timing4 (void)
{
  const guint W = 2048, P = 2048, S = 4;
  g_autoptr (GError) error = NULL;
  Timing t;
  /* sixteenths of ALU blocks; 0.01 → 0: all texture */
  static const float ratios[] = { 0.01f, 5 / 16.f, 6 / 16.f, 7 / 16.f, 8 / 16.f, 9 / 16.f, 10 / 16.f,
                                  11 / 16.f, 12 / 16.f, 13 / 16.f };
  float pack_ms[20];

  if (!timing_init (&t, W, P))
    return 0;
  g_assert_true (tomo_bp_set_sinograms (t.bp, t.d_sino, S, 0, &error));
  for (int r = 0; r < 20; r++)
    {
      CUDA_OK (cudaEventRecord (t.e0, 0));
      g_assert_true (tomo_bp_set_sinograms (t.bp, t.d_sino, S, 0, &error));
      CUDA_OK (cudaEventRecord (t.e1, 0));
      CUDA_OK (cudaEventSynchronize (t.e1));
      CUDA_OK (cudaEventElapsedTime (&pack_ms[r], t.e0, t.e1));
    }
  g_print ("packing 4 slices (float4 + half4 bins): %.3f ms\n", median20 (pack_ms));
  g_print ("default variant %d\n", tomo_bp_get_variant ());
  for (int v = 0; v < 2; v++)
    for (int ri = -1; ri < (int) G_N_ELEMENTS (ratios); ri++)
      {
        TomoGpuBackprojectParams params;

        tomo_bp_set_variant (v);
        memset (&params, 0, sizeof params);
        params.center = (W - 1) / 2.0 + 0.3;
        params.interp = 1;
        params.kernel = ri < 0 ? TOMO_GPU_KERNEL_ALU : TOMO_GPU_KERNEL_HYBRID;
        params.half_cache = TRUE;
        params.hybrid_ratio = ri < 0 ? 0.f : ratios[ri];
        double med = time_run (t.bp, &params, t.d_out, t.e0, t.e1);
        g_print ("variant %d %-6s alu16 %2d: %7.3f ms %7.1f GU/s %6.3f ms per slice\n", v,
                 ri < 0 ? "alu" : "hybrid", ri < 0 ? 16 : (int) lrintf (ratios[ri] * 16), med,
                 (double) W * W * P * S / (med * 1e-3) / 1e9, med / S);
      }
  tomo_bp_set_variant (-1);
  timing_clear (&t);
  return 0;
}

static void
add_tests (void)
{
  for (int k = TOMO_GPU_KERNEL_AUTO; k < TOMO_GPU_N_KERNELS; k++)
    for (guint s = 1; s <= 4; s *= 2)
      for (int interp = 1; interp >= 0; interp--)
        for (int half = 0; half < 2; half++)
          {
            if (!tomo_bp_supports (k, s, interp))
              continue;
            if (half && k != TOMO_GPU_KERNEL_ALU && !(k == TOMO_GPU_KERNEL_HYBRID && s == 1))
              continue;
            for (guint ci = 0; ci < G_N_ELEMENTS (cases); ci++)
              {
                g_autofree char *path = NULL;
                BpTest *t;

                /* auto: one small and one large area are enough. */
                if (k == TOMO_GPU_KERNEL_AUTO && ci != 2 && ci + 2 < G_N_ELEMENTS (cases))
                  continue;
                t = g_new (BpTest, 1);
                *t = (BpTest) { k, s, interp, half, &cases[ci], -1 };
                path = g_strdup_printf ("/tomo/gpu/bp/%s/%s-%uslice%s/%s", kernel_name (k),
                                        interp ? "linear" : "nearest", s, half ? "-half" : "",
                                        cases[ci].name);
                g_test_add_data_func_full (path, t, test_against_reference, g_free);
              }
          }
  /* Every variant of the 4-slice half paths (selectable at run time):
   * the hybrid (small ROI: texture blocks only; 1040² ROI: both kinds) and
   * the ALU kernel from the half cache (many passes, partial last pass). */
  for (int v = 0; v < 2; v++)
    for (int kind = 0; kind < 5; kind++)
      {
        static const guint case_of[] = { 4, 10, 4, 3, 3 };
        const TomoGpuKernel k = kind < 2 ? TOMO_GPU_KERNEL_HYBRID : TOMO_GPU_KERNEL_ALU;
        const int interp = kind == 4 ? 0 : 1;
        g_autofree char *path = NULL;
        BpTest *t;

        t = g_new (BpTest, 1);
        *t = (BpTest) { k, 4, interp, k == TOMO_GPU_KERNEL_ALU, &cases[case_of[kind]], v };
        path = g_strdup_printf ("/tomo/gpu/bp/%s/%s-4slice-variant%d/%s", kernel_name (k),
                                interp ? "linear" : "nearest", v, t->c->name);
        g_test_add_data_func_full (path, t, test_against_reference, g_free);
      }
  g_test_add_func ("/tomo/gpu/bp/hybrid/all-alu", test_hybrid_all_alu);
  g_test_add_func ("/tomo/gpu/bp/errors", test_errors);
}

#endif /* HAVE_CUDA */

static void
test_no_cuda (void)
{
  g_test_skip (skip_reason);
}

int
main (int argc, char **argv)
{
  int timing = 0;
  int n = 0;

  for (int i = 1; i < argc; i++)
    if (g_strcmp0 (argv[i], "--timing") == 0 || g_strcmp0 (argv[i], "--timing4") == 0)
      {
        timing = argv[i][8] == '4' ? 4 : 1;
        memmove (&argv[i], &argv[i + 1], (argc - i) * sizeof (char *));
        argc--;
        i--;
      }
  g_test_init (&argc, &argv, NULL);

#if HAVE_CUDA
  (void) test_no_cuda;
  {
    cudaError_t r = cudaGetDeviceCount (&n);

    if (r != cudaSuccess || n == 0)
      g_snprintf (skip_reason, sizeof skip_reason, "no CUDA device: %s",
                  r != cudaSuccess ? cudaGetErrorString (r) : "none found");
    have_device = r == cudaSuccess && n > 0;
  }
  if (timing)
    return timing == 4 ? run_timing4 () : run_timing ();
  add_tests ();
#else
  (void) timing;
  (void) n;
  g_test_add_func ("/tomo/gpu/bp/no-cuda", test_no_cuda);
#endif
  return g_test_run ();
}
