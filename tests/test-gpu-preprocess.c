/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Preprocessing on the device against tomo_preprocess_row(): uint16 and
 * float32 raw rows with flats and darks, dead pixels (clamped), NaN, Inf
 * and absurd values (replaced), with and without −log and normalisation;
 * values within 1e-6 relative and the clamp and replacement counts equal.
 * Then the GPU volume pipeline, which uploads uint16 rows raw and
 * preprocesses them there, against slice-by-slice reconstruction and its
 * counts against the CPU's; also with an axis tilt corrected, whose rows
 * the device resamples after preprocessing; stitching maps naming rows or
 * columns the input lacks are refused.  Skips without a CUDA device.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-engine.h"
#include "tomo-filter.h"
#include "tomo-geometry.h"
#include "tomo-gpu.h"
#include "tomo-preprocess.h"
#include "tomo-row-prefetch.h"
#include "tomo-test-util.h"

/* Why a test skips without a CUDA device. */
#define NO_GPU "device preprocessing is tested on the GPU machine"

typedef struct
{
  const char *name;
  TomoGpuRawType type;
  gboolean normalise, apply_log;
  gboolean bad_values;   /* NaN, Inf, 1e30 in float rows */
} PreCase;

/* Raw counts around 1000–40000 with a dark ~100 and a flat ~50000; a few
 * pixels at or below the dark, and two columns whose flat is not above
 * the dark. */
static void
make_rows (const PreCase *c,
           guint          n_rows,
           guint          n_proj,
           guint          width,
           float         *raw_f,
           guint16       *raw_u,
           float         *flat,
           float         *dark)
{
  GRand *rand = g_rand_new_with_seed (42);

  for (guint r = 0; r < n_rows; r++)
    for (guint x = 0; x < width; x++)
      {
        dark[r * width + x] = 100.0f + (float) g_rand_int_range (rand, 0, 20);
        flat[r * width + x] = 50000.0f + (float) g_rand_int_range (rand, 0, 2000);
        if (x == 3 || x == width - 2)
          flat[r * width + x] = dark[r * width + x] - (x == 3 ? 0.0f : 5.0f);
      }
  for (gsize i = 0; i < (gsize) n_rows * n_proj * width; i++)
    {
      double v = g_rand_double_range (rand, 1000.0, 40000.0);

      if (g_rand_int_range (rand, 0, 50) == 0)
        v = g_rand_int_range (rand, 0, 120); /* at or below the dark */
      if (c->bad_values && g_rand_int_range (rand, 0, 97) == 0)
        {
          static const float bad[] = { NAN, INFINITY, -INFINITY, 1e30f, -5.0f };
          raw_f[i] = bad[g_rand_int_range (rand, 0, G_N_ELEMENTS (bad))];
          continue;
        }
      if (!c->normalise && !c->apply_log)
        v = (v - 20000.0) / 1e4; /* line integrals of either sign */
      else if (!c->normalise)
        v /= 50000.0;            /* normalised transmission, some ≤ 0 */
      raw_u[i] = (guint16) MIN (v, 65535.0);
      raw_f[i] = c->type == TOMO_GPU_RAW_UINT16 ? (float) raw_u[i] : (float) v;
    }
  g_rand_free (rand);
}

static void
test_preprocess_case (gconstpointer data)
{
  const PreCase *c = data;
  const guint n_rows = 3, n_proj = 37, width = 301;
  gsize n = (gsize) n_rows * n_proj * width;
  g_autofree float *raw_f = g_new0 (float, n);
  g_autofree guint16 *raw_u = g_new0 (guint16, n);
  g_autofree float *flat = g_new (float, n_rows * width);
  g_autofree float *dark = g_new (float, n_rows * width);
  g_autofree float *ref = g_new (float, n);
  g_autofree float *out = g_new (float, n);
  TomoGpuPreprocessCounts counts[3];
  g_autoptr(GError) error = NULL;
  double worst = 0.0;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  make_rows (c, n_rows, n_proj, width, raw_f, raw_u, flat, dark);
  TomoGpuRawRows rows = { c->type, c->type == TOMO_GPU_RAW_UINT16 ? (const void *) raw_u : (const void *) raw_f,
                          n_rows, c->normalise ? flat : NULL, c->normalise ? dark : NULL, c->apply_log };
  g_assert_true (tomo_gpu_preprocess_rows (0, &rows, n_proj, width, out, counts, &error));
  g_assert_no_error (error);
  for (guint r = 0; r < n_rows; r++)
    {
      gsize off = (gsize) r * n_proj * width;
      TomoPreprocessStats st = { 0 };
      TomoFlatField ff = { c->normalise ? flat + r * width : NULL,
                           c->normalise ? dark + r * width : NULL, c->apply_log };

      tomo_preprocess_row (raw_f + off, n_proj, width, &ff, ref + off, &st);
      g_assert_cmpuint (counts[r].n_values, ==, st.n_values);
      g_assert_cmpuint (counts[r].n_nonpositive, ==, st.n_nonpositive);
      g_assert_cmpuint (counts[r].n_nonfinite, ==, st.n_nonfinite);
      /* The cases are made so that something is clamped (and replaced). */
      if (c->normalise || c->apply_log)
        g_assert_cmpuint (st.n_nonpositive, >, 0);
      if (c->bad_values)
        g_assert_cmpuint (st.n_nonfinite, >, 0);
    }
  /* Both compute in double and round once to float: 1e-6 relative (a last
   * bit of the float where the two log() implementations round apart). */
  for (gsize i = 0; i < n; i++)
    {
      double d = fabs ((double) out[i] - ref[i]) / MAX (1.0, fabs (ref[i]));

      g_assert_true (isfinite (out[i]));
      worst = MAX (worst, d);
    }
  g_test_message ("%s: worst relative difference %.3g", c->name, worst);
  g_assert_cmpfloat (worst, <=, 1e-6);
}

static void
test_preprocess_bad_args (void)
{
  g_autoptr(GError) error = NULL;
  float raw[4] = { 1, 2, 3, 4 }, out[4], flat[2] = { 5, 5 };
  TomoGpuRawRows rows = { TOMO_GPU_RAW_FLOAT32, raw, 1, flat, NULL, TRUE };

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  g_assert_false (tomo_gpu_preprocess_rows (0, &rows, 2, 2, out, NULL, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "flat without a dark"));
}

/* A stitching map that names rows or columns the input does not have, or
 * weights for another geometry: load_raw says which, and the context goes
 * on loading rows with a good map and without one. */
static void
test_bad_map (void)
{
  enum { WI = 4, NI = 4, WO = 6, NO = 2 };
  g_autoptr(GError) error = NULL;
  g_autofree double *response = NULL;
  double angles[NO] = { 0.0, G_PI / 2 };
  float raw[NI * WI], weights[NI] = { 1, 1, 1, 1 };
  TomoGpuMapProjection proj[NO] = { { 0, 2, 2, 0.0f }, { 1, 3, 3, 0.0f } };
  TomoGpuMapColumn col[WO] = { { 0, -1, 0, 1 }, { 1, -1, 0, 1 }, { 2, 3, 0.5f, 0.5f },
                               { 3, 2, 0.5f, 0.5f }, { -1, 1, 0, 0 }, { -1, 0, 0, 0 } };
  TomoGpuRowMap map = { WI, NI, NULL, proj, col };
  TomoGpuRawRows rows = { TOMO_GPU_RAW_FLOAT32, raw, 1, NULL, NULL, FALSE, NULL, NULL, &map };
  TomoGpuContext *ctx;
  guint padded;
  struct { const char *words; int field; int value; } bad[] = {
    { "a column beyond the input rows", 0, WI },
    { "a column beyond the input rows", 1, -2 },
    { "a projection beyond the input rows", 2, NI },
    { "weights for another geometry", 3, 0 },
  };

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  for (guint i = 0; i < G_N_ELEMENTS (raw); i++)
    raw[i] = 1.0f + i;
  response = tomo_filter_fbp_response (TOMO_FILTER_RAMLAK, WO, NO, &padded);
  ctx = tomo_gpu_context_new (0, &error);
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_context_set_geometry (ctx, WO, NO, angles, &error));
  g_assert_true (tomo_gpu_context_set_filter (ctx, padded, response, 0, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_context_load_raw (ctx, &rows, NULL, &error));
  g_assert_no_error (error);
  for (guint b = 0; b < G_N_ELEMENTS (bad); b++)
    {
      TomoGpuMapProjection p2[NO];
      TomoGpuMapColumn c2[WO];
      TomoGpuRowMap m2 = map;
      TomoGpuRawRows r2 = rows;

      memcpy (p2, proj, sizeof proj);
      memcpy (c2, col, sizeof col);
      m2.proj = p2;
      m2.col = c2;
      if (bad[b].field == 0)
        c2[3].direct = bad[b].value;
      else if (bad[b].field == 1)
        c2[4].mirror = bad[b].value;
      else if (bad[b].field == 2)
        p2[1].above = bad[b].value;
      else
        m2.weights = weights;   /* 4 × 4 weighted into 2 × 6 */
      r2.map = &m2;
      g_assert_false (tomo_gpu_context_load_raw (ctx, &r2, NULL, &error));
      g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, bad[b].words));
      g_assert_nonnull (strstr (error->message, "4 × 4 into 2 × 6"));
      g_clear_error (&error);
      /* The good map again: still the device's (a refused map is not
       * uploaded). */
      g_assert_true (tomo_gpu_context_load_raw (ctx, &rows, NULL, &error));
      g_assert_no_error (error);
    }
  tomo_gpu_context_free (ctx);
}

/* --- the volume pipeline with raw uint16 rows ---------------------------- */

#define VW 128
#define VH 9
#define VP 90

/* A uint16 Data Exchange scan: the phantom's transmission × a flat with a
 * per-column gain, plus a dark; one dead detector column (0 counts). */
static char *
write_uint16_scan (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "scan-u16.h5", NULL);
  TomoPhantomParams pp;
  g_autofree double *sino = g_new (double, (gsize) VH * VP * VW);
  g_autofree guint16 *data = g_new (guint16, (gsize) VP * VH * VW);
  g_autofree guint16 *white = g_new (guint16, (gsize) 2 * VH * VW);
  g_autofree guint16 *black = g_new (guint16, (gsize) 2 * VH * VW);
  g_autofree double *theta = tomo_test_half_turn (VP);
  hsize_t dims[3] = { VP, VH, VW }, fd_dims[3] = { 2, VH, VW }, chunk[3] = { VP, 1, VW };
  hsize_t tdims[1] = { VP };
  hid_t file;

  tomo_test_phantom_params (&pp, VW, VH, VP);
  for (guint r = 0; r < VH; r++)
    tomo_phantom_sinogram (&pp, theta, r, sino + (gsize) r * VP * VW);
  for (guint f = 0; f < 2; f++)
    for (guint r = 0; r < VH; r++)
      for (guint x = 0; x < VW; x++)
        {
          white[((gsize) f * VH + r) * VW + x] = 40000 + 37 * x + 11 * f;
          black[((gsize) f * VH + r) * VW + x] = 90 + (x % 7) + f;
        }
  for (guint p = 0; p < VP; p++)
    for (guint r = 0; r < VH; r++)
      for (guint x = 0; x < VW; x++)
        {
          double gain = 40000 + 37 * x + 5.5 - (90 + (x % 7) + 0.5);
          double v = 90 + (x % 7) + 0.5 + gain * exp (-sino[((gsize) r * VP + p) * VW + x]);

          data[((gsize) p * VH + r) * VW + x] = x == 17 ? 0 : (guint16) lround (v);
        }
  for (guint p = 0; p < VP; p++)
    theta[p] *= 180.0 / G_PI;
  file = H5Fcreate (path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  g_assert_cmpint (file, >=, 0);
  tomo_test_h5_write (file, "/exchange/data", H5T_STD_U16LE, 3, dims, chunk, H5T_NATIVE_UINT16, data);
  tomo_test_h5_write (file, "/exchange/data_white", H5T_STD_U16LE, 3, fd_dims, NULL,
                      H5T_NATIVE_UINT16, white);
  tomo_test_h5_write (file, "/exchange/data_dark", H5T_STD_U16LE, 3, fd_dims, NULL,
                      H5T_NATIVE_UINT16, black);
  tomo_test_h5_write (file, "/exchange/theta", H5T_NATIVE_DOUBLE, 1, tdims, NULL,
                      H5T_NATIVE_DOUBLE, theta);
  H5Fclose (file);
  return g_steal_pointer (&path);
}

/* No device needed: the raw rows the pipeline uploads (as the file holds
 * them, through the read-ahead ring), preprocessed by the CPU's function,
 * are what tomo_scan_read_sinogram() gives, counts included. */
static void
test_raw_rows (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree guint16 *raw = g_new (guint16, (gsize) VP * VW);
  g_autofree float *rawf = g_new (float, (gsize) VP * VW);
  g_autofree float *conv = g_new (float, (gsize) VP * VW);
  g_autofree float *ref = g_new (float, (gsize) VP * VW);
  float flat[VW], dark[VW];
  gboolean normalise = FALSE, apply_log = FALSE;
  TomoRowPrefetch *prefetch;

  dir = tomo_test_make_tmp_dir ("tomo-gpu-pre-XXXXXX");
  path = write_uint16_scan (dir);
  scan = tomo_test_open_scan (path);
  g_assert_cmpint (tomo_scan_get_raw_dtype (scan), ==, TOMO_DTYPE_UINT16);
  tomo_scan_get_preprocessing (scan, &normalise, &apply_log);
  g_assert_true (normalise && apply_log);

  prefetch = tomo_row_prefetch_new_raw (scan, 2, VH, 2, 3);
  for (guint r = 2; r < VH; r++)
    {
      TomoPreprocessStats a = { 0 }, b = { 0 };

      memset (flat, 0, sizeof flat);
      g_assert_true (tomo_row_prefetch_take_raw (prefetch, r, raw, flat, dark, &error));
      g_assert_no_error (error);
      g_assert_true (tomo_scan_read_raw_sinogram (scan, r, rawf, &error));
      for (gsize i = 0; i < (gsize) VP * VW; i++)
        {
          g_assert_cmpfloat (rawf[i], ==, (float) raw[i]);
          conv[i] = raw[i];
        }
      g_assert_cmpuint (raw[17], ==, 0);
      g_assert_cmpfloat (flat[5], ==, 40000 + 37 * 5 + 5.5f);
      g_assert_cmpfloat (dark[5], ==, 90 + 5 + 0.5f);
      tomo_preprocess_row (conv, VP, VW, &(TomoFlatField) { flat, dark, TRUE }, conv, &a);
      g_assert_true (tomo_scan_read_sinogram (scan, r, ref, &b, &error));
      g_assert_no_error (error);
      g_assert_cmpmem (conv, (gsize) VP * VW * sizeof (float), ref, (gsize) VP * VW * sizeof (float));
      g_assert_cmpuint (a.n_nonpositive, ==, b.n_nonpositive);
      g_assert_cmpuint (a.n_nonpositive, >=, VP);
    }
  tomo_row_prefetch_free (prefetch);
  g_clear_object (&scan);
  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

typedef struct
{
  TomoInterp interp;
  TomoKernel kernel;
  double tol;   /* against GPU slices of the same kernel */
  double tilt;  /* degrees: the scan's axis tilt corrected (rows resampled) */
} VolumeCase;

static void
test_volume_raw (gconstpointer data)
{
  const VolumeCase *vc = data;
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoScan) file = NULL;
  g_autoptr(TomoEngine) gpu = tomo_engine_new (TOMO_BACKEND_CPU);
  g_autoptr(TomoEngine) cpu = tomo_engine_new (TOMO_BACKEND_CPU);
  g_autoptr(TomoEngine) host = tomo_engine_new (TOMO_BACKEND_CPU);
  g_autoptr(GError) error = NULL;
  g_auto(TomoTestVolume) collected = { 0 };
  TomoPreprocessStats cpu_counts = { 0 };
  g_autofree float *sino = g_new (float, (gsize) VP * VW);
  TomoVolumeStats st;
  TomoReconParams params;
  double worst_gpu = 0, worst_cpu = 0, worst_host = 0, least_untilted = G_MAXDOUBLE;
  guint n_far = 0;

  if (!tomo_test_need_gpu (NO_GPU))
    return;
  dir = tomo_test_make_tmp_dir ("tomo-gpu-pre-XXXXXX");
  path = write_uint16_scan (dir);
  file = tomo_test_open_scan (path);
  g_assert_cmpint (tomo_scan_get_dtype (file), ==, TOMO_DTYPE_UINT16);
  g_assert_cmpint (tomo_scan_get_raw_dtype (file), ==, TOMO_DTYPE_UINT16);
  /* A tilt correction's rows are the file's rows resampled: the volume
   * still uploads the file's counts, then preprocesses and resamples them
   * on the device, where the slices get them from the CPU. */
  scan = tomo_geometry_correct_tilt (file, vc->tilt, &error);
  g_assert_no_error (error);
  g_assert_true (tomo_engine_set_backend (gpu, TOMO_BACKEND_GPU, &error));
  g_assert_no_error (error);
  tomo_engine_set_scan (gpu, scan);
  tomo_engine_set_scan (cpu, scan);
  /* The GPU on rows preprocessed (and resampled) on the host. */
  g_assert_true (tomo_engine_set_backend (host, TOMO_BACKEND_GPU, &error));
  g_assert_no_error (error);
  tomo_engine_set_device_preprocess (host, FALSE);
  tomo_engine_set_scan (host, scan);

  tomo_recon_params_init (&params, VW);
  params.center = (VW - 1) / 2.0 + 3.37;
  params.interp = vc->interp;
  /* Rows 2..8: two packs of four, the second one short by one. */
  tomo_test_volume_init (&collected, 2, 0, 0);
  g_assert_true (tomo_engine_reconstruct_volume (gpu, 2, VH, &params, vc->kernel,
                                                 tomo_test_volume_sink, NULL, &collected, NULL,
                                                 &error));
  g_assert_no_error (error);
  g_assert_cmpuint (collected.slices->len, ==, VH - 2);
  tomo_engine_get_volume_stats (gpu, &st);
  g_assert_true (st.gpu_preprocess);

  for (guint r = 2; r < VH; r++)
    {
      TomoSliceRequest request;
      g_autoptr(TomoSlice) gs = NULL;
      g_autoptr(TomoSlice) cs = NULL;
      g_autoptr(TomoSlice) hs = NULL;
      const float *plane = collected.slices->pdata[r - 2];

      g_assert_true (tomo_scan_read_sinogram (file, r, sino, &cpu_counts, &error));
      g_assert_no_error (error);
      tomo_slice_request_init (&request, scan);
      request.row = r;
      request.params = params;
      request.kernel = vc->kernel;
      gs = tomo_engine_reconstruct (gpu, &request, NULL, &error);
      g_assert_no_error (error);
      cs = tomo_engine_reconstruct (cpu, &request, NULL, &error);
      g_assert_no_error (error);
      hs = tomo_engine_reconstruct (host, &request, NULL, &error);
      g_assert_no_error (error);
      /* Slices of a tilt-corrected scan take the device path too. */
      g_assert_true (gs->device_preprocess);
      g_assert_false (hs->device_preprocess);
      worst_host = MAX (worst_host, tomo_test_rel_l2 (plane, hs->data, (gsize) VW * VW));
      worst_host = MAX (worst_host, tomo_test_rel_l2 (gs->data, hs->data, (gsize) VW * VW));
      worst_gpu = MAX (worst_gpu, tomo_test_rel_l2 (plane, gs->data, (gsize) VW * VW));
      worst_cpu = MAX (worst_cpu, tomo_test_rel_l2 (plane, cs->data, (gsize) VW * VW));
      if (vc->tilt != 0.0 && fabs (r - (VH - 1) / 2.0) >= 2)
        {
          /* Rows 2 or more from the middle one move by 0.35 px or more:
           * the resampling is there to be seen. */
          g_autoptr(TomoSlice) us = NULL;

          tomo_engine_set_scan (cpu, file);
          us = tomo_engine_reconstruct (cpu, &request, NULL, &error);
          g_assert_no_error (error);
          tomo_engine_set_scan (cpu, scan);
          least_untilted = MIN (least_untilted, tomo_test_rel_l2 (plane, us->data, (gsize) VW * VW));
          n_far++;
        }
    }
  /* The dead column is clamped in every projection of every row, and the
   * device counted exactly what the CPU counts. */
  g_assert_cmpuint (st.n_values, ==, cpu_counts.n_values);
  g_assert_cmpuint (st.n_nonpositive, ==, cpu_counts.n_nonpositive);
  g_assert_cmpuint (st.n_nonfinite, ==, cpu_counts.n_nonfinite);
  g_assert_cmpuint (st.n_nonpositive, >=, (guint64) (VH - 2) * VP);

  g_test_message ("raw-upload volume (tilt %g°) vs GPU slices: rel L2 %.3g (tolerance %g); volume "
                  "and device slices vs GPU slices of host-preprocessed rows %.3g; vs CPU slices "
                  "%.3g", vc->tilt, worst_gpu, vc->tol, worst_host, worst_cpu);
  if (vc->tilt != 0.0)
    {
      g_test_message ("the volume vs the uncorrected rows 2 or more from the middle (%u rows): rel L2 "
                      "≥ %.3g", n_far, least_untilted);
      g_assert_cmpuint (n_far, >=, 3);
      /* Far above the float kernels' rounding (1e-5): what the 1e-5
       * agreement of the standard case says is the resampling's. */
      g_assert_cmpfloat (least_untilted, >=, 2e-4);
    }
  /* The same kernel on the same line integrals: float kernels agree to
   * rounding; the auto kernel's four slices in halves (against one slice
   * in floats) to the 1e-2 of test-gpu's volume case. */
  g_assert_cmpfloat (worst_gpu, <=, vc->tol);
  /* Preprocessing (and resampling) on the device gives the host's floats
   * to rounding: the same kernel, the same tolerance. */
  g_assert_cmpfloat (worst_host, <=, vc->tol);
  /* Against the CPU reference a wrong preprocessing (no −log, flats of
   * another row) is an error of order one; kernels differ by < 1e-2 here
   * (the dead column's streak is sharp). */
  g_assert_cmpfloat (worst_cpu, <=, 1e-2);

  g_clear_object (&scan);
  g_clear_object (&file);
  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  static const PreCase cases[] = {
    { "uint16-flat-dark-log", TOMO_GPU_RAW_UINT16, TRUE, TRUE, FALSE },
    { "uint16-flat-dark-nolog", TOMO_GPU_RAW_UINT16, TRUE, FALSE, FALSE },
    { "float32-bad-values", TOMO_GPU_RAW_FLOAT32, TRUE, TRUE, TRUE },
    { "float32-normalised-log", TOMO_GPU_RAW_FLOAT32, FALSE, TRUE, TRUE },
    { "float32-linear", TOMO_GPU_RAW_FLOAT32, FALSE, FALSE, TRUE },
  };
  static const VolumeCase volume_cases[] = {
    { TOMO_INTERP_LINEAR, TOMO_KERNEL_STANDARD, 1e-5 },
    { TOMO_INTERP_NEAREST, TOMO_KERNEL_ALU, 1e-5 },
    { TOMO_INTERP_LINEAR, TOMO_KERNEL_AUTO, 1e-2 },
    { TOMO_INTERP_LINEAR, TOMO_KERNEL_STANDARD, 1e-5, 10.0 },
    { TOMO_INTERP_LINEAR, TOMO_KERNEL_AUTO, 1e-2, -10.0 },
  };

  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/tomo/gpu/preprocess/%s", cases[i].name);
      g_test_add_data_func (name, &cases[i], test_preprocess_case);
    }
  g_test_add_func ("/tomo/gpu/preprocess/bad-args", test_preprocess_bad_args);
  g_test_add_func ("/tomo/gpu/preprocess/raw-rows", test_raw_rows);
  g_test_add_func ("/tomo/gpu/preprocess/bad-map", test_bad_map);
  g_test_add_data_func ("/tomo/gpu/preprocess/volume-uint16/standard-linear", &volume_cases[0],
                        test_volume_raw);
  g_test_add_data_func ("/tomo/gpu/preprocess/volume-uint16/alu-nearest", &volume_cases[1],
                        test_volume_raw);
  g_test_add_data_func ("/tomo/gpu/preprocess/volume-uint16/auto-linear", &volume_cases[2],
                        test_volume_raw);
  g_test_add_data_func ("/tomo/gpu/preprocess/volume-uint16/tilt-standard-linear",
                        &volume_cases[3], test_volume_raw);
  g_test_add_data_func ("/tomo/gpu/preprocess/volume-uint16/tilt-auto-linear", &volume_cases[4],
                        test_volume_raw);
  return g_test_run ();
}
