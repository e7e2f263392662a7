/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>
#include <hdf5.h>

G_BEGIN_DECLS

/* Writes `n` doubles as the float64 dataset `name` under `loc`: one
 * dimension of n, or a scalar (one value) when n is 0.  FALSE when the
 * dataset cannot be created or written. */
gboolean _tomo_hdf5_write_doubles (hid_t         loc,
                                   const char   *name,
                                   hsize_t       n,
                                   const double *values);

G_END_DECLS
