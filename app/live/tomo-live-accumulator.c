/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-live"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-error.h"
#include "tomo-fbp.h"
#include "tomo-gpu.h"
#include "tomo-live-accumulator.h"
#include "tomo-live-protocol.h"

struct _TomoLiveAccumulator
{
  guint               width;
  guint               n_scan;
  TomoReconParams     params;
  TomoBackend         backend;
  TomoGpuAccumulator *gpu;
  float              *image;      /* CPU sum, or the GPU download */
  float              *tmp;
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
  self->image = g_new0 (float, (gsize) width * width);
  self->tmp = g_new (float, (gsize) width * width);
  self->backend = TOMO_BACKEND_CPU;
  if (backend != TOMO_BACKEND_CPU && tomo_gpu_get_n_devices () > 0)
    {
      g_autoptr(GError) gpu_error = NULL;

      self->gpu = tomo_gpu_accumulator_new (0, width, &gpu_error);
      if (self->gpu != NULL)
        self->backend = TOMO_BACKEND_GPU;
      else if (backend == TOMO_BACKEND_GPU)
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
  return g_steal_pointer (&self);
}

void
tomo_live_accumulator_free (TomoLiveAccumulator *self)
{
  if (self == NULL)
    return;
  tomo_gpu_accumulator_free (self->gpu);
  g_free (self->image);
  g_free (self->tmp);
  g_free (self);
}

TomoBackend
tomo_live_accumulator_get_backend (TomoLiveAccumulator *self)
{
  return self->backend;
}

void
tomo_live_accumulator_clear (TomoLiveAccumulator *self)
{
  memset (self->image, 0, sizeof (float) * self->width * self->width);
  if (self->gpu != NULL)
    {
      g_autoptr(GError) error = NULL;

      if (!tomo_gpu_accumulator_clear (self->gpu, &error))
        g_message ("Live slice: %s", error->message);
    }
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
  TomoRoi roi = { 0, 0, self->width, self->width };
  guint w = self->width;
  float scale;
  gint64 t0, t1;

  if (n == 0)
    return TRUE;
  t0 = g_get_monotonic_time ();
  /* The filter carries π/(2n) for these n; the slice wants π/(2·n_scan). */
  fbp = tomo_cpu_fbp_new (w, n, angles, self->params.filter, self->params.pad, self->params.n_threads);
  filtered = g_new (float, (gsize) n * w);
  tomo_cpu_fbp_filter (fbp, sino, filtered);
  scale = weight * (float) n / (float) self->n_scan;
  t1 = g_get_monotonic_time ();
  self->filter_ms = (t1 - t0) / 1e3;

  if (self->gpu != NULL)
    {
      for (gsize i = 0; i < (gsize) n * w; i++)
        filtered[i] *= scale;
      if (!tomo_gpu_accumulator_add (self->gpu, filtered, angles, n, self->params.center, 1.0f,
                                     self->params.interp == TOMO_INTERP_LINEAR, error))
        return FALSE;
      self->image_stale = TRUE;
    }
  else
    {
      tomo_cpu_fbp_backproject (fbp, filtered, self->params.center, self->params.interp, &roi, self->tmp);
      for (gsize i = 0; i < (gsize) w * w; i++)
        self->image[i] += scale * self->tmp[i];
    }
  self->backproject_ms = (g_get_monotonic_time () - t1) / 1e3;
  return TRUE;
}

const float *
tomo_live_accumulator_get_image (TomoLiveAccumulator *self,
                                 GError             **error)
{
  if (self->gpu != NULL && self->image_stale)
    {
      if (!tomo_gpu_accumulator_download (self->gpu, self->image, error))
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
    *backproject_ms = self->gpu != NULL ? tomo_gpu_accumulator_get_last_ms (self->gpu)
                                        : self->backproject_ms;
}
