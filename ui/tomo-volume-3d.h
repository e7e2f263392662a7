/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-colormap.h"

G_BEGIN_DECLS

/* A preview volume drawn by ray casting in GL: a 3D texture (half floats),
 * maximum intensity along each ray or an alpha-composited transfer function,
 * both through the shared window/level and colour map; the three slice
 * planes and the box drawn inside it; dragging turns it. */
#define TOMO_TYPE_VOLUME_3D (tomo_volume_3d_get_type ())
G_DECLARE_FINAL_TYPE (TomoVolume3d, tomo_volume_3d, TOMO, VOLUME_3D, GtkGLArea)

typedef enum
{
  TOMO_VOLUME_3D_MIP = 0,     /* maximum intensity along the ray */
  TOMO_VOLUME_3D_COMPOSITE,   /* front to back: colour and opacity grow from
                               * nothing at the window's minimum to the
                               * colour map's top, nearly opaque, at its
                               * maximum */
} TomoVolume3dMode;

/* What the last frame looks like (read back only while probing: tests,
 * status), over the whole pane: 0–255. */
typedef struct
{
  double mean[3];             /* R, G, B */
  double mean_grey;           /* (R + G + B) / 3 */
  double stddev_grey;
  double chroma;              /* mean of max(R,G,B) − min(R,G,B): 0 for grey */
  guint  n_plane_pixels[3];   /* pixels in the outline colour of the XY, XZ, YZ plane */
  double plane_y[3];          /* their mean height from the top, a fraction of the pane's */
  guint  n_pixels;
} TomoVolume3dStats;

GtkWidget *tomo_volume_3d_new          (void);
/* The next volume, nx × ny × nz voxels (x fastest, z the detector rows
 * from the top), taken; the box's extents (sx, sy, sz) in any unit (its
 * proportions are drawn).  Either half floats (half;
 * tomo_volume_3d_pack_half() makes them, off the UI thread) or a preview
 * left on the device (device and ops: the backend's buffer and its
 * TomoDeviceBufferOps from a TomoPreviewRequest with keep_on_device),
 * written into the texture through CUDA–GL interop when drawn.  Should
 * interop fail there, the volume is downloaded and uploaded once, and
 * tomo_volume_3d_get_interop() says FALSE from then on. */
void       tomo_volume_3d_take         (TomoVolume3d *self,
                                        guint16      *half,
                                        gpointer      device,
                                        gconstpointer ops,
                                        guint         nx,
                                        guint         ny,
                                        guint         nz,
                                        double        sx,
                                        double        sy,
                                        double        sz);
/* TRUE once realized on a GL context that runs on a CUDA device (not on
 * Mesa): a volume on the device can then reach the texture without the
 * host. */
gboolean   tomo_volume_3d_get_interop  (TomoVolume3d *self);
/* "CUDA–GL interop", "GL upload", or NULL before the first volume reached
 * the texture: how the last one did. */
const char *tomo_volume_3d_get_upload_path (TomoVolume3d *self);
/* The half floats the texture was last given from host memory (taken, or
 * downloaded after interop failed), nx × ny × nz of them; NULL while the
 * volume came through interop or before any.  For tests. */
const guint16 *tomo_volume_3d_peek_half (TomoVolume3d *self,
                                         guint        *nx,
                                         guint        *ny,
                                         guint        *nz);
/* IEEE half floats of n floats (round to nearest even; ±inf beyond 65504). */
guint16   *tomo_volume_3d_pack_half    (const float  *data,
                                        gsize         n);
void       tomo_volume_3d_set_window   (TomoVolume3d *self,
                                        double        lo,
                                        double        hi);
void       tomo_volume_3d_set_colormap (TomoVolume3d *self,
                                        TomoColormap  colormap);
void       tomo_volume_3d_set_mode     (TomoVolume3d    *self,
                                        TomoVolume3dMode mode);
TomoVolume3dMode tomo_volume_3d_get_mode (TomoVolume3d *self);
/* Where the three slice planes cut the box, as fractions of its extents:
 * x of the YZ plane, y of the XZ plane, z of the XY plane (0: the first
 * column, row or detector row's edge; 1: the last one's).  Outside [0, 1]:
 * that plane is not drawn. */
void       tomo_volume_3d_set_planes   (TomoVolume3d *self,
                                        double        fx,
                                        double        fy,
                                        double        fz);
/* Turns (radians) about the vertical axis and the horizontal one. */
void       tomo_volume_3d_set_rotation (TomoVolume3d *self,
                                        double        yaw,
                                        double        pitch);
/* While the pane turns (a drag in it sets this): rays cast for a quarter
 * of the pixels and scaled up; a full frame when it ends. */
void       tomo_volume_3d_set_interactive (TomoVolume3d *self,
                                           gboolean      interactive);
/* Frames drawn with a volume. */
guint      tomo_volume_3d_get_n_frames (TomoVolume3d *self);
/* While probing, every frame is read back (one glReadPixels) for
 * tomo_volume_3d_get_stats(); off by default: reading back stalls the GL
 * pipeline. */
void       tomo_volume_3d_set_probe    (TomoVolume3d *self,
                                        gboolean      probe);
/* Of the last probed frame. */
void       tomo_volume_3d_get_stats    (TomoVolume3d      *self,
                                        TomoVolume3dStats *stats);

G_END_DECLS
