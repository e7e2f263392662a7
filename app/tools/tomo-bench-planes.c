/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-bench"

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tomo-bench-planes.h"
#include "tomo-fbp.h"
#include "tomo-filter.h"
#include "tomo-median.h"
#include "tomo-plane.h"
#include "tomo-preview.h"
#include "tomo-gpu-gl.h"
#include "tomo-gpu-store.h"

#define POOL 8   /* distinct random sinograms the rows are drawn from */

typedef struct
{
  float *pool;
  gsize row_elems;
} Source;

/* The "file" is host memory: each row a copy of one of POOL random
 * sinograms, so filling measures host → device → filter → store. */
static gboolean
read_row (guint    row,
          float   *sino,
          gpointer user_data,
          GError **error)
{
  Source *src = user_data;

  memcpy (sino, src->pool + (row * 5u % POOL) * src->row_elems, src->row_elems * sizeof (float));
  return TRUE;
}

/* Median CUDA-event milliseconds of `runs` planes after two warm-ups; the
 * centre moves by a hundredth of a pixel per run, so no two runs see the
 * same input. */
static gboolean
time_plane (TomoGpuStore       *store,
            const TomoGpuPlane *plane,
            double              center,
            TomoGpuPlaneKernel  kernel,
            guint               runs,
            double             *ms,
            GError            **error)
{
  g_autofree double *t = g_new (double, runs);

  for (guint r = 0; r < runs + 2; r++)
    {
      if (!tomo_gpu_store_plane (store, plane, center + 0.01 * r, 1, kernel, error))
        return FALSE;
      if (r >= 2)
        t[r - 2] = tomo_gpu_store_get_plane_ms (store);
    }
  *ms = _tomo_median (t, runs);
  return TRUE;
}

/* TOMO_BENCH_PLANE_KERNELS, a comma-separated list of kernel names (the
 * global baseline always runs): only those; unset, all. */
static gboolean
kernel_wanted (TomoGpuPlaneKernel kernel)
{
  const char *list = g_getenv ("TOMO_BENCH_PLANE_KERNELS");
  g_auto (GStrv) names = NULL;

  if (list == NULL || *list == '\0')
    return TRUE;
  names = g_strsplit (list, ",", -1);
  return g_strv_contains ((const char *const *) names, tomo_gpu_plane_kernel_to_string (kernel));
}

static void
plane_init (TomoGpuPlane *p,
            double cx, double cy, double cz,
            double ux, double uy, double uz,
            double vx, double vy, double vz,
            guint w, guint h)
{
  *p = (TomoGpuPlane) { { cx, cy, cz }, { ux, uy, uz }, { vx, vy, vz }, w, h };
}

/* The preview into the 3D pane's texture (GL_R16F, N³) in a headless GL
 * context on the device, the two paths in turns, medians of `runs` after
 * two warm-ups: the kernel, a copy of the volume of its own on the device
 * with its range (what the backend hands the view), the copy through
 * CUDA–GL interop and glFinish; against the kernel, the download and
 * glTexSubImage3D of the floats (converted to half by GL) and glFinish.
 * No EGL device on a CUDA device: a message and TRUE. */
static gboolean
bench_preview_texture (TomoGpuStore         *store,
                       const TomoGpuPreview *pv,
                       double                center,
                       guint                 N,
                       guint                 runs,
                       float                *host,
                       GError              **error)
{
  g_autoptr (GError) local = NULL;
  TomoGpuGlHeadless *gl = tomo_gpu_gl_headless_open (1, 1, &local);
  TomoGpuGlVolume *reg = NULL;
  unsigned int tex = 0;
  unsigned int tex32 = 0;
  TomoGpuGlVolume *reg32 = NULL;
  g_autofree double *t = g_new (double, 10 * runs);
  double *tk1 = t, *tkeep = t + runs, *tcopy = t + 2 * runs, *tk2 = t + 3 * runs;
  double *tdl = t + 4 * runs, *tup = t + 5 * runs, *tsum = t + 6 * runs;
  double *tup32 = t + 7 * runs, *tcopy32 = t + 8 * runs, *tfresh = t + 9 * runs;
  gboolean ok = FALSE;

  if (gl == NULL)
    {
      printf ("The 3D texture paths not measured: %s\n", local->message);
      return TRUE;
    }
  tex = tomo_gpu_gl_headless_texture_3d_new (gl, N, N, N, TRUE, error);
  if (tex == 0 || (reg = tomo_gpu_gl_volume_register (tex, N, N, N, TRUE, error)) == NULL)
    goto out;
  /* Beside it a float texture: no conversion on either path. */
  tex32 = tomo_gpu_gl_headless_texture_3d_new (gl, N, N, N, FALSE, error);
  if (tex32 == 0 || (reg32 = tomo_gpu_gl_volume_register (tex32, N, N, N, FALSE, error)) == NULL)
    goto out;
  for (guint r = 0; r < runs + 2; r++)
    {
      guint i = r >= 2 ? r - 2 : 0;
      gint64 t0 = g_get_monotonic_time (), t1, t2, t3;
      TomoGpuBuffer *kept;
      TomoGpuStats stats;

      if (!tomo_gpu_store_preview (store, pv, center + 0.01 * r, 1, error))
        goto out;
      t1 = g_get_monotonic_time ();
      if ((kept = tomo_gpu_store_keep_output (store, &stats, error)) == NULL)
        goto out;
      t2 = g_get_monotonic_time ();
      ok = tomo_gpu_gl_volume_copy (reg, tomo_gpu_buffer_get_data (kept), N, N, N, error);
      tomo_gpu_gl_headless_finish (gl);
      tomo_gpu_buffer_free (kept);
      if (!ok)
        goto out;
      t3 = g_get_monotonic_time ();
      tk1[i] = (t1 - t0) / 1e3;
      tkeep[i] = (t2 - t1) / 1e3;
      tcopy[i] = (t3 - t2) / 1e3;
      tsum[i] = (t3 - t0) / 1e3;

      t0 = g_get_monotonic_time ();
      ok = FALSE;
      if (!tomo_gpu_store_preview (store, pv, center + 0.01 * r, 1, error))
        goto out;
      t1 = g_get_monotonic_time ();
      if (!tomo_gpu_store_download (store, host, error))
        goto out;
      t2 = g_get_monotonic_time ();
      if (!tomo_gpu_gl_headless_texture_3d_upload (gl, tex, N, N, N, host, error))
        goto out;
      t3 = g_get_monotonic_time ();
      tk2[i] = (t1 - t0) / 1e3;
      tdl[i] = (t2 - t1) / 1e3;
      tup[i] = (t3 - t2) / 1e3;
      /* The same volume into the float texture, both ways. */
      t0 = g_get_monotonic_time ();
      if (!tomo_gpu_gl_headless_texture_3d_upload (gl, tex32, N, N, N, host, error))
        goto out;
      t1 = g_get_monotonic_time ();
      if (!tomo_gpu_gl_volume_copy (reg32, tomo_gpu_store_get_output (store), N, N, N, error))
        goto out;
      tomo_gpu_gl_headless_finish (gl);
      t2 = g_get_monotonic_time ();
      tup32[i] = (t1 - t0) / 1e3;
      tcopy32[i] = (t2 - t1) / 1e3;
      /* The copy with min/max as before: its buffer and workspace
       * allocated for it and freed after. */
      tomo_gpu_store_set_keep_fresh (store, TRUE);
      t0 = g_get_monotonic_time ();
      kept = tomo_gpu_store_keep_output (store, &stats, error);
      tomo_gpu_buffer_free (kept);
      t2 = g_get_monotonic_time ();
      tomo_gpu_store_set_keep_fresh (store, FALSE);
      if (kept == NULL)
        goto out;
      tfresh[i] = (t2 - t0) / 1e3;
    }
  printf ("3D texture (GL_R16F %u³, %s), wall ms, medians of %u: kernel %.3f + copy of its own "
          "with device min/max %.3f + CUDA–GL interop copy and glFinish %.3f = **%.3f** "
          "(sum of medians; median of sums %.3f); kernel %.3f + download %.3f + "
          "glTexSubImage3D of floats and glFinish %.3f = **%.3f**.\n",
          N, tomo_gpu_gl_headless_get_renderer (gl), runs, _tomo_median (tk1, runs),
          _tomo_median (tkeep, runs), _tomo_median (tcopy, runs),
          _tomo_median (tk1, runs) + _tomo_median (tkeep, runs) + _tomo_median (tcopy, runs),
          _tomo_median (tsum, runs), _tomo_median (tk2, runs), _tomo_median (tdl, runs),
          _tomo_median (tup, runs),
          _tomo_median (tk2, runs) + _tomo_median (tdl, runs) + _tomo_median (tup, runs));
  printf ("The copy with device min/max into a buffer kept by the store (reused): %.3f ms; "
          "with its buffer and statistics workspace allocated and freed each time (the path "
          "before): %.3f ms, freeing included.\n",
          _tomo_median (tkeep, runs), _tomo_median (tfresh, runs));
  printf ("3D texture GL_R32F %u³ (no conversion): CUDA–GL interop copy (cudaMemcpy3D) and "
          "glFinish %.3f ms; glTexSubImage3D of the downloaded floats and glFinish %.3f ms.\n",
          N, _tomo_median (tcopy32, runs), _tomo_median (tup32, runs));
  ok = TRUE;

out:
  tomo_gpu_gl_volume_unregister (reg32);
  tomo_gpu_gl_headless_texture_delete (gl, tex32);
  tomo_gpu_gl_volume_unregister (reg);
  tomo_gpu_gl_headless_texture_delete (gl, tex);
  tomo_gpu_gl_headless_close (gl);
  return ok;
}

static gboolean
bench_store (guint                 W,
             guint                 P,
             guint                 R,
             guint                 runs,
             int                   device,
             TomoGpuStorePrecision precision,
             Source               *src,
             const double         *angles,
             GError              **error)
{
  g_autofree double *response = NULL;
  TomoGpuStore *store;
  guint padded;
  double c = (W - 1) / 2.0, zc = (R - 1) / 2.0, center = c + 3.37;
  double a = 30.0 * G_PI / 180.0, tilt = 15.0 * G_PI / 180.0;
  struct
  {
    const char *name;
    TomoGpuPlane plane;
  } planes[5];
  gboolean ok = FALSE;

  store = tomo_gpu_store_new (device, W, P, angles, 0, R, precision, 0, error);
  if (store == NULL)
    return FALSE;
  response = tomo_filter_fbp_response (TOMO_FILTER_SHEPP_LOGAN, W, P, &padded);
  if (!tomo_gpu_store_set_filter (store, padded, response, 1, error) ||
      !tomo_gpu_store_fill (store, read_row, NULL, src, NULL, error))
    goto out;

  printf ("\n### %s store: %u rows × %u projections × %u columns\n\n",
          tomo_gpu_store_precision_to_string (precision), R, P, W);
  printf ("Store: %.2f GiB on the device; filled from host memory in %.0f ms "
          "(%.1f GB/s of float sinograms read, uploaded, filtered and stored).\n\n",
          tomo_gpu_store_get_bytes (store) / (double) (1 << 30), tomo_gpu_store_get_fill_ms (store),
          (double) R * P * W * 4 / (tomo_gpu_store_get_fill_ms (store) * 1e6));

  plane_init (&planes[0].plane, c, c, zc, 1, 0, 0, 0, 0, 1, W, R);
  planes[0].name = "XZ";
  plane_init (&planes[1].plane, c, c, zc, 0, 1, 0, 0, 0, 1, W, R);
  planes[1].name = "YZ";
  plane_init (&planes[2].plane, c, c, zc, 1, 0, 0, 0, 1, 0, W, W);
  planes[2].name = "XY (from the store)";
  plane_init (&planes[3].plane, c, c, zc, cos (a), sin (a), 0,
              -sin (tilt) * sin (a), sin (tilt) * cos (a), cos (tilt), W, R);
  planes[3].name = "oblique 30°, tilt 15°";
  plane_init (&planes[4].plane, c, c, zc, cos (a) * cos (tilt), sin (a) * cos (tilt), sin (tilt),
              -sin (a), cos (a), 0, W, R);
  planes[4].name = "oblique, rows not horizontal";

  printf ("| plane | samples | kernel | ms (median of %u) | GU/s | vs global |\n", runs);
  printf ("|---|---|---|---|---|---|\n");
  for (guint k = 0; k < G_N_ELEMENTS (planes); k++)
    {
      TomoGpuPlane *pl = &planes[k].plane;
      double gu = (double) pl->width * pl->height * P;
      double ms_global = 0, ms_k = 0;
      static const TomoGpuPlaneKernel others[] = { TOMO_GPU_PLANE_TEXTURE, TOMO_GPU_PLANE_CACHED,
                                                   TOMO_GPU_PLANE_ROWS, TOMO_GPU_PLANE_TILE,
                                                   TOMO_GPU_PLANE_TILT };

      if (!time_plane (store, pl, center, TOMO_GPU_PLANE_GLOBAL, runs, &ms_global, error))
        goto out;
      printf ("| %s | %u × %u | global | %.2f | %.0f | 1.00 |\n", planes[k].name, pl->width,
              pl->height, ms_global, gu / (ms_global * 1e6));
      for (guint o = 0; o < G_N_ELEMENTS (others); o++)
        {
          /* All but the texture kernel need horizontal plane rows. */
          if ((others[o] != TOMO_GPU_PLANE_TEXTURE && pl->u[2] != 0.0) ||
              !kernel_wanted (others[o]))
            continue;
          if (!time_plane (store, pl, center, others[o], runs, &ms_k, error))
            goto out;
          printf ("| %s | %u × %u | %s | %.2f | %.0f | %.2f |\n", planes[k].name, pl->width,
                  pl->height, tomo_gpu_plane_kernel_to_string (others[o]), ms_k,
                  gu / (ms_k * 1e6), ms_global / ms_k);
          if (others[o] != TOMO_GPU_PLANE_TEXTURE)
            continue;
          /* Its blocks of 16 × 16 (TOMO_PLANE_TEX_BLOCK; above: 32 × 8, a
           * warp on one plane row, one texture object per warp on planes
           * with horizontal rows). */
          g_setenv ("TOMO_PLANE_TEX_BLOCK", "16x16", TRUE);
          ok = time_plane (store, pl, center, others[o], runs, &ms_k, error);
          g_unsetenv ("TOMO_PLANE_TEX_BLOCK");
          if (!ok)
            goto out;
          ok = FALSE;
          printf ("| %s | %u × %u | texture, 16 × 16 blocks | %.2f | %.0f | %.2f |\n",
                  planes[k].name, pl->width, pl->height, ms_k, gu / (ms_k * 1e6),
                  ms_global / ms_k);
        }
      /* The tilt kernel's raw path (TOMO_PLANE_TILT_PATH=raw in
       * tomo-gpu-store-tilt.cu: no texture share; above: auto), the
       * baseline, then the hybrid (TOMO_PLANE_TILT_TEX=G:T: per stage of G
       * ring projections T through the texture units; half store, planes
       * between stored rows: XY and the oblique plane here); the packed
       * half2 sums (TOMO_PLANE_TILT_PATH=pack) alone and with 4:1L, the
       * same sums from interleaved pairs of stored rows (il; il4: four
       * blocks an SM where the plane needs at most 4 stored rows a tile)
       * alone and with 4:1L; then the rows marked `again` a second time,
       * after them.  `auto` above: the packed sums on the oblique plane,
       * il on XY, the raw path on XZ and YZ (rows on stored rows). */
      static const struct
      {
        const char *path, *tex, *label;
        gboolean again;
      } tilt_paths[] = {
        { "raw", NULL, "raw path", TRUE },
        { "raw", "4:1", "hybrid 4 ALU + 1 texture (1/5)", FALSE },
        { "raw", "4:2", "hybrid 4 + 2 (1/3)", FALSE },
        { "raw", "4:3", "hybrid 4 + 3 (3/7)", FALSE },
        { "raw", "4:4", "hybrid 4 + 4 (1/2)", FALSE },
        { "raw", "3:1", "hybrid 3 + 1 (1/4)", FALSE },
        { "raw", "2:1", "hybrid 2 + 1 (1/3)", FALSE },
        { "raw", "2:2", "hybrid 2 + 2 (1/2)", FALSE },
        { "raw", "2:1L", "hybrid 2 + 1, added after the stage", FALSE },
        { "raw", "4:1L", "hybrid 4 + 1, added after the stage", TRUE },
        { "pack", NULL, "packed half2 sums", TRUE },
        { "pack", "4:1L", "packed + hybrid 4 + 1 late", TRUE },
        { "il", NULL, "interleaved pairs", TRUE },
        { "il", "4:1L", "interleaved pairs + hybrid 4 + 1 late", TRUE },
        { "il4", NULL, "interleaved pairs, 4 blocks an SM", TRUE },
        { "il4", "4:1L", "interleaved pairs, 4 blocks an SM + hybrid 4 + 1 late", FALSE } };

      for (guint pass = 0; pass < 2; pass++)
        for (guint v = 0; v < G_N_ELEMENTS (tilt_paths) && pl->u[2] == 0.0 &&
                          kernel_wanted (TOMO_GPU_PLANE_TILT); v++)
          {
            if ((pass == 1 && !tilt_paths[v].again) ||
                (tilt_paths[v].tex != NULL &&
                 (precision != TOMO_GPU_STORE_HALF || (k != 2 && k != 3))))
              continue;
            g_setenv ("TOMO_PLANE_TILT_PATH", tilt_paths[v].path, TRUE);
            if (tilt_paths[v].tex != NULL)
              g_setenv ("TOMO_PLANE_TILT_TEX", tilt_paths[v].tex, TRUE);
            ok = time_plane (store, pl, center, TOMO_GPU_PLANE_TILT, runs, &ms_k, error);
            g_unsetenv ("TOMO_PLANE_TILT_PATH");
            g_unsetenv ("TOMO_PLANE_TILT_TEX");
            if (!ok)
              goto out;
            printf ("| %s | %u × %u | tilt, %s%s | %.2f | %.0f | %.2f |\n", planes[k].name,
                    pl->width, pl->height, tilt_paths[v].label, pass == 1 ? " (again)" : "",
                    ms_k, gu / (ms_k * 1e6), ms_global / ms_k);
            ok = FALSE;
          }
      /* The tile kernel's variants on vertical planes (above: auto, the
       * wide path with bulk copies): the ring path (the baseline) and the
       * register-staged pair path (TOMO_PLANE_TILE_PATH in
       * tomo-gpu-store-tile.cu). */
      static const char *const variants[] = { "ring", "pairs" };

      for (guint v = 0; k < 2 && v < G_N_ELEMENTS (variants) && kernel_wanted (TOMO_GPU_PLANE_TILE); v++)
        {
          g_setenv ("TOMO_PLANE_TILE_PATH", variants[v], TRUE);
          ok = time_plane (store, pl, center, TOMO_GPU_PLANE_TILE, runs, &ms_k, error);
          g_unsetenv ("TOMO_PLANE_TILE_PATH");
          if (!ok)
            goto out;
          printf ("| %s | %u × %u | tile, 8 rows per block, %s | %.2f | %.0f | %.2f |\n",
                  planes[k].name, pl->width, pl->height, variants[v], ms_k, gu / (ms_k * 1e6),
                  ms_global / ms_k);
          ok = FALSE;
        }
    }
  fflush (stdout);

  /* A 256³ preview volume: the dedicated kernel from the store's reduced
   * copy (bins of W/256 columns, every P/512-th projection, slabs of R/256
   * rows), timed as the planes; beside it the sum of 256 plane kernels of
   * 256² samples W/256 apart on the full store (global kernel, one pass). */
  {
    guint N = 256;
    TomoPreviewGeometry geo;
    TomoGpuPreview pv;
    double step = (double) W / N, zstep = (double) R / N, total = 0, ms_dl, ms_dl2;
    g_autofree double *t = g_new (double, runs);
    g_autofree float *host = g_new (float, (gsize) N * N * N);
    TomoGpuPlane pl;
    gint64 t0;

    tomo_preview_geometry_init (&geo, W, P, N, N, N);
    pv = (TomoGpuPreview) { geo.nx, geo.ny, geo.nz, geo.bin, geo.step };
    for (guint r = 0; r < runs + 2; r++)
      {
        if (!tomo_gpu_store_preview (store, &pv, center + 0.01 * r, 1, error))
          goto out;
        if (r >= 2)
          t[r - 2] = tomo_gpu_store_get_plane_ms (store);
      }
    t0 = g_get_monotonic_time ();
    if (!tomo_gpu_store_download (store, host, error))
      goto out;
    ms_dl = (g_get_monotonic_time () - t0) / 1000.0;
    /* Again into the same, now resident, pages: the viewer's case. */
    t0 = g_get_monotonic_time ();
    if (!tomo_gpu_store_download (store, host, error))
      goto out;
    ms_dl2 = (g_get_monotonic_time () - t0) / 1000.0;
    printf ("\nPreview volume %u³ (bins of %u columns, every %u-th projection, %u projections): "
            "kernel %.3f ms (median of %u, %.0f Hz; %.0f GU/s), reduced copy made once in "
            "%.1f ms, download of the %.0f MiB volume to pageable host memory %.1f ms (fresh "
            "pages), %.1f ms (the same buffer again).\n",
            N, pv.bin, pv.step, (P + pv.step - 1) / pv.step, _tomo_median (t, runs), runs,
            1000.0 / _tomo_median (t, runs),
            (double) N * N * N * ((P + pv.step - 1) / pv.step) / (_tomo_median (t, runs) * 1e6),
            tomo_gpu_store_get_preview_prep_ms (store), (double) N * N * N * 4 / 1048576.0, ms_dl,
            ms_dl2);
    if (!bench_preview_texture (store, &pv, center, N, runs, host, error))
      goto out;
    for (guint k = 0; k < N; k++)
      {
        plane_init (&pl, c, c, (k + 0.5) * zstep - 0.5, step, 0, 0, 0, step, 0, N, N);
        if (!tomo_gpu_store_plane (store, &pl, center, 1, TOMO_GPU_PLANE_GLOBAL, error))
          goto out;
        total += tomo_gpu_store_get_plane_ms (store);
      }
    printf ("Before it: the sum of %u plane kernels (global) on the full store, %.1f ms "
            "(%.1f Hz).\n", N, total, 1000.0 / total);
  }
  ok = TRUE;

out:
  tomo_gpu_store_free (store);
  return ok;
}

/* The viewer's three views on the CPU backend at the sample's size (512
 * columns, 64 rows, 360 projections), 2 threads: XY with the CPU back
 * projector, XZ and YZ from the filtered rows held in memory. */
static void
bench_cpu_views (guint runs)
{
  const guint W = 512, R = 64, P = 360, threads = 2;
  g_autofree double *angles = g_new (double, P);
  g_autofree float *filtered = NULL;
  g_autofree float *xy = g_new (float, W * W);
  g_autofree float *xz = g_new (float, W * R);
  g_autofree float *yz = g_new (float, W * R);
  g_autofree double *t = g_new (double, runs);
  g_autofree double *t3 = g_new (double, runs);
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  g_autoptr (TomoCpuFbp) fbp = NULL;
  TomoPlaneSource src;
  TomoRoi roi = { 0, 0, W, W };
  TomoPlane pxz, pyz;
  double m, m3;

  for (guint p = 0; p < P; p++)
    angles[p] = G_PI * p / P;
  filtered = g_new (float, (gsize) R * P * W);
  for (gsize i = 0; i < (gsize) R * P * W; i++)
    filtered[i] = (float) g_rand_double_range (rand, -1.0, 1.0);
  fbp = tomo_cpu_fbp_new (W, P, angles, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO, threads);
  src = (TomoPlaneSource) { W, P, angles, 0, R, filtered };

  for (guint r = 0; r < runs + 1; r++)
    {
      double c = (W - 1) / 2.0 + 0.01 * r;
      gint64 t0 = g_get_monotonic_time (), t1, t2;

      tomo_plane_init_xz (&pxz, 100 + r, 0, W, 0, R);
      tomo_plane_init_yz (&pyz, 300 - r, 0, W, 0, R);
      tomo_cpu_fbp_backproject (fbp, filtered + (gsize) (R / 2) * P * W, c, TOMO_INTERP_LINEAR,
                                &roi, xy);
      t1 = g_get_monotonic_time ();
      tomo_plane_backproject (&src, c, TOMO_INTERP_LINEAR, &pxz, threads, xz);
      tomo_plane_backproject (&src, c, TOMO_INTERP_LINEAR, &pyz, threads, yz);
      t2 = g_get_monotonic_time ();
      if (r > 0)
        {
          t[r - 1] = (t2 - t1) / 1000.0 / 2;
          t3[r - 1] = (t2 - t0) / 1000.0;
        }
    }
  m = _tomo_median (t, runs);
  m3 = _tomo_median (t3, runs);
  printf ("CPU backend, %u threads, %u × %u × %u (the sample's size): XZ or YZ plane %u × %u "
          "%.1f ms, the three views (XY + XZ + YZ) %.1f ms = %.1f Hz (medians of %u).\n",
          threads, R, P, W, W, R, m, m3, 1000.0 / m3, runs);

  /* The 3D pane's preview volume on the CPU: 128 × 128 × 64 voxels. */
  {
    TomoPreviewGeometry geo;
    g_autofree float *vol = NULL;
    guint n = MIN (runs, 5);

    tomo_preview_geometry_init (&geo, W, P, 128, 128, 64);
    vol = g_new (float, 128 * 128 * 64);
    for (guint r = 0; r < n + 1; r++)
      {
        gint64 t0 = g_get_monotonic_time ();

        tomo_preview_backproject (&src, &geo, (W - 1) / 2.0 + 0.01 * r, TOMO_INTERP_LINEAR,
                                  threads, vol);
        if (r > 0)
          t[r - 1] = (g_get_monotonic_time () - t0) / 1000.0;
      }
    printf ("Preview volume 128 × 128 × 64 (bins of %u columns, every %u-th projection) on the "
            "CPU, %u threads: %.1f ms (median of %u).\n\n", geo.bin, geo.step, threads,
            _tomo_median (t, n), n);
  }
  fflush (stdout);
}

gboolean
tomo_bench_planes (guint        W,
                   guint        P,
                   guint        R,
                   guint        runs,
                   int          device,
                   const char  *cmdline,
                   const char  *date,
                   GError     **error)
{
  g_autofree char *name = NULL;
  g_autofree double *angles = NULL;
  g_autoptr (GRand) rand = NULL;
  Source src;
  const char *store_env;
  gboolean ok;

  printf ("# tomolive bench --planes\n\n`%s`, %s\n\n", cmdline, date);
  bench_cpu_views (11);
  if (tomo_gpu_get_n_devices () <= device)
    {
      printf ("Planes: skipped — no CUDA device %d.\n", device);
      return TRUE;
    }
  name = tomo_gpu_get_device_name (device);
  printf ("Device: %s\n", name);

  angles = g_new (double, P);
  for (guint p = 0; p < P; p++)
    angles[p] = G_PI * p / P;
  src.row_elems = (gsize) P * W;
  src.pool = g_new (float, POOL * src.row_elems);
  rand = g_rand_new_with_seed (7);
  for (gsize i = 0; i < POOL * src.row_elems; i++)
    src.pool[i] = (float) g_rand_double_range (rand, 0.0, 2.0);

  /* TOMO_BENCH_PLANE_STORE=half or float: that store only. */
  store_env = g_getenv ("TOMO_BENCH_PLANE_STORE");
  ok = TRUE;
  if (g_strcmp0 (store_env, "half") != 0)
    ok = bench_store (W, P, R, runs, device, TOMO_GPU_STORE_FLOAT, &src, angles, error);
  if (!ok && g_error_matches (*error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY))
    {
      printf ("\nFloat store: %s\n", (*error)->message);
      g_clear_error (error);
      ok = TRUE;
    }
  if (ok && g_strcmp0 (store_env, "float") != 0)
    ok = bench_store (W, P, R, runs, device, TOMO_GPU_STORE_HALF, &src, angles, error);
  g_free (src.pool);
  return ok;
}
