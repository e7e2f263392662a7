/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-volume"

#include "config.h"

#include <math.h>

#include "tomo-backend.h"
#include "tomo-error.h"
#include "tomo-volume.h"

struct _TomoVolume
{
  TomoScan *scan;
  guint width, n_proj, row_start, n_rows;
  TomoReconParams params;
  TomoBackendImpl *impl;   /* holds the store (ops->store) */
  char *fallback_note;     /* why the GPU was not used, when AUTO fell back */
  double plane_ms;
};

/* A backend with its store made, or NULL and the error. */
static TomoBackendImpl *
make_store (TomoBackendImpl             *impl,
            const TomoBackendStoreSetup *setup,
            GError                     **error)
{
  if (impl == NULL)
    return NULL;
  if (impl->ops->store == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "The %s backend has no volume store", impl->ops->name);
      tomo_backend_free (impl);
      return NULL;
    }
  if (!impl->ops->store->store_new (impl, setup, error))
    {
      tomo_backend_free (impl);
      return NULL;
    }
  return impl;
}

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
  TomoBackendStoreSetup setup = { 0 };

  g_return_val_if_fail (scan != NULL && params != NULL, NULL);

  if (!tomo_recon_check_rows (scan, row_start, row_end, error))
    return NULL;
  vol = g_new0 (TomoVolume, 1);
  vol->scan = g_object_ref (scan);
  vol->width = tomo_scan_get_width (scan);
  vol->n_proj = tomo_scan_get_n_projections (scan);
  vol->row_start = row_start;
  vol->n_rows = row_end - row_start;
  vol->params = *params;

  setup.setup = (TomoBackendSetup) { vol->width, vol->n_proj, tomo_scan_get_angles (scan),
                                     params->filter, params->pad, params->n_threads };
  setup.row_start = row_start;
  setup.n_rows = vol->n_rows;
  if (backend != TOMO_BACKEND_CPU)
    {
      /* Says "built without CUDA", "no CUDA device" or what does not fit. */
      setup.memory_limit = gpu_memory_limit;
      vol->impl = make_store (tomo_backend_gpu_new (&gpu_error), &setup, &gpu_error);
      if (vol->impl == NULL && backend == TOMO_BACKEND_GPU)
        {
          g_propagate_error (error, g_steal_pointer (&gpu_error));
          return NULL;
        }
    }
  if (vol->impl == NULL)
    {
      if (gpu_error != NULL)
        vol->fallback_note = g_strdup (gpu_error->message);
      setup.memory_limit = 0;
      vol->impl = make_store (tomo_backend_cpu_new (), &setup, error);
      if (vol->impl == NULL)
        return NULL;
    }
  return g_steal_pointer (&vol);
}

void
tomo_volume_free (TomoVolume *vol)
{
  if (vol == NULL)
    return;
  g_clear_pointer (&vol->impl, tomo_backend_free);
  g_free (vol->fallback_note);
  g_clear_object (&vol->scan);
  g_free (vol);
}

gboolean
tomo_volume_fill (TomoVolume    *vol,
                  void         (*progress) (guint done, guint total, gpointer data),
                  gpointer       data,
                  volatile gint *cancel,
                  GError       **error)
{
  g_return_val_if_fail (vol != NULL, FALSE);

  return vol->impl->ops->store->store_fill (vol->impl, vol->scan, progress, data, cancel, error);
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

  return vol->impl->ops->store->store_plane (vol->impl, plane, center, interp, out,
                                             &vol->plane_ms, error);
}

gboolean
tomo_volume_preview (TomoVolume         *vol,
                     TomoPreviewRequest *request,
                     GError            **error)
{
  g_return_val_if_fail (vol != NULL && request != NULL &&
                        (request->out != NULL || request->keep_on_device), FALSE);

  request->device_buffer = NULL;
  request->device_ops = NULL;
  request->min = request->max = 0.0f;
  if (!vol->impl->ops->store->store_preview (vol->impl, request, error))
    return FALSE;
  if (request->device_buffer == NULL)
    {
      /* The store wrote out: the range from there. */
      gsize n = (gsize) request->nx * request->ny * request->nz;
      gboolean any = FALSE;

      for (gsize i = 0; i < n; i++)
        if (isfinite (request->out[i]))
          {
            request->min = any ? MIN (request->min, request->out[i]) : request->out[i];
            request->max = any ? MAX (request->max, request->out[i]) : request->out[i];
            any = TRUE;
          }
    }
  return TRUE;
}

/* request->out for a host preview, unless the caller gave it. */
static gboolean
preview_host_out (TomoPreviewRequest *request,
                  GError            **error)
{
  gsize n = (gsize) request->nx * request->ny * request->nz;

  if (request->out != NULL)
    return TRUE;
  request->out = g_try_new (float, MAX (n, 1));
  if (request->out == NULL)
    g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                 "No host memory for a preview of %u × %u × %u", request->nx, request->ny,
                 request->nz);
  return request->out != NULL;
}

gboolean
tomo_volume_preview_or_host (TomoVolume         *vol,
                             TomoPreviewRequest *request,
                             GError            **device_error,
                             GError            **error)
{
  g_autoptr (GError) local = NULL;

  g_return_val_if_fail (vol != NULL && request != NULL, FALSE);

  if (request->keep_on_device)
    {
      if (tomo_volume_preview (vol, request, &local))
        return TRUE;
      g_debug ("Preview on the device failed (%s); made again through host memory",
               local->message);
      g_propagate_error (device_error, g_steal_pointer (&local));
      request->keep_on_device = FALSE;
    }
  return preview_host_out (request, error) && tomo_volume_preview (vol, request, error);
}

TomoBackend
tomo_volume_get_backend (TomoVolume *vol)
{
  return vol->impl->ops->backend;
}

double
tomo_volume_get_plane_ms (TomoVolume *vol)
{
  return vol->plane_ms;
}

char *
tomo_volume_describe (TomoVolume *vol)
{
  g_autofree char *desc = vol->impl->ops->store->store_describe (vol->impl);

  if (vol->fallback_note == NULL)
    return g_steal_pointer (&desc);
  return g_strdup_printf ("%s (GPU not used: %s)", desc, vol->fallback_note);
}
