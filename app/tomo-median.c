/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo"

#include "config.h"

#include <stdlib.h>

#include "tomo-median.h"

int
_tomo_cmp_double (gconstpointer a,
                  gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

double
_tomo_median (double *v,
              guint   n)
{
  g_return_val_if_fail (v != NULL && n > 0, 0.0);

  qsort (v, n, sizeof *v, _tomo_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
