/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-plane.h"
#include "tomo-scan.h"
#include "tomo-types.h"

G_BEGIN_DECLS

/* `--plane` of `tomolive reconstruct`: "xz:Y" (slice row Y), "yz:X" (slice
 * column X), "oblique:AZ[,TILT[,X,Y,Z]]" (degrees; centre in slice pixels
 * and detector row, default the middle of the rows).  The plane spans the
 * rows [row_start, row_end); xz/yz take the ROI's x/width or y/height. */
gboolean tomo_plane_cli_parse (const char    *text,
                               guint          width,
                               guint          row_start,
                               guint          row_end,
                               const TomoRoi *roi,
                               TomoPlane     *plane,
                               GError       **error);

/* What `tomolive reconstruct --plane` asks for. */
typedef struct
{
  const char            *text;      /* the --plane value */
  guint                  row_start, row_end;
  const TomoReconParams *params;
  TomoBackend            backend;
  const char            *output;    /* one TIFF file */
  gboolean               quiet;
} TomoPlaneCliJob;

/* Fills a volume store of the rows, back projects the plane and writes it
 * as one float32 TIFF page to job->output. */
gboolean tomo_plane_cli_run   (TomoScan              *scan,
                               const TomoPlaneCliJob *job,
                               GError               **error);

G_END_DECLS
