/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-center.h"

G_BEGIN_DECLS

/* Normalised cross-correlation of a[p][x] with b[p][x + d] over their
 * overlap, for n_pairs rows of `width` and d = d_lo … d_lo + n_shifts − 1;
 * −2 where the overlap is shorter than min_overlap or flat.  out is
 * n_pairs × n_shifts.  The CPU loops; the GPU does all pairs in one launch. */
typedef gboolean (*TomoCenterProfile) (const float *a,
                                       const float *b,
                                       guint        n_pairs,
                                       guint        width,
                                       int          d_lo,
                                       guint        n_shifts,
                                       guint        min_overlap,
                                       float       *out,
                                       gpointer     user_data,
                                       GError     **error);

/* The CPU's profile: a TomoCenterProfile (user_data unused). */
gboolean _tomo_center_profile_cpu (const float *a,
                                   const float *b,
                                   guint        n_pairs,
                                   guint        width,
                                   int          d_lo,
                                   guint        n_shifts,
                                   guint        min_overlap,
                                   float       *out,
                                   gpointer     user_data,
                                   GError     **error);

/* tomo_center_correlation() with the profile computed by `profile`. */
gboolean _tomo_center_correlation_with (const float      *sino,
                                        guint             n_proj,
                                        guint             width,
                                        const double     *angles,
                                        TomoCenterProfile profile,
                                        gpointer          user_data,
                                        TomoCenterResult *result,
                                        GError          **error);

/* The projections nearest the direction `target` (radians, modulo a full
 * turn) at or below it and at or above it, with their distances; −1 and
 * INFINITY where there is none. */
void     _tomo_angles_nearest (const double *angles,
                               guint         n_proj,
                               double        target,
                               int          *below,
                               double       *d_below,
                               int          *above,
                               double       *d_above);

G_END_DECLS
