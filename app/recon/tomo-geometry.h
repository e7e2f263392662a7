/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-center.h"
#include "tomo-scan.h"

G_BEGIN_DECLS

/* The acquisition geometry a scan is reconstructed in.
 *
 *   180     the projections as measured, unweighted (any range);
 *   360     a full turn with the axis inside the detector: every projection,
 *           each weighted by the angle it stands for (tomo_angles_fbp_weights:
 *           1 for an even turn), so both halves count and the values match a
 *           180° scan;
 *   offset  a full turn with the axis near one edge ("half acquisition"):
 *           each projection θ of the first half-turn joined with its mirrored
 *           opposite θ+180° into one row of 2·W − overlap columns, with a sin²
 *           blend over the overlap; the slice covers the doubled field of view.
 *
 * tomo_geometry_apply() presents the scan in that geometry as another
 * TomoScan (preprocessing first, in the base scan), so every reader — the
 * engine, both backends, volume export, the viewer — reconstructs it
 * unchanged: width, projections and angles are the stitched ones. */

#define TOMO_GEOMETRY_ERROR (tomo_geometry_error_quark ())
typedef enum
{
  TOMO_GEOMETRY_ERROR_PARSE,     /* a --geometry value that is not one */
  TOMO_GEOMETRY_ERROR_MISMATCH,  /* the scan cannot be taken in that geometry */
  TOMO_GEOMETRY_ERROR_TILT,      /* an axis tilt that cannot be corrected */
} TomoGeometryError;

GQuark tomo_geometry_error_quark (void);

typedef enum
{
  TOMO_GEOMETRY_AUTO = 0,
  TOMO_GEOMETRY_180,
  TOMO_GEOMETRY_360,
  TOMO_GEOMETRY_OFFSET,
} TomoGeometryKind;

typedef enum
{
  TOMO_AXIS_SIDE_ANY = 0,  /* wherever the centre says */
  TOMO_AXIS_SIDE_LEFT,     /* the axis left of the detector middle */
  TOMO_AXIS_SIDE_RIGHT,
} TomoAxisSide;

typedef struct
{
  TomoGeometryKind kind;
  TomoAxisSide side;       /* offset only */
} TomoGeometry;

/* "auto", "180", "360", "offset", "offset:left", "offset:right". */
gboolean    tomo_geometry_parse           (const char    *text,
                                           TomoGeometry  *geometry,
                                           GError       **error);
const char *tomo_geometry_kind_to_string  (TomoGeometryKind kind);

/* AUTO takes the offset geometry for a full turn whose axis lies farther
 * than this fraction of the width from the detector middle. */
#define TOMO_GEOMETRY_OFFSET_THRESHOLD 0.25

typedef struct
{
  TomoGeometryKind kind;   /* never AUTO */
  TomoAxisSide side;       /* offset: where the axis is */
  gboolean full_turn;      /* the angles cover 360° */
  double center;           /* axis column on the detector (NAN: not needed) */
  gboolean center_estimated; /* found from the data, not given */
  double recon_center;     /* axis column in the presented rows */
  guint width, n_proj;     /* of the presented rows */
  guint overlap;           /* offset: columns both halves see */
  gboolean weighted;       /* 360: weights other than 1 applied */
  char reason[160];        /* why AUTO chose it, or "as requested" */
} TomoGeometryPlan;

/* Decides the geometry of `scan` for `requested` and an axis at `center`
 * (detector column; NAN: unknown — estimated from the middle row when the
 * choice needs it).  A clear error when the scan cannot be taken so: 360°
 * or offset asked of a scan that is no full turn, an axis off the detector,
 * an offset side that contradicts the centre. */
gboolean    tomo_geometry_resolve         (TomoScan           *scan,
                                           const TomoGeometry *requested,
                                           double              center,
                                           TomoGeometryPlan   *plan,
                                           GError            **error);

/* The scan as `plan` presents it (a new reference; the scan itself when
 * nothing changes). */
TomoScan   *tomo_geometry_apply           (TomoScan               *scan,
                                           const TomoGeometryPlan *plan,
                                           GError                **error);

/* resolve() and apply() in one: the scan as it will be reconstructed (a
 * new reference), `plan` says how; plan->recon_center is the axis column in
 * its rows when known (the offset geometry always knows it). */
TomoScan   *tomo_geometry_present         (TomoScan           *scan,
                                           const TomoGeometry *requested,
                                           double              center,
                                           TomoGeometryPlan   *plan,
                                           GError            **error);

/* The offset geometry of one sinogram (finite values) about the axis
 * column `center` on the detector, into `out`; `name` for messages.  What
 * tomo_geometry_apply() does to each row. */
gboolean    tomo_geometry_stitch          (const TomoSinogram *sino,
                                           double              center,
                                           const char         *name,
                                           TomoStitched       *out,
                                           GError            **error);

/* A tilt of the rotation axis in the detector plane (degrees, positive:
 * the axis moves right going down, as find-center reports it) corrected:
 * each detector row is shifted along itself by tan(tilt) · (row − middle
 * row), the middle row being (height − 1) / 2, so that the axis stands on
 * the middle row's column in every row, and one centre serves the whole
 * volume.  A sub-pixel shift by cubic (Catmull–Rom) interpolation, the
 * edge columns repeated; the in-plane turn of the projection that comes
 * with a tilt (a vertical offset of (x − axis) · sin(tilt) rows) is not
 * undone.  Returns a new reference: the scan itself for a tilt of 0, else
 * a derived scan (tomo_scan_get_axis_tilt_correction() says the tilt);
 * apply it before tomo_geometry_present().  |tilt| ≤ 10°. */
#define TOMO_GEOMETRY_MAX_TILT 10.0
TomoScan   *tomo_geometry_correct_tilt    (TomoScan  *scan,
                                           double     tilt_deg,
                                           GError   **error);

/* How tomo_geometry_correct_tilt() reads one row: out[u] = Σk weights[k] ·
 * in[u + offset + k] in every projection, the columns clamped to the row
 * (products, then sums from k = 0 up). */
typedef struct
{
  int   offset;
  float weights[4];
} TomoGeometryRowTaps;

/* When `scan` is tomo_geometry_correct_tilt()'s scan: the scan whose rows
 * it resamples (no new reference) and, for `row`, the taps; NULL (taps
 * untouched) for any other scan.  So that a backend can resample rows it
 * preprocessed itself. */
TomoScan   *tomo_geometry_get_row_taps    (TomoScan            *scan,
                                           guint                row,
                                           TomoGeometryRowTaps *taps);

/* The scan whose raw rows a device path reads for `scan` (no new
 * reference): a scan of a file itself, the file of a tilt correction of
 * one (its rows then resampled with tomo_geometry_get_row_taps() after
 * preprocessing); NULL for other derived scans, whose rows are line
 * integrals made on the host. */
TomoScan   *tomo_geometry_get_raw_source  (TomoScan            *scan);

/* How a stitched (offset axis) or weighted (360°) scan makes its rows from
 * its base's: a 360° row is each projection times its weight; a stitched
 * projection k takes its direct projection's column `direct` and the
 * opposite one interpolated t_angle of the way from `below` to `above`, at
 * columns mirror + t (mirror + 1 clamped to the row), and blends them:
 *   m(i) = (1 − t_angle) · below[i] + t_angle · above[i]
 *   out  = w_direct · direct[direct] + (1 − w_direct) · ((1 − t) · m(mirror) + t · m(mirror + 1))
 * each product rounded, then summed left to right (no fused multiply-add);
 * a direct or mirror of −1 contributes 0. */
typedef struct
{
  guint direct, below, above;
  float t_angle;
} TomoGeometryStitchProjection;

typedef struct
{
  int   direct, mirror;
  float t, w_direct;
} TomoGeometryStitchColumn;

typedef struct
{
  guint width, n_proj;          /* the base's rows */
  guint width_out, n_proj_out;  /* the rows presented */
  const float *weights;         /* 360°: n_proj weights; NULL when stitched */
  const TomoGeometryStitchProjection *proj;  /* stitched: n_proj_out */
  const TomoGeometryStitchColumn     *col;   /* stitched: width_out */
} TomoGeometryRowMap;

/* When `scan` is a stitched or weighted scan of tomo_geometry_apply(): the
 * scan whose rows it maps (no new reference) and the maps, valid while
 * `scan` lives; NULL (map untouched) for any other scan.  So that a backend
 * can map rows it preprocessed itself. */
TomoScan   *tomo_geometry_get_row_map     (TomoScan           *scan,
                                           TomoGeometryRowMap *map);

/* The file whose raw rows a device path reads to make rows of `scan` (no
 * new reference): tomo_geometry_get_raw_source() of the scan or, through a
 * stitched or weighted scan (tomo_geometry_get_row_map()), of its base;
 * NULL when neither has one. */
TomoScan   *tomo_geometry_get_mapped_source (TomoScan *scan);

/* One line: what will be done ("offset axis (left): 1800 projections
 * stitched into 900 × 1843 columns, overlap 253, axis at 921.5"). */
char       *tomo_geometry_plan_describe   (const TomoGeometryPlan *plan);

G_END_DECLS
