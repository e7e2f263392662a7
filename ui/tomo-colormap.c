/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-colormap.h"
#include "tomo-types.h"

/* In TomoColormap's order. */
static const char *const colormap_names[TOMO_N_COLORMAPS] = {
  "gray", "inverted", "viridis", "magma", "coolwarm",
};

const char *
tomo_colormap_to_string (TomoColormap colormap)
{
  return _tomo_name_of (colormap_names, TOMO_N_COLORMAPS, colormap);
}

gboolean
tomo_colormap_from_string (const char   *name,
                           TomoColormap *colormap)
{
  guint i;

  if (!_tomo_name_lookup (colormap_names, TOMO_N_COLORMAPS, name, &i))
    return FALSE;
  *colormap = i;
  return TRUE;
}

/* Polynomial fits of matplotlib's viridis and magma (degree 6, max error
 * well below one 8-bit step), so no 256-entry tables live in the source. */
static const double viridis_coeffs[7][3] = {
  { 0.2777273272234177, 0.005407344544966578, 0.3340998053353061 },
  { 0.1050930431085774, 1.404613529898575, 1.384590162594685 },
  { -0.3308618287255563, 0.214847559468213, 0.09509516302823659 },
  { -4.634230498983486, -5.799100973351585, -19.33244095627987 },
  { 6.228269936347081, 14.17993336680509, 56.69055260068105 },
  { 4.776384997670288, -13.74514537774601, -65.35303263337234 },
  { -5.435455855934631, 4.645852612178535, 26.3124352495832 },
};

static const double magma_coeffs[7][3] = {
  { -0.002136485053939582, -0.000749655052795221, -0.005386127855323933 },
  { 0.2516605407371642, 0.6775232436837668, 2.494026599312351 },
  { 8.353717279216625, -3.577719514958484, 0.3144679030132573 },
  { -27.66873308576866, 14.26473078096533, -13.64921318813922 },
  { 52.17613981234068, -27.94360607168351, 12.94416944238394 },
  { -50.76852536473588, 29.04658282127291, 4.23415299384598 },
  { 18.65570506591883, -11.48977351997711, -5.601961508734096 },
};

/* Moreland's cool-warm map, sampled at 0, ¼, ½, ¾, 1. */
static const double coolwarm_points[5][3] = {
  { 59, 76, 192 },
  { 141, 176, 254 },
  { 221, 221, 221 },
  { 244, 154, 123 },
  { 180, 4, 38 },
};

static guint8
to_byte (double v)
{
  return (guint8) CLAMP (lround (v * 255.0), 0, 255);
}

static void
eval_poly (const double coeffs[7][3],
           double       t,
           guint8      *rgba)
{
  for (guint c = 0; c < 3; c++)
    {
      double v = coeffs[6][c];

      for (int k = 5; k >= 0; k--)
        v = coeffs[k][c] + t * v;
      rgba[c] = to_byte (CLAMP (v, 0.0, 1.0));
    }
}

void
tomo_colormap_fill_lut (TomoColormap colormap,
                        guint8       lut[TOMO_COLORMAP_LUT_SIZE * 4])
{
  g_return_if_fail (colormap < TOMO_N_COLORMAPS);

  for (guint i = 0; i < TOMO_COLORMAP_LUT_SIZE; i++)
    {
      double t = i / (double) (TOMO_COLORMAP_LUT_SIZE - 1);
      guint8 *rgba = lut + 4 * i;

      switch (colormap)
        {
        case TOMO_COLORMAP_GRAY:
          rgba[0] = rgba[1] = rgba[2] = i;
          break;

        case TOMO_COLORMAP_INVERTED:
          rgba[0] = rgba[1] = rgba[2] = 255 - i;
          break;

        case TOMO_COLORMAP_VIRIDIS:
          eval_poly (viridis_coeffs, t, rgba);
          break;

        case TOMO_COLORMAP_MAGMA:
          eval_poly (magma_coeffs, t, rgba);
          break;

        case TOMO_COLORMAP_COOLWARM:
          {
            double s = t * 4.0;
            guint k = MIN ((guint) s, 3);
            double f = s - k;

            for (guint c = 0; c < 3; c++)
              rgba[c] = to_byte ((coolwarm_points[k][c] * (1.0 - f)
                                  + coolwarm_points[k + 1][c] * f) / 255.0);
          }
          break;

        case TOMO_N_COLORMAPS:
        default:
          g_assert_not_reached ();
        }
      rgba[3] = 255;
    }
}
