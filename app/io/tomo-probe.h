/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-scan.h"

G_BEGIN_DECLS

/* libhdf5 can crash or hang on some corrupt files (docs/RELIABILITY.md,
 * findings 3–6).  Before an HDF5 file is opened in this process, a helper
 * (`tomolive probe-hdf5`) opens it with the same format options, reads its
 * header and the middle sinogram row, under a time limit
 * (TOMO_PROBE_TIMEOUT seconds, default 20) and an address-space limit.  If
 * the helper dies or runs out of time, the file is refused with an error
 * naming what was being read; otherwise TRUE and the caller opens the file
 * itself (errors the helper met are the caller's to report).  TRUE without
 * a probe for files that are not HDF5, when TOMO_PROBE=off, or when no
 * tomolive executable is known (neither this process nor $TOMOLIVE). */
gboolean tomo_probe_hdf5      (const char            *path,
                               const TomoOpenOptions *options,
                               GError               **error);

/* The helper's side: `tomolive probe-hdf5 FORMAT ALREADY_SINOGRAM FILE`.
 * Prints one line per stage; exit 0 read, 2 refused with an error. */
int      tomo_probe_hdf5_main (int    argc,
                               char **argv);

G_END_DECLS
