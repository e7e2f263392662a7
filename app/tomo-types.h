/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The GPU backend (app/recon/tomo-backend-gpu.c) translates these for gpu/. */
typedef enum
{
  TOMO_INTERP_NEAREST = 0,
  TOMO_INTERP_LINEAR = 1,
} TomoInterp;

typedef enum
{
  TOMO_FILTER_RAMLAK = 0,
  TOMO_FILTER_SHEPP_LOGAN,
  TOMO_FILTER_COSINE,
  TOMO_FILTER_HAMMING,
  TOMO_FILTER_HANN,
  TOMO_FILTER_PARZEN,
  TOMO_N_FILTERS
} TomoFilterType;

typedef enum
{
  TOMO_PAD_ZERO = 0,
  TOMO_PAD_EDGE = 1,
} TomoPadMode;

typedef enum
{
  TOMO_BACKEND_AUTO = 0,
  TOMO_BACKEND_CPU,
  TOMO_BACKEND_GPU,
} TomoBackend;

/* Region of interest in slice pixels; width == 0 means the whole W×W slice. */
typedef struct
{
  guint x, y, width, height;
} TomoRoi;

/* Everything that decides what a reconstructed slice looks like.
 *
 * Geometry (one convention everywhere, see DESIGN.md): detector columns are
 * indexed 0…W−1 at pixel centres; `center` is the column of the rotation axis
 * (TomoPy's meaning).  The slice is W×W pixels of detector-pixel size; pixel
 * (ix, iy) sits at x = ix − (W−1)/2, y = iy − (W−1)/2 (row 0 at the top) and
 * projects to detector column t = x·cos θ − y·sin θ + center.
 * Values are attenuation per pixel. */
typedef struct
{
  double center;
  TomoFilterType filter;
  TomoInterp interp;
  TomoPadMode pad;
  TomoRoi roi;
  guint n_threads; /* CPU backend; 0 = all cores */
} TomoReconParams;

void        tomo_recon_params_init     (TomoReconParams *params,
                                        guint            width);
gboolean    tomo_recon_params_validate (const TomoReconParams *params,
                                        guint                  width,
                                        GError               **error);
/* Resolved ROI: roi with width == 0 expanded to the full slice. */
TomoRoi     tomo_recon_params_get_roi  (const TomoReconParams *params,
                                        guint                  width);

const char *tomo_filter_type_to_string   (TomoFilterType type);
gboolean    tomo_filter_type_from_string (const char     *name,
                                          TomoFilterType *type,
                                          GError        **error);
const char *tomo_interp_to_string        (TomoInterp interp);
gboolean    tomo_interp_from_string      (const char *name,
                                          TomoInterp *interp,
                                          GError    **error);
const char *tomo_backend_to_string       (TomoBackend backend);
gboolean    tomo_backend_from_string     (const char  *name,
                                          TomoBackend *backend,
                                          GError     **error);

/* Name tables of enums (internal): the index of `name` among names[0 … n)
 * (case-insensitive; a NULL name or entry matches nothing), FALSE when it is
 * none; and names[value], "unknown" out of range or for a NULL entry. */
gboolean    _tomo_name_lookup (const char *const *names,
                               guint              n,
                               const char        *name,
                               guint             *index);
const char *_tomo_name_of     (const char *const *names,
                               guint              n,
                               guint              value);

/* An enum's names for its *_from_string() (internal). */
typedef struct
{
  const char *what;             /* "filter", in the error */
  const char *const *names;     /* names[value] */
  guint n;
  const char *const *aliases;   /* other spellings: alias, its name, …, NULL (or NULL) */
  const char *known;            /* the error's list of names (NULL: "known: " and names) */
  GQuark (*domain) (void);
  int code;
} TomoNameTable;

/* The value `name` stands for in `table` (case-insensitive), or −1 and
 * "Unknown WHAT “NAME” (known: …)" in the table's domain and code. */
int         _tomo_name_parse  (const TomoNameTable *table,
                               const char          *name,
                               GError             **error);
/* Defines `gboolean func (const char *name, Type *value, GError **error)`
 * over _tomo_name_parse(): *value set only on success.  A macro because the
 * enums' *_from_string() differ only in the type. */
#define TOMO_DEFINE_FROM_STRING(func, Type, table)                       \
  gboolean func (const char *name, Type *value, GError **error)         \
  {                                                                     \
    int v = _tomo_name_parse (&(table), name, error);                   \
                                                                        \
    if (v >= 0)                                                         \
      *value = (Type) v;                                                \
    return v >= 0;                                                      \
  }

G_END_DECLS
