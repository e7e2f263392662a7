/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The engine's centre sweep (tomo_engine_reconstruct_centers and its
 * non-blocking form): N candidates of one row in one request equal N single
 * reconstructions — bit for bit on the CPU, within the 4-slice path's half
 * precision (relative L2 1e-2) on the GPU, which is skipped without one;
 * an offset-axis scan's candidates, each stitched about itself, as the
 * window's CPU sweep makes them.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-center-engine.h"
#include "tomo-engine.h"
#include "tomo-error.h"
#include "tomo-geometry.h"
#include "tomo-phantom.h"
#include "tomo-scan-private.h"
#include "tomo-test-util.h"

static char *tmp_dir;
static char *scan_path;

#define WIDTH 96
#define HEIGHT 4
#define N_PROJ 90
#define ROW 2

static void
init_request (TomoSliceRequest *request,
              TomoScan         *scan)
{
  tomo_slice_request_init (request, scan);
  request->row = ROW;
}

/* Relative L2 of a candidate against its single reconstruction inside the
 * disc every candidate's detector covers (radius: the nearest distance of a
 * centre to a detector edge, less a pixel).  Outside it the GPU's packed
 * candidates read zeros where a shifted copy of the row ends, by design. */
static double
rel_l2_in_common_disc (const float      *got,
                       const float      *want,
                       const TomoSlice  *slice,
                       const TomoRoi    *roi,
                       const double     *centers,
                       guint             n)
{
  double radius = INFINITY, err2 = 0, ref2 = 0;

  for (guint i = 0; i < n; i++)
    radius = MIN (radius, MIN (centers[i], WIDTH - 1 - centers[i]) - 1.0);
  for (guint y = 0; y < slice->height; y++)
    for (guint x = 0; x < slice->width; x++)
      {
        double dx = roi->x + x - (WIDTH - 1) / 2.0, dy = roi->y + y - (WIDTH - 1) / 2.0;
        double d = got[(gsize) y * slice->width + x] - want[(gsize) y * slice->width + x];

        if (dx * dx + dy * dy > radius * radius)
          continue;
        err2 += d * d;
        ref2 += (double) want[(gsize) y * slice->width + x] * want[(gsize) y * slice->width + x];
      }
  g_assert_cmpfloat (ref2, >, 0);
  return sqrt (err2 / ref2);
}

/* Each candidate of the sweep against a single reconstruction at its
 * centre; max relative L2 error returned (the CPU: over the whole slice;
 * the GPU: inside the disc all candidates cover). */
static double
sweep_against_singles (TomoBackend   backend,
                       const double *centers,
                       guint         n,
                       gboolean      zoom)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoEngine) engine = tomo_engine_new (backend);
  g_autoptr(TomoEngine) single = tomo_engine_new (backend);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoSlice) sweep = NULL;
  TomoSliceRequest request;
  double worst = 0;
  gsize plane;

  g_assert_cmpint (tomo_engine_get_backend (engine), ==, backend);
  tomo_engine_set_scan (engine, scan);
  tomo_engine_set_scan (single, scan);
  init_request (&request, scan);
  if (zoom)
    {
      request.params.roi = (TomoRoi) { 20, 30, 40, 24 };
    }
  sweep = tomo_engine_reconstruct_centers (engine, &request, centers, n, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sweep);
  g_assert_cmpuint (sweep->n_slices, ==, n);
  g_assert_cmpstr (sweep->kernel, ==, "centers");
  g_assert_true (sweep->values.valid);
  plane = (gsize) sweep->width * sweep->height;
  if (zoom)
    {
      g_assert_cmpuint (sweep->width, ==, 40);
      g_assert_cmpuint (sweep->height, ==, 24);
    }
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(TomoSlice) one = NULL;

      request.params.center = centers[i];
      one = tomo_engine_reconstruct (single, &request, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (one->width, ==, sweep->width);
      g_assert_cmpuint (one->height, ==, sweep->height);
      if (backend == TOMO_BACKEND_CPU)
        g_assert_cmpmem (sweep->data + i * plane, plane * sizeof (float), one->data,
                         plane * sizeof (float));
      worst = MAX (worst, backend == TOMO_BACKEND_CPU
                            ? tomo_test_rel_l2 (sweep->data + i * plane, one->data, plane)
                            : rel_l2_in_common_disc (sweep->data + i * plane, one->data, sweep,
                                                     &request.params.roi, centers, n));
    }
  /* The candidates differ from each other: the centres were used. */
  g_assert_cmpfloat (tomo_test_rel_l2 (sweep->data, sweep->data + (n - 1) * plane, plane), >,
                     1e-2);
  return worst;
}

static const double whole_px[] = { 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0 };
static const double sub_px[] = { 46.3, 46.6, 46.9, 47.2, 47.5, 47.8, 48.1 };

static void
test_cpu_equals_singles (void)
{
  g_assert_cmpfloat (sweep_against_singles (TOMO_BACKEND_CPU, whole_px, G_N_ELEMENTS (whole_px), FALSE), ==, 0.0);
  g_assert_cmpfloat (sweep_against_singles (TOMO_BACKEND_CPU, sub_px, G_N_ELEMENTS (sub_px), TRUE), ==, 0.0);
}

static void
test_gpu_equals_singles (void)
{
  double err;

  if (!tomo_test_need_gpu ("the GPU centre sweep cannot run here"))
    return;
  err = sweep_against_singles (TOMO_BACKEND_GPU, whole_px, G_N_ELEMENTS (whole_px), FALSE);
  g_test_message ("GPU sweep, whole-pixel steps: rel L2 %.2e", err);
  g_assert_cmpfloat (err, <, 1e-2);
  err = sweep_against_singles (TOMO_BACKEND_GPU, sub_px, G_N_ELEMENTS (sub_px), TRUE);
  g_test_message ("GPU sweep, 0.3 px steps, zoomed: rel L2 %.2e", err);
  g_assert_cmpfloat (err, <, 1e-2);
}

static void
test_bad_requests (void)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoEngine) engine = tomo_engine_new (TOMO_BACKEND_CPU);
  TomoSliceRequest request;
  const double bad[] = { 47.0, NAN };
  GError *error = NULL;

  tomo_engine_set_scan (engine, scan);
  init_request (&request, scan);
  TOMO_TEST_ASSERT_FAILS (tomo_engine_reconstruct_centers (engine, &request, whole_px, 0, NULL, &error),
                          error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  TOMO_TEST_ASSERT_FAILS (tomo_engine_reconstruct_centers (engine, &request, bad, 2, NULL, &error),
                          error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  request.n_slices = 4;
  TOMO_TEST_ASSERT_FAILS (tomo_engine_reconstruct_centers (engine, &request, whole_px, 3, NULL, &error),
                          error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  request.n_slices = 1;
  request.row = HEIGHT;
  TOMO_TEST_ASSERT_FAILS (tomo_engine_reconstruct_centers (engine, &request, whole_px, 3, NULL, &error),
                          error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
}

/* Each candidate scored where it is reconstructed (request->negativity):
 * on the CPU exactly tomo_center_negativity() of its plane, on the GPU the
 * same on its downloaded plane but for the order of the sums (1e-9); with
 * skip_download the GPU's planes stay on the device and only the
 * statistics and scores come back, within the hybrid kernel's
 * launch-to-launch differences (1e-3) of the downloaded ones. */
static void
test_negativity (gconstpointer data)
{
  TomoBackend backend = GPOINTER_TO_INT (data);
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) sweep = NULL, scored = NULL;
  g_autoptr(GError) error = NULL;
  TomoSliceRequest request;
  const guint n = G_N_ELEMENTS (whole_px);
  gsize plane;
  guint best = 0;

  if (!tomo_test_need_backend (backend, "the GPU centre sweep cannot run here"))
    return;
  scan = tomo_test_open_scan (scan_path);
  engine = tomo_test_engine_new (backend, scan);
  init_request (&request, scan);
  request.negativity = TRUE;
  sweep = tomo_engine_reconstruct_centers (engine, &request, whole_px, n, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sweep->data);
  g_assert_nonnull (sweep->negativity);
  plane = (gsize) sweep->width * sweep->height;
  for (guint i = 0; i < n; i++)
    {
      double want = tomo_center_negativity (sweep->data + i * plane, sweep->width, sweep->height);

      g_test_message ("%s: candidate %.1f negativity %.6e (host %.6e)",
                      tomo_backend_to_string (backend), whole_px[i], sweep->negativity[i], want);
      g_assert_cmpfloat (want, >, 0);
      if (backend == TOMO_BACKEND_CPU)
        g_assert_cmpfloat (sweep->negativity[i], ==, want);
      else
        g_assert_cmpfloat (fabs (sweep->negativity[i] - want), <=, 1e-9 * want);
      if (sweep->negativity[i] < sweep->negativity[best])
        best = i;
    }
  /* The phantom's axis (49) is the sharpest of 45 … 53. */
  g_assert_cmpfloat (whole_px[best], ==, 49.0);

  request.skip_download = TRUE;
  scored = tomo_engine_reconstruct_centers (engine, &request, whole_px, n, NULL, &error);
  g_assert_no_error (error);
  g_assert_true ((scored->data == NULL) == (backend == TOMO_BACKEND_GPU));
  g_assert_null (scored->device_buffer);
  g_assert_true (scored->values.valid);
  g_assert_cmpuint (scored->values.n_finite, ==, sweep->values.n_finite);
  for (guint i = 0; i < n; i++)
    g_assert_cmpfloat (fabs (scored->negativity[i] - sweep->negativity[i]), <=,
                       1e-3 * sweep->negativity[i]);
}

/* A sweep submitted next to a slice request replaces neither: both are
 * answered; of several sweeps, the last always is, and each one's user
 * data is freed. */
static void
test_submit_beside_slices (void)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoEngine) engine = tomo_engine_new (TOMO_BACKEND_CPU);
  TomoSliceRequest request;
  g_auto(TomoTestAnswers) slices = { 0 };
  g_auto(TomoTestAnswers) sweeps = { 0 };
  const double last[] = { 44.0, 48.5 };

  tomo_engine_set_scan (engine, scan);
  init_request (&request, scan);
  tomo_engine_submit (engine, &request, tomo_test_answers_cb, &slices);
  tomo_engine_submit_centers (engine, &request, whole_px, G_N_ELEMENTS (whole_px),
                              tomo_test_answers_cb, &sweeps, tomo_test_answers_freed);
  tomo_engine_submit_centers (engine, &request, last, G_N_ELEMENTS (last),
                              tomo_test_answers_cb, &sweeps, tomo_test_answers_freed);
  for (gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
       (slices.n_answers < 1 || sweeps.slice == NULL || sweeps.slice->n_slices != 2)
       && g_get_monotonic_time () < end;)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (slices.n_errors + sweeps.n_errors, ==, 0);
  g_assert_cmpuint (slices.n_answers, ==, 1);
  g_assert_nonnull (sweeps.slice);
  g_assert_cmpuint (sweeps.slice->n_slices, ==, 2);
  g_assert_cmpuint (sweeps.n_answers, >=, 1);
  g_assert_cmpuint (sweeps.n_answers, <=, 2);
  /* Each sweep's user data freed once: after its answer or when dropped. */
  g_assert_cmpuint (sweeps.n_freed, ==, 2);
}

/* find-center's sweep with the candidates on an engine of the backend
 * `data`: on the sample scan (axis 255.5 + 3.37) within the issue's
 * 0.25 px, and on the CPU engine within 0.1 px of the estimate's own CPU
 * sweep. */
static void
test_sweep_engine (gconstpointer data)
{
  TomoBackend backend = GPOINTER_TO_INT (data);
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree float *sino = NULL;
  TomoCenterResult on_engine, own;
  guint row;

  if (!tomo_test_need_backend (backend, "the GPU centre sweep cannot run here"))
    return;
  if (sample == NULL)
    {
      g_test_skip ("TOMO_SAMPLE_SCAN is not set (run through meson test)");
      return;
    }
  scan = tomo_test_open_scan (sample);
  engine = tomo_test_engine_new (backend, scan);
  row = tomo_scan_get_height (scan) / 2;
  g_assert_true (tomo_center_sweep_engine (engine, row, 255.5 + 2.0, 4.0, &on_engine, &error));
  g_assert_no_error (error);
  g_test_message ("sweep on the %s engine: %.3f (truth %.3f)",
                  backend == TOMO_BACKEND_GPU ? "GPU" : "CPU", on_engine.center, 255.5 + 3.37);
  g_assert_cmpint (on_engine.method, ==, TOMO_CENTER_METHOD_SWEEP);
  g_assert_cmpfloat (fabs (on_engine.center - (255.5 + 3.37)), <, 0.25);

  sino = g_new (float, (gsize) tomo_scan_get_n_projections (scan) * tomo_scan_get_width (scan));
  g_assert_true (tomo_scan_read_sinogram (scan, row, sino, NULL, &error));
  g_assert_true (tomo_center_sweep (&(TomoSinogram) { sino, tomo_scan_get_n_projections (scan),
                                                      tomo_scan_get_width (scan),
                                                      tomo_scan_get_angles (scan) },
                                    255.5 + 2.0, 4.0, &own, &error));
  g_assert_no_error (error);
  g_test_message ("the estimate's own CPU sweep: %.3f", own.center);
  g_assert_cmpfloat (fabs (on_engine.center - own.center), <, 0.1);
}

/* The window's sweep of an offset-axis scan, each candidate in the rows
 * stitched about it, on an engine of the backend `data`: the images within
 * 1e-5 (CPU engine) or 3e-3 (GPU) relative L2 of the CPU sweep of the
 * same stitched rows (tomo_geometry_stitch + tomo_center_sweep_scores), the
 * scores within 1e-6 (CPU) or 5 % (GPU) of its, and the sharpest candidate
 * the axis the scan was made with.  A candidate that cannot be stitched is
 * named. */
static void
test_sweep_stitched (gconstpointer data)
{
  TomoBackend backend = GPOINTER_TO_INT (data);
  const guint w = 128, n = 360, n_c = 5;
  const double axis = w - 1 - 20.5;
  g_autofree char *dir = NULL, *path = NULL;
  g_autoptr(TomoScan) base = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree float *sino = NULL, *images = NULL, *reference = NULL;
  double centers[5], scores[5], ref_scores[5], bad[1] = { 1000.0 };
  guint best = 0, ref_best = 0, size = 0, zoomed = 0;
  TomoPhantomParams p;

  if (!tomo_test_need_backend (backend, "the GPU centre sweep cannot run here"))
    return;
  dir = tomo_test_make_tmp_dir ("tomo-stitch-sweep-XXXXXX");
  path = g_build_filename (dir, "offset.h5", NULL);
  tomo_test_phantom_params (&p, w, HEIGHT, n);
  p.kind = TOMO_PHANTOM_DISKS;
  p.angle_range_deg = 360.0;
  p.center = axis;
  p.object_width = 2 * w - 50;
  p.max_attenuation = 4.0 / p.object_width;
  g_assert_true (tomo_phantom_write_dxchange (&p, path, &error));
  g_assert_no_error (error);
  base = tomo_test_open_scan (path);
  engine = tomo_test_engine_new (backend, base);
  for (guint i = 0; i < n_c; i++)
    centers[i] = axis + (i - 2.0) * 3.0;
  /* The whole of the narrowest slice: the candidate farthest in. */
  g_assert_true (tomo_center_stitched_width (base, centers, n_c, &size, &error));
  g_assert_no_error (error);
  images = g_new (float, (gsize) n_c * size * size);
  g_assert_true (tomo_center_sweep_stitched (engine, base, ROW, centers, n_c, size, images, scores,
                                             NULL, &error));
  g_assert_no_error (error);
  {
    TomoGeometry g = { TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY };
    TomoGeometryPlan first, last;

    g_assert_true (tomo_geometry_resolve (base, &g, centers[0], &first, &error));
    g_assert_true (tomo_geometry_resolve (base, &g, centers[n_c - 1], &last, &error));
    g_assert_cmpuint (size, ==, first.width);
    g_assert_cmpuint (size, <, last.width);
  }
  reference = g_new (float, (gsize) n_c * size * size);

  sino = g_new (float, (gsize) n * w);
  g_assert_true (tomo_scan_read_sinogram (base, ROW, sino, NULL, &error));
  for (guint i = 0; i < n_c; i++)
    {
      TomoSinogram raw = { sino, n, w, tomo_scan_get_angles (base) };
      TomoStitched st = { 0 };
      double rel;

      g_assert_true (tomo_geometry_stitch (&raw, centers[i], path, &st, &error));
      g_assert_no_error (error);
      {
        TomoSinogram s = { st.data, st.n_proj, st.width, st.angles };
        TomoRoi view = { (st.width - size) / 2, (st.width - size) / 2, size, size };
        TomoCenterCandidates one = { &st.center, 1, TOMO_CENTER_SCORE_NEGATIVITY, 0, &view,
                                     reference + (gsize) i * size * size };

        g_assert_true (tomo_center_sweep_scores (&s, &one, &ref_scores[i], &error));
        g_assert_no_error (error);
      }
      g_free (st.data);
      g_free (st.angles);
      rel = tomo_test_rel_l2 (images + (gsize) i * size * size, reference + (gsize) i * size * size,
                              (gsize) size * size);
      g_test_message ("candidate %.2f: negativity %.4e (CPU sweep %.4e), images %.2e apart",
                      centers[i], scores[i], ref_scores[i], rel);
      g_assert_cmpfloat (rel, <, backend == TOMO_BACKEND_GPU ? 3e-3 : 1e-5);
      g_assert_cmpfloat (fabs (scores[i] - ref_scores[i]), <=,
                         (backend == TOMO_BACKEND_GPU ? 0.05 : 1e-6) * ref_scores[i] + 1e-12);
      if (scores[i] < scores[best])
        best = i;
      if (ref_scores[i] < ref_scores[ref_best])
        ref_best = i;
    }
  g_assert_cmpuint (best, ==, 2);
  /* A smaller view (no images kept): the same whole-slice scores; a view
   * wider than a candidate's slice is refused. */
  g_assert_true (tomo_center_sweep_stitched (engine, base, ROW, centers, n_c, 64, NULL, ref_scores,
                                             NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < n_c; i++)
    g_assert_cmpfloat (fabs (ref_scores[i] - scores[i]), <=,
                       (backend == TOMO_BACKEND_GPU ? 1e-2 : 0.0) * scores[i]);
  g_assert_false (tomo_center_sweep_stitched (engine, base, ROW, centers, n_c, size + 1, NULL,
                                              ref_scores, NULL, &error));
  g_assert_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "narrower than"));
  g_clear_error (&error);
  g_assert_cmpuint (ref_best, ==, 2);
  /* The engine holds the last candidate's stitched scan. */
  g_assert_true (tomo_geometry_get_mapped_source (tomo_engine_get_scan (engine)) == base);

  /* A candidate off the detector cannot be stitched: no crash, the
   * candidate named. */
  g_assert_false (tomo_center_stitched_width (base, bad, 1, &zoomed, &error));
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, "Candidate 1000.00 px"));
  g_clear_error (&error);
  g_assert_false (tomo_center_sweep_stitched (engine, base, ROW, bad, 1, 64, NULL, scores, NULL,
                                              &error));
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "Candidate 1000.00 px"));
  g_clear_object (&engine);
  g_clear_object (&base);
  tomo_test_remove_tree (dir);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  scan_path = tomo_test_write_phantom (WIDTH, HEIGHT, N_PROJ, 1.5, &tmp_dir);

  g_test_add_func ("/tomo/engine/centers/cpu-equals-singles", test_cpu_equals_singles);
  g_test_add_func ("/tomo/engine/centers/gpu-equals-singles", test_gpu_equals_singles);
  g_test_add_func ("/tomo/engine/centers/bad-requests", test_bad_requests);
  g_test_add_data_func ("/tomo/engine/centers/negativity-cpu", GINT_TO_POINTER (TOMO_BACKEND_CPU),
                        test_negativity);
  g_test_add_data_func ("/tomo/engine/centers/negativity-gpu", GINT_TO_POINTER (TOMO_BACKEND_GPU),
                        test_negativity);
  g_test_add_func ("/tomo/engine/centers/submit-beside-slices", test_submit_beside_slices);
  g_test_add_data_func ("/tomo/engine/centers/find-center-sweep-cpu",
                        GINT_TO_POINTER (TOMO_BACKEND_CPU), test_sweep_engine);
  g_test_add_data_func ("/tomo/engine/centers/find-center-sweep-gpu",
                        GINT_TO_POINTER (TOMO_BACKEND_GPU), test_sweep_engine);
  g_test_add_data_func ("/tomo/engine/centers/sweep-stitched-cpu",
                        GINT_TO_POINTER (TOMO_BACKEND_CPU), test_sweep_stitched);
  g_test_add_data_func ("/tomo/engine/centers/sweep-stitched-gpu",
                        GINT_TO_POINTER (TOMO_BACKEND_GPU), test_sweep_stitched);
  return tomo_test_run_and_remove_scan (scan_path, tmp_dir);
}
