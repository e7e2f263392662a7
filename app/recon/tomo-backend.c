/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * What the backends share: reading rows on the host and allocating host
 * slices.
 */
#define G_LOG_DOMAIN "tomo-backend"

#include "config.h"

#include "tomo-backend.h"
#include "tomo-error.h"

#include <math.h>

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
tomo_backend_store_preview_planes (TomoBackendImpl *self,
                                   guint            nx,
                                   guint            ny,
                                   guint            nz,
                                   double           center,
                                   TomoInterp       interp,
                                   float           *out,
                                   double          *ms,
                                   GError         **error)
{
  const TomoBackendStoreSetup *setup = (const TomoBackendStoreSetup *) self->store;
  TomoPlane probe = { { 0 }, { 1, 0, 0 }, { 0, 1, 0 }, 1, 1 };
  double mid, total = 0.0;
  guint width;

  if (!tomo_backend_store_check_plane (self, &probe, center, error))
    return FALSE;
  if (nx == 0 || ny == 0 || nz == 0 || nx > 4096 || ny > 4096 || nz > 4096)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Preview volume %u × %u × %u: each side must be 1 to 4096", nx, ny, nz);
      return FALSE;
    }
  width = setup->setup.width;
  mid = (width - 1) / 2.0;
  for (guint k = 0; k < nz; k++)
    {
      /* Voxel centres of nz equal bins over the rows, of nx (ny) bins over W. */
      double z = setup->row_start + (k + 0.5) * setup->n_rows / nz - 0.5, plane_ms = 0.0;
      TomoPlane plane = { { mid, mid, z }, { (double) width / nx, 0, 0 },
                          { 0, (double) width / ny, 0 }, nx, ny };

      if (!self->ops->store->store_plane (self, &plane, center, interp,
                                          out + (gsize) k * nx * ny, &plane_ms, error))
        return FALSE;
      total += plane_ms;
    }
  if (ms != NULL)
    *ms = total;
  return TRUE;
}
