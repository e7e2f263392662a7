/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The volume-resident store (gpu/tomo-gpu-store.cu): the filtered sinograms
 * of a range of detector rows kept on one device, in float or — when float
 * does not fit — in half precision, and planes back projected from it on
 * demand: XY at any row, XZ, YZ and oblique planes, without reading or
 * filtering again.  Plain C; tomo-gpu-store-stub.c stands in without CUDA.
 */
#pragma once

#include "tomo-gpu.h"

G_BEGIN_DECLS

typedef enum
{
  TOMO_GPU_STORE_AUTO = 0, /* float when it fits, else half */
  TOMO_GPU_STORE_FLOAT,
  TOMO_GPU_STORE_HALF,
} TomoGpuStorePrecision;

const char *tomo_gpu_store_precision_to_string (TomoGpuStorePrecision precision);

typedef enum
{
  TOMO_GPU_PLANE_AUTO = 0, /* tile for vertical planes on whole rows of 16-byte rows, tilt for
                            * other planes it takes on 16-byte rows, rows for other horizontal
                            * plane rows with a step ≤ 1 pixel, else global */
  TOMO_GPU_PLANE_GLOBAL,   /* one thread per sample, loads from global memory: the baseline */
  TOMO_GPU_PLANE_CACHED,   /* a block per plane-row segment, its bins cached in shared memory */
  TOMO_GPU_PLANE_ROWS,     /* horizontal plane rows (any step): a block per plane-row segment of
                            * 2048 samples, each projection's whole run of bins in shared memory */
  TOMO_GPU_PLANE_TILE,     /* horizontal plane rows, step ≤ 1 pixel: a block per 256 × 8 tile;
                            * on vertical planes on whole rows (XZ, YZ) raw bins through a
                            * cp.async ring and each bin position serving 8 plane rows, else
                            * bins staged as interpolation pairs (tomo-gpu-store-tile.cu) */
  TOMO_GPU_PLANE_TEXTURE,  /* one thread per sample through texture objects of the stored rows
                            * (hardware linear filtering, 8-bit fractional weights): the
                            * texture baseline; needs rows of a multiple of 32 bytes */
  TOMO_GPU_PLANE_TILT,     /* horizontal plane rows, |u| ≤ 1, |v| ≤ 1 (oblique planes by azimuth
                            * and tilt, XY, vertical planes between rows): a block per 256 × 8
                            * tile, the raw bins of the stored rows it lies between through a
                            * cp.async ring, rows blended in float (tomo-gpu-store-tilt.cu) */
} TomoGpuPlaneKernel;

const char *tomo_gpu_plane_kernel_to_string (TomoGpuPlaneKernel kernel);

/* The plane, as TomoPlane in app/recon/tomo-plane.h (same layout and
 * meaning): sample (i, j) at centre + (i − (width−1)/2)·u + (j − (height−1)/2)·v
 * in (ix, iy, detector row) coordinates. */
typedef struct
{
  double centre[3];
  double u[3];
  double v[3];
  guint width, height;
} TomoGpuPlane;

typedef struct _TomoGpuStore TomoGpuStore;

/* Rows [row_start, row_start + n_rows) of a scan of n_proj × width.
 * memory_limit: bytes of device memory the store may use for the rows
 * (0: what the device has free, less what a fill takes beside the store
 * for a scan of this size and a reserve for planes and previews).
 * AUTO takes half when float exceeds it; when even half does not fit the
 * answer is NULL with TOMO_GPU_ERROR_OUT_OF_MEMORY naming the sizes. */
TomoGpuStore *tomo_gpu_store_new (int                    device,
                                  guint                  width,
                                  guint                  n_proj,
                                  const double          *angles,
                                  guint                  row_start,
                                  guint                  n_rows,
                                  TomoGpuStorePrecision  precision,
                                  guint64                memory_limit,
                                  GError               **error);
void                  tomo_gpu_store_free          (TomoGpuStore *store);
TomoGpuStorePrecision tomo_gpu_store_get_precision (TomoGpuStore *store);
/* Device bytes held by the rows. */
guint64               tomo_gpu_store_get_bytes     (TomoGpuStore *store);
guint                 tomo_gpu_store_get_row_start (TomoGpuStore *store);
guint                 tomo_gpu_store_get_n_rows    (TomoGpuStore *store);
/* Rows filled since the store was made or the filter changed. */
guint                 tomo_gpu_store_get_n_filled  (TomoGpuStore *store);

/* As tomo_gpu_context_set_filter(); a change empties the store. */
gboolean tomo_gpu_store_set_filter (TomoGpuStore *store,
                                    guint         padded_width,
                                    const double *response,
                                    int           pad_mode,
                                    GError      **error);

/* Reads every row with `read` into pinned host memory, uploads, filters on
 * the device and stores, with upload and filtering overlapped on two
 * streams.  progress (may be NULL) after each group of rows; cancel polled. */
gboolean tomo_gpu_store_fill (TomoGpuStore    *store,
                              TomoGpuReadFunc  read,
                              void           (*progress) (guint done, guint total, gpointer user_data),
                              gpointer         user_data,
                              volatile gint   *cancel,
                              GError         **error);
/* Stores n already filtered rows (n × n_proj × width floats) from row `row`. */
gboolean tomo_gpu_store_put_filtered (TomoGpuStore *store,
                                      guint         row,
                                      guint         n,
                                      const float  *filtered,
                                      GError      **error);
/* Milliseconds of the last fill, wall clock from the first read to the
 * last row stored. */
double   tomo_gpu_store_get_fill_ms (TomoGpuStore *store);

/* Back projects `plane` into the store's output buffer (device,
 * width × height floats, valid until the next call).  interp: 0 nearest,
 * 1 linear along the detector row; between rows always linear.  Samples
 * outside the rows held or the W × W square are 0. */
gboolean     tomo_gpu_store_plane          (TomoGpuStore       *store,
                                            const TomoGpuPlane *plane,
                                            double              center,
                                            int                 interp,
                                            TomoGpuPlaneKernel  kernel,
                                            GError            **error);
const float *tomo_gpu_store_get_output     (TomoGpuStore *store);
gboolean     tomo_gpu_store_download       (TomoGpuStore *store,
                                            float        *host,
                                            GError      **error);
/* CUDA-event milliseconds of the last plane, and the kernel that ran. */
double             tomo_gpu_store_get_plane_ms    (TomoGpuStore *store);
TomoGpuPlaneKernel tomo_gpu_store_get_last_kernel (TomoGpuStore *store);

/* A preview volume of nx × ny × nz voxels back projected in one launch
 * from a reduced copy of the store, as tomo_preview_backproject()
 * (app/recon/tomo-preview.h) defines it: nz slabs of rows averaged, `bin`
 * detector columns averaged, every `step`-th projection.  The copy is made
 * on the first call for a size and kept until the store's rows change.
 * The volume (z slowest) stays in the output buffer: get_output(),
 * download(); get_plane_ms() is the kernel's time, get_preview_prep_ms()
 * that of the last copy. */
typedef struct
{
  guint nx, ny, nz;
  guint bin, step;
} TomoGpuPreview;

gboolean tomo_gpu_store_preview             (TomoGpuStore         *store,
                                             const TomoGpuPreview *preview,
                                             double                center,
                                             int                   interp,
                                             GError              **error);
double   tomo_gpu_store_get_preview_prep_ms (TomoGpuStore *store);
/* The output (the last plane or preview) copied into a device buffer of
 * its own that outlives the store's next call, e.g. a preview volume for
 * the 3D pane's texture; its statistics (stats may be NULL) computed on the
 * device: nothing comes to the host but them. */
TomoGpuBuffer *tomo_gpu_store_keep_output   (TomoGpuStore  *store,
                                             TomoGpuStats  *stats,
                                             GError       **error);
/* Kept outputs reuse the store's buffers: a copy its holder frees goes back
 * to the store (no CUDA call while the store keeps fewer than four; beyond
 * that, or once the store is gone, the copy is freed for good on the
 * holder's thread), one of another size is let go at the next
 * keep_output(), and the statistics' workspace is made once.  fresh: a
 * buffer and workspace allocated for each copy and freed with it (the way
 * before; `bench --planes` measures both). */
void           tomo_gpu_store_set_keep_fresh (TomoGpuStore *store,
                                              gboolean      fresh);

G_END_DECLS
