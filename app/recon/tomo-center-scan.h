/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-center.h"
#include "tomo-engine.h"
#include "tomo-scan.h"

G_BEGIN_DECLS

/* The centre of a scan at detector row `row` (−1: the middle row) by
 * `method`, and the axis tilt from up to 16 rows spread between 5 % and 95 %
 * of the height (correlation where a 180° pair exists, else the centre of
 * mass; rows without contrast are skipped).  The tilt stays NAN for scans of
 * fewer than 8 rows or when fewer than two rows give a centre. */
gboolean tomo_center_find_in_scan (TomoScan         *scan,
                                   int               row,
                                   TomoCenterMethod  method,
                                   TomoCenterResult *result,
                                   GError          **error);
/* The centre of detector row `row` (< height) alone, by `method`: one
 * sinogram read, no tilt (the estimate made when a scan opens). */
gboolean tomo_center_estimate_row (TomoScan         *scan,
                                   guint             row,
                                   TomoCenterMethod  method,
                                   TomoCenterResult *result,
                                   GError          **error);
/* The same; with an engine (its scan this one), the SWEEP method's
 * candidates are reconstructed on the engine's backend. */
gboolean tomo_center_find_in_scan_with (TomoScan         *scan,
                                        int               row,
                                        TomoCenterMethod  method,
                                        TomoEngine       *engine,
                                        TomoCenterResult *result,
                                        GError          **error);

G_END_DECLS
