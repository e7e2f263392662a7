/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include "tomo-phantom.h"
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

  *dir = g_dir_make_tmp ("tomo-test-XXXXXX", &error);
  g_assert_no_error (error);
  path = g_build_filename (*dir, "phantom.h5", NULL);
  tomo_test_phantom_params (&p, width, height, n_proj);
  p.center = (width - 1) / 2.0 + center_offset;
  if (!tomo_phantom_write_dxchange (&p, path, &error))
    g_error ("cannot write the test scan: %s", error->message);
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

TomoScan *
tomo_test_open_scan (const char *path)
{
  g_autoptr(GError) error = NULL;
  TomoOpenOptions options;
  TomoScan *scan;

  tomo_open_options_init (&options);
  scan = tomo_scan_open (path, &options, &error);
  g_assert_no_error (error);
  g_assert_nonnull (scan);
  return scan;
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
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  const char *tomolive = g_getenv ("TOMOLIVE");
  int wait_status;

  g_assert_nonnull (tomolive);
  g_ptr_array_add (argv, (char *) tomolive);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
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

typedef struct
{
  TomoSlice *slice;
  gboolean   done;
} SubmitState;

static void
submit_cb (TomoEngine   *engine,
           TomoSlice    *slice,
           const GError *error,
           gpointer      user_data)
{
  SubmitState *state = user_data;

  g_assert_no_error ((GError *) error);
  g_clear_pointer (&state->slice, tomo_slice_unref);
  state->slice = tomo_slice_ref (slice);
  state->done = TRUE;
}

TomoSlice *
tomo_test_submit (TomoEngine             *engine,
                  const TomoSliceRequest *request)
{
  SubmitState state = { NULL, FALSE };
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  tomo_engine_submit (engine, request, submit_cb, &state);
  while (!state.done && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (state.done);
  return state.slice;
}

TomoSlice *
tomo_test_reconstruct (TomoEngine *engine,
                       guint       row,
                       guint       n_slices,
                       double      center)
{
  g_autoptr(GError) error = NULL;
  TomoSliceRequest request;
  TomoSlice *slice;

  tomo_slice_request_init (&request, tomo_engine_get_scan (engine));
  request.row = row;
  request.n_slices = n_slices;
  request.params.center = center;
  slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (slice);
  return slice;
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
