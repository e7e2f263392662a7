/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Helpers shared by the tests: running `tomolive` as a child process,
 * phantom scans on disk, comparing images by numbers.
 */
#pragma once

#include <glib.h>

#include "tomo-phantom.h"
#include "tomo-engine.h"
#include "tomo-scan.h"

G_BEGIN_DECLS

typedef struct
{
  int status;   /* exit status, or 128 + signal */
  char *out;
  char *err;
} TomoTestResult;

void tomo_test_result_clear (TomoTestResult *r);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TomoTestResult, tomo_test_result_clear)

/* Runs $TOMOLIVE with `args` (NULL-terminated) and waits for it. */
void tomo_test_run_argv        (TomoTestResult *r,
                                const char    **args);
/* Failure as a user must see it: exit status 1, a "tomolive: " line
 * containing `words`, no crash. */
void tomo_test_assert_fails_with (TomoTestResult *r,
                                  const char     *words);

#define TOMO_TEST_RUN(r, ...) \
  G_STMT_START { const char *a_[] = { __VA_ARGS__, NULL }; tomo_test_run_argv (r, a_); } G_STMT_END

/* The tests' phantom: Shepp-Logan, width × height × n_proj over 180°, axis
 * at (width − 1)/2 + 3.37, attenuation up to 4/width, noiseless. */
void      tomo_test_phantom_params (TomoPhantomParams *p,
                                    guint              width,
                                    guint              height,
                                    guint              n_proj);
/* n angles evenly spaced over [0, π), endpoint excluded. */
double   *tomo_test_half_turn     (guint   n);
/* A noiseless phantom scan of width × height × n_proj (axis at
 * (width − 1)/2 + center_offset, attenuation up to 4/width) written to a new
 * temporary folder, *dir; returns the file's path.  tomo_test_remove_scan()
 * deletes both. */
char     *tomo_test_write_phantom (guint   width,
                                   guint   height,
                                   guint   n_proj,
                                   double  center_offset,
                                   char  **dir);
void      tomo_test_remove_scan   (char   *path,
                                   char   *dir);
/* Opens a scan with the default options; the test fails if it cannot. */
TomoScan *tomo_test_open_scan     (const char *path);
/* ‖a − b‖₂ / ‖b‖₂ over n values (‖a − b‖₂ when b is all zero); every value
 * must be finite. */
double    tomo_test_rel_l2        (const float *a,
                                   const float *b,
                                   gsize        n);

/* A blocking reconstruction of rows [row, row + n_slices) at `center`,
 * default parameters otherwise; an error fails the test. */
TomoSlice *tomo_test_reconstruct (TomoEngine *engine,
                                  guint       row,
                                  guint       n_slices,
                                  double      center);

/* Submits `request` to the engine's worker and runs the thread-default
 * main context until its slice arrives (30 s at most; an error fails the
 * test); the slice is the caller's. */
TomoSlice *tomo_test_submit (TomoEngine             *engine,
                             const TomoSliceRequest *request);

/* Mean of the w × w image `img` over the disc at (cx, cy) of `radius`
 * pixels (more than 10 pixels, or the test fails). */
double    tomo_test_disc_mean     (const float *img,
                                   guint        w,
                                   double       cx,
                                   double       cy,
                                   double       radius);

/* Entries in folder `dir` (0 when it cannot be read). */
guint tomo_test_count_entries (const char *dir);

G_END_DECLS

#include <hdf5.h>

G_BEGIN_DECLS

/* Writes dataset `name` (intermediate groups created) of `rank` `dims`,
 * chunked when `chunk` is given, with `data` (may be NULL: not written). */
void tomo_test_h5_write (hid_t          file,
                         const char    *name,
                         hid_t          file_type,
                         int            rank,
                         const hsize_t *dims,
                         const hsize_t *chunk,
                         hid_t          mem_type,
                         const void    *data);

/* Entries in folder `dir` (0 when it cannot be read). */
guint tomo_test_count_entries (const char *dir);

G_END_DECLS
