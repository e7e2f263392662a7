/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-geometry"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-center-private.h"
#include "tomo-geometry.h"
#include "tomo-scan-private.h"

G_DEFINE_QUARK (tomo-geometry-error-quark, tomo_geometry_error)

static const char *const kind_names[] = {
  [TOMO_GEOMETRY_AUTO] = "auto",
  [TOMO_GEOMETRY_180] = "180",
  [TOMO_GEOMETRY_360] = "360",
  [TOMO_GEOMETRY_OFFSET] = "offset",
};

const char *
tomo_geometry_kind_to_string (TomoGeometryKind kind)
{
  return _tomo_name_of (kind_names, G_N_ELEMENTS (kind_names), kind);
}

gboolean
tomo_geometry_parse (const char    *text,
                     TomoGeometry  *geometry,
                     GError       **error)
{
  g_autofree char *copy = NULL;
  char *colon;
  gboolean found = FALSE;

  g_return_val_if_fail (geometry != NULL, FALSE);

  memset (geometry, 0, sizeof *geometry);
  if (text == NULL)
    goto bad;
  copy = g_strstrip (g_ascii_strdown (text, -1));
  colon = strchr (copy, ':');
  if (colon != NULL)
    *colon++ = '\0';
  for (guint k = 0; k < G_N_ELEMENTS (kind_names); k++)
    if (strcmp (copy, kind_names[k]) == 0)
      {
        geometry->kind = k;
        found = TRUE;
      }
  if (!found)
    goto bad;
  if (colon == NULL)
    return TRUE;
  if (geometry->kind == TOMO_GEOMETRY_OFFSET && strcmp (colon, "left") == 0)
    geometry->side = TOMO_AXIS_SIDE_LEFT;
  else if (geometry->kind == TOMO_GEOMETRY_OFFSET && strcmp (colon, "right") == 0)
    geometry->side = TOMO_AXIS_SIDE_RIGHT;
  else
    goto bad;
  return TRUE;

bad:
  g_set_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_PARSE,
               "Unknown geometry “%s” (expected auto, 180, 360, offset, offset:left "
               "or offset:right)", text ? text : "(null)");
  return FALSE;
}

static double
angle_span_deg (const double *angles,
                guint         n)
{
  double lo = INFINITY, hi = -INFINITY;

  for (guint i = 0; i < n; i++)
    {
      lo = MIN (lo, angles[i]);
      hi = MAX (hi, angles[i]);
    }
  return (hi - lo) * 180.0 / G_PI;
}

/* The axis from the middle row, for the choices that need one. */
static gboolean
estimate_center (TomoScan *scan,
                 double   *center,
                 GError  **error)
{
  guint w = tomo_scan_get_width (scan), n = tomo_scan_get_n_projections (scan);
  g_autofree float *sino = g_try_new (float, (gsize) n * w);
  TomoSinogram s = { sino, n, w, tomo_scan_get_angles (scan) };
  TomoCenterResult r;

  if (sino == NULL)
    {
      g_set_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_MISMATCH,
                   "%s: out of memory reading a row to find the axis", tomo_scan_get_path (scan));
      return FALSE;
    }
  if (!tomo_scan_read_sinogram (scan, tomo_scan_get_height (scan) / 2, sino, NULL, error)
      || !tomo_center_estimate (&s, TOMO_CENTER_METHOD_AUTO, &r, error))
    return FALSE;
  *center = r.center;
  return TRUE;
}

/* Column layout of the stitched rows: output column u holds detector column
 * u − off of the direct projection and 2c − (u − off) of the mirrored
 * opposite one. */
static void
stitch_layout (double center,
               guint  width,
               int   *off,
               guint *width_out,
               guint *overlap)
{
  double mid = (width - 1) / 2.0;
  int extra;

  *off = center < mid ? (int) lround (width - 1 - 2.0 * center) : 0;
  extra = center > mid ? (int) lround (2.0 * center - (width - 1)) : 0;
  *width_out = width + *off + extra;
  *overlap = width - *off - extra;
}

gboolean
tomo_geometry_resolve (TomoScan           *scan,
                       const TomoGeometry *requested,
                       double              center,
                       TomoGeometryPlan   *plan,
                       GError            **error)
{
  const double *angles;
  guint n, w;
  double mid, span;
  gboolean beyond_half;
  TomoGeometryKind kind;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), FALSE);
  g_return_val_if_fail (requested != NULL && plan != NULL, FALSE);

  memset (plan, 0, sizeof *plan);
  angles = tomo_scan_get_angles (scan);
  n = tomo_scan_get_n_projections (scan);
  w = tomo_scan_get_width (scan);
  mid = (w - 1) / 2.0;
  span = angle_span_deg (angles, n);
  plan->full_turn = tomo_angles_is_full_turn (angles, n);
  plan->center = center;
  plan->recon_center = center;
  plan->width = w;
  plan->n_proj = n;
  kind = requested->kind;

  /* More than a half-turn (by 1.5 mean steps): some directions are seen
   * twice, and the weights make each count once. */
  beyond_half = n > 1 && span > 180.0 + 1.5 * span / (n - 1);
  if ((kind == TOMO_GEOMETRY_OFFSET && !plan->full_turn)
      || (kind == TOMO_GEOMETRY_360 && !beyond_half))
    {
      g_set_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_MISMATCH,
                   "%s: geometry %s needs %s, but its %u angles span %.4g°%s",
                   tomo_scan_get_path (scan), tomo_geometry_kind_to_string (kind),
                   kind == TOMO_GEOMETRY_OFFSET ? "a full turn" : "more than a half-turn",
                   n, span,
                   kind == TOMO_GEOMETRY_OFFSET
                     ? " (an offset axis needs the opposite projection, θ+180°, of each one)"
                     : " (a half-turn sees every direction once: use 180)");
      return FALSE;
    }
  if (kind == TOMO_GEOMETRY_180 || (kind == TOMO_GEOMETRY_AUTO && !beyond_half))
    {
      plan->kind = TOMO_GEOMETRY_180;
      g_snprintf (plan->reason, sizeof plan->reason, "%s",
                  kind == TOMO_GEOMETRY_AUTO ? "the angles cover a half-turn" : "as requested");
      return TRUE;
    }
  if (kind == TOMO_GEOMETRY_AUTO && !plan->full_turn)
    {
      /* Between a half and a full turn: weighted, no offset possible. */
      plan->kind = TOMO_GEOMETRY_360;
      g_snprintf (plan->reason, sizeof plan->reason,
                  "the angles span %.4g°, more than a half-turn", span);
      kind = TOMO_GEOMETRY_360;
    }

  /* A full turn: the offset geometry needs the axis, AUTO too to choose. */
  if (isnan (center) && (kind == TOMO_GEOMETRY_OFFSET || kind == TOMO_GEOMETRY_AUTO))
    {
      g_autoptr(GError) local = NULL;

      if (!estimate_center (scan, &center, &local))
        {
          if (kind == TOMO_GEOMETRY_OFFSET)
            {
              g_set_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_MISMATCH,
                           "%s: the offset geometry needs the rotation axis, and it could not be "
                           "found (%s): pass --center", tomo_scan_get_path (scan), local->message);
              return FALSE;
            }
          center = NAN;
        }
      else
        plan->center_estimated = TRUE;
      plan->center = center;
    }
  if (!isnan (center) && (!isfinite (center) || center < 0 || center > w - 1.0)
      && kind != TOMO_GEOMETRY_360)
    {
      g_set_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_MISMATCH,
                   "%s: the rotation axis (column %g) is not on the detector (columns 0…%u): "
                   "no projection can be stitched with its opposite",
                   tomo_scan_get_path (scan), center, w - 1);
      return FALSE;
    }

  if (kind == TOMO_GEOMETRY_AUTO)
    {
      if (!isnan (center) && fabs (center - mid) > TOMO_GEOMETRY_OFFSET_THRESHOLD * w)
        {
          kind = TOMO_GEOMETRY_OFFSET;
          g_snprintf (plan->reason, sizeof plan->reason,
                      "a full turn with the axis (column %.2f%s) %.0f px from the detector middle",
                      center, plan->center_estimated ? ", estimated" : "", fabs (center - mid));
        }
      else
        {
          kind = TOMO_GEOMETRY_360;
          g_snprintf (plan->reason, sizeof plan->reason,
                      isnan (center) ? "a full turn (axis unknown: taken inside the detector)"
                      : "a full turn with the axis near the detector middle");
        }
    }
  else if (plan->reason[0] == '\0')
    g_snprintf (plan->reason, sizeof plan->reason, "as requested");
  plan->kind = kind;

  if (kind == TOMO_GEOMETRY_360)
    {
      g_autofree double *weights = g_new (double, n);

      tomo_angles_fbp_weights (angles, n, weights);
      for (guint i = 0; i < n; i++)
        if (fabs (weights[i] - 1.0) > 1e-6)
          plan->weighted = TRUE;
      return TRUE;
    }

  /* Offset axis. */
  plan->side = center < mid ? TOMO_AXIS_SIDE_LEFT : TOMO_AXIS_SIDE_RIGHT;
  if (requested->side != TOMO_AXIS_SIDE_ANY && requested->side != plan->side)
    {
      g_set_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_MISMATCH,
                   "%s: geometry offset:%s, but the rotation axis (column %.2f%s) is %s of "
                   "the detector middle (%.1f)", tomo_scan_get_path (scan),
                   requested->side == TOMO_AXIS_SIDE_LEFT ? "left" : "right", center,
                   plan->center_estimated ? ", estimated" : "",
                   plan->side == TOMO_AXIS_SIDE_LEFT ? "left" : "right", mid);
      return FALSE;
    }
  {
    int off;

    stitch_layout (center, w, &off, &plan->width, &plan->overlap);
    plan->recon_center = center + off;
  }
  /* The number of pairs comes from the angles only: count them here. */
  {
    double lo = INFINITY, step = 2.0 * G_PI / n;
    guint n_pairs = 0;

    for (guint i = 0; i < n; i++)
      lo = MIN (lo, angles[i]);
    for (guint i = 0; i < n; i++)
      if (angles[i] - lo < G_PI - 0.5 * step)
        n_pairs++;
    plan->n_proj = n_pairs;
  }
  return TRUE;
}

/* --- the presented rows ---------------------------------------------------- */

/* Offset geometry, per output projection: the direct one and the two the
 * opposite is interpolated from (t_angle of the way from below to above);
 * per output column: the direct column (−1: none), the mirrored one
 * (mirror + t, mirror −1: none) and the direct side's share. */
typedef TomoGeometryStitchProjection StitchProjection;
typedef TomoGeometryStitchColumn StitchColumn;

typedef struct
{
  guint width, n_in, width_out, n_out;
  /* 360: weight of each projection. */
  float *weights;
  StitchProjection *proj;
  StitchColumn *col;
} Transform;

static void
transform_free (gpointer data)
{
  Transform *t = data;

  g_free (t->weights);
  g_free (t->proj);
  g_free (t->col);
  g_free (t);
}

/* One row of a derived scan: weighted (360) or stitched (offset). */
static gboolean
transform_row (gpointer     user_data,
               guint        row,
               const float *in,
               float       *out,
               GError     **error)
{
  Transform *t = user_data;
  guint w = t->width;

  if (t->weights != NULL)
    {
      for (guint p = 0; p < t->n_in; p++)
        for (guint x = 0; x < w; x++)
          out[(gsize) p * w + x] = in[(gsize) p * w + x] * t->weights[p];
      return TRUE;
    }
  for (guint k = 0; k < t->n_out; k++)
    {
      const StitchProjection *pk = &t->proj[k];
      const float *d = in + (gsize) pk->direct * w;
      const float *b = in + (gsize) pk->below * w;
      const float *a = in + (gsize) pk->above * w;
      float ta = pk->t_angle;
      float *dst = out + (gsize) k * t->width_out;

      for (guint u = 0; u < t->width_out; u++)
        {
          const StitchColumn *cu = &t->col[u];
          float vd = 0.0f, vm = 0.0f, wd = cu->w_direct;
          int i0 = cu->mirror;

          if (cu->direct >= 0)
            vd = d[cu->direct];
          if (i0 >= 0)
            {
              guint i1 = MIN ((guint) i0 + 1, w - 1);
              float tc = cu->t;
              float m0 = (1.0f - ta) * b[i0] + ta * a[i0];
              float m1 = (1.0f - ta) * b[i1] + ta * a[i1];

              vm = (1.0f - tc) * m0 + tc * m1;
            }
          dst[u] = wd * vd + (1.0f - wd) * vm;
        }
    }
  return TRUE;
}

/* The two projections the direction `target` lies between (modulo a turn),
 * within 1.5 steps; an exact match is both.  Only those within 1.5 steps
 * can be: the index looks at no others. */
static gboolean
bracket (TomoAngleIndex *angles,
         double          step,
         double          target,
         guint          *below,
         guint          *above,
         float          *t)
{
  int b, a;
  double db, da;

  _tomo_angle_index_nearest (angles, target, 1.5 * step, &b, &db, &a, &da);
  if (b >= 0 && db < 1e-9)
    a = b, da = 0;
  else if (a >= 0 && da < 1e-9)
    b = a, db = 0;
  if (a < 0 || b < 0 || db + da > 1.5 * step)
    return FALSE;
  *below = b;
  *above = a;
  *t = a == b ? 0.0f : (float) (db / (db + da));
  return TRUE;
}

/* The maps of the offset geometry for `n` projections of `w` columns at
 * `angles` about the axis column `c`; `name` for messages. */
static Transform *
stitch_transform_new (const char    *name,
                      const double  *angles,
                      guint          n,
                      guint          w,
                      double         c,
                      double       **angles_out,
                      GError       **error)
{
  double mid = (w - 1) / 2.0, lo = INFINITY, step = 2.0 * G_PI / n;
  double olo = MAX (0.0, 2.0 * c - (w - 1)), ohi = MIN (w - 1.0, 2.0 * c);
  Transform *t = g_new0 (Transform, 1);
  g_autofree double *theta = g_new (double, n);
  g_autoptr(TomoAngleIndex) index = _tomo_angle_index_new (angles, n);
  guint overlap;
  int off;

  t->width = w;
  t->n_in = n;
  stitch_layout (c, w, &off, &t->width_out, &overlap);
  t->proj = g_new (StitchProjection, n);
  for (guint i = 0; i < n; i++)
    lo = MIN (lo, angles[i]);
  for (guint p = 0; p < n; p++)
    {
      if (angles[p] - lo >= G_PI - 0.5 * step)
        continue;
      if (!bracket (index, step, angles[p] + G_PI, &t->proj[t->n_out].below,
                    &t->proj[t->n_out].above, &t->proj[t->n_out].t_angle))
        {
          g_set_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_MISMATCH,
                       "%s: projection %u (%.4g°) has no opposite projection near %.4g°: "
                       "an offset axis needs a full turn without gaps",
                       name, p, angles[p] * 180 / G_PI,
                       (angles[p] + G_PI) * 180 / G_PI);
          transform_free (t);
          return NULL;
        }
      t->proj[t->n_out].direct = p;
      theta[t->n_out++] = angles[p];
    }
  if (t->n_out < 2)
    {
      g_set_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_MISMATCH,
                   "%s: only %u projection%s of the first half-turn: too few to stitch",
                   name, t->n_out, t->n_out == 1 ? "" : "s");
      transform_free (t);
      return NULL;
    }

  t->col = g_new (StitchColumn, t->width_out);
  for (guint u = 0; u < t->width_out; u++)
    {
      int i = (int) u - off;
      double im = 2.0 * c - i;
      gboolean has_d = i >= 0 && i <= (int) w - 1;
      gboolean has_m;

      /* Rounding the layout can leave the outermost column half a pixel
       * beyond the mirrored detector: it takes the edge value. */
      if (im < 0 && im > -0.5)
        im = 0;
      if (im > w - 1.0 && im < w - 0.5)
        im = w - 1.0;
      has_m = im >= 0 && im <= w - 1.0;
      t->col[u].direct = has_d ? i : -1;
      t->col[u].mirror = has_m ? (int) floor (im) : -1;
      t->col[u].t = has_m ? (float) (im - floor (im)) : 0.0f;
      if (has_d && has_m)
        {
          /* sin² ramp: the direct side counts fully where the mirrored one
           * ends, and not at all at its own edge. */
          double s = ohi > olo ? (i - olo) / (ohi - olo) : 0.5;

          if (c > mid)
            s = 1.0 - s;
          s = sin (0.5 * G_PI * CLAMP (s, 0.0, 1.0));
          t->col[u].w_direct = (float) (s * s);
        }
      else
        t->col[u].w_direct = has_d ? 1.0f : 0.0f;
    }
  *angles_out = g_steal_pointer (&theta);
  return t;
}

gboolean
tomo_geometry_stitch (const TomoSinogram *sino,
                      double              center,
                      const char         *name,
                      TomoStitched       *out,
                      GError            **error)
{
  Transform *t;
  guint overlap;
  int off;

  g_return_val_if_fail (sino != NULL && sino->data != NULL && sino->angles != NULL && out != NULL,
                        FALSE);

  t = stitch_transform_new (name, sino->angles, sino->n_proj, sino->width, center, &out->angles,
                            error);
  if (t == NULL)
    return FALSE;
  out->data = g_new (float, (gsize) t->n_out * t->width_out);
  transform_row (t, 0, sino->data, out->data, NULL);
  stitch_layout (center, sino->width, &off, &out->width, &overlap);
  out->n_proj = t->n_out;
  out->center = center + off;
  transform_free (t);
  return TRUE;
}

TomoScan *
tomo_geometry_apply (TomoScan               *scan,
                     const TomoGeometryPlan *plan,
                     GError                **error)
{
  g_return_val_if_fail (TOMO_IS_SCAN (scan), NULL);
  g_return_val_if_fail (plan != NULL, NULL);

  if (plan->kind == TOMO_GEOMETRY_360 && plan->weighted)
    {
      guint n = tomo_scan_get_n_projections (scan);
      g_autofree double *weights = g_new (double, n);
      Transform *t = g_new0 (Transform, 1);

      t->width = t->width_out = tomo_scan_get_width (scan);
      t->n_in = t->n_out = n;
      t->weights = g_new (float, n);
      tomo_angles_fbp_weights (tomo_scan_get_angles (scan), n, weights);
      for (guint i = 0; i < n; i++)
        t->weights[i] = (float) weights[i];
      return _tomo_scan_new_derived (scan, t->width, n, tomo_scan_get_angles (scan),
                                     transform_row, t, transform_free, error);
    }
  if (plan->kind == TOMO_GEOMETRY_OFFSET)
    {
      g_autofree double *theta = NULL;
      Transform *t = stitch_transform_new (tomo_scan_get_path (scan), tomo_scan_get_angles (scan),
                                           tomo_scan_get_n_projections (scan),
                                           tomo_scan_get_width (scan), plan->center, &theta, error);

      if (t == NULL)
        return NULL;
      return _tomo_scan_new_derived (scan, t->width_out, t->n_out, theta,
                                     transform_row, t, transform_free, error);
    }
  return g_object_ref (scan);
}

TomoScan *
tomo_geometry_present (TomoScan           *scan,
                       const TomoGeometry *requested,
                       double              center,
                       TomoGeometryPlan   *plan,
                       GError            **error)
{
  if (!tomo_geometry_resolve (scan, requested, center, plan, error))
    return NULL;
  return tomo_geometry_apply (scan, plan, error);
}

char *
tomo_geometry_plan_describe (const TomoGeometryPlan *plan)
{
  g_return_val_if_fail (plan != NULL, NULL);

  switch (plan->kind)
    {
    case TOMO_GEOMETRY_OFFSET:
      return g_strdup_printf ("offset axis (%s): each projection of the first half-turn "
                              "stitched with its opposite into %u projections × %u columns "
                              "(overlap %u, sin² blend), axis at column %.2f of the stitched "
                              "rows (%.2f on the detector%s) — %s",
                              plan->side == TOMO_AXIS_SIDE_LEFT ? "left" : "right",
                              plan->n_proj, plan->width, plan->overlap, plan->recon_center,
                              plan->center, plan->center_estimated ? ", estimated" : "",
                              plan->reason);
    case TOMO_GEOMETRY_360:
      return g_strdup_printf ("360°: all %u projections, %s — %s", plan->n_proj,
                              plan->weighted ? "each weighted by the angle it covers"
                              : "both halves equally weighted", plan->reason);
    case TOMO_GEOMETRY_180:
    case TOMO_GEOMETRY_AUTO:
    default:
      return g_strdup_printf ("180°: the %u projections as measured — %s", plan->n_proj,
                              plan->reason);
    }
}

/* --- axis tilt ------------------------------------------------------------ */

typedef struct
{
  guint width, n_proj;
  double slope, middle;
} TiltShift;

/* The four taps from column i on, the edge columns repeated beyond the row. */
static inline float
taps_clamped (const float *src,
              int          n,
              int          i,
              const float *w)
{
  float v = 0.0f;

  for (int k = 0; k < 4; k++)
    v += w[k] * src[CLAMP (i + k, 0, n - 1)];
  return v;
}

/* Row `row` read at columns u + tan(tilt) · (row − middle): Catmull–Rom
 * weights of the fraction, the same for every column of the row. */
static void
tilt_taps (const TiltShift     *t,
           guint                row,
           TomoGeometryRowTaps *taps)
{
  double s = t->slope * (row - t->middle), whole = floor (s);
  float x = (float) (s - whole);

  taps->offset = (int) whole - 1;
  taps->weights[0] = ((-x + 2.0f) * x - 1.0f) * x * 0.5f;
  taps->weights[1] = ((3.0f * x - 5.0f) * x * x + 2.0f) * 0.5f;
  taps->weights[2] = ((-3.0f * x + 4.0f) * x + 1.0f) * x * 0.5f;
  taps->weights[3] = (x - 1.0f) * x * x * 0.5f;
}

static gboolean
tilt_row (gpointer     user_data,
          guint        row,
          const float *in,
          float       *out,
          GError     **error)
{
  const TiltShift *t = user_data;
  TomoGeometryRowTaps taps;
  const float *w = taps.weights;
  int n = (int) t->width, shift, lo, hi;

  tilt_taps (t, row, &taps);
  shift = taps.offset;
  /* Columns whose four taps are all inside the row. */
  lo = CLAMP (-shift, 0, n);
  hi = CLAMP (n - 3 - shift, lo, n);

  for (guint p = 0; p < t->n_proj; p++)
    {
      const float *src = in + (gsize) p * t->width;
      float *dst = out + (gsize) p * t->width;

      for (int u = 0; u < lo; u++)
        dst[u] = taps_clamped (src, n, u + shift, w);
      for (int u = lo; u < hi; u++)
        {
          const float *q = src + u + shift;

          dst[u] = w[0] * q[0] + w[1] * q[1] + w[2] * q[2] + w[3] * q[3];
        }
      for (int u = hi; u < n; u++)
        dst[u] = taps_clamped (src, n, u + shift, w);
    }
  return TRUE;
}

TomoScan *
tomo_geometry_correct_tilt (TomoScan  *scan,
                            double     tilt_deg,
                            GError   **error)
{
  TiltShift *t;
  TomoScan *derived;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), NULL);
  g_return_val_if_fail (tomo_scan_get_axis_tilt_correction (scan) == 0.0, NULL);

  if (!isfinite (tilt_deg) || fabs (tilt_deg) > TOMO_GEOMETRY_MAX_TILT)
    {
      g_set_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_TILT,
                   "Axis tilt %g° is out of range (at most ±%g°)", tilt_deg,
                   TOMO_GEOMETRY_MAX_TILT);
      return NULL;
    }
  if (tilt_deg == 0.0)
    return g_object_ref (scan);

  t = g_new (TiltShift, 1);
  t->width = tomo_scan_get_width (scan);
  t->n_proj = tomo_scan_get_n_projections (scan);
  t->slope = tan (tilt_deg * G_PI / 180.0);
  t->middle = (tomo_scan_get_height (scan) - 1) / 2.0;
  derived = _tomo_scan_new_derived (scan, t->width, t->n_proj, tomo_scan_get_angles (scan),
                                    tilt_row, t, g_free, error);
  if (derived != NULL)
    _tomo_scan_set_axis_tilt (derived, tilt_deg);
  return derived;
}

TomoScan *
tomo_geometry_get_row_taps (TomoScan            *scan,
                            guint                row,
                            TomoGeometryRowTaps *taps)
{
  gpointer data = NULL;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), NULL);
  g_return_val_if_fail (taps != NULL, NULL);
  if (_tomo_scan_get_transform (scan, &data) != tilt_row)
    return NULL;
  tilt_taps (data, row, taps);
  return _tomo_scan_get_base (scan);
}

TomoScan *
tomo_geometry_get_row_map (TomoScan           *scan,
                           TomoGeometryRowMap *map)
{
  gpointer data = NULL;
  const Transform *t;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), NULL);
  g_return_val_if_fail (map != NULL, NULL);
  if (_tomo_scan_get_transform (scan, &data) != transform_row)
    return NULL;
  t = data;
  *map = (TomoGeometryRowMap) { t->width, t->n_in, t->width_out, t->n_out, t->weights, t->proj,
                                t->col };
  return _tomo_scan_get_base (scan);
}

TomoScan *
tomo_geometry_get_mapped_source (TomoScan *scan)
{
  TomoGeometryRowMap map;
  TomoScan *base;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), NULL);
  base = tomo_geometry_get_row_map (scan, &map);
  return tomo_geometry_get_raw_source (base != NULL ? base : scan);
}

TomoScan *
tomo_geometry_get_raw_source (TomoScan *scan)
{
  TomoGeometryRowTaps taps;
  TomoScan *source;

  g_return_val_if_fail (TOMO_IS_SCAN (scan), NULL);
  if (_tomo_scan_get_base (scan) == NULL)
    return scan;
  source = tomo_geometry_get_row_taps (scan, 0, &taps);
  return source != NULL && _tomo_scan_get_base (source) == NULL ? source : NULL;
}
