/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The engine itself: caching, slice-parallel requests, "latest wins",
 * volumes (progress, cancellation) and backend selection.  The cases that
 * every backend must pass (slices against the reference, statistics, bad
 * requests) are in test-backend.c.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-engine.h"
#include "tomo-error.h"
#include "tomo-fbp.h"
#include "tomo-scan-private.h"
#include "tomo-test-util.h"

static char *tmp_dir;
static char *scan_path;
static gboolean have_gpu;

#define WIDTH 96
#define HEIGHT 6
#define N_PROJ 72

/* A new centre re-uses the filtered sinogram (no filtering time) and gives
 * the same slice as a fresh engine would. */
static void
test_cache_reuses_filtered (void)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  g_autoptr(TomoEngine) fresh = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  g_autoptr(TomoSlice) first = tomo_test_reconstruct (engine, 2, 1, 47.0);
  g_autoptr(TomoSlice) second = tomo_test_reconstruct (engine, 2, 1, 49.25);
  g_autoptr(TomoSlice) expect = tomo_test_reconstruct (fresh, 2, 1, 49.25);

  g_assert_cmpfloat (first->filter_ms, >, 0.0);
  g_assert_cmpfloat (second->filter_ms, ==, 0.0);
  g_assert_cmpmem (second->data, WIDTH * WIDTH * sizeof (float),
                   expect->data, WIDTH * WIDTH * sizeof (float));
  /* ... and the centre did change the picture. */
  g_assert_cmpfloat (tomo_test_rel_l2 (first->data, second->data, WIDTH * WIDTH), >, 1e-3);
}

/* 2 and 4 slices reconstructed together equal the rows one by one. */
static void
test_slice_parallel (void)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  gsize plane = WIDTH * WIDTH;

  for (guint n = 2; n <= 4; n *= 2)
    {
      g_autoptr(TomoSlice) group = tomo_test_reconstruct (engine, 1, n, 48.0);

      g_assert_cmpuint (group->n_slices, ==, n);
      for (guint s = 0; s < n; s++)
        {
          g_autoptr(TomoSlice) one = tomo_test_reconstruct (engine, 1 + s, 1, 48.0);

          g_assert_cmpmem (group->data + s * plane, plane * sizeof (float),
                           one->data, plane * sizeof (float));
        }
    }
}

/* --- latest wins ------------------------------------------------------- */

static void
test_submit_latest_wins (void)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  g_auto(TomoTestAnswers) answers = { 0 };
  const guint n = 40;
  const double last = 40.0 + (n - 1) * 0.25;
  gint64 deadline;

  /* A burst of slider events, faster than they can be reconstructed. */
  for (guint i = 0; i < n; i++)
    {
      TomoSliceRequest request;

      tomo_slice_request_init (&request, scan);
      request.params.center = 40.0 + i * 0.25;
      tomo_engine_submit (engine, &request, tomo_test_answers_cb, &answers);
    }
  deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while ((answers.slice == NULL || answers.slice->params.center != last)
         && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);

  g_assert_cmpuint (answers.n_errors, ==, 0);
  g_assert_nonnull (answers.slice);
  g_assert_cmpfloat (answers.slice->params.center, ==, last);
  /* Superseded requests were dropped, not queued. */
  g_assert_cmpuint (answers.n_answers, <, n);
  g_assert_cmpuint (answers.n_answers, >=, 1);

  /* Nothing more arrives afterwards. */
  {
    guint seen = answers.n_answers;
    gint64 until = g_get_monotonic_time () + G_USEC_PER_SEC / 5;

    while (g_get_monotonic_time () < until)
      g_main_context_iteration (NULL, FALSE);
    g_assert_cmpuint (answers.n_answers, ==, seen);
  }
}

/* --- row prefetch while scrubbing --------------------------------------- */

/* After a slice of row 1, the rows around it are read in the background;
 * the next row is then served without touching the file, and its slice is
 * bit for bit the one an engine without prefetch makes. */
static void
test_prefetch_serves_from_cache (void)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoScan) plain_scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  g_autoptr(TomoEngine) plain = tomo_test_engine_new (TOMO_BACKEND_CPU, plain_scan);
  g_autoptr(TomoSlice) first = NULL, second = NULL, reference = NULL;
  guint64 reads;

  tomo_engine_set_prefetch (plain, 0, 0);
  first = tomo_test_submit_row (engine, 1, (WIDTH - 1) / 2.0);
  /* 4 ahead (2..5), and of 2 behind only row 0 exists. */
  g_assert_cmpuint (tomo_engine_wait_prefetch (engine), ==, 5);
  reads = _tomo_scan_get_n_row_reads (scan);
  g_assert_cmpuint (reads, ==, 6);

  second = tomo_test_submit_row (engine, 2, (WIDTH - 1) / 2.0);
  tomo_engine_wait_prefetch (engine);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), ==, reads);

  reference = tomo_test_submit_row (plain, 2, (WIDTH - 1) / 2.0);
  g_assert_cmpuint (tomo_engine_wait_prefetch (plain), ==, 0);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (plain_scan), ==, 1);
  g_assert_cmpuint (second->width * second->height, ==, reference->width * reference->height);
  g_assert_cmpmem (second->data, sizeof (float) * second->width * second->height,
                   reference->data, sizeof (float) * reference->width * reference->height);
}

/* A new scan drops the rows still queued for the old one (a read under
 * way finishes), and disposing the engine mid-read stops the reader: no
 * row of the scan is read afterwards. */
static void
test_prefetch_scan_change_and_dispose (void)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoScan) other = tomo_test_open_scan (scan_path);
  g_autoptr(TomoSlice) slice = NULL;
  TomoEngine *engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  guint64 at_change, at_dispose;

  slice = tomo_test_submit_row (engine, 0, (WIDTH - 1) / 2.0);
  tomo_engine_set_scan (engine, other);
  at_change = _tomo_scan_get_n_row_reads (scan);
  tomo_engine_wait_prefetch (engine);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (scan), <=, at_change + 1);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (other), ==, 0);

  g_clear_pointer (&slice, tomo_slice_unref);
  slice = tomo_test_submit_row (engine, 3, (WIDTH - 1) / 2.0);
  g_object_unref (engine);   /* while rows around 3 are being read */
  at_dispose = _tomo_scan_get_n_row_reads (other);
  g_usleep (G_USEC_PER_SEC / 10);
  g_assert_cmpuint (_tomo_scan_get_n_row_reads (other), ==, at_dispose);
  g_assert_cmpuint (at_dispose, >=, 1);
}

/* --- volumes ----------------------------------------------------------- */

static void
test_volume (void)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  g_autoptr(GError) error = NULL;
  g_auto(TomoTestVolume) state = { 0 };
  TomoReconParams params;

  tomo_recon_params_init (&params, WIDTH);
  tomo_test_volume_init (&state, 1, WIDTH, WIDTH);
  g_assert_true (tomo_engine_reconstruct_volume (engine, 1, 5, &params, TOMO_KERNEL_AUTO,
                                                 tomo_test_volume_sink, tomo_test_volume_progress,
                                                 &state, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (state.slices->len, ==, 4);
  g_assert_cmpuint (state.progress_total, ==, 4);
  g_assert_cmpuint (state.progress_calls, >=, 1);
  /* Each slice of the volume is the single-slice reconstruction of its row. */
  for (guint i = 0; i < 4; i++)
    {
      g_autoptr(TomoSlice) one = tomo_test_reconstruct (engine, 1 + i, 1, params.center);

      g_assert_cmpmem (state.slices->pdata[i], WIDTH * WIDTH * sizeof (float),
                       one->data, WIDTH * WIDTH * sizeof (float));
    }

  /* Out of range. */
  g_assert_false (tomo_engine_reconstruct_volume (engine, 4, HEIGHT + 1, &params, 0,
                                                  tomo_test_volume_sink, NULL, &state, NULL,
                                                  &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM);
  g_clear_error (&error);

  /* Cancelled after two rows: stops with G_IO_ERROR_CANCELLED. */
  tomo_test_volume_clear (&state);
  tomo_test_volume_init (&state, 0, WIDTH, WIDTH);
  state.cancellable = g_cancellable_new ();
  state.cancel_after = 2;
  g_assert_false (tomo_engine_reconstruct_volume (engine, 0, HEIGHT, &params, 0,
                                                  tomo_test_volume_sink, NULL, &state,
                                                  state.cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (state.slices->len, ==, 2);
}

/* --- threads: scan and backend changes while computing ------------------ */

/* Every answer of the worker, in order: the error's code (-1 for a slice)
 * and the slice's width. */
typedef struct
{
  GArray *codes;
  GArray *widths;
} Answers;

static void
answers_init (Answers *a)
{
  a->codes = g_array_new (FALSE, FALSE, sizeof (int));
  a->widths = g_array_new (FALSE, FALSE, sizeof (guint));
}

static void
answers_clear (Answers *a)
{
  g_clear_pointer (&a->codes, g_array_unref);
  g_clear_pointer (&a->widths, g_array_unref);
}

static void
answers_cb (TomoEngine   *engine,
            TomoSlice    *slice,
            const GError *error,
            gpointer      user_data)
{
  Answers *a = user_data;
  int code = -1;
  guint width = slice != NULL ? slice->width : 0;

  if (error != NULL)
    {
      g_test_message ("answer: %s", error->message);
      g_assert_true (error->domain == TOMO_RECON_ERROR);
      code = error->code;
    }
  g_array_append_val (a->codes, code);
  g_array_append_val (a->widths, width);
}

static void
answers_wait (Answers *a,
              guint    n)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  while (a->codes->len < n && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (a->codes->len, ==, n);
}

#define ANSWER_CODE(a, i) g_array_index ((a)->codes, int, (i))
#define ANSWER_WIDTH(a, i) g_array_index ((a)->widths, guint, (i))

static void
submit_row (TomoEngine *engine,
            TomoScan   *scan,
            guint       row,
            Answers    *answers)
{
  TomoSliceRequest request;

  tomo_slice_request_init (&request, scan);
  request.row = row;
  tomo_engine_submit (engine, &request, answers_cb, answers);
}

typedef struct
{
  TomoEngine *engine;
  TomoScan *scan;
  gboolean gpu_ok;
  TomoBackend backend;
} Change;

static gpointer
set_scan_thread (gpointer data)
{
  Change *c = data;

  tomo_engine_set_scan (c->engine, c->scan);
  return NULL;
}

static gpointer
switch_backends_thread (gpointer data)
{
  Change *c = data;

  /* Off the CPU and back (on a machine without a GPU the first fails). */
  c->gpu_ok = tomo_engine_set_backend (c->engine, TOMO_BACKEND_GPU, NULL);
  g_assert_true (tomo_engine_set_backend (c->engine, TOMO_BACKEND_CPU, NULL));
  c->backend = tomo_engine_get_backend (c->engine);
  g_assert_nonnull (tomo_engine_get_device_name (c->engine));
  return NULL;
}

/* A small scan of 3 rows and another width: rows of the test scan are out
 * of its range. */
static char *
write_small_scan (char **dir)
{
  return tomo_test_write_phantom (64, 3, 40, 0.0, dir);
}

/* While the worker reads a row for a slice (held at a gate), the UI
 * thread's tomo_engine_set_scan() returns at once; the request being
 * computed is answered cancelled, the one waiting for the old scan is
 * dropped (never run against the new scan: "Row 4 is out of range"), and
 * the next request is the new scan's. */
static void
test_set_scan_during_slice (void)
{
  g_autoptr(TomoScan) base = tomo_test_open_scan (scan_path);
  g_autoptr(TomoTestGate) gate = tomo_test_gate_new ();
  g_autoptr(TomoScan) scan = tomo_test_gated_scan (base, gate);
  g_autofree char *small_dir = NULL;
  g_autofree char *small_path = write_small_scan (&small_dir);
  g_autoptr(TomoScan) small = tomo_test_open_scan (small_path);
  g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  Answers first, waiting, next;
  Change change = { engine, small };

  answers_init (&first);
  answers_init (&waiting);
  answers_init (&next);
  /* The prefetcher would read rows of its own through the gate. */
  tomo_engine_set_prefetch (engine, 0, 0);
  tomo_test_gate_arm (gate, 1);
  submit_row (engine, scan, 1, &first);
  tomo_test_gate_wait (gate);
  /* The worker is in row 1's read: this one waits in the pending slot. */
  submit_row (engine, scan, 4, &waiting);

  tomo_test_assert_returns (set_scan_thread, &change, 10000,
                            "tomo_engine_set_scan() during a slice");
  tomo_test_gate_open (gate);
  answers_wait (&first, 1);
  g_assert_cmpint (ANSWER_CODE (&first, 0), ==, TOMO_RECON_ERROR_CANCELLED);

  /* Answers come in order: once the next one is in, any for row 4 would
   * have come before it. */
  submit_row (engine, small, 1, &next);
  answers_wait (&next, 1);
  g_assert_cmpint (ANSWER_CODE (&next, 0), ==, -1);
  g_assert_cmpuint (ANSWER_WIDTH (&next, 0), ==, 64);
  g_assert_cmpuint (waiting.codes->len, ==, 0);

  answers_clear (&first);
  answers_clear (&waiting);
  answers_clear (&next);
  g_clear_object (&engine);
  tomo_test_remove_scan (g_steal_pointer (&small_path), g_steal_pointer (&small_dir));
}

typedef struct
{
  TomoEngine *engine;
  TomoTestVolume state;
  gboolean ok;
  GError *error;
} VolumeRun;

static gpointer
volume_thread (gpointer data)
{
  VolumeRun *v = data;
  TomoReconParams params;

  tomo_recon_params_init (&params, WIDTH);
  v->ok = tomo_engine_reconstruct_volume (v->engine, 0, HEIGHT, &params, TOMO_KERNEL_AUTO,
                                          tomo_test_volume_sink, NULL, &v->state, NULL,
                                          &v->error);
  return NULL;
}

/* While a volume computes (its reader held at a gate), the UI thread's
 * tomo_engine_set_scan() and tomo_engine_set_backend() return at once; the
 * volume goes on with its scan — which the engine and the test no longer
 * hold — and gives the slices of that scan; the next request runs on the
 * new scan. */
static void
test_set_scan_during_volume (void)
{
  g_autoptr(TomoScan) base = tomo_test_open_scan (scan_path);
  g_autoptr(TomoTestGate) gate = tomo_test_gate_new ();
  TomoScan *scan = tomo_test_gated_scan (base, gate);
  g_autofree char *small_dir = NULL;
  g_autofree char *small_path = write_small_scan (&small_dir);
  g_autoptr(TomoScan) small = tomo_test_open_scan (small_path);
  g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  g_autoptr(TomoEngine) reference = tomo_test_engine_new (TOMO_BACKEND_CPU, base);
  g_autoptr(TomoSlice) after = NULL;
  Change change = { engine, small };
  VolumeRun run = { engine };
  GThread *thread;
  double center = (WIDTH - 1) / 2.0;

  tomo_engine_set_prefetch (engine, 0, 0);
  tomo_test_volume_init (&run.state, 0, WIDTH, WIDTH);
  tomo_test_gate_arm (gate, 3);
  thread = g_thread_new ("volume", volume_thread, &run);
  tomo_test_gate_wait (gate);

  tomo_test_assert_returns (set_scan_thread, &change, 10000,
                            "tomo_engine_set_scan() during a volume");
  tomo_test_assert_returns (switch_backends_thread, &change, 10000,
                            "tomo_engine_set_backend() during a volume");
  g_assert_cmpint (change.backend, ==, TOMO_BACKEND_CPU);
  g_assert_true (tomo_engine_get_scan (engine) == small);
  /* Only the volume holds the scan now. */
  g_clear_object (&scan);
  tomo_test_gate_open (gate);
  g_thread_join (thread);
  g_assert_no_error (run.error);
  g_assert_true (run.ok);

  g_assert_cmpuint (run.state.slices->len, ==, HEIGHT);
  for (guint row = 0; row < HEIGHT; row++)
    {
      g_autoptr(TomoSlice) want = tomo_test_reconstruct (reference, row, 1, center);

      g_assert_cmpmem (run.state.slices->pdata[row], WIDTH * WIDTH * sizeof (float),
                       want->data, WIDTH * WIDTH * sizeof (float));
    }
  after = tomo_test_reconstruct (engine, 1, 1, (64 - 1) / 2.0);
  g_assert_cmpuint (after->width, ==, 64);

  tomo_test_volume_clear (&run.state);
  g_clear_object (&engine);
  tomo_test_remove_scan (g_steal_pointer (&small_path), g_steal_pointer (&small_dir));
}

/* Scan changes racing submitted requests, as the window's file opens and
 * live-link ticks do: whatever the interleaving, a request is answered with
 * a slice of the scan it was made for, or cancelled, or dropped — never
 * with an error of the other scan (row 4 is out of the small one's range). */
static void
test_stale_requests (void)
{
  g_autoptr(TomoScan) scan = tomo_test_open_scan (scan_path);
  g_autofree char *small_dir = NULL;
  g_autofree char *small_path = write_small_scan (&small_dir);
  g_autoptr(TomoScan) small = tomo_test_open_scan (small_path);
  g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);
  guint n_cancelled = 0, n_slices = 0;
  Answers answers;

  answers_init (&answers);
  tomo_engine_set_prefetch (engine, 0, 0);
  for (guint i = 0; i < 100; i++)
    {
      guint seen = answers.codes->len;

      tomo_engine_set_scan (engine, scan);
      submit_row (engine, scan, 4, &answers);
      tomo_engine_set_scan (engine, small);
      /* Answers come in order: the small scan's closes the round. */
      submit_row (engine, small, 1, &answers);
      while (answers.codes->len == seen
             || ANSWER_WIDTH (&answers, answers.codes->len - 1) != 64)
        {
          g_assert_true (answers.codes->len <= seen + 2);
          g_main_context_iteration (NULL, TRUE);
        }
      for (guint k = seen; k < answers.codes->len - 1; k++)
        {
          if (ANSWER_CODE (&answers, k) == -1)
            {
              g_assert_cmpuint (ANSWER_WIDTH (&answers, k), ==, WIDTH);
              n_slices++;
            }
          else
            {
              g_assert_cmpint (ANSWER_CODE (&answers, k), ==, TOMO_RECON_ERROR_CANCELLED);
              n_cancelled++;
            }
        }
    }
  g_test_message ("row 4 of the first scan: %u slices, %u cancelled, %u dropped", n_slices,
                  n_cancelled, 100 - n_slices - n_cancelled);
  answers_clear (&answers);
  g_clear_object (&engine);
  tomo_test_remove_scan (g_steal_pointer (&small_path), g_steal_pointer (&small_dir));
}

/* --- backends ---------------------------------------------------------- */

static void
test_gpu_unavailable (void)
{
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(GError) error = NULL;

  if (have_gpu)
    {
      g_test_skip ("a CUDA device is present: the no-GPU fallback cannot be exercised");
      return;
    }
  engine = tomo_engine_new (TOMO_BACKEND_AUTO);
  g_assert_cmpint (tomo_engine_get_backend (engine), ==, TOMO_BACKEND_CPU);
  g_assert_false (tomo_engine_has_gpu (engine));
  g_assert_true (g_str_has_prefix (tomo_engine_get_device_name (engine), "CPU"));
  g_assert_false (tomo_engine_set_backend (engine, TOMO_BACKEND_GPU, &error));
  g_assert_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_BACKEND);
  g_assert_nonnull (strstr (error->message, "GPU"));
  g_assert_cmpint (tomo_engine_get_backend (engine), ==, TOMO_BACKEND_CPU);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  have_gpu = tomo_engine_count_gpus () > 0;
  scan_path = tomo_test_write_phantom (WIDTH, HEIGHT, N_PROJ, 1.5, &tmp_dir);

  g_test_add_func ("/tomo/engine/cache/reuses-filtered", test_cache_reuses_filtered);
  g_test_add_func ("/tomo/engine/slice-parallel", test_slice_parallel);
  g_test_add_func ("/tomo/engine/submit/latest-wins", test_submit_latest_wins);
  g_test_add_func ("/tomo/engine/prefetch/serves-from-cache", test_prefetch_serves_from_cache);
  g_test_add_func ("/tomo/engine/prefetch/scan-change-and-dispose", test_prefetch_scan_change_and_dispose);
  g_test_add_func ("/tomo/engine/volume", test_volume);
  g_test_add_func ("/tomo/engine/threads/set-scan-during-slice", test_set_scan_during_slice);
  g_test_add_func ("/tomo/engine/threads/set-scan-during-volume", test_set_scan_during_volume);
  g_test_add_func ("/tomo/engine/threads/stale-requests", test_stale_requests);
  g_test_add_func ("/tomo/engine/gpu/unavailable", test_gpu_unavailable);
  return tomo_test_run_and_remove_scan (scan_path, tmp_dir);
}
