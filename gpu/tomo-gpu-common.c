/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The parts of the GPU API that need no CUDA: the error domain, the names
 * of kernels and store precisions, parameter defaults and the keys of the
 * tuning table.  Built into both the CUDA library and the stub, so the two
 * cannot disagree.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-gpu.h"
#include "tomo-gpu-store.h"
#include "tomo-gpu-tune.h"

G_DEFINE_QUARK (tomo-gpu-error-quark, tomo_gpu_error)

static const char *const kernel_names[TOMO_GPU_N_KERNELS] = {
  "auto", "standard", "texture", "alu", "hybrid",
};
static const char *const precision_names[] = { "auto", "float", "half" };
static const char *const plane_kernel_names[] = { "auto", "global", "cached", "rows", "tile",
                                                  "texture", "tilt" };

/* names[i], or "invalid" past the end. */
static const char *
name_at (const char *const *names,
         guint              n,
         guint              i)
{
  return i < n ? names[i] : "invalid";
}

/* *index: where `name` (any case) stands in names[0 … n); an unknown name
 * is an error naming `what` and the names expected. */
static gboolean
name_parse (const char *const *names,
            guint              n,
            const char        *what,
            const char        *name,
            int               *index,
            GError           **error)
{
  g_autoptr(GString) expected = g_string_new (NULL);

  for (guint i = 0; name != NULL && i < n; i++)
    if (g_ascii_strcasecmp (name, names[i]) == 0)
      {
        *index = (int) i;
        return TRUE;
      }
  for (guint i = 0; i < n; i++)
    g_string_append_printf (expected, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ", names[i]);
  g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "Unknown %s “%s” (expected %s)",
               what, name ? name : "(null)", expected->str);
  return FALSE;
}

const char *
tomo_gpu_kernel_to_string (TomoGpuKernel kernel)
{
  return name_at (kernel_names, G_N_ELEMENTS (kernel_names), (guint) kernel);
}

gboolean
tomo_gpu_kernel_from_string (const char    *name,
                             TomoGpuKernel *kernel,
                             GError       **error)
{
  int i;

  g_return_val_if_fail (kernel != NULL, FALSE);
  if (!name_parse (kernel_names, G_N_ELEMENTS (kernel_names), "back-projection kernel", name, &i,
                   error))
    return FALSE;
  *kernel = (TomoGpuKernel) i;
  return TRUE;
}

const char *
tomo_gpu_plane_kernel_to_string (TomoGpuPlaneKernel kernel)
{
  return name_at (plane_kernel_names, G_N_ELEMENTS (plane_kernel_names), (guint) kernel);
}

const char *
tomo_gpu_store_precision_to_string (TomoGpuStorePrecision precision)
{
  return name_at (precision_names, G_N_ELEMENTS (precision_names), (guint) precision);
}

void
tomo_gpu_backproject_params_init (TomoGpuBackprojectParams *params)
{
  g_return_if_fail (params != NULL);
  memset (params, 0, sizeof *params);
  params->interp = 1;
  params->kernel = TOMO_GPU_KERNEL_AUTO;
}

gboolean
tomo_gpu_backproject_params_check (const TomoGpuBackprojectParams *params,
                                   guint                           width,
                                   TomoGpuRoi                     *roi,
                                   GError                        **error)
{
  g_return_val_if_fail (params != NULL, FALSE);

  if (!isfinite (params->center) || fabs (params->center) > 1e6)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Rotation centre %g is not usable", params->center);
      return FALSE;
    }
  if (params->interp != 0 && params->interp != 1)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Unknown interpolation %d (0 nearest, 1 linear)", params->interp);
      return FALSE;
    }
  if ((int) params->kernel < 0 || params->kernel >= TOMO_GPU_N_KERNELS)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Unknown back-projection kernel %d", (int) params->kernel);
      return FALSE;
    }
  if (params->roi_width == 0)
    {
      if (roi != NULL)
        *roi = (TomoGpuRoi) { 0, 0, width, width };
      return TRUE;
    }
  if (params->roi_height == 0
      || (guint64) params->roi_x + params->roi_width > width
      || (guint64) params->roi_y + params->roi_height > width)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "ROI %u,%u,%u,%u does not fit in the %u×%u slice", params->roi_x,
                   params->roi_y, params->roi_width, params->roi_height, width, width);
      return FALSE;
    }
  if (roi != NULL)
    *roi = (TomoGpuRoi) { params->roi_x, params->roi_y, params->roi_width, params->roi_height };
  return TRUE;
}

guint
tomo_gpu_size_class (guint width)
{
  if (width <= 1448)   /* ~ 1024·√2: nearer to 1024 than to 2048 */
    return 1024;
  if (width <= 2896)
    return 2048;
  return 4096;
}

char *
tomo_gpu_tune_key (guint n_slices,
                   int   interp,
                   guint size_class)
{
  return g_strdup_printf ("slices%u-%s-%u", n_slices,
                          interp == 0 ? "nearest" : "linear", size_class);
}
