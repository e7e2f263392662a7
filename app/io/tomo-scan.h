/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib-object.h>

#include "tomo-preprocess.h"

G_BEGIN_DECLS

typedef enum
{
  TOMO_SCAN_FORMAT_AUTO = 0, /* by content: HDF5 (Data Exchange or NXtomo), TIFF, folder */
  TOMO_SCAN_FORMAT_DXCHANGE,
  TOMO_SCAN_FORMAT_NXTOMO,
  TOMO_SCAN_FORMAT_TIFF,
  TOMO_SCAN_FORMAT_RAW,
} TomoScanFormat;

typedef enum
{
  TOMO_DTYPE_UINT8 = 0,
  TOMO_DTYPE_UINT16,
  TOMO_DTYPE_UINT32,
  TOMO_DTYPE_FLOAT32,
  TOMO_DTYPE_FLOAT64,
  TOMO_DTYPE_INT8,
  TOMO_DTYPE_INT16,
  TOMO_DTYPE_INT32,
  TOMO_DTYPE_FLOAT16,   /* IEEE half precision */
} TomoDType;

/* How to open a scan.  Zero-initialise with tomo_open_options_init(). */
typedef struct
{
  TomoScanFormat format;

  /* TIFF stacks: `path` is a folder or a glob of projections. */
  const char *flats;  /* file, folder or glob; NULL = none */
  const char *darks;  /* file, folder or glob; NULL = none */
  const char *angles; /* text file, one angle in degrees per line; NULL = evenly spaced */

  /* Raw binary: projections stored as n_projections × height × width. */
  guint raw_width;
  guint raw_height;
  guint raw_n_projections;
  TomoDType raw_dtype;
  guint64 raw_offset;       /* header bytes to skip */
  gboolean raw_big_endian;

  double angle_range_deg;   /* for evenly spaced angles; default 180 */

  gboolean already_sinogram; /* data is already normalised: no flat/dark division */
  gboolean already_linear;   /* data is already line integrals: no −log */

  gsize cache_bytes;        /* sinogram row cache; 0 = default (256 MiB) */
} TomoOpenOptions;

void tomo_open_options_init (TomoOpenOptions *options);

gboolean    tomo_scan_format_from_string (const char     *name,
                                          TomoScanFormat *format,
                                          GError        **error);
gboolean    tomo_dtype_from_string       (const char *name,
                                          TomoDType  *dtype,
                                          GError    **error);
const char *tomo_dtype_to_string         (TomoDType dtype);

#define TOMO_TYPE_SCAN (tomo_scan_get_type ())
G_DECLARE_FINAL_TYPE (TomoScan, tomo_scan, TOMO, SCAN, GObject)

/* Opens the scan and reads its header, angles, flats and darks — never the
 * projections: sinogram rows are read on demand and cached. */
TomoScan      *tomo_scan_open               (const char            *path,
                                             const TomoOpenOptions *options,
                                             GError               **error);

const char    *tomo_scan_get_path           (TomoScan *self);
const char    *tomo_scan_get_format_name    (TomoScan *self);
guint          tomo_scan_get_width          (TomoScan *self); /* detector columns */
guint          tomo_scan_get_height         (TomoScan *self); /* detector rows = sinograms */
guint          tomo_scan_get_n_projections  (TomoScan *self);
guint          tomo_scan_get_n_flats        (TomoScan *self);
guint          tomo_scan_get_n_darks        (TomoScan *self);
TomoDType      tomo_scan_get_dtype          (TomoScan *self);
/* Angles in radians, n_projections of them. */
const double  *tomo_scan_get_angles         (TomoScan *self);
/* Pixel size in metres, 0 when the file does not say. */
double         tomo_scan_get_pixel_size     (TomoScan *self);
/* The axis tilt (degrees) the rows were corrected for, 0 for none
 * (tomo_geometry_correct_tilt()). */
double         tomo_scan_get_axis_tilt_correction (TomoScan *self);
gboolean       tomo_scan_get_angles_from_file (TomoScan *self);
/* Every file and folder the scan reads (scan, TIFF pages, flats, darks,
 * angle file, HDF5 files external links lead to), NULL-terminated.  Each
 * is also registered with the output layer while the scan lives, so every
 * output is checked against them whether or not a writer passes this. */
const char * const *tomo_scan_get_input_files (TomoScan *self);
/* FALSE with a message when the projections cannot give a slice (fewer
 * than two; scans whose angles all agree are refused when opened). */
gboolean       tomo_scan_check_reconstructible (TomoScan *self,
                                                GError  **error);

/* Preprocessed sinogram of detector row `row`: n_projections × width floats,
 * flat/dark normalised and −log applied (unless the options said otherwise).
 * Never contains NaN or Inf. Thread-safe. `stats` may be NULL and is added to. */
gboolean       tomo_scan_read_sinogram      (TomoScan            *self,
                                             guint                row,
                                             float               *out,
                                             TomoPreprocessStats *stats,
                                             GError             **error);
/* Same values as tomo_scan_read_sinogram(), without the row cache, and
 * only the file read under the scan's lock: several threads reading rows
 * preprocess at the same time (whole volumes). */
gboolean       tomo_scan_read_sinogram_direct (TomoScan            *self,
                                               guint                row,
                                               float               *out,
                                               TomoPreprocessStats *stats,
                                               GError             **error);
/* Raw counts of row `row`, n_projections × width floats, no preprocessing. */
gboolean       tomo_scan_read_raw_sinogram  (TomoScan *self,
                                             guint     row,
                                             float    *out,
                                             GError  **error);
/* The device path's input.  The type tomo_scan_read_raw_row() hands rows
 * out in: the file's own where the loader reads it unconverted (uint16 or
 * float32 HDF5), float32 otherwise. */
TomoDType      tomo_scan_get_raw_dtype      (TomoScan *self);
/* How tomo_scan_read_sinogram() preprocesses: flat/dark normalisation, −log. */
void           tomo_scan_get_preprocessing  (TomoScan *self,
                                             gboolean *normalise,
                                             gboolean *apply_log);
/* Raw projections of row `row` (n_projections × width values of
 * tomo_scan_get_raw_dtype(), no conversion) and, when the scan normalises,
 * the row's averaged flat and dark (width floats each; checked as
 * tomo_scan_read_sinogram() does).  No cache; thread-safe. */
gboolean       tomo_scan_read_raw_row       (TomoScan            *self,
                                             guint                row,
                                             void                *out,
                                             float               *flat,
                                             float               *dark,
                                             TomoPreprocessStats *stats,
                                             GError             **error);
/* Averaged flat and dark of row `row` (width floats each); zeros for a
 * missing dark, ones for a missing flat. */
gboolean       tomo_scan_read_flat_dark     (TomoScan *self,
                                             guint     row,
                                             float    *flat,
                                             float    *dark,
                                             GError  **error);

/* Multi-line human description (what `tomolive info` prints). */
char          *tomo_scan_describe           (TomoScan *self);

G_END_DECLS
