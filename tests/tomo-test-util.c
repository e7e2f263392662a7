/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include "tomo-phantom.h"
#include "tomo-scan-private.h"
#include "tomo-test-util.h"

void
tomo_test_phantom_params (TomoPhantomParams *p,
                          guint              width,
                          guint              height,
                          guint              n_proj)
{
  tomo_phantom_params_init (p);
  tomo_phantom_params_set_size (p, width, height, n_proj);
  p->noise = FALSE;
}

double *
tomo_test_half_turn (guint n)
{
  double *angles = g_new (double, n);

  for (guint i = 0; i < n; i++)
    angles[i] = G_PI * i / n;
  return angles;
}

char *
tomo_test_write_phantom (guint   width,
                         guint   height,
                         guint   n_proj,
                         double  center_offset,
                         char  **dir)
{
  g_autoptr(GError) error = NULL;
  TomoPhantomParams p;
  char *path;

  *dir = tomo_test_make_tmp_dir ("tomo-test-XXXXXX");
  path = g_build_filename (*dir, "phantom.h5", NULL);
  tomo_test_phantom_params (&p, width, height, n_proj);
  p.center = (width - 1) / 2.0 + center_offset;
  if (!tomo_phantom_write_dxchange (&p, path, &error))
    g_error ("cannot write the test scan: %s", error->message);
  return path;
}

/* A whole 3-D uint16 dataset of `file`, open in *dset, its sizes in dims. */
static guint16 *
read_u16 (hid_t       file,
          const char *name,
          hid_t      *dset,
          hsize_t     dims[3])
{
  hid_t space;
  guint16 *v;

  *dset = H5Dopen2 (file, name, H5P_DEFAULT);
  g_assert_cmpint (*dset, >=, 0);
  space = H5Dget_space (*dset);
  g_assert_cmpint (H5Sget_simple_extent_ndims (space), ==, 3);
  H5Sget_simple_extent_dims (space, dims, NULL);
  H5Sclose (space);
  v = g_new (guint16, dims[0] * dims[1] * dims[2]);
  g_assert_cmpint (H5Dread (*dset, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), >=, 0);
  return v;
}

char *
tomo_test_write_dead_pixel_scan (guint   width,
                                 guint   height,
                                 guint   n_proj,
                                 double  center_offset,
                                 char  **dir)
{
  char *path = tomo_test_write_phantom (width, height, n_proj, center_offset, dir);
  hid_t file, data, white, dark;
  hsize_t ddims[3], fdims[3], kdims[3];
  g_autofree guint16 *counts = NULL, *flat = NULL, *dk = NULL;

  g_assert_cmpuint (width, >, 17);
  file = H5Fopen (path, H5F_ACC_RDWR, H5P_DEFAULT);
  g_assert_cmpint (file, >=, 0);
  counts = read_u16 (file, "/exchange/data", &data, ddims);
  for (gsize i = 0; i < ddims[0] * ddims[1] * ddims[2]; i += 53)
    counts[i] = 2;
  g_assert_cmpint (H5Dwrite (data, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, counts), >=, 0);
  flat = read_u16 (file, "/exchange/data_white", &white, fdims);
  dk = read_u16 (file, "/exchange/data_dark", &dark, kdims);
  /* Column 17: flat = dark of the first dark frame, in every flat frame. */
  for (hsize_t f = 0; f < fdims[0]; f++)
    for (hsize_t y = 0; y < fdims[1]; y++)
      flat[(f * fdims[1] + y) * fdims[2] + 17] = dk[y * kdims[2] + 17];
  g_assert_cmpint (H5Dwrite (white, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat), >=, 0);
  H5Dclose (data);
  H5Dclose (white);
  H5Dclose (dark);
  H5Fclose (file);
  return path;
}

void
tomo_test_remove_scan (char *path,
                       char *dir)
{
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

int
tomo_test_run_and_remove_scan (char *path,
                               char *dir)
{
  int status = g_test_run ();

  tomo_test_remove_scan (path, dir);
  return status;
}

TomoScan *
tomo_test_open_scan (const char *path)
{
  g_autoptr(GError) error = NULL;
  TomoScan *scan = tomo_scan_open (path, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (scan);
  return scan;
}

void
tomo_test_volume_init (TomoTestVolume *v,
                       guint           first_row,
                       guint           width,
                       guint           height)
{
  *v = (TomoTestVolume) {
    .next_row = first_row, .width = width, .height = height,
    .slices = g_ptr_array_new_with_free_func (g_free),
  };
}

void
tomo_test_volume_clear (TomoTestVolume *v)
{
  g_clear_pointer (&v->slices, g_ptr_array_unref);
  g_clear_object (&v->cancellable);
}

gboolean
tomo_test_volume_sink (guint        row,
                       const float *slice,
                       guint        width,
                       guint        height,
                       gpointer     user_data,
                       GError     **error)
{
  TomoTestVolume *v = user_data;

  g_assert_cmpuint (row, ==, v->next_row);
  if (v->width > 0)
    g_assert_cmpuint (width, ==, v->width);
  if (v->height > 0)
    g_assert_cmpuint (height, ==, v->height);
  g_ptr_array_add (v->slices, g_memdup2 (slice, (gsize) width * height * sizeof (float)));
  v->next_row++;
  if (v->cancel_after > 0 && v->slices->len == v->cancel_after)
    g_cancellable_cancel (v->cancellable);
  return TRUE;
}

void
tomo_test_volume_progress (guint    done,
                           guint    total,
                           gpointer user_data)
{
  TomoTestVolume *v = user_data;

  v->progress_calls++;
  v->progress_total = total;
  g_assert_cmpuint (done, <=, total);
}

void
tomo_test_answers_clear (TomoTestAnswers *a)
{
  g_clear_pointer (&a->slice, tomo_slice_unref);
}

void
tomo_test_answers_cb (TomoEngine   *engine,
                      TomoSlice    *slice,
                      const GError *error,
                      gpointer      user_data)
{
  TomoTestAnswers *a = user_data;

  a->n_answers++;
  if (error != NULL)
    {
      g_test_message ("engine answered with an error: %s", error->message);
      a->n_errors++;
      return;
    }
  g_clear_pointer (&a->slice, tomo_slice_unref);
  a->slice = tomo_slice_ref (slice);
}

void
tomo_test_answers_freed (gpointer user_data)
{
  ((TomoTestAnswers *) user_data)->n_freed++;
}

double
tomo_test_rel_l2 (const float *a,
                  const float *b,
                  gsize        n)
{
  double num = 0.0, den = 0.0;

  for (gsize i = 0; i < n; i++)
    {
      g_assert_true (isfinite (a[i]) && isfinite (b[i]));
      num += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
      den += (double) b[i] * b[i];
    }
  return den > 0.0 ? sqrt (num / den) : sqrt (num);
}

void
tomo_test_result_clear (TomoTestResult *r)
{
  g_clear_pointer (&r->out, g_free);
  g_clear_pointer (&r->err, g_free);
}

void
tomo_test_run_argv (TomoTestResult *r,
                    const char    **args)
{
  tomo_test_run_argv_env (r, NULL, args);
}

void
tomo_test_run_argv_env (TomoTestResult     *r,
                        const char *const  *env,
                        const char        **args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  const char *tomolive = g_getenv ("TOMOLIVE");
  int wait_status;

  g_assert_nonnull (tomolive);
  g_ptr_array_add (argv, (char *) tomolive);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, (char **) env, G_SPAWN_DEFAULT, NULL, NULL,
                &r->out, &r->err, &wait_status, &error);
  g_assert_no_error (error);
  r->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128 + WTERMSIG (wait_status);
  if (r->status != 0)
    g_test_message ("tomolive exited %d: %s", r->status, r->err);
}

void
tomo_test_assert_fails_with (TomoTestResult *r,
                             const char     *words)
{
  g_assert_cmpint (r->status, ==, 1);
  g_assert_nonnull (strstr (r->err, "tomolive: "));
  if (strstr (r->err, words) == NULL)
    g_error ("expected “%s” in the error, got: %s", words, r->err);
}

void
tomo_test_h5_write (hid_t          file,
                    const char    *name,
                    hid_t          file_type,
                    int            rank,
                    const hsize_t *dims,
                    const hsize_t *chunk,
                    hid_t          mem_type,
                    const void    *data)
{
  hid_t lcpl = H5Pcreate (H5P_LINK_CREATE);
  hid_t dcpl = H5Pcreate (H5P_DATASET_CREATE);
  hid_t space = rank > 0 ? H5Screate_simple (rank, dims, NULL) : H5Screate (H5S_SCALAR);
  hid_t dset;

  H5Pset_create_intermediate_group (lcpl, 1);
  if (chunk != NULL)
    H5Pset_chunk (dcpl, rank, chunk);
  dset = H5Dcreate2 (file, name, file_type, space, lcpl, dcpl, H5P_DEFAULT);
  g_assert_cmpint (dset, >=, 0);
  if (data != NULL)
    g_assert_cmpint (H5Dwrite (dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), >=, 0);
  H5Dclose (dset);
  H5Sclose (space);
  H5Pclose (dcpl);
  H5Pclose (lcpl);
}

double
tomo_test_disc_mean (const float *img,
                     guint        w,
                     double       cx,
                     double       cy,
                     double       radius)
{
  double sum = 0;
  guint n = 0;

  for (guint y = 0; y < w; y++)
    for (guint x = 0; x < w; x++)
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= radius * radius)
        {
          sum += img[(gsize) y * w + x];
          n++;
        }
  g_assert_cmpuint (n, >, 10);
  return sum / n;
}

TomoSlice *
tomo_test_submit (TomoEngine             *engine,
                  const TomoSliceRequest *request)
{
  g_auto(TomoTestAnswers) answers = { 0 };
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  tomo_engine_submit (engine, request, tomo_test_answers_cb, &answers);
  while (answers.n_answers == 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (answers.n_answers, ==, 1);
  g_assert_cmpuint (answers.n_errors, ==, 0);
  return g_steal_pointer (&answers.slice);
}

TomoSlice *
tomo_test_submit_row (TomoEngine *engine,
                      guint       row,
                      double      center)
{
  TomoSliceRequest request;

  tomo_slice_request_init (&request, tomo_engine_get_scan (engine));
  request.row = row;
  request.params.center = center;
  return tomo_test_submit (engine, &request);
}

TomoEngine *
tomo_test_engine_new (TomoBackend  backend,
                      TomoScan    *scan)
{
  TomoEngine *engine = tomo_engine_new (backend);

  g_assert_cmpint (tomo_engine_get_backend (engine), ==, backend);
  tomo_engine_set_scan (engine, scan);
  return engine;
}

TomoSlice *
tomo_test_reconstruct (TomoEngine *engine,
                       guint       row,
                       guint       n_slices,
                       double      center)
{
  return tomo_test_reconstruct_kernel (engine, row, n_slices, center, TOMO_KERNEL_AUTO);
}

TomoSlice *
tomo_test_reconstruct_kernel (TomoEngine *engine,
                              guint       row,
                              guint       n_slices,
                              double      center,
                              TomoKernel  kernel)
{
  g_autoptr(GError) error = NULL;
  TomoSliceRequest request;
  TomoSlice *slice;

  tomo_slice_request_init (&request, tomo_engine_get_scan (engine));
  request.row = row;
  request.n_slices = n_slices;
  request.params.center = center;
  request.kernel = kernel;
  slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (slice);
  return slice;
}

struct _TomoTestGate
{
  GMutex   lock;
  GCond    cond;
  float    offset;
  gboolean armed, entered, open;
  guint    row;
  gsize    n_values;  /* of a row */
};

static void
gate_clear (gpointer data)
{
  TomoTestGate *gate = data;

  g_mutex_clear (&gate->lock);
  g_cond_clear (&gate->cond);
}

TomoTestGate *
tomo_test_gate_new (void)
{
  TomoTestGate *gate = g_atomic_rc_box_new0 (TomoTestGate);

  g_mutex_init (&gate->lock);
  g_cond_init (&gate->cond);
  return gate;
}

void
tomo_test_gate_unref (TomoTestGate *gate)
{
  g_atomic_rc_box_release_full (gate, gate_clear);
}

static gboolean
gate_transform (gpointer     user_data,
                guint        row,
                const float *in,
                float       *out,
                GError     **error)
{
  TomoTestGate *gate = user_data;
  gsize n;
  float offset;

  g_mutex_lock (&gate->lock);
  offset = gate->offset;
  if (gate->armed && row == gate->row)
    {
      gate->armed = FALSE;
      gate->entered = TRUE;
      g_cond_broadcast (&gate->cond);
      while (!gate->open)
        g_cond_wait (&gate->cond, &gate->lock);
    }
  n = gate->n_values;
  g_mutex_unlock (&gate->lock);
  for (gsize i = 0; i < n; i++)
    out[i] = in[i] + offset;
  return TRUE;
}

TomoScan *
tomo_test_gated_scan (TomoScan     *base,
                      TomoTestGate *gate)
{
  g_autoptr(GError) error = NULL;
  TomoScan *scan;

  gate->n_values = (gsize) tomo_scan_get_n_projections (base) * tomo_scan_get_width (base);
  scan = _tomo_scan_new_derived (base, tomo_scan_get_width (base),
                                 tomo_scan_get_n_projections (base), tomo_scan_get_angles (base),
                                 gate_transform, g_atomic_rc_box_acquire (gate),
                                 (GDestroyNotify) tomo_test_gate_unref, &error);
  g_assert_no_error (error);
  return scan;
}

void
tomo_test_gate_arm (TomoTestGate *gate,
                    guint         row)
{
  g_mutex_lock (&gate->lock);
  gate->armed = TRUE;
  gate->row = row;
  gate->entered = FALSE;
  gate->open = FALSE;
  g_mutex_unlock (&gate->lock);
}

void
tomo_test_gate_wait (TomoTestGate *gate)
{
  g_mutex_lock (&gate->lock);
  while (!gate->entered)
    g_cond_wait (&gate->cond, &gate->lock);
  g_mutex_unlock (&gate->lock);
}

void
tomo_test_gate_open (TomoTestGate *gate)
{
  g_mutex_lock (&gate->lock);
  gate->open = TRUE;
  g_cond_broadcast (&gate->cond);
  g_mutex_unlock (&gate->lock);
}

void
tomo_test_gate_set_offset (TomoTestGate *gate,
                           float         offset)
{
  g_mutex_lock (&gate->lock);
  gate->offset = offset;
  g_mutex_unlock (&gate->lock);
}

typedef struct
{
  GMutex lock;
  GCond cond;
  gboolean done;
  GThreadFunc func;
  gpointer data;
} WatchedCall;

static gpointer
watched_call_run (gpointer data)
{
  WatchedCall *call = data;

  call->func (call->data);
  g_mutex_lock (&call->lock);
  call->done = TRUE;
  g_cond_signal (&call->cond);
  g_mutex_unlock (&call->lock);
  return NULL;
}

void
tomo_test_assert_returns (GThreadFunc  func,
                          gpointer     data,
                          guint        limit_ms,
                          const char  *what)
{
  /* Leaked on failure: the call may still be blocked on its thread. */
  WatchedCall *call = g_new0 (WatchedCall, 1);
  gint64 start = g_get_monotonic_time ();
  gint64 deadline = start + (gint64) limit_ms * 1000;
  GThread *thread;

  g_mutex_init (&call->lock);
  g_cond_init (&call->cond);
  call->func = func;
  call->data = data;
  thread = g_thread_new ("watched", watched_call_run, call);
  g_mutex_lock (&call->lock);
  while (!call->done && g_cond_wait_until (&call->cond, &call->lock, deadline))
    ;
  g_mutex_unlock (&call->lock);
  if (!call->done)
    g_error ("%s did not return within %u ms: it waits for what the test holds", what, limit_ms);
  g_thread_join (thread);
  g_test_message ("%s returned after %.1f ms", what, (g_get_monotonic_time () - start) / 1e3);
  g_mutex_clear (&call->lock);
  g_cond_clear (&call->cond);
  g_free (call);
}

char *
tomo_test_make_tmp_dir (const char *tmpl)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp (tmpl, &error);

  g_assert_no_error (error);
  return dir;
}

void
tomo_test_remove_tree (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
    {
      g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          tomo_test_remove_tree (child);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

int
tomo_test_run_and_remove_tree (char *dir)
{
  int status = g_test_run ();

  tomo_test_remove_tree (dir);
  g_free (dir);
  return status;
}

gboolean
tomo_test_set_flag_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

void
tomo_test_spin (guint ms)
{
  gboolean done = FALSE;

  g_timeout_add (ms, tomo_test_set_flag_cb, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
}

guint
tomo_test_count_entries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  guint n = 0;

  while (d != NULL && g_dir_read_name (d) != NULL)
    n++;
  return n;
}

void
tomo_test_add_backend_case (const char    *prefix,
                            TomoBackend    backend,
                            const char    *group,
                            gconstpointer  item,
                            GTestDataFunc  func)
{
  const char *name = item != NULL ? *(const char *const *) item : NULL;
  TomoTestBackendCase *c = g_new (TomoTestBackendCase, 1);
  g_autofree char *path = g_strdup_printf ("%s/%s/%s%s%s", prefix, tomo_backend_to_string (backend),
                                           group, name ? "/" : "", name ? name : "");

  *c = (TomoTestBackendCase) { backend, item };
  g_test_add_data_func_full (path, c, func, g_free);
}

gboolean
tomo_test_need_gpu (const char *why)
{
  g_autofree char *reason = NULL;

  if (tomo_engine_count_gpus () > 0)
    return TRUE;
  reason = g_strconcat ("no CUDA device: ", why, NULL);
  g_test_skip (reason);
  return FALSE;
}

gboolean
tomo_test_need_backend (TomoBackend  backend,
                        const char  *why)
{
  return backend != TOMO_BACKEND_GPU || tomo_test_need_gpu (why);
}

float *
tomo_test_random_floats (gsize   n,
                         guint32 seed,
                         double  lo,
                         double  hi)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  float *v = g_new (float, n);

  for (gsize i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (rand, lo, hi);
  return v;
}

void
tomo_test_assert_finite (const float *v,
                         gsize        n)
{
  for (gsize i = 0; i < n; i++)
    g_assert_true (isfinite (v[i]));
}

void
tomo_test_assert_stats_equal (const TomoPreprocessStats *a,
                              const TomoPreprocessStats *b)
{
  g_assert_cmpuint (a->n_values, ==, b->n_values);
  g_assert_cmpuint (a->n_nonpositive, ==, b->n_nonpositive);
  g_assert_cmpuint (a->n_nonfinite, ==, b->n_nonfinite);
}

const char *
tomo_test_require_env (const char *name)
{
  const char *value = g_getenv (name);

  if (value == NULL)
    {
      g_printerr ("%s must be set (meson test sets it)\n", name);
      exit (1);
    }
  return value;
}
