/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-types.h"

G_BEGIN_DECLS

/* Planes through the reconstructed volume, back projected straight from the
 * filtered sinograms of a range of detector rows — the volume is never
 * reconstructed.
 *
 * Volume coordinates are those of the XY slices: (ix, iy) the slice pixel
 * indices (pixel (ix, iy) at x = ix − (W−1)/2, y = iy − (W−1)/2, see
 * tomo-types.h) and z the detector row.  A plane is a grid of width × height
 * samples: sample (i, j) lies at
 *
 *   centre + (i − (width−1)/2)·u + (j − (height−1)/2)·v,
 *
 * so u and v carry both the direction and the pixel spacing.  Between rows
 * the value is interpolated linearly; samples outside the rows held, or
 * outside the slice's W × W square in x or y, are 0. */
typedef struct
{
  double centre[3]; /* (ix, iy, z) of the plane's middle */
  double u[3];      /* step from one sample to the next along a plane row */
  double v[3];      /* step from one plane row to the next */
  guint width, height;
} TomoPlane;

/* XZ at slice row iy: columns ix = x0 … x0+width−1, rows z = z0 … z0+height−1.
 * Sample (i, j) equals pixel (x0 + i, iy) of the XY slice of row z0 + j. */
void     tomo_plane_init_xz      (TomoPlane *plane,
                                  double     iy,
                                  guint      x0,
                                  guint      width,
                                  guint      z0,
                                  guint      height);
/* YZ at slice column ix: sample (i, j) equals pixel (ix, y0 + i) of the XY
 * slice of row z0 + j. */
void     tomo_plane_init_yz      (TomoPlane *plane,
                                  double     ix,
                                  guint      y0,
                                  guint      width,
                                  guint      z0,
                                  guint      height);
/* A vertical plane turned by `azimuth_deg` about the z axis and tilted by
 * `tilt_deg` out of the vertical (its rows stay horizontal): 0°, 0° runs
 * along x like XZ, 90°, 0° along y like YZ; `spacing` in slice pixels. */
void     tomo_plane_init_oblique (TomoPlane    *plane,
                                  const double  centre[3],
                                  double        azimuth_deg,
                                  double        tilt_deg,
                                  guint         width,
                                  guint         height,
                                  double        spacing);
/* TRUE when every sample has the same z along a plane row and the rows are
 * whole detector rows apart: the vertical planes the fast kernels take. */
gboolean tomo_plane_is_vertical  (const TomoPlane *plane);
/* Checks sizes (≥ 1, ≤ 32768 on a side) and that every number is finite. */
gboolean tomo_plane_validate     (const TomoPlane *plane,
                                  GError         **error);

/* Filtered sinograms of detector rows [row_start, row_start + n_rows):
 * n_rows × n_proj × width floats, FBP scale applied (tomo_cpu_fbp_filter). */
typedef struct
{
  guint width, n_proj;
  const double *angles; /* radians, n_proj */
  guint row_start, n_rows;
  const float *filtered;
} TomoPlaneSource;

/* The CPU reference: plane->width × plane->height floats into out, row-major,
 * accumulated in double, one sample at a time.  interp is the interpolation
 * along the detector row (as for XY); between rows it is always linear.
 * n_threads 0 = all cores. */
void     tomo_plane_backproject_reference (const TomoPlaneSource *source,
                                           double                 center,
                                           TomoInterp             interp,
                                           const TomoPlane       *plane,
                                           guint                  n_threads,
                                           float                 *out);
/* The same, fast: planes whose rows are horizontal (u_z = 0 — XY, XZ, YZ
 * and tomo_plane_init_oblique's) in single precision with the detector
 * position stepped along each plane row and no bounds tests in the inner
 * loop; other planes take the reference path. */
void     tomo_plane_backproject  (const TomoPlaneSource *source,
                                  double                 center,
                                  TomoInterp             interp,
                                  const TomoPlane       *plane,
                                  guint                  n_threads,
                                  float                 *out);

G_END_DECLS
