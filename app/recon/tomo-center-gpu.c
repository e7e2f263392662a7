/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-center"

#include "config.h"

#include "tomo-center-gpu.h"
#include "tomo-center-private.h"

typedef struct
{
  TomoGpuXcorr *xc;
  TomoGpuXcorrMethod method;
} GpuProfile;

static gboolean
gpu_profile (const float *a,
             const float *b,
             guint        n_pairs,
             guint        width,
             int          d_lo,
             guint        n_shifts,
             guint        min_overlap,
             float       *out,
             gpointer     user_data,
             GError     **error)
{
  GpuProfile *g = user_data;

  return tomo_gpu_xcorr_run (g->xc, g->method, a, b, n_pairs, width, d_lo, n_shifts, min_overlap,
                             out, error);
}

gboolean
tomo_center_correlation_gpu (TomoGpuXcorr      *xc,
                             TomoGpuXcorrMethod method,
                             const float       *sino,
                             guint              n_proj,
                             guint              width,
                             const double      *angles,
                             TomoCenterResult  *result,
                             GError           **error)
{
  GpuProfile g = { xc, method };

  g_return_val_if_fail (xc != NULL, FALSE);
  return _tomo_center_correlation_with (sino, n_proj, width, angles, gpu_profile, &g, result, error);
}
