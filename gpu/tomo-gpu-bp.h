/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Internal to gpu/ (and the gpu tests): the back projector.  tomo-gpu.cu owns
 * the context, the cuFFT filtering and the output; tomo-gpu-bp.cu owns the
 * packing of filtered sinograms (float / float2 / float4 / half4), their
 * textures and the back-projection kernels of Chilingaryan et al.
 *
 * Several TomoBp on one device may run on different streams: the kernels that
 * read the per-projection constants from constant memory serialise their
 * uploads and launches per device.
 */
#pragma once

#include <cuda_runtime.h>

#include "tomo-gpu.h"

G_BEGIN_DECLS

typedef struct _TomoBp TomoBp;

TomoBp  *tomo_bp_new          (int device, GError **error);
void     tomo_bp_free         (TomoBp *bp);

/* width ≥ 1, 1 ≤ n_proj ≤ 65000, finite angles (radians). */
gboolean tomo_bp_set_geometry (TomoBp       *bp,
                               guint         width,
                               guint         n_proj,
                               const double *angles,
                               GError      **error);

/* d_filtered: n_slices planes (1, 2 or 4) of n_proj × width floats on the
 * device, already filtered and scaled.  Packs them (float / float2 / half4 as
 * the kernels need) and (re)binds textures; the data is kept until the next
 * call, so repeated tomo_bp_run() calls only back project. */
gboolean tomo_bp_set_sinograms (TomoBp       *bp,
                                const float  *d_filtered,
                                guint         n_slices,
                                cudaStream_t  stream,
                                GError      **error);

/* d_out: n_slices planes of roi_height × roi_width floats (roi resolved:
 * roi_width == 0 means width × width).  *used receives the kernel that ran. */
gboolean tomo_bp_run           (TomoBp                         *bp,
                                const TomoGpuBackprojectParams *params,
                                float                          *d_out,
                                cudaStream_t                    stream,
                                TomoGpuKernel                  *used,
                                GError                        **error);

/* Whether `kernel` implements n_slices × interp (auto always does). */
gboolean tomo_bp_supports      (TomoGpuKernel kernel,
                                guint         n_slices,
                                int           interp);

/* The kernel `auto` picks without a tuning table (measured on the H100). */
TomoGpuKernel tomo_bp_default_kernel (guint n_slices,
                                      int   interp,
                                      guint roi_width,
                                      guint roi_height);

/* Variant of the 4-slice half-precision kernels, for measurements: 0 the
 * ALU cache filled from the float4 bins, 1 from the half bins (the
 * default); larger values are taken as 1.  Initially TOMO_BP_VARIANT from the environment, else the default;
 * set_variant (−1) returns to that. */
int      tomo_bp_get_variant  (void);
void     tomo_bp_set_variant  (int variant);

G_END_DECLS
