/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * `tomolive bench --center`: the automatic centre estimate on the CPU and
 * on the GPU (definition-based and cuFFT cross-correlation), the bare
 * correlation kernels for the shift ranges the estimate uses, and the CPU
 * centre sweep.  Phantom sinograms with fresh noise for every run.
 */
#define G_LOG_DOMAIN "tomo-bench"

#include "config.h"

#include <math.h>
#include <stdio.h>

#include "tomo-center-private.h"
#include "tomo-gpu-center.h"
#include "tomo-cli.h"
#include "tomo-gpu.h"
#include "tomo-gpu-tune.h"
#include "tomo-median.h"
#include "tomo-phantom.h"

typedef struct
{
  const char *name;
  guint width, n_proj;
  double range_deg;
  double *angles;
  double *exact;
  float *sino;
  double center;
} Scan;

/* A profile by one xcorr method, to compare the two on the whole estimate
 * (the backend's correlate always runs the direct kernel). */
typedef struct
{
  TomoGpuXcorr *xc;
  TomoGpuXcorrMethod method;
} GpuProfile;

static gboolean
gpu_profile (const TomoCenterPairs *pairs,
             float                 *out,
             gpointer               user_data,
             GError               **error)
{
  GpuProfile *g = user_data;

  return tomo_gpu_xcorr_run (g->xc, g->method, pairs->a, pairs->b, pairs->n_pairs, pairs->width,
                             pairs->d_lo, pairs->n_shifts, pairs->min_overlap, out, error);
}

static void
scan_make (Scan       *s,
           const char *name,
           guint       width,
           guint       n_proj,
           double      range_deg)
{
  TomoPhantomParams p;

  tomo_phantom_params_init (&p);
  s->name = name;
  s->width = width;
  s->n_proj = n_proj;
  s->range_deg = range_deg;
  s->center = (width - 1) / 2.0 + 3.37;
  s->angles = g_new (double, n_proj);
  for (guint i = 0; i < n_proj; i++)
    s->angles[i] = range_deg * G_PI / 180.0 * i / (range_deg < 360 ? n_proj - 1 : n_proj);
  p.width = width;
  p.height = 8;
  p.n_proj = n_proj;
  p.center = s->center;
  s->exact = g_new (double, (gsize) n_proj * width);
  s->sino = g_new (float, (gsize) n_proj * width);
  tomo_phantom_sinogram (&p, s->angles, 4, s->exact);
}

static void
scan_fresh_noise (Scan  *s,
                  GRand *rand)
{
  for (gsize i = 0; i < (gsize) s->n_proj * s->width; i++)
    s->sino[i] = (float) (s->exact[i] + 0.01 * (g_rand_double (rand) - 0.5));
}

static void
scan_clear (Scan *s)
{
  g_free (s->angles);
  g_free (s->exact);
  g_free (s->sino);
}

/* Prints and clears *error (the other measurements go on); exit status 1. */
static int
report (GError **error)
{
  g_printerr ("tomolive bench: %s\n", (*error)->message);
  g_clear_error (error);
  return 1;
}

int
tomo_center_bench (guint  width,
                   guint  runs,
                   int    device)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (11);
  g_autoptr(GError) error = NULL;
  TomoGpuXcorr *xc = NULL;
  Scan scans[2];
  g_autofree double *t = g_new (double, runs);
  g_autofree char *gpu_name = NULL;
  int status = 0;

  runs = MAX (runs, 3);
  scan_make (&scans[0], "180° (0…180 inclusive)", width, 1501, 180.0);
  scan_make (&scans[1], "360°", width, 3000, 360.0);
  if (tomo_gpu_get_n_devices () > device)
    {
      gpu_name = tomo_gpu_get_device_name (device);
      xc = tomo_gpu_xcorr_new (device, width, 32, &error);
      if (xc == NULL)
        report (&error);
    }

  printf ("# tomolive bench --center\n\n");
  printf ("- CPU: %u logical cores; GPU: %s\n", g_get_num_processors (),
          gpu_name != NULL ? gpu_name : "none");
  printf ("- scans: Shepp–Logan, %u columns, axis at %.2f, fresh noise per run; median of %u\n\n",
          width, scans[0].center, runs);
  printf ("## Automatic estimate (correlation of θ and θ+180°), wall time\n\n");
  printf ("| scan | pairs | path | median ms | found − true px |\n|---|---:|---|---:|---:|\n");

  for (guint k = 0; k < G_N_ELEMENTS (scans); k++)
    for (int path = 0; path < 3; path++)
      {
        static const char *names[] = { "CPU (1 thread)", "GPU direct (warp shuffle)", "GPU cuFFT" };
        TomoCenterResult r = { 0 };
        TomoSinogram sino = { scans[k].sino, scans[k].n_proj, width, scans[k].angles };
        gboolean ok = TRUE;

        if (path > 0 && xc == NULL)
          continue;
        /* One warm-up, then the timed runs. */
        for (guint i = 0; i <= runs && ok; i++)
          {
            gint64 t0;

            scan_fresh_noise (&scans[k], rand);
            t0 = g_get_monotonic_time ();
            if (path == 0)
              ok = tomo_center_correlation (&sino, &r, &error);
            else
              {
                GpuProfile g = { xc, path == 1 ? TOMO_GPU_XCORR_DIRECT : TOMO_GPU_XCORR_FFT };

                ok = _tomo_center_correlation_with (&sino, gpu_profile, &g, &r, &error);
              }
            if (i > 0)
              t[i - 1] = (g_get_monotonic_time () - t0) / 1e3;
          }
        if (!ok)
          {
            status = report (&error);
            continue;
          }
        printf ("| %s | %u | %s | %.2f | %+.3f |\n", scans[k].name, r.n_used, names[path],
                _tomo_median (t, runs), r.center - scans[k].center);
        fflush (stdout);
      }

  if (xc != NULL)
    {
      /* The kernels alone (CUDA events): the fine pass (±9 shifts around
       * the coarse peak) and the coarse pass (every shift of 4×-binned rows),
       * 32 pairs. */
      struct { const char *what; guint w; int d_lo; guint n; } cases[] = {
        { "fine: 19 shifts, full rows", width, -9, 19 },
        { "coarse: all shifts, rows binned 4×", width / 4, -(int) (width / 4) + 1, 2 * (width / 4) - 1 },
        { "all shifts, full rows", width, -(int) width + 1, 2 * width - 1 },
      };
      g_autofree float *a = g_new (float, (gsize) 32 * width);
      g_autofree float *b = g_new (float, (gsize) 32 * width);
      g_autofree float *out = g_new (float, (gsize) 32 * 2 * width);

      printf ("\n## Correlation kernels, 32 pairs (device time, CUDA events)\n\n");
      printf ("| range | shifts | direct ms | cuFFT ms |\n|---|---:|---:|---:|\n");
      for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
        {
          double ms[2];

          for (int m = 0; m < 2; m++)
            {
              for (guint i = 0; i <= runs; i++)
                {
                  for (gsize j = 0; j < (gsize) 32 * cases[c].w; j++)
                    {
                      a[j] = (float) g_rand_double (rand);
                      b[j] = (float) g_rand_double (rand);
                    }
                  if (!tomo_gpu_xcorr_run (xc, m, a, b, 32, cases[c].w, cases[c].d_lo, cases[c].n, 8, out, &error))
                    {
                      status = report (&error);
                      break;
                    }
                  if (i > 0)
                    t[i - 1] = tomo_gpu_xcorr_get_last_ms (xc);
                }
              ms[m] = _tomo_median (t, runs);
            }
          printf ("| %s | %u | %.4f | %.4f |\n", cases[c].what, cases[c].n, ms[0], ms[1]);
        }
    }

  if (xc != NULL)
    {
      /* The sweep on the GPU through the engine's back projector: the
       * filtered row stays on the device, each candidate is one back
       * projection (kernel auto, linear) — 16 full W² slices, and 16 views
       * of one 512² region at full resolution (the zoomed sweep). */
      const guint n_proj = 2048;
      g_autofree double *angles = g_new (double, n_proj);
      g_autofree float *filtered = g_new (float, (gsize) n_proj * width);
      TomoGpuContext *ctx = tomo_gpu_context_new (device, &error);
      TomoGpuBackprojectParams bp;

      for (guint i = 0; i < n_proj; i++)
        angles[i] = G_PI * i / n_proj;
      for (gsize j = 0; j < (gsize) n_proj * width; j++)
        filtered[j] = (float) (g_rand_double (rand) - 0.5);
      if (ctx == NULL
          || !tomo_gpu_context_set_geometry (ctx, width, n_proj, angles, &error)
          || !tomo_gpu_context_load_filtered (ctx, 1, filtered, &error))
        status = report (&error);
      else
        {
          printf ("\n## GPU centre sweep: 16 candidates, %u projections (wall time of the 16)\n\n"
                  "One back projection per candidate (kernel auto, linear), and "
                  "tomo_gpu_context_backproject_centers (candidates whole pixels apart four to "
                  "a 4-slice launch, on shifted copies of the sinogram).\n\n", n_proj);
          printf ("| candidates | path | median ms | sweeps per second |\n|---|---|---:|---:|\n");
          for (int zoom = 0; zoom < 2 && error == NULL; zoom++)
            for (int packed = 0; packed < 2 && error == NULL; packed++)
              {
                double centers[16];
                double ms;

                tomo_gpu_backproject_params_init (&bp);
                bp.interp = 1;
                if (zoom)
                  {
                    bp.roi_width = bp.roi_height = MIN (512u, width);
                    bp.roi_x = bp.roi_y = (width - bp.roi_width) / 2;
                  }
                for (guint i = 0; i <= runs; i++)
                  {
                    gint64 t0;

                    /* 0.5 px apart, moved by 0.01 px every run. */
                    for (guint c = 0; c < 16; c++)
                      centers[c] = (width - 1) / 2.0 - 4.0 + 0.5 * c + 0.01 * i;
                    t0 = g_get_monotonic_time ();
                    if (packed)
                      tomo_gpu_context_backproject_centers (ctx, &bp, centers, 16, &error);
                    else
                      for (guint c = 0; c < 16 && error == NULL; c++)
                        {
                          bp.center = centers[c];
                          tomo_gpu_context_backproject (ctx, &bp, &error);
                        }
                    if (error != NULL)
                      break;
                    if (i > 0)
                      t[i - 1] = (g_get_monotonic_time () - t0) / 1e3;
                  }
                if (error != NULL)
                  break;
                ms = _tomo_median (t, runs);
                printf ("| 16 × %u² %s | %s | %.2f | %.1f |\n", zoom ? bp.roi_width : width,
                        zoom ? "(zoomed region)" : "(whole slices)",
                        packed ? "4 per launch" : "one per launch", ms, 1e3 / ms);
                fflush (stdout);
              }
          if (error != NULL)
            status = report (&error);
        }
      if (ctx != NULL)
        tomo_gpu_context_free (ctx);
    }
  printf ("\n");

  tomo_gpu_xcorr_free (xc);
  for (guint k = 0; k < G_N_ELEMENTS (scans); k++)
    scan_clear (&scans[k]);
  return status;
}
