/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Value statistics of a reconstructed slice on the host: min/max, mean,
 * percentiles from a fine histogram (two passes instead of a sort: O(n) and
 * exact to 1/65536 of the value range, far below what a display window can
 * show) and the display histogram.
 */
#define G_LOG_DOMAIN "tomo-engine"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-engine.h"

enum { FINE = 65536 };

/* The finite values of data counted in FINE bins over [mn, mx] (mx > mn),
 * `scale` bins per unit. */
static guint *
fine_counts (const float *data,
             gsize        n,
             double       mn,
             double       mx,
             double      *scale)
{
  guint *counts = g_new0 (guint, FINE);

  *scale = (FINE - 1) / (mx - mn);
  for (gsize i = 0; i < n; i++)
    if (isfinite (data[i]))
      counts[(guint) ((data[i] - mn) * *scale)]++;
  return counts;
}

/* The values at lo_percent and hi_percent of the `total` values counted by
 * fine_counts(). */
static void
percentiles (const guint *counts,
             guint64      total,
             double       mn,
             double       mx,
             double       scale,
             double       lo_percent,
             double       hi_percent,
             double      *lo,
             double      *hi)
{
  guint64 acc = 0;
  guint64 lo_target = (guint64) floor (total * lo_percent / 100.0);
  guint64 hi_target = (guint64) ceil (total * hi_percent / 100.0);
  gboolean lo_found = FALSE;

  *lo = mn;
  *hi = mx;
  for (guint b = 0; b < FINE; b++)
    {
      acc += counts[b];
      if (!lo_found && acc > lo_target)
        {
          *lo = mn + b / scale;
          lo_found = TRUE;
        }
      if (acc >= hi_target)
        {
          *hi = mn + (b + 1) / scale;
          break;
        }
    }
  *hi = MIN (*hi, mx);
}

gboolean
tomo_percentiles (const float *data,
                  gsize        n,
                  double       lo_percent,
                  double       hi_percent,
                  double      *lo,
                  double      *hi)
{
  g_autofree guint *counts = NULL;
  float mn = INFINITY, mx = -INFINITY;
  guint64 total = 0;
  double scale;

  for (gsize i = 0; data != NULL && i < n; i++)
    if (isfinite (data[i]))
      {
        mn = MIN (mn, data[i]);
        mx = MAX (mx, data[i]);
        total++;
      }
  if (total == 0)
    return FALSE;
  if (mx == mn)
    {
      *lo = mn;
      *hi = mx;
      return TRUE;
    }
  counts = fine_counts (data, n, mn, mx, &scale);
  percentiles (counts, total, mn, mx, scale, CLAMP (lo_percent, 0, 100), CLAMP (hi_percent, 0, 100), lo, hi);
  return TRUE;
}

void
tomo_slice_stats_compute (const float    *data,
                          gsize           n,
                          TomoSliceStats *stats)
{
  g_autofree guint *counts = NULL;
  double mn = INFINITY, mx = -INFINITY, sum = 0, scale, bin_scale, lo, hi;
  guint64 total = 0;

  g_return_if_fail (stats != NULL);

  memset (stats, 0, sizeof *stats);
  for (gsize i = 0; data != NULL && i < n; i++)
    if (isfinite (data[i]))
      {
        mn = MIN (mn, data[i]);
        mx = MAX (mx, data[i]);
        sum += data[i];
        total++;
      }
  if (total == 0)
    return;

  stats->valid = TRUE;
  stats->n_finite = total;
  stats->mean = sum / total;
  stats->min = stats->lo = stats->range_lo = mn;
  stats->max = stats->hi = stats->range_hi = mx;
  if (mx == mn)
    {
      stats->bins[0] = total;
      return;
    }

  counts = fine_counts (data, n, mn, mx, &scale);
  percentiles (counts, total, mn, mx, scale, 0.5, 99.5, &lo, &hi);
  stats->lo = lo;
  stats->hi = hi;
  percentiles (counts, total, mn, mx, scale, 0.05, 99.95, &lo, &hi);
  stats->range_lo = lo;
  stats->range_hi = hi;
  if (stats->range_hi <= stats->range_lo)
    stats->range_hi = stats->range_lo + 1e-6f;

  bin_scale = TOMO_SLICE_HISTOGRAM_BINS / ((double) stats->range_hi - stats->range_lo);
  for (gsize i = 0; i < n; i++)
    if (isfinite (data[i]) && data[i] >= stats->range_lo && data[i] <= stats->range_hi)
      {
        int b = (int) ((data[i] - stats->range_lo) * bin_scale);
        stats->bins[CLAMP (b, 0, TOMO_SLICE_HISTOGRAM_BINS - 1)]++;
      }
}
