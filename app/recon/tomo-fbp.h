/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-types.h"

G_BEGIN_DECLS

/* CPU reference filtered back projection.
 *
 * A TomoCpuFbp holds the FFTW plans (cached for its width) and the
 * per-projection sin/cos; it is reused for every row of a scan.  Filtering and
 * back projection are separate so the viewer can re-run only the back
 * projection when the centre or interpolation changes. */
typedef struct _TomoCpuFbp TomoCpuFbp;

TomoCpuFbp *tomo_cpu_fbp_new              (guint          width,
                                           guint          n_proj,
                                           const double  *angles,
                                           TomoFilterType filter,
                                           TomoPadMode    pad,
                                           guint          n_threads);
void        tomo_cpu_fbp_free             (TomoCpuFbp *fbp);
guint       tomo_cpu_fbp_get_n_threads    (TomoCpuFbp *fbp);

/* sino, filtered: n_proj × width.  filtered already carries the FBP scale. */
void        tomo_cpu_fbp_filter           (TomoCpuFbp  *fbp,
                                           const float *sino,
                                           float       *filtered);
/* out: roi->width × roi->height floats (roi resolved, not NULL). */
void        tomo_cpu_fbp_backproject      (TomoCpuFbp    *fbp,
                                           const float   *filtered,
                                           double         center,
                                           TomoInterp     interp,
                                           const TomoRoi *roi,
                                           float         *out);

/* Double-precision path: the reference the GPU kernels are checked against. */
void        tomo_cpu_fbp_filter_double    (TomoCpuFbp  *fbp,
                                           const float *sino,
                                           double      *filtered);
void        tomo_cpu_fbp_backproject_double (TomoCpuFbp    *fbp,
                                             const double  *filtered,
                                             double         center,
                                             TomoInterp     interp,
                                             const TomoRoi *roi,
                                             double        *out);

/* Convenience: filter + back project one sinogram with `params`. */
void        tomo_cpu_fbp_reconstruct      (TomoCpuFbp            *fbp,
                                           const float           *sino,
                                           const TomoReconParams *params,
                                           float                 *out);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoCpuFbp, tomo_cpu_fbp_free)

G_END_DECLS
