/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The median of n > 0 timings; sorts v in place (so v[n − 1] is then the
 * maximum). */
double _tomo_bench_median (double *v,
                           guint   n);

G_END_DECLS
