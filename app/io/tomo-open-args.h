/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-options.h"
#include "tomo-scan.h"

G_BEGIN_DECLS

/* How to open a scan, as the command line spells it (--format, --flats,
 * --already-sinogram, --raw-width…): one option group shared by
 * `tomolive info|reconstruct|stream` and the viewer, and one conversion
 * into TomoOpenOptions.  Zero-initialise; strings are owned. */
typedef struct
{
  char *format;
  char *flats;
  char *darks;
  char *angles;
  guint raw_width, raw_height, raw_n_proj;
  char *raw_dtype;
  guint64 raw_offset;
  gboolean raw_big_endian;
  double angle_range;
  gboolean already_sinogram;
  gboolean already_linear;
  char *max_memory;         /* --max-memory: "64G", "80%" */
  /*< private >*/
  double parsed[5];         /* numbers as the command line gave them, checked */
  TomoNumberOption numbers[6];
} TomoOpenArgs;

void          tomo_open_args_clear      (TomoOpenArgs *a);
void          tomo_open_args_copy       (const TomoOpenArgs *src,
                                         TomoOpenArgs       *dest);
/* Entries write into `a`, which must outlive the group's parsing. */
GOptionGroup *tomo_open_args_group      (TomoOpenArgs *a);
/* Moves the checked numbers of a parsed command line into the fields
 * (tomo_open_args_to_options does it too). */
void          tomo_open_args_take_parsed (TomoOpenArgs *a);
/* `options` borrows a's strings. */
gboolean      tomo_open_args_to_options (const TomoOpenArgs *a,
                                         TomoOpenOptions    *options,
                                         GError            **error);
TomoScan     *tomo_open_args_open       (const char         *path,
                                         const TomoOpenArgs *a,
                                         GError            **error);

G_END_DECLS
