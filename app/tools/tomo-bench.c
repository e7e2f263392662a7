/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * `tomolive bench`: measures the GPU engine and prints Markdown tables —
 * back projection per kernel, slices packed, interpolation and size (always
 * with the `standard` kernel of the same run as the baseline), filtering by
 * C2C pair vs R2C, the latency of a centre change, and a whole volume from
 * host memory to host memory.  `--tune` stores the fastest kernel per mode
 * and size class for the `auto` kernel.
 */
#define G_LOG_DOMAIN "tomo-bench"
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include <hdf5.h>

#include "tomo-options.h"
#include "tomo-cli.h"
#include "tomo-bench-planes.h"
#include "tomo-bench-store-fill.h"
#include "tomo-bench-row.h"
#include "tomo-bench-scrub.h"
#include "tomo-engine.h"
#include "tomo-error.h"
#include "tomo-hdf5-private.h"
#include "tomo-fbp.h"
#include "tomo-filter.h"
#include "tomo-gpu.h"
#include "tomo-gpu-gl.h"
#include "tomo-gpu-tune.h"
#include "tomo-live-cli.h"
#include "tomo-median.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"

typedef struct
{
  guint *sizes;
  guint n_sizes;
  guint n_proj;
  guint runs;
  guint volume;
  gboolean kernels[TOMO_GPU_N_KERNELS];
  /* Per size: the volume path's 4-slice linear `auto` back projection and
   * the 4-slice filtering with the default method, ms (0: not measured). */
  double *bp4_ms, *filter4_ms;
} BenchOptions;

static double *
make_angles (guint n)
{
  double *a = g_new (double, n);

  for (guint i = 0; i < n; i++)
    a[i] = G_PI * i / n;
  return a;
}

static float *
random_floats (gsize   n,
               guint32 seed)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  float *v = g_new (float, n);

  for (gsize i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (rand, -1.0, 1.0);
  return v;
}

/* Whether a median (and its maximum) of milliseconds keeps to a budget. */
static const char *
budget_verdict (double median,
                double max,
                double budget_ms)
{
  if (median > budget_ms)
    return "no";
  return max <= budget_ms ? "yes (max too)" : "median yes, max no";
}

static gboolean
parse_sizes (const char    *text,
             BenchOptions  *opts,
             GError       **error)
{
  g_auto(GStrv) parts = g_strsplit (text, ",", -1);
  guint n = g_strv_length (parts);

  opts->sizes = g_new (guint, MAX (n, 1));
  opts->n_sizes = 0;
  for (guint i = 0; i < n; i++)
    {
      guint64 v;

      if (!g_ascii_string_to_unsigned (g_strstrip (parts[i]), 10, 16, 65536, &v, error))
        {
          g_prefix_error (error, "--sizes “%s”: ", text);
          return FALSE;
        }
      opts->sizes[opts->n_sizes++] = (guint) v;
    }
  if (opts->n_sizes == 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--sizes “%s”: no size", text);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_kernels (const char    *text,
               BenchOptions  *opts,
               GError       **error)
{
  g_auto(GStrv) parts = g_strsplit (text, ",", -1);

  memset (opts->kernels, 0, sizeof opts->kernels);
  for (guint i = 0; parts[i] != NULL; i++)
    {
      TomoGpuKernel k;

      if (!tomo_gpu_kernel_from_string (g_strstrip (parts[i]), &k, error))
        {
          g_prefix_error (error, "--kernels: ");
          return FALSE;
        }
      opts->kernels[k] = TRUE;
    }
  return TRUE;
}

/* The context set up for S columns and n_proj projections over 180° with
 * the ramp filter, and random sinograms of n_slices slices for it (NULL on
 * error). */
static float *
setup_context (TomoGpuContext *ctx,
               guint           S,
               guint           n_proj,
               guint           n_slices,
               guint32         seed,
               GError        **error)
{
  g_autofree double *angles = make_angles (n_proj);
  guint padded;
  g_autofree double *resp = tomo_filter_fbp_response (TOMO_FILTER_RAMLAK, S, n_proj, &padded);

  if (!tomo_gpu_context_set_geometry (ctx, S, n_proj, angles, error) ||
      !tomo_gpu_context_set_filter (ctx, padded, resp, 0, error))
    return NULL;
  return random_floats ((gsize) n_slices * n_proj * S, seed);
}

/* Median back-projection time (CUDA events) after two warm-up runs. */
static gboolean
time_backprojection (TomoGpuContext                 *ctx,
                     const TomoGpuBackprojectParams *params,
                     guint                           runs,
                     double                         *ms,
                     TomoGpuKernel                  *used,
                     GError                        **error)
{
  g_autofree double *t = g_new (double, runs);

  for (guint i = 0; i < 2; i++)
    if (!tomo_gpu_context_backproject (ctx, params, error))
      return FALSE;
  for (guint i = 0; i < runs; i++)
    {
      if (!tomo_gpu_context_backproject (ctx, params, error))
        return FALSE;
      t[i] = tomo_gpu_context_get_backproject_ms (ctx);
    }
  *ms = _tomo_median (t, runs);
  *used = tomo_gpu_context_get_last_kernel (ctx);
  return TRUE;
}

static gboolean
bench_backprojection (TomoGpuContext     *ctx,
                      BenchOptions       *opts,
                      GKeyFile           *tune,
                      GError            **error)
{
  static const guint slice_counts[] = { 1, 2, 4 };

  printf ("## Back projection (GU/s = pixels × projections × slices / s / 1e9; "
          "CUDA events, median of %u runs after 2 warm-up runs)\n\n", opts->runs);
  printf ("| size | projections | slices | interp | kernel | ms | GU/s | × standard |\n");
  printf ("|---:|---:|---:|---|---|---:|---:|---:|\n");

  for (guint si = 0; si < opts->n_sizes; si++)
    {
      guint S = opts->sizes[si];
      g_autofree float *data = setup_context (ctx, S, opts->n_proj, 4, 1000 + S, error);

      if (data == NULL)
        return FALSE;
      for (guint c = 0; c < G_N_ELEMENTS (slice_counts); c++)
        {
          guint n = slice_counts[c];

          if (!tomo_gpu_context_load_filtered (ctx, n, data, error))
            return FALSE;
          for (int interp = 1; interp >= 0; interp--)
            {
              double std_gus = 0.0;
              double best = 0.0;
              TomoGpuKernel best_kernel = TOMO_GPU_KERNEL_AUTO;
              /* standard first: the baseline of the same run. */
              static const TomoGpuKernel order[] = {
                TOMO_GPU_KERNEL_STANDARD, TOMO_GPU_KERNEL_TEXTURE, TOMO_GPU_KERNEL_ALU,
                TOMO_GPU_KERNEL_HYBRID, TOMO_GPU_KERNEL_AUTO,
              };

              for (guint k = 0; k < G_N_ELEMENTS (order); k++)
                {
                  TomoGpuKernel kernel = order[k], used;
                  TomoGpuBackprojectParams params;
                  g_autoptr(GError) local = NULL;
                  double ms, gus;
                  char ratio[32];

                  if (!opts->kernels[kernel] && kernel != TOMO_GPU_KERNEL_STANDARD)
                    continue;
                  tomo_gpu_backproject_params_init (&params);
                  params.center = (S - 1) / 2.0 + 0.37;
                  params.interp = interp;
                  params.kernel = kernel;
                  if (!time_backprojection (ctx, &params, opts->runs, &ms, &used, &local))
                    {
                      if (g_error_matches (local, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID))
                        continue;   /* the kernel has no such mode */
                      g_propagate_error (error, g_steal_pointer (&local));
                      return FALSE;
                    }
                  gus = (double) S * S * opts->n_proj * n / (ms * 1e-3) / 1e9;
                  if (kernel == TOMO_GPU_KERNEL_AUTO && n == 4 && interp == 1)
                    opts->bp4_ms[si] = ms;
                  if (kernel == TOMO_GPU_KERNEL_STANDARD)
                    std_gus = gus;
                  if (kernel != TOMO_GPU_KERNEL_AUTO && gus > best)
                    {
                      best = gus;
                      best_kernel = kernel;
                    }
                  if (std_gus > 0)
                    g_snprintf (ratio, sizeof ratio, "%.2f", gus / std_gus);
                  else
                    g_strlcpy (ratio, "—", sizeof ratio);
                  printf ("| %u² | %u | %u | %s | %s%s | %.3f | %.0f | %s |\n",
                          S, opts->n_proj, n, interp ? "linear" : "nearest",
                          kernel == TOMO_GPU_KERNEL_AUTO ? "auto → " : "",
                          tomo_gpu_kernel_to_string (used), ms, gus, ratio);
                  fflush (stdout);
                }
              if (tune != NULL && best_kernel != TOMO_GPU_KERNEL_AUTO)
                {
                  g_autofree char *key = tomo_gpu_tune_key (n, interp, tomo_gpu_size_class (S));
                  g_key_file_set_string (tune, "auto", key, tomo_gpu_kernel_to_string (best_kernel));
                }
            }
        }
    }
  printf ("\n“—”: `standard` has no such mode (it packs 1 or 2 slices).\n\n");
  return TRUE;
}

static gboolean
bench_filter (TomoGpuContext     *ctx,
              BenchOptions       *opts,
              GError            **error)
{
  static const guint slice_counts[] = { 1, 4 };
  static const TomoGpuFilterMethod methods[] = {
    TOMO_GPU_FILTER_METHOD_C2C_PAIR, TOMO_GPU_FILTER_METHOD_R2C,
  };

  printf ("## Filtering (pad + FFT + response + inverse FFT + crop, CUDA events, median of %u)\n\n",
          opts->runs);
  printf ("| size | projections | slices | padded | C2C pair ms | R2C ms | faster |\n");
  printf ("|---:|---:|---:|---:|---:|---:|---|\n");
  for (guint si = 0; si < opts->n_sizes; si++)
    {
      guint S = opts->sizes[si];
      g_autofree float *data = setup_context (ctx, S, opts->n_proj, 4, 2000 + S, error);

      if (data == NULL)
        return FALSE;
      for (guint c = 0; c < G_N_ELEMENTS (slice_counts); c++)
        {
          double ms[2];

          for (guint m = 0; m < 2; m++)
            {
              g_autofree double *t = g_new (double, opts->runs);

              tomo_gpu_context_set_filter_method (ctx, methods[m]);
              for (guint i = 0; i < opts->runs + 2; i++)
                {
                  if (!tomo_gpu_context_load_sinograms (ctx, slice_counts[c], data, error))
                    return FALSE;
                  if (i >= 2)
                    t[i - 2] = tomo_gpu_context_get_filter_ms (ctx);
                }
              ms[m] = _tomo_median (t, opts->runs);
            }
          if (slice_counts[c] == 4)
            {
              tomo_gpu_context_set_filter_method (ctx, TOMO_GPU_FILTER_METHOD_DEFAULT);
              opts->filter4_ms[si] = ms[tomo_gpu_context_get_filter_method (ctx) == TOMO_GPU_FILTER_METHOD_R2C];
            }
          printf ("| %u² | %u | %u | %u | %.3f | %.3f | %s |\n", S, opts->n_proj,
                  slice_counts[c], tomo_filter_padded_width (S), ms[0], ms[1],
                  ms[0] <= ms[1] ? "C2C pair" : "R2C");
          fflush (stdout);
        }
      tomo_gpu_context_set_filter_method (ctx, TOMO_GPU_FILTER_METHOD_DEFAULT);
    }
  printf ("\n");
  return TRUE;
}

/* New centre → slice complete in device memory: only back projection runs,
 * the filtered sinogram is cached.  Wall clock around the call. */
/* The volume path per slice: 4 slices packed, linear, `auto`, filtering
 * included (the kernels' time: no transfers, no packing). */
static void
print_volume_per_slice (const BenchOptions *opts)
{
  gboolean any = FALSE;

  for (guint si = 0; si < opts->n_sizes; si++)
    any |= opts->bp4_ms[si] > 0 && opts->filter4_ms[si] > 0;
  if (!any)
    return;
  printf ("## Volume path per slice (4 slices linear, auto, filter included; medians above ÷ 4)\n\n");
  printf ("| size | projections | back projection ms | filter ms | total ms per slice |\n");
  printf ("|---:|---:|---:|---:|---:|\n");
  for (guint si = 0; si < opts->n_sizes; si++)
    if (opts->bp4_ms[si] > 0 && opts->filter4_ms[si] > 0)
      printf ("| %u² | %u | %.3f | %.3f | %.3f |\n", opts->sizes[si], opts->n_proj, opts->bp4_ms[si] / 4,
              opts->filter4_ms[si] / 4, (opts->bp4_ms[si] + opts->filter4_ms[si]) / 4);
  printf ("\n");
  fflush (stdout);
}

static gboolean
bench_latency (TomoGpuContext     *ctx,
               const BenchOptions *opts,
               GError            **error)
{
  printf ("## Centre change → slice in device memory (1 slice, linear, auto kernel, "
          "wall clock, median of %u)\n\n", opts->runs);
  printf ("| size | projections | kernel | latency ms | first load (upload + filter) ms |\n");
  printf ("|---:|---:|---|---:|---:|\n");
  for (guint si = 0; si < opts->n_sizes; si++)
    {
      guint S = opts->sizes[si];
      g_autofree float *data = setup_context (ctx, S, opts->n_proj, 1, 3000 + S, error);
      g_autofree double *t = g_new (double, opts->runs);
      TomoGpuBackprojectParams params;
      gint64 t0;
      double load_ms;

      if (data == NULL)
        return FALSE;
      tomo_gpu_backproject_params_init (&params);
      t0 = g_get_monotonic_time ();
      if (!tomo_gpu_context_load_sinograms (ctx, 1, data, error))
        return FALSE;
      load_ms = (g_get_monotonic_time () - t0) / 1e3;
      for (guint i = 0; i < opts->runs + 2; i++)
        {
          params.center = (S - 1) / 2.0 + 0.1 * i;
          t0 = g_get_monotonic_time ();
          if (!tomo_gpu_context_backproject (ctx, &params, error))
            return FALSE;
          if (i >= 2)
            t[i - 2] = (g_get_monotonic_time () - t0) / 1e3;
        }
      printf ("| %u² | %u | %s | %.3f | %.1f |\n", S, opts->n_proj,
              tomo_gpu_kernel_to_string (tomo_gpu_context_get_last_kernel (ctx)),
              _tomo_median (t, opts->runs), load_ms);
    }
  printf ("\n");
  return TRUE;
}

typedef struct
{
  const float *sino;
  float *slice;
  gsize sino_size, slice_size;
  guint written;
  gint64 read_us, write_us;   /* time inside the callbacks */
  /* The raw path: uint16 counts with a flat and a dark row. */
  const guint16 *counts;
  const float *flat, *dark;
  guint width;
} VolumeBench;

static gboolean
volume_read_raw (guint row, void *raw, float *flat, float *dark, gpointer user_data,
                 GError **error)
{
  VolumeBench *vb = user_data;
  gint64 t0 = g_get_monotonic_time ();

  memcpy (raw, vb->counts, vb->sino_size / 2);
  memcpy (flat, vb->flat, vb->width * sizeof (float));
  memcpy (dark, vb->dark, vb->width * sizeof (float));
  /* Called on several threads at once when the job says read_concurrent. */
  __atomic_fetch_add (&vb->read_us, g_get_monotonic_time () - t0, __ATOMIC_RELAXED);
  return TRUE;
}

static gboolean
volume_read (guint row, float *sino, gpointer user_data, GError **error)
{
  VolumeBench *vb = user_data;
  gint64 t0 = g_get_monotonic_time ();

  memcpy (sino, vb->sino, vb->sino_size);
  /* Called on several threads at once when the job says read_concurrent. */
  __atomic_fetch_add (&vb->read_us, g_get_monotonic_time () - t0, __ATOMIC_RELAXED);
  return TRUE;
}

static gboolean
volume_write (guint row, const float *slice, gpointer user_data, GError **error)
{
  VolumeBench *vb = user_data;
  gint64 t0 = g_get_monotonic_time ();

  memcpy (vb->slice, slice, vb->slice_size);
  vb->written++;
  vb->write_us += g_get_monotonic_time () - t0;
  return TRUE;
}

/* The consumer reads the pipeline's pinned slice where it lies (no copy):
 * one row of it is checked, as a writer that streams it out would touch it. */
static gboolean
volume_write_in_place (guint row, const float *slice, gpointer user_data, GError **error)
{
  VolumeBench *vb = user_data;
  gint64 t0 = g_get_monotonic_time ();
  const float *r = slice + (gsize) (row % vb->width) * vb->width;
  float sum = 0;

  for (guint x = 0; x < vb->width; x++)
    sum += r[x];
  if (!isfinite (sum))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Slice %u of the volume is not finite", row);
      return FALSE;
    }
  vb->written++;
  vb->write_us += g_get_monotonic_time () - t0;
  return TRUE;
}

/* Volumes per line where the verdict is drawn (slices read in place). */
#define VOLUME_REPEATS 3

static gboolean
bench_volume (const BenchOptions *opts,
              GError            **error)
{
  guint V = opts->volume;
  guint padded;
  g_autofree double *angles = make_angles (V);
  g_autofree double *resp = tomo_filter_fbp_response (TOMO_FILTER_RAMLAK, V, V, &padded);
  g_autofree float *sino = random_floats ((gsize) V * V, 4000 + V);
  g_autofree float *slice = g_new (float, (gsize) V * V);
  TomoGpuVolumeJob job;
  TomoGpuVolumeStats st;
  g_autofree guint16 *counts = g_new (guint16, (gsize) V * V);
  g_autofree float *flat = g_new (float, V);
  g_autofree float *dark = g_new (float, V);
  VolumeBench vb = { sino, slice, (gsize) V * V * sizeof (float), (gsize) V * V * sizeof (float), 0, 0, 0,
                     counts, flat, dark, V };
  /* Main's behaviour before 2026-11-23 afternoon, for a baseline in the
   * same run: one read call at a time, buffers and plans made per volume. */
  const char *env = g_getenv ("TOMOLIVE_BENCH_VOLUME_BASELINE");
  gboolean baseline = env != NULL && *env != '\0' && strcmp (env, "0") != 0;
  double median_wall[2] = { 0, 0 }, median_kernels[2] = { 0, 0 };

  /* Counts of a transmission between 2 % and 100 % of the flat. */
  for (gsize i = 0; i < (gsize) V * V; i++)
    counts[i] = (guint16) (100 + 40000 * (0.02 + 0.98 * fabs (sino[i] - floor (sino[i]))));
  for (guint x = 0; x < V; x++)
    {
      flat[x] = 40100.0f;
      dark[x] = 100.0f;
    }

  memset (&job, 0, sizeof job);
  job.width = V;
  job.n_proj = V;
  job.angles = angles;
  job.padded_width = padded;
  job.response = resp;
  tomo_gpu_backproject_params_init (&job.bp);
  job.bp.center = (V - 1) / 2.0;
  job.row_start = 0;
  job.row_end = V;
  job.user_data = &vb;
  job.stats = &st;
  /* The memcpy source may be read on several threads at once, and the
   * volumes of one line share a layout: setup once per line. */
  job.read_concurrent = !baseline;
  job.keep_resources = !baseline;

  printf ("## Whole volume, host memory → host memory (read/write callbacks are memcpy)\n\n");
  printf ("%s\n\n", baseline
          ? "Baseline (TOMOLIVE_BENCH_VOLUME_BASELINE): rows read one call at a time, buffers and "
            "plans made for every volume."
          : "Rows of a group read on several threads (read_concurrent), buffers and plans kept "
            "from one volume to the next of a line (keep_resources).");
  /* Float sinograms (preprocessed on the host), then uint16 counts
   * uploaded raw and preprocessed on the device with the slices copied
   * out, then the same with the write callback handed the pipeline's
   * pinned slices to read in place (no host copy out): that line, the one
   * the verdict is drawn from, runs VOLUME_REPEATS volumes per mode. */
  for (int k = 0; k < 6; k++)
    {
      int interp = k % 2 == 0 ? 1 : 0;
      gboolean raw = k >= 2;
      gboolean in_place = k >= 4;
      guint n = in_place ? VOLUME_REPEATS : 1;
      double wall[VOLUME_REPEATS], kernels[VOLUME_REPEATS], setup[VOLUME_REPEATS];
      double read_s = 0, write_s = 0;
      TomoGpuVolumeStats first = { 0 };

      job.bp.interp = interp;
      job.read = raw ? NULL : volume_read;
      job.read_raw = raw ? volume_read_raw : NULL;
      job.write = in_place ? volume_write_in_place : volume_write;
      job.raw_type = TOMO_GPU_RAW_UINT16;
      job.normalise = job.apply_log = raw;
      /* Each line's first volume pays the setup, as one `reconstruct` does. */
      tomo_gpu_volume_release_kept ();
      for (guint r = 0; r < n; r++)
        {
          gint64 t0;

          vb.written = 0;
          vb.read_us = vb.write_us = 0;
          t0 = g_get_monotonic_time ();
          if (!tomo_gpu_reconstruct_volume (&job, error))
            {
              tomo_gpu_volume_release_kept ();
              return FALSE;
            }
          wall[r] = (g_get_monotonic_time () - t0) / 1e6;
          /* The GPUs share the rows evenly: the kernels' time per GPU is
           * what the wall can approach. */
          kernels[r] = st.compute_ms / 1e3 / MAX (tomo_gpu_get_n_devices (), 1);
          setup[r] = st.setup_ms / 1e3;
          if (r == 0)
            {
              first = st;
              read_s = vb.read_us / 1e6;
              write_s = vb.write_us / 1e6;
            }
          if (vb.written != V)
            {
              g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                           "The volume pipeline wrote %u of %u slices", vb.written, V);
              tomo_gpu_volume_release_kept ();
              return FALSE;
            }
        }
      printf ("- %s: %u³ voxels from %u projections of %u×%u, %s, auto kernel, %d GPU(s): "
              "**%.2f s** (%.0f GU/s overall, %u slices written; inside read %.2f s, "
              "inside write %.2f s)\n",
              in_place ? "uint16 raw, preprocessed on the GPU, slices read in place (write callback copies nothing)"
              : raw ? "uint16 raw, preprocessed on the GPU" : "float32 input",
              V, V, V, V, interp ? "linear" : "nearest", tomo_gpu_get_n_devices (), wall[0],
              (double) V * V * V * V / wall[0] / 1e9, vb.written, read_s, write_s);
      printf ("  - stages (busy, summed; they overlap): read %.2f s, upload %.2f s, "
              "filter + back projection %.2f s (%.0f GU/s), download %.2f s, write %.2f s, "
              "delivery idle %.2f s; %u slices per pass; setup %.3f s, issuing thread "
              "stalled %.2f s\n",
              first.read_ms / 1e3, first.upload_ms / 1e3, first.compute_ms / 1e3,
              (double) V * V * V * V / (first.compute_ms / 1e3) / 1e9, first.download_ms / 1e3,
              first.write_ms / 1e3, first.wait_ms / 1e3, first.pack, first.setup_ms / 1e3,
              first.stall_ms / 1e3);
      if (n > 1)
        {
          double m_wall, m_kernels;
          double cold = 100.0 * (wall[0] / kernels[0] - 1.0);   /* before the sorts */

          printf ("  - %u volumes: wall", n);
          for (guint r = 0; r < n; r++)
            printf (" %.3f", wall[r]);
          printf (" s; kernels (preprocess + filter + back projection, compute stream busy, per GPU)");
          for (guint r = 0; r < n; r++)
            printf (" %.3f", kernels[r]);
          printf (" s; setup");
          for (guint r = 0; r < n; r++)
            printf (" %.3f", setup[r]);
          m_wall = _tomo_median (wall, n);
          m_kernels = _tomo_median (kernels, n);
          printf (" s\n  - first volume (setup included) %.1f %% over its kernels; median **%.3f s**, "
                  "kernels %.3f s: **within %.1f %% of the kernels** (goal 10 %%: %s)\n",
                  cold, m_wall, m_kernels,
                  100.0 * (m_wall / m_kernels - 1.0), m_wall <= 1.1 * m_kernels ? "met" : "not met");
          median_wall[interp] = m_wall;
          median_kernels[interp] = m_kernels;
        }
      fflush (stdout);
    }
  tomo_gpu_volume_release_kept ();
  printf ("- nearest against linear (slices read in place, medians): %.3f s against %.3f s, "
          "nearest %s by %.1f %% (kernels %.3f against %.3f s)\n\n",
          median_wall[0], median_wall[1], median_wall[0] < median_wall[1] ? "faster" : "NOT faster",
          100.0 * fabs (1.0 - median_wall[0] / median_wall[1]), median_kernels[0], median_kernels[1]);
  return TRUE;
}

/* --- CPU backend --------------------------------------------------------- */

/* Removes the files a measurement wrote, then its folder. */
static void
remove_tmp_dir (const char *dir)
{
  g_autoptr(GDir) d = NULL;
  const char *name;

  if (dir == NULL)
    return;
  d = g_dir_open (dir, 0, NULL);
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      if (g_remove (path) != 0)
        g_warning ("Cannot remove %s: %s", path, g_strerror (errno));
    }
  if (g_rmdir (dir) != 0)
    g_warning ("Cannot remove %s: %s", dir, g_strerror (errno));
}

static char *
cpu_model (void)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/cpuinfo", &text, NULL, NULL))
    return g_strdup ("unknown CPU");
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "model name"))
      {
        const char *colon = strchr (lines[i], ':');

        if (colon != NULL)
          return g_strstrip (g_strdup (colon + 1));
      }
  return g_strdup ("unknown CPU");
}

static char *
load_average (void)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) parts = NULL;

  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return g_strdup ("unknown");
  parts = g_strsplit (g_strstrip (text), " ", 4);
  if (g_strv_length (parts) < 3)
    return g_strdup ("unknown");
  return g_strdup_printf ("%s, %s, %s (1, 5, 15 min)", parts[0], parts[1], parts[2]);
}

static gboolean
check_finite (const float *v,
              gsize        n,
              const char  *what,
              GError     **error)
{
  for (gsize i = 0; i < n; i++)
    if (!isfinite (v[i]))
      {
        g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                     "%s: value %g at index %" G_GSIZE_FORMAT " is not finite", what, v[i], i);
        return FALSE;
      }
  return TRUE;
}

/* tomo_cpu_fbp_backproject on every core: one warm-up, then the median. */
static gboolean
bench_cpu_backprojection (guint    S,
                          guint    n_proj,
                          guint    runs,
                          GError **error)
{
  g_autofree double *angles = make_angles (n_proj);
  g_autofree float *filtered = random_floats ((gsize) n_proj * S, 5000 + S);
  g_autofree float *out = g_new (float, (gsize) S * S);
  g_autofree double *t = g_new (double, runs);
  g_autoptr(TomoCpuFbp) fbp = tomo_cpu_fbp_new (S, n_proj, angles, TOMO_FILTER_RAMLAK,
                                                TOMO_PAD_ZERO, 0);
  TomoRoi roi = { 0, 0, S, S };
  double center = (S - 1) / 2.0 + 0.37;

  printf ("## Back projection, `tomo_cpu_fbp_backproject` (wall clock, 1 warm-up, median of %u)\n\n",
          runs);
  printf ("| size | projections | interp | threads | s | GU/s |\n");
  printf ("|---:|---:|---|---:|---:|---:|\n");
  for (int interp = TOMO_INTERP_LINEAR; interp >= TOMO_INTERP_NEAREST; interp--)
    {
      double s;

      tomo_cpu_fbp_backproject (fbp, filtered, center, interp, &roi, out);
      for (guint i = 0; i < runs; i++)
        {
          gint64 t0 = g_get_monotonic_time ();

          tomo_cpu_fbp_backproject (fbp, filtered, center + 0.01 * i, interp, &roi, out);
          t[i] = (g_get_monotonic_time () - t0) / 1e6;
        }
      if (!check_finite (out, (gsize) S * S, "CPU back projection", error))
        return FALSE;
      s = _tomo_median (t, runs);
      printf ("| %u² | %u | %s | %u | %.3g | %.3g |\n", S, n_proj,
              tomo_interp_to_string (interp), tomo_cpu_fbp_get_n_threads (fbp), s,
              (double) S * S * n_proj / s / 1e9);
      fflush (stdout);
    }
  printf ("\n");
  return TRUE;
}

/* The viewer's loop on the CPU backend: a centre change re-runs only back
 * projection (the engine keeps the filtered sinogram); a row change reads,
 * preprocesses, filters and back projects. */
static gboolean
bench_cpu_viewer (const char *dir,
                  guint       runs,
                  GError    **error)
{
  g_autofree char *path = g_build_filename (dir, "viewer.h5", NULL);
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) first = NULL;
  g_autofree double *t_centre = g_new (double, runs);
  g_autofree double *t_row = g_new (double, runs);
  g_autofree double *bp_centre = g_new (double, runs);
  g_autofree double *filter_row = g_new (double, runs);
  TomoPhantomParams phantom;
  TomoSliceRequest request;
  gint64 t0;
  double write_s, m_centre, m_row;

  tomo_phantom_params_init (&phantom);   /* with noise, seed 1 */
  tomo_phantom_params_set_size (&phantom, 512, 64, 360);
  if (!tomo_phantom_write_dxchange_timed (&phantom, path, &write_s, error))
    return FALSE;

  scan = tomo_scan_open (path, NULL, error);
  if (scan == NULL)
    return FALSE;
  engine = tomo_engine_new (TOMO_BACKEND_CPU);
  tomo_engine_set_scan (engine, scan);
  tomo_slice_request_init (&request, scan);
  request.params.center = phantom.center;
  first = tomo_engine_reconstruct (engine, &request, NULL, error);
  if (first == NULL)
    return FALSE;

  for (guint i = 0; i < runs; i++)
    {
      g_autoptr(TomoSlice) slice = NULL;

      request.params.center = phantom.center - 2.0 + 0.2 * (i + 1);
      t0 = g_get_monotonic_time ();
      slice = tomo_engine_reconstruct (engine, &request, NULL, error);
      if (slice == NULL)
        return FALSE;
      t_centre[i] = (g_get_monotonic_time () - t0) / 1e3;
      bp_centre[i] = slice->backproject_ms;
      /* A centre change that refilters would measure the wrong thing. */
      if (slice->filter_ms != 0)
        {
          g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                       "The engine refiltered row %u for a centre change (%.1f ms): "
                       "its filtered-sinogram cache missed", request.row, slice->filter_ms);
          return FALSE;
        }
      if (!check_finite (slice->data, (gsize) slice->width * slice->height, "CPU slice", error))
        return FALSE;
    }
  for (guint i = 0; i < runs; i++)
    {
      g_autoptr(TomoSlice) slice = NULL;

      /* A row not read before (7 is prime to the height): the scan's row
       * cache must not turn the read into a memcpy. */
      request.row = (request.row + 7) % phantom.height;
      t0 = g_get_monotonic_time ();
      slice = tomo_engine_reconstruct (engine, &request, NULL, error);
      if (slice == NULL)
        return FALSE;
      t_row[i] = (g_get_monotonic_time () - t0) / 1e3;
      filter_row[i] = slice->filter_ms;
    }

  m_centre = _tomo_median (t_centre, runs);
  m_row = _tomo_median (t_row, runs);
  printf ("## The viewer's loop on the CPU backend (`TomoEngine`, blocking requests, wall clock, "
          "median of %u)\n\n", runs);
  printf ("Scan: %u×%u slice from %u projections, %u rows, phantom with noise written to a "
          "temporary Data Exchange file in %.1f s; engine: %s.\n\n",
          phantom.width, phantom.width, phantom.n_proj, phantom.height, write_s,
          tomo_engine_get_device_name (engine));
  printf ("| change | what runs | ms | of which | updates/s |\n");
  printf ("|---|---|---:|---|---:|\n");
  printf ("| centre | back projection (filtered sinogram cached) | %.1f | back projection %.1f ms | %.1f |\n",
          m_centre, _tomo_median (bp_centre, runs), 1000.0 / m_centre);
  printf ("| row | read + preprocess + filter + back projection | %.1f | filter %.1f ms | %.1f |\n\n",
          m_row, _tomo_median (filter_row, runs), 1000.0 / m_row);
  fflush (stdout);
  return TRUE;
}

/* A Data Exchange header as big as a real 2048² scan of 1800 projections.
 * The chunked datasets are declared and never written: HDF5 allocates
 * chunks lazily, so the file stays a few kB and the measurement sees only
 * what opening a scan costs, not the disk. */
static gboolean
write_declared_scan (const char *path,
                     guint       n_proj,
                     guint       height,
                     guint       width,
                     GError    **error)
{
  static const struct { const char *name; guint n; guint16 fill; } sets[] = {
    { "/exchange/data", 0, 10000 },
    { "/exchange/data_white", 10, 20000 },
    { "/exchange/data_dark", 10, 100 },
  };
  g_autofree double *theta = g_new (double, n_proj);
  hid_t file, group;
  hid_t space, dset;
  herr_t status = 0;

  for (guint i = 0; i < n_proj; i++)
    theta[i] = 180.0 * i / n_proj;
  file = H5Fcreate (path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Cannot create HDF5 file %s", path);
      return FALSE;
    }
  group = H5Gcreate2 (file, "/exchange", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (group >= 0)
    H5Gclose (group);
  else
    status = -1;
  for (guint k = 0; k < G_N_ELEMENTS (sets) && status >= 0; k++)
    {
      hsize_t dims[3] = { sets[k].n ? sets[k].n : n_proj, height, width };
      hsize_t chunk[3] = { MIN (dims[0], 128), 1, width };
      hid_t dcpl = H5Pcreate (H5P_DATASET_CREATE);

      H5Pset_chunk (dcpl, 3, chunk);
      H5Pset_fill_value (dcpl, H5T_NATIVE_UINT16, &sets[k].fill);
      space = H5Screate_simple (3, dims, NULL);
      dset = H5Dcreate2 (file, sets[k].name, H5T_STD_U16LE, space, H5P_DEFAULT, dcpl,
                         H5P_DEFAULT);
      status = dset >= 0 ? H5Dclose (dset) : -1;
      H5Sclose (space);
      H5Pclose (dcpl);
    }
  if (status >= 0 && !_tomo_hdf5_write_doubles (file, "/exchange/theta", n_proj, theta))
    status = -1;
  if (H5Fclose (file) < 0)
    status = -1;
  if (status < 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write the declared %u×%u×%u scan to %s", n_proj, height, width, path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
bench_header_open (const char *dir,
                   guint       runs,
                   GError    **error)
{
  const guint n_proj = 1800, height = 2048, width = 2048;
  g_autofree char *path = g_build_filename (dir, "declared.h5", NULL);
  g_autofree double *t = g_new (double, runs);
  GStatBuf st;
  double first = 0;

  if (!write_declared_scan (path, n_proj, height, width, error))
    return FALSE;
  for (guint i = 0; i <= runs; i++)
    {
      g_autoptr(TomoScan) scan = NULL;
      g_autofree char *text = NULL;
      gint64 t0;
      double ms;

      t0 = g_get_monotonic_time ();
      scan = tomo_scan_open (path, NULL, error);
      if (scan == NULL)
        return FALSE;
      text = tomo_scan_describe (scan);
      ms = (g_get_monotonic_time () - t0) / 1e3;
      if (tomo_scan_get_n_projections (scan) != n_proj || tomo_scan_get_width (scan) != width ||
          tomo_scan_get_height (scan) != height || text == NULL)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "%s: opened as %u projections of %u×%u, written as %u of %u×%u", path,
                       tomo_scan_get_n_projections (scan), tomo_scan_get_width (scan),
                       tomo_scan_get_height (scan), n_proj, width, height);
          return FALSE;
        }
      if (i == 0)
        first = ms;
      else
        t[i - 1] = ms;
    }
  if (g_stat (path, &st) != 0)
    st.st_size = 0;
  printf ("## Opening a scan header (`tomo_scan_open` + `tomo_scan_describe`, wall clock)\n\n");
  printf ("Data Exchange file declaring /exchange/data of %u × %u × %u uint16 (%.1f GiB), "
          "10 flats, 10 darks and theta; chunked and never written, %.0f kB on disk.\n\n",
          n_proj, height, width, (double) n_proj * height * width * 2 / (1 << 30),
          st.st_size / 1e3);
  printf ("| first open ms | median of %u ms | max ms |\n|---:|---:|---:|\n", runs);
  {
    double mx = 0;

    for (guint i = 0; i < runs; i++)
      mx = MAX (mx, t[i]);
    printf ("| %.2f | %.2f | %.2f |\n\n", first, _tomo_median (t, runs), mx);
  }
  fflush (stdout);
  return TRUE;
}

static gboolean
bench_cpu (guint        S,
           guint        n_proj,
           guint        runs,
           const char  *cmdline,
           const char  *date,
           GError     **error)
{
  g_autofree char *model = cpu_model ();
  g_autofree char *load = load_average ();
  g_autofree char *dir = NULL;
  gboolean ok;

  printf ("# tomolive bench --cpu\n\n");
  printf ("- CPU: %s, %u logical cores\n", model, g_get_num_processors ());
  printf ("- load average before the run: %s\n", load);
  printf ("- date: %s\n", date);
  printf ("- command: `tomolive %s`\n\n", cmdline);
  fflush (stdout);

  dir = g_dir_make_tmp ("tomolive-bench-XXXXXX", error);
  if (dir == NULL)
    return FALSE;
  ok = bench_cpu_backprojection (S, n_proj, runs, error) &&
       bench_cpu_viewer (dir, MAX (runs, 20), error) &&
       tomo_bench_row_scrub (dir, 32, error) &&
       bench_header_open (dir, runs, error);
  remove_tmp_dir (dir);
  return ok;
}

/* --- display path through CUDA–OpenGL interop ---------------------------- */

#if HAVE_CUDA

#define FRAME_MS (1000.0 / 60.0)

/* New centre → back projection → texture → glFinish, as the window does for
 * each slider step, with the filtered sinogram cached on the device. */
static gboolean
bench_interop_latency (TomoGpuGlHeadless *gl,
                       guint              S,
                       guint              n_proj,
                       guint              runs,
                       GError           **error)
{
  g_autofree float *sino = NULL;
  g_autofree double *total = g_new (double, runs);
  g_autofree double *bp = g_new (double, runs);
  g_autofree double *show = g_new (double, runs);
  g_autofree double *stats = g_new (double, runs);
  g_autofree float *slice = NULL;
  g_autofree float *texels = NULL;
  TomoGpuBackprojectParams params;
  TomoGpuContext *ctx;
  gsize mismatches = 0;
  double mx = 0, stats_mx = 0;
  gboolean ok = FALSE;

  ctx = tomo_gpu_context_new (tomo_gpu_gl_headless_get_device (gl), error);
  if (ctx == NULL)
    return FALSE;
  sino = setup_context (ctx, S, n_proj, 1, 6000 + S, error);
  if (sino == NULL || !tomo_gpu_context_load_sinograms (ctx, 1, sino, error))
    goto out;
  tomo_gpu_backproject_params_init (&params);
  for (guint i = 0; i < runs + 3; i++)
    {
      gint64 t0, t1, t2;

      params.center = (S - 1) / 2.0 + 0.05 * i;
      t0 = g_get_monotonic_time ();
      if (!tomo_gpu_context_backproject (ctx, &params, error))
        goto out;
      t1 = g_get_monotonic_time ();
      if (!tomo_gpu_gl_headless_show (gl, tomo_gpu_context_get_output (ctx), S, S, error))
        goto out;
      t2 = g_get_monotonic_time ();
      if (i < 3)
        continue;   /* warm-up */
      total[i - 3] = (t2 - t0) / 1e3;
      bp[i - 3] = (t1 - t0) / 1e3;
      show[i - 3] = (t2 - t1) / 1e3;
      mx = MAX (mx, total[i - 3]);
    }

  /* The device statistics alone, over the last slice (each call waits for
   * its result, as the engine's does). */
  for (guint i = 0; i < runs; i++)
    {
      TomoGpuStats gs;
      gint64 t0 = g_get_monotonic_time ();

      if (!tomo_gpu_context_stats (ctx, &gs, error))
        goto out;
      stats[i] = (g_get_monotonic_time () - t0) / 1e3;
      stats_mx = MAX (stats_mx, stats[i]);
    }

  /* What GL holds must be the slice itself, or the timing is of nothing. */
  slice = g_new (float, (gsize) S * S);
  texels = g_new (float, (gsize) S * S);
  if (!tomo_gpu_context_download (ctx, slice, error) ||
      !tomo_gpu_gl_headless_read (gl, texels, error))
    goto out;
  for (gsize i = 0; i < (gsize) S * S; i++)
    if (memcmp (&slice[i], &texels[i], sizeof (float)) != 0)
      mismatches++;
  if (mismatches != 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                   "The texture differs from the device slice in %" G_GSIZE_FORMAT " of %u texels",
                   mismatches, S * S);
      goto out;
    }

  printf ("### Centre change → texture ready (wall clock, 3 warm-up runs, %u runs)\n\n", runs);
  printf ("Each run: a new centre, `tomo_gpu_context_backproject` (1 slice, linear, auto kernel; "
          "the filtered sinogram stays cached), `tomo_gpu_gl_texture_copy` from the output into "
          "the registered %u² GL_R32F texture, `glFinish`.  The texture read back through GL "
          "matched the device slice bit for bit.\n\n", S);
  printf ("| size | projections | kernel | back projection ms | copy + glFinish ms | "
          "total median ms | total max ms | ≤ 8 ms |\n");
  printf ("|---:|---:|---|---:|---:|---:|---:|---|\n");
  {
    double m = _tomo_median (total, runs);

    printf ("| %u² | %u | %s | %.3f | %.3f | **%.3f** | %.3f | %s |\n\n", S, n_proj,
            tomo_gpu_kernel_to_string (tomo_gpu_context_get_last_kernel (ctx)),
            _tomo_median (bp, runs), _tomo_median (show, runs), m, mx,
            budget_verdict (m, mx, 8.0));
  }
  printf ("Slice statistics alone (`tomo_gpu_context_stats` on the last %u² slice, wall clock "
          "with its wait for the result, %u runs): median **%.3f ms**, max %.3f ms.\n\n",
          S, runs, _tomo_median (stats, runs), stats_mx);
  fflush (stdout);
  ok = TRUE;

out:
  tomo_gpu_context_free (ctx);
  return ok;
}

typedef struct
{
  TomoEngine *engine;
  TomoGpuGlHeadless *gl;
  GMainLoop *loop;
  TomoSliceRequest request;
  double base_center;
  guint n_emit;
  gint64 start_us;
  gint64 *emit_us;     /* written by the emitter before each submit */

  /* main thread only */
  guint n_delivered;
  guint *index;        /* request index of each delivered slice */
  double *lag_ms;      /* emission → texture ready */
  double *recon_ms;    /* request in → slice out, inside the engine */
  guint n_errors;
  char *first_error;
  gboolean timed_out;
} SliderStream;

#define SLIDER_STEP 0.01

static void
on_slider_slice_cb (TomoEngine   *engine,
                    TomoSlice    *slice,
                    const GError *error,
                    gpointer      user_data)
{
  SliderStream *st = user_data;
  g_autoptr(GError) local = NULL;
  long i;

  if (slice == NULL || slice->device_buffer == NULL)
    {
      st->n_errors++;
      if (st->first_error == NULL)
        st->first_error = g_strdup (error ? error->message : "slice without a device buffer");
      return;
    }
  i = lround ((slice->params.center - st->base_center) / SLIDER_STEP);
  g_assert (i >= 0 && (guint) i < st->n_emit);
  if (!tomo_gpu_gl_headless_show (st->gl, tomo_slice_get_device_data (slice, NULL),
                                  slice->width, slice->height, &local))
    {
      st->n_errors++;
      if (st->first_error == NULL)
        st->first_error = g_strdup (local->message);
      g_main_loop_quit (st->loop);
      return;
    }
  st->index[st->n_delivered] = i;
  st->lag_ms[st->n_delivered] = (g_get_monotonic_time () - st->emit_us[i]) / 1e3;
  st->recon_ms[st->n_delivered] = slice->total_ms;
  st->n_delivered++;
  /* Latest wins never drops the newest request: the last one always comes. */
  if ((guint) i == st->n_emit - 1)
    g_main_loop_quit (st->loop);
}

static gboolean
slider_timeout_cb (gpointer user_data)
{
  SliderStream *st = user_data;

  st->timed_out = TRUE;
  g_main_loop_quit (st->loop);
  return G_SOURCE_REMOVE;
}

static gpointer
slider_emitter (gpointer data)
{
  SliderStream *st = data;
  TomoSliceRequest request = st->request;

  /* No thread-default context of its own: the engine delivers to the global
   * default context, which the main thread iterates, as the window does. */
  for (guint i = 0; i < st->n_emit; i++)
    {
      gint64 due = st->start_us + (gint64) llround (i * FRAME_MS * 1000.0);
      gint64 now = g_get_monotonic_time ();

      if (due > now)
        g_usleep (due - now);
      request.params.center = st->base_center + SLIDER_STEP * i;
      st->emit_us[i] = g_get_monotonic_time ();
      tomo_engine_submit (st->engine, &request, on_slider_slice_cb, st);
    }
  return NULL;
}

static double
median_of (const double *v,
           guint         n)
{
  g_autofree double *copy = g_memdup2 (v, n * sizeof *v);

  return n > 0 ? _tomo_median (copy, n) : 0;
}

/* A 60 Hz slider: centre changes every 16.67 ms for 3 s through
 * tomo_engine_submit on a GPU engine; each delivered slice goes from its
 * device buffer into the texture on the main thread. */
/* A phantom scan of two rows, S wide, for the engine's paths. */
static char *
write_interop_scan (const char *dir,
                    guint       S,
                    guint       n_proj,
                    double     *center,
                    double     *write_s,
                    GError    **error)
{
  g_autofree char *path = g_build_filename (dir, "slider.h5", NULL);
  TomoPhantomParams phantom;

  tomo_phantom_params_init (&phantom);
  tomo_phantom_params_set_size (&phantom, S, 2, n_proj);
  phantom.noise = FALSE;
  if (!tomo_phantom_write_dxchange_timed (&phantom, path, write_s, error))
    return NULL;
  *center = phantom.center;
  return g_steal_pointer (&path);
}

/* A GPU engine over `path` on the GL context's device, and the window's
 * request for it: row 0, the slice kept on the device, no download. */
static TomoEngine *
interop_engine (TomoGpuGlHeadless *gl,
                const char        *path,
                TomoSliceRequest  *request,
                GError           **error)
{
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoScan) scan = tomo_scan_open (path, NULL, error);

  if (scan == NULL)
    return NULL;
  engine = tomo_engine_new (TOMO_BACKEND_GPU);
  if (tomo_engine_get_backend (engine) != TOMO_BACKEND_GPU)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE,
                           "The engine did not start its GPU backend");
      return NULL;
    }
  if (tomo_engine_get_device (engine) != tomo_gpu_gl_headless_get_device (gl))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                   "The engine runs on CUDA device %d but the GL context on device %d",
                   tomo_engine_get_device (engine), tomo_gpu_gl_headless_get_device (gl));
      return NULL;
    }
  tomo_engine_set_scan (engine, scan);
  tomo_slice_request_init (request, scan);
  request->row = 0;
  request->keep_on_device = TRUE;
  request->skip_download = TRUE;
  return g_steal_pointer (&engine);
}

/* The window's path, exactly: a new centre → tomo_engine_reconstruct on a
 * GPU engine with the slice kept on the device and no download (back
 * projection, device copy, statistics on the device) → the device slice
 * into the texture → glFinish.  The baseline above leaves out the engine
 * and the statistics. */
static gboolean
bench_interop_window (TomoGpuGlHeadless *gl,
                      const char        *path,
                      double             axis,
                      guint              S,
                      guint              n_proj,
                      guint              runs,
                      GError           **error)
{
  TomoSliceRequest request;
  g_autoptr(TomoEngine) engine = interop_engine (gl, path, &request, error);
  g_autofree double *total = g_new (double, runs);
  g_autofree double *recon = g_new (double, runs);
  g_autofree double *bp = g_new (double, runs);
  g_autofree double *show = g_new (double, runs);
  g_autofree float *texels = NULL;
  g_autoptr(TomoSlice) last = NULL;
  gsize mismatches = 0, checked = 0;
  double mx = 0, m;

  if (engine == NULL)
    return FALSE;
  for (guint i = 0; i < runs + 3; i++)
    {
      g_autoptr(TomoSlice) slice = NULL;
      gint64 t0, t1, t2;

      request.params.center = axis - 1.0 + 0.05 * i;
      t0 = g_get_monotonic_time ();
      slice = tomo_engine_reconstruct (engine, &request, NULL, error);
      if (slice == NULL)
        return FALSE;
      t1 = g_get_monotonic_time ();
      if (!tomo_gpu_gl_headless_show (gl, tomo_slice_get_device_data (slice, NULL), S, S, error))
        return FALSE;
      t2 = g_get_monotonic_time ();
      if (!slice->values.valid || slice->data != NULL)
        {
          g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                       "The engine's slice came %s", slice->data != NULL ? "downloaded"
                                                                          : "without statistics");
          return FALSE;
        }
      g_clear_pointer (&last, tomo_slice_unref);
      last = g_steal_pointer (&slice);
      if (i < 3)
        continue;   /* warm-up, the first reads and filters the row */
      total[i - 3] = (t2 - t0) / 1e3;
      recon[i - 3] = (t1 - t0) / 1e3;
      bp[i - 3] = last->backproject_ms;
      show[i - 3] = (t2 - t1) / 1e3;
      mx = MAX (mx, total[i - 3]);
    }

  /* The texture holds the last slice: a pixel grid read back one by one. */
  texels = g_new (float, (gsize) S * S);
  if (!tomo_gpu_gl_headless_read (gl, texels, error))
    return FALSE;
  for (guint y = 0; y < S; y += 61)
    for (guint x = 0; x < S; x += 59)
      {
        float v;

        if (!tomo_slice_get_value (last, 0, x, y, &v) ||
            memcmp (&v, &texels[(gsize) y * S + x], sizeof v) != 0)
          mismatches++;
        checked++;
      }
  if (mismatches != 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                   "The texture differs from the engine's slice in %" G_GSIZE_FORMAT " of %"
                   G_GSIZE_FORMAT " pixels read", mismatches, checked);
      return FALSE;
    }

  m = _tomo_median (total, runs);
  printf ("### Centre change → texture ready with statistics: the window's path (%u runs)\n\n",
          runs);
  printf ("Each run: a new centre, `tomo_engine_reconstruct` on a GPU engine (%s) with "
          "`keep_on_device` and `skip_download` — back projection, the device copy the window "
          "shows and the slice statistics (min/max/mean, percentiles, 256-bin histogram) "
          "reduced on the device — then the device slice into the %u² texture and `glFinish`.  "
          "%" G_GSIZE_FORMAT " texels read back through GL equal `tomo_slice_get_value` (one "
          "value from the device each).\n\n", tomo_engine_get_device_name (engine), S, checked);
  printf ("| size | projections | kernel | back projection ms (events) | engine ms (bp + copy + "
          "stats) | copy + glFinish ms | total median ms | total max ms | ≤ 4 ms |\n");
  printf ("|---:|---:|---|---:|---:|---:|---:|---:|---|\n");
  printf ("| %u² | %u | %s | %.3f | %.3f | %.3f | **%.3f** | %.3f | %s |\n\n", S, n_proj,
          last->kernel, _tomo_median (bp, runs), _tomo_median (recon, runs), _tomo_median (show, runs), m, mx,
          budget_verdict (m, mx, 4.0));
  fflush (stdout);
  return TRUE;
}

static gboolean
bench_interop_stream (TomoGpuGlHeadless *gl,
                      const char        *path,
                      double             axis,
                      double             write_s,
                      guint              S,
                      guint              n_proj,
                      GError           **error)
{
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) first = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  SliderStream st = { 0 };
  GThread *emitter;
  guint timeout_id, late = 0, third, worst = 0;
  double max_lag = 0, lag_med, recon_med;
  gboolean ok = FALSE;

  engine = interop_engine (gl, path, &st.request, error);
  if (engine == NULL)
    return FALSE;
  st.base_center = axis - 1.0;
  st.request.params.center = st.base_center;

  /* The first request reads and filters the row; the stream then moves
   * only the centre, as a slider does. */
  st.engine = engine;
  first = tomo_engine_reconstruct (engine, &st.request, NULL, error);
  if (first == NULL ||
      !tomo_gpu_gl_headless_show (gl, tomo_slice_get_device_data (first, NULL),
                                  first->width, first->height, error))
    return FALSE;

  loop = g_main_loop_new (NULL, FALSE);
  st.gl = gl;
  st.loop = loop;
  st.n_emit = (guint) (3000.0 / FRAME_MS);
  st.emit_us = g_new0 (gint64, st.n_emit);
  st.index = g_new0 (guint, st.n_emit);
  st.lag_ms = g_new0 (double, st.n_emit);
  st.recon_ms = g_new0 (double, st.n_emit);
  st.start_us = g_get_monotonic_time () + 20000;
  timeout_id = g_timeout_add_seconds (20, slider_timeout_cb, &st);
  emitter = g_thread_new ("bench-slider", slider_emitter, &st);
  g_main_loop_run (loop);
  g_thread_join (emitter);
  if (!st.timed_out)
    g_source_remove (timeout_id);
  /* After an early quit the worker may still answer: stop it, then run
   * what it queued while `st` is alive. */
  g_object_run_dispose (G_OBJECT (engine));
  while (g_main_context_iteration (NULL, FALSE))
    ;

  if (st.timed_out || st.n_errors > 0 || st.n_delivered == 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                   "Slider stream: %u of %u requests delivered, %u failed%s%s%s",
                   st.n_delivered, st.n_emit, st.n_errors,
                   st.timed_out ? ", timed out after 20 s" : "",
                   st.first_error ? ": " : "", st.first_error ? st.first_error : "");
      goto out;
    }

  for (guint k = 0; k < st.n_delivered; k++)
    {
      if (st.lag_ms[k] > max_lag)
        worst = k;
      max_lag = MAX (max_lag, st.lag_ms[k]);
      if (st.lag_ms[k] > FRAME_MS + st.recon_ms[k])
        late++;
    }
  lag_med = median_of (st.lag_ms, st.n_delivered);
  recon_med = median_of (st.recon_ms, st.n_delivered);
  third = MAX (st.n_delivered / 3, 1);

  printf ("### 60 Hz slider stream (`tomo_engine_submit`, latest wins)\n\n");
  printf ("A thread emits %u centre changes, one every %.2f ms (%.1f s), to a GPU `TomoEngine` "
          "(%s) on a %u-wide phantom scan of %u projections (written in %.1f s; row read and "
          "filtered once before the stream).  Requests keep the slice on the device and skip the "
          "download; the main loop copies each delivered slice into the texture and calls "
          "`glFinish`.  Lag = emission of the request → texture ready.\n\n",
          st.n_emit, FRAME_MS, st.n_emit * FRAME_MS / 1000.0, tomo_engine_get_device_name (engine),
          S, n_proj, write_s);
  printf ("| emitted | delivered | coalesced | engine ms (median) | lag median ms | lag max ms | "
          "lag > 16.7 ms + engine time | lag median, first third → last third |\n");
  printf ("|---:|---:|---:|---:|---:|---:|---:|---|\n");
  printf ("| %u | %u | %u | %.2f | **%.2f** | **%.2f** | %u | %.2f → %.2f ms |\n\n",
          st.n_emit, st.n_delivered, st.n_emit - st.n_delivered, recon_med, lag_med, max_lag,
          late, median_of (st.lag_ms, third),
          median_of (st.lag_ms + st.n_delivered - third, third));
  /* Says whether an outlier is the start of the stream or a stall later. */
  printf ("Largest lag: request %u of %u, emitted %.2f s into the stream, engine %.2f ms.\n\n",
          st.index[worst] + 1, st.n_emit, (st.emit_us[st.index[worst]] - st.start_us) / 1e6,
          st.recon_ms[worst]);
  fflush (stdout);
  ok = TRUE;

out:
  g_free (st.emit_us);
  g_free (st.index);
  g_free (st.lag_ms);
  g_free (st.recon_ms);
  g_free (st.first_error);
  return ok;
}

#endif /* HAVE_CUDA */

/* Returns FALSE only for a failure; a machine that cannot run it (no CUDA
 * device, no EGL, no interop) gets a message and TRUE. */
static gboolean
bench_interop (guint        S,
               guint        n_proj,
               guint        runs,
               const char  *cmdline,
               const char  *date,
               GError     **error)
{
#if HAVE_CUDA
  g_autoptr(GError) local = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;
  TomoGpuGlHeadless *gl;
  int sm_khz = 0, mem_khz = 0;
  double axis = 0, write_s = 0;
  gboolean ok;

  printf ("# tomolive bench --interop\n\n");
  if (tomo_gpu_get_n_devices () == 0)
    {
      printf ("Display path (interop): skipped — no CUDA device.\n\n");
      return TRUE;
    }
  gl = tomo_gpu_gl_headless_open (S, S, &local);
  if (gl == NULL)
    {
      printf ("Display path (interop): skipped — %s.\n\n", local->message);
      return TRUE;
    }
  name = tomo_gpu_get_device_name (tomo_gpu_gl_headless_get_device (gl));
  tomo_gpu_get_device_clocks (tomo_gpu_gl_headless_get_device (gl), &sm_khz, &mem_khz);
  printf ("- GPU: %s (peak SM %d MHz, memory %d MHz)\n", name, sm_khz / 1000, mem_khz / 1000);
  printf ("- GL: %s, headless EGL (EGL_PLATFORM_DEVICE_EXT, surfaceless)\n",
          tomo_gpu_gl_headless_get_renderer (gl));
  printf ("- date: %s\n", date);
  printf ("- command: `tomolive %s`\n\n", cmdline);
  fflush (stdout);

  dir = g_dir_make_tmp ("tomolive-bench-XXXXXX", error);
  if (dir == NULL)
    {
      tomo_gpu_gl_headless_close (gl);
      return FALSE;
    }
  path = write_interop_scan (dir, S, n_proj, &axis, &write_s, error);
  ok = path != NULL &&
       bench_interop_latency (gl, S, n_proj, runs, error) &&
       bench_interop_window (gl, path, axis, S, n_proj, runs, error) &&
       bench_interop_stream (gl, path, axis, write_s, S, n_proj, error);
  remove_tmp_dir (dir);
  tomo_gpu_gl_headless_close (gl);
  return ok;
#else
  printf ("# tomolive bench --interop\n\nDisplay path (interop): skipped — tomolive was built "
          "without CUDA.\n\n");
  return TRUE;
#endif
}

/* --runs, else `usual`; fewer than usual get a note. */
static guint
runs_or (int   runs,
         guint usual)
{
  guint n = runs ? (guint) runs : usual;

  if (n < usual)
    g_printerr ("tomolive bench: note: fewer than %u runs (%u) per median\n", usual, n);
  return n;
}

/* A failed measurement's message; exit status 1. */
static int
bench_fail (const GError *error)
{
  g_printerr ("tomolive bench: %s\n", error->message);
  return 1;
}

int
tomo_bench_main (int    argc,
                 char **argv)
{
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--live"))
      return tomo_live_bench_main (argc, argv);

  g_autoptr(GOptionContext) octx = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *sizes = NULL;
  g_autofree char *kernels = g_strdup ("standard,texture,alu,hybrid,auto");
  g_autofree char *sm_clock = NULL;
  g_autofree char *mem_clock = NULL;
  g_autofree char *name = NULL;
  g_autofree char *cmdline = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *date = g_date_time_format (now, "%Y-%m-%d %H:%M %Z");
  g_autoptr(GKeyFile) tune = NULL;
  /* 0: the default of the measurement (GPU tables, --cpu or --interop). */
  int n_proj = 0, runs = 0, volume = 0, device = 0;
  gboolean tune_flag = FALSE, skip_bp = FALSE, skip_filter = FALSE;
  gboolean cpu_flag = FALSE, interop_flag = FALSE, center_flag = FALSE, planes_flag = FALSE;
  gboolean row_flag = FALSE, fill_flag = FALSE;
  int plane_rows = 0;
  BenchOptions opts = { 0 };
  TomoGpuContext *ctx = NULL;
  int sm_khz = 0, mem_khz = 0;
  int status = 0;
  GOptionEntry entries[] = {
    { "sizes", 's', 0, G_OPTION_ARG_STRING, &sizes,
      "Slice sizes (pixels per side, comma separated; default 1024,2048,4096; "
      "--cpu and --interop use the first, default 1024 and 2048)", "N,…" },
    { "projections", 'p', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Projections per sinogram (default 2048; --cpu 1024)", "N" },
    { "runs", 'r', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Timed runs per measurement, the median is reported (default 20; --cpu 5; --interop 50)",
      "N" },
    { "cpu", 0, 0, G_OPTION_ARG_NONE, &cpu_flag,
      "Measure the CPU backend instead: back projection, the viewer's loop, opening a header "
      "(no GPU needed)", NULL },
    { "interop", 0, 0, G_OPTION_ARG_NONE, &interop_flag,
      "Measure the display path instead: centre change → GL texture through CUDA–OpenGL "
      "interop in a headless EGL context, and a 60 Hz slider stream", NULL },
    { "center", 0, 0, G_OPTION_ARG_NONE, &center_flag,
      "Measure the automatic centre estimate instead (CPU, GPU direct and cuFFT correlation)", NULL },
    { "planes", 0, 0, G_OPTION_ARG_NONE, &planes_flag,
      "Measure the volume store instead: fill from host memory, XZ/YZ/XY/oblique planes, "
      "global, cached and rows kernels, float and half, a 256³ preview", NULL },
    { "store-fill", 0, 0, G_OPTION_ARG_NONE, &fill_flag,
      "Measure filling the GPU volume store from a 2048-wide, 1800-projection uint16 file "
      "instead: raw rows preprocessed on the device against rows preprocessed on the host "
      "(temporary file in $TMPDIR)", NULL },
    { "rows", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "--planes: detector rows in the store (default: the size); --store-fill: rows of the "
      "file (default 64)", "N" },
    { "kernels", 'k', 0, G_OPTION_ARG_STRING, &kernels,
      "Kernels to measure besides standard (default standard,texture,alu,hybrid,auto)", "K,…" },
    { "volume", 'v', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Also reconstruct an N³ volume from N projections of N×N, host to host (e.g. 2048)", "N" },
    { "row-change", 0, 0, G_OPTION_ARG_NONE, &row_flag,
      "Also measure the viewer engine's row change on a 2048-wide, 1800-projection file "
      "(temporary, in $TMPDIR)", NULL },
    { "device", 'd', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "CUDA device (default 0)", "N" },
    { "tune", 't', 0, G_OPTION_ARG_NONE, &tune_flag,
      "Store the fastest kernel per slices × interpolation × size class for the auto kernel", NULL },
    { "no-backprojection", 0, 0, G_OPTION_ARG_NONE, &skip_bp, "Skip the back-projection table", NULL },
    { "no-filter", 0, 0, G_OPTION_ARG_NONE, &skip_filter, "Skip the filtering table", NULL },
    { "sm-clock", 0, 0, G_OPTION_ARG_STRING, &sm_clock,
      "SM clock to note in the report (e.g. from nvidia-smi)", "TEXT" },
    { "mem-clock", 0, 0, G_OPTION_ARG_STRING, &mem_clock,
      "Memory clock to note in the report (e.g. from nvidia-smi)", "TEXT" },
    G_OPTION_ENTRY_NULL
  };
  double n_proj_v = 0, runs_v = 0, volume_v = 0, device_v = 0, plane_rows_v = 0;
  TomoNumberOption numbers[] = {
    { "projections", 'p', 1, 65000, TRUE, &n_proj_v },
    { "runs", 'r', 1, 100000, TRUE, &runs_v },
    { "rows", 0, 1, 65536, TRUE, &plane_rows_v },
    { "volume", 'v', 1, 16384, TRUE, &volume_v },
    { "device", 'd', 0, 63, TRUE, &device_v },
    { NULL },
  };

  cmdline = g_strjoinv (" ", argv);
  octx = g_option_context_new ("— measure the GPU reconstruction engine");
  g_option_context_set_summary (octx,
    "Prints Markdown tables: back projection in GU/s per kernel, slices packed (1, 2, 4),\n"
    "interpolation and size, each beside the standard kernel of the same run; filtering\n"
    "time with C2C-pair and R2C transforms; the volume path's time per slice (4 slices\n"
    "linear, auto, filter included); the latency of a centre change (only back\n"
    "projection, the filtered sinogram is cached); with --volume, a whole volume from host\n"
    "memory to host memory.  Random input, fresh per size.\n"
    "\n"
    "--cpu measures the CPU backend (works without a GPU); --interop the window's display\n"
    "path without a window.  Either replaces the GPU tables; both may be given.\n"
    "--live measures live ingest over loopback ZeroMQ (`bench --live --help` lists its\n"
    "options).");
  if (!tomo_cli_parse (octx, entries, numbers, &argc, &argv, &error))
    return bench_fail (error);
  n_proj = (int) n_proj_v;
  runs = (int) runs_v;
  volume = (int) volume_v;
  device = (int) device_v;
  plane_rows = (int) plane_rows_v;
  gboolean parsed = parse_sizes (sizes ? sizes : "1024,2048,4096", &opts, &error);
  g_autofree guint *size_list = opts.sizes;

  if (!parsed || !parse_kernels (kernels, &opts, &error))
    return bench_fail (error);

  if (center_flag)
    {
      return tomo_center_bench (sizes ? opts.sizes[0] : 2048, runs ? runs : 20, device);
    }
  if (fill_flag)
    {
      g_autofree char *dir = g_dir_make_tmp ("tomolive-fill-XXXXXX", &error);

      if (dir == NULL || !tomo_bench_store_fill (dir, plane_rows > 0 ? (guint) plane_rows : 64,
                                                 runs ? (guint) runs : 5, &error))
        status = bench_fail (error);
      remove_tmp_dir (dir);
      return status;
    }
  if (planes_flag)
    {
      guint S = sizes ? opts.sizes[0] : 2048;

      if (!tomo_bench_planes (S, n_proj ? (guint) n_proj : S, plane_rows > 0 ? (guint) plane_rows : S,
                              runs ? (guint) runs : 10, device, cmdline, date, &error))
        status = bench_fail (error);
      return status;
    }
  if (cpu_flag || interop_flag)
    {
      gboolean ok = TRUE;

      if (cpu_flag)
        ok = bench_cpu (sizes ? opts.sizes[0] : 1024, n_proj ? n_proj : 1024, runs_or (runs, 5),
                        cmdline, date, &error);
      if (ok && interop_flag)
        ok = bench_interop (sizes ? opts.sizes[0] : 2048, n_proj ? n_proj : 2048,
                            runs_or (runs, 50), cmdline, date, &error);
      return ok ? 0 : bench_fail (error);
    }

  opts.n_proj = n_proj ? n_proj : 2048;
  opts.runs = runs_or (runs, 20);
  opts.volume = volume;
  g_autofree double *bp4_ms = opts.bp4_ms = g_new0 (double, opts.n_sizes);
  g_autofree double *filter4_ms = opts.filter4_ms = g_new0 (double, opts.n_sizes);

  if (tomo_gpu_get_n_devices () == 0)
    {
      ctx = tomo_gpu_context_new (0, &error);
      g_printerr ("tomolive bench: no GPU to measure (%s); "
                  "“tomolive bench --cpu” measures the CPU backend\n",
                  error ? error->message : "no CUDA device");
      return 1;
    }
  ctx = tomo_gpu_context_new (device, &error);
  if (ctx == NULL)
    return bench_fail (error);

  name = tomo_gpu_get_device_name (device);
  tomo_gpu_get_device_clocks (device, &sm_khz, &mem_khz);
  printf ("# tomolive bench\n\n");
  printf ("- GPU: %s (device %d of %d)\n", name, device, tomo_gpu_get_n_devices ());
  printf ("- clocks: SM %s (peak %d MHz), memory %s (peak %d MHz)\n",
          sm_clock ? sm_clock : "not given", sm_khz / 1000,
          mem_clock ? mem_clock : "not given", mem_khz / 1000);
  printf ("- date: %s\n", date);
  printf ("- command: `tomolive %s`\n\n", cmdline);
  fflush (stdout);

  if (tune_flag)
    tune = g_key_file_new ();
  if ((!skip_bp && !bench_backprojection (ctx, &opts, tune, &error)) ||
      (!skip_filter && !bench_filter (ctx, &opts, &error)) ||
      (print_volume_per_slice (&opts), !bench_latency (ctx, &opts, &error)))
    {
      status = bench_fail (error);
      goto out;
    }
  if (tune != NULL && !skip_bp)
    {
      g_autofree char *path = tomo_gpu_get_tune_path (device);
      g_autofree char *dir = g_path_get_dirname (path);

      g_key_file_set_comment (tune, NULL, NULL,
                              " Fastest back-projection kernel per slices, interpolation and size "
                              "class, measured by tomolive bench --tune", NULL);
      if (g_mkdir_with_parents (dir, 0755) != 0)
        {
          g_printerr ("tomolive bench: cannot create %s: %s\n", dir, g_strerror (errno));
          status = 1;
          goto out;
        }
      if (!g_key_file_save_to_file (tune, path, &error))
        {
          status = bench_fail (error);
          goto out;
        }
      tomo_gpu_context_reload_tuning (ctx);
      printf ("Tuning table written to %s\n\n", path);
    }
  if (volume > 0 && !bench_volume (&opts, &error))
    status = bench_fail (error);
  if (status == 0 && row_flag)
    {
      g_autofree char *dir = g_dir_make_tmp ("tomolive-row-XXXXXX", &error);

      if (dir == NULL || !tomo_bench_row_change (dir, TOMO_BACKEND_GPU, 20, &error))
        status = bench_fail (error);
      remove_tmp_dir (dir);
    }

out:
  tomo_gpu_context_free (ctx);
  return status;
}
