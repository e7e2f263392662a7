/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The median of n > 0 values (the mean of the middle two for even n); sorts
 * v in place, so v[n − 1] is then the maximum. */
double _tomo_median (double *v,
                     guint   n);
/* qsort()'s comparison of two doubles, ascending. */
int    _tomo_cmp_double (gconstpointer a,
                         gconstpointer b);

G_END_DECLS
