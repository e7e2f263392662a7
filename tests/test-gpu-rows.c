/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A volume group's rows read on several threads: every row once, the same
 * bytes as one call at a time, the lowest failed row's error, stop
 * honoured; on a device, the whole volume with concurrent reads equal bit
 * for bit to the serial one, a failing row's error and a gap-free prefix
 * written, and buffers kept from one volume to the next (keep_resources)
 * giving the same volume bit for bit.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-gpu.h"
#include "tomo-gpu-rows.h"
#include "tomo-filter.h"
#include "tomo-test-util.h"

#define N_ROWS 37
#define ROW_LEN 4096

typedef struct
{
  guint32 *out;          /* N_ROWS × ROW_LEN */
  gint calls[N_ROWS];
  gint in_flight, max_in_flight;
  guint fail_a, fail_b;  /* indices that fail (G_MAXUINT: none) */
  GMutex order_lock;
  guint order[N_ROWS], n_order;
  TomoGpuRowPool *pool;  /* NULL: one row at a time */
} Rows;

static guint32
value (guint i, guint x)
{
  guint32 h = i * 2654435761u ^ (x * 40503u + 17u);

  return h ^ (h >> 13);
}

static gboolean
fill_row (guint i, gpointer data, GError **error)
{
  Rows *r = data;
  gint now = g_atomic_int_add (&r->in_flight, 1) + 1;
  gint max;

  while ((max = g_atomic_int_get (&r->max_in_flight)) < now &&
         !g_atomic_int_compare_and_exchange (&r->max_in_flight, max, now))
    ;
  g_atomic_int_inc (&r->calls[i]);
  g_mutex_lock (&r->order_lock);
  g_assert_cmpuint (r->n_order, <, N_ROWS);
  r->order[r->n_order++] = i;
  g_mutex_unlock (&r->order_lock);
  /* The lower failing row takes longer, so it fails after the higher. */
  g_usleep (i == r->fail_a ? 30000 : 2000);
  for (guint x = 0; x < ROW_LEN; x++)
    r->out[(gsize) i * ROW_LEN + x] = value (i, x);
  g_atomic_int_add (&r->in_flight, -1);
  if (i == r->fail_a || i == r->fail_b)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_CUDA, "row %u unreadable", i);
      return FALSE;
    }
  return TRUE;
}

/* Rows read by a pool of n_threads threads (0: by the caller, in order). */
static Rows *
rows_new (guint n_threads)
{
  Rows *r = g_new0 (Rows, 1);

  r->out = g_new0 (guint32, (gsize) N_ROWS * ROW_LEN);
  r->fail_a = r->fail_b = G_MAXUINT;
  g_mutex_init (&r->order_lock);
  if (n_threads > 0)
    r->pool = _tomo_gpu_row_pool_new (n_threads);
  return r;
}

static void
rows_free (Rows *r)
{
  g_clear_pointer (&r->pool, _tomo_gpu_row_pool_free);
  g_mutex_clear (&r->order_lock);
  g_free (r->out);
  g_free (r);
}

static void
test_serial_order (void)
{
  Rows *r = rows_new (0);
  g_autoptr(GError) error = NULL;

  g_assert_true (_tomo_gpu_row_pool_run (r->pool, N_ROWS, fill_row, r, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (r->n_order, ==, N_ROWS);
  for (guint i = 0; i < N_ROWS; i++)
    {
      g_assert_cmpuint (r->order[i], ==, i);
      g_assert_cmpint (r->calls[i], ==, 1);
    }
  g_assert_cmpint (r->max_in_flight, ==, 1);
  rows_free (r);
}

static void
test_concurrent_equals_serial (void)
{
  Rows *serial = rows_new (0), *conc = rows_new (3);
  g_autoptr(GError) error = NULL;

  g_assert_true (_tomo_gpu_row_pool_run (serial->pool, N_ROWS, fill_row, serial, NULL, &error));
  /* Several batches through one pool, as a worker does group after group. */
  for (guint pass = 0; pass < 3; pass++)
    {
      memset (conc->calls, 0, sizeof conc->calls);
      conc->n_order = 0;
      memset (conc->out, 0, (gsize) N_ROWS * ROW_LEN * sizeof (guint32));
      g_assert_true (_tomo_gpu_row_pool_run (conc->pool, N_ROWS, fill_row, conc, NULL, &error));
      g_assert_no_error (error);
      for (guint i = 0; i < N_ROWS; i++)
        g_assert_cmpint (conc->calls[i], ==, 1);
      g_assert_cmpmem (conc->out, (gsize) N_ROWS * ROW_LEN * sizeof (guint32),
                       serial->out, (gsize) N_ROWS * ROW_LEN * sizeof (guint32));
    }
  /* It really ran rows at the same time (4 threads, 2 ms per row). */
  g_assert_cmpint (conc->max_in_flight, >=, 2);
  g_assert_cmpint (conc->max_in_flight, <=, 4);
  rows_free (serial);
  rows_free (conc);
}

static void
test_lowest_error_wins (void)
{
  Rows *r = rows_new (3);
  g_autoptr(GError) error = NULL;

  r->fail_a = 1;
  r->fail_b = 2;
  g_assert_false (_tomo_gpu_row_pool_run (r->pool, N_ROWS, fill_row, r, NULL, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_CUDA);
  g_assert_cmpstr (error->message, ==, "row 1 unreadable");
  /* No row twice, and after the failures no new rows were started: at most
   * the four threads' rows in flight plus the ones they took before. */
  for (guint i = 0; i < N_ROWS; i++)
    g_assert_cmpint (r->calls[i], <=, 1);
  g_assert_cmpuint (r->n_order, <, N_ROWS);
  rows_free (r);
}

static void
test_stop (void)
{
  Rows *r = rows_new (3);
  volatile gint stop = 1;
  g_autoptr(GError) error = NULL;

  g_assert_true (_tomo_gpu_row_pool_run (r->pool, N_ROWS, fill_row, r, &stop, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (r->n_order, ==, 0);
  rows_free (r);
}

/* --- the whole volume on a device ----------------------------------------- */

#define V 96

typedef struct
{
  const guint16 *counts;  /* V rows × V projections × V */
  float *volume;          /* V slices × V × V */
  gint calls;
  gint row_calls[V];
  guint fail_a, fail_b;   /* rows whose read fails (G_MAXUINT: none); fail_a the slower */
  guint written[V], n_written;  /* rows in the order write saw them */
} VolumeSrc;

static gboolean
vol_read_raw (guint row, void *raw, float *flat, float *dark, gpointer user_data, GError **error)
{
  VolumeSrc *src = user_data;

  g_atomic_int_inc (&src->row_calls[row]);
  if (row == src->fail_a || row == src->fail_b)
    {
      /* The lower failing row fails last. */
      g_usleep (row == src->fail_a ? 30000 : 1000);
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_CUDA, "row %u unreadable", row);
      return FALSE;
    }
  memcpy (raw, src->counts + (gsize) row * V * V, (gsize) V * V * sizeof (guint16));
  for (guint x = 0; x < V; x++)
    {
      flat[x] = 40100.0f - x;
      dark[x] = 100.0f + (row % 7);
    }
  g_atomic_int_inc (&src->calls);
  return TRUE;
}

/* The same rows as line integrals, for a job of another layout (float input). */
static gboolean
vol_read (guint row, float *sino, gpointer user_data, GError **error)
{
  VolumeSrc *src = user_data;

  g_atomic_int_inc (&src->row_calls[row]);
  for (gsize i = 0; i < (gsize) V * V; i++)
    sino[i] = src->counts[(gsize) row * V * V + i] * 1e-4f;
  g_atomic_int_inc (&src->calls);
  return TRUE;
}

static gboolean
vol_write (guint row, const float *slice, gpointer user_data, GError **error)
{
  VolumeSrc *src = user_data;

  memcpy (src->volume + (gsize) row * V * V, slice, (gsize) V * V * sizeof (float));
  g_assert_cmpuint (src->n_written, <, V);
  src->written[src->n_written++] = row;
  return TRUE;
}

typedef struct
{
  guint16 *counts;
  double angles[V];
  double *resp;
  TomoGpuVolumeJob job;
  VolumeSrc src;
} VolumeFixture;

/* 91 rows of V × V uint16 counts (rows 3 … 93: the last group is partly
 * past the end), read raw; FALSE without a device. */
static gboolean
volume_fixture_init (VolumeFixture *f)
{
  guint padded;

  memset (f, 0, sizeof *f);
  if (!tomo_test_need_gpu ("tomo_gpu_get_n_devices() returned 0"))
    return FALSE;
  f->counts = g_new (guint16, (gsize) V * V * V);
  for (gsize i = 0; i < (gsize) V * V * V; i++)
    f->counts[i] = (guint16) (1000 + value ((guint) (i / 4096), (guint) (i % 4096)) % 39000);
  for (guint p = 0; p < V; p++)
    f->angles[p] = G_PI * p / V;
  f->resp = tomo_filter_fbp_response (TOMO_FILTER_RAMLAK, V, V, &padded);
  f->job.width = V;
  f->job.n_proj = V;
  f->job.angles = f->angles;
  f->job.padded_width = padded;
  f->job.response = f->resp;
  tomo_gpu_backproject_params_init (&f->job.bp);
  f->job.bp.center = (V - 1) / 2.0 + 0.3;
  f->job.row_start = 3;
  f->job.row_end = 94;
  f->job.read_raw = vol_read_raw;
  f->job.raw_type = TOMO_GPU_RAW_UINT16;
  f->job.normalise = f->job.apply_log = TRUE;
  f->job.write = vol_write;
  f->job.user_data = &f->src;
  f->src.counts = f->counts;
  f->src.fail_a = f->src.fail_b = G_MAXUINT;
  return TRUE;
}

/* Runs the fixture's job into `volume`; every row read once, written once
 * in row order. */
static void
run_volume (VolumeFixture *f,
            float         *volume)
{
  g_autoptr(GError) error = NULL;

  f->src.volume = volume;
  f->src.calls = 0;
  f->src.n_written = 0;
  memset (f->src.row_calls, 0, sizeof f->src.row_calls);
  g_assert_true (tomo_gpu_reconstruct_volume (&f->job, &error));
  g_assert_no_error (error);
  g_assert_cmpint (f->src.calls, ==, 91);
  g_assert_cmpuint (f->src.n_written, ==, 91);
  for (guint i = 0; i < 91; i++)
    g_assert_cmpuint (f->src.written[i], ==, 3 + i);
  for (guint r = 3; r < 94; r++)
    g_assert_cmpint (f->src.row_calls[r], ==, 1);
}

static void
volume_fixture_clear (VolumeFixture *f)
{
  g_free (f->counts);
  g_free (f->resp);
}

static void
assert_volumes_equal (const float *a,
                      const float *b)
{
  double sum = 0;

  for (gsize i = (gsize) 3 * V * V; i < (gsize) 94 * V * V; i++)
    sum += fabs (a[i]);
  g_assert_true (isfinite (sum) && sum > 0);
  if (memcmp (a, b, (gsize) V * V * V * sizeof (float)) != 0)
    {
      gsize n_diff = 0, first = G_MAXSIZE, last = 0;
      double max_diff = 0;

      for (gsize i = 0; i < (gsize) V * V * V; i++)
        if (a[i] != b[i])
          {
            n_diff++;
            first = MIN (first, i);
            last = i;
            max_diff = MAX (max_diff, fabs ((double) a[i] - b[i]));
          }
      g_test_message ("%" G_GSIZE_FORMAT " values differ, slices %" G_GSIZE_FORMAT " to %"
                      G_GSIZE_FORMAT ", largest difference %g", n_diff, first / ((gsize) V * V),
                      last / ((gsize) V * V), max_diff);
    }
  g_assert_cmpmem (a, (gsize) V * V * V * sizeof (float), b, (gsize) V * V * V * sizeof (float));
}

static void
test_volume_bitwise (void)
{
  VolumeFixture f;
  g_autofree float *serial = g_new0 (float, (gsize) V * V * V);
  g_autofree float *conc = g_new0 (float, (gsize) V * V * V);

  if (!volume_fixture_init (&f))
    return;
  run_volume (&f, serial);
  f.job.read_concurrent = TRUE;
  run_volume (&f, conc);
  assert_volumes_equal (conc, serial);
  volume_fixture_clear (&f);
}

/* Two rows of one group fail, the lower one last: serial and concurrent
 * reads report the lower row, and what was written is a gap-free prefix in
 * row order, equal to the volume without failures, before the failed row. */
static void
test_volume_failing_row (void)
{
  VolumeFixture f;
  g_autofree float *ref = g_new0 (float, (gsize) V * V * V);

  if (!volume_fixture_init (&f))
    return;
  run_volume (&f, ref);
  for (int k = 0; k < 2; k++)
    {
      g_autofree float *part = g_new0 (float, (gsize) V * V * V);
      g_autoptr(GError) error = NULL;

      f.job.read_concurrent = k == 1;
      f.src.volume = part;
      f.src.n_written = 0;
      f.src.calls = 0;
      memset (f.src.row_calls, 0, sizeof f.src.row_calls);
      /* Group 10 holds rows 43 … 46. */
      f.src.fail_a = 44;
      f.src.fail_b = 45;
      g_assert_false (tomo_gpu_reconstruct_volume (&f.job, &error));
      g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_CUDA);
      g_assert_cmpstr (error->message, ==, "row 44 unreadable");
      g_assert_cmpuint (f.src.n_written, <=, 44 - 3);
      for (guint i = 0; i < f.src.n_written; i++)
        {
          guint row = f.src.written[i];

          g_assert_cmpuint (row, ==, 3 + i);
          g_assert_cmpmem (part + (gsize) row * V * V, (gsize) V * V * sizeof (float),
                           ref + (gsize) row * V * V, (gsize) V * V * sizeof (float));
        }
      for (guint r = 0; r < V; r++)
        g_assert_cmpint (f.src.row_calls[r], <=, 1);
      /* Serially row 45 is never reached. */
      if (k == 0)
        g_assert_cmpint (f.src.row_calls[45], ==, 0);
    }
  volume_fixture_clear (&f);
}

/* Runs the job into `out` (cleared first): the volume `ref` bit for bit,
 * the kept buffers reused or not as `kept` says. */
static void
run_and_compare (VolumeFixture *f,
                 float         *out,
                 const float   *ref,
                 gboolean       kept)
{
  memset (out, 0, (gsize) V * V * V * sizeof (float));
  g_test_message ("volume: %s input, %s, keep_resources %d, buffers %s",
                  f->job.read_raw != NULL ? "raw" : "float", f->job.bp.interp ? "linear" : "nearest",
                  f->job.keep_resources, kept ? "kept" : "new");
  run_volume (f, out);
  g_assert_cmpint (f->job.stats->kept, ==, kept);
  assert_volumes_equal (out, ref);
}

/* Rows resampled along themselves after preprocessing, as a tilt
 * correction asks: a shift of 0.25 px per row from row 48 (Catmull–Rom). */
static void
vol_row_taps (guint    row,
              int     *offset,
              float    weights[4],
              gpointer user_data)
{
  double s = 0.25 * ((double) row - 48.0), whole = floor (s);
  float x = (float) (s - whole);

  *offset = (int) whole - 1;
  weights[0] = ((-x + 2.0f) * x - 1.0f) * x * 0.5f;
  weights[1] = ((3.0f * x - 5.0f) * x * x + 2.0f) * 0.5f;
  weights[2] = ((-3.0f * x + 4.0f) * x + 1.0f) * x * 0.5f;
  weights[3] = (x - 1.0f) * x * x * 0.5f;
}

/* keep_resources: the second volume of the same layout reuses the first's
 * buffers and plans and is bit for bit the volume made from scratch, also
 * with another interpolation and with rows resampled (an axis tilt) or not,
 * alternately; a job of another layout (float input) does not reuse them
 * and is right too. */
static void
test_volume_kept (void)
{
  VolumeFixture f;
  TomoGpuVolumeStats st;
  g_autofree float *ref = g_new0 (float, (gsize) V * V * V);
  g_autofree float *ref_nearest = g_new0 (float, (gsize) V * V * V);
  g_autofree float *ref_float = g_new0 (float, (gsize) V * V * V);
  g_autofree float *ref_shifted = g_new0 (float, (gsize) V * V * V);
  g_autofree float *out = g_new0 (float, (gsize) V * V * V);

  if (!volume_fixture_init (&f))
    return;
  f.job.stats = &st;
  run_volume (&f, ref);
  g_assert_false (st.kept);
  f.job.row_taps = vol_row_taps;
  run_volume (&f, ref_shifted);
  g_assert_false (st.kept);
  f.job.row_taps = NULL;
  /* The resampling did something. */
  g_assert_cmpfloat (tomo_test_rel_l2 (ref_shifted, ref, (gsize) V * V * V), >, 1e-3);
  f.job.bp.interp = 0;
  run_volume (&f, ref_nearest);
  f.job.bp.interp = 1;
  f.job.read_raw = NULL;
  f.job.read = vol_read;
  run_volume (&f, ref_float);
  f.job.read = NULL;
  f.job.read_raw = vol_read_raw;

  f.job.keep_resources = TRUE;
  f.job.read_concurrent = TRUE;
  run_and_compare (&f, out, ref, FALSE);
  run_and_compare (&f, out, ref, TRUE);
  /* Tilted, untilted, tilted: the same buffers each time. */
  f.job.row_taps = vol_row_taps;
  run_and_compare (&f, out, ref_shifted, TRUE);
  f.job.row_taps = NULL;
  run_and_compare (&f, out, ref, TRUE);
  f.job.row_taps = vol_row_taps;
  run_and_compare (&f, out, ref_shifted, TRUE);
  f.job.row_taps = NULL;
  f.job.bp.interp = 0;
  run_and_compare (&f, out, ref_nearest, TRUE);
  /* Float input: another slot layout, made anew. */
  f.job.bp.interp = 1;
  f.job.read_raw = NULL;
  f.job.read = vol_read;
  run_and_compare (&f, out, ref_float, FALSE);
  /* A job without keep_resources takes them over and frees them. */
  f.job.keep_resources = FALSE;
  run_and_compare (&f, out, ref_float, TRUE);
  run_and_compare (&f, out, ref_float, FALSE);
  tomo_gpu_volume_release_kept ();
  tomo_gpu_volume_release_kept ();
  volume_fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gpu-rows/serial-order", test_serial_order);
  g_test_add_func ("/gpu-rows/concurrent-equals-serial", test_concurrent_equals_serial);
  g_test_add_func ("/gpu-rows/lowest-error-wins", test_lowest_error_wins);
  g_test_add_func ("/gpu-rows/stop", test_stop);
  g_test_add_func ("/gpu-rows/volume-bitwise", test_volume_bitwise);
  g_test_add_func ("/gpu-rows/volume-failing-row", test_volume_failing_row);
  g_test_add_func ("/gpu-rows/volume-kept", test_volume_kept);
  return g_test_run ();
}
