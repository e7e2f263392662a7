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

G_END_DECLS
