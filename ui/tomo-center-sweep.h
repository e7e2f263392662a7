/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-scan.h"

G_BEGIN_DECLS

/* A window of N candidate centres around the current one, side by side:
 * each reconstructed (whole slice, or one zoomed region at full
 * resolution), with the image-quality curve below (negativity: lower is
 * sharper).  Changing the count, the step or the region recomputes them all;
 * clicking a candidate emits ::center-picked with its centre in the
 * parent window's "center" (its scan's columns).  An offset-axis scan's
 * rows are stitched about the axis: each candidate is reconstructed in the
 * rows stitched about itself, so the sweep counts in detector columns and
 * stays right while the window stitches its rows anew. */
#define TOMO_TYPE_CENTER_SWEEP (tomo_center_sweep_get_type ())
G_DECLARE_FINAL_TYPE (TomoCenterSweep, tomo_center_sweep, TOMO, CENTER_SWEEP, GtkWindow)

TomoCenterSweep *tomo_center_sweep_new        (GtkWindow *parent,
                                               TomoScan  *scan,
                                               guint      row,
                                               double     center);
/* Around a new centre or row of `scan` (recomputes): a live scan that
 * grew since the sweep opened is swept with what has arrived. */
void             tomo_center_sweep_set_target (TomoCenterSweep *self,
                                               TomoScan        *scan,
                                               guint            row,
                                               double           center);
/* Candidates last shown (detector columns, as the panel shows centres)
 * and their scores (n of each); FALSE while computing. */
gboolean         tomo_center_sweep_get_result (TomoCenterSweep *self,
                                               guint           *n,
                                               const double   **centers,
                                               const double   **scores);

G_END_DECLS
