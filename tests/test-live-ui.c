/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The viewer receiving a live stream (run under Xvfb): the slice on screen
 * changes as projections arrive and ends equal to the file's
 * reconstruction; the subtitle says waiting, receiving, complete. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <gtk/gtk.h>

#include "tomo-application.h"
#include "tomo-connect-dialog.h"
#include "tomo-engine.h"
#include "tomo-live-link.h"
#include "tomo-live-sender.h"
#include "tomo-slice-view.h"
#include "tomo-window.h"

static gboolean have_display;

typedef struct
{
  guint   n_shown;
  guint   n_changed;
  float  *last;
  gsize   n;
} Watch;

static void
on_shown (TomoSliceView *view,
          gpointer       data)
{
  Watch *w = data;
  TomoSlice *slice = tomo_slice_view_get_slice (view);
  gsize n;

  if (slice == NULL || slice->data == NULL)
    return;
  n = (gsize) slice->width * slice->height;
  if (w->last == NULL || w->n != n || memcmp (w->last, slice->data, n * sizeof (float)) != 0)
    w->n_changed++;
  g_free (w->last);
  w->last = g_memdup2 (slice->data, n * sizeof (float));
  w->n = n;
  w->n_shown++;
}

typedef struct
{
  TomoScan *scan;
  char     *url;
  GError   *error;
  gboolean  done;
} Job;

static gpointer
stream_thread (gpointer data)
{
  Job *job = data;
  TomoLiveStreamOptions options = { 0 };

  options.rate = 150;
  options.timeout_ms = 20000;
  tomo_live_stream_scan (job->scan, job->url, &options, NULL, &job->error);
  g_atomic_int_set (&job->done, TRUE);
  return NULL;
}

static void
test_receive (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(TomoApplication) app = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) file = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) want = NULL;
  TomoLiveReceiverOptions options;
  TomoWindow *window;
  Watch watch = { 0 };
  Job job = { 0 };
  GThread *thread;
  gint64 deadline;
  double max_diff = 0, max_val = 0;

  if (!have_display)
    {
      g_test_skip ("no display (run under xvfb-run)");
      return;
    }
  file = tomo_scan_open (sample, NULL, &error);
  g_assert_no_error (error);

  app = tomo_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  window = tomo_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 720);
  gtk_window_present (GTK_WINDOW (window));
  g_signal_connect (tomo_window_get_slice_view (window), "slice-shown", G_CALLBACK (on_shown), &watch);

  /* The dialog opens and closes without a connection. */
  {
    GtkWindow *dialog = tomo_connect_dialog_present (window);
    g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
    gtk_window_destroy (dialog);
  }

  tomo_live_receiver_options_init (&options);
  options.url = "tcp://127.0.0.1:*";
  g_assert_true (tomo_live_link_attach (window, &options, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (tomo_live_link_get_status (window), "Waiting"));

  job.scan = file;
  job.url = g_strdup (tomo_live_link_get_endpoint (window));
  thread = g_thread_new ("sender", stream_thread, &job);

  deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (g_get_monotonic_time () < deadline &&
         !(g_atomic_int_get (&job.done) && strstr (tomo_live_link_get_status (window), "complete") != NULL))
    g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
  g_thread_join (thread);
  g_assert_no_error (job.error);
  g_test_message ("status: %s; %u slices shown, %u different", tomo_live_link_get_status (window),
                  watch.n_shown, watch.n_changed);
  g_assert_nonnull (strstr (tomo_live_link_get_status (window), "complete"));

  /* Let the last reconstruction reach the screen. */
  {
    guint shown = watch.n_shown;
    gint64 until = g_get_monotonic_time () + 2 * G_USEC_PER_SEC;

    while (g_get_monotonic_time () < until)
      g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
    g_assert_cmpuint (watch.n_shown, >=, shown);
  }
  g_assert_cmpuint (watch.n_changed, >=, 3);

  engine = tomo_engine_new (TOMO_BACKEND_CPU);
  tomo_engine_set_scan (engine, file);
  {
    TomoSliceRequest request;
    TomoSlice *shown = tomo_slice_view_get_slice (tomo_window_get_slice_view (window));

    tomo_slice_request_init (&request, file);
    request.row = shown->row;
    request.params = shown->params;
    want = tomo_engine_reconstruct (engine, &request, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpuint ((gsize) want->width * want->height, ==, watch.n);
  }
  for (gsize i = 0; i < watch.n; i++)
    {
      max_diff = MAX (max_diff, fabs ((double) want->data[i] - watch.last[i]));
      max_val = MAX (max_val, fabs ((double) want->data[i]));
    }
  g_test_message ("last slice on screen vs the file's: %.3g of the maximum", max_diff / max_val);
  /* TomoPackets carries the angles as float32. */
  g_assert_cmpfloat (max_diff / max_val, <, 1e-4);

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_free (watch.last);
  g_free (job.url);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  have_display = gtk_init_check ();
  g_test_add_func ("/tomo/live/ui/receive", test_receive);
  return g_test_run ();
}
