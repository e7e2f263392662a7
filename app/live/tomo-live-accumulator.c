/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-live"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-backend.h"
#include "tomo-error.h"
#include "tomo-fbp.h"
#include "tomo-live-accumulator.h"
#include "tomo-live-protocol.h"

/* Filtering runs here on the CPU (FFTW); the sum is kept by the backend
 * (device memory for the GPU), through its accumulate operations. */
struct _TomoLiveAccumulator
{
  guint               width;
  guint               n_scan;
  TomoReconParams     params;
  TomoBackendImpl    *impl;
  float              *image;      /* the last read of the backend's sum */
  gboolean            image_stale;
  double              filter_ms;
  double              backproject_ms;
};

TomoLiveAccumulator *
tomo_live_accumulator_new (guint                  width,
                           guint                  n_scan,
                           const TomoReconParams *params,
                           TomoBackend            backend,
                           GError               **error)
{
  g_autoptr(TomoLiveAccumulator) self = g_new0 (TomoLiveAccumulator, 1);

  if (width == 0 || n_scan == 0)
    {
      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_INCOMPLETE,
                   "Live slice of width %u from %u projections", width, n_scan);
      return NULL;
    }
  if (!tomo_recon_params_validate (params, width, error))
    return NULL;
  self->width = width;
  self->n_scan = n_scan;
  self->params = *params;
  self->image = g_try_new0 (float, (gsize) width * width);
  if (self->image == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "No memory for a live slice of %u × %u", width, width);
      return NULL;
    }
  if (backend != TOMO_BACKEND_CPU && tomo_backend_gpu_count_devices () > 0)
    {
      g_autoptr(GError) gpu_error = NULL;

      self->impl = tomo_backend_gpu_new (&gpu_error);
      if (self->impl == NULL && backend == TOMO_BACKEND_GPU)
        {
          g_propagate_error (error, g_steal_pointer (&gpu_error));
          return NULL;
        }
    }
  else if (backend == TOMO_BACKEND_GPU)
    {
      g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                           "No GPU for the live slice");
      return NULL;
    }
  if (self->impl == NULL)
    self->impl = tomo_backend_cpu_new ();
  if (self->impl->ops->accumulate == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Live slices are not supported by the %s backend", self->impl->ops->name);
      return NULL;
    }
  if (!self->impl->ops->accumulate_reset (self->impl, width, error))
    return NULL;
  return g_steal_pointer (&self);
}

void
tomo_live_accumulator_free (TomoLiveAccumulator *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->impl, tomo_backend_free);
  g_free (self->image);
  g_free (self);
}

TomoBackend
tomo_live_accumulator_get_backend (TomoLiveAccumulator *self)
{
  return self->impl->ops->backend;
}

void
tomo_live_accumulator_clear (TomoLiveAccumulator *self)
{
  g_autoptr(GError) error = NULL;

  memset (self->image, 0, sizeof (float) * self->width * self->width);
  if (!self->impl->ops->accumulate_reset (self->impl, self->width, &error))
    g_message ("Live slice: %s", error->message);
  self->image_stale = FALSE;
}

gboolean
tomo_live_accumulator_add (TomoLiveAccumulator *self,
                           const float         *sino,
                           const double        *angles,
                           guint                n,
                           float                weight,
                           GError             **error)
{
  g_autoptr(TomoCpuFbp) fbp = NULL;
  g_autofree float *filtered = NULL;
  TomoAccumulateStep step;
  guint w = self->width;
  float scale;
  gint64 t0;

  if (n == 0)
    return TRUE;
  t0 = g_get_monotonic_time ();
  /* The filter carries π/(2n) for these n; the slice wants π/(2·n_scan). */
  fbp = tomo_cpu_fbp_new (w, n, angles, self->params.filter, self->params.pad, self->params.n_threads);
  filtered = g_new (float, (gsize) n * w);
  tomo_cpu_fbp_filter (fbp, sino, filtered);
  scale = (float) n / (float) self->n_scan;
  for (gsize i = 0; i < (gsize) n * w; i++)
    filtered[i] *= scale;
  self->filter_ms = (g_get_monotonic_time () - t0) / 1e3;

  step = (TomoAccumulateStep) {
    .filtered = filtered,
    .angles = angles,
    .n = n,
    .center = self->params.center,
    .interp = self->params.interp,
    .weight = weight,
  };
  if (!self->impl->ops->accumulate (self->impl, &step, &self->backproject_ms, error))
    return FALSE;
  self->image_stale = TRUE;
  return TRUE;
}

const float *
tomo_live_accumulator_get_image (TomoLiveAccumulator *self,
                                 GError             **error)
{
  if (self->image_stale)
    {
      if (!self->impl->ops->accumulate_read (self->impl, self->image, error))
        return NULL;
      self->image_stale = FALSE;
    }
  return self->image;
}

void
tomo_live_accumulator_get_last_ms (TomoLiveAccumulator *self,
                                   double              *filter_ms,
                                   double              *backproject_ms)
{
  if (filter_ms != NULL)
    *filter_ms = self->filter_ms;
  if (backproject_ms != NULL)
    *backproject_ms = self->backproject_ms;
}
