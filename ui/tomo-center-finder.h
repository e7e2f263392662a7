/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-scan.h"

G_BEGIN_DECLS

/* The rotation axis from the data, for the window's sidebar: when a scan is
 * set, a quick estimate (one row, correlation or centre of mass) runs in the
 * background; the Find centre button runs the full one (the current row,
 * and the tilt from rows across the detector).  A note says what answered,
 * and ::center-found hands the centre to whoever owns the control (with
 * TRUE for the estimate made when the scan was set, FALSE for one asked
 * for: the button or a pick from the sweep).  Before it, ::tilt-found
 * offers the tilt the button measured; a handler that corrects it returns
 * TRUE, and the centre handed over is then the middle row's. */
#define TOMO_TYPE_CENTER_FINDER (tomo_center_finder_get_type ())
G_DECLARE_FINAL_TYPE (TomoCenterFinder, tomo_center_finder, TOMO, CENTER_FINDER, GtkWidget)

void      tomo_center_finder_set_scan      (TomoCenterFinder *self,
                                            TomoScan         *scan);
/* A scan still arriving (a live stream): no estimate when set (too few
 * projections at first), but when tomo_center_finder_scan_completed()
 * says it is whole; Find centre and Sweep… use what has arrived.  A
 * next one on the same detector (more frames, late flats) keeps an open
 * sweep and a find in flight. */
void      tomo_center_finder_set_live_scan (TomoCenterFinder *self,
                                            TomoScan         *scan);
/* The same scan arranged anew (an offset axis stitched about another
 * centre): the button and the sweep use it; no estimate, the note stays. */
void      tomo_center_finder_replace_scan  (TomoCenterFinder *self,
                                            TomoScan         *scan);
/* The live scan set has all its frames: the estimate, as when a file
 * opens ("center-found" with on_open TRUE). */
void      tomo_center_finder_scan_completed (TomoCenterFinder *self);
/* The sweep window is open. */
gboolean  tomo_center_finder_has_sweep     (TomoCenterFinder *self);
TomoScan *tomo_center_finder_get_scan      (TomoCenterFinder *self);

G_END_DECLS
