/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-scan.h"

G_BEGIN_DECLS

/* The three kinds of frames a scan holds. */
typedef enum
{
  TOMO_FRAME_PROJECTION = 0,
  TOMO_FRAME_FLAT,
  TOMO_FRAME_DARK,
  TOMO_N_FRAME_KINDS
} TomoFrameKind;

typedef struct _TomoScanLoader TomoScanLoader;

/* A format plugs into TomoScan through this table.  read_rows() fills `out`
 * with detector row `row` of every frame of `kind`, in frame order, as
 * n_frames[kind] × width floats.  TomoScan serialises calls per scan; a
 * loader whose library is not thread-safe at all (HDF5) locks globally. */
typedef struct
{
  const char *name;
  gboolean  (*read_rows) (TomoScanLoader *loader,
                          TomoFrameKind   kind,
                          guint           row,
                          float          *out,
                          GError        **error);
  void      (*free)      (TomoScanLoader *loader);
  /* Optional: rows [row, row + n_rows) of every frame of `kind` in the
   * file's own type (loader->dtype, native byte order), no conversion, as
   * the file lays them out (n_frames × n_rows × width), in one read; NULL
   * where the loader has none.  And how many detector rows one chunk of
   * the projections spans (0: not chunked), which sizes such reads. */
  gboolean  (*read_slab_native) (TomoScanLoader *loader,
                                 TomoFrameKind   kind,
                                 guint           row,
                                 guint           n_rows,
                                 void           *out,
                                 GError        **error);
  guint     (*chunk_rows)       (TomoScanLoader *loader);
  /* Optional: as read_slab_native() of one row, but safe to call from many
   * threads at once without TomoScan's lock; *handled FALSE (returning
   * TRUE) where it cannot, and read_slab_native() is used. */
  gboolean  (*read_rows_direct) (TomoScanLoader *loader,
                                 TomoFrameKind   kind,
                                 guint           row,
                                 void           *out,
                                 gboolean       *handled,
                                 GError        **error);
} TomoScanLoaderClass;

/* What a loader learns from the header.  Loaders embed this first. */
struct _TomoScanLoader
{
  const TomoScanLoaderClass *klass;

  TomoScanFormat format;
  char          *path;
  guint          width;
  guint          height;
  guint          n_frames[TOMO_N_FRAME_KINDS];
  TomoDType      dtype;
  double        *angles_deg;   /* n_frames[PROJECTION] values, or NULL */
  double         pixel_size;   /* metres, 0 = unknown */
  gboolean       already_linear; /* the file says its data are line integrals */
  gboolean       already_normalised; /* the file says its data need no flat/dark division */
  double         axis_tilt_deg; /* derived scans: the axis tilt their rows are corrected
                                 * for (tomo_geometry_correct_tilt), 0 for none */
  /* Where each frame kind comes from, for messages ("data_white", a folder…). */
  char          *source[TOMO_N_FRAME_KINDS];
  /* Every file the scan reads (owned strings), so that no output can
   * overwrite one; loaders add theirs with _tomo_scan_loader_add_input(),
   * which registers each with the output layer (tomo-output.h) until the
   * loader is freed. */
  GPtrArray     *inputs;
  GArray        *input_ids;  /* TomoInputId of each registered input */
};

/* Each returns a loader whose header is read and checked, or NULL. */
gboolean        _tomo_io_is_hdf5     (const char *path);
TomoScanLoader *_tomo_io_hdf5_open   (const char            *path,
                                      TomoScanFormat         format,
                                      const TomoOpenOptions *options,
                                      GError               **error);
TomoScanLoader *_tomo_io_tiff_open   (const char            *path,
                                      const TomoOpenOptions *options,
                                      GError               **error);
TomoScanLoader *_tomo_io_raw_open    (const char            *path,
                                      const TomoOpenOptions *options,
                                      GError               **error);

/* A loader of `size` bytes (a struct that embeds TomoScanLoader first),
 * zero-filled, with its class, format and path (copied; may be NULL) set. */
gpointer        _tomo_scan_loader_new  (gsize                      size,
                                        const TomoScanLoaderClass *klass,
                                        TomoScanFormat             format,
                                        const char                *path);
void            _tomo_scan_loader_free (TomoScanLoader *loader);

/* The checks of tomo_scan_open() on a loader already open (takes it): the
 * file loaders' and the live receiver's scans. */
TomoScan       *_tomo_scan_new_from_loader (TomoScanLoader        *loader,
                                            const TomoOpenOptions *options,
                                            GError               **error);

/* An HDF5 file held in memory (core driver), e.g. for fuzzing; `name`
 * stands for the path in messages. */
TomoScanLoader *_tomo_io_hdf5_open_image (const void            *data,
                                          gsize                  size,
                                          const char            *name,
                                          TomoScanFormat         format,
                                          const TomoOpenOptions *options,
                                          GError               **error);

/* Before anything is allocated from a header: can one detector row of
 * `n_frames` frames of `height` × `width` be read, filtered and
 * reconstructed within the memory budget (tomo-memory.h)?  The message
 * names `file`, `dataset` and the dimensions. */
gboolean        _tomo_scan_check_memory (const char *file,
                                         const char *dataset,
                                         guint64     n_frames,
                                         guint64     height,
                                         guint64     width,
                                         GError    **error);
/* `path` is read by the scan: listed by tomo_scan_get_input_files() and
 * registered as an input (tomo_output_register_input()) until the loader
 * is freed.  A path that does not exist is ignored. */
void            _tomo_scan_loader_add_input (TomoScanLoader *loader,
                                             const char     *path);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoScanLoader, _tomo_scan_loader_free)

/* Converts `n` values of `dtype` at `src` (native byte order unless
 * `swap`) to floats. */
void            _tomo_convert_to_float (const void *src,
                                        TomoDType   dtype,
                                        gboolean    swap,
                                        gsize       n,
                                        float      *out);
gsize           _tomo_dtype_size       (TomoDType dtype);

/* Angles beyond this many degrees (1000 turns) are taken for corrupt data. */
#define TOMO_MAX_ANGLE_DEG 360000.0

/* Parses angle-file text (`length` bytes, not NUL-terminated); `name`
 * for messages. */
double         *_tomo_parse_angles     (const char *name,
                                        const char *text,
                                        gsize       length,
                                        guint      *n_angles,
                                        GError    **error);
/* The most angles an angle file may hold, as the live receiver's
 * --projections (the file's size is checked against it before reading). */
#define TOMO_MAX_ANGLES 10000000

/* Parses an angle file: one value in degrees per line, '#' comments.  A
 * regular file of no more than 64 bytes per angle of TOMO_MAX_ANGLES (plus
 * 64 KiB), refused before it is read otherwise. */
double         *_tomo_read_angle_file  (const char *path,
                                        guint      *n_angles,
                                        GError    **error);

/* TIFF helpers shared by the stack loader and the TIFF writer/reader. */
struct tiff;

typedef struct
{
  char *message;   /* first error libtiff reported since the last take */
  char *warning;   /* first warning, the reason when no error came */
  char *last;      /* owns the string _take() returned */
} TomoTiffErrors;

typedef struct
{
  guint     width;
  guint     height;
  TomoDType dtype;
} TomoTiffPage;

struct tiff *_tomo_tiff_open        (const char     *path,
                                     const char     *mode,
                                     TomoTiffErrors *errors);
const char  *_tomo_tiff_errors_take  (TomoTiffErrors *errors);
void         _tomo_tiff_errors_clear (TomoTiffErrors *errors);
gboolean     _tomo_tiff_page_info    (struct tiff    *tif,
                                      const char     *path,
                                      guint           page,
                                      TomoTiffPage   *info,
                                      GError        **error);
gboolean     _tomo_tiff_read_row     (struct tiff    *tif,
                                      const char     *path,
                                      guint           page,
                                      TomoTiffErrors *errors,
                                      TomoDType       dtype,
                                      guint           width,
                                      guint           row,
                                      float          *out,
                                      GError        **error);

/* Forgets cached rows: the loader's data changed. */
void            _tomo_scan_invalidate     (TomoScan *self);
/* Row `row` of every frame of `kind`, unprocessed (n_frames × width). */
gboolean        _tomo_scan_read_frames    (TomoScan      *self,
                                           TomoFrameKind  kind,
                                           guint          row,
                                           float         *out,
                                           GError       **error);
/* The lock every HDF5 call takes (the library is not thread-safe). */
void            _tomo_hdf5_lock           (void);
void            _tomo_hdf5_unlock         (void);

/* A scan derived from `base`: its sinogram rows are the base's rows,
 * preprocessed there (with the base's repair counts), then turned by
 * `transform` into n_proj × width rows at `angles` (radians).  The geometry
 * of 360° and offset-axis scans (tomo-geometry.h) lives here, so that every
 * reader (row cache, backends, volume export) sees it.  The derived scan is
 * already normalised and linear: no flats, no darks, float32. */
typedef gboolean (*TomoScanRowTransform) (gpointer     user_data,
                                          guint        row,
                                          const float *in,
                                          float       *out,
                                          GError     **error);
TomoScan       *_tomo_scan_new_derived    (TomoScan             *base,
                                           guint                 width,
                                           guint                 n_proj,
                                           const double         *angles,
                                           TomoScanRowTransform  transform,
                                           gpointer              user_data,
                                           GDestroyNotify        destroy,
                                           GError              **error);
/* The scan a derived scan reads from; NULL for a scan of a file. */
TomoScan       *_tomo_scan_get_base       (TomoScan *self);
/* A derived scan's transform and its user_data; NULL for a scan of a file. */
TomoScanRowTransform _tomo_scan_get_transform (TomoScan *self,
                                               gpointer *user_data);
/* Marks a derived scan's rows as corrected for an axis tilt of `deg`. */
void            _tomo_scan_set_axis_tilt  (TomoScan *self,
                                           double    deg);

/* Raw rows [row, row + n_rows) as tomo_scan_read_raw_row() gives one:
 * n_rows planes of n_projections × width values of tomo_scan_get_raw_dtype()
 * into `out`, and (when the scan normalises) n_rows × width averaged flats
 * and darks; `stats` (n_rows entries, or NULL) gets each row's counts of
 * the flat/dark averaging added.  One file read where the loader can (read_slab_native), the
 * rows one by one otherwise.  No cache; thread-safe. */
gboolean        _tomo_scan_read_raw_rows  (TomoScan            *self,
                                           guint                row,
                                           guint                n_rows,
                                           void                *out,
                                           float               *flat,
                                           float               *dark,
                                           TomoPreprocessStats *stats,
                                           GError             **error);
/* Detector rows one chunk of the projections spans in the file (1 for
 * row-wise chunks, the detector height for frame-wise ones); 0 when the
 * file is not chunked or the loader does not say. */
guint           _tomo_scan_get_chunk_rows (TomoScan *self);

/* For tests: what the row cache holds now. */
/* Projection rows read from the file so far (cache misses and direct reads). */
guint64         _tomo_scan_get_n_row_reads (TomoScan *self);
/* Of those, raw rows read by the loader's read_rows_direct(). */
guint64         _tomo_scan_get_n_direct_reads (TomoScan *self);
void            _tomo_scan_get_cache_usage (TomoScan *self,
                                            guint    *n_rows,
                                            gsize    *bytes,
                                            gsize    *limit);

G_END_DECLS
