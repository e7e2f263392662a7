/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What the backends share: reading rows on the host, checking rows
 * preprocessed on a device, allocating host slices.
 */
#define G_LOG_DOMAIN "tomo-backend"

#include "config.h"

#include "tomo-backend.h"
#include "tomo-error.h"

#include <math.h>
#include <string.h>

void
tomo_backend_free (TomoBackendImpl *self)
{
  if (self == NULL)
    return;
  self->ops->free (self);
  if (self->store != NULL)
    self->ops->store->store_free (self->store);
  g_free (self->rows);
  g_free (self->device_name);
  g_free (self);
}

gboolean
tomo_backend_load_rows_host (TomoBackendImpl     *self,
                             TomoScan            *scan,
                             guint                row,
                             guint                n_slices,
                             TomoPreprocessStats *stats,
                             GCancellable        *cancellable,
                             GError             **error)
{
  gsize plane = (gsize) tomo_scan_get_n_projections (scan) * tomo_scan_get_width (scan);
  g_autofree float *sinos = g_try_malloc (plane * n_slices * sizeof (float));

  if (sinos == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Out of memory for %u sinograms of %zu values", n_slices, plane);
      return FALSE;
    }
  for (guint s = 0; s < n_slices; s++)
    if (!tomo_scan_read_sinogram (scan, row + s, sinos + s * plane, stats, error))
      return FALSE;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  g_free (self->rows);
  self->rows = g_steal_pointer (&sinos);
  self->n_slices = n_slices;
  return TRUE;
}

gboolean
tomo_backend_alloc_slice_data (TomoSlice *slice,
                               GError   **error)
{
  slice->data = g_try_malloc ((gsize) slice->width * slice->height * slice->n_slices
                              * sizeof (float));
  if (slice->data == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Out of memory for a %u×%u slice", slice->width, slice->height);
      return FALSE;
    }
  return TRUE;
}

gboolean
tomo_backend_accumulate_check (gconstpointer sum,
                               GError      **error)
{
  if (sum != NULL)
    return TRUE;
  g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                       "Live slice used before accumulate_reset sized it");
  return FALSE;
}

gboolean
tomo_backend_store_check_plane (TomoBackendImpl *self,
                                const TomoPlane *plane,
                                double           center,
                                GError         **error)
{
  if (self->store == NULL)
    {
      g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                           "Plane asked of a backend whose volume store is not made yet");
      return FALSE;
    }
  if (!tomo_plane_validate (plane, error))
    return FALSE;
  if (!isfinite (center))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Centre %g is not a finite number", center);
      return FALSE;
    }
  return TRUE;
}

gboolean
tomo_backend_store_preview_geometry (TomoBackendImpl          *self,
                                     const TomoPreviewRequest *request,
                                     TomoPreviewGeometry      *geometry,
                                     GError                  **error)
{
  const TomoBackendStoreHead *head = (const TomoBackendStoreHead *) self->store;
  TomoPlane probe = { { 0 }, { 1, 0, 0 }, { 0, 1, 0 }, 1, 1 };

  if (!tomo_backend_store_check_plane (self, &probe, request->center, error))
    return FALSE;
  if (request->out == NULL && !(request->keep_on_device && self->device >= 0))
    {
      g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                           "A preview kept on the device needs a device; this store has none");
      return FALSE;
    }
  tomo_preview_geometry_init (geometry, head->setup.setup.width, head->setup.setup.n_proj,
                              request->nx, request->ny, request->nz);
  return tomo_preview_geometry_check (geometry, error);
}

void
tomo_backend_store_stats (TomoBackendImpl     *self,
                          TomoPreprocessStats *stats)
{
  const TomoBackendStoreHead *head = (const TomoBackendStoreHead *) self->store;

  memset (stats, 0, sizeof *stats);
  if (head != NULL)
    *stats = head->stats;
}

gboolean
tomo_backend_store_cancelled (volatile gint *cancel,
                              GError       **error)
{
  if (cancel == NULL || !g_atomic_int_get (cancel))
    return FALSE;
  g_clear_error (error);
  g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_CANCELLED, "Cancelled");
  return TRUE;
}

gboolean
tomo_backend_check_device_row (TomoScan                  *scan,
                               guint                      row,
                               const TomoPreprocessStats *counts,
                               GError                   **error)
{
  if (counts->n_nonfinite * 2 <= counts->n_values)
    return TRUE;
  g_clear_error (error);
  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
               "Scan %s: %" G_GUINT64_FORMAT " of the %" G_GUINT64_FORMAT
               " values of row %u are NaN, infinite or absurdly large: the data are corrupt",
               tomo_scan_get_path (scan), counts->n_nonfinite, counts->n_values, row);
  return FALSE;
}
