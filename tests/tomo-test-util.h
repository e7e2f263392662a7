/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Helpers shared by the tests: running `tomolive` as a child process,
 * phantom scans on disk, comparing images by numbers.
 */
#pragma once

#include <glib.h>

#include "tomo-phantom.h"
#include "tomo-engine.h"
#include "tomo-preprocess.h"
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
/* The same with environment `env` (NULL: this process's). */
void tomo_test_run_argv_env    (TomoTestResult     *r,
                                const char *const  *env,
                                const char        **args);
/* Failure as a user must see it: exit status 1, a "tomolive: " line
 * containing `words`, no crash. */
void tomo_test_assert_fails_with (TomoTestResult *r,
                                  const char     *words);

#define TOMO_TEST_RUN(r, ...) \
  G_STMT_START { const char *a_[] = { __VA_ARGS__, NULL }; tomo_test_run_argv (r, a_); } G_STMT_END

/* `call` fails: it returns FALSE or NULL and sets `error` (a GError *) to
 * `domain` and `code`; the error is then cleared.  A macro, so that a
 * failure names the test's line. */
#define TOMO_TEST_ASSERT_FAILS(call, error, domain, code) \
  G_STMT_START { \
    g_assert_true (!(call)); \
    g_assert_error (error, domain, code); \
    g_clear_error (&(error)); \
  } G_STMT_END

/* A TomoVolumeSink (and its progress callback, on the same user_data) that
 * keeps every slice it is given, asserting that they come in row order from
 * next_row and, where width/height are set, at that size.  After
 * cancel_after rows (when set) it cancels `cancellable`. */
typedef struct
{
  guint next_row;
  guint width, height;      /* expected size (0: any) */
  GPtrArray *slices;        /* in row order (g_free) */
  guint cancel_after;
  GCancellable *cancellable;
  guint progress_calls, progress_total;
} TomoTestVolume;

void     tomo_test_volume_init     (TomoTestVolume *v,
                                    guint           first_row,
                                    guint           width,
                                    guint           height);
void     tomo_test_volume_clear    (TomoTestVolume *v);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TomoTestVolume, tomo_test_volume_clear)
gboolean tomo_test_volume_sink     (guint        row,
                                    const float *slice,
                                    guint        width,
                                    guint        height,
                                    gpointer     user_data,
                                    GError     **error);
void     tomo_test_volume_progress (guint    done,
                                    guint    total,
                                    gpointer user_data);

/* A TomoEngineCallback (tomo_test_answers_cb) that counts the answers and
 * the errors and keeps the last slice; tomo_test_answers_freed, as the
 * user data's destroy notify, counts the times it was freed. */
typedef struct
{
  guint n_answers;
  guint n_errors;
  TomoSlice *slice;
  guint n_freed;
} TomoTestAnswers;

void     tomo_test_answers_clear   (TomoTestAnswers *a);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TomoTestAnswers, tomo_test_answers_clear)
void     tomo_test_answers_cb      (TomoEngine   *engine,
                                    TomoSlice    *slice,
                                    const GError *error,
                                    gpointer      user_data);
void     tomo_test_answers_freed   (gpointer user_data);

/* The tests' phantom: Shepp-Logan, width × height × n_proj over 180°, axis
 * at (width − 1)/2 + 3.37, attenuation up to 4/width, noiseless. */
void      tomo_test_phantom_params (TomoPhantomParams *p,
                                    guint              width,
                                    guint              height,
                                    guint              n_proj);
/* n angles evenly spaced over [0, π), endpoint excluded. */
double   *tomo_test_half_turn     (guint   n);
/* n floats drawn uniformly from [lo, hi) by a GRand seeded with `seed`. */
float    *tomo_test_random_floats (gsize   n,
                                   guint32 seed,
                                   double  lo,
                                   double  hi);
/* A noiseless phantom scan of width × height × n_proj (axis at
 * (width − 1)/2 + center_offset, attenuation up to 4/width) written to a new
 * temporary folder, *dir; returns the file's path.  tomo_test_remove_scan()
 * deletes both. */
char     *tomo_test_write_phantom (guint   width,
                                   guint   height,
                                   guint   n_proj,
                                   double  center_offset,
                                   char  **dir);
/* The same with dead pixels in its uint16 counts: every 53rd value 2
 * (below the dark: clamped) and column 17's flat equal to its dark (clamped
 * in every projection) — for comparing clamp counts. */
char     *tomo_test_write_dead_pixel_scan (guint   width,
                                           guint   height,
                                           guint   n_proj,
                                           double  center_offset,
                                           char  **dir);
void      tomo_test_remove_scan   (char   *path,
                                   char   *dir);
/* For main(): g_test_run(), then tomo_test_remove_scan (path, dir);
 * returns g_test_run()'s status. */
int       tomo_test_run_and_remove_scan (char *path,
                                         char *dir);
/* Opens a scan with the default options; the test fails if it cannot. */
TomoScan *tomo_test_open_scan     (const char *path);
/* ‖a − b‖₂ / ‖b‖₂ over n values (‖a − b‖₂ when b is all zero); every value
 * must be finite. */
double    tomo_test_rel_l2        (const float *a,
                                   const float *b,
                                   gsize        n);

/* A new engine on `backend` (the test fails if it is on another) with
 * `scan` set. */
TomoEngine *tomo_test_engine_new (TomoBackend  backend,
                                  TomoScan    *scan);

/* A blocking reconstruction of rows [row, row + n_slices) at `center`,
 * default parameters otherwise; an error fails the test. */
TomoSlice *tomo_test_reconstruct (TomoEngine *engine,
                                  guint       row,
                                  guint       n_slices,
                                  double      center);
/* The same with `kernel` asked for. */
TomoSlice *tomo_test_reconstruct_kernel (TomoEngine *engine,
                                         guint       row,
                                         guint       n_slices,
                                         double      center,
                                         TomoKernel  kernel);

/* Submits `request` to the engine's worker and runs the thread-default
 * main context until its slice arrives (30 s at most; an error fails the
 * test); the slice is the caller's. */
TomoSlice *tomo_test_submit (TomoEngine             *engine,
                             const TomoSliceRequest *request);
/* tomo_test_submit of row `row` at `center`, default parameters otherwise. */
TomoSlice *tomo_test_submit_row (TomoEngine *engine,
                                 guint       row,
                                 double      center);

/* Mean of the w × w image `img` over the disc at (cx, cy) of `radius`
 * pixels (more than 10 pixels, or the test fails). */
double    tomo_test_disc_mean     (const float *img,
                                   guint        w,
                                   double       cx,
                                   double       cy,
                                   double       radius);

/* A gate on the rows of a scan, for tests that must hold a read under way
 * while they do something else (no sleeps): tomo_test_gated_scan() gives a
 * derived scan of `base` whose rows are the base's plus the gate's offset
 * (0 at first); tomo_test_gate_arm (gate, row) makes the next read of
 * `row` stop until tomo_test_gate_open(); tomo_test_gate_wait() returns
 * once that read has stopped there.  The scan holds a reference to the
 * gate; the gate must be opened before the scan can be let go. */
typedef struct _TomoTestGate TomoTestGate;

TomoTestGate *tomo_test_gate_new        (void);
void          tomo_test_gate_unref      (TomoTestGate *gate);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoTestGate, tomo_test_gate_unref)
TomoScan     *tomo_test_gated_scan      (TomoScan     *base,
                                         TomoTestGate *gate);
void          tomo_test_gate_arm        (TomoTestGate *gate,
                                         guint         row);
void          tomo_test_gate_wait       (TomoTestGate *gate);
void          tomo_test_gate_open       (TomoTestGate *gate);
void          tomo_test_gate_set_offset (TomoTestGate *gate,
                                         float         offset);

/* Runs func (data) on a thread of its own and fails the test unless it
 * returns within `limit_ms` — a watchdog for calls that must not wait for
 * something the test holds (which would otherwise hang the test). */
void tomo_test_assert_returns (GThreadFunc  func,
                               gpointer     data,
                               guint        limit_ms,
                               const char  *what);

/* A new temporary folder from template `tmpl` (g_dir_make_tmp()); the test
 * fails if it cannot be made. */
char *tomo_test_make_tmp_dir (const char *tmpl);
/* Removes `path`: a file, or a folder with everything in it. */
void  tomo_test_remove_tree  (const char *path);
/* For main(): g_test_run(), then tomo_test_remove_tree (dir) and g_free (dir);
 * returns g_test_run()'s status. */
int   tomo_test_run_and_remove_tree (char *dir);

/* A GSourceFunc: sets the gboolean at `data` and removes the source. */
gboolean tomo_test_set_flag_cb (gpointer data);
/* Lets the default main context run for ms milliseconds. */
void     tomo_test_spin        (guint    ms);

/* Entries in folder `dir` (0 when it cannot be read). */
guint tomo_test_count_entries (const char *dir);

/* For main(): the value of environment variable `name`, which meson test
 * sets; where it is not set, the program says so and exits with status 1. */
const char *tomo_test_require_env (const char *name);

/* Adds `func` as test "<prefix>/<cpu|gpu>/<group>[/<name>]" with a
 * TomoTestBackendCase of `backend` and `item` (freed with the test); an
 * item that is not NULL begins with its name (a const char *). */
void tomo_test_add_backend_case (const char    *prefix,
                                 TomoBackend    backend,
                                 const char    *group,
                                 gconstpointer  item,
                                 GTestDataFunc  func);

/* The data of a test that tomo_test_add_backend_case() adds: the backend
 * it runs on and its case. */
typedef struct
{
  TomoBackend   backend;
  gconstpointer item;
} TomoTestBackendCase;

/* TRUE where a CUDA device is present; otherwise the test skips with
 * "no CUDA device: " and `why`, and FALSE. */
gboolean  tomo_test_need_gpu      (const char *why);
/* In a test function returning void: returns where tomo_test_need_gpu()
 * skips the test. */
#define TOMO_TEST_REQUIRE_GPU(why) \
  G_STMT_START { if (!tomo_test_need_gpu (why)) return; } G_STMT_END
/* TRUE for the CPU backend; for the GPU, tomo_test_need_gpu (why). */
gboolean  tomo_test_need_backend  (TomoBackend  backend,
                                   const char  *why);
/* Every one of the n values is finite. */
void      tomo_test_assert_finite (const float *v,
                                   gsize        n);
/* The same counts of values, clamped and replaced values. */
void      tomo_test_assert_stats_equal (const TomoPreprocessStats *a,
                                        const TomoPreprocessStats *b);

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

G_END_DECLS
