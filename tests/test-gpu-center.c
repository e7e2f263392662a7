/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The GPU cross-correlation against a double-precision reference on the
 * CPU, and the GPU centre estimate against the CPU's.
 */
#include "config.h"

#include <math.h>

#include "tomo-center-gpu.h"
#include "tomo-gpu-center.h"
#include "tomo-phantom.h"
#include "tomo-test-util.h"

#define REQUIRE_DEVICE() TOMO_TEST_REQUIRE_GPU ("tomo_gpu_get_n_devices() returned 0")

static double
ncc_reference (const float *a,
               const float *b,
               int          n,
               int          d,
               int          min_overlap)
{
  int x0 = MAX (0, -d), x1 = MIN (n, n - d);
  double sa = 0, sb = 0, m = x1 - x0, saa = 0, sbb = 0, sab = 0;

  if (x1 - x0 < min_overlap)
    return -2.0;
  for (int x = x0; x < x1; x++)
    {
      sa += a[x];
      sb += b[x + d];
    }
  for (int x = x0; x < x1; x++)
    {
      double u = a[x] - sa / m, v = b[x + d] - sb / m;
      saa += u * u;
      sbb += v * v;
      sab += u * v;
    }
  return saa <= 0 || sbb <= 0 ? -2.0 : sab / sqrt (saa * sbb);
}

static void
test_profile (void)
{
  const guint w = 1000, n = 5; /* not a multiple of 32 on purpose */
  const struct { int d_lo; guint n_shifts; } ranges[] = { { -12, 25 }, { -999, 1999 }, { 500, 300 } };
  g_autofree float *a = g_new (float, n * w), *b = g_new (float, n * w);
  g_autofree float *out = g_new (float, n * 2 * w);
  g_autoptr(GRand) rand = g_rand_new_with_seed (5);
  g_autoptr(GError) error = NULL;
  TomoGpuXcorr *xc;

  REQUIRE_DEVICE ();
  xc = tomo_gpu_xcorr_new (0, w, 32, &error);
  g_assert_no_error (error);
  /* Smooth rows with an offset, like projections: the centring matters. */
  for (guint i = 0; i < n * w; i++)
    {
      a[i] = 5.0f + sinf (i * 0.013f) + 0.2f * (float) g_rand_double (rand);
      b[i] = 5.0f + cosf (i * 0.011f) + 0.2f * (float) g_rand_double (rand);
    }
  for (int m = 0; m < 2; m++)
    for (guint r = 0; r < G_N_ELEMENTS (ranges); r++)
      {
        double worst = 0, worst_short = 0;

        g_assert_true (tomo_gpu_xcorr_run (xc, m, a, b, n, w, ranges[r].d_lo, ranges[r].n_shifts, 16, out, &error));
        g_assert_no_error (error);
        for (guint p = 0; p < n; p++)
          for (guint i = 0; i < ranges[r].n_shifts; i++)
            {
              double want = ncc_reference (a + p * w, b + p * w, w, ranges[r].d_lo + (int) i, 16);
              double got = out[p * ranges[r].n_shifts + i];

              int d = ranges[r].d_lo + (int) i;

              if (want < -1.5)
                g_assert_cmpfloat (got, ==, -2.0f);
              else if ((int) w - abs (d) >= (int) w / 4)
                worst = MAX (worst, fabs (got - want));
              else
                worst_short = MAX (worst_short, fabs (got - want));
            }
        g_test_message ("%s, shifts %d…%d: largest |r − r_ref| = %.2e (overlap ≥ W/4), "
                        "%.2e (shorter)", m ? "cuFFT" : "direct", ranges[r].d_lo,
                        ranges[r].d_lo + (int) ranges[r].n_shifts - 1, worst, worst_short);
        /* Pearson's r from float sums of ≤ 1000 centred values.  The FFT's
         * rounding is relative to the whole rows' energy, so over a short
         * overlap its r is off by ~1e-3 (seen on the H100: 8.3e-4); the
         * direct sums only ever touch the overlap. */
        g_assert_cmpfloat (worst, <, 2e-4);
        g_assert_cmpfloat (worst_short, <, m ? 5e-3 : 2e-4);
      }
  g_assert_false (tomo_gpu_xcorr_run (xc, 0, a, b, 33, w, 0, 10, 16, out, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  tomo_gpu_xcorr_free (xc);
}

static void
test_estimate (void)
{
  const guint w = 512;
  const guint counts[] = { 361, 720 };
  const double ranges[] = { 180.0, 360.0 };
  g_autoptr(GError) error = NULL;
  TomoBackendImpl *gpu_backend;

  REQUIRE_DEVICE ();
  gpu_backend = tomo_backend_gpu_new (&error);
  g_assert_no_error (error);
  for (guint k = 0; k < 2; k++)
    {
      guint n = counts[k];
      TomoPhantomParams p;
      g_autofree double *angles = g_new (double, n), *line = g_new (double, n * w);
      g_autofree float *sino = g_new (float, n * w);
      TomoSinogram s = { sino, n, w, angles };
      TomoCenterResult cpu, gpu;

      tomo_phantom_params_init (&p);
      p.width = w;
      p.height = 8;
      p.n_proj = n;
      p.center = 255.5 - 17.25;
      for (guint i = 0; i < n; i++)
        angles[i] = ranges[k] * G_PI / 180.0 * i / (k == 0 ? n - 1 : n);
      tomo_phantom_sinogram (&p, angles, 4, line);
      for (guint i = 0; i < n * w; i++)
        sino[i] = (float) line[i];
      g_assert_true (tomo_center_correlation (&s, &cpu, &error));
      /* Through the GPU backend, which runs the direct kernel (the faster
       * one for its ranges, and exact over short overlaps; see the profile
       * test). */
      for (int m = 0; m < 1; m++)
        {
          g_assert_true (tomo_center_correlation_backend (gpu_backend, &s, &gpu, &error));
          g_assert_no_error (error);
          g_test_message ("%g°, %s: GPU %.4f, CPU %.4f, true %.4f", ranges[k], m ? "cuFFT" : "direct",
                          gpu.center, cpu.center, p.center);
          g_assert_cmpfloat (fabs (gpu.center - cpu.center), <, 0.02);
          g_assert_cmpfloat (fabs (gpu.center - p.center), <, 0.2);
          /* The same pairs: float sums of products over an overlap far
           * from the row's mean (air) once gave |r| ≫ 1 there, a false
           * coarse peak and a lost pair (H100: 3 vs 4 here, 19 vs 32 on a
           * 360° scan); the sums are now double and such flat overlaps −2. */
          g_test_message ("pairs used: GPU %u, CPU %u", gpu.n_used, cpu.n_used);
          g_assert_cmpuint (cpu.n_used, >=, 1);
          g_assert_cmpuint (gpu.n_used, ==, cpu.n_used);
        }
    }
  tomo_backend_free (gpu_backend);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tomo/gpu/center/profile", test_profile);
  g_test_add_func ("/tomo/gpu/center/estimate", test_estimate);
  return g_test_run ();
}
