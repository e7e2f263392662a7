/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  TOMO_VOLUME_FORMAT_AUTO = 0,  /* existing folder → TIFF per slice; .h5/.hdf5/.hdf/.nxs → HDF5; else multi-page TIFF */
  TOMO_VOLUME_FORMAT_TIFF_FOLDER,
  TOMO_VOLUME_FORMAT_TIFF_STACK,
  TOMO_VOLUME_FORMAT_HDF5,
} TomoVolumeFormat;

TomoVolumeFormat tomo_volume_format_guess     (const char *path);
/* `path` says its format (a folder, .h5/.hdf5/.hdf/.nxs, .tif/.tiff);
 * guess() takes any other name for a TIFF stack. */
gboolean         tomo_volume_format_is_named  (const char *path);

/* What is written: slices of width × height floats for detector rows
 * [row_start, row_start + n_rows), and how they were made (HDF5 attributes
 * of /exchange/data). */
typedef struct
{
  guint width, height;
  guint row_start, n_rows;
  guint roi_x, roi_y;
  guint n_projections;
  double center;
  double axis_tilt_deg;   /* the axis tilt the rows were corrected for, 0 = none */
  const char *filter;
  const char *interp;
  const char *backend;
  const char *source;     /* the scan's path */
  double pixel_size;      /* metres, 0 = unknown */
  const char * const *inputs; /* files the output must not be (NULL-terminated), or NULL;
                               * every open scan's files are refused anyway */
  const char *write_mode; /* how the one-file formats are written: "pwrite" or "mmap"
                           * (through a shared mapping; see tomo-volume-writer.c); NULL:
                           * TOMO_VOLUME_WRITE from the environment, else "pwrite" */
} TomoVolumeInfo;

/* Writes a volume as slices arrive, on a pool of threads, never holding
 * more than a few slices.  Every file goes through tomo-output.h, never
 * one of the inputs: one file is a temporary file renamed into place when
 * complete; the folder's slices are written into a hidden folder inside it
 * and renamed into place together by finish (TomoOutputFolder), every
 * slice's name checked when the writer is made.  An error or an abort
 * removes what this writer wrote and leaves what was there before. */
typedef struct _TomoVolumeWriter TomoVolumeWriter;

/* n_threads 0 = a default: 8 for the TIFF folder, 1 for one file. */
TomoVolumeWriter *tomo_volume_writer_new      (const char           *path,
                                               TomoVolumeFormat      format,
                                               const TomoVolumeInfo *info,
                                               guint                 n_threads,
                                               GError              **error);
/* Writes `slice` (width × height floats of detector row `row`), in any
 * order.  HDF5 and the multi-page TIFF: written in pieces by all threads at
 * once straight from `slice`, returning when it is written.  The TIFF
 * folder: copied and queued, blocking while every buffer is queued; a write
 * error comes back with a later slice or from finish.  FALSE with the first
 * writer error once one failed. */
gboolean          tomo_volume_writer_add      (TomoVolumeWriter *writer,
                                               guint             row,
                                               const float      *slice,
                                               GError          **error);
/* Waits for the queued slices, checks that every row arrived, closes and
 * renames into place; frees the writer.  On failure nothing is left. */
gboolean          tomo_volume_writer_finish   (TomoVolumeWriter *writer,
                                               GError          **error);
/* Stops, removes everything written (an earlier run's slices stay), frees.
 * Returns the number of files removed. */
guint             tomo_volume_writer_abort    (TomoVolumeWriter *writer);
/* Busy time of the writer threads so far, summed (ms). */
double            tomo_volume_writer_get_busy_ms (TomoVolumeWriter *writer);
TomoVolumeFormat  tomo_volume_writer_get_format  (TomoVolumeWriter *writer);

G_END_DECLS
