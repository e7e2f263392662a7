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
/* Writes the scalar attribute `name` of `loc`: `value` in `mem_type`,
 * stored as `file_type`.  FALSE when it cannot be created or written. */
gboolean _tomo_hdf5_write_attr    (hid_t         loc,
                                   const char   *name,
                                   hid_t         file_type,
                                   hid_t         mem_type,
                                   const void   *value);

G_END_DECLS
