/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  TOMO_COLORMAP_GRAY = 0,
  TOMO_COLORMAP_INVERTED,
  TOMO_COLORMAP_VIRIDIS,
  TOMO_COLORMAP_MAGMA,
  TOMO_COLORMAP_COOLWARM, /* diverging: blue – light gray – red */
  TOMO_N_COLORMAPS
} TomoColormap;

#define TOMO_COLORMAP_LUT_SIZE 256

const char *tomo_colormap_to_string   (TomoColormap colormap);
gboolean    tomo_colormap_from_string (const char   *name,
                                       TomoColormap *colormap);
/* 256 RGBA8 entries; entry 0 is the colour at the window minimum, 255 at the
 * maximum. */
void        tomo_colormap_fill_lut    (TomoColormap colormap,
                                       guint8       lut[TOMO_COLORMAP_LUT_SIZE * 4]);

G_END_DECLS
