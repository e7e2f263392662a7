/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-center.h"

G_BEGIN_DECLS

/* The normalised cross-correlation profile of `pairs` (TomoCenterPairs)
 * into out (n_pairs × n_shifts).  The CPU loops; the GPU does all pairs in
 * one launch. */
typedef gboolean (*TomoCenterProfile) (const TomoCenterPairs *pairs,
                                       float                 *out,
                                       gpointer               user_data,
                                       GError               **error);

/* The CPU's profile: a TomoCenterProfile (user_data unused). */
gboolean _tomo_center_profile_cpu (const TomoCenterPairs *pairs,
                                   float                 *out,
                                   gpointer               user_data,
                                   GError               **error);

/* tomo_center_correlation() with the profile computed by `profile`. */
gboolean _tomo_center_correlation_with (const TomoSinogram *sino,
                                        TomoCenterProfile   profile,
                                        gpointer            user_data,
                                        TomoCenterResult   *result,
                                        GError            **error);

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

/* The same search by bisection, for many targets over one set of angles:
 * the angles sorted modulo a turn once (the index does not copy them; they
 * must outlive it).  _tomo_angle_index_nearest() answers as
 * _tomo_angles_nearest() does on each side where the nearest projection
 * lies within `reach` of target, and −1 and INFINITY on a side where none
 * does.  One index, one thread at a time. */
typedef struct _TomoAngleIndex TomoAngleIndex;
TomoAngleIndex *_tomo_angle_index_new     (const double   *angles,
                                           guint           n_proj);
void            _tomo_angle_index_free    (TomoAngleIndex *index);
void            _tomo_angle_index_nearest (TomoAngleIndex *index,
                                           double          target,
                                           double          reach,
                                           int            *below,
                                           double         *d_below,
                                           int            *above,
                                           double         *d_above);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoAngleIndex, _tomo_angle_index_free)

/* The sweep's scores of n_centers candidates (lower is sharper). */
typedef gboolean (*TomoCenterScoresFunc) (const double *centers,
                                          guint         n_centers,
                                          double       *scores,
                                          gpointer      user_data,
                                          GError      **error);

/* tomo_center_sweep() with the candidates scored by `scores`. */
gboolean _tomo_center_sweep_with (guint                width,
                                  double               guess,
                                  double               half_range,
                                  TomoCenterScoresFunc scores,
                                  gpointer             user_data,
                                  TomoCenterResult    *result,
                                  GError             **error);

G_END_DECLS
