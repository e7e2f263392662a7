/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-volume"

#include "config.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "tomo-error.h"
#include "tomo-fbp.h"
#include "tomo-filter.h"
#include "tomo-gpu-store.h"
#include "tomo-volume.h"

struct _TomoVolume
{
  TomoScan *scan;
  guint width, n_proj, row_start, n_rows;
  TomoReconParams params;
  TomoBackend backend;

  TomoGpuStore *gpu;       /* GPU backend */
  float *filtered;         /* CPU backend: n_rows × n_proj × width */
  TomoCpuFbp *fbp;
  char *fallback_note;     /* why the GPU was not used, when AUTO fell back */
  double plane_ms;
};

TomoVolume *
tomo_volume_new (TomoScan              *scan,
                 guint                  row_start,
                 guint                  row_end,
                 const TomoReconParams *params,
                 TomoBackend            backend,
                 guint64                gpu_memory_limit,
                 GError               **error)
{
  g_autoptr (TomoVolume) vol = NULL;
  g_autoptr (GError) gpu_error = NULL;
  guint height;

  g_return_val_if_fail (scan != NULL && params != NULL, NULL);

  height = tomo_scan_get_height (scan);
  if (row_start >= row_end || row_end > height)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Rows %u:%u are out of range: %s has rows 0 to %u", row_start, row_end,
                   tomo_scan_get_path (scan), height - 1);
      return NULL;
    }
  vol = g_new0 (TomoVolume, 1);
  vol->scan = g_object_ref (scan);
  vol->width = tomo_scan_get_width (scan);
  vol->n_proj = tomo_scan_get_n_projections (scan);
  vol->row_start = row_start;
  vol->n_rows = row_end - row_start;
  vol->params = *params;

  if (backend != TOMO_BACKEND_CPU)
    {
      /* Says "built without CUDA" or "no CUDA device" itself. */
      vol->gpu = tomo_gpu_store_new (0, vol->width, vol->n_proj, tomo_scan_get_angles (scan),
                                     row_start, vol->n_rows, TOMO_GPU_STORE_AUTO,
                                     gpu_memory_limit, &gpu_error);
      if (vol->gpu == NULL && backend == TOMO_BACKEND_GPU)
        {
          g_propagate_error (error, g_steal_pointer (&gpu_error));
          return NULL;
        }
    }
  if (vol->gpu != NULL)
    {
      guint padded;
      g_autofree double *response =
        tomo_filter_fbp_response (params->filter, vol->width, vol->n_proj, &padded);

      vol->backend = TOMO_BACKEND_GPU;
      if (!tomo_gpu_store_set_filter (vol->gpu, padded, response, params->pad, error))
        return NULL;
      return g_steal_pointer (&vol);
    }

  /* CPU: host memory, asked for politely so a huge range is an error, not
   * an abort. */
  if (gpu_error != NULL)
    vol->fallback_note = g_strdup (gpu_error->message);
  vol->backend = TOMO_BACKEND_CPU;
  {
    /* Allocation may succeed lazily far beyond the memory there is: refuse
     * more than half of it here rather than let the fill swap or be killed. */
    guint64 bytes = (guint64) vol->n_rows * vol->n_proj * vol->width * sizeof (float);
    long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGE_SIZE);
    guint64 ram = pages > 0 && page > 0 ? (guint64) pages * (guint64) page : G_MAXUINT64;

    if (bytes <= ram / 2)
      vol->filtered = g_try_malloc (bytes);
  }
  if (vol->filtered == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Cannot hold the filtered sinograms of rows %u:%u of %s in host memory "
                   "(%.2f GiB, at most half the RAM); choose a smaller row range", row_start, row_end,
                   tomo_scan_get_path (scan),
                   (double) vol->n_rows * vol->n_proj * vol->width * 4 / (1 << 30));
      return NULL;
    }
  vol->fbp = tomo_cpu_fbp_new (vol->width, vol->n_proj, tomo_scan_get_angles (scan),
                               params->filter, params->pad, params->n_threads);
  return g_steal_pointer (&vol);
}

void
tomo_volume_free (TomoVolume *vol)
{
  if (vol == NULL)
    return;
  g_clear_pointer (&vol->gpu, tomo_gpu_store_free);
  g_clear_pointer (&vol->fbp, tomo_cpu_fbp_free);
  g_free (vol->filtered);
  g_free (vol->fallback_note);
  g_clear_object (&vol->scan);
  g_free (vol);
}

static gboolean
read_row_cb (guint    row,
             float   *sino,
             gpointer data,
             GError **error)
{
  TomoVolume *vol = data;

  return tomo_scan_read_sinogram (vol->scan, row, sino, NULL, error);
}

typedef struct
{
  TomoVolume *vol;
  void (*progress) (guint done, guint total, gpointer data);
  gpointer data;
} FillData;

static gboolean
fill_read_cb (guint    row,
              float   *sino,
              gpointer data,
              GError **error)
{
  FillData *fd = data;

  return read_row_cb (row, sino, fd->vol, error);
}

static void
fill_progress_cb (guint    done,
                  guint    total,
                  gpointer data)
{
  FillData *fd = data;

  if (fd->progress != NULL)
    fd->progress (done, total, fd->data);
}

gboolean
tomo_volume_fill (TomoVolume    *vol,
                  void         (*progress) (guint done, guint total, gpointer data),
                  gpointer       data,
                  volatile gint *cancel,
                  GError       **error)
{
  FillData fd = { vol, progress, data };
  gsize ns;
  g_autofree float *sino = NULL;

  g_return_val_if_fail (vol != NULL, FALSE);

  if (vol->gpu != NULL)
    return tomo_gpu_store_fill (vol->gpu, fill_read_cb, fill_progress_cb, &fd, cancel, error);

  ns = (gsize) vol->n_proj * vol->width;
  sino = g_new (float, ns);
  for (guint r = 0; r < vol->n_rows; r++)
    {
      if (cancel != NULL && g_atomic_int_get (cancel))
        {
          g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_CANCELLED, "Cancelled");
          return FALSE;
        }
      if (!read_row_cb (vol->row_start + r, sino, vol, error))
        return FALSE;
      tomo_cpu_fbp_filter (vol->fbp, sino, vol->filtered + r * ns);
      if (progress != NULL)
        progress (r + 1, vol->n_rows, data);
    }
  return TRUE;
}

gboolean
tomo_volume_plane (TomoVolume      *vol,
                   const TomoPlane *plane,
                   double           center,
                   TomoInterp       interp,
                   float           *out,
                   GError         **error)
{
  g_return_val_if_fail (vol != NULL && plane != NULL && out != NULL, FALSE);

  if (!tomo_plane_validate (plane, error))
    return FALSE;
  if (!isfinite (center))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Centre %g is not a finite number", center);
      return FALSE;
    }
  if (vol->gpu != NULL)
    {
      TomoGpuPlane gp;

      G_STATIC_ASSERT (sizeof gp == sizeof *plane);
      memcpy (&gp, plane, sizeof gp);
      if (!tomo_gpu_store_plane (vol->gpu, &gp, center, interp, TOMO_GPU_PLANE_AUTO, error) ||
          !tomo_gpu_store_download (vol->gpu, out, error))
        return FALSE;
      vol->plane_ms = tomo_gpu_store_get_plane_ms (vol->gpu);
    }
  else
    {
      TomoPlaneSource src = { vol->width, vol->n_proj, tomo_scan_get_angles (vol->scan),
                              vol->row_start, vol->n_rows, vol->filtered };
      gint64 t0 = g_get_monotonic_time ();

      tomo_plane_backproject (&src, center, interp, plane, vol->params.n_threads, out);
      vol->plane_ms = (g_get_monotonic_time () - t0) / 1000.0;
    }
  return TRUE;
}

TomoBackend
tomo_volume_get_backend (TomoVolume *vol)
{
  return vol->backend;
}

double
tomo_volume_get_plane_ms (TomoVolume *vol)
{
  return vol->plane_ms;
}

char *
tomo_volume_describe (TomoVolume *vol)
{
  if (vol->gpu != NULL)
    return g_strdup_printf ("GPU store, %s, %.2f GiB",
                            tomo_gpu_store_precision_to_string (tomo_gpu_store_get_precision (vol->gpu)),
                            tomo_gpu_store_get_bytes (vol->gpu) / (double) (1 << 30));
  return g_strdup_printf ("CPU store, %.2f GiB%s%s%s",
                          (double) vol->n_rows * vol->n_proj * vol->width * 4 / (1 << 30),
                          vol->fallback_note ? " (GPU not used: " : "",
                          vol->fallback_note ? vol->fallback_note : "",
                          vol->fallback_note ? ")" : "");
}
