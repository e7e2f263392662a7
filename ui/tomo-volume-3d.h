/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* A preview volume drawn by ray casting in GL: a 3D texture, maximum
 * intensity along each ray, grey levels by the shared window; dragging
 * turns it. */
#define TOMO_TYPE_VOLUME_3D (tomo_volume_3d_get_type ())
G_DECLARE_FINAL_TYPE (TomoVolume3d, tomo_volume_3d, TOMO, VOLUME_3D, GtkGLArea)

GtkWidget *tomo_volume_3d_new          (void);
/* nx × ny × nz floats (x fastest), copied; the box's extents (sx, sy, sz)
 * in any unit (its proportions are drawn). */
void       tomo_volume_3d_set_volume   (TomoVolume3d *self,
                                        const float  *data,
                                        guint         nx,
                                        guint         ny,
                                        guint         nz,
                                        double        sx,
                                        double        sy,
                                        double        sz);
void       tomo_volume_3d_set_window   (TomoVolume3d *self,
                                        double        lo,
                                        double        hi);
/* Turns (radians) about the vertical axis and the horizontal one. */
void       tomo_volume_3d_set_rotation (TomoVolume3d *self,
                                        double        yaw,
                                        double        pitch);
void       tomo_volume_3d_get_rotation (TomoVolume3d *self,
                                        double       *yaw,
                                        double       *pitch);
/* Frames drawn with a volume, and the mean grey level (0–255) of the last
 * one (read back from GL). */
guint      tomo_volume_3d_get_n_frames (TomoVolume3d *self);
double     tomo_volume_3d_get_mean     (TomoVolume3d *self);

G_END_DECLS
