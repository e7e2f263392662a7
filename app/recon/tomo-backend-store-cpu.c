/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The CPU backend's volume store: the filtered sinograms in host memory and
 * planes back projected by tomo_plane_backproject() (the reference's fast
 * twin).  Slow, correct: the tests' reference for the GPU store.
 */
#define G_LOG_DOMAIN "tomo-backend"

#include "config.h"

#include <string.h>
#include <unistd.h>

#include "tomo-backend.h"
#include "tomo-error.h"
#include "tomo-fbp.h"

struct _TomoBackendStore
{
  TomoBackendStoreSetup setup;  /* first two: TomoBackendStoreHead */
  TomoPreprocessStats stats;    /* of the last fill */
  double *angles;           /* a copy: the setup's may go before the store */
  float *filtered;          /* n_rows × n_proj × width */
  TomoPlaneSource source;   /* the two above, as planes and previews read them */
  TomoCpuFbp *fbp;
};
G_STATIC_ASSERT (G_STRUCT_OFFSET (TomoBackendStore, stats)
                 == G_STRUCT_OFFSET (TomoBackendStoreHead, stats));

static void
cpu_store_free (TomoBackendStore *store)
{
  g_clear_pointer (&store->fbp, tomo_cpu_fbp_free);
  g_free (store->filtered);
  g_free (store->angles);
  g_free (store);
}

static gboolean
cpu_store_new (TomoBackendImpl             *impl,
               const TomoBackendStoreSetup *setup,
               GError                     **error)
{
  const TomoBackendSetup *geo = &setup->setup;
  guint64 bytes = (guint64) setup->n_rows * geo->n_proj * geo->width * sizeof (float);
  long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGE_SIZE);
  guint64 ram = pages > 0 && page > 0 ? (guint64) pages * (guint64) page : G_MAXUINT64;
  guint64 limit = setup->memory_limit != 0 ? MIN (setup->memory_limit, ram / 2) : ram / 2;
  TomoBackendStore *store;
  float *filtered = NULL;

  g_clear_pointer (&impl->store, cpu_store_free);
  /* Allocation may succeed lazily far beyond the memory there is: refuse
   * more than half of it here rather than let the fill swap or be killed. */
  if (setup->n_rows > 0 && bytes <= limit)
    filtered = g_try_malloc (bytes);
  if (filtered == NULL)
    {
      g_autofree char *need = g_format_size (bytes), *may = g_format_size (limit);

      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Cannot hold the filtered sinograms of rows %u:%u in host memory "
                   "(%s, at most %s); choose a smaller row range",
                   setup->row_start, setup->row_start + setup->n_rows, need, may);
      return FALSE;
    }
  store = g_new0 (TomoBackendStore, 1);
  store->setup = *setup;
  store->angles = g_memdup2 (geo->angles, geo->n_proj * sizeof (double));
  store->setup.setup.angles = store->angles;
  store->filtered = filtered;
  store->source = (TomoPlaneSource) { geo->width, geo->n_proj, store->angles, setup->row_start,
                                      setup->n_rows, filtered };
  store->fbp = tomo_cpu_fbp_new (geo->width, geo->n_proj, store->angles, geo->filter, geo->pad,
                                 geo->n_threads);
  impl->store = store;
  return TRUE;
}

static gboolean
cpu_store_fill (TomoBackendImpl  *impl,
                TomoScan         *scan,
                TomoProgressFunc  progress,
                gpointer          user_data,
                volatile gint    *cancel,
                GError          **error)
{
  TomoBackendStore *store = impl->store;
  gsize ns;
  g_autofree float *sino = NULL;

  g_return_val_if_fail (store != NULL, FALSE);
  ns = (gsize) store->setup.setup.n_proj * store->setup.setup.width;
  sino = g_new (float, ns);
  memset (&store->stats, 0, sizeof store->stats);
  for (guint r = 0; r < store->setup.n_rows; r++)
    {
      if (tomo_backend_store_cancelled (cancel, error))
        return FALSE;
      if (!tomo_scan_read_sinogram (scan, store->setup.row_start + r, sino, &store->stats,
                                    error))
        return FALSE;
      tomo_cpu_fbp_filter (store->fbp, sino, store->filtered + r * ns);
      if (progress != NULL)
        progress (r + 1, store->setup.n_rows, user_data);
    }
  return TRUE;
}

static gboolean
cpu_store_plane (TomoBackendImpl *impl,
                 const TomoPlane *plane,
                 double           center,
                 TomoInterp       interp,
                 float           *out,
                 double          *ms,
                 GError         **error)
{
  TomoBackendStore *store = impl->store;
  gint64 t0;

  if (!tomo_backend_store_check_plane (impl, plane, center, error))
    return FALSE;
  t0 = g_get_monotonic_time ();
  tomo_plane_backproject (&store->source, center, interp, plane, store->setup.setup.n_threads,
                          out);
  if (ms != NULL)
    *ms = (g_get_monotonic_time () - t0) / 1000.0;
  return TRUE;
}

static char *
cpu_store_describe (TomoBackendImpl *impl)
{
  TomoBackendStore *store = impl->store;

  if (store == NULL)
    return g_strdup ("no store");
  return g_strdup_printf ("CPU store, %.2f GiB",
                          (double) store->setup.n_rows * store->setup.setup.n_proj
                          * store->setup.setup.width * 4 / (1 << 30));
}

static gboolean
cpu_store_preview (TomoBackendImpl    *impl,
                   TomoPreviewRequest *request,
                   GError            **error)
{
  TomoBackendStore *store = impl->store;
  TomoPreviewGeometry geometry;
  gint64 t0;

  if (!tomo_backend_store_preview_geometry (impl, request, &geometry, error))
    return FALSE;
  t0 = g_get_monotonic_time ();
  tomo_preview_backproject (&store->source, &geometry, request->center, request->interp,
                            store->setup.setup.n_threads, request->out);
  request->ms = (g_get_monotonic_time () - t0) / 1000.0;
  return TRUE;
}

const TomoBackendStoreOps tomo_backend_store_cpu_ops = {
  .store_preview = cpu_store_preview,
  .store_new = cpu_store_new,
  .store_fill = cpu_store_fill,
  .store_plane = cpu_store_plane,
  .store_describe = cpu_store_describe,
  .store_free = cpu_store_free,
};
