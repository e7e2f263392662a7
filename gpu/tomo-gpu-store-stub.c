/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The volume store and its raw fill without CUDA: every entry point
 * reports that tomolive was built without it.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include "tomo-gpu-store-fill.h"
#include "tomo-gpu-stub.h"

static void
not_built (GError **error)
{
  g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NOT_BUILT,
                       "tomolive was built without CUDA: no volume store on the GPU");
}

#define NOT_BUILT(...) TOMO_GPU_NOT_BUILT (not_built, __VA_ARGS__)

NOT_BUILT (TomoGpuStore *, NULL, tomo_gpu_store_new,
           int device, guint width, guint n_proj, const double *angles, guint row_start, guint n_rows,
           TomoGpuStorePrecision precision, guint64 memory_limit, GError **error)

void tomo_gpu_store_free (TomoGpuStore *store) {}
TomoGpuStorePrecision tomo_gpu_store_get_precision (TomoGpuStore *store) { return TOMO_GPU_STORE_AUTO; }
guint64 tomo_gpu_store_get_bytes (TomoGpuStore *store) { return 0; }
guint tomo_gpu_store_get_row_start (TomoGpuStore *store) { return 0; }
guint tomo_gpu_store_get_n_rows (TomoGpuStore *store) { return 0; }
guint tomo_gpu_store_get_n_filled (TomoGpuStore *store) { return 0; }
double tomo_gpu_store_get_fill_ms (TomoGpuStore *store) { return 0.0; }
double tomo_gpu_store_get_plane_ms (TomoGpuStore *store) { return 0.0; }
TomoGpuPlaneKernel tomo_gpu_store_get_last_kernel (TomoGpuStore *store) { return TOMO_GPU_PLANE_AUTO; }
const float *tomo_gpu_store_get_output (TomoGpuStore *store) { return NULL; }

NOT_BUILT (gboolean, FALSE, tomo_gpu_store_set_filter,
           TomoGpuStore *store, guint padded_width, const double *response, int pad_mode, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_store_fill,
           TomoGpuStore *store, TomoGpuReadFunc read,
           void (*progress) (guint done, guint total, gpointer user_data), gpointer user_data,
           volatile gint *cancel, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_store_put_filtered,
           TomoGpuStore *store, guint row, guint n, const float *filtered, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_store_plane,
           TomoGpuStore *store, const TomoGpuPlane *plane, double center, int interp,
           TomoGpuPlaneKernel kernel, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_store_download,
           TomoGpuStore *store, float *host, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_store_preview,
           TomoGpuStore *store, const TomoGpuPreview *preview, double center, int interp, GError **error)

double tomo_gpu_store_get_preview_prep_ms (TomoGpuStore *store) { return 0.0; }
void tomo_gpu_store_set_keep_fresh (TomoGpuStore *store, gboolean fresh) { }
NOT_BUILT (TomoGpuBuffer *, NULL, tomo_gpu_store_keep_output,
           TomoGpuStore *store, TomoGpuStats *stats, GError **error)
NOT_BUILT (gboolean, FALSE, tomo_gpu_store_fill_raw,
           TomoGpuStore *store, const TomoGpuStoreRawFill *fill, GError **error)
