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
#include "tomo-preprocess.h"

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
  gboolean            raw_path;   /* the backend preprocesses, filters and keeps rows */
  GArray             *in_slice;   /* guint8 by slot */
  GArray             *slot_angle; /* double by slot: the angle it was added at */
  GArray             *stored;     /* host path: float rows by slot, preprocessed */
  guint               n_in_slice;
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
  self->in_slice = g_array_new (FALSE, TRUE, sizeof (guint8));
  self->slot_angle = g_array_new (FALSE, TRUE, sizeof (double));
  self->stored = g_array_new (FALSE, TRUE, sizeof (float));
  if (self->impl->ops->accumulate_raw != NULL && self->impl->ops->accumulate_filter != NULL)
    {
      if (!self->impl->ops->accumulate_filter (self->impl, params->filter, params->pad, n_scan, n_scan, error))
        return NULL;
      self->raw_path = TRUE;
    }
  return g_steal_pointer (&self);
}

void
tomo_live_accumulator_free (TomoLiveAccumulator *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->impl, tomo_backend_free);
  g_clear_pointer (&self->in_slice, g_array_unref);
  g_clear_pointer (&self->slot_angle, g_array_unref);
  g_clear_pointer (&self->stored, g_array_unref);
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
  if (self->in_slice != NULL && self->in_slice->len > 0)
    memset (self->in_slice->data, 0, self->in_slice->len);
  self->n_in_slice = 0;
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

guint
tomo_live_accumulator_get_n (TomoLiveAccumulator *self)
{
  return self->n_in_slice;
}

/* Host path: the stored rows of `slots` with `weight`. */
static gboolean
add_stored (TomoLiveAccumulator *self,
            GArray              *slots,
            GArray              *angles,
            float                weight,
            GError             **error)
{
  g_autofree float *rows = NULL;
  guint w = self->width;

  if (slots->len == 0)
    return TRUE;
  rows = g_new (float, (gsize) slots->len * w);
  for (guint i = 0; i < slots->len; i++)
    memcpy (rows + (gsize) i * w, &g_array_index (self->stored, float, (gsize) g_array_index (slots, guint, i) * w),
            sizeof (float) * w);
  return tomo_live_accumulator_add (self, rows, (const double *) angles->data, slots->len, weight, error);
}

gboolean
tomo_live_accumulator_put (TomoLiveAccumulator *self,
                           const TomoLiveRows  *rows,
                           GError             **error)
{
  const guint *slots = rows->slots;
  const double *angles = rows->angles;
  guint n = rows->n;
  g_autoptr(GArray) remove = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) remove_angles = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) add = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) add_angles = g_array_new (FALSE, FALSE, sizeof (double));
  guint w = self->width;

  if (n == 0)
    return TRUE;
  for (guint i = 0; i < n; i++)
    {
      guint s = slots[i];

      if (s >= self->in_slice->len)
        {
          g_array_set_size (self->in_slice, s + 1);
          g_array_set_size (self->slot_angle, s + 1);
          if (!self->raw_path)
            g_array_set_size (self->stored, (gsize) (s + 1) * w);
        }
      if (g_array_index (self->in_slice, guint8, s))
        {
          g_array_append_val (remove, s);
          g_array_append_val (remove_angles, g_array_index (self->slot_angle, double, s));
        }
      else
        self->n_in_slice++;
      g_array_index (self->in_slice, guint8, s) = 1;
      g_array_index (self->slot_angle, double, s) = angles[i];
      g_array_append_val (add, s);
      g_array_append_val (add_angles, angles[i]);
    }

  if (self->raw_path)
    {
      TomoAccumulateRaw step = {
        .raw = rows->raw,
        .flat = rows->ff.flat,
        .dark = rows->ff.dark,
        .apply_log = rows->ff.apply_log,
        .slots = slots,
        .angles = angles,
        .n = n,
        .remove = (const guint *) remove->data,
        .remove_angles = (const double *) remove_angles->data,
        .n_remove = remove->len,
        .center = self->params.center,
        .interp = self->params.interp,
      };

      self->filter_ms = 0;
      if (!self->impl->ops->accumulate_raw (self->impl, &step, &self->backproject_ms, error))
        return FALSE;
      self->image_stale = TRUE;
      return TRUE;
    }

  /* Host path: out with what is replaced, in with the new rows. */
  if (!add_stored (self, remove, remove_angles, -1.0f, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    tomo_preprocess_row (rows->raw + (gsize) i * w, 1, w, &rows->ff,
                         &g_array_index (self->stored, float, (gsize) slots[i] * w), NULL);
  return add_stored (self, add, add_angles, 1.0f, error);
}

TomoSlice *
tomo_live_accumulator_dup_slice (TomoLiveAccumulator *self,
                                 guint                row,
                                 gboolean             device_only,
                                 GError             **error)
{
  g_autoptr(TomoSlice) slice = g_new0 (TomoSlice, 1);
  guint w = self->width;

  slice->ref_count = 1;
  slice->row = row;
  slice->n_slices = 1;
  slice->width = slice->height = w;
  slice->roi = (TomoRoi) { 0, 0, w, w };
  slice->params = self->params;
  slice->params.roi = slice->roi;
  slice->backend = self->impl->ops->backend;
  slice->kernel = g_strdup ("live-accumulate");
  slice->filter_ms = self->filter_ms;
  slice->backproject_ms = self->backproject_ms;
  if (self->impl->ops->accumulate_slice != NULL)
    {
      if (!self->impl->ops->accumulate_slice (self->impl, slice, device_only, error))
        return NULL;
    }
  else
    {
      if (!tomo_backend_alloc_slice_data (slice, error) ||
          !self->impl->ops->accumulate_read (self->impl, slice->data, error))
        return NULL;
      tomo_slice_stats_compute (slice->data, (gsize) w * w, &slice->values);
    }
  return g_steal_pointer (&slice);
}
