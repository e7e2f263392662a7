/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The viewer receiving a live stream (run under Xvfb): half a scan shows a
 * partial slice on screen, the rest changes it into the file's
 * reconstruction; the subtitle says waiting, receiving, complete. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <gtk/gtk.h>

#include "tomo-application.h"
#include "tomo-connect-dialog.h"
#include "tomo-engine.h"
#include "tomo-live-link.h"
#include "tomo-slice-view.h"
#include "tomo-test-util.h"
#include "tomo-window.h"
#include "tomo-window-private.h"
#include "test-live-util.h"
#include "ui-test-common.h"

#define WAIT_S 60


typedef struct
{
  guint  n_changed;
  guint  n_incremental;   /* of them from the live accumulation, with statistics */
  float *last;
  gsize  n;
} Watch;

static void
watch_shown (TomoSliceView *view,
          gpointer       data)
{
  Watch *w = data;
  TomoSlice *slice = tomo_slice_view_get_slice (view);
  gsize n;

  if (slice == NULL || slice->data == NULL)
    return;
  n = (gsize) slice->width * slice->height;
  if (w->last == NULL || w->n != n || memcmp (w->last, slice->data, n * sizeof (float)) != 0)
    {
      w->n_changed++;
      if (g_strcmp0 (slice->kernel, "live-accumulate") == 0 && slice->values.valid)
        w->n_incremental++;
    }
  g_free (w->last);
  w->last = g_memdup2 (slice->data, n * sizeof (float));
  w->n = n;
}

static gboolean
need_display (void)
{
  if (!have_display)
    g_test_skip ("no display (run under xvfb-run)");
  return have_display;
}

/* Runs the main loop until done (data) is TRUE, at most WAIT_S seconds. */
static gboolean
run_until (gboolean (*done) (gconstpointer data),
           gconstpointer data)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_S * G_USEC_PER_SEC;

  while (g_get_monotonic_time () < deadline)
    {
      if (done (data))
        return TRUE;
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (1000);
    }
  return done (data);
}

typedef struct
{
  TomoWindow  *window;
  const Watch *watch;       /* NULL: the status only */
  const char  *status;
  guint        n_changed;
} SliceWait;

static gboolean
slice_arrived (gconstpointer data)
{
  const SliceWait *w = data;

  return strstr (tomo_live_link_get_status (w->window), w->status) != NULL &&
         (w->watch == NULL || w->watch->n_changed > w->n_changed);
}

/* Runs the main loop until `status` is in the subtitle and a slice newer
 * than `n_changed` is on screen. */
static gboolean
wait_for_slice (TomoWindow  *window,
                const Watch *watch,
                const char  *status,
                guint        n_changed)
{
  SliceWait w = { window, watch, status, n_changed };

  return run_until (slice_arrived, &w);
}

static gboolean
incremental_shown (gconstpointer data)
{
  return ((const Watch *) data)->n_incremental > 0;
}

/* Runs the main loop until an incremental slice is on screen. */
static gboolean
wait_for_incremental (Watch *watch)
{
  return run_until (incremental_shown, watch);
}

static gboolean
widget_mapped (gconstpointer data)
{
  return gtk_widget_get_mapped (GTK_WIDGET (data));
}

/* The first widget under (and including) `widget` that `test` takes. */
static GtkWidget *
find_widget (GtkWidget *widget,
             gboolean (*test) (GtkWidget *widget, gconstpointer data),
             gconstpointer data)
{
  if (test (widget, data))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget (c, test, data);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
named (GtkWidget     *widget,
       gconstpointer  name)
{
  return g_strcmp0 (gtk_widget_get_name (widget), name) == 0;
}

static gboolean
button_labelled (GtkWidget     *widget,
                 gconstpointer  label)
{
  return GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), label) == 0;
}

static gboolean
caption (GtkWidget     *widget,
         gconstpointer  data)
{
  return GTK_IS_LABEL (widget) && gtk_widget_has_css_class (widget, "caption");
}

/* The live-mode drop-down the link puts in the header bar. */
static GtkDropDown *
find_mode_control (GtkWidget *widget)
{
  GtkWidget *found = find_widget (widget, named, "live-mode");

  return found != NULL ? GTK_DROP_DOWN (found) : NULL;
}

/* The process's application (a second would not register). */
static void
ensure_app (void)
{
  if (app != NULL)
    return;
  app = tomo_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
}

/* A window on screen (a loaded machine may take seconds to map it: a
 * stream starts only once it is), its slices watched. */
static TomoWindow *
watched_window_new (Watch *watch)
{
  TomoWindow *window;

  ensure_app ();
  window = tomo_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 720);
  gtk_window_present (GTK_WINDOW (window));
  g_signal_connect (tomo_window_get_slice_view (window), "slice-shown", G_CALLBACK (watch_shown), watch);
  g_assert_true (run_until (widget_mapped, window));
  return window;
}

/* The same, with a live link of `options`. */
static TomoWindow *
live_window_new (Watch                         *watch,
                 const TomoLiveReceiverOptions *options)
{
  g_autoptr(GError) error = NULL;
  TomoWindow *window = watched_window_new (watch);

  g_assert_true (tomo_live_link_attach (window, options, &error));
  g_assert_no_error (error);
  return window;
}

/* A sender to the window's receiver. */
static TomoLiveSender *
window_sender_new (TomoWindow       *window,
                   TomoLiveProtocol  protocol)
{
  g_autoptr(GError) error = NULL;
  TomoLiveSender *tx = tomo_live_sender_new (tomo_live_link_get_endpoint (window), protocol, FALSE, 20000, &error);

  g_assert_no_error (error);
  return tx;
}

static void
live_window_close (TomoWindow *window,
                   Watch      *watch)
{
  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_clear_pointer (&watch->last, g_free);
}

/* Runs the main loop until `status` is in the subtitle. */
static gboolean
wait_for_status (TomoWindow *window,
                 const char *status)
{
  SliceWait w = { window, NULL, status, 0 };

  if (run_until (slice_arrived, &w))
    return TRUE;
  g_printerr ("status: %s\n", tomo_live_link_get_status (window));
  return FALSE;
}

/* The file's slice at the row and parameters of the slice on screen. */
static TomoSlice *
file_slice_like_shown (TomoWindow *window,
                       TomoScan   *file)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoEngine) engine = tomo_engine_new (TOMO_BACKEND_CPU);
  TomoSlice *shown = tomo_slice_view_get_slice (tomo_window_get_slice_view (window));
  TomoSliceRequest request;
  TomoSlice *want;

  tomo_engine_set_scan (engine, file);
  tomo_slice_request_init (&request, file);
  request.row = shown->row;
  request.params = shown->params;
  want = tomo_engine_reconstruct (engine, &request, NULL, &error);
  g_assert_no_error (error);
  return want;
}

/* How far the slice on screen (`watch` saw it last) is from the file's at
 * its row and parameters, relative to the maximum; `what` names it. */
static double
shown_vs_file (TomoWindow  *window,
               const Watch *watch,
               TomoScan    *file,
               const char  *what)
{
  g_autoptr(TomoSlice) want = file_slice_like_shown (window, file);
  double d;

  g_assert_cmpuint ((gsize) want->width * want->height, ==, watch->n);
  d = relative_difference (want->data, watch->last, watch->n);
  g_test_message ("on screen vs %s: %.3g of the maximum", what, d);
  return d;
}

/* Flats that come after the first projection (JSON with a count: the
 * window has made its scan by then) are used: once complete, the slice on
 * screen is the file's, and the window's scan counts them. */
static gboolean wait_for_label (TomoCenterFinder *finder,
                                const char       *text);

static void
test_late_flats (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) file = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  g_autofree float *proj = NULL, *flats = NULL, *darks = NULL;
  TomoLiveReceiverOptions options;
  TomoWindow *window;
  Watch watch = { 0 };
  g_autofree char *expect = NULL;
  guint n, w, h;

  if (!need_display ())
    return;
  file = tomo_test_open_scan (sample);
  n = tomo_scan_get_n_projections (file);
  w = tomo_scan_get_width (file);
  h = tomo_scan_get_height (file);
  proj = read_frames (file, TOMO_FRAME_PROJECTION);
  flats = read_frames (file, TOMO_FRAME_FLAT);
  darks = read_frames (file, TOMO_FRAME_DARK);

  loopback_options (&options, TOMO_LIVE_PROTOCOL_JSON);
  options.n_projections = n;
  window = live_window_new (&watch, &options);
  tx = window_sender_new (window, TOMO_LIVE_PROTOCOL_JSON);

  for (guint i = 0; i < tomo_scan_get_n_darks (file); i++)
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_DARK, i, h, w, TOMO_DTYPE_FLOAT32,
                                                darks + (gsize) i * w * h, FALSE, 0, &error));
  send_projections (tx, file, proj, 0, 1, 0);
  /* The window has a scan of this one projection and no flat. */
  expect = g_strdup_printf ("1/%u projections, 0 flats", n);
  g_assert_true (wait_for_status (window, expect));
  g_assert_nonnull (tomo_window_get_scan (window));
  g_assert_cmpuint (tomo_scan_get_n_flats (tomo_window_get_scan (window)), ==, 0);

  for (guint i = 0; i < tomo_scan_get_n_flats (file); i++)
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_FLAT, i, h, w, TOMO_DTYPE_FLOAT32,
                                                flats + (gsize) i * w * h, FALSE, 0, &error));
  send_projections (tx, file, proj, 1, n, 0);
  g_assert_true (tomo_live_sender_send_end (tx, &error));
  g_assert_no_error (error);
  g_assert_true (wait_for_status (window, "Scan complete"));
  /* Complete, with the centre never touched: the estimate moves it from
   * the detector's middle to the sample's axis (258.87). */
  g_assert_true (wait_for_label (window->panel->center_finder, "Estimated when the scan completed"));
  {
    double c;

    g_object_get (window, "center", &c, NULL);
    g_test_message ("centre after the scan: %.2f", c);
    g_assert_cmpfloat (fabs (c - 258.87), <, 0.3);
  }
  /* The last reconstruction may still be on its way. */
  tomo_test_spin (2000);

  g_assert_cmpuint (tomo_scan_get_n_flats (tomo_window_get_scan (window)), ==, tomo_scan_get_n_flats (file));
  g_assert_cmpuint (tomo_scan_get_n_darks (tomo_window_get_scan (window)), ==, tomo_scan_get_n_darks (file));
  /* What volume exports read: the same scan. */
  live = tomo_live_link_dup_live_scan (window, tomo_window_get_scan (window));
  g_assert_nonnull (live);
  g_assert_cmpfloat (shown_vs_file (window, &watch, file, "the file's slice"), <, 1e-4);
  live_window_close (window, &watch);
}

/* TomoPackets in scan or continuous mode past the first rotation: the
 * incremental slice goes on (scan: the new rotation only; continuous: the
 * last 180°), and the status says which rotation arrives. */
static void
test_next_rotation (gconstpointer data)
{
  gboolean continuous = GPOINTER_TO_INT (data);
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) file = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autofree float *proj = NULL;
  TomoLiveReceiverOptions options;
  TomoWindow *window;
  Watch watch = { 0 };
  g_autofree char *expect = NULL;
  guint n, n_incremental;
  double d;

  if (!need_display ())
    return;
  file = tomo_test_open_scan (sample);
  n = tomo_scan_get_n_projections (file);
  proj = read_frames (file, TOMO_FRAME_PROJECTION);

  loopback_options (&options, TOMO_LIVE_PROTOCOL_TOMOP);
  window = live_window_new (&watch, &options);
  if (continuous)
    gtk_drop_down_set_selected (find_mode_control (gtk_window_get_titlebar (GTK_WINDOW (window))), 1);
  tx = window_sender_new (window, TOMO_LIVE_PROTOCOL_TOMOP);
  send_scan_header (tx, file);
  send_projections (tx, file, proj, 0, n, 0);
  g_assert_true (wait_for_status (window, "Scan complete"));
  /* The first rotation complete: the centre from the data, in either mode. */
  g_assert_true (wait_for_label (window->panel->center_finder, "Estimated when the scan completed"));
  tomo_test_spin (500);
  n_incremental = watch.n_incremental;

  /* The next rotation's first half: ids n … n + n/2 − 1, the same frames. */
  send_projections (tx, file, proj, 0, n / 2, n);
  expect = g_strdup_printf ("Receiving (%s): rotation 2, %u/%u projections", continuous ? "continuous" : "scan",
                            continuous ? n : n / 2, n);
  g_assert_true (wait_for_status (window, expect));
  /* Wait for the slice of all n/2 (the first may have had fewer). */
  tomo_test_spin (2000);
  g_test_message ("status: %s; %u incremental slices before the second rotation, %u after",
                  tomo_live_link_get_status (window), n_incremental, watch.n_incremental);
  /* Continuous: the same frames again give the slice shown before. */
  if (!continuous)
    g_assert_cmpuint (watch.n_incremental, >, n_incremental);
  g_assert_cmpstr (tomo_slice_view_get_slice (tomo_window_get_slice_view (window))->kernel, ==, "live-accumulate");
  d = shown_vs_file (window, &watch, file, "one full rotation");
  if (continuous)
    g_assert_cmpfloat (d, <, 1e-4);   /* replaced, not counted twice */
  else
    g_assert_cmpfloat (d, >, 1e-2);   /* half a rotation, afresh */
  live_window_close (window, &watch);
}

/* All of `file` as one scan (JSON: then its end). */
static void
send_scan (TomoLiveSender   *tx,
           TomoLiveProtocol  protocol,
           TomoScan         *file,
           const float      *proj)
{
  g_autoptr(GError) error = NULL;

  send_scan_header (tx, file);
  send_projections (tx, file, proj, 0, tomo_scan_get_n_projections (file), 0);
  g_assert_true (protocol != TOMO_LIVE_PROTOCOL_JSON ||
                 tomo_live_sender_send_end (tx, &error));
  g_assert_no_error (error);
}

typedef struct
{
  TomoLiveSender  *tx;
  TomoLiveProtocol protocol;
  TomoScan        *file;
  const float     *proj;
} SendJob;

/* A sender of its own, as a detector is: its sends may wait for the
 * receiver while the window's main loop goes on. */
static gpointer
send_thread (gpointer data)
{
  SendJob *job = data;

  send_scan (job->tx, job->protocol, job->file, job->proj);
  return NULL;
}

typedef struct
{
  TomoWindow *window;
  TomoScan  **first;        /* cleared when the first scan's TomoScan is freed */
  gboolean    held_back;    /* the status said the sender was held back */
} NextScanWait;

static gboolean
next_scan_complete (gconstpointer data)
{
  NextScanWait *w = (NextScanWait *) data;
  const char *status = tomo_live_link_get_status (w->window);

  if (g_str_has_prefix (status, "Sender held back until the previous scan lets go of its memory (--max-memory)"))
    w->held_back = TRUE;
  return *w->first == NULL && strstr (status, "Scan complete") != NULL;
}

typedef enum
{
  NEAR_TOMOP,            /* room for the next scan's geometry, darks and flats */
  NEAR_TOMOP_GEOMETRY,   /* no room for the next scan's geometry (its slots) */
  NEAR_JSON,             /* JSON without a count: room for its darks and flats */
} NearLimit;

/* Two scans through a memory limit that holds the first, and of the next
 * at most its darks and flats: the next arrives whole, nothing dropped, its
 * slice the file's.  TomoPackets: the window lets go of the first when the
 * next one's geometry comes (the receiver holds the sender back meanwhile;
 * its wait made long here, so that a loaded machine cannot miss it).  When
 * the geometry itself does not fit, or for JSON without a count (nothing to
 * show before the first projection), the window cannot let go: the first
 * scan's frames are released after the receiver's wait, and the subtitle
 * says meanwhile that the sender is held back. */
static void
test_next_scan_near_limit (gconstpointer data)
{
  NearLimit near = GPOINTER_TO_INT (data);
  TomoLiveProtocol protocol = near == NEAR_JSON ? TOMO_LIVE_PROTOCOL_JSON : TOMO_LIVE_PROTOCOL_TOMOP;
  gboolean let_go = near == NEAR_TOMOP;
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) file = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autofree float *proj = NULL;
  g_autofree char *expect = NULL;
  TomoLiveReceiverOptions options;
  TomoWindow *window;
  TomoScan *first;
  Watch watch = { 0 };
  TomoLiveReceiverStats stats;
  guint n, n_before, n_calibration;
  gsize frame_bytes;

  if (!need_display ())
    return;
  file = tomo_test_open_scan (sample);
  n = tomo_scan_get_n_projections (file);
  proj = read_frames (file, TOMO_FRAME_PROJECTION);
  frame_bytes = (gsize) tomo_scan_get_width (file) * tomo_scan_get_height (file) * sizeof (float);
  n_calibration = tomo_scan_get_n_flats (file) + tomo_scan_get_n_darks (file);

  loopback_options (&options, protocol);
  /* The slots' bookkeeping (44 bytes a projection, 512 slots for the 360:
   * 22 KiB) fits in half a frame; the geometry case leaves room for the
   * first scan's slots but not for the next one's. */
  options.max_memory = near == NEAR_TOMOP_GEOMETRY ? (n + n_calibration) * frame_bytes + 32 * 1024
                                                   : (n + 2 * n_calibration) * frame_bytes + frame_bytes / 2;
  if (let_go)
    options.hold_wait_us = 20 * G_USEC_PER_SEC;
  window = live_window_new (&watch, &options);
  tx = window_sender_new (window, protocol);
  send_scan (tx, protocol, file, proj);
  g_assert_true (wait_for_status (window, "Scan complete"));
  /* The estimate at the end reads the first scan too: done before the next. */
  g_assert_true (wait_for_label (window->panel->center_finder, "Estimated when the scan completed"));
  first = tomo_window_get_scan (window);
  g_object_add_weak_pointer (G_OBJECT (first), (gpointer *) &first);
  n_before = watch.n_changed;

  /* The same again is the next scan (the first is complete). */
  {
    SendJob job = { tx, protocol, file, proj };
    GThread *sender = g_thread_new ("test-sender", send_thread, &job);
    NextScanWait w = { window, &first, FALSE };

    if (!run_until (next_scan_complete, &w))
      g_printerr ("status: %s; first scan %s\n", tomo_live_link_get_status (window),
                  first ? "still held" : "let go");
    g_assert_null (first);
    g_assert_true (next_scan_complete (&w));
    /* The 2 s wait is seen by the window's ticks. */
    if (!let_go)
      g_assert_true (w.held_back);
    g_thread_join (sender);
  }
  expect = g_strdup_printf ("Scan complete: %u projections", n);
  g_assert_nonnull (strstr (tomo_live_link_get_status (window), expect));
  g_assert_nonnull (strstr (tomo_live_link_get_status (window), " 0 dropped"));
  g_assert_true (tomo_live_link_get_stats (window, &stats));
  g_test_message ("%u waits for the first scan, %u released", stats.n_waits, stats.n_released);
  g_assert_cmpuint (stats.n_dropped_total, ==, 0);
  g_assert_cmpuint (stats.n_waits, >=, 1);
  g_assert_cmpuint (stats.n_released, ==, let_go ? 0 : 1);
  /* Whatever read the released scan meanwhile, the next one shows no error. */
  g_assert_null (tomo_window_get_error_message (window));
  g_assert_true (wait_for_slice (window, &watch, "Scan complete", n_before));
  tomo_test_spin (2000);   /* the last reconstruction may still be on its way */
  g_test_message ("status: %s", tomo_live_link_get_status (window));
  g_assert_cmpfloat (shown_vs_file (window, &watch, file, "the file's slice (the next scan)"), <, 1e-4);
  live_window_close (window, &watch);
}

typedef struct
{
  TomoLiveProtocol protocol;
  gboolean         count;        /* JSON: the receiver knows the projection count */
  gboolean         continuous;   /* the window's live mode */
} Case;

static void
test_receive (gconstpointer data)
{
  const Case *c = data;
  TomoLiveProtocol protocol = c->protocol;
  /* An announced size (TomoPackets, or JSON with a count): the incremental slice. */
  gboolean incremental = protocol == TOMO_LIVE_PROTOCOL_TOMOP || c->count;
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) file = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autoptr(TomoSlice) want = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autofree float *proj = NULL, *partial = NULL;
  TomoLiveReceiverOptions options;
  TomoWindow *window;
  Watch watch = { 0 };
  guint n, n_before;
  double d_partial, d_final;

  if (!need_display ())
    return;
  file = tomo_test_open_scan (sample);
  n = tomo_scan_get_n_projections (file);
  proj = read_frames (file, TOMO_FRAME_PROJECTION);

  window = watched_window_new (&watch);

  /* The dialog opens and closes without a connection; so does the
   * window's Connect… action. */
  {
    GtkWindow *dialog = tomo_connect_dialog_present (window);
    GListModel *toplevels = gtk_window_get_toplevels ();   /* not owned */
    guint n_before_action = g_list_model_get_n_items (toplevels);
    GtkWindow *from_action = NULL;

    g_assert_true (gtk_widget_get_visible (GTK_WIDGET (dialog)));
    gtk_window_destroy (dialog);
    n_before_action = g_list_model_get_n_items (toplevels);
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.connect", NULL));
    for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
      {
        g_autoptr(GtkWindow) w = g_list_model_get_item (toplevels, i);

        if (gtk_window_get_transient_for (w) == GTK_WINDOW (window) && gtk_widget_get_visible (GTK_WIDGET (w)))
          from_action = w;
      }
    g_assert_cmpuint (g_list_model_get_n_items (toplevels), ==, n_before_action + 1);
    g_assert_nonnull (from_action);
    gtk_window_destroy (from_action);
  }

  loopback_options (&options, protocol);
  if (c->count)
    options.n_projections = n;
  g_assert_true (tomo_live_link_attach (window, &options, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (tomo_live_link_get_status (window), "Waiting"));
  {
    GtkDropDown *mode = find_mode_control (gtk_window_get_titlebar (GTK_WINDOW (window)));

    g_assert_nonnull (mode);
    g_assert_true (gtk_widget_get_visible (GTK_WIDGET (mode)));
    g_assert_cmpuint (gtk_drop_down_get_selected (mode), ==, 0);
    if (c->continuous)
      gtk_drop_down_set_selected (mode, 1);
  }
  tx = window_sender_new (window, protocol);

  /* Half the projections: a partial slice on screen while receiving. */
  send_scan_header (tx, file);
  send_projections (tx, file, proj, 0, n / 2, 0);
  {
    /* JSON without a count: the scan grows with the frames. */
    g_autofree char *expect = g_strdup_printf ("%u/%u projections", n / 2, incremental ? n : n / 2);
    g_assert_true (wait_for_slice (window, &watch, expect, 0));
  }
  /* The incremental slice is on screen before the rest comes, however
   * loaded the machine (bounded by WAIT_S). */
  if (incremental)
    {
      g_assert_true (wait_for_incremental (&watch));
      g_assert_nonnull (strstr (tomo_live_link_get_status (window),
                                c->continuous ? "Receiving (continuous)" : "Receiving (scan)"));
      if (g_getenv ("TOMO_LIVE_SHOT") != NULL)
        {
          /* A moment to look at (screenshots of the live window). */
          tomo_test_spin (5000);
        }
    }
  else
    g_assert_nonnull (strstr (tomo_live_link_get_status (window), "Receiving (whole scan)"));
  /* Wait for the slice of all n/2 (the first may have had fewer). */
  tomo_test_spin (2000);
  partial = g_memdup2 (watch.last, watch.n * sizeof (float));
  n_before = watch.n_changed;
  /* The user's centre (not the axis, 258.87) stays while the scan goes on (and grows). */
  g_object_set (window, "center", 252.0, NULL);

  /* The rest: the slice changes into the whole scan's. */
  send_projections (tx, file, proj, n / 2, n, 0);
  g_assert_true (tomo_live_sender_send_end (tx, &error));
  g_assert_true (wait_for_slice (window, &watch, "Scan complete", n_before));
  /* The estimate at the end leaves the centre the user chose. */
  g_assert_true (wait_for_label (window->panel->center_finder, "Estimated when the scan completed"));
  {
    double c;

    g_object_get (window, "center", &c, NULL);
    g_assert_cmpfloat (c, ==, 252.0);
  }
  /* The last reconstruction may still be on its way. */
  tomo_test_spin (2000);
  g_test_message ("status: %s; %u different slices shown, %u of them incremental",
                  tomo_live_link_get_status (window), watch.n_changed, watch.n_incremental);
  /* A scan of announced size is shown from the incremental slice while it arrives. */
  if (incremental)
    g_assert_cmpuint (watch.n_incremental, >, 0);

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
    g_assert_cmpfloat (shown->params.center, ==, 252.0);
  }
  d_partial = relative_difference (want->data, partial, watch.n);
  d_final = relative_difference (want->data, watch.last, watch.n);
  g_test_message ("on screen vs the file's slice: half the scan %.3g, all of it %.3g (of the maximum)",
                  d_partial, d_final);
  g_assert_cmpfloat (d_partial, >, 1e-2);
  /* TomoPackets carries the angles as float32; JSON here none (evenly spaced). */
  g_assert_cmpfloat (d_final, <, 1e-4);

  gtk_window_destroy (GTK_WINDOW (window));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_free (watch.last);
}

/* Sends JSON projections 0 … n − 1 of 48 × 48 float32 pixels, no angles
 * (then the end of the scan when `end`). */
#define SMALL 48

static void
send_small_json (TomoWindow *window,
                 guint       n,
                 gboolean    end)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoLiveSender) tx = window_sender_new (window, TOMO_LIVE_PROTOCOL_JSON);
  g_autofree float *px = g_new (float, SMALL * SMALL);

  for (guint i = 0; i < SMALL * SMALL; i++)
    px[i] = 0.5f;
  for (guint i = 0; i < n; i++)
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, i, SMALL, SMALL, TOMO_DTYPE_FLOAT32,
                                                px, FALSE, 0, &error));
  g_assert_true (!end || tomo_live_sender_send_end (tx, &error));
  g_assert_no_error (error);
}

typedef struct
{
  GtkLabel   *label;
  const char *text;
} LabelWait;

static gboolean
label_says (gconstpointer data)
{
  const LabelWait *w = data;

  return strstr (gtk_label_get_text (w->label), w->text) != NULL;
}

/* Runs the main loop until the finder's note holds `text`. */
static gboolean
wait_for_label (TomoCenterFinder *finder,
                const char       *text)
{
  LabelWait w = { GTK_LABEL (find_widget (GTK_WIDGET (finder), caption, NULL)), text };

  g_assert_nonnull (w.label);
  if (run_until (label_says, &w))
    return TRUE;
  g_printerr ("note: %s\n", gtk_label_get_text (w.label));
  return FALSE;
}

/* The angle (degrees) the window's live scan gives projection `slot`. */
static double
live_angle (TomoWindow *window,
            guint       slot)
{
  g_autoptr(TomoLiveScan) live = tomo_live_link_dup_live_scan (window, tomo_window_get_scan (window));

  g_assert_nonnull (live);
  return tomo_live_scan_get_angle (live, slot) * 180 / G_PI;
}

static gboolean
scan_loaded (gconstpointer data)
{
  return *(const int *) data != 0;
}

static void
on_loaded (TomoWindow *window,
           gboolean    ok,
           gpointer    data)
{
  *(int *) data = ok ? 1 : -1;
}

/* A stream after a file: Find centre and Sweep… work on the stream (the
 * finder has the live scan, its note is not the file's estimate), and the
 * Geometry row says what is used for a 360° stream. */
static void
test_finder_follows_stream (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(GFile) gfile = g_file_new_for_path (sample);
  TomoLiveReceiverOptions options;
  TomoWindow *window;
  TomoCenterFinder *finder;
  Watch watch = { 0 };
  int loaded = 0;
  g_autofree char *label = NULL;

  if (!need_display ())
    return;
  loopback_options (&options, TOMO_LIVE_PROTOCOL_JSON);
  options.n_projections = 8;
  options.angle_range_deg = 360;
  window = live_window_new (&watch, &options);
  finder = window->panel->center_finder;

  /* The file first, and its estimate. */
  g_signal_connect (window, "scan-loaded", G_CALLBACK (on_loaded), &loaded);
  tomo_window_open (window, gfile);
  g_assert_true (run_until (scan_loaded, &loaded));
  g_assert_cmpint (loaded, ==, 1);
  g_assert_true (tomo_center_finder_get_scan (finder) == tomo_window_get_scan (window));

  /* Then the stream: a 360° scan of 8 projections. */
  send_small_json (window, 8, TRUE);
  g_assert_true (wait_for_status (window, "Scan complete"));
  g_assert_cmpuint (tomo_scan_get_width (tomo_window_get_scan (window)), ==, SMALL);
  g_assert_true (tomo_center_finder_get_scan (finder) == tomo_window_get_scan (window));
  /* Not the file's estimate any more: the stream's, once complete (its
   * flat frames hold no centre). */
  g_assert_true (wait_for_label (finder, "No centre from the data"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (finder), "finder.find", NULL));
  g_assert_true (wait_for_label (finder, "Finding"));
  label = gtk_combo_box_text_get_active_text (window->panel->geometry_combo);
  g_assert_cmpstr (label, ==, "As received (360°)");
  live_window_close (window, &watch);
}

/* A JSON scan without a count grows with its frames, and the window's scan
 * is made anew as it does: an open sweep stays open, and Sweep… again
 * sweeps what has arrived, not the scan it was opened on. */
static void
test_sweep_follows_growing_scan (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) file = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autofree float *proj = NULL;
  g_autofree double *half_scores = NULL;
  g_autofree char *half = NULL, *half_label = NULL, *all_label = NULL;
  TomoLiveReceiverOptions options;
  TomoCenterSweep *sweep;
  TomoWindow *window;
  Watch watch = { 0 };
  const double *centers, *scores;
  guint n, n_cand, n_half_cand;
  double most = 0;

  if (!need_display ())
    return;
  file = tomo_test_open_scan (sample);
  n = tomo_scan_get_n_projections (file);
  proj = read_frames (file, TOMO_FRAME_PROJECTION);
  loopback_options (&options, TOMO_LIVE_PROTOCOL_JSON);
  window = live_window_new (&watch, &options);
  tx = window_sender_new (window, TOMO_LIVE_PROTOCOL_JSON);

  /* Half the projections, and a sweep of them. */
  send_scan_header (tx, file);
  send_projections (tx, file, proj, 0, n / 2, 0);
  half = g_strdup_printf ("%u/%u projections", n / 2, n / 2);
  g_assert_true (wait_for_slice (window, &watch, half, 0));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window->panel->center_finder), "finder.sweep", NULL));
  sweep = ui_find_sweep ();
  g_assert_nonnull (sweep);
  g_assert_true (ui_wait_sweep (sweep));
  half_label = g_strdup_printf ("· %u projections ·", n / 2);
  g_assert_true (ui_has_label (GTK_WIDGET (sweep), half_label));
  g_assert_true (tomo_center_sweep_get_result (sweep, &n_half_cand, &centers, &scores));
  half_scores = g_memdup2 (scores, sizeof (double) * n_half_cand);

  /* The rest: the window's scan is made anew (more projections, other
   * angles) and the sweep stays open on what it showed. */
  send_projections (tx, file, proj, n / 2, n, 0);
  g_assert_true (tomo_live_sender_send_end (tx, &error));
  g_assert_no_error (error);
  g_assert_true (wait_for_status (window, "Scan complete"));
  g_assert_cmpuint (tomo_scan_get_n_projections (tomo_window_get_scan (window)), ==, n);
  g_assert_true (ui_find_sweep () == sweep);
  g_assert_true (ui_has_label (GTK_WIDGET (sweep), half_label));

  /* Sweep… again: all of them, in the same window. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window->panel->center_finder), "finder.sweep", NULL));
  g_assert_true (ui_find_sweep () == sweep);
  g_assert_true (ui_wait_sweep (sweep));
  all_label = g_strdup_printf ("· %u projections ·", n);
  g_assert_true (ui_has_label (GTK_WIDGET (sweep), all_label));
  ui_test_screenshot ("live-sweep.png");
  g_assert_true (tomo_center_sweep_get_result (sweep, &n_cand, &centers, &scores));
  g_assert_cmpuint (n_cand, ==, n_half_cand);
  for (guint i = 0; i < n_cand; i++)
    most = MAX (most, fabs (scores[i] - half_scores[i]) / MAX (fabs (half_scores[i]), 1e-12));
  g_test_message ("sweep scores, half the scan vs all of it: largest relative change %.3g", most);
  g_assert_cmpfloat (most, >, 1e-3);
  live_window_close (window, &watch);
}

/* `tomolive --listen json+… --projections N --angle-range 360 --max-memory
 * SIZE`: the options leave argv and reach the window's receiver. */
static void
test_listen_arguments (void)
{
  char *args[] = { "tomolive", "--listen", "json+tcp://127.0.0.1:*", "--projections", "360",
                   "--angle-range=360", "--max-memory", "64K", "--format", "tiff", NULL };
  char **argv = args;
  int argc = G_N_ELEMENTS (args) - 1;
  TomoWindow *window;
  Watch watch = { 0 };

  if (!need_display ())
    return;
  tomo_live_link_take_arguments (&argc, &argv);
  /* What is not the receiver's stays for the application. */
  g_assert_cmpint (argc, ==, 3);
  g_assert_cmpstr (argv[1], ==, "--format");
  g_assert_cmpstr (argv[2], ==, "tiff");
  ensure_app ();
  tomo_live_link_watch_application (GTK_APPLICATION (app));
  window = tomo_window_new (GTK_APPLICATION (app));
  gtk_window_present (GTK_WINDOW (window));
  g_signal_connect (tomo_window_get_slice_view (window), "slice-shown", G_CALLBACK (watch_shown), &watch);
  g_assert_nonnull (tomo_live_link_get_status (window));
  g_assert_nonnull (strstr (tomo_live_link_get_status (window), "(json)"));

  /* 64 KiB: 360 slots and four frames of 9 KiB; the fifth is dropped. */
  send_small_json (window, 5, FALSE);
  g_assert_true (wait_for_status (window, "4/360 projections"));
  g_assert_nonnull (strstr (tomo_live_link_get_status (window), "1 dropped"));
  g_assert_cmpfloat_with_epsilon (live_angle (window, 1), 1.0, 1e-9);   /* 360° / 360 */
  live_window_close (window, &watch);
}

/* The Connect… dialog's JSON projection count and angle range reach the
 * receiver. */
static void
test_connect_dialog_json (void)
{
  TomoLiveReceiverOptions options;
  TomoWindow *window;
  GtkWindow *dialog;
  Watch watch = { 0 };

  if (!need_display ())
    return;
  loopback_options (&options, TOMO_LIVE_PROTOCOL_TOMOP);
  window = live_window_new (&watch, &options);   /* replaced by the dialog's */
  dialog = tomo_connect_dialog_present (window);
  gtk_editable_set_text (GTK_EDITABLE (find_widget (GTK_WIDGET (dialog), named, "url")), "tcp://127.0.0.1:*");
  g_assert_false (gtk_widget_get_sensitive (find_widget (GTK_WIDGET (dialog), named, "projections")));
  gtk_drop_down_set_selected (GTK_DROP_DOWN (find_widget (GTK_WIDGET (dialog), named, "protocol")), 1);
  g_assert_true (gtk_widget_get_sensitive (find_widget (GTK_WIDGET (dialog), named, "projections")));
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (find_widget (GTK_WIDGET (dialog), named, "projections")), 90);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (find_widget (GTK_WIDGET (dialog), named, "angle-range")), 360);
  if (g_getenv ("TOMO_LIVE_SHOT") != NULL)
    tomo_test_spin (3000);   /* a moment to look at the dialog */
  g_signal_emit_by_name (find_widget (GTK_WIDGET (dialog), button_labelled, "C_onnect"), "clicked");
  g_assert_nonnull (strstr (tomo_live_link_get_status (window), "(json)"));

  send_small_json (window, 3, FALSE);
  g_assert_true (wait_for_status (window, "3/90 projections"));
  g_assert_cmpfloat_with_epsilon (live_angle (window, 1), 4.0, 1e-9);   /* 360° / 90 */
  live_window_close (window, &watch);
}

int
main (int    argc,
      char **argv)
{
  /* The application is one per process: a second would not register. */
  ui_test_init (&argc, &argv);
  {
    static const Case tomop = { TOMO_LIVE_PROTOCOL_TOMOP, FALSE, FALSE };
    static const Case continuous = { TOMO_LIVE_PROTOCOL_TOMOP, FALSE, TRUE };
    static const Case json = { TOMO_LIVE_PROTOCOL_JSON, FALSE, FALSE };
    static const Case json_count = { TOMO_LIVE_PROTOCOL_JSON, TRUE, FALSE };

    g_test_add_data_func ("/tomo/live/ui/receive/tomop", &tomop, test_receive);
    g_test_add_data_func ("/tomo/live/ui/receive/tomop-continuous", &continuous, test_receive);
    g_test_add_data_func ("/tomo/live/ui/receive/json", &json, test_receive);
    g_test_add_data_func ("/tomo/live/ui/receive/json-count", &json_count, test_receive);
    g_test_add_func ("/tomo/live/ui/late-flats", test_late_flats);
    g_test_add_data_func ("/tomo/live/ui/next-scan-near-limit/tomop", GINT_TO_POINTER (NEAR_TOMOP),
                          test_next_scan_near_limit);
    g_test_add_data_func ("/tomo/live/ui/next-scan-near-limit/tomop-geometry", GINT_TO_POINTER (NEAR_TOMOP_GEOMETRY),
                          test_next_scan_near_limit);
    g_test_add_data_func ("/tomo/live/ui/next-scan-near-limit/json", GINT_TO_POINTER (NEAR_JSON),
                          test_next_scan_near_limit);
    g_test_add_func ("/tomo/live/ui/listen-arguments", test_listen_arguments);
    g_test_add_func ("/tomo/live/ui/finder-follows-stream", test_finder_follows_stream);
    g_test_add_func ("/tomo/live/ui/connect-dialog-json", test_connect_dialog_json);
    g_test_add_func ("/tomo/live/ui/sweep-follows-growing-scan", test_sweep_follows_growing_scan);
    g_test_add_data_func ("/tomo/live/ui/next-rotation/scan", GINT_TO_POINTER (FALSE), test_next_rotation);
    g_test_add_data_func ("/tomo/live/ui/next-rotation/continuous", GINT_TO_POINTER (TRUE), test_next_rotation);
  }
  return ui_test_run ();
}
