/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-scan.h"

G_BEGIN_DECLS

#define TOMO_TYPE_SINOGRAM_VIEW (tomo_sinogram_view_get_type ())
G_DECLARE_FINAL_TYPE (TomoSinogramView, tomo_sinogram_view, TOMO, SINOGRAM_VIEW, GtkWidget)

/* The sinogram of one detector row (projection angle down, detector column
 * across) with the rotation centre as a line.  A row is read, windowed
 * (0.5–99.5 % percentiles) and coloured on a worker thread, only while the
 * view is mapped; a centre change only moves the line. */
void        tomo_sinogram_view_set_scan   (TomoSinogramView *self,
                                           TomoScan         *scan);
void        tomo_sinogram_view_set_row    (TomoSinogramView *self,
                                           guint             row);
void        tomo_sinogram_view_set_center (TomoSinogramView *self,
                                           double            center);
double      tomo_sinogram_view_get_center (TomoSinogramView *self);
/* The row whose picture is shown, or −1 while none is. */
int         tomo_sinogram_view_get_shown_row (TomoSinogramView *self);

G_END_DECLS
