/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "tomo-scan.h"
#include "tomo-types.h"
#include "tomo-volume-stats.h"

G_BEGIN_DECLS

/* Back-projection kernels of the GPU backend (Chilingaryan et al.); the CPU
 * backend ignores the choice.  AUTO: the fastest for mode and size, from
 * the tuning table; STANDARD: one thread per pixel, the baseline; TEXTURE:
 * the optimised texture kernel; ALU: shared-memory cache, interpolation on
 * the FP units; HYBRID: texture and ALU blocks in one launch. */
typedef enum
{
  TOMO_KERNEL_AUTO = 0, TOMO_KERNEL_STANDARD, TOMO_KERNEL_TEXTURE, TOMO_KERNEL_ALU,
  TOMO_KERNEL_HYBRID, TOMO_N_KERNELS
} TomoKernel;

/* "auto", "standard", "texture", "alu", "hybrid"; "invalid" otherwise. */
const char *tomo_kernel_to_string   (TomoKernel  kernel);
gboolean    tomo_kernel_from_string (const char *name,
                                     TomoKernel *kernel,
                                     GError    **error);

/* What to reconstruct: `n_slices` (1, 2 or 4) consecutive detector rows
 * starting at `row`, reconstructed together (slice-parallel mode). */
typedef struct
{
  guint row;
  guint n_slices;
  TomoReconParams params;
  int kernel;            /* TomoKernel; ignored by the CPU backend */
  gboolean keep_on_device; /* GPU: keep a device copy in slice->device_buffer (display) */
  gboolean skip_download;  /* GPU: leave slice->data NULL (display through interop only) */
  gboolean negativity;     /* score each plane as the centre sweep does: slice->negativity */
} TomoSliceRequest;

void tomo_slice_request_init (TomoSliceRequest *request,
                              TomoScan         *scan);

/* Statistics of the values of a slice (all n_slices planes together),
 * computed where the slice is — a reduction on the device for the GPU
 * backend, the worker thread for the CPU — and delivered with it, so the
 * window never scans a slice on the UI thread. */
#define TOMO_SLICE_HISTOGRAM_BINS 256
typedef struct
{
  gboolean valid;           /* FALSE when the slice holds no finite value */
  float min, max;           /* of the finite values */
  float lo, hi;             /* 0.5 % and 99.5 % percentiles: the auto-contrast window */
  float range_lo, range_hi; /* 0.05 % and 99.95 %: the span of `bins` */
  double mean;
  guint64 n_finite;
  guint32 bins[TOMO_SLICE_HISTOGRAM_BINS]; /* counts over [range_lo, range_hi] */
} TomoSliceStats;

/* From host values (the CPU path, and the reference for the GPU's). */
void tomo_slice_stats_compute (const float    *data,
                               gsize           n,
                               TomoSliceStats *stats);
/* Values at the lo and hi percentiles (0…100) of the finite values of
 * data, as the statistics find them.  FALSE when data holds no finite
 * value. */
gboolean tomo_percentiles (const float *data,
                           gsize        n,
                           double       lo_percent,
                           double       hi_percent,
                           double      *lo,
                           double      *hi);

/* A reconstructed slice (or 2/4 of them).  Immutable once made; refcounted so
 * the window can show one while the engine computes the next. */
typedef struct
{
  /*< private >*/
  gint ref_count;
  gconstpointer device_ops; /* the backend's TomoDeviceBufferOps, with device_buffer */
  /*< public >*/
  guint row, n_slices;
  guint width, height;      /* of each slice: the ROI */
  TomoRoi roi;
  TomoReconParams params;
  float *data;              /* n_slices × height × width, or NULL (skip_download) */
  gpointer device_buffer;   /* the backend's device copy, or NULL: see tomo_slice_get_device_data() */
  TomoBackend backend;      /* the backend that ran: CPU or GPU */
  char *kernel;             /* "cpu-linear", "alu", "hybrid"… what actually ran */
  double filter_ms;         /* 0 when the filtered sinogram came from the cache */
  /* The row change's stages (0 when the filtered rows were cached):
   * read_ms the rows from the file or the raw row cache (wall clock; the
   * host path's CPU preprocessing included), upload_ms and preprocess_ms
   * the device path's raw upload and preprocessing (CUDA events). */
  double read_ms, upload_ms, preprocess_ms;
  gboolean device_preprocess; /* the rows were preprocessed on the device */
  double backproject_ms;
  double total_ms;          /* request in → slice out, read and filter included */
  double gups;              /* back projection: pixels × projections × slices / s / 1e9 */
  TomoPreprocessStats stats;
  TomoSliceStats values;    /* of the reconstructed values */
  /* With request->negativity: tomo_center_negativity() of each of the
   * n_slices planes, computed where the slice is; else NULL. */
  double *negativity;
} TomoSlice;

#define TOMO_TYPE_SLICE (tomo_slice_get_type ())
GType      tomo_slice_get_type (void) G_GNUC_CONST;
TomoSlice *tomo_slice_ref      (TomoSlice *slice);
void       tomo_slice_unref    (TomoSlice *slice);
/* One value of plane `index` at (x, y) of the ROI, from host data or, for a
 * slice that lives only on the device, one pixel read from there. */
gboolean   tomo_slice_get_value (TomoSlice *slice,
                                 guint      index,
                                 guint      x,
                                 guint      y,
                                 float     *value);
/* A rectangle of plane `index`, `width` × `height` values from (x, y) of
 * the ROI, into `out` row after row: from host data or, for a slice that
 * lives only on the device, one copy from there (a crop of a large slice
 * that never comes down whole).  An error when it does not fit. */
gboolean   tomo_slice_read_rect (TomoSlice *slice,
                                 guint      index,
                                 guint      x,
                                 guint      y,
                                 guint      width,
                                 guint      height,
                                 float     *out,
                                 GError   **error);
/* Device memory of a slice kept on the device (keep_on_device): all planes,
 * row-major, and the CUDA device in *device; NULL for host-only slices. */
const float *tomo_slice_get_device_data (TomoSlice *slice,
                                         int       *device);
/* Host data for a slice that lives only on the device (skip_download): its
 * planes downloaded into slice->data.  TRUE at once when it has them.  It
 * changes the slice: call it where the slice was delivered (the main
 * thread), not while another thread reads the slice. */
gboolean     tomo_slice_ensure_data      (TomoSlice *slice,
                                          GError   **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoSlice, tomo_slice_unref)

#define TOMO_TYPE_ENGINE (tomo_engine_get_type ())
G_DECLARE_FINAL_TYPE (TomoEngine, tomo_engine, TOMO, ENGINE, GObject)

/* Number of usable CUDA devices; 0 without CUDA or driver. */
int          tomo_engine_count_gpus         (void);

/* Threads: every function may be called from any thread.  Setting the
 * scan or the backend takes a moment — it never waits for a slice or a
 * volume being computed, which goes on with the scan and backend it
 * started with — and applies to the next request.  Computations on one
 * backend run one at a time. */

/* AUTO picks the GPU when one is present and usable, else the CPU. */
TomoEngine  *tomo_engine_new                (TomoBackend backend);
gboolean     tomo_engine_set_backend        (TomoEngine  *self,
                                             TomoBackend  backend,
                                             GError     **error);
TomoBackend  tomo_engine_get_backend        (TomoEngine *self); /* CPU or GPU, resolved */
gboolean     tomo_engine_has_gpu            (TomoEngine *self);
/* "NVIDIA H100 …" or "CPU (2 threads)". */
const char  *tomo_engine_get_device_name    (TomoEngine *self);
/* The CUDA device the GPU backend runs on, −1 for CPU. */
int          tomo_engine_get_device         (TomoEngine *self);

/* A new scan supersedes the requests submitted for the previous one:
 * those waiting are dropped, one being computed is answered with
 * TOMO_RECON_ERROR_CANCELLED (never run against the new scan).  The raw
 * row cache stays when the new scan's rows are read from the same file
 * (tomo_geometry_get_mapped_source(): another axis tilt or offset-axis
 * stitching of the same scan). */
void         tomo_engine_set_scan           (TomoEngine *self,
                                             TomoScan   *scan);
/* Not a reference: for the thread that sets the scan. */
TomoScan    *tomo_engine_get_scan           (TomoEngine *self);
/* A new reference to the scan of now, or NULL: for other threads, and
 * for whoever must keep describing that scan while another is set. */
TomoScan    *tomo_engine_dup_scan           (TomoEngine *self);

/* The engine's door: checks rows [row_start, row_end) and params against the
 * scan, one message per mistake, and resolves the ROI (*roi may be NULL).
 * Every request and volume passes here; callers that must know the ROI
 * before they reconstruct (to size a file) call it too. */
gboolean     tomo_engine_check              (TomoEngine            *self,
                                             guint                  row_start,
                                             guint                  row_end,
                                             const TomoReconParams *params,
                                             TomoRoi               *roi,
                                             GError               **error);
/* Its rows part, for a scan without an engine: [row_start, row_end) is not
 * empty and lies in `scan`, or FALSE and TOMO_RECON_ERROR_INVALID_PARAM. */
gboolean     tomo_recon_check_rows          (TomoScan *scan,
                                             guint     row_start,
                                             guint     row_end,
                                             GError  **error);

/* Blocking; callable from any thread (requests are serialised). */
TomoSlice   *tomo_engine_reconstruct        (TomoEngine             *self,
                                             const TomoSliceRequest *request,
                                             GCancellable           *cancellable,
                                             GError                **error);

/* Non-blocking, "latest wins": while one request is computed, newer ones
 * replace the pending one.  `callback` runs on the thread-default main
 * context of the caller with the slice or the error of the request it
 * answers (older superseded requests are dropped without a callback).  A
 * request is for the scan of its submission: answered after another scan
 * was set, it has TOMO_RECON_ERROR_CANCELLED. */
typedef void (*TomoEngineCallback) (TomoEngine *engine,
                                    TomoSlice  *slice,
                                    const GError *error,
                                    gpointer    user_data);
/* After each slice served by tomo_engine_submit(), up to `ahead` rows in
 * the direction the row moves and `behind` rows the other way are read
 * into the scan's row cache on a low-priority thread (default 4 and 2;
 * 0 and 0 turn it off). A new request or scan drops those not yet read. */
void         tomo_engine_set_prefetch       (TomoEngine *self,
                                             guint       ahead,
                                             guint       behind);
/* Row changes on a backend that can (the GPU): raw rows from a cache of
 * slabs read as the file holds them, preprocessed on the device (TRUE, the
 * default); FALSE reads and preprocesses rows on the host (the earlier
 * path, kept as the benchmark's baseline). */
void         tomo_engine_set_device_preprocess (TomoEngine *self,
                                                gboolean    device_preprocess);
/* Waits until the prefetcher is idle; returns the rows it has read. */
guint        tomo_engine_wait_prefetch      (TomoEngine *self);
void         tomo_engine_submit             (TomoEngine             *self,
                                             const TomoSliceRequest *request,
                                             TomoEngineCallback      callback,
                                             gpointer                user_data);

/* The centre sweep: row `request->row` (n_slices 1) with request->params
 * (filter, interpolation, ROI; its centre unused) at each of `centers`, in
 * one back projection of the filtered row (cached like a slice's) — the GPU
 * packs candidates 4 to a launch.  The slice has n_slices = n_centers planes
 * in the order of `centers` (statistics over all; request->negativity: the
 * score of each); kernel "centers".  With skip_download the GPU's planes
 * stay on the device (data NULL: statistics and scores only); the request's
 * keep_on_device is not used. */
#define TOMO_ENGINE_MAX_CENTERS 256
TomoSlice   *tomo_engine_reconstruct_centers (TomoEngine             *self,
                                              const TomoSliceRequest *request,
                                              const double           *centers,
                                              guint                   n_centers,
                                              GCancellable           *cancellable,
                                              GError                **error);
/* Non-blocking, latest wins among sweeps; a sweep waits behind a pending
 * slice request and never replaces it.  `destroy` (may be NULL) frees
 * user_data after the callback, or when the sweep is dropped unanswered. */
void         tomo_engine_submit_centers      (TomoEngine             *self,
                                              const TomoSliceRequest *request,
                                              const double           *centers,
                                              guint                   n_centers,
                                              TomoEngineCallback      callback,
                                              gpointer                user_data,
                                              GDestroyNotify          destroy);

/* Whole volume, rows [row_start, row_end), one slice at a time handed to
 * `sink` in row order (on the calling thread).  The GPU backend streams
 * groups of rows (upload / filter + back project / download overlapped). */
typedef gboolean (*TomoVolumeSink)     (guint        row,
                                        const float *slice,
                                        guint        width,
                                        guint        height,
                                        gpointer     user_data,
                                        GError     **error);
typedef void     (*TomoProgressFunc)   (guint    done,
                                        guint    total,
                                        gpointer user_data);
gboolean     tomo_engine_reconstruct_volume (TomoEngine            *self,
                                             guint                  row_start,
                                             guint                  row_end,
                                             const TomoReconParams *params,
                                             int                    kernel,
                                             TomoVolumeSink         sink,
                                             TomoProgressFunc       progress,
                                             gpointer               user_data,
                                             GCancellable          *cancellable,
                                             GError               **error);
/* A volume as tomo_engine_run_volume() takes it: the arguments of
 * tomo_engine_reconstruct_volume(), and `scan` (NULL: the engine's of
 * now), which need not be the engine's scan — an export goes on with the
 * scan it described in its file while another is opened — and `stats`
 * (may be NULL) for its stage times, set when the rows were valid, also
 * when it failed. */
typedef struct
{
  TomoScan              *scan;
  guint                  row_start, row_end;
  const TomoReconParams *params;
  int                    kernel;
  TomoVolumeSink         sink;
  TomoProgressFunc       progress;
  gpointer               user_data;
  TomoVolumeStats       *stats;
} TomoVolumeRequest;

gboolean     tomo_engine_run_volume (TomoEngine              *self,
                                     const TomoVolumeRequest *request,
                                     GCancellable            *cancellable,
                                     GError                 **error);
/* Stage times of the last volume (also when it failed); zeros before the
 * first. */
void         tomo_engine_get_volume_stats   (TomoEngine      *self,
                                             TomoVolumeStats *stats);

G_END_DECLS
