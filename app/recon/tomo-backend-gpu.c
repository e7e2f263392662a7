/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The GPU backend: the CUDA engine of gpu/ behind the engine's backend
 * interface.  The only file of app/ that includes gpu/tomo-gpu.h; the
 * engine's enums (TomoKernel, TomoInterp, TomoPadMode) are translated here.
 * Filtered sinograms stay on the device between back projections.
 */
#define G_LOG_DOMAIN "tomo-backend"

#include "config.h"

#include <string.h>

#include "tomo-backend.h"
#include "tomo-scan-private.h"
#include "tomo-error.h"
#include "tomo-filter.h"
#include "tomo-geometry.h"
#include "tomo-gpu.h"
#include "tomo-gpu-center.h"
#include "tomo-row-prefetch.h"

typedef struct
{
  TomoBackendImpl parent;
  TomoGpuContext *ctx;
  TomoBackendSetup setup;   /* its angles: `angles` */
  double *angles;           /* a copy of the angles the device has */
  TomoGpuAccumulator *acc;  /* the live slice, on the device */
  guint acc_width;
  TomoGpuXcorr *xc;         /* correlate: made for xc_width × xc_pairs */
  guint xc_width, xc_pairs;
  gboolean raw_filtered;    /* load_raw filtered the rows already */
} GpuBackend;

static TomoGpuKernel
to_gpu_kernel (TomoKernel kernel)
{
  switch (kernel)
    {
    case TOMO_KERNEL_STANDARD: return TOMO_GPU_KERNEL_STANDARD;
    case TOMO_KERNEL_TEXTURE: return TOMO_GPU_KERNEL_TEXTURE;
    case TOMO_KERNEL_ALU: return TOMO_GPU_KERNEL_ALU;
    case TOMO_KERNEL_HYBRID: return TOMO_GPU_KERNEL_HYBRID;
    case TOMO_KERNEL_AUTO:
    default: return TOMO_GPU_KERNEL_AUTO;
    }
}

static TomoKernel
from_gpu_kernel (TomoGpuKernel kernel)
{
  switch (kernel)
    {
    case TOMO_GPU_KERNEL_STANDARD: return TOMO_KERNEL_STANDARD;
    case TOMO_GPU_KERNEL_TEXTURE: return TOMO_KERNEL_TEXTURE;
    case TOMO_GPU_KERNEL_ALU: return TOMO_KERNEL_ALU;
    case TOMO_GPU_KERNEL_HYBRID: return TOMO_KERNEL_HYBRID;
    case TOMO_GPU_KERNEL_AUTO:
    default: return TOMO_KERNEL_AUTO;
    }
}

static int
to_gpu_interp (TomoInterp interp)
{
  return interp == TOMO_INTERP_NEAREST ? 0 : 1;
}

static int
to_gpu_pad (TomoPadMode pad)
{
  return pad == TOMO_PAD_ZERO ? 0 : 1;
}

/* GPU errors reach the engine's callers in the engine's domain. */
static void
propagate_gpu_error (GError    **error,
                     GError     *gpu_error,
                     const char *what)
{
  g_set_error (error, TOMO_RECON_ERROR,
               g_error_matches (gpu_error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_DEVICE_FAULT)
               ? TOMO_RECON_ERROR_DEVICE_FAULT : TOMO_RECON_ERROR_BACKEND,
               "%s: %s", what, gpu_error->message);
  g_error_free (gpu_error);
}

gboolean
tomo_backend_gpu_failed (GError    **error,
                         const char *what)
{
  if (error != NULL && *error != NULL)
    propagate_gpu_error (error, g_steal_pointer (error), what);
  return FALSE;
}

TomoScan *
tomo_backend_gpu_row_taps (TomoScan *scan,
                           guint     row,
                           int      *offset,
                           float     weights[4])
{
  TomoGeometryRowTaps taps;
  TomoScan *source = tomo_geometry_get_row_taps (scan, row, &taps);

  g_assert (source != NULL);
  *offset = taps.offset;
  memcpy (weights, taps.weights, sizeof taps.weights);
  return source;
}

/* tomo_kernel_to_string() and tomo_kernel_from_string() (tomo-engine.h):
 * the kernel names are the GPU's. */
const char *
tomo_kernel_to_string (TomoKernel kernel)
{
  if ((guint) kernel >= TOMO_N_KERNELS)
    return "invalid";
  return tomo_gpu_kernel_to_string (to_gpu_kernel (kernel));
}

gboolean
tomo_kernel_from_string (const char *name,
                         TomoKernel *kernel,
                         GError    **error)
{
  GError *local_error = NULL;
  TomoGpuKernel k;

  g_return_val_if_fail (kernel != NULL, FALSE);
  if (!tomo_gpu_kernel_from_string (name, &k, &local_error))
    {
      g_set_error_literal (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                           local_error->message);
      g_error_free (local_error);
      return FALSE;
    }
  *kernel = from_gpu_kernel (k);
  return TRUE;
}

int
tomo_backend_gpu_count_devices (void)
{
  return tomo_gpu_get_n_devices ();
}

static void
gpu_free (TomoBackendImpl *impl)
{
  GpuBackend *self = (GpuBackend *) impl;

  g_clear_pointer (&self->acc, tomo_gpu_accumulator_free);
  g_clear_pointer (&self->xc, tomo_gpu_xcorr_free);
  g_clear_pointer (&self->ctx, tomo_gpu_context_free);
  g_clear_pointer (&self->angles, g_free);
}

static gboolean
gpu_configure (TomoBackendImpl        *impl,
               const TomoBackendSetup *setup,
               GError                **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  guint padded;
  g_autofree double *response = NULL;

  g_clear_pointer (&impl->rows, g_free);
  /* The angles compared by value: another scan's (a new axis tilt of the
   * same file, say) may be equal, and a freed scan's address may come back
   * with other angles. */
  if (setup->width != self->setup.width || setup->n_proj != self->setup.n_proj
      || self->angles == NULL || setup->angles == NULL
      || memcmp (setup->angles, self->angles, sizeof (double) * setup->n_proj) != 0)
    {
      g_clear_pointer (&self->angles, g_free);
      self->setup.angles = NULL;
      if (!tomo_gpu_context_set_geometry (self->ctx, setup->width, setup->n_proj, setup->angles,
                                          error))
        {
          self->setup.width = 0;
          return tomo_backend_gpu_failed (error, "GPU geometry");
        }
      self->angles = g_memdup2 (setup->angles, sizeof (double) * setup->n_proj);
    }
  response = tomo_filter_fbp_response (setup->filter, setup->width, setup->n_proj, &padded);
  if (!tomo_gpu_context_set_filter (self->ctx, padded, response, to_gpu_pad (setup->pad),
                                    error))
    {
      self->setup.width = 0;
      return tomo_backend_gpu_failed (error, "GPU filter");
    }
  self->setup = *setup;
  self->setup.angles = self->angles;
  return TRUE;
}

/* Raw rows up, preprocessed and filtered on the device; the counts as
 * tomo_scan_read_sinogram() gives them, and its refusal of a row that is
 * mostly NaN or infinite. */
static gboolean
gpu_load_raw (TomoBackendImpl     *impl,
              TomoScan            *scan,
              TomoRawRow *const   *rows,
              guint                n_slices,
              TomoPreprocessStats *stats,
              double              *upload_ms,
              double              *preprocess_ms,
              GError             **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  const TomoRawRow *first = rows[0];
  gsize plane_bytes = first->n_bytes;
  gboolean normalise, apply_log;
  TomoGpuPreprocessCounts counts[4];
  g_autofree guchar *packed = NULL;
  g_autofree float *flat = NULL, *dark = NULL;
  const void *raw = first->data;
  const float *fl = first->flat, *dk = first->dark;
  /* The rows are the file's; a tilt correction's are resampled on the
   * device after their preprocessing, then a stitched or weighted scan's
   * mapped into its rows. */
  TomoGeometryRowMap gmap;
  TomoScan *mapped = tomo_geometry_get_row_map (scan, &gmap);
  TomoScan *base = mapped != NULL ? mapped : scan;
  TomoScan *source = tomo_geometry_get_raw_source (base);
  gboolean resample = source != base;
  int tap_offsets[4];
  float tap_weights[4 * 4];
  TomoGpuRowMap map = { 0 };

  /* The geometry's maps are the device's, field by field. */
  G_STATIC_ASSERT (sizeof (TomoGeometryStitchProjection) == sizeof (TomoGpuMapProjection));
  G_STATIC_ASSERT (G_STRUCT_OFFSET (TomoGeometryStitchProjection, t_angle)
                   == G_STRUCT_OFFSET (TomoGpuMapProjection, t_angle));
  G_STATIC_ASSERT (sizeof (TomoGeometryStitchColumn) == sizeof (TomoGpuMapColumn));
  G_STATIC_ASSERT (G_STRUCT_OFFSET (TomoGeometryStitchColumn, w_direct)
                   == G_STRUCT_OFFSET (TomoGpuMapColumn, w_direct));

  g_clear_pointer (&impl->rows, g_free);
  self->raw_filtered = FALSE;
  if (source == NULL)
    {
      /* The engine sends raw rows of files only. */
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "Raw rows of a scan that is not read from a file (%s)", tomo_scan_get_path (scan));
      return FALSE;
    }
  tomo_scan_get_preprocessing (source, &normalise, &apply_log);
  g_assert (n_slices <= G_N_ELEMENTS (tap_offsets));
  for (guint s = 0; resample && s < n_slices; s++)
    tomo_backend_gpu_row_taps (base, rows[s]->row, &tap_offsets[s], tap_weights + 4 * s);
  if (mapped != NULL)
    map = (TomoGpuRowMap) { gmap.width, gmap.n_proj, gmap.weights,
                            (const TomoGpuMapProjection *) gmap.proj,
                            (const TomoGpuMapColumn *) gmap.col };
  if (n_slices > 1)
    {
      /* Slice-parallel rows one after another, as the device takes them. */
      packed = g_try_malloc (plane_bytes * n_slices);
      if (packed == NULL)
        {
          g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                       "Out of memory for %u raw rows of %zu bytes", n_slices, plane_bytes);
          return FALSE;
        }
      if (normalise)
        {
          flat = g_new (float, (gsize) n_slices * first->width);
          dark = g_new (float, (gsize) n_slices * first->width);
        }
      for (guint s = 0; s < n_slices; s++)
        {
          memcpy (packed + s * plane_bytes, rows[s]->data, plane_bytes);
          if (normalise)
            {
              memcpy (flat + (gsize) s * first->width, rows[s]->flat, first->width * sizeof (float));
              memcpy (dark + (gsize) s * first->width, rows[s]->dark, first->width * sizeof (float));
            }
        }
      raw = packed;
      fl = flat;
      dk = dark;
    }
  TomoGpuRawRows in = { first->dtype == TOMO_DTYPE_UINT16 ? TOMO_GPU_RAW_UINT16 : TOMO_GPU_RAW_FLOAT32,
                        raw, n_slices, normalise ? fl : NULL, normalise ? dk : NULL, apply_log,
                        resample ? tap_offsets : NULL, resample ? tap_weights : NULL,
                        mapped != NULL ? &map : NULL };
  if (!tomo_gpu_context_load_raw (self->ctx, &in, counts, error))
    return tomo_backend_gpu_failed (error, "GPU preprocessing");
  for (guint s = 0; s < n_slices; s++)
    {
      TomoPreprocessStats row = { counts[s].n_values, counts[s].n_nonpositive,
                                  counts[s].n_nonfinite };

      if (!tomo_backend_check_device_row (scan, rows[s]->row, &row, error))
        return FALSE;
      if (stats != NULL)
        {
          tomo_preprocess_stats_add (stats, &rows[s]->stats);
          tomo_preprocess_stats_add (stats, &row);
        }
    }
  tomo_gpu_context_get_load_ms (self->ctx, upload_ms, preprocess_ms);
  impl->n_slices = n_slices;
  self->raw_filtered = TRUE;
  return TRUE;
}

static gboolean
gpu_filter (TomoBackendImpl *impl,
            double          *filter_ms,
            GError         **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  g_autofree float *rows = g_steal_pointer (&impl->rows);

  if (self->raw_filtered)
    {
      self->raw_filtered = FALSE;
      *filter_ms = tomo_gpu_context_get_filter_ms (self->ctx);
      return TRUE;
    }
  if (!tomo_gpu_context_load_sinograms (self->ctx, impl->n_slices, rows, error))
    return tomo_backend_gpu_failed (error, "GPU filtering");
  *filter_ms = tomo_gpu_context_get_filter_ms (self->ctx);
  return TRUE;
}

static const float *
buffer_data (gpointer buffer,
             int     *device)
{
  if (device != NULL)
    *device = tomo_gpu_buffer_get_device (buffer);
  return tomo_gpu_buffer_get_data (buffer);
}

static gboolean
buffer_read_rect (gpointer buffer,
                  gsize    offset,
                  gsize    stride,
                  guint    width,
                  guint    height,
                  float   *out,
                  GError **error)
{
  if (!tomo_gpu_buffer_read_rect (buffer, offset, stride, width, height, out, error))
    return tomo_backend_gpu_failed (error, "Reading slice values from the device");
  return TRUE;
}

static void
buffer_free (gpointer buffer)
{
  tomo_gpu_buffer_free (buffer);
}

static gboolean
buffer_download (gpointer buffer,
                 float   *out)
{
  g_autoptr(GError) error = NULL;

  if (!tomo_gpu_buffer_download (buffer, out, &error))
    {
      g_warning ("Cannot download a slice from the GPU: %s", error->message);
      return FALSE;
    }
  return TRUE;
}

static const TomoDeviceBufferOps gpu_buffer_ops = {
  .data = buffer_data,
  .read_rect = buffer_read_rect,
  .download = buffer_download,
  .free = buffer_free,
};
const TomoDeviceBufferOps *const tomo_backend_gpu_buffer_ops = &gpu_buffer_ops;

static void
plane_to_gpu_params (const TomoBackendPlane   *plane,
                     TomoGpuBackprojectParams *bp)
{
  tomo_gpu_backproject_params_init (bp);
  bp->center = plane->center;
  bp->interp = to_gpu_interp (plane->interp);
  bp->kernel = to_gpu_kernel (plane->kernel);
  bp->roi_x = plane->roi.x;
  bp->roi_y = plane->roi.y;
  bp->roi_width = plane->roi.width;
  bp->roi_height = plane->roi.height;
}

static gboolean
gpu_backproject (TomoBackendImpl *impl,
                 const TomoBackendPlane *plane,
                 TomoSlice       *slice,
                 GCancellable    *cancellable,
                 GError         **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  TomoGpuBackprojectParams bp;

  plane_to_gpu_params (plane, &bp);
  if (!tomo_gpu_context_backproject (self->ctx, &bp, error))
    return tomo_backend_gpu_failed (error, "GPU back projection");
  slice->backproject_ms = tomo_gpu_context_get_backproject_ms (self->ctx);
  slice->backend = TOMO_BACKEND_GPU;
  slice->kernel = g_strdup (tomo_gpu_kernel_to_string (tomo_gpu_context_get_last_kernel (self->ctx)));

  if (plane->keep_on_device)
    {
      slice->device_buffer = tomo_gpu_buffer_copy_output (self->ctx, error);
      if (slice->device_buffer == NULL)
        return tomo_backend_gpu_failed (error, "GPU slice copy");
      slice->device_ops = &gpu_buffer_ops;
    }
  if (!plane->skip_download)
    {
      if (!tomo_backend_alloc_slice_data (slice, error))
        return FALSE;
      if (!tomo_gpu_context_download (self->ctx, slice->data, error))
        return tomo_backend_gpu_failed (error, "GPU download");
    }
  return TRUE;
}

static gboolean
gpu_backproject_centers (TomoBackendImpl    *impl,
                         TomoBackendCenters *sweep,
                         GError            **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  TomoGpuBackprojectParams bp;

  plane_to_gpu_params (&sweep->plane, &bp);
  if (!tomo_gpu_context_backproject_centers (self->ctx, &bp, sweep->centers, sweep->n_centers,
                                             error))
    return tomo_backend_gpu_failed (error, "GPU centre sweep");
  sweep->ms = tomo_gpu_context_get_backproject_ms (self->ctx);
  if (sweep->images != NULL && !tomo_gpu_context_download (self->ctx, sweep->images, error))
    return tomo_backend_gpu_failed (error, "GPU download");
  return TRUE;
}

/* The direct (warp-shuffle) kernel: the faster for the estimate's ranges
 * and exact over short overlaps (gpu/tomo-gpu-center.h). */
static gboolean
gpu_correlate (TomoBackendImpl       *impl,
               const TomoCenterPairs *pairs,
               float                 *out,
               GError               **error)
{
  GpuBackend *self = (GpuBackend *) impl;

  if (self->xc == NULL || self->xc_width < pairs->width || self->xc_pairs < pairs->n_pairs)
    {
      g_clear_pointer (&self->xc, tomo_gpu_xcorr_free);
      self->xc_width = MAX (pairs->width, self->xc_width);
      self->xc_pairs = MAX (pairs->n_pairs, 32);
      self->xc = tomo_gpu_xcorr_new (impl->device, self->xc_width, self->xc_pairs, error);
      if (self->xc == NULL)
        return tomo_backend_gpu_failed (error, "GPU correlation");
    }
  if (!tomo_gpu_xcorr_run (self->xc, TOMO_GPU_XCORR_DIRECT, pairs->a, pairs->b, pairs->n_pairs,
                           pairs->width, pairs->d_lo, pairs->n_shifts, pairs->min_overlap, out, error))
    return tomo_backend_gpu_failed (error, "GPU correlation");
  return TRUE;
}

/* TomoGpuStats is TomoSliceStats field for field (gpu/ cannot include the
 * engine's header): the device's statistics are copied as they are. */
G_STATIC_ASSERT (TOMO_GPU_STATS_BINS == TOMO_SLICE_HISTOGRAM_BINS);
G_STATIC_ASSERT (sizeof (TomoGpuStats) == sizeof (TomoSliceStats));
/* Every field where the other has it: equal sizes alone would let two
 * fields of one type (lo and hi, min and max) change places unseen. */
#define SAME_STATS_FIELD(f)                                                                \
  G_STATIC_ASSERT (G_STRUCT_OFFSET (TomoGpuStats, f) == G_STRUCT_OFFSET (TomoSliceStats, f) \
                   && sizeof (((TomoGpuStats *) 0)->f) == sizeof (((TomoSliceStats *) 0)->f))
SAME_STATS_FIELD (valid);
SAME_STATS_FIELD (min);
SAME_STATS_FIELD (max);
SAME_STATS_FIELD (lo);
SAME_STATS_FIELD (hi);
SAME_STATS_FIELD (range_lo);
SAME_STATS_FIELD (range_hi);
SAME_STATS_FIELD (mean);
SAME_STATS_FIELD (n_finite);
SAME_STATS_FIELD (bins);
#undef SAME_STATS_FIELD

/* On the device, over the context's output (still the slice's values): the
 * window gets them without a download. */
static gboolean
gpu_stats (TomoBackendImpl *impl,
           TomoSlice       *slice,
           GError         **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  TomoGpuStats gs;

  if (!tomo_gpu_context_stats (self->ctx, &gs, error))
    return tomo_backend_gpu_failed (error, "GPU slice statistics");
  memcpy (&slice->values, &gs, sizeof gs);
  return TRUE;
}

static gboolean
gpu_negativity (TomoBackendImpl *impl,
                TomoSlice       *slice,
                GError         **error)
{
  GpuBackend *self = (GpuBackend *) impl;

  /* A sweep's candidates are scored in one pass over the device planes. */
  G_STATIC_ASSERT (TOMO_ENGINE_MAX_CENTERS <= TOMO_GPU_MAX_SCORED);
  slice->negativity = g_new0 (double, slice->n_slices);
  if (!tomo_gpu_context_negativity (self->ctx, slice->negativity, error))
    return tomo_backend_gpu_failed (error, "GPU sweep score");
  return TRUE;
}

typedef struct
{
  const TomoBackendVolume *job;
  volatile gint cancel;
  TomoRowPrefetch *prefetch;  /* rows read ahead on many threads */
} VolumeRun;

/* A tilt-corrected scan's rows, resampled on the device as the CPU would. */
static void
volume_row_taps_cb (guint    row,
                    int     *offset,
                    float    weights[4],
                    gpointer user_data)
{
  VolumeRun *run = user_data;

  tomo_backend_gpu_row_taps (run->job->scan, row, offset, weights);
}

/* The device path: raw counts and the row's flat and dark, as read. */
static gboolean
volume_read_raw_cb (guint     row,
                    void     *raw,
                    float    *flat,
                    float    *dark,
                    gpointer  user_data,
                    GError  **error)
{
  VolumeRun *run = user_data;

  return tomo_row_prefetch_take_raw (run->prefetch, row, raw, flat, dark, error);
}

static gboolean
volume_write_cb (guint        row,
                 const float *slice,
                 gpointer     user_data,
                 GError     **error)
{
  VolumeRun *run = user_data;

  return run->job->sink (row, slice, run->job->roi.width, run->job->roi.height,
                         run->job->user_data, error);
}

static void
volume_progress_cb (guint    done,
                    guint    total,
                    gpointer user_data)
{
  VolumeRun *run = user_data;

  run->job->progress (done, total, run->job->user_data);
}

static void
volume_cancelled_cb (GCancellable *cancellable,
                     VolumeRun    *run)
{
  g_atomic_int_set (&run->cancel, 1);
}

static gboolean
gpu_volume (TomoBackendImpl         *impl,
            const TomoBackendVolume *job,
            GError                 **error)
{
  guint width = tomo_scan_get_width (job->scan);
  guint n_proj = tomo_scan_get_n_projections (job->scan);
  guint padded;
  g_autofree double *response = tomo_filter_fbp_response (job->params.filter, width, n_proj,
                                                          &padded);
  TomoGpuVolumeJob gjob = { 0 };
  TomoGpuVolumeStats gstats = { 0 };
  VolumeRun run = { job, 0, NULL };
  GError *gpu_error = NULL;
  gulong cancel_id = 0;
  gboolean ok;
  /* What the rows are read from: the file (a tilt correction's rows then
   * resampled on the device, after preprocessing), or a derived scan read
   * as such. */
  TomoScan *source = tomo_geometry_get_raw_source (job->scan);

  if (source == NULL)
    source = job->scan;
  else if (source != job->scan)
    gjob.row_taps = volume_row_taps_cb;

  gjob.width = width;
  gjob.n_proj = n_proj;
  gjob.angles = tomo_scan_get_angles (job->scan);
  gjob.padded_width = padded;
  gjob.response = response;
  gjob.pad_mode = to_gpu_pad (job->params.pad);
  plane_to_gpu_params (&(TomoBackendPlane) { .center = job->params.center,
                                              .interp = job->params.interp,
                                              .roi = job->roi,
                                              .kernel = job->kernel }, &gjob.bp);
  gjob.row_start = job->row_start;
  gjob.row_end = job->row_end;
  /* Rows go up as the file holds them (uint16 stays two bytes) and are
   * preprocessed on the device: the readers only read. */
  gjob.read_raw = volume_read_raw_cb;
  gjob.raw_type = tomo_scan_get_raw_dtype (source) == TOMO_DTYPE_UINT16 ? TOMO_GPU_RAW_UINT16
                                                                         : TOMO_GPU_RAW_FLOAT32;
  tomo_scan_get_preprocessing (source, &gjob.normalise, &gjob.apply_log);
  /* The prefetch could hand out distinct rows to several threads at once
   * (a row not in its window is read directly, as its own threads do), but
   * here its own threads bound the read, not the copy out: read_concurrent
   * stays off until a file → volume measurement shows it helps. */
  gjob.write = volume_write_cb;
  gjob.progress = job->progress != NULL ? volume_progress_cb : NULL;
  gjob.user_data = &run;
  gjob.cancel = &run.cancel;
  gjob.stats = &gstats;
  /* Reading and preprocessing a row costs more than its back projection:
   * half the cores read ahead, 4 rows each, at most 1 GiB of rows; every
   * core for a derived scan read as such (rows stitched), whose rows are
   * made on the CPU. */
  {
    guint n_threads = MAX (2, g_get_num_processors () / (_tomo_scan_get_base (source) ? 1 : 2));
    gsize row_bytes = (gsize) n_proj * width * sizeof (float);
    guint depth = (guint) MIN ((gsize) 4 * n_threads, MAX ((gsize) 1 << 30, row_bytes) / row_bytes);

    run.prefetch = tomo_row_prefetch_new_raw (source, job->row_start, job->row_end, n_threads,
                                              MAX (depth, 2));
  }

  if (job->cancellable != NULL)
    cancel_id = g_cancellable_connect (job->cancellable, G_CALLBACK (volume_cancelled_cb),
                                       &run, NULL);
  /* The pipeline makes its own contexts and streams on every device. */
  ok = tomo_gpu_reconstruct_volume (&gjob, &gpu_error);
  if (job->cancellable != NULL)
    g_cancellable_disconnect (job->cancellable, cancel_id);
  if (job->stats != NULL)
    {
      TomoVolumeStats *st = job->stats;

      st->reader_ms = tomo_row_prefetch_get_busy_ms (run.prefetch);
      st->wall_ms = gstats.wall_ms;
      st->read_ms = gstats.read_ms;
      st->upload_ms = gstats.upload_ms;
      st->compute_ms = gstats.compute_ms;
      st->download_ms = gstats.download_ms;
      st->write_ms = gstats.write_ms;
      st->wait_ms = gstats.wait_ms;
      st->setup_ms = gstats.setup_ms;
      st->stall_ms = gstats.stall_ms;
      st->pack = gstats.pack;
      st->n_devices = gstats.n_devices;
      /* A derived scan read as such: its rows come preprocessed from the CPU. */
      st->gpu_preprocess = _tomo_scan_get_base (source) == NULL;
      {
        /* As tomo_scan_read_sinogram() counts: the averaging of the flat
         * and dark frames (on the readers) and the values (on the device). */
        TomoPreprocessStats frames;

        tomo_row_prefetch_get_stats (run.prefetch, &frames);
        st->n_values = gstats.preprocess.n_values + frames.n_values;
        st->n_nonpositive = gstats.preprocess.n_nonpositive + frames.n_nonpositive;
        st->n_nonfinite = gstats.preprocess.n_nonfinite + frames.n_nonfinite;
      }
    }
  g_clear_pointer (&run.prefetch, tomo_row_prefetch_free);
  if (!ok)
    {
      if (g_atomic_int_get (&run.cancel))
        {
          g_clear_error (&gpu_error);
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
        }
      else if (gpu_error->domain == TOMO_GPU_ERROR)
        propagate_gpu_error (error, gpu_error, "GPU volume");
      else
        g_propagate_error (error, gpu_error); /* the sink's or the reader's own */
    }
  return ok;
}

static gboolean
gpu_accumulate_reset (TomoBackendImpl *impl,
                      guint            width,
                      GError         **error)
{
  GpuBackend *self = (GpuBackend *) impl;

  if (self->acc != NULL && width == self->acc_width)
    {
      if (!tomo_gpu_accumulator_clear (self->acc, error))
        return tomo_backend_gpu_failed (error, "GPU live slice");
      return TRUE;
    }
  g_clear_pointer (&self->acc, tomo_gpu_accumulator_free);
  self->acc_width = 0;
  self->acc = tomo_gpu_accumulator_new (impl->device, width, error);
  if (self->acc == NULL)
    return tomo_backend_gpu_failed (error, "GPU live slice");
  self->acc_width = width;
  return TRUE;
}

static gboolean
gpu_accumulate (TomoBackendImpl          *impl,
                const TomoAccumulateStep *step,
                double                   *ms,
                GError                  **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  TomoGpuLiveStep add = { NULL, step->angles, step->n, step->center, to_gpu_interp (step->interp) == 1 };

  if (!tomo_backend_accumulate_check (self->acc, error))
    return FALSE;
  if (!tomo_gpu_accumulator_add (self->acc, step->filtered, &add, step->weight, error))
    return tomo_backend_gpu_failed (error, "GPU live slice");
  if (ms != NULL)
    *ms = tomo_gpu_accumulator_get_last_ms (self->acc);
  return TRUE;
}

static gboolean
gpu_accumulate_read (TomoBackendImpl *impl,
                     float           *image,
                     GError         **error)
{
  GpuBackend *self = (GpuBackend *) impl;

  if (!tomo_backend_accumulate_check (self->acc, error))
    return FALSE;
  if (!tomo_gpu_accumulator_download (self->acc, image, error))
    return tomo_backend_gpu_failed (error, "GPU live slice");
  return TRUE;
}

static gboolean
gpu_accumulate_filter (TomoBackendImpl *impl,
                       TomoFilterType   filter,
                       TomoPadMode      pad,
                       guint            n_scan,
                       guint            n_slots,
                       GError         **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  g_autofree double *response = NULL;
  guint padded;

  if (!tomo_backend_accumulate_check (self->acc, error))
    return FALSE;
  response = tomo_filter_fbp_response (filter, self->acc_width, n_scan, &padded);
  if (!tomo_gpu_accumulator_set_filter (self->acc, padded, response, to_gpu_pad (pad), n_slots, error))
    return tomo_backend_gpu_failed (error, "GPU live slice");
  return TRUE;
}

static gboolean
gpu_accumulate_raw (TomoBackendImpl         *impl,
                    const TomoAccumulateRaw *step,
                    double                  *ms,
                    GError                 **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  gboolean linear = to_gpu_interp (step->interp) == 1;
  TomoGpuLiveStep remove = { step->remove, step->remove_angles, step->n_remove, step->center, linear };
  TomoGpuLiveStep put = { step->slots, step->angles, step->n, step->center, linear };

  if (!tomo_backend_accumulate_check (self->acc, error))
    return FALSE;
  if ((remove.n > 0 && !tomo_gpu_accumulator_remove_slots (self->acc, &remove, error)) ||
      !tomo_gpu_accumulator_put_raw (self->acc, step->raw, step->flat, step->dark, step->apply_log, &put, error))
    return tomo_backend_gpu_failed (error, "GPU live slice");
  if (ms != NULL)
    *ms = tomo_gpu_accumulator_get_last_ms (self->acc);
  return TRUE;
}

/* Statistics and the display copy from the device sum; the host copy only
 * when asked for. */
static gboolean
gpu_accumulate_slice (TomoBackendImpl *impl,
                      TomoSlice       *slice,
                      gboolean         device_only,
                      GError         **error)
{
  GpuBackend *self = (GpuBackend *) impl;
  TomoGpuStats gs;

  if (!tomo_backend_accumulate_check (self->acc, error))
    return FALSE;
  if (!tomo_gpu_accumulator_stats (self->acc, &gs, error))
    return tomo_backend_gpu_failed (error, "GPU live slice statistics");
  memcpy (&slice->values, &gs, sizeof gs);
  slice->device_buffer = tomo_gpu_accumulator_copy_image (self->acc, error);
  if (slice->device_buffer == NULL)
    return tomo_backend_gpu_failed (error, "GPU live slice copy");
  slice->device_ops = &gpu_buffer_ops;
  if (!device_only)
    {
      if (!tomo_backend_alloc_slice_data (slice, error))
        return FALSE;
      if (!tomo_gpu_buffer_download (slice->device_buffer, slice->data, error))
        return tomo_backend_gpu_failed (error, "GPU live slice download");
    }
  return TRUE;
}

static const TomoBackendOps gpu_ops = {
  .name = "gpu",
  .backend = TOMO_BACKEND_GPU,
  .free = gpu_free,
  .configure = gpu_configure,
  .load_rows = tomo_backend_load_rows_host,
  .load_raw = gpu_load_raw,
  .filter = gpu_filter,
  .backproject = gpu_backproject,
  .stats = gpu_stats,
  .negativity = gpu_negativity,
  .volume = gpu_volume,
  .accumulate_reset = gpu_accumulate_reset,
  .accumulate = gpu_accumulate,
  .accumulate_read = gpu_accumulate_read,
  .accumulate_filter = gpu_accumulate_filter,
  .accumulate_raw = gpu_accumulate_raw,
  .accumulate_slice = gpu_accumulate_slice,
  .backproject_centers = gpu_backproject_centers,
  .correlate = gpu_correlate,
  .store = &tomo_backend_store_gpu_ops,
};

TomoBackendImpl *
tomo_backend_gpu_new (GError **error)
{
  GError *gpu_error = NULL;
  TomoGpuContext *ctx;
  GpuBackend *self;

  /* With no device the context still says why (not built / no driver). */
  ctx = tomo_gpu_context_new (0, &gpu_error);
  if (ctx == NULL)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND,
                   "GPU backend not available: %s", gpu_error->message);
      g_error_free (gpu_error);
      return NULL;
    }
  self = g_new0 (GpuBackend, 1);
  self->parent.ops = &gpu_ops;
  self->ctx = ctx;
  self->parent.device = tomo_gpu_context_get_device (ctx);
  self->parent.device_name = tomo_gpu_get_device_name (self->parent.device);
  if (self->parent.device_name == NULL)
    self->parent.device_name = g_strdup_printf ("CUDA device %d", self->parent.device);
  return &self->parent;
}
