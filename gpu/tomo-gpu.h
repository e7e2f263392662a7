/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The GPU engine: devices, reconstruction contexts (filter, back projection),
 * device buffers and whole volumes.  Plain C, opaque handles, GError for
 * failures; kernels and CUDA types stay inside gpu/.  Two more headers hold
 * the other concerns: tomo-gpu-gl.h (display interop) and tomo-gpu-tune.h
 * (clocks, the tuning table, filter methods: what the bench and the tests
 * vary).  Inside app/ only the GPU backend (app/recon/tomo-backend-gpu.c)
 * includes this header.  When tomolive is built without CUDA,
 * tomo-gpu-stub.c implements the same API and reports
 * TOMO_GPU_ERROR_NOT_BUILT / no devices.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define TOMO_GPU_ERROR (tomo_gpu_error_quark ())
typedef enum
{
  TOMO_GPU_ERROR_NOT_BUILT,     /* tomolive was built without CUDA */
  TOMO_GPU_ERROR_NO_DEVICE,     /* no CUDA device or driver */
  TOMO_GPU_ERROR_CUDA,          /* a CUDA runtime call failed */
  TOMO_GPU_ERROR_CUFFT,         /* a cuFFT call failed */
  TOMO_GPU_ERROR_OUT_OF_MEMORY, /* device or pinned memory exhausted */
  TOMO_GPU_ERROR_INVALID,       /* bad argument (size, mode, kernel for mode…) */
  TOMO_GPU_ERROR_INTEROP,       /* CUDA–OpenGL interop unavailable or failed */
  TOMO_GPU_ERROR_DEVICE_FAULT,  /* a launch failed or the device was lost */
} TomoGpuError;

GQuark tomo_gpu_error_quark (void);

/* Fault injection and a device-memory cap, to exercise the error paths.
 * `spec`: NULL or "" (none), "alloc[:N]" (the N-th device allocation
 * fails as out of memory, once), "launch[:N]" (the N-th kernel launch
 * fails, once), "lost[:N]" (from the N-th checked CUDA call on, every
 * call fails as a lost device and no device is counted) or "keep[:N]" (the
 * N-th store output kept on the device, tomo_gpu_store_keep_output(), fails
 * as out of memory, once: the 3D preview's interop path).  N defaults to 1.
 * memory_limit: bytes of device memory tomolive may allocate per device
 * beyond what was in use at its first allocation there; 0 for no cap.
 * Read from TOMO_GPU_FAIL and TOMO_GPU_MEMORY_LIMIT on first use unless set
 * here first; counters start again at each call. */
gboolean tomo_gpu_fault_configure (const char *spec,
                                   guint64     memory_limit,
                                   GError    **error);

/* Back-projection kernels (Chilingaryan et al.). */
typedef enum
{
  TOMO_GPU_KERNEL_AUTO = 0, /* fastest for mode and size, from the tuning table */
  TOMO_GPU_KERNEL_STANDARD, /* one thread per pixel, texture, the baseline */
  TOMO_GPU_KERNEL_TEXTURE,  /* optimised texture kernel (Z-order, 4 threads per pixel) */
  TOMO_GPU_KERNEL_ALU,      /* shared-memory cache, interpolation on the FP units */
  TOMO_GPU_KERNEL_HYBRID,   /* texture and ALU blocks in one launch, split per SM */
  TOMO_GPU_N_KERNELS
} TomoGpuKernel;

const char *tomo_gpu_kernel_to_string   (TomoGpuKernel kernel);
gboolean    tomo_gpu_kernel_from_string (const char    *name,
                                         TomoGpuKernel *kernel,
                                         GError       **error);

/* Number of usable CUDA devices; 0 without CUDA or driver (never fails). */
int         tomo_gpu_get_n_devices      (void);
/* "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"; NULL if no such device. */
char       *tomo_gpu_get_device_name    (int device);

/* One reconstruction context per device and worker thread: owns a CUDA
 * stream, cuFFT plans, the filtered sinograms (cached on the device), the
 * output buffer and the textures.  Not thread-safe: one thread at a time. */
typedef struct _TomoGpuContext TomoGpuContext;

TomoGpuContext *tomo_gpu_context_new    (int      device,
                                         GError **error);
void            tomo_gpu_context_free   (TomoGpuContext *ctx);
int             tomo_gpu_context_get_device (TomoGpuContext *ctx);

/* Geometry: detector width, number of projections and their angles
 * (radians).  Drops cached sinograms when it changes. */
gboolean tomo_gpu_context_set_geometry  (TomoGpuContext *ctx,
                                         guint           width,
                                         guint           n_proj,
                                         const double   *angles,
                                         GError        **error);

/* Filter: padded_width/2 + 1 real coefficients from tomo_filter_response()
 * (scale included) and the padding mode (0 zero, 1 edge). */
gboolean tomo_gpu_context_set_filter    (TomoGpuContext *ctx,
                                         guint           padded_width,
                                         const double   *response,
                                         int             pad_mode,
                                         GError        **error);

/* Uploads n_slices (1, 2 or 4) preprocessed sinograms, each n_proj × width
 * floats, laid one after another in `sinos`, filters them on the GPU and
 * keeps the filtered (and, for 2/4 slices, interleaved) result on the device
 * until the next load: a new centre or interpolation then re-runs only
 * back projection. */
gboolean tomo_gpu_context_load_sinograms (TomoGpuContext *ctx,
                                          guint           n_slices,
                                          const float    *sinos,
                                          GError        **error);

typedef struct
{
  double center;          /* rotation axis column, fractional */
  int interp;             /* 0 nearest, 1 linear (= TomoInterp) */
  TomoGpuKernel kernel;
  guint roi_x, roi_y;     /* slice pixels; roi_width == 0 → whole width × width slice */
  guint roi_width, roi_height;
  gboolean half_cache;    /* ALU path: half-precision shared-memory cache */
  float hybrid_ratio;     /* hybrid: fraction of blocks per SM on the ALU path; ≤ 0 → tuned default */
} TomoGpuBackprojectParams;

void tomo_gpu_backproject_params_init (TomoGpuBackprojectParams *params);

typedef struct
{
  guint x, y, width, height;
} TomoGpuRoi;

/* The one check of back-projection parameters in gpu/ (every entry point
 * calls it): centre, interpolation, kernel and ROI against a width × width
 * slice; *roi (may be NULL) receives the resolved ROI. */
gboolean tomo_gpu_backproject_params_check (const TomoGpuBackprojectParams *params,
                                            guint                           width,
                                            TomoGpuRoi                     *roi,
                                            GError                        **error);

/* Back projects the loaded sinograms into the context's output buffer:
 * n_slices planes of roi_height × roi_width floats, row-major, on the device.
 * Returns after the result is complete on the device. */
gboolean     tomo_gpu_context_backproject (TomoGpuContext                 *ctx,
                                           const TomoGpuBackprojectParams *params,
                                           GError                        **error);
/* The one loaded sinogram back projected at each of `centers` (params->center
 * is not used) into the output: n_centers planes, in the order of `centers`.
 * Candidates whose centres differ by whole pixels share 4-slice launches on
 * copies of the sinogram shifted by those pixels (linear: the 4-slice path's
 * half-precision texture); inside the field of view of every candidate the
 * planes equal one back projection per centre within that path's accuracy. */
#define TOMO_GPU_MAX_CENTERS 256
gboolean     tomo_gpu_context_backproject_centers (TomoGpuContext                 *ctx,
                                                   const TomoGpuBackprojectParams *params,
                                                   const double                   *centers,
                                                   guint                           n_centers,
                                                   GError                        **error);
/* Device pointer of the output (valid until the next backproject). */
const float *tomo_gpu_context_get_output  (TomoGpuContext *ctx);
/* The kernel that actually ran in the last backproject (auto resolved). */
TomoGpuKernel tomo_gpu_context_get_last_kernel (TomoGpuContext *ctx);
/* Milliseconds of the last filtering and the last back projection (CUDA events). */
double       tomo_gpu_context_get_filter_ms      (TomoGpuContext *ctx);
double       tomo_gpu_context_get_backproject_ms (TomoGpuContext *ctx);
/* Statistics of the output's values (all planes together), computed on the
 * device: the meaning of TomoSliceStats (app/recon/tomo-engine.h) and of
 * tomo_slice_stats_compute(), which the GPU tests compare them with. */
#define TOMO_GPU_STATS_BINS 256
typedef struct
{
  gboolean valid;           /* FALSE when no value is finite */
  float min, max;
  float lo, hi;             /* 0.5 % and 99.5 % percentiles */
  float range_lo, range_hi; /* 0.05 % and 99.95 %: the span of `bins` */
  double mean;
  guint64 n_finite;
  guint32 bins[TOMO_GPU_STATS_BINS];
} TomoGpuStats;

gboolean     tomo_gpu_context_stats       (TomoGpuContext *ctx,
                                           TomoGpuStats   *stats,
                                           GError        **error);
/* The centre sweep's sharpness score of each plane of the output, into
 * scores[n_slices] (at most TOMO_GPU_MAX_SCORED planes): the energy (v²) of
 * the negative values over that of all the finite values inside the disc
 * inscribed in the plane (centre ((w − 1)/2, (h − 1)/2), radius
 * min (w, h)/2 − 2), 0 where there is none; lower is sharper.  What
 * tomo_center_negativity() (app/recon/tomo-center.h) computes on the host,
 * summed in double in another order. */
#define TOMO_GPU_MAX_SCORED 256
gboolean     tomo_gpu_context_negativity  (TomoGpuContext *ctx,
                                           double         *scores,
                                           GError        **error);
/* Copies the output to host memory (n_slices × roi_height × roi_width floats). */
gboolean     tomo_gpu_context_download    (TomoGpuContext *ctx,
                                           float          *host,
                                           GError        **error);

/* Device buffers that outlive the next backproject, e.g. a slice on screen
 * while the next one is computed.  Copy from the output with
 * tomo_gpu_buffer_copy_output(). */
typedef struct _TomoGpuBuffer TomoGpuBuffer;
TomoGpuBuffer *tomo_gpu_buffer_copy_output (TomoGpuContext *ctx,
                                            GError        **error);
const float   *tomo_gpu_buffer_get_data    (TomoGpuBuffer *buffer);
int            tomo_gpu_buffer_get_device  (TomoGpuBuffer *buffer);
/* height rows of width values, the first at data[offset] and each
 * `stride` values after the one before (a rectangle of a plane, or one
 * value), copied to `out` one row after another. */
gboolean       tomo_gpu_buffer_read_rect   (TomoGpuBuffer *buffer,
                                            gsize          offset,
                                            gsize          stride,
                                            guint          width,
                                            guint          height,
                                            float         *out,
                                            GError       **error);
/* All of it (the slice's floats) to host memory. */
gboolean       tomo_gpu_buffer_download    (TomoGpuBuffer *buffer,
                                            float         *out,
                                            GError       **error);
void           tomo_gpu_buffer_free        (TomoGpuBuffer *buffer);

/* Whole volumes (gpu/tomo-gpu-pipeline.cu): rows [row_start, row_end) are
 * read by `read` (into pinned host memory the pipeline owns), uploaded,
 * filtered, back projected and downloaded in groups on three streams
 * (upload / compute / download, double-buffered), round-robin over every
 * device; `write` receives the slices in row order on the calling thread.
 * Out of memory → smaller groups, then an error.  `cancel` is polled. */
typedef gboolean (*TomoGpuReadFunc)  (guint        row,
                                      float       *sino,   /* n_proj × width */
                                      gpointer     user_data,
                                      GError     **error);
typedef gboolean (*TomoGpuWriteFunc) (guint        row,
                                      const float *slice,  /* roi_height × roi_width */
                                      gpointer     user_data,
                                      GError     **error);
/* Raw counts in the file's own type, preprocessed on the device
 * (gpu/tomo-gpu-preprocess.cu) with the arithmetic, clamping and counting
 * of tomo_preprocess_row(). */
typedef enum
{
  TOMO_GPU_RAW_FLOAT32 = 0,
  TOMO_GPU_RAW_UINT16,
} TomoGpuRawType;

/* Per row: values processed, clamped (n_nonpositive), replaced (n_nonfinite). */
typedef struct
{
  guint64 n_values, n_nonpositive, n_nonfinite;
} TomoGpuPreprocessCounts;

/* Raw rows as the file holds them: n_rows sinograms of n_proj × width
 * values of `type` each, one after another, and the rows' averaged flats and
 * darks (n_rows × width floats each; both NULL for data already normalised). */
typedef struct
{
  TomoGpuRawType type;
  const void *raw;
  guint n_rows;
  const float *flat, *dark;
  gboolean apply_log;
  /* tomo_gpu_context_load_raw() only, optional (both NULL: the rows as they
   * are): each row's line integrals resampled along the row before the
   * filter, row r with tap_offsets[r] and tap_weights[4r … 4r+3] as
   * TomoGpuVolumeJob.row_taps says. */
  const int *tap_offsets;
  const float *tap_weights;
  /* tomo_gpu_context_load_raw() only, optional: the rows are `map`'s
   * n_proj × width and, after preprocessing and the taps, are mapped into
   * the context's rows (stitched or weighted, TomoGpuRowMap). */
  const struct _TomoGpuRowMap *map;
} TomoGpuRawRows;

/* How a row of width × n_proj becomes one of the context's (width_out ×
 * n_proj_out): with `weights` (n_proj, the same geometry) each projection
 * times its weight; else each output projection k blends its direct
 * projection's column col[u].direct with the opposite one interpolated
 * proj[k].t_angle of the way from `below` to `above`, at columns
 * col[u].mirror + col[u].t (the next clamped to the row):
 *   m(i) = (1 − t_angle) · below[i] + t_angle · above[i]
 *   out  = w_direct · direct + (1 − w_direct) · ((1 − t) · m(mirror) + t · m(mirror + 1))
 * each product rounded, then summed left to right; −1: no such column
 * (it adds 0).  The maps go to the device once and again when they change. */
typedef struct
{
  guint direct, below, above;
  float t_angle;
} TomoGpuMapProjection;

typedef struct
{
  int   direct, mirror;
  float t, w_direct;
} TomoGpuMapColumn;

typedef struct _TomoGpuRowMap
{
  guint width, n_proj;
  const float *weights;
  const TomoGpuMapProjection *proj;
  const TomoGpuMapColumn *col;
} TomoGpuRowMap;

gsize    tomo_gpu_raw_type_size   (TomoGpuRawType type);
/* `rows` of n_proj × width values → line integrals in `out`
 * (n_rows × n_proj × width floats); counts: n_rows entries (may be NULL). */
gboolean tomo_gpu_preprocess_rows (int                      device,
                                   const TomoGpuRawRows    *rows,
                                   guint                    n_proj,
                                   guint                    width,
                                   float                   *out,
                                   TomoGpuPreprocessCounts *counts,
                                   GError                 **error);

/* The viewer's row change without host arithmetic: rows->n_rows (1, 2 or 4)
 * raw sinograms of the context's n_proj × width go up as the file holds
 * them, are preprocessed on the device as tomo_gpu_preprocess_rows() does and
 * filtered and kept as tomo_gpu_context_load_sinograms() does.  counts:
 * n_rows entries (may be NULL).  The upload and the preprocessing are
 * timed with CUDA events (tomo_gpu_context_get_load_ms()). */
gboolean tomo_gpu_context_load_raw   (TomoGpuContext          *ctx,
                                      const TomoGpuRawRows    *rows,
                                      TomoGpuPreprocessCounts *counts,
                                      GError                 **error);
/* Milliseconds of the last load_raw's upload and preprocessing. */
void     tomo_gpu_context_get_load_ms (TomoGpuContext *ctx,
                                       double         *upload_ms,
                                       double         *preprocess_ms);

/* The volume pipeline's raw input: row `row` as n_proj × width values of the
 * job's raw_type into `raw`, and its averaged flat and dark (width floats
 * each; not written when the job does not normalise). */
typedef gboolean (*TomoGpuReadRawFunc) (guint        row,
                                        void        *raw,
                                        float       *flat,
                                        float       *dark,
                                        gpointer     user_data,
                                        GError     **error);

/* Where the time of a volume went: busy time of each stage summed over
 * groups and devices (GPU stages from CUDA events), and the wall time of
 * the whole call.  Stages overlap, so the busy times add up to more than
 * the wall time when the pipeline works. */
typedef struct
{
  double wall_ms;
  double read_ms;       /* `read` callbacks (file, conversion, preprocessing) */
  double upload_ms;     /* host → device copies */
  double compute_ms;    /* filter + back projection */
  double download_ms;   /* device → host copies */
  double write_ms;      /* `write` callbacks */
  double wait_ms;       /* calling thread waiting for the next group */
  guint pack;           /* slices per back projection */
  guint n_devices;
  TomoGpuPreprocessCounts preprocess; /* read_raw jobs: the device's counts, summed */
  double setup_ms;      /* allocations, plans and dry run before the first group */
  double stall_ms;      /* workers waiting for a free slot or a download */
  gboolean kept;        /* keep_resources: the previous job's buffers and plans were reused */
} TomoGpuVolumeStats;

typedef struct
{
  guint width, n_proj;
  const double *angles;
  guint padded_width;
  const double *response;
  int pad_mode;
  TomoGpuBackprojectParams bp;
  guint row_start, row_end;
  TomoGpuReadFunc read;
  /* Instead of `read` (which may then be NULL): raw rows uploaded as they
   * are and preprocessed on the device; a row mostly NaN/Inf is an error. */
  TomoGpuReadRawFunc read_raw;
  TomoGpuRawType raw_type;
  gboolean normalise, apply_log;
  /* Optional (may be NULL): each row's line integrals resampled along the
   * row before the filter, out[u] = Σk weights[k] · in[u + offset + k] in
   * every projection, the columns clamped to the row (an axis tilt
   * corrected on the device, after its preprocessing); called with
   * user_data on the workers' threads, for rows in [row_start, row_end). */
  void (*row_taps) (guint row, int *offset, float weights[4], gpointer user_data);
  /* TRUE: `read`/`read_raw` may run on several threads at once for
   * distinct rows; a group's rows are then read in parallel.  FALSE: one
   * call at a time. */
  gboolean read_concurrent;
  /* TRUE: on success the per-device buffers, streams and plans are kept
   * (pinned and device memory stay allocated) and the next job with the
   * same layout (devices, slices per pass, row and slice sizes, raw or
   * not) reuses them without allocating (a job without keep_resources
   * then frees them when it ends); a job of another layout frees them
   * first.  tomo_gpu_volume_release_kept() frees them. */
  gboolean keep_resources;
  TomoGpuWriteFunc write;
  void (*progress) (guint done, guint total, gpointer user_data);
  gpointer user_data;
  volatile gint *cancel;  /* non-zero → stop with TOMO_GPU_ERROR_INVALID "cancelled" */
  TomoGpuVolumeStats *stats; /* optional: filled in, also on failure */
} TomoGpuVolumeJob;

gboolean tomo_gpu_reconstruct_volume (const TomoGpuVolumeJob *job,
                                      GError                **error);
/* Frees what keep_resources jobs left allocated (nothing: no-op). */
void     tomo_gpu_volume_release_kept (void);

/* Incremental back projection for live scans: a W×W slice on the device to
 * which the contribution of a few filtered projections (k × width floats,
 * their angles in radians) is added with `weight` (+1 adds, −1 removes the
 * oldest of a sliding window).  One thread per pixel, linear or nearest
 * interpolation as the CPU back projector. */
typedef struct _TomoGpuAccumulator TomoGpuAccumulator;

/* The projections of one live step: n rows at `angles` (radians), kept in
 * `slots` (put_raw and remove_slots; add takes none), summed into the slice
 * about `center` with linear (else nearest) interpolation. */
typedef struct
{
  const guint  *slots;
  const double *angles;
  guint         n;
  double        center;
  gboolean      linear;
} TomoGpuLiveStep;

TomoGpuAccumulator *tomo_gpu_accumulator_new      (int      device,
                                                   guint    width,
                                                   GError **error);
gboolean            tomo_gpu_accumulator_clear    (TomoGpuAccumulator *acc,
                                                   GError            **error);
gboolean            tomo_gpu_accumulator_add      (TomoGpuAccumulator    *acc,
                                                   const float           *filtered,
                                                   const TomoGpuLiveStep *step,
                                                   float                  weight,
                                                   GError               **error);
/* width × width floats; waits for the additions. */
gboolean            tomo_gpu_accumulator_download (TomoGpuAccumulator *acc,
                                                   float              *out,
                                                   GError            **error);
/* Milliseconds of the last add: upload and kernel (CUDA events). */
double              tomo_gpu_accumulator_get_last_ms (TomoGpuAccumulator *acc);
void                tomo_gpu_accumulator_free     (TomoGpuAccumulator *acc);

/* The device path of a live slice: raw rows in, nothing but statistics out.
 * set_filter: the response of tomo_filter_fbp_response() for the scan's
 * projection count (the FBP scale included), padding mode (0 zero, 1 edge)
 * and n_slots filtered rows kept on the device.  put_raw: n raw rows
 * (n × width counts, or line integrals when flat/dark are NULL and apply_log
 * FALSE) preprocessed with the flat and dark rows, filtered, stored in
 * `slots` and added; remove_slots subtracts what those slots hold. */
gboolean tomo_gpu_accumulator_set_filter   (TomoGpuAccumulator *acc,
                                            guint               padded_width,
                                            const double       *response,
                                            int                 pad_mode,
                                            guint               n_slots,
                                            GError            **error);
gboolean tomo_gpu_accumulator_put_raw      (TomoGpuAccumulator    *acc,
                                            const float           *raw,
                                            const float           *flat,
                                            const float           *dark,
                                            gboolean               apply_log,
                                            const TomoGpuLiveStep *step,
                                            GError               **error);
gboolean tomo_gpu_accumulator_remove_slots (TomoGpuAccumulator    *acc,
                                            const TomoGpuLiveStep *step,
                                            GError               **error);
/* Statistics of the sum, reduced on the device (TomoGpuStats). */
gboolean tomo_gpu_accumulator_stats        (TomoGpuAccumulator *acc,
                                            TomoGpuStats       *stats,
                                            GError            **error);
/* A device copy of the sum for display (tomo_gpu_gl_texture_copy). */
TomoGpuBuffer *tomo_gpu_accumulator_copy_image (TomoGpuAccumulator *acc,
                                                GError            **error);

G_END_DECLS
