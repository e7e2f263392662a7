/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-preprocess"

#include "config.h"

#include <math.h>

#include "tomo-preprocess.h"

/* Small enough not to disturb real data (counts, or normalised values
 * ≥ 1e-4), large enough that −log stays finite: −log(1e-6) ≈ 13.8. */
#define TOMO_TINY 1e-6

/* Attenuation line integrals of real samples are below a few hundred; a
 * larger value is corrupt data, and summed over projections in float it
 * would turn the slice into Inf and NaN.  Replaced and counted like NaN. */
#define TOMO_MAX_LINE_INTEGRAL 1e6

void
tomo_preprocess_row (const float         *raw,
                     guint                n_proj,
                     guint                width,
                     const TomoFlatField *ff,
                     float               *out,
                     TomoPreprocessStats *stats)
{
  const float *flat = ff->flat, *dark = ff->dark;
  gboolean apply_log = ff->apply_log;
  TomoPreprocessStats local = { 0, };
  g_autofree double *denom = NULL;
  g_autofree double *offset = NULL;

  g_return_if_fail (raw != NULL || n_proj == 0 || width == 0);
  g_return_if_fail (out != NULL || n_proj == 0 || width == 0);

  /* The denominator is the same for every projection: compute it once, but
   * count each value that needed it clamped, so the counts mean "values". */
  denom = g_new (double, MAX (width, 1));
  offset = g_new (double, MAX (width, 1));
  for (guint x = 0; x < width; x++)
    {
      double d = dark != NULL && isfinite (dark[x]) ? dark[x] : 0.0;
      double f = 1.0;

      if (flat != NULL)
        f = isfinite (flat[x]) ? flat[x] - d : 0.0;
      offset[x] = flat != NULL ? d : 0.0;
      denom[x] = f;
    }

  for (guint p = 0; p < n_proj; p++)
    {
      const float *in = raw + (gsize) p * width;
      float *o = out + (gsize) p * width;

      for (guint x = 0; x < width; x++)
        {
          double v = in[x];
          gboolean clamped = FALSE;
          double num, den, result;

          local.n_values++;
          if (!isfinite (v))
            {
              local.n_nonfinite++;
              o[x] = 0.0f;
              continue;
            }

          num = v - offset[x];
          den = denom[x];
          if (flat != NULL && !(den > 0.0))
            {
              den = TOMO_TINY;
              clamped = TRUE;
            }
          if ((flat != NULL || apply_log) && !(num > 0.0))
            {
              num = TOMO_TINY;
              clamped = TRUE;
            }
          if (clamped)
            local.n_nonpositive++;

          result = num / den;
          if (apply_log)
            result = -log (result);

          if (!isfinite (result) || fabs (result) > TOMO_MAX_LINE_INTEGRAL)
            {
              local.n_nonfinite++;
              result = 0.0;
            }
          o[x] = (float) result;
        }
    }

  if (stats != NULL)
    tomo_preprocess_stats_add (stats, &local);
}

void
tomo_average_frames (const float         *frames,
                     guint                n,
                     guint                width,
                     float               *out,
                     TomoPreprocessStats *stats)
{
  TomoPreprocessStats local = { 0, };

  g_return_if_fail (out != NULL || width == 0);
  g_return_if_fail (frames != NULL || n == 0 || width == 0);

  for (guint x = 0; x < width; x++)
    {
      double sum = 0.0;
      guint count = 0;

      for (guint i = 0; i < n; i++)
        {
          float v = frames[(gsize) i * width + x];

          local.n_values++;
          if (!isfinite (v))
            {
              local.n_nonfinite++;
              continue;
            }
          sum += v;
          count++;
        }

      out[x] = count > 0 ? (float) (sum / count) : 0.0f;
    }

  if (stats != NULL)
    tomo_preprocess_stats_add (stats, &local);
}

void
tomo_preprocess_stats_add (TomoPreprocessStats       *into,
                           const TomoPreprocessStats *from)
{
  g_return_if_fail (into != NULL);

  if (from == NULL)
    return;

  into->n_values += from->n_values;
  into->n_nonpositive += from->n_nonpositive;
  into->n_nonfinite += from->n_nonfinite;
}
