/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The three views' volume store on the GPU backend following a live scan:
 * the sample (a phantom) streamed as TomoPackets over real ZeroMQ sockets on
 * loopback, half of its projections first, the store filled from what has
 * arrived, then the rest and the store refilled, as the three views do.
 * XZ and YZ from the GPU store are compared with the CPU backend's store on
 * the same live scan (half and all) and, once every projection is there,
 * with the CPU store of the file itself; no projection may be lost.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-live-receiver.h"
#include "tomo-live-scan.h"
#include "tomo-volume.h"
#include "test-live-util.h"
#include "tomo-test-util.h"

#define WAIT_US (60 * G_USEC_PER_SEC)
/* GPU store (float, raw rows preprocessed on the device) against the CPU
 * store (rows preprocessed on the host), same rows: 5× the tolerance of
 * test-backend-store for linear planes from the same filtered rows. */
#define TOL_SAME 1e-4
/* The live scan's planes against the file's: TomoPackets carries the
 * angles as float32 (test-live-volume-ui's tolerance). */
#define TOL_FILE 1e-3

/* XZ through row y = W/2 − 7 and YZ through x = W/2 + 5 of a store. */
static void
planes_of (TomoVolume *vol,
           guint       W,
           guint       H,
           double      center,
           TomoInterp  interp,
           float     **xz,
           float     **yz)
{
  g_autoptr(GError) error = NULL;
  TomoPlane pxz, pyz;

  tomo_plane_init_xz (&pxz, W / 2 - 7, 0, W, 0, H);
  tomo_plane_init_yz (&pyz, W / 2 + 5, 0, W, 0, H);
  *xz = g_new (float, (gsize) pxz.width * pxz.height);
  *yz = g_new (float, (gsize) pyz.width * pyz.height);
  g_assert_true (tomo_volume_plane (vol, &pxz, center, interp, *xz, &error));
  g_assert_true (tomo_volume_plane (vol, &pyz, center, interp, *yz, &error));
  g_assert_no_error (error);
}

static TomoVolume *
filled_volume (TomoScan              *scan,
               const TomoReconParams *params,
               TomoBackend            backend)
{
  g_autoptr(GError) error = NULL;
  TomoVolume *vol = tomo_volume_new (scan, 0, tomo_scan_get_height (scan), params, backend, 0,
                                     &error);

  g_assert_no_error (error);
  g_assert_true (tomo_volume_fill (vol, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (tomo_volume_get_backend (vol), ==, backend);
  return vol;
}

/* Waits until `live` holds n projections. */
static void
wait_present (TomoLiveScan *live,
              guint         n)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_US;
  TomoLiveScanInfo info;

  for (;;)
    {
      guint64 generation = tomo_live_scan_get_generation (live);

      tomo_live_scan_get_info (live, &info);
      if (info.n_present[TOMO_FRAME_PROJECTION] >= n)
        return;
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      tomo_live_scan_wait_generation (live, generation, g_get_monotonic_time () + 100000);
    }
}

static void
test_live_gpu_store (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) file = NULL, scan = NULL;
  g_autoptr(TomoLiveReceiver) rx = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(TomoLiveScan) live = NULL, done = NULL;
  g_autoptr(TomoVolume) gpu = NULL, cpu_half = NULL, cpu_all = NULL, cpu_file = NULL;
  g_autofree float *proj = NULL;
  g_autofree float *g_xz[2] = { NULL }, *g_yz[2] = { NULL };
  g_autofree float *c_xz[2] = { NULL }, *c_yz[2] = { NULL };
  g_autofree float *f_xz = NULL, *f_yz = NULL;
  TomoLiveReceiverStats stats;
  TomoLiveScanInfo info;
  TomoReconParams params;
  guint n, W, H, nd, nf;
  gsize nxz, nyz;
  double e[10];

  if (!tomo_test_need_gpu ("the GPU backend's store cannot be made"))
    return;
  g_assert_nonnull (sample);
  file = tomo_test_open_scan (sample);
  n = tomo_scan_get_n_projections (file);
  W = tomo_scan_get_width (file);
  H = tomo_scan_get_height (file);
  nd = tomo_scan_get_n_darks (file);
  nf = tomo_scan_get_n_flats (file);
  nxz = (gsize) W * H;
  nyz = nxz;
  proj = read_frames (file, TOMO_FRAME_PROJECTION);
  tomo_recon_params_init (&params, W);
  params.center = (W - 1) / 2.0 + 3.37;   /* the sample's axis */

  rx = loopback_receiver_new (TOMO_LIVE_PROTOCOL_TOMOP, FALSE, (gsize) 1 << 30, 0);
  tx = tomo_live_sender_new (tomo_live_receiver_get_endpoint (rx), TOMO_LIVE_PROTOCOL_TOMOP,
                             FALSE, 20000, &error);
  g_assert_no_error (error);

  /* Half of the projections: the store is made from what arrived. */
  send_scan_header (tx, file);
  send_projections (tx, file, proj, 0, n / 2, 0);
  {
    gint64 deadline = g_get_monotonic_time () + WAIT_US;

    while ((live = tomo_live_receiver_dup_current (rx)) == NULL)
      {
        g_assert_cmpint (g_get_monotonic_time (), <, deadline);
        g_usleep (10000);
      }
  }
  wait_present (live, n / 2);
  scan = tomo_live_scan_create_scan (live, &error);
  g_assert_no_error (error);
  gpu = filled_volume (scan, &params, TOMO_BACKEND_GPU);
  cpu_half = filled_volume (scan, &params, TOMO_BACKEND_CPU);
  planes_of (gpu, W, H, params.center, params.interp, &g_xz[0], &g_yz[0]);
  planes_of (cpu_half, W, H, params.center, params.interp, &c_xz[0], &c_yz[0]);
  {
    g_autofree char *desc = tomo_volume_describe (gpu);

    g_test_message ("half the projections: %s", desc);
  }

  /* The rest, the end; the same store refilled (the views' refill). */
  send_projections (tx, file, proj, n / 2, n, 0);
  g_assert_true (tomo_live_sender_send_end (tx, &error));
  g_assert_no_error (error);
  done = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
  g_assert_no_error (error);
  g_assert_true (done == live);
  tomo_live_scan_refresh (live, scan);
  g_assert_true (tomo_volume_fill (gpu, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  cpu_all = filled_volume (scan, &params, TOMO_BACKEND_CPU);
  cpu_file = filled_volume (file, &params, TOMO_BACKEND_CPU);
  planes_of (gpu, W, H, params.center, params.interp, &g_xz[1], &g_yz[1]);
  planes_of (cpu_all, W, H, params.center, params.interp, &c_xz[1], &c_yz[1]);
  planes_of (cpu_file, W, H, params.center, params.interp, &f_xz, &f_yz);

  /* Nothing lost on the way. */
  tomo_live_scan_get_info (live, &info);
  tomo_live_receiver_get_stats (rx, &stats);
  g_test_message ("received %u projections, %u flats, %u darks; %" G_GUINT64_FORMAT
                  " frames, %" G_GUINT64_FORMAT " duplicates, %u gaps, %" G_GUINT64_FORMAT
                  " messages dropped", info.n_present[TOMO_FRAME_PROJECTION],
                  info.n_present[TOMO_FRAME_FLAT], info.n_present[TOMO_FRAME_DARK],
                  info.n_frames_received, info.n_duplicates, info.n_gaps, stats.n_dropped_total);
  g_assert_true (info.complete);
  g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], ==, n);
  g_assert_cmpuint (info.n_present[TOMO_FRAME_FLAT], ==, nf);
  g_assert_cmpuint (info.n_present[TOMO_FRAME_DARK], ==, nd);
  g_assert_cmpuint (info.n_frames_received, ==, (guint64) n + nf + nd);
  g_assert_cmpuint (info.n_duplicates, ==, 0);
  g_assert_cmpuint (info.n_gaps, ==, 0);
  g_assert_cmpuint (stats.n_dropped_total, ==, 0);

  e[0] = tomo_test_rel_l2 (g_xz[0], c_xz[0], nxz);
  e[1] = tomo_test_rel_l2 (g_yz[0], c_yz[0], nyz);
  e[2] = tomo_test_rel_l2 (g_xz[1], c_xz[1], nxz);
  e[3] = tomo_test_rel_l2 (g_yz[1], c_yz[1], nyz);
  e[4] = tomo_test_rel_l2 (g_xz[1], f_xz, nxz);
  e[5] = tomo_test_rel_l2 (g_yz[1], f_yz, nyz);
  e[6] = tomo_test_rel_l2 (g_xz[1], g_xz[0], nxz);
  e[7] = tomo_test_rel_l2 (g_yz[1], g_yz[0], nyz);
  g_test_message ("relative L2, GPU store vs CPU store on the live scan: half XZ %.3g YZ %.3g, "
                  "all XZ %.3g YZ %.3g (tolerance %g); all vs the file's CPU planes XZ %.3g "
                  "YZ %.3g (tolerance %g); half → all changed XZ %.3g YZ %.3g", e[0], e[1], e[2],
                  e[3], TOL_SAME, e[4], e[5], TOL_FILE, e[6], e[7]);
  for (guint k = 0; k < 4; k++)
    g_assert_cmpfloat (e[k], <=, TOL_SAME);
  g_assert_cmpfloat (e[4], <=, TOL_FILE);
  g_assert_cmpfloat (e[5], <=, TOL_FILE);
  /* The refill really took the second half in. */
  g_assert_cmpfloat (e[6], >, 0.05);
  g_assert_cmpfloat (e[7], >, 0.05);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tomo/gpu/live/volume-store", test_live_gpu_store);
  return g_test_run ();
}
