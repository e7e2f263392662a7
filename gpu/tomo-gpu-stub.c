/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The GPU API when tomolive is built without CUDA: no devices, and every
 * call that would need one fails with TOMO_GPU_ERROR_NOT_BUILT, so callers
 * take the CPU path with the same code as on a machine without a GPU.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <string.h>

#include "tomo-gpu.h"
#include "tomo-gpu-gl.h"
#include "tomo-gpu-stub.h"
#include "tomo-gpu-tune.h"

static void
set_not_built (GError **error)
{
  g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NOT_BUILT,
                       "tomolive was built without CUDA: no GPU reconstruction");
}

#define NOT_BUILT(...) TOMO_GPU_NOT_BUILT (set_not_built, __VA_ARGS__)

int tomo_gpu_get_n_devices (void) { return 0; }
char *tomo_gpu_get_device_name (int device) { return NULL; }
gboolean tomo_gpu_get_device_clocks (int device, int *sm_khz, int *mem_khz) { return FALSE; }
char *tomo_gpu_get_tune_path (int device) { return NULL; }

NOT_BUILT (TomoGpuContext *, NULL, tomo_gpu_context_new, int device, GError **error)

/* No context can exist, so the functions below only guard against misuse. */
void tomo_gpu_context_free (TomoGpuContext *ctx) { }
int tomo_gpu_context_get_device (TomoGpuContext *ctx) { return -1; }
void tomo_gpu_context_reload_tuning (TomoGpuContext *ctx) { }
void tomo_gpu_context_set_filter_method (TomoGpuContext *ctx, TomoGpuFilterMethod method) { }

TomoGpuFilterMethod
tomo_gpu_context_get_filter_method (TomoGpuContext *ctx)
{
  return TOMO_GPU_FILTER_METHOD_C2C_PAIR;
}

NOT_BUILT (gboolean, FALSE, tomo_gpu_context_set_geometry,
           TomoGpuContext *ctx, guint width, guint n_proj, const double *angles, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_context_set_filter,
           TomoGpuContext *ctx, guint padded_width, const double *response, int pad_mode, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_context_load_sinograms,
           TomoGpuContext *ctx, guint n_slices, const float *sinos, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_context_load_filtered,
           TomoGpuContext *ctx, guint n_slices, const float *filtered, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_context_download_filtered,
           TomoGpuContext *ctx, float *host, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_context_backproject,
           TomoGpuContext *ctx, const TomoGpuBackprojectParams *params, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_context_backproject_centers,
           TomoGpuContext *ctx, const TomoGpuBackprojectParams *params, const double *centers,
           guint n_centers, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_context_stats, TomoGpuContext *ctx, TomoGpuStats *stats, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_context_negativity, TomoGpuContext *ctx, double *scores, GError **error)

const float *tomo_gpu_context_get_output (TomoGpuContext *ctx) { return NULL; }
TomoGpuKernel tomo_gpu_context_get_last_kernel (TomoGpuContext *ctx) { return TOMO_GPU_KERNEL_AUTO; }
double tomo_gpu_context_get_filter_ms (TomoGpuContext *ctx) { return 0.0; }
double tomo_gpu_context_get_backproject_ms (TomoGpuContext *ctx) { return 0.0; }

NOT_BUILT (gboolean, FALSE, tomo_gpu_context_download, TomoGpuContext *ctx, float *host, GError **error)
NOT_BUILT (TomoGpuBuffer *, NULL, tomo_gpu_buffer_copy_output, TomoGpuContext *ctx, GError **error)

const float *tomo_gpu_buffer_get_data (TomoGpuBuffer *buffer) { return NULL; }
int tomo_gpu_buffer_get_device (TomoGpuBuffer *buffer) { return -1; }

NOT_BUILT (gboolean, FALSE, tomo_gpu_buffer_read_rect,
           TomoGpuBuffer *buffer, gsize offset, gsize stride, guint width, guint height,
           float *out, GError **error)
void tomo_gpu_buffer_free (TomoGpuBuffer *buffer) { }

NOT_BUILT (gboolean, FALSE, tomo_gpu_reconstruct_volume, const TomoGpuVolumeJob *job, GError **error)
void tomo_gpu_volume_release_kept (void) { }

gboolean tomo_gpu_gl_get_device (int *device) { return FALSE; }

NOT_BUILT (TomoGpuGlTexture *, NULL, tomo_gpu_gl_texture_register,
           unsigned int gl_texture, guint width, guint height, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_gl_texture_copy,
           TomoGpuGlTexture *texture, const float *device_src, guint width, guint height, guint dst_x,
           guint dst_y, GError **error)

void tomo_gpu_gl_texture_unregister (TomoGpuGlTexture *texture) { }

NOT_BUILT (TomoGpuGlHeadless *, NULL, tomo_gpu_gl_headless_open, guint width, guint height, GError **error)

int tomo_gpu_gl_headless_get_device (TomoGpuGlHeadless *gl) { return -1; }
const char *tomo_gpu_gl_headless_get_renderer (TomoGpuGlHeadless *gl) { return NULL; }

NOT_BUILT (gboolean, FALSE, tomo_gpu_gl_headless_show,
           TomoGpuGlHeadless *gl, const float *device_src, guint width, guint height, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_gl_headless_read, TomoGpuGlHeadless *gl, float *host, GError **error)

void tomo_gpu_gl_headless_close (TomoGpuGlHeadless *gl) { }

NOT_BUILT (TomoGpuGlVolume *, NULL, tomo_gpu_gl_volume_register,
           unsigned int gl_texture, guint nx, guint ny, guint nz, gboolean half, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_gl_volume_copy,
           TomoGpuGlVolume *volume, const float *device_src, guint nx, guint ny, guint nz,
           GError **error)
void tomo_gpu_gl_volume_unregister (TomoGpuGlVolume *volume) { }
NOT_BUILT (unsigned int, 0, tomo_gpu_gl_headless_texture_3d_new,
           TomoGpuGlHeadless *gl, guint nx, guint ny, guint nz, gboolean half, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_gl_headless_texture_3d_upload,
           TomoGpuGlHeadless *gl, unsigned int texture, guint nx, guint ny, guint nz,
           const float *host, GError **error)
void tomo_gpu_gl_headless_finish (TomoGpuGlHeadless *gl) { }
void tomo_gpu_gl_headless_texture_delete (TomoGpuGlHeadless *gl, unsigned int texture) { }

NOT_BUILT (TomoGpuAccumulator *, NULL, tomo_gpu_accumulator_new, int device, guint width, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_accumulator_clear, TomoGpuAccumulator *acc, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_accumulator_add,
           TomoGpuAccumulator *acc, const float *filtered, const TomoGpuLiveStep *step, float weight,
           GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_accumulator_download,
           TomoGpuAccumulator *acc, float *out, GError **error)

double tomo_gpu_accumulator_get_last_ms (TomoGpuAccumulator *acc) { return 0.0; }
void tomo_gpu_accumulator_free (TomoGpuAccumulator *acc) { }

NOT_BUILT (gboolean, FALSE, tomo_gpu_buffer_download, TomoGpuBuffer *buffer, float *out, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_accumulator_set_filter,
           TomoGpuAccumulator *acc, guint padded_width, const double *response, int pad_mode, guint n_slots,
           GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_accumulator_put_raw,
           TomoGpuAccumulator *acc, const float *raw, const float *flat, const float *dark,
           gboolean apply_log, const TomoGpuLiveStep *step, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_accumulator_remove_slots,
           TomoGpuAccumulator *acc, const TomoGpuLiveStep *step, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_accumulator_stats,
           TomoGpuAccumulator *acc, TomoGpuStats *stats, GError **error)
NOT_BUILT (TomoGpuBuffer *, NULL, tomo_gpu_accumulator_copy_image, TomoGpuAccumulator *acc, GError **error)

gsize
tomo_gpu_raw_type_size (TomoGpuRawType type)
{
  return type == TOMO_GPU_RAW_UINT16 ? 2 : 4;
}

NOT_BUILT (gboolean, FALSE, tomo_gpu_preprocess_rows, int device, const TomoGpuRawRows *rows, guint n_proj,
           guint width, float *out, TomoGpuPreprocessCounts *counts, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_context_load_raw,
           TomoGpuContext *ctx, const TomoGpuRawRows *rows, TomoGpuPreprocessCounts *counts, GError **error)

void
tomo_gpu_context_get_load_ms (TomoGpuContext *ctx, double *upload_ms, double *preprocess_ms)
{
  if (upload_ms != NULL)
    *upload_ms = 0.0;
  if (preprocess_ms != NULL)
    *preprocess_ms = 0.0;
}
