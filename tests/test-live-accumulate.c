/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Incremental live reconstruction equals the full one: projections added in
 * batches in any order give the slice of all of them, and removing the
 * oldest (sliding window) gives the slice of the rest. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-fbp.h"
#include "tomo-backend.h"
#include "tomo-live-accumulator.h"
#include "tomo-scan.h"
#include "test-live-util.h"
#include "tomo-test-util.h"

static const char *sample_path;

typedef struct
{
  guint   width, n;
  float  *sino;
  double *angles;
  float  *full;      /* reference: all projections */
  float  *half;      /* reference: the last n/2, scaled as part of n */
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = tomo_test_open_scan (sample_path);
  g_autoptr(TomoCpuFbp) fbp = NULL, fbp_half = NULL;
  TomoReconParams params;
  guint h;

  f->width = tomo_scan_get_width (scan);
  f->n = tomo_scan_get_n_projections (scan);
  h = f->n / 2;
  f->sino = g_new (float, (gsize) f->n * f->width);
  g_assert_true (tomo_scan_read_sinogram (scan, tomo_scan_get_height (scan) / 2, f->sino, NULL, &error));
  f->angles = g_memdup2 (tomo_scan_get_angles (scan), sizeof (double) * f->n);

  tomo_recon_params_init (&params, f->width);
  params.center = f->width / 2.0 + 3.37;
  f->full = g_new (float, (gsize) f->width * f->width);
  fbp = tomo_cpu_fbp_new (f->width, f->n, f->angles, params.filter, params.pad, 0);
  tomo_cpu_fbp_reconstruct (fbp, f->sino, &params, f->full);

  f->half = g_new (float, (gsize) f->width * f->width);
  fbp_half = tomo_cpu_fbp_new (f->width, f->n - h, f->angles + h, params.filter, params.pad, 0);
  tomo_cpu_fbp_reconstruct (fbp_half, f->sino + (gsize) h * f->width, &params, f->half);
  for (gsize i = 0; i < (gsize) f->width * f->width; i++)
    f->half[i] *= (float) (f->n - h) / f->n;
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_free (f->sino);
  g_free (f->angles);
  g_free (f->full);
  g_free (f->half);
}


/* Adds projections [begin, end) in batches of 1 to 40, in an order that
 * is not the angles' (odd batches first, then even ones). */
static void
add_range (TomoLiveAccumulator *acc,
           Fixture             *f,
           guint                begin,
           guint                end,
           float                weight)
{
  g_autoptr(GError) error = NULL;

  for (guint pass = 0; pass < 2; pass++)
    {
      guint b = 0;

      for (guint i = begin; i < end; b++)
        {
          guint k = MIN (1 + (b * 13) % 40, end - i);

          if (b % 2 == pass)
            g_assert_true (tomo_live_accumulator_add (acc, f->sino + (gsize) i * f->width, f->angles + i,
                                                      k, weight, &error));
          g_assert_no_error (error);
          i += k;
        }
    }
}

static void
check_backend (Fixture    *f,
               TomoBackend backend,
               double      tolerance)
{
  g_autoptr(TomoLiveAccumulator) acc = NULL;
  g_autoptr(GError) error = NULL;
  TomoReconParams params;
  const float *image;
  double d_full, d_half;

  tomo_recon_params_init (&params, f->width);
  params.center = f->width / 2.0 + 3.37;
  acc = tomo_live_accumulator_new (f->width, f->n, &params, backend, &error);
  g_assert_no_error (error);
  g_assert_cmpint (tomo_live_accumulator_get_backend (acc), ==, backend);

  /* Scan mode: everything, in pieces. */
  add_range (acc, f, 0, f->n, 1.0f);
  image = tomo_live_accumulator_get_image (acc, &error);
  g_assert_no_error (error);
  d_full = relative_difference (f->full, image, (gsize) f->width * f->width);

  /* Continuous mode: the oldest half leaves the window. */
  add_range (acc, f, 0, f->n / 2, -1.0f);
  image = tomo_live_accumulator_get_image (acc, &error);
  g_assert_no_error (error);
  d_half = relative_difference (f->half, image, (gsize) f->width * f->width);

  g_test_message ("%s: incremental vs full %.3g, window vs its own reconstruction %.3g (of the maximum)",
                  backend == TOMO_BACKEND_GPU ? "GPU" : "CPU", d_full, d_half);
  g_assert_cmpfloat (d_full, <, tolerance);
  g_assert_cmpfloat (d_half, <, tolerance);
}

/* Raw counts of the projections: p = −log((raw − dark)/(flat − dark)) with
 * a flat and a dark that vary over the detector. */
static void
make_raw (Fixture *f,
          float   *raw,
          float   *flat,
          float   *dark)
{
  guint w = f->width;

  for (guint x = 0; x < w; x++)
    {
      dark[x] = 90.0f + 10.0f * (x % 7);
      flat[x] = 20000.0f + 3000.0f * sinf (x * 0.05f);
    }
  for (guint p = 0; p < f->n; p++)
    for (guint x = 0; x < w; x++)
      raw[(gsize) p * w + x] = dark[x] + (flat[x] - dark[x]) * expf (-f->sino[(gsize) p * w + x]);
}

/* Raw rows through tomo_live_accumulator_put (preprocessed, filtered and
 * summed by the backend: on the device for the GPU) in shuffled batches,
 * into slots past the scan's count (the store grows), every slot first with
 * the wrong projection and then replaced by its own: the slice of all of
 * them, with its statistics. */
static void
check_put (Fixture    *f,
           TomoBackend backend,
           gboolean    device_only,
           double      tolerance)
{
  g_autoptr(TomoLiveAccumulator) acc = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoSlice) slice = NULL;
  g_autofree float *raw = g_new (float, (gsize) f->n * f->width);
  g_autofree float *flat = g_new (float, f->width);
  g_autofree float *dark = g_new (float, f->width);
  g_autofree float *image = g_new (float, (gsize) f->width * f->width);
  g_autofree guint *slots = g_new (guint, f->n);
  g_autofree double *angles = g_new (double, f->n);
  g_autofree float *rows = g_new (float, (gsize) f->n * f->width);
  TomoReconParams params;
  TomoSliceStats host;
  double d;
  guint w = f->width, done = 0;

  make_raw (f, raw, flat, dark);
  tomo_recon_params_init (&params, w);
  params.center = w / 2.0 + 3.37;
  acc = tomo_live_accumulator_new (w, f->n, &params, backend, &error);
  g_assert_no_error (error);

  for (guint pass = 0; pass < 2; pass++)
    for (guint b = 0, i0 = 0; i0 < f->n; b++)
      {
        guint k = MIN (1 + (b * 29) % 70, f->n - i0);
        TomoLiveRows put = { rows, { flat, dark, TRUE }, slots, angles, k };

        for (guint j = 0; j < k; j++)
          {
            /* Shuffled: batch b takes every step-th projection. */
            guint i = (i0 + j) * 7 % f->n;
            guint src = pass == 0 ? (i + f->n / 3) % f->n : i;

            slots[j] = f->n + i;
            angles[j] = f->angles[i];
            memcpy (rows + (gsize) j * w, raw + (gsize) src * w, sizeof (float) * w);
          }
        g_assert_true (tomo_live_accumulator_put (acc, &put, &error));
        g_assert_no_error (error);
        i0 += k;
        done += k;
      }
  g_assert_cmpuint (tomo_live_accumulator_get_n (acc), ==, f->n);

  slice = tomo_live_accumulator_dup_slice (acc, 7, device_only, &error);
  g_assert_no_error (error);
  g_assert_nonnull (slice);
  g_assert_cmpuint (slice->row, ==, 7);
  g_assert_cmpuint (slice->width, ==, w);
  if (device_only)
    {
      g_assert_null (slice->data);
      g_assert_nonnull (slice->device_buffer);
      g_assert_true (((const TomoDeviceBufferOps *) slice->device_ops)->download (slice->device_buffer, image));
    }
  else
    {
      g_assert_nonnull (slice->data);
      memcpy (image, slice->data, sizeof (float) * w * w);
    }
  d = relative_difference (f->full, image, (gsize) w * w);
  tomo_slice_stats_compute (image, (gsize) w * w, &host);
  g_test_message ("%s put (raw counts, %u rows in two passes): vs full reconstruction %.3g of the maximum; "
                  "min %g/%g max %g/%g mean %g/%g (slice/host)", tomo_backend_to_string (backend), done, d,
                  slice->values.min, host.min, slice->values.max, host.max, slice->values.mean, host.mean);
  g_assert_cmpfloat (d, <, tolerance);
  g_assert_true (slice->values.valid);
  g_assert_cmpuint (slice->values.n_finite, ==, host.n_finite);
  g_assert_cmpfloat (fabs (slice->values.min - host.min), <=, 1e-6 * fabs (host.max - host.min));
  g_assert_cmpfloat (fabs (slice->values.max - host.max), <=, 1e-6 * fabs (host.max - host.min));
  g_assert_cmpfloat (fabs (slice->values.mean - host.mean), <=, 1e-4 * fabs (host.max - host.min));
  g_assert_cmpfloat (fabs (slice->values.lo - host.lo), <=, 1e-2 * fabs (host.max - host.min));
  g_assert_cmpfloat (fabs (slice->values.hi - host.hi), <=, 1e-2 * fabs (host.max - host.min));

  if (device_only)
    {
      /* Display copies are device buffers used again: one held is not
       * handed out twice, one let go is, and it then holds the new sum. */
      g_autoptr(TomoSlice) second = tomo_live_accumulator_dup_slice (acc, 7, TRUE, &error);
      g_autofree float *again = g_new (float, (gsize) w * w);
      gpointer first_buffer = slice->device_buffer, second_buffer;

      g_assert_no_error (error);
      second_buffer = second->device_buffer;
      g_assert_true (second_buffer != first_buffer);
      g_assert_true (((const TomoDeviceBufferOps *) second->device_ops)->download (second_buffer, again));
      g_assert_cmpmem (again, sizeof (float) * w * w, image, sizeof (float) * w * w);
      g_clear_pointer (&slice, tomo_slice_unref);
      g_clear_pointer (&second, tomo_slice_unref);
      tomo_live_accumulator_clear (acc);
      slice = tomo_live_accumulator_dup_slice (acc, 7, TRUE, &error);
      g_assert_no_error (error);
      g_assert_true (slice->device_buffer == first_buffer || slice->device_buffer == second_buffer);
      g_assert_true (((const TomoDeviceBufferOps *) slice->device_ops)->download (slice->device_buffer, again));
      for (gsize i = 0; i < (gsize) w * w; i++)
        g_assert_cmpfloat (again[i], ==, 0.0f);
    }

  /* Cleared: nothing in it. */
  tomo_live_accumulator_clear (acc);
  g_assert_cmpuint (tomo_live_accumulator_get_n (acc), ==, 0);
}

static void
test_put_cpu (Fixture       *f,
              gconstpointer  data)
{
  /* Raw counts made in float and preprocessed back: a few 1e-6. */
  check_put (f, TOMO_BACKEND_CPU, FALSE, 1e-4);
}

static void
test_put_gpu (Fixture       *f,
              gconstpointer  data)
{
  if (!tomo_test_need_gpu ("the GPU accumulator is tested on the GPU machine"))
    return;
  /* As test_gpu, plus the preprocessing in float on the device. */
  check_put (f, TOMO_BACKEND_GPU, FALSE, 1e-3);
  check_put (f, TOMO_BACKEND_GPU, TRUE, 1e-3);
}

static void
test_cpu (Fixture       *f,
          gconstpointer  data)
{
  /* Same filter and back projector, only the order of the sum differs. */
  check_backend (f, TOMO_BACKEND_CPU, 1e-5);
}

static void
test_gpu (Fixture       *f,
          gconstpointer  data)
{
  if (!tomo_test_need_gpu ("the GPU accumulator is tested on the GPU machine"))
    return;
  /* Single-precision trigonometry and the border columns differ from the
   * CPU back projector by a few 1e-5 of the maximum. */
  check_backend (f, TOMO_BACKEND_GPU, 1e-3);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  sample_path = tomo_test_require_env ("TOMO_SAMPLE_SCAN");
  g_test_add ("/tomo/live/accumulate/cpu", Fixture, NULL, fixture_setup, test_cpu, fixture_teardown);
  g_test_add ("/tomo/live/accumulate/gpu", Fixture, NULL, fixture_setup, test_gpu, fixture_teardown);
  g_test_add ("/tomo/live/accumulate/put-cpu", Fixture, NULL, fixture_setup, test_put_cpu, fixture_teardown);
  g_test_add ("/tomo/live/accumulate/put-gpu", Fixture, NULL, fixture_setup, test_put_gpu, fixture_teardown);
  return g_test_run ();
}
