/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The CPU backend: the reference FBP of tomo-fbp.c behind the engine's
 * backend interface.  Everything stays in host memory; statistics are
 * computed on the calling (worker) thread.
 */
#define G_LOG_DOMAIN "tomo-backend"

#include "config.h"

#include <string.h>

#include "tomo-backend.h"
#include "tomo-center-private.h"
#include "tomo-error.h"
#include "tomo-fbp.h"

typedef struct
{
  TomoBackendImpl parent;
  TomoBackendSetup setup;
  TomoCpuFbp *fbp;
  float *acc;               /* the live slice's sum (acc_width²) */
  float *acc_tmp;
  guint acc_width;
} CpuBackend;

static void
cpu_free (TomoBackendImpl *impl)
{
  CpuBackend *self = (CpuBackend *) impl;

  g_clear_pointer (&self->fbp, tomo_cpu_fbp_free);
  g_clear_pointer (&self->acc, g_free);
  g_clear_pointer (&self->acc_tmp, g_free);
}

static gboolean
cpu_configure (TomoBackendImpl        *impl,
               const TomoBackendSetup *setup,
               GError                **error)
{
  CpuBackend *self = (CpuBackend *) impl;

  g_clear_pointer (&impl->rows, g_free);
  g_clear_pointer (&self->fbp, tomo_cpu_fbp_free);
  self->fbp = tomo_cpu_fbp_new (setup->width, setup->n_proj, setup->angles,
                                setup->filter, setup->pad, setup->n_threads);
  self->setup = *setup;
  return TRUE;
}

static gboolean
cpu_filter (TomoBackendImpl *impl,
            double          *filter_ms,
            GError         **error)
{
  CpuBackend *self = (CpuBackend *) impl;
  gsize plane = (gsize) self->setup.n_proj * self->setup.width;
  gint64 t0 = g_get_monotonic_time ();

  for (guint s = 0; s < impl->n_slices; s++)
    tomo_cpu_fbp_filter (self->fbp, impl->rows + s * plane, impl->rows + s * plane);
  *filter_ms = (g_get_monotonic_time () - t0) / 1000.0;
  return TRUE;
}

static gboolean
cpu_backproject (TomoBackendImpl *impl,
                 const TomoBackendPlane *plane,
                 TomoSlice       *slice,
                 GCancellable    *cancellable,
                 GError         **error)
{
  CpuBackend *self = (CpuBackend *) impl;
  gsize in_plane = (gsize) self->setup.n_proj * self->setup.width;
  gsize out_plane = (gsize) slice->width * slice->height;
  gint64 t0;

  if (!tomo_backend_alloc_slice_data (slice, error))
    return FALSE;
  t0 = g_get_monotonic_time ();
  for (guint s = 0; s < slice->n_slices; s++)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      tomo_cpu_fbp_backproject (self->fbp, impl->rows + s * in_plane, plane->center,
                                plane->interp, &plane->roi, slice->data + s * out_plane);
    }
  slice->backproject_ms = (g_get_monotonic_time () - t0) / 1000.0;
  slice->backend = TOMO_BACKEND_CPU;
  slice->kernel = g_strdup_printf ("cpu-%s", tomo_interp_to_string (plane->interp));
  return TRUE;
}

static gboolean
cpu_backproject_centers (TomoBackendImpl    *impl,
                         TomoBackendCenters *sweep,
                         GError            **error)
{
  CpuBackend *self = (CpuBackend *) impl;
  const TomoBackendPlane *plane = &sweep->plane;
  gsize out_plane = (gsize) plane->roi.width * plane->roi.height;
  gint64 t0 = g_get_monotonic_time ();

  if (impl->rows == NULL)
    {
      g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                           "Centre sweep: no rows loaded");
      return FALSE;
    }
  for (guint i = 0; i < sweep->n_centers; i++)
    tomo_cpu_fbp_backproject (self->fbp, impl->rows, sweep->centers[i], plane->interp, &plane->roi,
                              sweep->images + i * out_plane);
  sweep->ms = (g_get_monotonic_time () - t0) / 1000.0;
  return TRUE;
}

static gboolean
cpu_correlate (TomoBackendImpl       *impl,
               const TomoCenterPairs *pairs,
               float                 *out,
               GError               **error)
{
  return _tomo_center_profile_cpu (pairs, out, NULL, error);
}

static gboolean
cpu_stats (TomoBackendImpl *impl,
           TomoSlice       *slice,
           GError         **error)
{
  tomo_slice_stats_compute (slice->data, (gsize) slice->width * slice->height * slice->n_slices,
                            &slice->values);
  return TRUE;
}

static gboolean
cpu_negativity (TomoBackendImpl *impl,
                TomoSlice       *slice,
                GError         **error)
{
  gsize plane = (gsize) slice->width * slice->height;

  slice->negativity = g_new (double, slice->n_slices);
  for (guint i = 0; i < slice->n_slices; i++)
    slice->negativity[i] = tomo_center_negativity (slice->data + i * plane, slice->width,
                                                   slice->height);
  return TRUE;
}

/* Row k+1 is read on a thread of its own while row k is filtered and
 * back projected, so reading hides behind computing. */
typedef struct
{
  TomoScan *scan;
  guint row;
  float *sino;
  GError *error;
  double ms;
} CpuRead;

static gpointer
cpu_read_run (gpointer data)
{
  CpuRead *r = data;
  gint64 t0 = g_get_monotonic_time ();

  if (!tomo_scan_read_sinogram (r->scan, r->row, r->sino, NULL, &r->error) && r->error == NULL)
    g_set_error (&r->error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                 "Reading sinogram row %u failed", r->row);
  r->ms = (g_get_monotonic_time () - t0) / 1e3;
  return NULL;
}

static gboolean
cpu_volume (TomoBackendImpl         *impl,
            const TomoBackendVolume *job,
            GError                 **error)
{
  TomoScan *scan = job->scan;
  guint width = tomo_scan_get_width (scan);
  guint n_proj = tomo_scan_get_n_projections (scan);
  const TomoReconParams *params = &job->params;
  g_autoptr(TomoCpuFbp) fbp = tomo_cpu_fbp_new (width, n_proj, tomo_scan_get_angles (scan),
                                                params->filter, params->pad, params->n_threads);
  gsize plane = (gsize) n_proj * width;
  g_autofree float *sino = g_try_malloc (2 * plane * sizeof (float));
  g_autofree float *out = g_try_malloc ((gsize) job->roi.width * job->roi.height * sizeof (float));
  TomoVolumeStats local = { 0 };
  TomoVolumeStats *st = job->stats != NULL ? job->stats : &local;
  gint64 t_start = g_get_monotonic_time ();
  CpuRead read = { scan, job->row_start, sino, NULL, 0 };
  GThread *reader;
  gboolean ok = TRUE;

  st->pack = 1;
  if (sino == NULL || out == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Out of memory for a %u×%u sinogram", n_proj, width);
      return FALSE;
    }
  reader = g_thread_new ("tomo-volume-read", cpu_read_run, &read);
  for (guint row = job->row_start; row < job->row_end && ok; row++)
    {
      float *cur = sino + ((row - job->row_start) % 2) * plane;
      gint64 t0 = g_get_monotonic_time ();

      g_thread_join (reader);
      reader = NULL;
      st->wait_ms += (g_get_monotonic_time () - t0) / 1e3;
      st->read_ms += read.ms;
      if (read.error != NULL)
        {
          g_propagate_error (error, g_steal_pointer (&read.error));
          ok = FALSE;
          break;
        }
      if (g_cancellable_set_error_if_cancelled (job->cancellable, error))
        {
          ok = FALSE;
          break;
        }
      if (row + 1 < job->row_end)
        {
          read.row = row + 1;
          read.sino = sino + ((row + 1 - job->row_start) % 2) * plane;
          reader = g_thread_new ("tomo-volume-read", cpu_read_run, &read);
        }
      t0 = g_get_monotonic_time ();
      tomo_cpu_fbp_filter (fbp, cur, cur);
      tomo_cpu_fbp_backproject (fbp, cur, params->center, params->interp, &job->roi, out);
      st->compute_ms += (g_get_monotonic_time () - t0) / 1e3;
      t0 = g_get_monotonic_time ();
      ok = job->sink (row, out, job->roi.width, job->roi.height, job->user_data, error);
      st->write_ms += (g_get_monotonic_time () - t0) / 1e3;
      if (ok && job->progress != NULL)
        job->progress (row - job->row_start + 1, job->row_end - job->row_start, job->user_data);
    }
  if (reader != NULL)
    {
      g_thread_join (reader);
      g_clear_error (&read.error);
    }
  st->wall_ms = (g_get_monotonic_time () - t_start) / 1e3;
  return ok;
}

static gboolean
cpu_accumulate_reset (TomoBackendImpl *impl,
                      guint            width,
                      GError         **error)
{
  CpuBackend *self = (CpuBackend *) impl;
  gsize n = (gsize) width * width;

  if (width != self->acc_width)
    {
      g_clear_pointer (&self->acc, g_free);
      g_clear_pointer (&self->acc_tmp, g_free);
      self->acc = g_try_new0 (float, n);
      self->acc_tmp = g_try_new (float, n);
      if (self->acc == NULL || self->acc_tmp == NULL)
        {
          g_clear_pointer (&self->acc, g_free);
          g_clear_pointer (&self->acc_tmp, g_free);
          self->acc_width = 0;
          g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                       "No memory for a live slice of %u × %u", width, width);
          return FALSE;
        }
      self->acc_width = width;
    }
  else
    memset (self->acc, 0, sizeof (float) * n);
  return TRUE;
}

static gboolean
cpu_accumulate (TomoBackendImpl          *impl,
                const TomoAccumulateStep *step,
                double                   *ms,
                GError                  **error)
{
  CpuBackend *self = (CpuBackend *) impl;
  g_autoptr(TomoCpuFbp) fbp = NULL;
  guint w = self->acc_width;
  TomoRoi roi = { 0, 0, w, w };
  gint64 t0 = g_get_monotonic_time ();

  if (!tomo_backend_accumulate_check (self->acc, error))
    return FALSE;
  /* Only the back projector of this plan is used: its geometry is the step's. */
  fbp = tomo_cpu_fbp_new (w, step->n, step->angles, TOMO_FILTER_RAMLAK, TOMO_PAD_ZERO, 0);
  tomo_cpu_fbp_backproject (fbp, step->filtered, step->center, step->interp, &roi, self->acc_tmp);
  for (gsize i = 0; i < (gsize) w * w; i++)
    self->acc[i] += step->weight * self->acc_tmp[i];
  if (ms != NULL)
    *ms = (g_get_monotonic_time () - t0) / 1000.0;
  return TRUE;
}

static gboolean
cpu_accumulate_read (TomoBackendImpl *impl,
                     float           *image,
                     GError         **error)
{
  CpuBackend *self = (CpuBackend *) impl;

  if (!tomo_backend_accumulate_check (self->acc, error))
    return FALSE;
  memcpy (image, self->acc, sizeof (float) * self->acc_width * self->acc_width);
  return TRUE;
}

/* The host has the sum: its copy and statistics on this thread. */
static gboolean
cpu_accumulate_slice (TomoBackendImpl *impl,
                      TomoSlice       *slice,
                      gboolean         device_only,
                      GError         **error)
{
  CpuBackend *self = (CpuBackend *) impl;
  gsize n = (gsize) self->acc_width * self->acc_width;

  if (!tomo_backend_accumulate_check (self->acc, error) || !tomo_backend_alloc_slice_data (slice, error))
    return FALSE;
  memcpy (slice->data, self->acc, sizeof (float) * n);
  tomo_slice_stats_compute (slice->data, n, &slice->values);
  return TRUE;
}

static const TomoBackendOps cpu_ops = {
  .name = "cpu",
  .backend = TOMO_BACKEND_CPU,
  .free = cpu_free,
  .configure = cpu_configure,
  .load_rows = tomo_backend_load_rows_host,
  .filter = cpu_filter,
  .backproject = cpu_backproject,
  .backproject_centers = cpu_backproject_centers,
  .correlate = cpu_correlate,
  .stats = cpu_stats,
  .negativity = cpu_negativity,
  .volume = cpu_volume,
  .accumulate_reset = cpu_accumulate_reset,
  .accumulate = cpu_accumulate,
  .accumulate_read = cpu_accumulate_read,
  .accumulate_slice = cpu_accumulate_slice,
  .store = &tomo_backend_store_cpu_ops,
};

TomoBackendImpl *
tomo_backend_cpu_new (void)
{
  CpuBackend *self = g_new0 (CpuBackend, 1);

  self->parent.ops = &cpu_ops;
  self->parent.device = -1;
  self->parent.device_name = g_strdup_printf ("CPU (%u threads)", g_get_num_processors ());
  return &self->parent;
}
