/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Counts of values that had to be repaired; reported, never hidden. */
typedef struct
{
  guint64 n_values;        /* values processed */
  guint64 n_nonpositive;   /* (raw − dark) or (flat − dark) ≤ 0: clamped */
  guint64 n_nonfinite;     /* NaN/Inf in the input, or a result NaN/Inf/|v| > 1e6: replaced */
} TomoPreprocessStats;

/* How raw counts of a detector row become line integrals: the averaged
 * flat and dark of that row (width values each; flat NULL: data already
 * normalised) and whether to take the −log. */
typedef struct
{
  const float *flat;
  const float *dark;
  gboolean apply_log;
} TomoFlatField;

/* Turns one raw sinogram row (n_proj × width) into line integrals:
 * −log((raw − dark)/(flat − dark)) as `ff` says.  Non-positive ratios are
 * clamped to a small positive value and non-finite results replaced by 0,
 * both counted in `stats`.  `out` may equal `raw`. */
void tomo_preprocess_row (const float         *raw,
                          guint                n_proj,
                          guint                width,
                          const TomoFlatField *ff,
                          float               *out,
                          TomoPreprocessStats *stats);

/* Averages `n` frames of `width` values into `out`; non-finite values are
 * skipped (counted in stats->n_nonfinite) and NaN never comes out. */
void tomo_average_frames (const float         *frames,
                          guint                n,
                          guint                width,
                          float               *out,
                          TomoPreprocessStats *stats);

void tomo_preprocess_stats_add (TomoPreprocessStats       *into,
                                const TomoPreprocessStats *from);

G_END_DECLS
