/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The GPU engine's only public header: plain C, opaque handles, GError for
 * failures.  Kernels and CUDA types stay inside gpu/.  When tomolive is built
 * without CUDA, tomo-gpu-stub.c implements the same API and reports
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
} TomoGpuError;

GQuark tomo_gpu_error_quark (void);

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

/* Same, with sinograms that are already filtered (tests, benchmarks). */
gboolean tomo_gpu_context_load_filtered  (TomoGpuContext *ctx,
                                          guint           n_slices,
                                          const float    *filtered,
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

/* Back projects the loaded sinograms into the context's output buffer:
 * n_slices planes of roi_height × roi_width floats, row-major, on the device.
 * Returns after the result is complete on the device. */
gboolean     tomo_gpu_context_backproject (TomoGpuContext                 *ctx,
                                           const TomoGpuBackprojectParams *params,
                                           GError                        **error);
/* Device pointer of the output (valid until the next backproject). */
const float *tomo_gpu_context_get_output  (TomoGpuContext *ctx);
/* The kernel that actually ran in the last backproject (auto resolved). */
TomoGpuKernel tomo_gpu_context_get_last_kernel (TomoGpuContext *ctx);
/* Milliseconds of the last filtering and the last back projection (CUDA events). */
double       tomo_gpu_context_get_filter_ms      (TomoGpuContext *ctx);
double       tomo_gpu_context_get_backproject_ms (TomoGpuContext *ctx);
/* Copies the output to host memory (n_slices × roi_height × roi_width floats). */
gboolean     tomo_gpu_context_download    (TomoGpuContext *ctx,
                                           float          *host,
                                           GError        **error);

/* Filtering method: two real rows packed into one complex transform
 * (real part row a, imaginary part row b) or one real-to-complex transform per
 * row.  DEFAULT is the one `tomolive bench` measured faster on the H100. */
typedef enum
{
  TOMO_GPU_FILTER_METHOD_DEFAULT = 0,
  TOMO_GPU_FILTER_METHOD_C2C_PAIR,
  TOMO_GPU_FILTER_METHOD_R2C,
} TomoGpuFilterMethod;

void                tomo_gpu_context_set_filter_method (TomoGpuContext     *ctx,
                                                        TomoGpuFilterMethod method);
/* The method that runs (DEFAULT resolved). */
TomoGpuFilterMethod tomo_gpu_context_get_filter_method (TomoGpuContext     *ctx);
/* Copies the filtered sinograms of the last load to host memory
 * (n_slices × n_proj × width floats, planar). */
gboolean            tomo_gpu_context_download_filtered (TomoGpuContext     *ctx,
                                                        float              *host,
                                                        GError            **error);

/* Peak SM and memory clocks in kHz (FALSE if no such device). */
gboolean tomo_gpu_get_device_clocks (int  device,
                                     int *sm_khz,
                                     int *mem_khz);

/* Tuning table of the `auto` kernel, written by `tomolive bench --tune`:
 * g_get_user_cache_dir()/tomolive/tune-<device name>.ini, group "auto",
 * keys tomo_gpu_tune_key() → kernel name.  Contexts read it when created. */
char    *tomo_gpu_get_tune_path     (int device);
/* Size class of a slice of `width` pixels: 1024, 2048 or 4096 (nearest). */
guint    tomo_gpu_size_class        (guint width);
char    *tomo_gpu_tune_key          (guint n_slices,
                                     int   interp,
                                     guint size_class);
/* Re-reads the tuning table (after --tune wrote it). */
void     tomo_gpu_context_reload_tuning (TomoGpuContext *ctx);

/* Device buffers that outlive the next backproject, e.g. a slice on screen
 * while the next one is computed.  Copy from the output with
 * tomo_gpu_buffer_copy_output(). */
typedef struct _TomoGpuBuffer TomoGpuBuffer;
TomoGpuBuffer *tomo_gpu_buffer_copy_output (TomoGpuContext *ctx,
                                            GError        **error);
const float   *tomo_gpu_buffer_get_data    (TomoGpuBuffer *buffer);
int            tomo_gpu_buffer_get_device  (TomoGpuBuffer *buffer);
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
  TomoGpuWriteFunc write;
  void (*progress) (guint done, guint total, gpointer user_data);
  gpointer user_data;
  volatile gint *cancel;  /* non-zero → stop with TOMO_GPU_ERROR_INVALID "cancelled" */
} TomoGpuVolumeJob;

gboolean tomo_gpu_reconstruct_volume (const TomoGpuVolumeJob *job,
                                      GError                **error);

/* CUDA–OpenGL interop (gpu/tomo-gpu-gl.cu; GL types stay there).  Every call
 * needs the GL context current, on the thread that renders. */
/* TRUE and *device set when the current GL context runs on a CUDA device. */
gboolean tomo_gpu_gl_get_device (int *device);

typedef struct _TomoGpuGlTexture TomoGpuGlTexture;
/* Registers a GL_TEXTURE_2D of internal format GL_R32F (once per size). */
TomoGpuGlTexture *tomo_gpu_gl_texture_register   (unsigned int gl_texture,
                                                  guint        width,
                                                  guint        height,
                                                  GError     **error);
/* Map, copy a width × height float plane from device memory to (dst_x, dst_y)
 * of the texture, unmap — no host memory touched. */
gboolean          tomo_gpu_gl_texture_copy       (TomoGpuGlTexture *texture,
                                                  const float      *device_src,
                                                  guint             width,
                                                  guint             height,
                                                  guint             dst_x,
                                                  guint             dst_y,
                                                  GError          **error);
void              tomo_gpu_gl_texture_unregister (TomoGpuGlTexture *texture);

/* A headless OpenGL context for measuring the display path without a window
 * (`tomolive bench --interop`): EGL on the first EGL device whose surfaceless
 * OpenGL 3.3 core context runs on a CUDA device, made current on the calling
 * thread, with one GL_R32F texture of width × height registered for interop.
 * libEGL is loaded at run time; without it, without EGL device enumeration or
 * without a CUDA device, NULL and TOMO_GPU_ERROR_INTEROP / _NO_DEVICE.  Every
 * call below on the thread that opened it. */
typedef struct _TomoGpuGlHeadless TomoGpuGlHeadless;
TomoGpuGlHeadless *tomo_gpu_gl_headless_open         (guint    width,
                                                      guint    height,
                                                      GError **error);
/* The CUDA device the GL context runs on. */
int                tomo_gpu_gl_headless_get_device   (TomoGpuGlHeadless *gl);
/* "NVIDIA H100 …/PCIe/SSE2, OpenGL 3.3.0 NVIDIA 580…" */
const char        *tomo_gpu_gl_headless_get_renderer (TomoGpuGlHeadless *gl);
/* tomo_gpu_gl_texture_copy() of a width × height device plane to (0, 0) of
 * the texture, then glFinish(): on return a draw could sample it. */
gboolean           tomo_gpu_gl_headless_show         (TomoGpuGlHeadless *gl,
                                                      const float       *device_src,
                                                      guint              width,
                                                      guint              height,
                                                      GError           **error);
/* The whole texture back to host memory through GL (width × height floats). */
gboolean           tomo_gpu_gl_headless_read         (TomoGpuGlHeadless *gl,
                                                      float             *host,
                                                      GError           **error);
void               tomo_gpu_gl_headless_close        (TomoGpuGlHeadless *gl);

/* Incremental back projection for live scans: a W×W slice on the device to
 * which the contribution of a few filtered projections (k × width floats,
 * their angles in radians) is added with `weight` (+1 adds, −1 removes the
 * oldest of a sliding window).  One thread per pixel, linear or nearest
 * interpolation as the CPU back projector. */
typedef struct _TomoGpuAccumulator TomoGpuAccumulator;

TomoGpuAccumulator *tomo_gpu_accumulator_new      (int      device,
                                                   guint    width,
                                                   GError **error);
gboolean            tomo_gpu_accumulator_clear    (TomoGpuAccumulator *acc,
                                                   GError            **error);
gboolean            tomo_gpu_accumulator_add      (TomoGpuAccumulator *acc,
                                                   const float        *filtered,
                                                   const double       *angles,
                                                   guint               n_proj,
                                                   double              center,
                                                   float               weight,
                                                   gboolean            linear,
                                                   GError            **error);
/* width × width floats; waits for the additions. */
gboolean            tomo_gpu_accumulator_download (TomoGpuAccumulator *acc,
                                                   float              *out,
                                                   GError            **error);
/* Milliseconds of the last add: upload and kernel (CUDA events). */
double              tomo_gpu_accumulator_get_last_ms (TomoGpuAccumulator *acc);
void                tomo_gpu_accumulator_free     (TomoGpuAccumulator *acc);

G_END_DECLS
