/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The CUDA-free parts of the volume store: names of precisions and plane
 * kernels, built with and without CUDA.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include "tomo-gpu-store.h"

static const char *const precision_names[] = { "auto", "float", "half" };
static const char *const plane_kernel_names[] = { "auto", "global", "cached", "rows", "tile",
                                                       "texture", "tilt" };

const char *
tomo_gpu_store_precision_to_string (TomoGpuStorePrecision precision)
{
  if ((guint) precision >= G_N_ELEMENTS (precision_names))
    return "invalid";
  return precision_names[precision];
}

const char *
tomo_gpu_plane_kernel_to_string (TomoGpuPlaneKernel kernel)
{
  if ((guint) kernel >= G_N_ELEMENTS (plane_kernel_names))
    return "invalid";
  return plane_kernel_names[kernel];
}

gboolean
tomo_gpu_plane_kernel_from_string (const char         *name,
                                   TomoGpuPlaneKernel *kernel,
                                   GError            **error)
{
  g_return_val_if_fail (kernel != NULL, FALSE);

  for (guint i = 0; name != NULL && i < G_N_ELEMENTS (plane_kernel_names); i++)
    if (g_ascii_strcasecmp (name, plane_kernel_names[i]) == 0)
      {
        *kernel = (TomoGpuPlaneKernel) i;
        return TRUE;
      }
  g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
               "Unknown plane kernel “%s” (expected auto, global, cached, rows, tile, texture or tilt)",
               name ? name : "(null)");
  return FALSE;
}
