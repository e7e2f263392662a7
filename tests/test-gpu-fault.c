/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Device faults on a healthy GPU, through tomo_gpu_fault_configure() (the
 * CLI and the viewer read the same settings from TOMO_GPU_FAIL and
 * TOMO_GPU_MEMORY_LIMIT): an allocation failing at the start of a volume
 * falls back to smaller groups; a capped device memory gives a clear error;
 * a failed launch or a lost device is an error that moves the engine to
 * the CPU backend, which then works.  The cases that need a device skip
 * without one; the settings' parsing runs everywhere.
 */
#include "config.h"

#include <string.h>

#include "tomo-backend.h"
#include "tomo-engine.h"
#include "tomo-error.h"
#include "tomo-filter.h"
#include "tomo-gpu.h"
#include "tomo-gpu-store.h"
#include "tomo-test-util.h"

#define WIDTH 256
#define HEIGHT 12
#define N_PROJ 180
#define CENTER 130.87

static char *tmp_dir;
static char *scan_path;
static gboolean have_gpu;

static gboolean
skip_without_gpu (void)
{
  if (!have_gpu)
    g_test_skip ("no CUDA device (or tomolive built without CUDA)");
  return !have_gpu;
}

static void
clear_faults (void)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (tomo_gpu_fault_configure (NULL, 0, &error));
  g_assert_no_error (error);
}

/* A GPU engine on its own copy of the scan, or NULL (test skipped). */
static TomoEngine *
gpu_engine_or_skip (void)
{
  g_autoptr(TomoScan) scan = NULL;

  if (skip_without_gpu ())
    return NULL;
  scan = tomo_test_open_scan (scan_path);
  return tomo_test_engine_new (TOMO_BACKEND_GPU, scan);
}

static TomoSlice *
reconstruct (TomoEngine *engine,
             GError    **error)
{
  TomoSliceRequest request;

  tomo_slice_request_init (&request, tomo_engine_get_scan (engine));
  request.row = HEIGHT / 2;
  request.params.center = CENTER;
  return tomo_engine_reconstruct (engine, &request, NULL, error);
}

static gboolean
volume (TomoEngine *engine,
        float      *out,
        GError    **error)
{
  g_auto(TomoTestVolume) v = { 0 };
  TomoReconParams params;
  gsize plane = (gsize) WIDTH * WIDTH;

  tomo_test_volume_init (&v, 0, WIDTH, WIDTH);
  tomo_recon_params_init (&params, WIDTH);
  params.center = CENTER;
  if (!tomo_engine_reconstruct_volume (engine, 0, HEIGHT, &params, TOMO_KERNEL_AUTO,
                                       tomo_test_volume_sink, NULL, &v, NULL, error))
    return FALSE;
  for (guint row = 0; row < v.slices->len; row++)
    memcpy (out + row * plane, v.slices->pdata[row], plane * sizeof (float));
  return TRUE;
}

/* Bad settings are refused with the value named, on any build. */
static void
test_spec (void)
{
  const char *bad[] = { "boom", "alloc:", "alloc:0", "launch:-1", "lost:x", "alloca", ":3" };
  const char *good[] = { "alloc", "alloc:3", "launch:1", "lost:7", "keep", "keep:2", "" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (tomo_gpu_fault_configure (bad[i], 0, &error));
      g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, bad[i]));
    }
  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_true (tomo_gpu_fault_configure (good[i], 0, &error));
      g_assert_no_error (error);
    }
  clear_faults ();
}

/* The first device allocation of the volume fails: the pipeline takes the
 * next smaller group and the volume equals the one made without fault. */
static void
test_alloc_falls_back (void)
{
  g_autoptr(TomoEngine) engine = gpu_engine_or_skip ();
  g_autoptr(GError) error = NULL;
  g_autofree float *expect = NULL, *got = NULL;
  TomoVolumeStats stats;
  guint full_pack;

  if (engine == NULL)
    return;
  expect = g_new (float, (gsize) HEIGHT * WIDTH * WIDTH);
  got = g_new (float, (gsize) HEIGHT * WIDTH * WIDTH);
  clear_faults ();
  g_assert_true (volume (engine, expect, &error));
  g_assert_no_error (error);
  tomo_engine_get_volume_stats (engine, &stats);
  full_pack = stats.pack;
  g_test_message ("pack without fault: %u", full_pack);

  g_assert_true (tomo_gpu_fault_configure ("alloc:1", 0, &error));
  g_assert_true (volume (engine, got, &error));
  g_assert_no_error (error);
  tomo_engine_get_volume_stats (engine, &stats);
  g_test_message ("pack after the failed allocation: %u", stats.pack);
  if (full_pack > 1)
    g_assert_cmpuint (stats.pack, <, full_pack);
  g_assert_cmpint (tomo_engine_get_backend (engine), ==, TOMO_BACKEND_GPU);
  /* Other packings take other kernels (4-slice linear samples half-precision
   * textures): rel L2 1.4e-4 between 4 and 2 slices on the H100. */
  g_assert_cmpfloat (tomo_test_rel_l2 (got, expect, (gsize) HEIGHT * WIDTH * WIDTH), <, 1e-3);
  clear_faults ();
}

/* Device memory capped below one slice's needs: a clear error that names
 * the cap; the GPU backend stays (out of memory is not a fault). */
static void
test_memory_cap (void)
{
  g_autoptr(TomoEngine) engine = gpu_engine_or_skip ();
  g_autoptr(GError) error = NULL;
  g_autofree float *got = NULL;

  if (engine == NULL)
    return;
  got = g_new (float, (gsize) HEIGHT * WIDTH * WIDTH);
  g_assert_true (tomo_gpu_fault_configure (NULL, 64 * 1024, &error));
  g_assert_false (volume (engine, got, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "does not fit the GPU"));
  g_assert_nonnull (strstr (error->message, "TOMO_GPU_MEMORY_LIMIT"));
  g_assert_cmpint (tomo_engine_get_backend (engine), ==, TOMO_BACKEND_GPU);
  clear_faults ();
}

/* A float store of `n_rows` rows of n_proj × width, or NULL and the error. */
static TomoGpuStore *
store_new (guint       width,
           guint       n_proj,
           guint       n_rows,
           TomoGpuStorePrecision precision,
           GError    **error)
{
  g_autofree double *angles = tomo_test_half_turn (n_proj);

  return tomo_gpu_store_new (0, width, n_proj, angles, 0, n_rows, precision, 0, error);
}

/* The cap counts what this process added since its first allocation: when
 * the device's use falls below that baseline (memory freed that was in use
 * before), later allocations are not refused as if the process held more
 * than everything. */
static void
test_cap_below_baseline (void)
{
  g_autoptr(GError) error = NULL;
  TomoGpuStore *big, *small;

  if (skip_without_gpu ())
    return;
  clear_faults ();
  big = store_new (1024, 1024, 256, TOMO_GPU_STORE_FLOAT, &error);   /* 1 GiB */
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_fault_configure (NULL, 2ull << 30, &error));
  small = store_new (64, 16, 4, TOMO_GPU_STORE_FLOAT, &error);        /* the baseline, with `big` */
  g_assert_no_error (error);
  tomo_gpu_store_free (small);
  tomo_gpu_store_free (big);                                          /* 1 GiB below it */
  small = store_new (64, 16, 4, TOMO_GPU_STORE_FLOAT, &error);
  g_assert_no_error (error);
  g_assert_nonnull (small);
  tomo_gpu_store_free (small);
  clear_faults ();
}

static gboolean
read_flat_row (guint    row,
               float   *sino,
               gpointer user_data,
               GError **error)
{
  gsize n = *(gsize *) user_data;

  for (gsize i = 0; i < n; i++)
    sino[i] = (float) (row + 1);
  return TRUE;
}

/* A store the device lets be made can be filled: its size is decided with
 * room for the fill's own buffers (spectra, rows in flight), which for a
 * 2560-wide scan of 3000 projections are over 1 GiB.  Under caps from well
 * below to well above what one needs, every store made fills (half where
 * float leaves too little room), and a store that would not is refused at
 * once, naming its rows. */
static void
test_store_room_for_fill (void)
{
  const guint W = 2560, N = 3000, ROWS = 8;
  gsize row_floats = (gsize) W * N;
  gboolean made_float = FALSE, made_half = FALSE, refused = FALSE;
  g_autofree double *response = NULL;
  guint padded;

  if (skip_without_gpu ())
    return;
  response = tomo_filter_fbp_response (TOMO_FILTER_RAMLAK, W, N, &padded);
  for (guint64 cap = 512ull << 20; cap <= (3ull << 30); cap += 128ull << 20)
    {
      g_autoptr(GError) error = NULL;
      TomoGpuStore *store;

      g_assert_true (tomo_gpu_fault_configure (NULL, cap, &error));
      store = store_new (W, N, ROWS, TOMO_GPU_STORE_AUTO, &error);
      if (store == NULL)
        {
          g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY);
          g_assert_nonnull (strstr (error->message, "rows 0…7"));
          refused = TRUE;
          g_test_message ("cap %.0f MiB: %s", cap / 1048576.0, error->message);
          continue;
        }
      g_test_message ("cap %.0f MiB: %s store", cap / 1048576.0,
                      tomo_gpu_store_precision_to_string (tomo_gpu_store_get_precision (store)));
      made_float |= tomo_gpu_store_get_precision (store) == TOMO_GPU_STORE_FLOAT;
      made_half |= tomo_gpu_store_get_precision (store) == TOMO_GPU_STORE_HALF;
      g_assert_true (tomo_gpu_store_set_filter (store, padded, response, TOMO_PAD_EDGE, &error));
      g_assert_no_error (error);
      g_assert_true (tomo_gpu_store_fill (store, read_flat_row, NULL, &row_floats, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (tomo_gpu_store_get_n_filled (store), ==, ROWS);
      tomo_gpu_store_free (store);
    }
  g_assert_true (refused);
  g_assert_true (made_half);
  g_assert_true (made_float);
  clear_faults ();
}

/* A failed launch, or a lost device: the slice fails with a device fault,
 * the engine is on the CPU backend and its next slice equals a CPU
 * engine's. */
static void
check_fault_moves_to_cpu (const char *spec,
                          gboolean    lost)
{
  g_autoptr(TomoEngine) engine = gpu_engine_or_skip ();
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) cpu = NULL;
  g_autoptr(TomoSlice) slice = NULL;
  g_autoptr(TomoSlice) again = NULL;
  g_autoptr(TomoSlice) expect = NULL;
  g_autoptr(GError) error = NULL;

  if (engine == NULL)
    return;
  scan = tomo_test_open_scan (scan_path);
  cpu = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  g_assert_true (tomo_gpu_fault_configure (spec, 0, &error));
  slice = reconstruct (engine, &error);
  g_assert_null (slice);
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_DEVICE_FAULT);
  g_test_message ("%s", error->message);
  g_clear_error (&error);
  g_assert_cmpint (tomo_engine_get_backend (engine), ==, TOMO_BACKEND_CPU);

  again = reconstruct (engine, &error);
  g_assert_no_error (error);
  expect = reconstruct (cpu, &error);
  g_assert_no_error (error);
  g_assert_cmpint (again->backend, ==, TOMO_BACKEND_CPU);
  g_assert_cmpmem (again->data, sizeof (float) * WIDTH * WIDTH,
                   expect->data, sizeof (float) * WIDTH * WIDTH);

  if (lost)
    {
      /* No device left to go back to, and the reason is given. */
      g_assert_cmpint (tomo_engine_count_gpus (), ==, 0);
      g_assert_false (tomo_engine_set_backend (engine, TOMO_BACKEND_GPU, &error));
      g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND);
      g_test_message ("%s", error->message);
      g_assert_cmpint (tomo_engine_get_backend (engine), ==, TOMO_BACKEND_CPU);
    }
  clear_faults ();
}

static void
test_launch_fault (void)
{
  check_fault_moves_to_cpu ("launch:1", FALSE);
}

static void
test_lost_device (void)
{
  check_fault_moves_to_cpu ("lost:1", TRUE);
}

/* Values read from a slice kept on the device: a lost device is a device
 * fault with its reason, not a bare failure; a healthy read of a rectangle
 * equals that rectangle of the same buffer downloaded whole (one output:
 * the hybrid kernel need not repeat itself bit for bit across launches). */
static void
test_read_rect_fault (void)
{
  g_autoptr(TomoEngine) engine = gpu_engine_or_skip ();
  g_autoptr(TomoSlice) slice = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree float *whole = g_new (float, WIDTH * WIDTH);
  TomoSliceRequest request;
  float rect[16 * 8];

  if (engine == NULL)
    return;
  tomo_slice_request_init (&request, tomo_engine_get_scan (engine));
  request.row = HEIGHT / 2;
  request.params.center = CENTER;
  request.keep_on_device = TRUE;
  request.skip_download = TRUE;   /* device only, as the window keeps it */
  slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (slice->data);
  g_assert_cmpuint (slice->width, ==, WIDTH);
  g_assert_cmpuint (slice->height, ==, WIDTH);
  g_assert_true (((const TomoDeviceBufferOps *) slice->device_ops)->download (slice->device_buffer,
                                                                             whole));

  g_assert_true (tomo_slice_read_rect (slice, 0, 100, 120, 16, 8, rect, &error));
  g_assert_no_error (error);
  for (guint y = 0; y < 8; y++)
    g_assert_cmpmem (rect + y * 16, 16 * sizeof (float),
                     whole + (120 + y) * WIDTH + 100, 16 * sizeof (float));

  g_assert_true (tomo_gpu_fault_configure ("lost:1", 0, &error));
  g_assert_false (tomo_slice_read_rect (slice, 0, 100, 120, 16, 8, rect, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_DEVICE_FAULT);
  g_test_message ("%s", error->message);
  clear_faults ();
}

/* The CLI: a failed launch is exit status 1 and a message, no crash. */
static void
test_cli_launch_fault (void)
{
  g_auto(TomoTestResult) r = { 0 };
  g_autofree char *out = NULL;

  if (skip_without_gpu ())
    return;
  out = g_build_filename (tmp_dir, "fault.tif", NULL);
  g_setenv ("TOMO_GPU_FAIL", "launch", TRUE);
  TOMO_TEST_RUN (&r, "reconstruct", scan_path, "--row", "3", "--backend", "gpu", "-o", out);
  g_unsetenv ("TOMO_GPU_FAIL");
  tomo_test_assert_fails_with (&r, "GPU");
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  have_gpu = tomo_engine_count_gpus () > 0;
  scan_path = tomo_test_write_phantom (WIDTH, HEIGHT, N_PROJ, 1.5, &tmp_dir);

  g_test_add_func ("/tomo/gpu-fault/spec", test_spec);
  g_test_add_func ("/tomo/gpu-fault/alloc-falls-back", test_alloc_falls_back);
  g_test_add_func ("/tomo/gpu-fault/memory-cap", test_memory_cap);
  g_test_add_func ("/tomo/gpu-fault/cap-below-baseline", test_cap_below_baseline);
  g_test_add_func ("/tomo/gpu-fault/store-room-for-fill", test_store_room_for_fill);
  g_test_add_func ("/tomo/gpu-fault/launch", test_launch_fault);
  g_test_add_func ("/tomo/gpu-fault/lost", test_lost_device);
  g_test_add_func ("/tomo/gpu-fault/read-rect", test_read_rect_fault);
  g_test_add_func ("/tomo/gpu-fault/cli-launch", test_cli_launch_fault);
  return tomo_test_run_and_remove_scan (scan_path, tmp_dir);
}
