/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The engine's backend interface: the few operations TomoEngine needs from
 * whatever computes — the CPU reference (tomo-backend-cpu.c) or the CUDA
 * engine (tomo-backend-gpu.c, the only file of app/ that includes
 * gpu/tomo-gpu.h).  The engine validates parameters before it calls in, keeps
 * the one cache key of the filtered sinograms, and calls:
 *
 *   configure → load_rows → filter → backproject (→ stats) … backproject …
 *
 * Later planes (XZ, YZ, oblique: the geometry of tomo-plane.h), several
 * centres per launch and accumulation of new projections are new values of
 * TomoBackendPlaneKind or new operations appended here; a backend that lacks
 * one leaves it NULL and the engine reports that the backend cannot.
 */
#pragma once

#include <gio/gio.h>

#include "tomo-center.h"
#include "tomo-engine.h"
#include "tomo-plane.h"
#include "tomo-preview.h"
#include "tomo-raw-rows.h"

G_BEGIN_DECLS

typedef struct _TomoBackendImpl TomoBackendImpl;
typedef struct _TomoBackendStore TomoBackendStore;
typedef struct _TomoBackendStoreOps TomoBackendStoreOps;
typedef struct _TomoBackendOps TomoBackendOps;

/* Geometry and filter of the rows to come. */
typedef struct
{
  guint width, n_proj;
  const double *angles;
  TomoFilterType filter;
  TomoPadMode pad;
  guint n_threads;
} TomoBackendSetup;

typedef enum
{
  TOMO_PLANE_ROW_SLICE = 0, /* the slice of one detector row (XY) */
} TomoBackendPlaneKind;

/* One plane to back project from the loaded rows; validated and resolved. */
typedef struct
{
  TomoBackendPlaneKind kind;
  double center;
  TomoInterp interp;
  TomoRoi roi;              /* resolved: never width 0 */
  TomoKernel kernel;
  gboolean keep_on_device;
  gboolean skip_download;
} TomoBackendPlane;

/* Whole volumes: the engine's sink and cancellation, passed through. */
typedef struct
{
  TomoScan *scan;
  guint row_start, row_end;
  TomoReconParams params;
  TomoRoi roi;              /* resolved */
  TomoKernel kernel;
  TomoVolumeSink sink;
  TomoProgressFunc progress;
  gpointer user_data;
  GCancellable *cancellable;
  TomoVolumeStats *stats;   /* zeroed by the engine, n_rows set; the backend fills the rest */
} TomoBackendVolume;

/* A centre sweep: `plane` (its roi, interpolation, kernel; its centre not
 * used) at each of `centers` (each checked by the caller), n_centers planes
 * of roi.height × roi.width into `images` in the order of `centers` (NULL,
 * for a backend with a device: left there, for stats and negativity); ms:
 * the time of the back projections. */
typedef struct
{
  TomoBackendPlane plane;
  const double *centers;
  guint n_centers;
  float *images;
  double ms;
} TomoBackendCenters;

/* One step of a live slice built incrementally: n filtered detector rows
 * (n × width, the FBP scale already applied) at `angles` (radians), added to
 * the backend's accumulated slice with `weight` (+1 adds new projections,
 * −1 removes the oldest of a sliding window). */
typedef struct
{
  const float *filtered;
  const double *angles;
  guint n;
  double center;
  TomoInterp interp;
  float weight;
} TomoAccumulateStep;

/* One step of a live slice from raw rows (accumulate_raw): the slots in
 * `remove` leave the sum first (what they held before), then n rows of raw
 * counts (n × width; line integrals when flat/dark are NULL and apply_log is
 * FALSE) are preprocessed with the flat and dark rows, filtered, kept in
 * their `slots` and added. */
typedef struct
{
  const float *raw;
  const float *flat, *dark;
  gboolean apply_log;
  const guint *slots;
  const double *angles;
  guint n;
  const guint *remove;
  const double *remove_angles;
  guint n_remove;
  double center;
  TomoInterp interp;
} TomoAccumulateRaw;

struct _TomoBackendOps
{
  const char *name;         /* "cpu", "gpu" */
  TomoBackend backend;

  void      (*free)        (TomoBackendImpl *self);
  /* Geometry and filter; drops the loaded rows. */
  gboolean  (*configure)   (TomoBackendImpl        *self,
                            const TomoBackendSetup *setup,
                            GError                **error);
  /* Reads and preprocesses n_slices rows from `row` (planar sinograms). */
  gboolean  (*load_rows)   (TomoBackendImpl     *self,
                            TomoScan            *scan,
                            guint                row,
                            guint                n_slices,
                            TomoPreprocessStats *stats,
                            GCancellable        *cancellable,
                            GError             **error);
  /* The device path of a row change (NULL in a backend that reads with
   * load_rows): n_slices rows of `scan` as its file holds them
   * (tomo-raw-rows.h) go to the device, are preprocessed there with the
   * arithmetic, clamps and counts of tomo_scan_read_sinogram() (added to
   * `stats`, with the rows' flat/dark averaging) and filtered there: the
   * filter call that follows only reports the time.  *upload_ms,
   * *preprocess_ms: their times (CUDA events). */
  gboolean  (*load_raw)    (TomoBackendImpl     *self,
                            TomoScan            *scan,
                            TomoRawRow *const   *rows,
                            guint                n_slices,
                            TomoPreprocessStats *stats,
                            double              *upload_ms,
                            double              *preprocess_ms,
                            GError             **error);
  /* Filters the loaded rows and keeps them until the next load_rows;
   * *filter_ms: time of the filtering. */
  gboolean  (*filter)      (TomoBackendImpl *self,
                            double          *filter_ms,
                            GError         **error);
  /* Back projects `plane` of every loaded row into `slice` (its size, row
   * and parameters already set): data and/or device buffer, kernel, time. */
  gboolean  (*backproject) (TomoBackendImpl *self, const TomoBackendPlane *plane,
                            TomoSlice *slice, GCancellable *cancellable, GError **error);
  /* Fills slice->values where the slice is. */
  gboolean  (*stats)       (TomoBackendImpl *self, TomoSlice *slice, GError **error);
  /* The sweep's score of each plane of the slice just back projected
   * (backproject or backproject_centers; slice->n_slices planes), where it
   * is: tomo_center_negativity() into slice->negativity (allocated). */
  gboolean  (*negativity)  (TomoBackendImpl *self, TomoSlice *slice, GError **error);
  /* Rows [job->row_start, job->row_end) to job->sink, in row order. */
  gboolean  (*volume)      (TomoBackendImpl *self, const TomoBackendVolume *job, GError **error);
  /* Live slices.  The backend keeps one width × width sum (host memory for
   * the CPU, device memory for the GPU); accumulate_reset sizes and zeroes
   * it, accumulate adds one step (*ms: its time, upload and back projection;
   * CUDA events on the GPU), accumulate_read copies the sum to the host. */
  gboolean  (*accumulate_reset) (TomoBackendImpl *self,
                                 guint            width,
                                 GError         **error);
  gboolean  (*accumulate)       (TomoBackendImpl          *self,
                                 const TomoAccumulateStep *step,
                                 double                   *ms,
                                 GError                  **error);
  gboolean  (*accumulate_read)  (TomoBackendImpl *self,
                                 float           *image,
                                 GError         **error);
  /* Live slices where the backend computes, from raw rows (NULL: the caller
   * preprocesses and filters on the host and calls accumulate).
   * accumulate_filter (after accumulate_reset): the filter and padding for a
   * scan of n_scan projections (its FBP scale) and room for n_slots rows. */
  gboolean  (*accumulate_filter) (TomoBackendImpl *self,
                                  TomoFilterType   filter,
                                  TomoPadMode      pad,
                                  guint            n_scan,
                                  guint            n_slots,
                                  GError         **error);
  gboolean  (*accumulate_raw)   (TomoBackendImpl         *self,
                                 const TomoAccumulateRaw *step,
                                 double                  *ms,
                                 GError                 **error);
  /* The sum as a slice (its size, row and parameters already set): the
   * statistics in slice->values, computed where the sum is; a device copy in
   * slice->device_buffer where there is a device; slice->data unless
   * `device_only` (which a backend without a device ignores). */
  gboolean  (*accumulate_slice) (TomoBackendImpl *self,
                                 TomoSlice       *slice,
                                 gboolean         device_only,
                                 GError         **error);
  /* The centre sweep (TomoBackendCenters) of the first loaded row.  The
   * CPU loops; the GPU packs candidates 4 to a launch where it can. */
  gboolean  (*backproject_centers) (TomoBackendImpl    *self,
                                    TomoBackendCenters *sweep,
                                    GError            **error);
  /* The centre estimate's correlation profile of `pairs` (tomo-center.h)
   * into out (n_pairs × n_shifts).  Needs no configure. */
  gboolean  (*correlate)   (TomoBackendImpl       *self,
                            const TomoCenterPairs *pairs,
                            float                 *out,
                            GError               **error);
  const TomoBackendStoreOps *store; /* the volume store (below) */
};

/* The volume-resident store of TomoVolume: the filtered sinograms of rows
 * [row_start, row_start + n_rows) kept where the backend computes (host
 * memory for the CPU; the device, float or half, for the GPU). */
typedef struct
{
  TomoBackendSetup setup;   /* geometry and filter (n_threads for the CPU) */
  guint row_start, n_rows;
  guint64 memory_limit;     /* bytes the rows may take (0: what is free) */
  gboolean host_preprocess; /* GPU: rows read as floats and preprocessed on the
                             * host, not raw on the device (for comparisons) */
} TomoBackendStoreSetup;

/* What every backend's TomoBackendStore begins with, so that the
 * tomo_backend_store_* helpers below serve all of them. */
typedef struct
{
  TomoBackendStoreSetup setup;
  TomoPreprocessStats stats;  /* of the last fill */
} TomoBackendStoreHead;

/* The store's operations (NULL in a backend without one).  store_new
 * replaces any store the backend held; store_fill reads and filters every
 * row (progress may be NULL; cancel polled); store_plane back projects any
 * plane of tomo-plane.h (XY at a row, XZ, YZ, oblique) into out
 * (width × height floats, host) with *ms its time (CUDA events on the GPU);
 * store_describe: "GPU store, float, 1.23 GiB". */
struct _TomoBackendStoreOps
{
  gboolean (*store_new)      (TomoBackendImpl             *self,
                              const TomoBackendStoreSetup *setup,
                              GError                     **error);
  gboolean (*store_fill)     (TomoBackendImpl  *self,
                              TomoScan         *scan,
                              TomoProgressFunc  progress,
                              gpointer          user_data,
                              volatile gint    *cancel,
                              GError          **error);
  gboolean (*store_plane)    (TomoBackendImpl *self,
                              const TomoPlane *plane,
                              double           center,
                              TomoInterp       interp,
                              float           *out,
                              double          *ms,
                              GError         **error);
  char    *(*store_describe) (TomoBackendImpl *self);
  /* A preview volume (tomo-preview.h): nx × ny × nz voxels over the
   * W × W slice and the rows held, each the average of its block of the
   * reconstruction as tomo_preview_backproject() defines it, into out
   * (nz × ny × nx floats, z slowest); *ms its time (on the GPU the
   * kernel's, CUDA events, without the download). */
  gboolean (*store_preview)  (TomoBackendImpl    *self,
                              TomoPreviewRequest *request,
                              GError            **error);
  void     (*store_free)     (TomoBackendStore *store);
};

/* What a slice needs from its backend after the engine has let it go: the
 * device buffer's data, values read from it, its release.  Stateless. */
typedef struct
{
  const float *(*data)       (gpointer buffer,
                              int     *device);
  /* height rows of width values from data[offset], rows `stride` apart,
   * to `out` (checked by the caller); a device failure is
   * TOMO_RECON_ERROR_DEVICE_FAULT. */
  gboolean     (*read_rect)  (gpointer buffer,
                              gsize    offset,
                              gsize    stride,
                              guint    width,
                              guint    height,
                              float   *out,
                              GError **error);
  /* All of it to `out` (n_slices × height × width floats). */
  gboolean     (*download)   (gpointer buffer,
                              float   *out);
  void         (*free)       (gpointer buffer);
} TomoDeviceBufferOps;
/* Those of the GPU backend's buffers (tomo_gpu_buffer_*), also for a
 * preview kept on the device (tomo-backend-store-gpu.c). */
extern const TomoDeviceBufferOps *const tomo_backend_gpu_buffer_ops;
/* After a GPU call that failed with its error in *error: that error moved
 * into the engine's domain, prefixed with `what` (a device fault stays a
 * device fault).  Always FALSE.  For the GPU backend's files. */
gboolean tomo_backend_gpu_failed (GError    **error,
                                  const char *what);
/* The taps of row `row` of a tilt correction (tomo_geometry_get_row_taps())
 * in the form the GPU's row_taps callbacks take; returns the scan whose
 * rows they resample.  For the GPU backend's files. */
TomoScan *tomo_backend_gpu_row_taps (TomoScan *scan,
                                     guint     row,
                                     int      *offset,
                                     float     weights[4]);

struct _TomoBackendImpl
{
  const TomoBackendOps *ops;
  char *device_name;        /* "NVIDIA H100 …", "CPU (16 threads)" */
  int device;               /* CUDA device, −1 for the CPU */
  float *rows;              /* host sinograms of the last load_rows (n_slices × n_proj × width) */
  guint n_slices;
  TomoBackendStore *store;  /* the volume store (ops->store), NULL until store_new */
};

TomoBackendImpl *tomo_backend_cpu_new (void);
/* NULL and TOMO_RECON_ERROR_BACKEND with the reason when no GPU is usable. */
TomoBackendImpl *tomo_backend_gpu_new (GError **error);
/* Number of usable CUDA devices (0 without CUDA). */
int              tomo_backend_gpu_count_devices (void);

void             tomo_backend_free     (TomoBackendImpl *self);

/* The store operations of each backend (tomo-backend-store-cpu.c,
 * tomo-backend-store-gpu.c). */
extern const TomoBackendStoreOps tomo_backend_store_cpu_ops;
extern const TomoBackendStoreOps tomo_backend_store_gpu_ops;
/* The geometry of a store_preview (tomo-preview.h) after the checks every
 * store makes: a store is there, the centre is finite, the sides are
 * 1 … 4096. */
gboolean         tomo_backend_store_preview_geometry (TomoBackendImpl          *self,
                                                      const TomoPreviewRequest *request,
                                                      TomoPreviewGeometry      *geometry,
                                                      GError                  **error);
/* Checks shared by the stores: the plane and the centre; FALSE and the
 * message otherwise, also when no store was made. */
gboolean         tomo_backend_store_check_plane (TomoBackendImpl *self,
                                                 const TomoPlane *plane,
                                                 double           center,
                                                 GError         **error);
/* The counts of the last fill's preprocessing, as tomo_scan_read_sinogram()
 * gives them (flat/dark averaging and values; zeros before a fill or without
 * a store): the head every store begins with. */
void             tomo_backend_store_stats (TomoBackendImpl     *self,
                                           TomoPreprocessStats *stats);
/* For a fill: TRUE when *cancel (may be NULL) is set, with
 * TOMO_RECON_ERROR_CANCELLED in `error` in place of any error there. */
gboolean         tomo_backend_store_cancelled (volatile gint *cancel,
                                               GError       **error);

/* A row preprocessed on a device, with `counts` as tomo_scan_read_sinogram()
 * counts: FALSE with that function's refusal in `error` (in place of any
 * error there) when most of its values are NaN or infinite. */
gboolean         tomo_backend_check_device_row (TomoScan                  *scan,
                                                guint                      row,
                                                const TomoPreprocessStats *counts,
                                                GError                   **error);

/* load_rows of the backends that read on the host: self->rows and
 * self->n_slices hold the preprocessed sinograms, one after another. */
gboolean tomo_backend_load_rows_host (TomoBackendImpl *self, TomoScan *scan, guint row,
                                      guint n_slices, TomoPreprocessStats *stats,
                                      GCancellable *cancellable, GError **error);
/* Host memory for a slice's planes, or NULL and an error. */
gboolean         tomo_backend_alloc_slice_data (TomoSlice *slice,
                                                GError   **error);
/* accumulate/accumulate_read of a backend whose sum `sum` is not made yet:
 * FALSE and the error. */
gboolean         tomo_backend_accumulate_check (gconstpointer sum,
                                                GError      **error);

G_END_DECLS
