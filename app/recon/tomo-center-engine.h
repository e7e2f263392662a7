/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-center.h"
#include "tomo-engine.h"

G_BEGIN_DECLS

/* tomo_center_sweep() with the candidates of detector row `row` of the
 * engine's scan reconstructed by the engine (its backend; the GPU packs
 * whole-pixel-spaced candidates 4 to a launch): the engine's preprocessing,
 * Ram-Lak filter, zero padding and linear interpolation, whole slice, each
 * scored by its negativity as tomo_center_sweep() does. */
gboolean tomo_center_sweep_engine (TomoEngine       *engine,
                                   guint             row,
                                   double            guess,
                                   double            half_range,
                                   TomoCenterResult *result,
                                   GError          **error);

/* The width of the narrowest of the slices an offset-axis scan's
 * candidates are stitched into (TOMO_GEOMETRY_OFFSET about each, as
 * `reconstruct --geometry offset --center` stitches it; no row is read):
 * the widest view that shows the same part of the sample in every one. */
gboolean tomo_center_stitched_width (TomoScan     *base,
                                     const double *centers,
                                     guint         n_centers,
                                     guint        *narrowest,
                                     GError      **error);

/* The candidates of an offset-axis scan on `engine`: detector row `row` of
 * `base` stitched about each candidate in turn and reconstructed at the
 * axis column of its stitched row with the Ram-Lak filter, zero padding
 * and linear interpolation, each whole slice scored by its negativity
 * into `scores`, as tomo_center_sweep_scores() scores one.  The slices
 * differ in width by twice the candidates' distance and all are centred on
 * the axis: of each, the middle size × size (at most
 * tomo_center_stitched_width()) goes into `images` (n_centers × size²,
 * one after another; may be NULL).  The engine's scan is replaced by the
 * last stitched one.  On the GPU the rows are stitched on the device from
 * the file's raw row, read once. */
gboolean tomo_center_sweep_stitched (TomoEngine   *engine,
                                     TomoScan     *base,
                                     guint         row,
                                     const double *centers,
                                     guint         n_centers,
                                     guint         size,
                                     float        *images,
                                     double       *scores,
                                     GCancellable *cancellable,
                                     GError      **error);

G_END_DECLS
