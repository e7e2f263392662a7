/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The raw store fill without CUDA: reports that tomolive was built without it.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include "tomo-gpu-store-fill.h"

gboolean
tomo_gpu_store_fill_raw (TomoGpuStore              *store,
                         const TomoGpuStoreRawFill *fill,
                         GError                   **error)
{
  g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NOT_BUILT,
                       "tomolive was built without CUDA: no volume store on the GPU");
  return FALSE;
}
