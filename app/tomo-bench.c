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

#include "tomo-cli.h"
#include "tomo-filter.h"
#include "tomo-gpu.h"

typedef struct
{
  guint *sizes;
  guint n_sizes;
  guint n_proj;
  guint runs;
  guint volume;
  gboolean tune;
  int device;
  gboolean kernels[TOMO_GPU_N_KERNELS];
} BenchOptions;

static int
cmp_double (gconstpointer a,
            gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *v,
        guint   n)
{
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

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

static gboolean
setup_context (TomoGpuContext *ctx,
               guint           width,
               guint           n_proj,
               const double   *angles,
               GError        **error)
{
  guint padded = tomo_filter_padded_width (width);
  g_autofree double *resp = g_new (double, padded / 2 + 1);

  tomo_filter_response (TOMO_FILTER_RAMLAK, padded, tomo_fbp_scale (n_proj) / padded, resp);
  return tomo_gpu_context_set_geometry (ctx, width, n_proj, angles, error) &&
         tomo_gpu_context_set_filter (ctx, padded, resp, 0, error);
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
  *ms = median (t, runs);
  *used = tomo_gpu_context_get_last_kernel (ctx);
  return TRUE;
}

static gboolean
bench_backprojection (TomoGpuContext     *ctx,
                      const BenchOptions *opts,
                      GKeyFile           *tune,
                      GError            **error)
{
  static const guint slice_counts[] = { 1, 2, 4 };
  g_autofree double *angles = make_angles (opts->n_proj);

  printf ("## Back projection (GU/s = pixels × projections × slices / s / 1e9; "
          "CUDA events, median of %u runs after 2 warm-up runs)\n\n", opts->runs);
  printf ("| size | projections | slices | interp | kernel | ms | GU/s | × standard |\n");
  printf ("|---:|---:|---:|---|---|---:|---:|---:|\n");

  for (guint si = 0; si < opts->n_sizes; si++)
    {
      guint S = opts->sizes[si];
      gsize plane = (gsize) opts->n_proj * S;
      g_autofree float *data = random_floats (4 * plane, 1000 + S);

      if (!setup_context (ctx, S, opts->n_proj, angles, error))
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
              const BenchOptions *opts,
              GError            **error)
{
  static const guint slice_counts[] = { 1, 4 };
  static const TomoGpuFilterMethod methods[] = {
    TOMO_GPU_FILTER_METHOD_C2C_PAIR, TOMO_GPU_FILTER_METHOD_R2C,
  };
  g_autofree double *angles = make_angles (opts->n_proj);

  printf ("## Filtering (pad + FFT + response + inverse FFT + crop, CUDA events, median of %u)\n\n",
          opts->runs);
  printf ("| size | projections | slices | padded | C2C pair ms | R2C ms | faster |\n");
  printf ("|---:|---:|---:|---:|---:|---:|---|\n");
  for (guint si = 0; si < opts->n_sizes; si++)
    {
      guint S = opts->sizes[si];
      gsize plane = (gsize) opts->n_proj * S;
      g_autofree float *data = random_floats (4 * plane, 2000 + S);

      if (!setup_context (ctx, S, opts->n_proj, angles, error))
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
              ms[m] = median (t, opts->runs);
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
static gboolean
bench_latency (TomoGpuContext     *ctx,
               const BenchOptions *opts,
               GError            **error)
{
  g_autofree double *angles = make_angles (opts->n_proj);

  printf ("## Centre change → slice in device memory (1 slice, linear, auto kernel, "
          "wall clock, median of %u)\n\n", opts->runs);
  printf ("| size | projections | kernel | latency ms | first load (upload + filter) ms |\n");
  printf ("|---:|---:|---|---:|---:|\n");
  for (guint si = 0; si < opts->n_sizes; si++)
    {
      guint S = opts->sizes[si];
      g_autofree float *data = random_floats ((gsize) opts->n_proj * S, 3000 + S);
      g_autofree double *t = g_new (double, opts->runs);
      TomoGpuBackprojectParams params;
      gint64 t0;
      double load_ms;

      if (!setup_context (ctx, S, opts->n_proj, angles, error))
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
              median (t, opts->runs), load_ms);
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
} VolumeBench;

static gboolean
volume_read (guint row, float *sino, gpointer user_data, GError **error)
{
  VolumeBench *vb = user_data;
  gint64 t0 = g_get_monotonic_time ();

  memcpy (sino, vb->sino, vb->sino_size);
  /* The pipeline calls `read` one at a time. */
  vb->read_us += g_get_monotonic_time () - t0;
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

static gboolean
bench_volume (const BenchOptions *opts,
              GError            **error)
{
  guint V = opts->volume;
  guint padded = tomo_filter_padded_width (V);
  g_autofree double *angles = make_angles (V);
  g_autofree double *resp = g_new (double, padded / 2 + 1);
  g_autofree float *sino = random_floats ((gsize) V * V, 4000 + V);
  g_autofree float *slice = g_new (float, (gsize) V * V);
  TomoGpuVolumeJob job;
  VolumeBench vb = { sino, slice, (gsize) V * V * sizeof (float), (gsize) V * V * sizeof (float), 0, 0, 0 };
  gint64 t0;
  double s;

  tomo_filter_response (TOMO_FILTER_RAMLAK, padded, tomo_fbp_scale (V) / padded, resp);
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
  job.read = volume_read;
  job.write = volume_write;
  job.user_data = &vb;

  printf ("## Whole volume, host memory → host memory (read/write callbacks are memcpy)\n\n");
  for (int interp = 1; interp >= 0; interp--)
    {
      job.bp.interp = interp;
      vb.written = 0;
      vb.read_us = vb.write_us = 0;
      t0 = g_get_monotonic_time ();
      if (!tomo_gpu_reconstruct_volume (&job, error))
        return FALSE;
      s = (g_get_monotonic_time () - t0) / 1e6;
      printf ("- %u³ voxels from %u projections of %u×%u, %s, auto kernel, %d GPU(s): "
              "**%.2f s** (%.0f GU/s overall, %u slices written; inside read %.2f s, "
              "inside write %.2f s)\n",
              V, V, V, V, interp ? "linear" : "nearest", tomo_gpu_get_n_devices (), s,
              (double) V * V * V * V / s / 1e9, vb.written, vb.read_us / 1e6, vb.write_us / 1e6);
      fflush (stdout);
    }
  printf ("\n");
  return TRUE;
}

int
tomo_bench_main (int    argc,
                 char **argv)
{
  g_autoptr(GOptionContext) octx = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *sizes = g_strdup ("1024,2048,4096");
  g_autofree char *kernels = g_strdup ("standard,texture,alu,hybrid,auto");
  g_autofree char *sm_clock = NULL;
  g_autofree char *mem_clock = NULL;
  g_autofree char *name = NULL;
  g_autofree char *cmdline = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *date = g_date_time_format (now, "%Y-%m-%d %H:%M %Z");
  g_autoptr(GKeyFile) tune = NULL;
  int n_proj = 2048, runs = 20, volume = 0, device = 0;
  gboolean tune_flag = FALSE, skip_bp = FALSE, skip_filter = FALSE;
  BenchOptions opts = { 0 };
  TomoGpuContext *ctx = NULL;
  int sm_khz = 0, mem_khz = 0;
  int status = 0;
  GOptionEntry entries[] = {
    { "sizes", 's', 0, G_OPTION_ARG_STRING, &sizes,
      "Slice sizes (pixels per side, comma separated; default 1024,2048,4096)", "N,…" },
    { "projections", 'p', 0, G_OPTION_ARG_INT, &n_proj,
      "Projections per sinogram (default 2048)", "N" },
    { "runs", 'r', 0, G_OPTION_ARG_INT, &runs,
      "Timed runs per measurement, the median is reported (≥ 20; default 20)", "N" },
    { "kernels", 'k', 0, G_OPTION_ARG_STRING, &kernels,
      "Kernels to measure besides standard (default standard,texture,alu,hybrid,auto)", "K,…" },
    { "volume", 'v', 0, G_OPTION_ARG_INT, &volume,
      "Also reconstruct an N³ volume from N projections of N×N, host to host (e.g. 2048)", "N" },
    { "device", 'd', 0, G_OPTION_ARG_INT, &device, "CUDA device (default 0)", "N" },
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

  cmdline = g_strjoinv (" ", argv);
  octx = g_option_context_new ("— measure the GPU reconstruction engine");
  g_option_context_set_summary (octx,
    "Prints Markdown tables: back projection in GU/s per kernel, slices packed (1, 2, 4),\n"
    "interpolation and size, each beside the standard kernel of the same run; filtering\n"
    "time with C2C-pair and R2C transforms; the latency of a centre change (only back\n"
    "projection, the filtered sinogram is cached); with --volume, a whole volume from host\n"
    "memory to host memory.  Random input, fresh per size.");
  g_option_context_add_main_entries (octx, entries, NULL);
  if (!g_option_context_parse (octx, &argc, &argv, &error))
    {
      g_printerr ("tomolive bench: %s\n", error->message);
      return 1;
    }
  if (n_proj < 1 || n_proj > 65000 || runs < 1 || volume < 0 || volume > 16384)
    {
      g_printerr ("tomolive bench: --projections must be 1…65000, --runs ≥ 1, --volume 0…16384\n");
      return 1;
    }
  if (runs < 20)
    g_printerr ("tomolive bench: note: fewer than 20 runs (%d) per median\n", runs);
  if (!parse_sizes (sizes, &opts, &error) || !parse_kernels (kernels, &opts, &error))
    {
      g_printerr ("tomolive bench: %s\n", error->message);
      g_free (opts.sizes);
      return 1;
    }
  opts.n_proj = n_proj;
  opts.runs = runs;
  opts.volume = volume;
  opts.tune = tune_flag;
  opts.device = device;

  if (tomo_gpu_get_n_devices () == 0)
    {
      ctx = tomo_gpu_context_new (0, &error);
      g_printerr ("tomolive bench: no GPU to measure: %s\n",
                  error ? error->message : "no CUDA device");
      g_free (opts.sizes);
      return 1;
    }
  ctx = tomo_gpu_context_new (device, &error);
  if (ctx == NULL)
    {
      g_printerr ("tomolive bench: %s\n", error->message);
      g_free (opts.sizes);
      return 1;
    }

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
      !bench_latency (ctx, &opts, &error))
    {
      g_printerr ("tomolive bench: %s\n", error->message);
      status = 1;
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
          g_printerr ("tomolive bench: %s\n", error->message);
          status = 1;
          goto out;
        }
      tomo_gpu_context_reload_tuning (ctx);
      printf ("Tuning table written to %s\n\n", path);
    }
  if (volume > 0 && !bench_volume (&opts, &error))
    {
      g_printerr ("tomolive bench: %s\n", error->message);
      status = 1;
    }

out:
  tomo_gpu_context_free (ctx);
  g_free (opts.sizes);
  return status;
}
