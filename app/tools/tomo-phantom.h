/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-types.h"

G_BEGIN_DECLS

/* An ellipsoid of constant attenuation; coordinates are fractions of the
 * half-width of the field of view ([-1, 1]), angle in degrees about the
 * rotation (z) axis.  Values add where ellipsoids overlap. */
typedef struct
{
  double value; /* attenuation per pixel */
  double a, b, c;
  double x0, y0, z0;
  double phi_deg;
} TomoEllipsoid;

typedef enum
{
  TOMO_PHANTOM_SHEPP_LOGAN = 0, /* modified Shepp–Logan (Toft), as 3-D ellipsoids */
  TOMO_PHANTOM_DISKS,           /* a few disks of known values: for region means */
  TOMO_PHANTOM_POINTS,          /* small dots: for resolution / centre tests */
} TomoPhantomKind;

const TomoEllipsoid *tomo_phantom_get_ellipsoids (TomoPhantomKind kind,
                                                  guint          *n);

typedef struct
{
  TomoPhantomKind kind;
  guint width;            /* detector columns, also slice size */
  guint height;           /* detector rows */
  guint n_proj;
  double angle_range_deg; /* 180 */
  double center;          /* rotation axis column, e.g. (width−1)/2 + 3.37 */
  double tilt_deg;        /* axis tilt in the detector plane: the axis column
                           * at row r is center + tan(tilt)·(r − (height−1)/2),
                           * so a positive tilt moves it right going down */
  double max_attenuation; /* value scale: attenuation per pixel of value 1.0 */
  double flat_level;      /* counts in the flat field, e.g. 20000 */
  double dark_level;      /* counts in the dark, e.g. 100 */
  guint n_flats, n_darks;
  gboolean noise;         /* Poisson noise on projections, flats, darks */
  guint32 seed;
  guint n_threads;        /* rows computed in parallel; 0 = one per processor */
  guint object_width;     /* pixels across the field of view the object fills
                           * (0: the detector width); up to ~2·width for an
                           * offset-axis 360° scan, whose axis sits near an edge */
  const double *angles_deg; /* n_proj angles of the written scan, in degrees;
                             * NULL: evenly spaced over angle_range_deg */
} TomoPhantomParams;

void     tomo_phantom_params_init      (TomoPhantomParams *params);
/* Sets the size and what follows from it: the axis at (width − 1)/2 + 3.37
 * (off the middle, as a real axis is) and values up to 4/width per pixel
 * (line integrals of a few units, as in real scans). */
void     tomo_phantom_params_set_size  (TomoPhantomParams *params,
                                        guint              width,
                                        guint              height,
                                        guint              n_proj);
/* The rotation axis column at detector row `row` (tilt applied). */
double   tomo_phantom_row_center       (const TomoPhantomParams *params,
                                        guint                    row);

/* Exact line integrals (attenuation per pixel × pixels) of detector row
 * `row`: n_proj × width doubles, each detector pixel integrated over its
 * width (averaged over sub-samples). */
void     tomo_phantom_sinogram         (const TomoPhantomParams *params,
                                        const double            *angles,
                                        guint                    row,
                                        double                  *out);
/* The side of the true slice: object_width, or width when that is 0. */
guint    tomo_phantom_slice_width      (const TomoPhantomParams *params);
/* The true slice at detector row `row`: tomo_phantom_slice_width() squared,
 * centred on the axis, same orientation and pixel grid as the
 * reconstruction. */
void     tomo_phantom_slice            (const TomoPhantomParams *params,
                                        guint                    row,
                                        float                   *out);
/* Raw counts, flats, darks, angles → HDF5 Data Exchange. */
gboolean tomo_phantom_write_dxchange   (const TomoPhantomParams *params,
                                        const char              *path,
                                        GError                 **error);
/* The same, with the seconds it took (wall clock) in *seconds: the
 * benchmarks report it beside their scans. */
gboolean tomo_phantom_write_dxchange_timed (const TomoPhantomParams *params,
                                            const char              *path,
                                            double                  *seconds,
                                            GError                 **error);

G_END_DECLS
