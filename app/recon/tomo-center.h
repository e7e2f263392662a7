/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-types.h"

G_BEGIN_DECLS

/* One sinogram: n_proj rows of `width` detector values, one per angle
 * (radians). */
typedef struct
{
  const float *data;
  guint n_proj;
  guint width;
  const double *angles;
} TomoSinogram;

/* The rows a correlation profile runs over: Pearson's r of a[p][x] with
 * b[p][x + d] over their overlap, for n_pairs rows of `width` and
 * d = d_lo … d_lo + n_shifts − 1; −2 where the overlap is shorter than
 * min_overlap or flat.  The profile is n_pairs × n_shifts. */
typedef struct
{
  const float *a;
  const float *b;
  guint n_pairs;
  guint width;
  int d_lo;
  guint n_shifts;
  guint min_overlap;
} TomoCenterPairs;

/* Finding the rotation axis from the data, and the 360° geometries.
 *
 * Everything here is a pure function over sinograms (n_proj × width floats,
 * angles in radians) in the geometry of DESIGN.md: `center` is a detector
 * column, fractional, TomoPy's meaning.  Degenerate input (one projection,
 * no contrast, nothing finite) is an error, never a number. */

#define TOMO_CENTER_ERROR (tomo_center_error_quark ())
typedef enum
{
  TOMO_CENTER_ERROR_INVALID,    /* bad arguments: sizes, angles, ranges */
  TOMO_CENTER_ERROR_DEGENERATE, /* the data cannot tell: no contrast, too few projections */
  TOMO_CENTER_ERROR_NO_PAIR,    /* no projection ~180° from another (correlation, stitching) */
} TomoCenterError;

GQuark tomo_center_error_quark (void);

typedef enum
{
  TOMO_CENTER_METHOD_AUTO = 0,    /* correlation when a 180° pair exists, else sinogram */
  TOMO_CENTER_METHOD_CORRELATION, /* θ against the mirrored θ+180° */
  TOMO_CENTER_METHOD_SINOGRAM,    /* sinusoid fit of the centre of mass: any range */
  TOMO_CENTER_METHOD_SWEEP,       /* reconstruct candidates, score image quality */
} TomoCenterMethod;

const char *tomo_center_method_to_string   (TomoCenterMethod method);
gboolean    tomo_center_method_from_string (const char       *name,
                                            TomoCenterMethod *method,
                                            GError          **error);

typedef struct
{
  double center;               /* detector column of the axis */
  double uncertainty;          /* px, one standard deviation (an estimate) */
  double tilt_deg;             /* NAN when not measured (one row) */
  double tilt_uncertainty_deg; /* NAN when not measured */
  TomoCenterMethod method;     /* the method that answered (never AUTO) */
  guint n_used;                /* pairs, projections or candidates that went in */
} TomoCenterResult;

/* θ against the mirrored projection at θ+180° (interpolated in angle to
 * match exactly), correlated over every shift with sub-pixel refinement; the
 * median over up to 32 pairs.  Needs a projection within one angular step of
 * θ+180° for some θ. */
gboolean tomo_center_correlation (const TomoSinogram *sino,
                                  TomoCenterResult   *result,
                                  GError            **error);

/* The centre of mass of each projection follows c + a·cos θ + b·sin θ for an
 * object inside the field of view; the fitted c is the axis.  Needs ≥ 3
 * projections spread over at least ~60°; no 180° pair needed. */
gboolean tomo_center_sinogram    (const TomoSinogram *sino,
                                  TomoCenterResult   *result,
                                  GError            **error);

typedef enum
{
  TOMO_CENTER_SCORE_ENTROPY = 0, /* histogram entropy over a fixed value range */
  TOMO_CENTER_SCORE_TV,          /* total variation over the mean absolute value */
  TOMO_CENTER_SCORE_NEGATIVITY,  /* energy of the negative values */
} TomoCenterScore;

/* The candidates of a sweep and what to keep of them: each of `centers`
 * scored by `score` (n_threads for the CPU FBP, 0: all); with a `view`, that
 * region of each candidate's slice in images (n_centers × view->height ×
 * view->width floats). */
typedef struct
{
  const double *centers;
  guint n_centers;
  TomoCenterScore score;
  guint n_threads;
  const TomoRoi *view;
  float *images;
} TomoCenterCandidates;

/* The sweep's sharpness score of a width × height image: the energy (v²)
 * of its negative values over that of all its finite values, inside the
 * disc inscribed in it (centre ((w − 1)/2, (h − 1)/2), radius
 * min (w, h)/2 − 2); 0 where there is none.  Lower is sharper.  The GPU
 * backend computes the same where its slices are. */
double   tomo_center_negativity   (const float *img,
                                   guint        width,
                                   guint        height);

/* Reconstructs the row (CPU FBP, Ram-Lak) at each candidate and scores the
 * disc inside the field of view: lower is better.  `scores` has n_centers. */
gboolean tomo_center_sweep_scores (const TomoSinogram         *sino,
                                   const TomoCenterCandidates *candidates,
                                   double                     *scores,
                                   GError                    **error);

/* A coarse sweep (1 px) of guess ± half_range, then a fine one (0.1 px)
 * around the best, and a parabola through the minimum. */
gboolean tomo_center_sweep       (const TomoSinogram *sino,
                                  double              guess,
                                  double              half_range,
                                  TomoCenterResult   *result,
                                  GError            **error);

/* One row by `method` (AUTO: correlation if a pair exists, else sinogram;
 * SWEEP starts around the AUTO estimate). */
gboolean tomo_center_estimate    (const TomoSinogram *sino,
                                  TomoCenterMethod    method,
                                  TomoCenterResult   *result,
                                  GError            **error);

/* The axis tilt from the centres found on several rows (rows[i] with
 * centers[i] and their uncertainties, NAN entries skipped): a weighted line
 * fit, into result->tilt_deg and result->tilt_uncertainty_deg; degrees,
 * positive when the axis column grows with the row. */
gboolean tomo_center_fit_tilt    (const double     *rows,
                                  const double     *centers,
                                  const double     *uncertainties,
                                  guint             n,
                                  TomoCenterResult *result,
                                  GError          **error);

/* --- 360° scans ---------------------------------------------------------- */

/* TRUE when the angles cover a full turn (span ≥ 360° − 1.5 steps). */
gboolean tomo_angles_is_full_turn (const double *angles,
                                   guint         n_proj);

/* Per-projection weights for an arbitrary set of angles so that FBP with the
 * usual π/(2·n_proj) scale is right: each projection weighted by the angle it
 * stands for, divided by how many times its direction (mod 180°) is measured.
 * 1 for every projection of an even 180° or 360° scan. */
void     tomo_angles_fbp_weights  (const double *angles,
                                   guint         n_proj,
                                   double       *weights);

/* A stitched sinogram: n_proj rows of `width` (g_free), their angles
 * (g_free) and the axis column in them. */
typedef struct
{
  float *data;
  guint n_proj;
  guint width;
  double *angles;
  double center;
} TomoStitched;

void     tomo_stitched_clear      (TomoStitched *stitched);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TomoStitched, tomo_stitched_clear)

/* Offset-axis ("half acquisition") 360° scans: each projection θ of the
 * first half-turn is joined with its opposite θ+180° (mirrored, interpolated
 * in angle) into one row about twice as wide, with a smooth sin² blend over
 * the columns both see; the axis at `center` of the detector. */
gboolean tomo_sinogram_stitch_360 (const TomoSinogram *sino,
                                   double              center,
                                   TomoStitched       *out,
                                   GError            **error);

G_END_DECLS
