/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TOMO_TYPE_HISTOGRAM (tomo_histogram_get_type ())
G_DECLARE_FINAL_TYPE (TomoHistogram, tomo_histogram, TOMO, HISTOGRAM, GtkWidget)

/* Shows counts binned evenly over [lo, hi) — the statistics that come with
 * a slice; NULL clears. */
void       tomo_histogram_set_bins   (TomoHistogram *self,
                                      const guint32 *bins,
                                      guint          n_bins,
                                      double         lo,
                                      double         hi);
void       tomo_histogram_set_window (TomoHistogram *self,
                                      double         min,
                                      double         max);

G_END_DECLS
