/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Rotation axis from the data.
 *
 * Correlation: in parallel beam the projection at θ+180° is the one at θ
 * mirrored about the axis, p(θ+π, c+s) = p(θ, c−s).  With q the partner
 * flipped end to end, q(u) = p(θ+π, W−1−u), that reads p(θ, x) = q(x + d)
 * with d = W−1−2c: the shift that best aligns the two gives the centre, at
 * half the shift's error.  The shift is searched over the whole detector on
 * 4×-binned rows, then at full resolution near the best, then refined by a
 * parabola through the peak of the normalised correlation.
 */
#define G_LOG_DOMAIN "tomo-center"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-center-private.h"
#include "tomo-fbp.h"
#include "tomo-geometry.h"
#include "tomo-median.h"
#include "tomo-types.h"

G_DEFINE_QUARK (tomo-center-error-quark, tomo_center_error)

#define MAX_PAIRS 32

static const char *const method_names[] = { "auto", "correlation", "sinogram", "sweep" };
static const TomoNameTable method_table = {
  "centre method", method_names, G_N_ELEMENTS (method_names), NULL, NULL,
  tomo_center_error_quark, TOMO_CENTER_ERROR_INVALID,
};

const char *
tomo_center_method_to_string (TomoCenterMethod method)
{
  g_return_val_if_fail ((guint) method < G_N_ELEMENTS (method_names), "unknown");
  return method_names[method];
}

TOMO_DEFINE_FROM_STRING (tomo_center_method_from_string, TomoCenterMethod, method_table)

static void
result_init (TomoCenterResult *result,
             TomoCenterMethod  method)
{
  result->center = NAN;
  result->uncertainty = NAN;
  result->tilt_deg = NAN;
  result->tilt_uncertainty_deg = NAN;
  result->method = method;
  result->n_used = 0;
}

/* --- input checks -------------------------------------------------------- */

/* An error when there are too few projections, nothing is finite, or the
 * sinogram has no contrast (every value the same). */
static gboolean
check_contents (const float *sino,
                guint        n_proj,
                guint        width,
                guint        min_proj,
                GError     **error)
{
  gsize n = (gsize) n_proj * width;
  gsize n_finite = 0;
  float lo = INFINITY, hi = -INFINITY;

  if (sino == NULL || width < 8 || n_proj < min_proj)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                   "Cannot find the centre from %u projection%s of %u columns "
                   "(need at least %u projections of 8 columns)",
                   n_proj, n_proj == 1 ? "" : "s", width, min_proj);
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    {
      float v = sino[i];

      if (isfinite (v))
        {
          n_finite++;
          lo = MIN (lo, v);
          hi = MAX (hi, v);
        }
    }
  if (n_finite == 0)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                   "Cannot find the centre: no finite value in the sinogram (%u × %u)",
                   n_proj, width);
      return FALSE;
    }
  if (!((double) hi - lo > 1e-6 * MAX (fabs ((double) hi), 1e-30)))
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                   "Cannot find the centre: the sinogram has no contrast (every value is %g)", lo);
      return FALSE;
    }
  return TRUE;
}

/* Non-finite values count as 0. */
static inline float
finite_or_zero (float v)
{
  return isfinite (v) ? v : 0.0f;
}

/* A copy with non-finite values set to 0, after check_contents(). */
static float *
clean_copy (const float *sino,
            guint        n_proj,
            guint        width,
            guint        min_proj,
            GError     **error)
{
  gsize n = (gsize) n_proj * width;
  float *copy;

  if (!check_contents (sino, n_proj, width, min_proj, error))
    return NULL;
  copy = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    copy[i] = finite_or_zero (sino[i]);
  return copy;
}

static gboolean
check_angles (const double *angles,
              guint         n_proj,
              GError      **error)
{
  if (angles == NULL)
    {
      g_set_error_literal (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID,
                           "Cannot find the centre without the projection angles");
      return FALSE;
    }
  for (guint i = 0; i < n_proj; i++)
    if (!isfinite (angles[i]))
      {
        g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID,
                     "Angle %u is not a number (%g)", i, angles[i]);
        return FALSE;
      }
  return TRUE;
}

/* --- angles -------------------------------------------------------------- */

static double
fold_turn (double a)
{
  double f = fmod (a, 2.0 * G_PI);

  return f < 0 ? f + 2.0 * G_PI : f;
}

/* Median spacing of the sorted angles (their typical step). */
static double
angle_step (const double *angles,
            guint         n_proj)
{
  g_autofree double *s = g_memdup2 (angles, sizeof (double) * n_proj);
  g_autofree double *d = NULL;
  guint n = 0;

  if (n_proj < 2)
    return G_PI;
  qsort (s, n_proj, sizeof (double), _tomo_cmp_double);
  d = g_new (double, n_proj - 1);
  for (guint i = 1; i < n_proj; i++)
    if (s[i] - s[i - 1] > 1e-12)
      d[n++] = s[i] - s[i - 1];
  if (n == 0)
    return G_PI;
  qsort (d, n, sizeof (double), _tomo_cmp_double);
  return d[n / 2];
}

gboolean
tomo_angles_is_full_turn (const double *angles,
                          guint         n_proj)
{
  double lo = INFINITY, hi = -INFINITY;

  g_return_val_if_fail (angles != NULL || n_proj == 0, FALSE);
  if (n_proj < 4)
    return FALSE;
  for (guint i = 0; i < n_proj; i++)
    {
      lo = MIN (lo, angles[i]);
      hi = MAX (hi, angles[i]);
    }
  return hi - lo >= 2.0 * G_PI - 1.5 * angle_step (angles, n_proj);
}

void
tomo_angles_fbp_weights (const double *angles,
                         guint         n_proj,
                         double       *weights)
{
  g_autofree guint *order = NULL;
  g_autofree double *lo = NULL, *hi = NULL;

  g_return_if_fail (angles != NULL && weights != NULL);
  if (n_proj == 0)
    return;
  if (n_proj == 1)
    {
      weights[0] = 1.0;
      return;
    }
  /* The interval each projection stands for: half way to its neighbours in
   * angle; the ends get a full step on their open side. */
  order = g_new (guint, n_proj);
  for (guint i = 0; i < n_proj; i++)
    order[i] = i;
  for (guint i = 1; i < n_proj; i++) /* insertion sort: n_proj is modest */
    for (guint j = i; j > 0 && angles[order[j - 1]] > angles[order[j]]; j--)
      {
        guint t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
  lo = g_new (double, n_proj);
  hi = g_new (double, n_proj);
  for (guint k = 0; k < n_proj; k++)
    {
      double a = angles[order[k]];
      double prev = k > 0 ? angles[order[k - 1]] : NAN;
      double next = k + 1 < n_proj ? angles[order[k + 1]] : NAN;

      if (k == 0)
        prev = a - (next - a);
      if (k + 1 == n_proj)
        next = a + (a - prev);
      lo[order[k]] = 0.5 * (prev + a);
      hi[order[k]] = 0.5 * (a + next);
    }
  /* How often each direction (mod π) is covered: count intervals, moved by
   * whole turns of π, that contain it. */
  for (guint i = 0; i < n_proj; i++)
    {
      double a = angles[i];
      double m = 0.0;

      for (guint k = 0; k < n_proj; k++)
        {
          double shift = floor ((a - lo[k]) / G_PI) * G_PI;

          if (a - shift >= lo[k] && a - shift < hi[k])
            m += 1.0;
        }
      m = MAX (m, 1.0);
      weights[i] = (hi[i] - lo[i]) * n_proj / G_PI / m;
    }
}

/* The nearest search over the projections `indices` (ascending: the first
 * of equally near ones wins, as over all). */
static void
nearest_of (const double *angles,
            const guint  *indices,
            guint         n,
            double        target,
            int          *below,
            double       *d_below,
            int          *above,
            double       *d_above)
{
  *below = *above = -1;
  *d_below = *d_above = INFINITY;
  for (guint k = 0; k < n; k++)
    {
      guint i = indices != NULL ? indices[k] : k;
      /* Angles are compared modulo a full turn. */
      double d = remainder (angles[i] - target, 2.0 * G_PI);

      if (d <= 0 && -d < *d_below)
        *below = i, *d_below = -d;
      if (d >= 0 && d < *d_above)
        *above = i, *d_above = d;
    }
}

void
_tomo_angles_nearest (const double *angles,
                      guint         n_proj,
                      double        target,
                      int          *below,
                      double       *d_below,
                      int          *above,
                      double       *d_above)
{
  nearest_of (angles, NULL, n_proj, target, below, d_below, above, d_above);
}

typedef struct
{
  double key;               /* the angle modulo a turn, in [0, 2π) */
  guint index;
} AngleKey;

struct _TomoAngleIndex
{
  const double *angles;
  guint n;
  AngleKey *keys;           /* by key */
  GArray *near;             /* guint: the candidates of one search */
};

static double
modulo_turn (double a)
{
  double r = fmod (a, 2.0 * G_PI);

  if (r < 0)
    r += 2.0 * G_PI;
  return r < 2.0 * G_PI ? r : 0.0;
}

static int
angle_key_compare (gconstpointer a,
                   gconstpointer b)
{
  const AngleKey *x = a, *y = b;

  return (x->key > y->key) - (x->key < y->key);
}

static int
index_compare (gconstpointer a,
               gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;

  return (x > y) - (x < y);
}

TomoAngleIndex *
_tomo_angle_index_new (const double *angles,
                       guint         n_proj)
{
  TomoAngleIndex *index = g_new0 (TomoAngleIndex, 1);

  index->angles = angles;
  index->n = n_proj;
  index->keys = g_new (AngleKey, MAX (n_proj, 1));
  for (guint i = 0; i < n_proj; i++)
    index->keys[i] = (AngleKey) { modulo_turn (angles[i]), i };
  qsort (index->keys, n_proj, sizeof (AngleKey), angle_key_compare);
  index->near = g_array_new (FALSE, FALSE, sizeof (guint));
  return index;
}

void
_tomo_angle_index_free (TomoAngleIndex *index)
{
  if (index == NULL)
    return;
  g_free (index->keys);
  g_array_unref (index->near);
  g_free (index);
}

/* The first key at or above `key`. */
static guint
lower_bound (const TomoAngleIndex *index,
             double                key)
{
  guint lo = 0, hi = index->n;

  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;

      if (index->keys[mid].key < key)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

void
_tomo_angle_index_nearest (TomoAngleIndex *index,
                           double          target,
                           double          reach,
                           int            *below,
                           double         *d_below,
                           int            *above,
                           double         *d_above)
{
  double t = modulo_turn (target), r = reach + 1e-9;

  if (!(r < G_PI))
    {
      /* Half a turn or more: every projection may be the nearest. */
      nearest_of (index->angles, NULL, index->n, target, below, d_below, above, d_above);
    }
  else
    {
      /* The keys within r of t, the turn wrapped at 0 and 2π (a little more
       * than r: the keys were rounded once more than the distances are). */
      g_array_set_size (index->near, 0);
      for (int m = -1; m <= 1; m++)
        {
          double lo = t - r + m * 2.0 * G_PI, hi = t + r + m * 2.0 * G_PI;

          if (hi < 0 || lo >= 2.0 * G_PI)
            continue;
          for (guint k = lower_bound (index, lo); k < index->n && index->keys[k].key <= hi; k++)
            g_array_append_val (index->near, index->keys[k].index);
        }
      g_array_sort (index->near, index_compare);
      nearest_of (index->angles, (const guint *) index->near->data, index->near->len, target,
                  below, d_below, above, d_above);
    }
  /* Farther than the reach on a side: none there. */
  if (*d_below > reach)
    *below = -1, *d_below = INFINITY;
  if (*d_above > reach)
    *above = -1, *d_above = INFINITY;
}

/* The projection at angle `target` from the two projections bracketing it
 * (linear in angle), or extrapolated from the nearest two within one step.
 * `exclude_near` ± π/2 keeps the search on one side of the turn.  FALSE when
 * nothing is close enough. */
static gboolean
projection_at (const float  *sino,
               guint         n_proj,
               guint         width,
               const double *angles,
               double        step,
               double        target,
               float        *out)
{
  int below, above;
  double d_below, d_above;

  _tomo_angles_nearest (angles, n_proj, target, &below, &d_below, &above, &d_above);
  if (below >= 0 && d_below < 1e-9 * MAX (step, 1e-9))
    above = below, d_above = d_below;
  if (above >= 0 && d_above < 1e-9 * MAX (step, 1e-9))
    below = above, d_below = d_above;
  if (below >= 0 && above >= 0 && below != above && d_below + d_above <= 1.5 * step)
    {
      double t = d_below / (d_below + d_above);
      const float *a = sino + (gsize) below * width, *b = sino + (gsize) above * width;

      for (guint x = 0; x < width; x++)
        out[x] = (float) ((1.0 - t) * finite_or_zero (a[x]) + t * finite_or_zero (b[x]));
      return TRUE;
    }
  if (below >= 0 && below == above)
    {
      const float *a = sino + (gsize) below * width;

      for (guint x = 0; x < width; x++)
        out[x] = finite_or_zero (a[x]);
      return TRUE;
    }
  /* Only one side: extrapolate from the nearest and its neighbour. */
  {
    int near = d_below <= d_above ? below : above;
    double d_near = MIN (d_below, d_above);
    int second = -1;
    double d_second = INFINITY, sign;

    if (near < 0 || d_near > 1.01 * step)
      return FALSE;
    sign = near == below ? -1.0 : 1.0; /* the side the near one lies on */
    for (guint i = 0; i < n_proj; i++)
      {
        double d = remainder (angles[i] - target, 2.0 * G_PI) * sign;

        if ((int) i != near && d > d_near && d < d_second)
          second = i, d_second = d;
      }
    if (second < 0 || d_second - d_near > 1.5 * step)
      return FALSE;
    {
      double t = -d_near / (d_second - d_near); /* < 0: beyond `near` */
      const float *a = sino + (gsize) near * width, *b = sino + (gsize) second * width;

      for (guint x = 0; x < width; x++)
        out[x] = (float) ((1.0 - t) * finite_or_zero (a[x]) + t * finite_or_zero (b[x]));
    }
    return TRUE;
  }
}

/* --- correlation --------------------------------------------------------- */

/* Pearson correlation of a[x] and b[x + d] over their overlap, or −2 where
 * the overlap is shorter than min_overlap. */
static double
ncc_at (const float *a,
        const float *b,
        int          n,
        int          d,
        int          min_overlap)
{
  int x0 = MAX (0, -d), x1 = MIN (n, n - d);
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, m, va, vb;

  if (x1 - x0 < min_overlap)
    return -2.0;
  for (int x = x0; x < x1; x++)
    {
      double u = a[x], v = b[x + d];

      sa += u;
      sb += v;
      saa += u * u;
      sbb += v * v;
      sab += u * v;
    }
  m = x1 - x0;
  va = saa - sa * sa / m;
  vb = sbb - sb * sb / m;
  if (va <= 1e-30 || vb <= 1e-30)
    return -2.0;
  return (sab - sa * sb / m) / sqrt (va * vb);
}

/* The CPU profile: ncc_at for every shift and pair. */
gboolean
_tomo_center_profile_cpu (const TomoCenterPairs *pairs,
                          float                 *out,
                          gpointer               user_data,
                          GError               **error)
{
  const TomoCenterPairs *q = pairs;

  for (guint p = 0; p < q->n_pairs; p++)
    for (guint i = 0; i < q->n_shifts; i++)
      out[(gsize) p * q->n_shifts + i] = (float) ncc_at (q->a + (gsize) p * q->width,
                                                         q->b + (gsize) p * q->width, q->width,
                                                         q->d_lo + (int) i, q->min_overlap);
  return TRUE;
}

/* Best shifts d (a[x] ≈ b[x + d]) of n pairs with sub-pixel precision, NAN
 * where the two have nothing in common: every shift on 4×-binned rows, then
 * full resolution near the best, then a parabola through the peak. */
static gboolean
best_shifts (const float      *a,
             const float      *b,
             guint             n,
             guint             width,
             TomoCenterProfile profile,
             gpointer          user_data,
             double           *shifts,
             GError          **error)
{
  const int bin = width >= 256 ? 4 : 1;
  int nb = width / bin, lo = G_MAXINT, hi = G_MININT;
  guint min_overlap = MAX (8, width / 16), n_coarse = 2 * nb - 1, n_fine;
  g_autofree float *ab = g_new0 (float, (gsize) n * nb), *bb = g_new0 (float, (gsize) n * nb);
  g_autofree float *prof = g_new (float, (gsize) n * n_coarse);
  g_autofree int *best = g_new (int, n);
  TomoCenterPairs coarse, fine;

  for (guint p = 0; p < n; p++)
    for (int i = 0; i < nb * bin; i++)
      {
        ab[(gsize) p * nb + i / bin] += a[(gsize) p * width + i];
        bb[(gsize) p * nb + i / bin] += b[(gsize) p * width + i];
      }
  coarse = (TomoCenterPairs) { ab, bb, n, nb, -nb + 1, n_coarse, MAX (4, min_overlap / bin) };
  if (!profile (&coarse, prof, user_data, error))
    return FALSE;
  for (guint p = 0; p < n; p++)
    {
      const float *v = prof + (gsize) p * n_coarse;
      guint k = 0;

      for (guint i = 1; i < n_coarse; i++)
        if (v[i] > v[k])
          k = i;
      /* Binning shifts content by (bin−1)/2 equally in both: d scales by bin. */
      best[p] = v[k] > -1.5 ? ((int) k - nb + 1) * bin : G_MININT;
      if (best[p] != G_MININT)
        {
          lo = MIN (lo, best[p] - 2 * bin - 1);
          hi = MAX (hi, best[p] + 2 * bin + 1);
        }
    }
  if (lo > hi)
    {
      for (guint p = 0; p < n; p++)
        shifts[p] = NAN;
      return TRUE;
    }
  /* One window for all pairs: they agree but for outliers. */
  lo = MAX (lo, -(int) width + 1);
  hi = MIN (hi, (int) width - 1);
  n_fine = hi - lo + 1;
  g_free (prof);
  prof = g_new (float, (gsize) n * n_fine);
  fine = (TomoCenterPairs) { a, b, n, width, lo, n_fine, min_overlap };
  if (!profile (&fine, prof, user_data, error))
    return FALSE;
  for (guint p = 0; p < n; p++)
    {
      const float *v = prof + (gsize) p * n_fine;
      int k = -1;
      double cm, cp, c0, denom, frac;

      shifts[p] = NAN;
      if (best[p] == G_MININT)
        continue;
      for (int d = MAX (best[p] - 2 * bin, lo + 1); d <= MIN (best[p] + 2 * bin, hi - 1); d++)
        if (k < 0 || v[d - lo] > v[k])
          k = d - lo;
      /* Noise against noise (a row above the sample) peaks low somewhere;
       * that is no answer. */
      if (k < 0 || v[k] < 0.3)
        continue;
      c0 = v[k];
      cm = v[k - 1];
      cp = v[k + 1];
      if (cm < -1.5 || cp < -1.5)
        {
          shifts[p] = lo + k;
          continue;
        }
      denom = cm - 2.0 * c0 + cp;
      frac = denom < 0 ? 0.5 * (cm - cp) / denom : 0.0;
      shifts[p] = lo + k + CLAMP (frac, -0.5, 0.5);
    }
  return TRUE;
}

/* 1.4826 × median absolute deviation: a standard deviation that ignores a
 * few outliers. */
static double
robust_sigma (const double *v,
              guint         n,
              double        median)
{
  g_autofree double *dev = g_new (double, n);

  for (guint i = 0; i < n; i++)
    dev[i] = fabs (v[i] - median);
  return 1.4826 * _tomo_median (dev, n);
}

gboolean
_tomo_center_correlation_with (const TomoSinogram *s,
                               TomoCenterProfile   profile,
                               gpointer            user_data,
                               TomoCenterResult   *result,
                               GError            **error)
{
  const float *sino = s->data;
  const double *angles = s->angles;
  guint n_proj = s->n_proj, width = s->width;
  g_autofree float *pa = NULL, *pb = NULL, *partner = NULL;
  g_autofree double *centers = NULL, *shifts = NULL;
  g_autofree guint *cand = NULL;
  double step;
  guint n_cand = 0, n_pairs = 0, n = 0;

  g_return_val_if_fail (result != NULL, FALSE);
  result_init (result, TOMO_CENTER_METHOD_CORRELATION);
  if (!check_angles (angles, n_proj, error))
    return FALSE;
  /* Checked, not copied: only the pairs' rows are read (non-finite as 0). */
  if (!check_contents (sino, n_proj, width, 2, error))
    return FALSE;
  step = angle_step (angles, n_proj);

  /* Projections whose opposite lies within the scan. */
  cand = g_new (guint, n_proj);
  {
    /* Angles folded into [0, 2π) and sorted: each opposite is a binary
     * search away (thousands of projections, every one checked). */
    g_autofree double *folded = g_new (double, n_proj);

    for (guint i = 0; i < n_proj; i++)
      folded[i] = fold_turn (angles[i]);
    qsort (folded, n_proj, sizeof (double), _tomo_cmp_double);
    for (guint i = 0; i < n_proj; i++)
      {
        double t = fold_turn (angles[i] + G_PI), best;
        guint lo = 0, hi = n_proj;

        while (lo < hi)
          {
            guint mid = (lo + hi) / 2;

            if (folded[mid] < t)
              lo = mid + 1;
            else
              hi = mid;
          }
        /* The neighbours on both sides, across 0/2π at the ends. */
        best = fabs (remainder (folded[lo % n_proj] - t, 2.0 * G_PI));
        best = MIN (best, fabs (remainder (folded[(lo + n_proj - 1) % n_proj] - t, 2.0 * G_PI)));
        if (best <= 1.01 * step)
          cand[n_cand++] = i;
      }
  }
  if (n_cand == 0)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_NO_PAIR,
                   "No projection lies 180° from another (%u projections, step %.3g°): "
                   "use the sinogram or sweep method",
                   n_proj, step * 180.0 / G_PI);
      return FALSE;
    }

  /* Each projection (a) beside its opposite, matched in angle and flipped (b). */
  pa = g_new (float, (gsize) MAX_PAIRS * width);
  pb = g_new (float, (gsize) MAX_PAIRS * width);
  partner = g_new (float, width);
  for (guint k = 0; k < MIN (n_cand, MAX_PAIRS); k++)
    {
      guint i = cand[(gsize) k * n_cand / MIN (n_cand, MAX_PAIRS)];

      if (!projection_at (sino, n_proj, width, angles, step, angles[i] + G_PI, partner))
        continue;
      for (guint x = 0; x < width; x++)
        pa[(gsize) n_pairs * width + x] = finite_or_zero (sino[(gsize) i * width + x]);
      for (guint x = 0; x < width; x++)
        pb[(gsize) n_pairs * width + x] = partner[width - 1 - x];
      n_pairs++;
    }
  shifts = g_new (double, MAX (n_pairs, 1));
  centers = g_new (double, MAX (n_pairs, 1));
  if (n_pairs > 0 && !best_shifts (pa, pb, n_pairs, width, profile, user_data, shifts, error))
    return FALSE;
  for (guint k = 0; k < n_pairs; k++)
    if (isfinite (shifts[k]))
      centers[n++] = (width - 1 - shifts[k]) / 2.0;
  if (n == 0)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                   "The projections 180° apart do not correlate at any shift "
                   "(%u pairs tried)", MIN (n_cand, MAX_PAIRS));
      return FALSE;
    }
  result->n_used = n;
  result->center = _tomo_median (centers, n);
  /* Spread of the pairs when there are enough; otherwise the sub-pixel
   * model's own limit. */
  result->uncertainty = n >= 3 ? MAX (robust_sigma (centers, n, result->center) / sqrt (n), 0.01)
                               : 0.1;
  return TRUE;
}

gboolean
tomo_center_correlation (const TomoSinogram *sino,
                         TomoCenterResult   *result,
                         GError            **error)
{
  return _tomo_center_correlation_with (sino, _tomo_center_profile_cpu, NULL, result, error);
}

/* --- sinogram: centre of mass -------------------------------------------- */

gboolean
tomo_center_sinogram (const TomoSinogram *s,
                      TomoCenterResult   *result,
                      GError            **error)
{
  const float *sino = s->data;
  const double *angles = s->angles;
  guint n_proj = s->n_proj, width = s->width;
  g_autofree float *clean = NULL;
  g_autofree double *com = NULL, *mass = NULL;
  g_autofree gboolean *use = NULL;
  double lo = INFINITY, hi = -INFINITY, max_mass = 0, coef[3] = { 0 }, sigma = 0;
  guint n_use = 0;
  const guint edge = MAX (2, width / 64);

  g_return_val_if_fail (result != NULL, FALSE);
  result_init (result, TOMO_CENTER_METHOD_SINOGRAM);
  if (!check_angles (angles, n_proj, error))
    return FALSE;
  clean = clean_copy (sino, n_proj, width, 3, error);
  if (clean == NULL)
    return FALSE;
  for (guint i = 0; i < n_proj; i++)
    {
      lo = MIN (lo, angles[i]);
      hi = MAX (hi, angles[i]);
    }
  if (hi - lo < G_PI / 3)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                   "The angles span only %.3g°: the centre of mass needs at least 60°",
                   (hi - lo) * 180.0 / G_PI);
      return FALSE;
    }

  com = g_new (double, n_proj);
  mass = g_new (double, n_proj);
  use = g_new0 (gboolean, n_proj);
  for (guint p = 0; p < n_proj; p++)
    {
      const float *row = clean + (gsize) p * width;
      double left = 0, right = 0, base, m = 0, mx = 0;

      /* A background offset would pull the centre of mass to the middle:
       * take the lower of the two edges as the baseline. */
      for (guint x = 0; x < edge; x++)
        {
          left += row[x];
          right += row[width - 1 - x];
        }
      base = MIN (left, right) / edge;
      for (guint x = 0; x < width; x++)
        {
          double v = row[x] - base;

          m += v;
          mx += v * x;
        }
      mass[p] = m;
      com[p] = m != 0 ? mx / m : NAN;
      max_mass = MAX (max_mass, m);
    }
  if (!(max_mass > 0))
    {
      g_set_error_literal (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                           "The projections hold no mass above their background: "
                           "no centre of mass to follow");
      return FALSE;
    }
  for (guint p = 0; p < n_proj; p++)
    use[p] = mass[p] > 0.1 * max_mass && isfinite (com[p]);

  /* Least squares of com = c + a cos θ + b sin θ, then again without the
   * projections more than 3σ off (a bright spot leaving the field, a bad
   * frame). */
  for (int pass = 0; pass < 3; pass++)
    {
      double A[3][3] = { { 0 } }, r[3] = { 0 }, ss = 0;
      double det, inv[3][3];

      n_use = 0;
      for (guint p = 0; p < n_proj; p++)
        {
          double f[3] = { 1.0, cos (angles[p]), sin (angles[p]) };

          if (!use[p])
            continue;
          n_use++;
          for (int i = 0; i < 3; i++)
            {
              r[i] += f[i] * com[p];
              for (int j = 0; j < 3; j++)
                A[i][j] += f[i] * f[j];
            }
        }
      det = A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1])
          - A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0])
          + A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0]);
      if (n_use < 3 || fabs (det) < 1e-9 * pow (n_use, 3))
        {
          g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                       "Too few usable projections (%u) to fit the centre of mass", n_use);
          return FALSE;
        }
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          {
            int i1 = (j + 1) % 3, i2 = (j + 2) % 3, j1 = (i + 1) % 3, j2 = (i + 2) % 3;

            inv[i][j] = (A[i1][j1] * A[i2][j2] - A[i1][j2] * A[i2][j1]) / det;
          }
      for (int i = 0; i < 3; i++)
        coef[i] = inv[i][0] * r[0] + inv[i][1] * r[1] + inv[i][2] * r[2];
      for (guint p = 0; p < n_proj; p++)
        if (use[p])
          {
            double e = com[p] - (coef[0] + coef[1] * cos (angles[p]) + coef[2] * sin (angles[p]));
            ss += e * e;
          }
      sigma = sqrt (ss / MAX (n_use - 3, 1));
      if (pass == 2)
        {
          result->uncertainty = MAX (sigma * sqrt (MAX (inv[0][0], 0.0)), 0.01);
          break;
        }
      for (guint p = 0; p < n_proj; p++)
        if (use[p])
          {
            double e = com[p] - (coef[0] + coef[1] * cos (angles[p]) + coef[2] * sin (angles[p]));
            if (fabs (e) > 3.0 * sigma + 1e-9)
              use[p] = FALSE;
          }
    }
  if (!isfinite (coef[0]) || coef[0] < -0.5 * width || coef[0] > 1.5 * width)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                   "The centre-of-mass fit gives no usable centre (%g)", coef[0]);
      return FALSE;
    }
  result->center = coef[0];
  result->n_used = n_use;
  return TRUE;
}

/* --- sweep --------------------------------------------------------------- */

double
tomo_center_negativity (const float *img,
                        guint        width,
                        guint        height)
{
  double cx = (width - 1) / 2.0, cy = (height - 1) / 2.0, r = 0.5 * MIN (width, height) - 2;
  double neg = 0, all = 0;

  g_return_val_if_fail (img != NULL || width == 0 || height == 0, 0.0);

  if (r < 0)
    return 0.0;
  for (guint y = 0; y < height; y++)
    for (guint x = 0; x < width; x++)
      {
        double dx = x - cx, dy = y - cy, v = img[(gsize) y * width + x];

        if (dx * dx + dy * dy > r * r || !isfinite (v))
          continue;
        if (v < 0)
          neg += v * v;
        all += v * v;
      }
  return all > 0 ? neg / all : 0.0;
}

static double
score_slice (const float    *img,
             guint           w,
             TomoCenterScore score,
             double          lo,
             double          hi)
{
  double c = (w - 1) / 2.0, r2 = (0.5 * w - 2) * (0.5 * w - 2);
  double acc = 0, norm = 0;
  enum { N_BINS = 256 };
  double hist[N_BINS] = { 0 };
  guint n = 0;

  if (score == TOMO_CENTER_SCORE_NEGATIVITY)
    return tomo_center_negativity (img, w, w);

  for (guint y = 1; y + 1 < w; y++)
    for (guint x = 1; x + 1 < w; x++)
      {
        double dx = x - c, dy = y - c, v = img[(gsize) y * w + x];

        if (dx * dx + dy * dy > r2)
          continue;
        n++;
        switch (score)
          {
          case TOMO_CENTER_SCORE_ENTROPY:
            {
              int b = (int) floor ((v - lo) / (hi - lo) * N_BINS);
              hist[CLAMP (b, 0, N_BINS - 1)] += 1.0;
            }
            break;
          case TOMO_CENTER_SCORE_TV:
            acc += fabs (img[(gsize) y * w + x + 1] - v) + fabs (img[(gsize) (y + 1) * w + x] - v);
            norm += fabs (v);
            break;
          case TOMO_CENTER_SCORE_NEGATIVITY:
            g_assert_not_reached ();
          }
      }
  if (score == TOMO_CENTER_SCORE_ENTROPY)
    {
      for (int b = 0; b < N_BINS; b++)
        if (hist[b] > 0)
          {
            double p = hist[b] / n;
            acc -= p * log (p);
          }
      return acc;
    }
  return norm > 0 ? acc / norm : 0.0;
}

gboolean
tomo_center_sweep_scores (const TomoSinogram         *s,
                          const TomoCenterCandidates *sweep,
                          double                     *scores,
                          GError                    **error)
{
  const float *sino = s->data;
  const double *angles = s->angles, *centers = sweep->centers;
  guint n_proj = s->n_proj, width = s->width, n_centers = sweep->n_centers;
  TomoCenterScore score = sweep->score;
  const TomoRoi *view = sweep->view;
  float *images = sweep->images;
  g_autofree float *clean = NULL, *filtered = NULL, *img = NULL;
  g_autoptr(TomoCpuFbp) fbp = NULL;
  TomoRoi roi = { 0, 0, width, width };
  double lo = 0, hi = 0;

  g_return_val_if_fail (scores != NULL && (centers != NULL || n_centers == 0), FALSE);
  g_return_val_if_fail (images == NULL || view != NULL, FALSE);
  if (!check_angles (angles, n_proj, error))
    return FALSE;
  if (view != NULL && (view->width == 0 || view->height == 0 || view->x + view->width > width
                       || view->y + view->height > width))
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID,
                   "Sweep view %u×%u at (%u, %u) is outside the %u×%u slice",
                   view->width, view->height, view->x, view->y, width, width);
      return FALSE;
    }
  clean = clean_copy (sino, n_proj, width, 2, error);
  if (clean == NULL)
    return FALSE;
  for (guint i = 0; i < n_centers; i++)
    if (!isfinite (centers[i]) || centers[i] < -0.5 * width || centers[i] > 1.5 * width)
      {
        g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID,
                     "Candidate centre %g is outside the detector's reach (0…%u)",
                     centers[i], width - 1);
        return FALSE;
      }
  fbp = tomo_cpu_fbp_new (width, n_proj, angles, 0 /* Ram-Lak */, 0 /* zero pad */,
                          sweep->n_threads);
  filtered = g_new (float, (gsize) n_proj * width);
  img = g_new (float, (gsize) width * width);
  tomo_cpu_fbp_filter (fbp, clean, filtered);
  for (guint i = 0; i < n_centers; i++)
    {
      tomo_cpu_fbp_backproject (fbp, filtered, centers[i], 1 /* linear */, &roi, img);
      if (score == TOMO_CENTER_SCORE_ENTROPY && i == 0)
        {
          /* One value range for every candidate, from the first, widened:
           * entropies are comparable only over the same bins. */
          double mn = INFINITY, mx = -INFINITY;

          for (gsize k = 0; k < (gsize) width * width; k++)
            {
              mn = MIN (mn, img[k]);
              mx = MAX (mx, img[k]);
            }
          lo = mn - 0.25 * (mx - mn);
          hi = mx + 0.25 * (mx - mn);
          if (!(hi > lo))
            hi = lo + 1.0;
        }
      scores[i] = score_slice (img, width, score, lo, hi);
      if (images != NULL)
        for (guint y = 0; y < view->height; y++)
          memcpy (images + ((gsize) i * view->height + y) * view->width,
                  img + (gsize) (view->y + y) * width + view->x, sizeof (float) * view->width);
    }
  return TRUE;
}

/* Vertex of the parabola through (x[k−1..k+1], y[k−1..k+1]), equal steps. */
static double
parabola_min (const double *x,
              const double *y,
              guint         k)
{
  double denom = y[k - 1] - 2.0 * y[k] + y[k + 1];
  double step = x[k + 1] - x[k];

  if (!(denom > 0))
    return x[k];
  return x[k] + CLAMP (0.5 * (y[k - 1] - y[k + 1]) / denom, -0.5, 0.5) * step;
}

static guint
argmin (const double *v,
        guint         n)
{
  guint best = 0;

  for (guint i = 1; i < n; i++)
    if (v[i] < v[best])
      best = i;
  return best;
}

static gboolean
cpu_scores (const double *centers,
            guint         n_centers,
            double       *scores,
            gpointer      user_data,
            GError      **error)
{
  TomoCenterCandidates candidates = { centers, n_centers, TOMO_CENTER_SCORE_NEGATIVITY, 0, NULL,
                                      NULL };

  return tomo_center_sweep_scores (user_data, &candidates, scores, error);
}

gboolean
tomo_center_sweep (const TomoSinogram *sino,
                   double              guess,
                   double              half_range,
                   TomoCenterResult   *result,
                   GError            **error)
{
  return _tomo_center_sweep_with (sino->width, guess, half_range, cpu_scores, (gpointer) sino,
                                  result, error);
}

gboolean
_tomo_center_sweep_with (guint               width,
                         double              guess,
                         double              half_range,
                         TomoCenterScoresFunc scores,
                         gpointer            user_data,
                         TomoCenterResult   *result,
                         GError            **error)
{
  guint n_coarse, k;
  g_autofree double *xs = NULL, *ys = NULL;
  double fx[21], fy[21], best;

  g_return_val_if_fail (result != NULL, FALSE);
  result_init (result, TOMO_CENTER_METHOD_SWEEP);
  if (!isfinite (guess) || !isfinite (half_range) || half_range < 1.0 || half_range > width)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID,
                   "Sweep around %g ± %g: need a finite centre and a range of 1…%u px",
                   guess, half_range, width);
      return FALSE;
    }
  n_coarse = 2 * (guint) ceil (half_range) + 1;
  xs = g_new (double, n_coarse);
  ys = g_new (double, n_coarse);
  for (guint i = 0; i < n_coarse; i++)
    xs[i] = round (guess) - ceil (half_range) + i;
  if (!scores (xs, n_coarse, ys, user_data, error))
    return FALSE;
  k = argmin (ys, n_coarse);
  best = xs[k];
  /* Fine: ±1 px at 0.1 px. */
  for (guint i = 0; i < 21; i++)
    fx[i] = best - 1.0 + 0.1 * i;
  if (!scores (fx, 21, fy, user_data, error))
    return FALSE;
  k = argmin (fy, 21);
  if (k == 0 || k == 20)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                   "The sweep's image score has no minimum near %.2f (range %.1f…%.1f)",
                   best, xs[0], xs[n_coarse - 1]);
      return FALSE;
    }
  result->center = parabola_min (fx, fy, k);
  result->uncertainty = 0.1;
  result->n_used = n_coarse + 21;
  return TRUE;
}

/* --- dispatch ------------------------------------------------------------ */

gboolean
tomo_center_estimate (const TomoSinogram *sino,
                      TomoCenterMethod    method,
                      TomoCenterResult   *result,
                      GError            **error)
{
  g_autoptr(GError) local = NULL;
  TomoCenterResult first;

  g_return_val_if_fail (result != NULL, FALSE);
  switch (method)
    {
    case TOMO_CENTER_METHOD_CORRELATION:
      return tomo_center_correlation (sino, result, error);
    case TOMO_CENTER_METHOD_SINOGRAM:
      return tomo_center_sinogram (sino, result, error);
    case TOMO_CENTER_METHOD_SWEEP:
      if (!tomo_center_estimate (sino, TOMO_CENTER_METHOD_AUTO, &first, error))
        return FALSE;
      return tomo_center_sweep (sino, first.center,
                                MAX (3.0, ceil (4.0 * first.uncertainty)), result, error);
    case TOMO_CENTER_METHOD_AUTO:
    default:
      if (tomo_center_correlation (sino, result, &local))
        return TRUE;
      if (!g_error_matches (local, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_NO_PAIR))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return FALSE;
        }
      return tomo_center_sinogram (sino, result, error);
    }
}

/* Siegel's repeated median line through the finite (rows, kept): for each
 * point the median slope to the others, the median of those.  It stands
 * while fewer than half the points are off it — a least-squares line
 * through four rows, one of them a row with no sample in it, does not.
 * With four points or more, those off it by more than 4σ (robust, at
 * least 0.05 px) and by more than 4 × their own uncertainty `sigmas[i]`
 * become NAN: a few rows' spread says little, their own errors more. */
static void
drop_off_line (const double *rows,
               const double *sigmas,
               double       *kept,
               guint         n)
{
  g_autofree double *slopes = g_new (double, MAX (n, 1));
  g_autofree double *medians = g_new (double, MAX (n, 1));
  g_autofree double *res = g_new (double, MAX (n, 1));
  guint m = 0, k;
  double b, a, sigma;

  for (guint i = 0; i < n; i++)
    {
      if (!isfinite (kept[i]) || !isfinite (rows[i]))
        continue;
      k = 0;
      for (guint j = 0; j < n; j++)
        if (j != i && isfinite (kept[j]) && isfinite (rows[j]) && rows[j] != rows[i])
          slopes[k++] = (kept[j] - kept[i]) / (rows[j] - rows[i]);
      if (k > 0)
        medians[m++] = _tomo_median (slopes, k);
    }
  if (m < 4)
    return;
  b = _tomo_median (medians, m);
  m = 0;
  for (guint i = 0; i < n; i++)
    if (isfinite (kept[i]) && isfinite (rows[i]))
      res[m++] = kept[i] - b * rows[i];
  a = _tomo_median (res, m);
  for (guint i = 0; i < m; i++)
    res[i] = fabs (res[i] - a);
  sigma = MAX (1.4826 * _tomo_median (res, m), 0.05);
  for (guint i = 0; i < n; i++)
    {
      double own = sigmas != NULL && isfinite (sigmas[i]) ? sigmas[i] : 0.0;

      if (isfinite (kept[i]) && isfinite (rows[i])
          && fabs (kept[i] - (a + b * rows[i])) > 4.0 * MAX (sigma, own))
        kept[i] = NAN;
    }
}

gboolean
tomo_center_fit_tilt (const double     *rows,
                      const double     *centers,
                      const double     *uncertainties,
                      guint             n,
                      TomoCenterResult *result,
                      GError          **error)
{
  g_autofree double *kept = g_memdup2 (centers, sizeof (double) * MAX (n, 1));
  g_autofree double *res = g_new (double, MAX (n, 1));

  drop_off_line (rows, uncertainties, kept, n);

  /* A weighted line fit through the rows the repeated median kept; a row
   * whose centre is far off the others' line (a row with little of the
   * sample in it) is dropped, and the line fitted again, up to three times. */
  for (int pass = 0;; pass++)
    {
      double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, det, a, b, tilt, sigma;
      guint m = 0, n_drop = 0;

      for (guint i = 0; i < n; i++)
        {
          double s = uncertainties != NULL && isfinite (uncertainties[i])
                     ? MAX (uncertainties[i], 1e-3) : 1.0;
          double w = 1.0 / (s * s);

          if (!isfinite (kept[i]) || !isfinite (rows[i]))
            continue;
          m++;
          sw += w;
          sx += w * rows[i];
          sy += w * kept[i];
          sxx += w * rows[i] * rows[i];
          sxy += w * rows[i] * kept[i];
        }
      det = sw * sxx - sx * sx;
      if (m < 2 || !(det > 1e-12 * sw * sw))
        {
          g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_DEGENERATE,
                       "The tilt needs centres on at least two different rows (%u usable)", m);
          return FALSE;
        }
      b = (sw * sxy - sx * sy) / det; /* px per row */
      a = (sy - b * sx) / sw;
      tilt = atan (b) * 180.0 / G_PI;
      if (pass == 3)
        {
          result->tilt_deg = tilt;
          result->tilt_uncertainty_deg = sqrt (sw / det) * 180.0 / G_PI;
          return TRUE;
        }
      m = 0;
      for (guint i = 0; i < n; i++)
        if (isfinite (kept[i]))
          res[m++] = fabs (kept[i] - (a + tan (tilt * G_PI / 180.0) * rows[i]));
      sigma = MAX (1.4826 * _tomo_median (res, m), 0.05);
      for (guint i = 0; i < n; i++)
        if (isfinite (kept[i])
            && fabs (kept[i] - (a + tan (tilt * G_PI / 180.0) * rows[i])) > 4.0 * sigma)
          {
            kept[i] = NAN;
            n_drop++;
          }
      if (n_drop == 0)
        pass = 2;   /* nothing dropped: this line is the answer */
    }
}

/* --- offset-axis stitching ----------------------------------------------- */

void
tomo_stitched_clear (TomoStitched *stitched)
{
  g_clear_pointer (&stitched->data, g_free);
  g_clear_pointer (&stitched->angles, g_free);
}

gboolean
tomo_sinogram_stitch_360 (const TomoSinogram *sino,
                          double              center,
                          TomoStitched       *out,
                          GError            **error)
{
  g_autofree float *clean = NULL;
  guint n_proj = sino->n_proj, width = sino->width;

  g_return_val_if_fail (out != NULL, FALSE);
  if (!check_angles (sino->angles, n_proj, error))
    return FALSE;
  if (!isfinite (center) || center < 0 || center > width - 1.0)
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_INVALID,
                   "Stitching needs the axis on the detector (centre %g, columns 0…%u)",
                   center, width - 1);
      return FALSE;
    }
  if (!tomo_angles_is_full_turn (sino->angles, n_proj))
    {
      g_set_error (error, TOMO_CENTER_ERROR, TOMO_CENTER_ERROR_NO_PAIR,
                   "Stitching opposite projections needs a 360° scan (%u projections)", n_proj);
      return FALSE;
    }
  clean = clean_copy (sino->data, n_proj, width, 4, error);
  if (clean == NULL)
    return FALSE;
  /* The same rows as the offset geometry of a scan (tomo-geometry.c). */
  return tomo_geometry_stitch (&(TomoSinogram) { clean, n_proj, width, sino->angles }, center,
                               "Sinogram", out, error);
}
