/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The GPU backend's volume store: gpu/tomo-gpu-store (float, or half when
 * float does not fit) behind the backend interface.  Part of the GPU
 * backend, so it may include gpu/ headers; nothing else of app/ or ui/
 * reaches the store but through these operations.
 */
#define G_LOG_DOMAIN "tomo-backend"

#include "config.h"

#include <string.h>

#include "tomo-backend.h"
#include "tomo-error.h"
#include "tomo-filter.h"
#include "tomo-geometry.h"
#include "tomo-gpu-store.h"
#include "tomo-gpu-store-fill.h"
#include "tomo-scan-private.h"

/* Bytes of raw rows one slab read may take (two slabs are in flight). */
#define SLAB_BYTES (64u << 20)

struct _TomoBackendStore
{
  TomoBackendStoreSetup setup;  /* first two: TomoBackendStoreHead */
  TomoPreprocessStats stats;    /* of the last fill */
  TomoGpuStore *gpu;
  TomoScan *scan;           /* during a fill: the scan read */
  TomoScan *resampled;      /* during a fill: the tilt-corrected scan whose
                             * rows the device resamples from scan's, or NULL */
  TomoProgressFunc progress;
  gpointer user_data;
  gboolean raw_fill;        /* the last fill preprocessed raw rows on the device */
};
G_STATIC_ASSERT (G_STRUCT_OFFSET (TomoBackendStore, stats)
                 == G_STRUCT_OFFSET (TomoBackendStoreHead, stats));

static void
gpu_store_free (TomoBackendStore *store)
{
  g_clear_pointer (&store->gpu, tomo_gpu_store_free);
  g_free (store);
}

static gboolean
gpu_store_new (TomoBackendImpl             *impl,
               const TomoBackendStoreSetup *setup,
               GError                     **error)
{
  const TomoBackendSetup *geo = &setup->setup;
  g_autoptr (GError) local = NULL;
  g_autofree double *response = NULL;
  TomoGpuStore *gpu;
  guint padded;

  g_clear_pointer (&impl->store, gpu_store_free);
  gpu = tomo_gpu_store_new (impl->device, geo->width, geo->n_proj, geo->angles, setup->row_start,
                            setup->n_rows, TOMO_GPU_STORE_AUTO, setup->memory_limit, error);
  if (gpu == NULL)
    return tomo_backend_gpu_failed (error, "GPU store");
  response = tomo_filter_fbp_response (geo->filter, geo->width, geo->n_proj, &padded);
  if (!tomo_gpu_store_set_filter (gpu, padded, response, geo->pad == TOMO_PAD_ZERO ? 0 : 1,
                                  error))
    {
      tomo_gpu_store_free (gpu);
      return tomo_backend_gpu_failed (error, "GPU store filter");
    }
  impl->store = g_new0 (TomoBackendStore, 1);
  impl->store->gpu = gpu;
  impl->store->setup = *setup;
  impl->store->setup.setup.angles = NULL;   /* the caller's; not kept */
  return TRUE;
}

static gboolean
fill_read_cb (guint    row,
              float   *sino,
              gpointer data,
              GError **error)
{
  TomoBackendStore *store = data;

  return tomo_scan_read_sinogram (store->scan, row, sino, &store->stats, error);
}

static void
fill_progress_cb (guint    done,
                  guint    total,
                  gpointer data)
{
  TomoBackendStore *store = data;

  if (store->progress != NULL)
    store->progress (done, total, store->user_data);
}

/* A slab of raw rows, one file read where the loader can; the counts of
 * averaging its flats and darks added to the fill's. */
static gboolean
fill_read_slab_cb (guint     row,
                   guint     n,
                   void     *raw,
                   float    *flat,
                   float    *dark,
                   gpointer  data,
                   GError  **error)
{
  TomoBackendStore *store = data;
  g_autofree TomoPreprocessStats *stats = g_new0 (TomoPreprocessStats, n);

  if (!_tomo_scan_read_raw_rows (store->scan, row, n, raw, flat, dark, stats, error))
    return FALSE;
  for (guint r = 0; r < n; r++)
    tomo_preprocess_stats_add (&store->stats, &stats[r]);
  return TRUE;
}

/* The taps of a tilt-corrected row, applied on the device after its
 * preprocessing as the CPU applies them. */
static void
fill_row_taps_cb (guint    row,
                  int     *offset,
                  float    weights[4],
                  gpointer data)
{
  TomoBackendStore *store = data;
  TomoScan *source = tomo_backend_gpu_row_taps (store->resampled, row, offset, weights);

  g_assert (source == store->scan);
}

/* Raw rows up in slabs (as many rows as a chunk of the file spans, at
 * least 8, within SLAB_BYTES), preprocessed and filtered on the device.  A row the device
 * finds mostly NaN is refused as tomo_scan_read_sinogram() refuses it. */
static gboolean
fill_raw (TomoBackendStore *store,
          volatile gint    *cancel,
          GError          **error)
{
  TomoScan *scan = store->scan;
  guint n_rows = store->setup.n_rows;
  TomoGpuStoreRawFill fill = { 0 };
  gsize row_bytes;
  guint chunk;
  gboolean ok;
  g_autofree TomoGpuPreprocessCounts *counts = g_new0 (TomoGpuPreprocessCounts, n_rows);

  fill.type = tomo_scan_get_raw_dtype (scan) == TOMO_DTYPE_UINT16 ? TOMO_GPU_RAW_UINT16
                                                                   : TOMO_GPU_RAW_FLOAT32;
  tomo_scan_get_preprocessing (scan, &fill.normalise, &fill.apply_log);
  row_bytes = (gsize) tomo_scan_get_n_projections (scan) * tomo_scan_get_width (scan)
              * tomo_gpu_raw_type_size (fill.type);
  chunk = _tomo_scan_get_chunk_rows (scan);
  fill.slab_rows = CLAMP (MAX (chunk, 8), 1, MAX (SLAB_BYTES / MAX (row_bytes, 1), 1));
  fill.read = fill_read_slab_cb;
  fill.row_taps = store->resampled != NULL ? fill_row_taps_cb : NULL;
  fill.progress = fill_progress_cb;
  fill.user_data = store;
  fill.cancel = cancel;
  fill.counts = counts;
  ok = tomo_gpu_store_fill_raw (store->gpu, &fill, error);
  /* The rows' counts; after a failure, the first row found corrupt is the
   * error. */
  for (guint r = 0; r < n_rows; r++)
    {
      TomoPreprocessStats row = { counts[r].n_values, counts[r].n_nonpositive,
                                  counts[r].n_nonfinite };

      if (ok)
        tomo_preprocess_stats_add (&store->stats, &row);
      else if (!tomo_backend_check_device_row (scan, store->setup.row_start + r, &row, error))
        break;
    }
  return ok;
}

static gboolean
gpu_store_fill (TomoBackendImpl  *impl,
                TomoScan         *scan,
                TomoProgressFunc  progress,
                gpointer          user_data,
                volatile gint    *cancel,
                GError          **error)
{
  TomoBackendStore *store = impl->store;
  /* The file's raw rows go up (a tilt correction's resampled after their
   * preprocessing); any other derived scan's rows are line integrals made
   * on the host. */
  TomoScan *source = tomo_geometry_get_raw_source (scan);
  gboolean raw, ok;

  g_return_val_if_fail (store != NULL, FALSE);
  raw = !store->setup.host_preprocess && source != NULL;
  store->scan = raw ? source : scan;
  store->resampled = raw && source != scan ? scan : NULL;
  store->progress = progress;
  store->user_data = user_data;
  memset (&store->stats, 0, sizeof store->stats);
  if (raw)
    ok = fill_raw (store, cancel, error);
  else
    ok = tomo_gpu_store_fill (store->gpu, fill_read_cb, fill_progress_cb, store, cancel, error);
  store->raw_fill = ok && raw;
  store->scan = NULL;
  store->resampled = NULL;
  if (!ok && tomo_backend_store_cancelled (cancel, error))
    return FALSE;
  /* Cancellation and read errors keep their own domain and code. */
  if (!ok && error != NULL && *error != NULL && (*error)->domain == TOMO_GPU_ERROR)
    return tomo_backend_gpu_failed (error, "GPU store fill");
  return ok;
}

static gboolean
gpu_store_plane (TomoBackendImpl *impl,
                 const TomoPlane *plane,
                 double           center,
                 TomoInterp       interp,
                 float           *out,
                 double          *ms,
                 GError         **error)
{
  TomoBackendStore *store = impl->store;
  TomoGpuPlane gp;

  if (!tomo_backend_store_check_plane (impl, plane, center, error))
    return FALSE;
  G_STATIC_ASSERT (sizeof gp == sizeof *plane);
  memcpy (&gp, plane, sizeof gp);
  if (!tomo_gpu_store_plane (store->gpu, &gp, center, interp == TOMO_INTERP_NEAREST ? 0 : 1,
                             TOMO_GPU_PLANE_AUTO, error) ||
      !tomo_gpu_store_download (store->gpu, out, error))
    return tomo_backend_gpu_failed (error, "GPU plane");
  if (ms != NULL)
    *ms = tomo_gpu_store_get_plane_ms (store->gpu);
  return TRUE;
}

static char *
gpu_store_describe (TomoBackendImpl *impl)
{
  TomoBackendStore *store = impl->store;

  if (store == NULL)
    return g_strdup ("no store");
  return g_strdup_printf ("GPU store, %s, %.2f GiB%s",
                          tomo_gpu_store_precision_to_string (tomo_gpu_store_get_precision (store->gpu)),
                          tomo_gpu_store_get_bytes (store->gpu) / (double) (1 << 30),
                          store->raw_fill ? ", rows preprocessed on the device" : "");
}

static gboolean
gpu_store_preview (TomoBackendImpl    *impl,
                   TomoPreviewRequest *request,
                   GError            **error)
{
  TomoBackendStore *store = impl->store;
  TomoPreviewGeometry geometry;
  TomoGpuPreview pv;

  if (!tomo_backend_store_preview_geometry (impl, request, &geometry, error))
    return FALSE;
  pv = (TomoGpuPreview) { geometry.nx, geometry.ny, geometry.nz, geometry.bin, geometry.step };
  if (!tomo_gpu_store_preview (store->gpu, &pv, request->center,
                               request->interp == TOMO_INTERP_NEAREST ? 0 : 1, error))
    return tomo_backend_gpu_failed (error, "GPU preview");
  request->ms = tomo_gpu_store_get_plane_ms (store->gpu);
  if (request->keep_on_device)
    {
      /* For interop: a copy of its own on the device and the values' range;
       * nothing else comes back. */
      TomoGpuStats stats;

      request->device_buffer = tomo_gpu_store_keep_output (store->gpu, &stats, error);
      if (request->device_buffer == NULL)
        return tomo_backend_gpu_failed (error, "GPU preview copy");
      request->device_ops = tomo_backend_gpu_buffer_ops;
      request->min = stats.valid ? stats.min : 0.0f;
      request->max = stats.valid ? stats.max : 0.0f;
      return TRUE;
    }
  if (!tomo_gpu_store_download (store->gpu, request->out, error))
    return tomo_backend_gpu_failed (error, "GPU preview");
  return TRUE;
}

const TomoBackendStoreOps tomo_backend_store_gpu_ops = {
  .store_preview = gpu_store_preview,
  .store_new = gpu_store_new,
  .store_fill = gpu_store_fill,
  .store_plane = gpu_store_plane,
  .store_describe = gpu_store_describe,
  .store_free = gpu_store_free,
};
