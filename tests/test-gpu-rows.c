/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A volume group's rows read on several threads: every row once, the same
 * bytes as one call at a time, the lowest failed row's error, stop
 * honoured; on a device, the whole volume with concurrent reads equal bit
 * for bit to the serial one.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-gpu.h"
#include "tomo-gpu-rows.h"
#include "tomo-filter.h"

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

static Rows *
rows_new (void)
{
  Rows *r = g_new0 (Rows, 1);

  r->out = g_new0 (guint32, (gsize) N_ROWS * ROW_LEN);
  r->fail_a = r->fail_b = G_MAXUINT;
  g_mutex_init (&r->order_lock);
  return r;
}

static void
rows_free (Rows *r)
{
  g_mutex_clear (&r->order_lock);
  g_free (r->out);
  g_free (r);
}

static void
test_serial_order (void)
{
  Rows *r = rows_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (_tomo_gpu_row_pool_run (NULL, N_ROWS, fill_row, r, NULL, &error));
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
  Rows *serial = rows_new (), *conc = rows_new ();
  TomoGpuRowPool *pool = _tomo_gpu_row_pool_new (3);
  g_autoptr(GError) error = NULL;

  g_assert_true (_tomo_gpu_row_pool_run (NULL, N_ROWS, fill_row, serial, NULL, &error));
  /* Several batches through one pool, as a worker does group after group. */
  for (guint pass = 0; pass < 3; pass++)
    {
      memset (conc->calls, 0, sizeof conc->calls);
      conc->n_order = 0;
      memset (conc->out, 0, (gsize) N_ROWS * ROW_LEN * sizeof (guint32));
      g_assert_true (_tomo_gpu_row_pool_run (pool, N_ROWS, fill_row, conc, NULL, &error));
      g_assert_no_error (error);
      for (guint i = 0; i < N_ROWS; i++)
        g_assert_cmpint (conc->calls[i], ==, 1);
      g_assert_cmpmem (conc->out, (gsize) N_ROWS * ROW_LEN * sizeof (guint32),
                       serial->out, (gsize) N_ROWS * ROW_LEN * sizeof (guint32));
    }
  /* It really ran rows at the same time (4 threads, 2 ms per row). */
  g_assert_cmpint (conc->max_in_flight, >=, 2);
  g_assert_cmpint (conc->max_in_flight, <=, 4);
  _tomo_gpu_row_pool_free (pool);
  rows_free (serial);
  rows_free (conc);
}

static void
test_lowest_error_wins (void)
{
  Rows *r = rows_new ();
  TomoGpuRowPool *pool = _tomo_gpu_row_pool_new (3);
  g_autoptr(GError) error = NULL;

  r->fail_a = 1;
  r->fail_b = 2;
  g_assert_false (_tomo_gpu_row_pool_run (pool, N_ROWS, fill_row, r, NULL, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_CUDA);
  g_assert_cmpstr (error->message, ==, "row 1 unreadable");
  /* No row twice, and after the failures no new rows were started: at most
   * the four threads' rows in flight plus the ones they took before. */
  for (guint i = 0; i < N_ROWS; i++)
    g_assert_cmpint (r->calls[i], <=, 1);
  g_assert_cmpuint (r->n_order, <, N_ROWS);
  _tomo_gpu_row_pool_free (pool);
  rows_free (r);
}

static void
test_stop (void)
{
  Rows *r = rows_new ();
  TomoGpuRowPool *pool = _tomo_gpu_row_pool_new (3);
  volatile gint stop = 1;
  g_autoptr(GError) error = NULL;

  g_assert_true (_tomo_gpu_row_pool_run (pool, N_ROWS, fill_row, r, &stop, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (r->n_order, ==, 0);
  _tomo_gpu_row_pool_free (pool);
  rows_free (r);
}

/* --- the whole volume on a device ----------------------------------------- */

#define V 96

typedef struct
{
  const guint16 *counts;  /* V rows × V projections × V */
  float *volume;          /* V slices × V × V */
  gint calls;
} VolumeSrc;

static gboolean
vol_read_raw (guint row, void *raw, float *flat, float *dark, gpointer user_data, GError **error)
{
  VolumeSrc *src = user_data;

  memcpy (raw, src->counts + (gsize) row * V * V, (gsize) V * V * sizeof (guint16));
  for (guint x = 0; x < V; x++)
    {
      flat[x] = 40100.0f - x;
      dark[x] = 100.0f + (row % 7);
    }
  g_atomic_int_inc (&src->calls);
  return TRUE;
}

static gboolean
vol_write (guint row, const float *slice, gpointer user_data, GError **error)
{
  VolumeSrc *src = user_data;

  memcpy (src->volume + (gsize) row * V * V, slice, (gsize) V * V * sizeof (float));
  return TRUE;
}

static void
test_volume_bitwise (void)
{
  g_autofree guint16 *counts = g_new (guint16, (gsize) V * V * V);
  g_autofree float *serial = g_new0 (float, (gsize) V * V * V);
  g_autofree float *conc = g_new0 (float, (gsize) V * V * V);
  g_autofree double *angles = g_new (double, V);
  g_autofree double *resp = NULL;
  guint padded;
  TomoGpuVolumeJob job;
  VolumeSrc src = { counts, NULL, 0 };
  double sum = 0;

  if (tomo_gpu_get_n_devices () == 0)
    {
      g_test_skip ("no CUDA device: tomo_gpu_get_n_devices() returned 0");
      return;
    }
  for (gsize i = 0; i < (gsize) V * V * V; i++)
    counts[i] = (guint16) (1000 + value ((guint) (i / 4096), (guint) (i % 4096)) % 39000);
  for (guint p = 0; p < V; p++)
    angles[p] = G_PI * p / V;
  resp = tomo_filter_fbp_response (TOMO_FILTER_RAMLAK, V, V, &padded);

  memset (&job, 0, sizeof job);
  job.width = V;
  job.n_proj = V;
  job.angles = angles;
  job.padded_width = padded;
  job.response = resp;
  tomo_gpu_backproject_params_init (&job.bp);
  job.bp.center = (V - 1) / 2.0 + 0.3;
  /* 91 rows: the last group is partly past the end. */
  job.row_start = 3;
  job.row_end = 94;
  job.read_raw = vol_read_raw;
  job.raw_type = TOMO_GPU_RAW_UINT16;
  job.normalise = job.apply_log = TRUE;
  job.write = vol_write;
  job.user_data = &src;

  for (int k = 0; k < 2; k++)
    {
      g_autoptr(GError) error = NULL;

      job.read_concurrent = k == 1;
      src.volume = k == 1 ? conc : serial;
      src.calls = 0;
      g_assert_true (tomo_gpu_reconstruct_volume (&job, &error));
      g_assert_no_error (error);
      g_assert_cmpint (src.calls, ==, 91);
    }
  for (gsize i = (gsize) 3 * V * V; i < (gsize) 94 * V * V; i++)
    sum += fabs (serial[i]);
  g_assert_true (isfinite (sum) && sum > 0);
  g_assert_cmpmem (conc, (gsize) V * V * V * sizeof (float), serial, (gsize) V * V * V * sizeof (float));
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
  return g_test_run ();
}
