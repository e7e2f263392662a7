/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-engine.h"

G_BEGIN_DECLS

#define TOMO_TYPE_SLICE_VIEW (tomo_slice_view_get_type ())
G_DECLARE_FINAL_TYPE (TomoSliceView, tomo_slice_view, TOMO, SLICE_VIEW, GtkGLArea)

GtkWidget  *tomo_slice_view_new             (void);

/* Shows `slice` (kept by reference).  `full_width` is the W of the W×W slice
 * an ROI is cut from, so an ROI is drawn where it lies in the full slice;
 * n_slices planes are laid side by side. */
void        tomo_slice_view_set_slice       (TomoSliceView *self,
                                             TomoSlice     *slice,
                                             guint          full_width);
TomoSlice  *tomo_slice_view_get_slice       (TomoSliceView *self);

const char *tomo_slice_view_get_colormap    (TomoSliceView *self);
void        tomo_slice_view_set_colormap    (TomoSliceView *self,
                                             const char    *colormap);
void        tomo_slice_view_set_window      (TomoSliceView *self,
                                             double         min,
                                             double         max);
double      tomo_slice_view_get_window_min  (TomoSliceView *self);
double      tomo_slice_view_get_window_max  (TomoSliceView *self);
/* Metres per pixel; 0 hides the scale bar. */
void        tomo_slice_view_set_pixel_size  (TomoSliceView *self,
                                             double         pixel_size);

void        tomo_slice_view_zoom_fit        (TomoSliceView *self);
/* TRUE: the image is the slice alone (planes of any height, e.g. vertical
 * planes of W × H) rather than a W × W frame around it (an XY ROI). */
void        tomo_slice_view_set_tight       (TomoSliceView *self,
                                             gboolean       tight);
void        tomo_slice_view_zoom_one        (TomoSliceView *self);

/* "GL upload" or "CUDA–GL interop": how the last slice reached the texture. */
const char *tomo_slice_view_get_upload_path (TomoSliceView *self);
/* Milliseconds from set_slice to the end of the frame that showed it. */
double      tomo_slice_view_get_display_ms  (TomoSliceView *self);

/* Renders the shown slice(s) at one screen pixel per slice pixel with the
 * current colour map and window into an offscreen framebuffer and reads it
 * back: width × height RGBA8, row 0 = slice row 0. */
guint8     *tomo_slice_view_read_pixels     (TomoSliceView *self,
                                             guint         *width,
                                             guint         *height,
                                             GError       **error);
/* The same picture as a GdkTexture (PNG export "as displayed"). */
GdkTexture *tomo_slice_view_render_texture  (TomoSliceView *self,
                                             GError       **error);

/* Reconstructed value at image pixel (x, y) of the laid-out planes. */
gboolean    tomo_slice_view_get_value_at    (TomoSliceView *self,
                                             double         image_x,
                                             double         image_y,
                                             guint         *plane,
                                             guint         *slice_x,
                                             guint         *slice_y,
                                             float         *value);

/* Widget coordinates of image point (ix, iy) at the current zoom and pan. */
void        tomo_slice_view_image_to_widget (TomoSliceView *self,
                                             double         ix,
                                             double         iy,
                                             double        *wx,
                                             double        *wy);

G_END_DECLS
