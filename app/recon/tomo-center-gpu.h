/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-center.h"
#include "tomo-gpu-center.h"

G_BEGIN_DECLS

/* tomo_center_correlation() with the correlation profiles of every pair
 * computed on the GPU in one launch per pass (`xc` sized for the width and
 * at least 32 pairs). */
gboolean tomo_center_correlation_gpu (TomoGpuXcorr      *xc,
                                      TomoGpuXcorrMethod method,
                                      const float       *sino,
                                      guint              n_proj,
                                      guint              width,
                                      const double      *angles,
                                      TomoCenterResult  *result,
                                      GError           **error);

G_END_DECLS
