/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-slice-view.h"
#include "tomo-volume-3d.h"
#include "tomo-window.h"

G_BEGIN_DECLS

/* The three-view layout: XY, XZ and YZ planes of the scan in the window,
 * back projected from a volume-resident store of the filtered rows (GPU, or
 * host memory on the CPU backend).  A click in one pane moves the other two
 * planes through that point; the centre, filter and interpolation follow
 * the window's, window/level and colour map are shared with it.  A fourth
 * pane shows an oblique plane through the point (azimuth, tilt). */
#define TOMO_TYPE_VOLUME_VIEW (tomo_volume_view_get_type ())
G_DECLARE_FINAL_TYPE (TomoVolumeView, tomo_volume_view, TOMO, VOLUME_VIEW, GtkWidget)

enum
{
  TOMO_VOLUME_VIEW_XY = 0,
  TOMO_VOLUME_VIEW_XZ,
  TOMO_VOLUME_VIEW_YZ,
  TOMO_VOLUME_VIEW_OBLIQUE,
};

/* Puts a stack in the single slice view's place, with the slice view and a
 * TomoVolumeView as its pages, and adds the action win-volume.three-views
 * (key V) that switches between them.  Returns the volume view. */
TomoVolumeView *tomo_volume_view_install      (TomoWindow    *window);

TomoSliceView  *tomo_volume_view_get_pane     (TomoVolumeView *self,
                                               guint           pane);
/* The point the three planes go through: slice column, slice row, detector row. */
void            tomo_volume_view_get_position (TomoVolumeView *self,
                                               double         *ix,
                                               double         *iy,
                                               double         *z);
/* Moves the point (as a click would) and recomputes the planes. */
void            tomo_volume_view_set_position (TomoVolumeView *self,
                                               double          ix,
                                               double          iy,
                                               double          z);
/* The oblique pane's plane: turned by azimuth about the vertical axis,
 * tilted out of the vertical, through the point (as its spin buttons). */
void            tomo_volume_view_set_oblique  (TomoVolumeView *self,
                                               double          azimuth_deg,
                                               double          tilt_deg);
/* A click at image coordinates (x, y) of a pane. */
void            tomo_volume_view_click        (TomoVolumeView *self,
                                               guint           pane,
                                               double          x,
                                               double          y);
/* "GPU store, half, …" or the error that keeps the views empty. */
/* Vertical planes sampled `factor` times per detector row (0: chosen from
 * the scan's shape so they fill a pane; 1: true aspect); the factor in use.
 * Pane rows of XZ, YZ and oblique are z · factor (click's y likewise). */
void            tomo_volume_view_set_vertical_exaggeration (TomoVolumeView *self,
                                                            guint           factor);
guint           tomo_volume_view_get_vertical_exaggeration (TomoVolumeView *self);
const char     *tomo_volume_view_get_status   (TomoVolumeView *self);
/* The 3D pane (the preview volume). */
TomoVolume3d   *tomo_volume_view_get_3d       (TomoVolumeView *self);
/* The 3D pane's rendering (as its Render drop-down). */
void            tomo_volume_view_set_render   (TomoVolumeView  *self,
                                               TomoVolume3dMode mode);
/* The preview volume's binned pixels a side and levels over the rows (at
 * most the scan's own; 64, 128 or 256 in the Size drop-down); a new size
 * remakes it. */
void            tomo_volume_view_set_preview_size (TomoVolumeView *self,
                                                   guint           size);
/* The 3D pane's title and its tooltip (the path the preview took, why it
 * did not stay on the device). */
void            tomo_volume_view_get_3d_title (TomoVolumeView *self,
                                               const char    **title,
                                               const char    **tooltip);
/* Planes computed so far (each completed update of all three counts 1). */
guint           tomo_volume_view_get_n_updates (TomoVolumeView *self);
/* Stores freed on a worker (a new scan or filter), by every view so far. */
guint           tomo_volume_view_get_n_stores_freed (void);

G_END_DECLS
