/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <string.h>

#include "tomo-live-cli.h"
#include "tomo-live-link.h"
#include "tomo-live-preview.h"
#include "tomo-live-scan.h"
#include "tomo-scan-private.h"
#include "tomo-window-private.h"

#define LINK_KEY "tomo-live-link"
#define TICK_MS 100
#define SHOW_MS 4       /* a new incremental slice is handed to the view well within a frame */
#define STEPS_CPU 60    /* live steps a second on the CPU (each filters and back projects on the host) */
#define STEPS_GPU 250   /* on the GPU, a step is about a millisecond (docs/PERFORMANCE.md) */

typedef struct
{
  TomoWindow       *window;     /* not owned: the link is the window's data */
  TomoLiveReceiver *rx;
  guint             tick_id;
  TomoLiveScan     *live;
  TomoScan         *scan;
  guint             scan_n_proj;
  guint64           layout;       /* the live scan's when `scan` was made */
  guint64           generation;
  guint             n_scans;      /* scans made so far: `scan` is number n_scans */
  guint             estimated;    /* the number of the last one whose centre was estimated at its end */
  gint64            submitted;    /* when a reconstruction was asked for, 0: none in flight */
  gulong            ready_id;
  char             *status;
  /* while a scan of known size arrives: the incremental slice */
  TomoLivePreview  *preview;
  TomoLivePreviewOptions preview_options;
  guint64           shown_version;
  guint             show_id;
  TomoLiveMode      mode;         /* the window's choice: scan or continuous */
  GtkWidget        *mode_control; /* in the header bar while the link lasts */
  /* for the rates */
  gint64            rate_time;
  guint64           rate_bytes;
  guint64           rate_frames;
  double            mb_per_s;
  double            proj_per_s;
} Link;

static void
link_free (gpointer data)
{
  Link *link = data;

  g_clear_handle_id (&link->tick_id, g_source_remove);
  g_clear_handle_id (&link->show_id, g_source_remove);
  g_clear_pointer (&link->preview, tomo_live_preview_free);
  if (link->mode_control != NULL)
    {
      GtkWidget *bar = gtk_widget_get_parent (link->mode_control);

      g_signal_handlers_disconnect_by_data (link->mode_control, link);
      /* The header bar packs children into boxes of its own. */
      while (bar != NULL && !GTK_IS_HEADER_BAR (bar))
        bar = gtk_widget_get_parent (bar);
      if (bar != NULL)
        gtk_header_bar_remove (GTK_HEADER_BAR (bar), link->mode_control);
      g_object_unref (link->mode_control);
    }
  /* The window may be disposing, its handlers already gone. */
  if (link->ready_id != 0 && g_signal_handler_is_connected (link->window, link->ready_id))
    g_signal_handler_disconnect (link->window, link->ready_id);
  g_clear_pointer (&link->rx, tomo_live_receiver_free);
  g_clear_pointer (&link->live, tomo_live_scan_unref);
  g_clear_object (&link->scan);
  g_free (link->status);
  g_free (link);
}

static void
set_status (Link *link,
            char *status)
{
  g_free (link->status);
  link->status = status;
}

static void
slice_ready (TomoWindow *window,
             gpointer    data)
{
  ((Link *) data)->submitted = 0;
}

/* Puts the preview's newest slice on screen (main thread, every frame). */
static gboolean
show_preview (gpointer data)
{
  Link *link = data;
  g_autoptr(TomoSlice) slice = NULL;
  guint64 version = 0;

  if (link->preview == NULL)
    return G_SOURCE_CONTINUE;
  slice = tomo_live_preview_dup_slice (link->preview, NULL, &version);
  /* While the scan arrives the incremental slice is the newest: an engine
   * slice of an earlier snapshot (a new scan, a parameter change) gives way. */
  if (slice != NULL && (version != link->shown_version ||
                        tomo_slice_view_get_slice (tomo_window_get_slice_view (link->window)) != slice))
    {
      link->shown_version = version;
      _tomo_window_show_slice (link->window, slice);
    }
  return G_SOURCE_CONTINUE;
}

/* The incremental slice follows the window's row and parameters: any change
 * of them starts it afresh (everything recomputed), as does a new scan. */
static void
update_preview (Link    *link,
                gboolean receiving)
{
  TomoWindow *window = link->window;
  TomoLivePreviewOptions options;

  if (!receiving)
    {
      g_clear_pointer (&link->preview, tomo_live_preview_free);
      return;
    }
  tomo_live_preview_options_init (&options);
  options.row = window->params.row;
  options.params.center = window->params.center;
  options.params.filter = window->params.filter;
  options.params.interp = window->params.interp;
  options.backend = window->backend;
  options.mode = link->mode;
  /* Steps faster than the display's frames: the newest slice is then at most
   * a few ms old when a frame is drawn (bench --live: arrival → texture). */
  options.max_rate = window->backend == TOMO_BACKEND_CPU ? STEPS_CPU : STEPS_GPU;
  /* Once the window's slices reach the texture through interop, the live
   * slice stays on the device too: no download, statistics from the device. */
  options.device_only = window->backend != TOMO_BACKEND_CPU &&
                        g_strcmp0 (tomo_slice_view_get_upload_path (tomo_window_get_slice_view (window)),
                                   "CUDA–GL interop") == 0;
  if (link->preview != NULL &&
      options.mode == link->preview_options.mode &&
      options.device_only == link->preview_options.device_only &&
      options.row == link->preview_options.row &&
      options.params.center == link->preview_options.params.center &&
      options.params.filter == link->preview_options.params.filter &&
      options.params.interp == link->preview_options.params.interp &&
      options.backend == link->preview_options.backend)
    return;
  g_clear_pointer (&link->preview, tomo_live_preview_free);
  link->preview_options = options;
  link->preview = tomo_live_preview_new (link->rx, &options, NULL, NULL);
  link->shown_version = 0;
}

static gboolean
tick (gpointer data)
{
  Link *link = data;
  g_autoptr(TomoLiveScan) live = NULL;
  g_autoptr(TomoLiveScan) done = NULL;
  TomoLiveScan *next;
  TomoLiveReceiverStats stats;
  TomoLiveScanInfo info;
  gint64 now = g_get_monotonic_time ();
  gboolean changed = FALSE, receiving;
  const char *held;
  guint64 layout;

  /* The scans completed since the last tick, the newest kept: a JSON scan
   * may begin and end between two ticks (it is then no longer current). */
  while ((next = tomo_live_receiver_wait_complete (link->rx, 0, NULL)) != NULL)
    {
      g_clear_pointer (&done, tomo_live_scan_unref);
      done = next;
    }
  live = tomo_live_receiver_dup_current (link->rx);
  if (live == NULL && done != NULL)
    live = tomo_live_scan_ref (done);
  tomo_live_receiver_get_stats (link->rx, &stats);
  if (now - link->rate_time >= G_USEC_PER_SEC)
    {
      double dt = (now - link->rate_time) / 1e6;

      link->mb_per_s = (stats.bytes - link->rate_bytes) / dt / 1e6;
      link->proj_per_s = link->rate_time ? (stats.n_accepted - link->rate_frames) / dt : 0;
      link->rate_time = now;
      link->rate_bytes = stats.bytes;
      link->rate_frames = stats.n_accepted;
    }

  if (live == NULL && link->live == NULL)
    {
      set_status (link, g_strdup_printf ("Waiting for data on %s (%s)%s",
                                         tomo_live_receiver_get_endpoint (link->rx),
                                         tomo_live_protocol_to_string (tomo_live_receiver_get_protocol (link->rx)),
                                         stats.n_dropped_total ? " · messages dropped" : ""));
      tomo_window_show_live (link->window, NULL, link->status);
      return G_SOURCE_CONTINUE;
    }
  if (live == NULL)   /* a JSON scan ended: keep showing it */
    live = tomo_live_scan_ref (link->live);

  /* A scan of known size (TomoPackets announce it; for JSON the geometry
   * given to the receiver) builds its slice incrementally while frames
   * arrive: until it is complete, and again once the next rotation comes
   * (ids past the count replace the slots of the last one: a whole
   * reconstruction would mix two rotations).  A JSON scan that grows frame
   * by frame changes every angle and scale as it grows, and is
   * reconstructed whole. */
  tomo_live_scan_get_info (live, &info);
  receiving = info.n_expected[TOMO_FRAME_PROJECTION] > 0 && (!info.complete || info.rotation > 0);

  /* The TomoScan fixes the counts of projections, flats and darks, the
   * angles and whether the data is normalised: when any of them moves
   * (flats after the first projections, ScanSettings late, a growing
   * scan), a new one replaces it. */
  layout = tomo_live_scan_get_layout (live);
  if (live != link->live || layout != link->layout)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TomoScan) scan = tomo_live_scan_create_scan (live, &error);

      if (scan != NULL)
        {
          g_clear_pointer (&link->live, tomo_live_scan_unref);
          link->live = tomo_live_scan_ref (live);
          g_set_object (&link->scan, scan);
          link->n_scans++;
          link->scan_n_proj = tomo_scan_get_n_projections (scan);
          link->layout = layout;
          link->generation = tomo_live_scan_get_generation (live);
          tomo_window_show_live (link->window, scan, NULL);
        }
    }
  else if (link->preview != NULL && receiving)
    {
      /* Receiving: the incremental slice is shown (show_preview). */
    }
  else if (tomo_live_scan_get_generation (live) != link->generation &&
           (link->submitted == 0 || now - link->submitted > 2 * G_USEC_PER_SEC))
    {
      /* One reconstruction at a time: a new request would supersede the
       * one in flight, and on a busy machine none would ever finish. */
      link->generation = tomo_live_scan_get_generation (live);
      tomo_live_scan_refresh (live, link->scan);
      link->submitted = now;
      changed = TRUE;
    }

  update_preview (link, link->scan != NULL && receiving);
  g_autofree char *gaps = info.n_gaps == 0 ? g_strdup ("")
    : g_strdup_printf (" · %u missing (first at %.2f°)", info.n_gaps,
                       tomo_live_scan_get_angle (live, info.first_gap) * 180.0 / G_PI);
  /* A complete scan, once: its centre from the data, as when a file
   * opens (the window keeps one the user chose meanwhile).  Complete
   * counts the first rotation, whether or not the next one follows at
   * once (continuous mode never pauses). */
  if (info.complete && link->scan != NULL && link->estimated != link->n_scans)
    {
      link->estimated = link->n_scans;
      tomo_center_finder_scan_completed (link->window->panel->center_finder);
    }
  /* The beginning shows in the subtitle: a stall says why there, whether
   * the next scan has begun (its frames wait) or not (its geometry does). */
  held = stats.waiting ? "Sender held back until the previous scan lets go of its memory (--max-memory) · " : "";
  if (info.complete && !receiving)
    set_status (link, g_strdup_printf ("%s%s: %u projections, %u flats, %u darks%s · %"
                                       G_GUINT64_FORMAT " dropped · %s", held,
                                       /* Its frames went to the next scan: the slice
                                        * shown stays, nothing more is read. */
                                       info.released ? "Scan complete, its frames released for the next (--max-memory)"
                                       : "Scan complete",
                                       info.n_present[TOMO_FRAME_PROJECTION], info.n_present[TOMO_FRAME_FLAT],
                                       info.n_present[TOMO_FRAME_DARK], gaps, stats.n_dropped_total,
                                       tomo_live_receiver_get_endpoint (link->rx)));
  else
    {
      g_autofree char *last = stats.n_dropped_total ? tomo_live_receiver_dup_last_drop (link->rx) : NULL;
      /* Past the first rotation: which one, and (scan mode) how much of it. */
      g_autofree char *rotation = info.rotation == 0 ? g_strdup ("")
        : g_strdup_printf ("rotation %u, ", info.rotation + 1);
      guint n_shown = info.rotation > 0 && link->mode == TOMO_LIVE_MODE_SCAN
                      ? info.n_in_rotation : info.n_present[TOMO_FRAME_PROJECTION];

      set_status (link, g_strdup_printf ("%sReceiving (%s): %s%u/%u projections%s, %u flats, %u darks · %.1f MB/s · "
                                         "%.0f proj/s · %" G_GUINT64_FORMAT " dropped%s%s%s", held,
                                         link->preview == NULL ? "whole scan"
                                         : link->mode == TOMO_LIVE_MODE_CONTINUOUS ? "continuous" : "scan",
                                         rotation, n_shown, link->scan_n_proj, gaps,
                                         info.n_present[TOMO_FRAME_FLAT], info.n_present[TOMO_FRAME_DARK],
                                         link->mb_per_s, link->proj_per_s, stats.n_dropped_total,
                                         last ? " (last: " : "", last ? last : "", last ? ")" : ""));
    }
  tomo_window_show_live (link->window, changed ? link->scan : NULL, link->status);
  /* The subtitle shows the beginning (state, mode, counts); all of it on hover. */
  gtk_widget_set_tooltip_text (GTK_WIDGET (link->window->subtitle_label), link->status);
  return G_SOURCE_CONTINUE;
}

static void
mode_changed (GObject    *dropdown,
              GParamSpec *pspec,
              gpointer    data)
{
  Link *link = data;

  link->mode = gtk_drop_down_get_selected (GTK_DROP_DOWN (dropdown)) == 1 ? TOMO_LIVE_MODE_CONTINUOUS
                                                                          : TOMO_LIVE_MODE_SCAN;
  /* The next tick starts the slice afresh in the new mode. */
  tick (link);
}

/* Scan (one rotation accumulates) or continuous (a sliding window: each
 * projection replaces the one at its angle), beside the title while live. */
static void
add_mode_control (Link *link)
{
  static const char *const modes[] = { "Scan", "Continuous", NULL };
  GtkWidget *bar = gtk_window_get_titlebar (GTK_WINDOW (link->window));
  GtkWidget *dropdown;

  if (bar == NULL || !GTK_IS_HEADER_BAR (bar))
    return;
  dropdown = gtk_drop_down_new_from_strings (modes);
  gtk_widget_set_name (dropdown, "live-mode");
  gtk_widget_set_tooltip_text (dropdown, "Live slice: Scan accumulates the projections of one rotation; "
                                         "Continuous keeps a sliding window of the last rotation "
                                         "(each new projection replaces the one at its angle)");
  gtk_drop_down_set_selected (GTK_DROP_DOWN (dropdown), link->mode == TOMO_LIVE_MODE_CONTINUOUS ? 1 : 0);
  g_signal_connect (dropdown, "notify::selected", G_CALLBACK (mode_changed), link);
  link->mode_control = g_object_ref (dropdown);
  gtk_label_set_ellipsize (link->window->subtitle_label, PANGO_ELLIPSIZE_END);
  gtk_header_bar_pack_start (GTK_HEADER_BAR (bar), dropdown);
}

gboolean
tomo_live_link_attach (TomoWindow                    *window,
                       const TomoLiveReceiverOptions *options,
                       GError                       **error)
{
  Link *link;
  TomoLiveReceiver *rx;

  g_return_val_if_fail (TOMO_IS_WINDOW (window), FALSE);

  /* The old link lets go of its socket first: the same address may be asked for again. */
  g_object_set_data (G_OBJECT (window), LINK_KEY, NULL);
  rx = tomo_live_receiver_new (options, error);
  if (rx == NULL)
    return FALSE;
  link = g_new0 (Link, 1);
  link->window = window;
  link->rx = rx;
  link->tick_id = g_timeout_add (TICK_MS, tick, link);
  link->show_id = g_timeout_add (SHOW_MS, show_preview, link);
  link->ready_id = g_signal_connect (window, "slice-ready", G_CALLBACK (slice_ready), link);
  add_mode_control (link);
  g_object_set_data_full (G_OBJECT (window), LINK_KEY, link, link_free);
  tick (link);
  return TRUE;
}

const char *
tomo_live_link_get_status (TomoWindow *window)
{
  Link *link = g_object_get_data (G_OBJECT (window), LINK_KEY);

  return link ? link->status : NULL;
}

gboolean
tomo_live_link_get_stats (TomoWindow            *window,
                          TomoLiveReceiverStats *stats)
{
  Link *link;

  g_return_val_if_fail (TOMO_IS_WINDOW (window) && stats != NULL, FALSE);

  link = g_object_get_data (G_OBJECT (window), LINK_KEY);
  if (link == NULL)
    return FALSE;
  tomo_live_receiver_get_stats (link->rx, stats);
  return TRUE;
}

const char *
tomo_live_link_get_endpoint (TomoWindow *window)
{
  Link *link = g_object_get_data (G_OBJECT (window), LINK_KEY);

  return link ? tomo_live_receiver_get_endpoint (link->rx) : NULL;
}

TomoLiveScan *
tomo_live_link_dup_live_scan (TomoWindow *window,
                              TomoScan   *scan)
{
  Link *link = g_object_get_data (G_OBJECT (window), LINK_KEY);

  if (link == NULL || scan == NULL || link->scan != scan || link->live == NULL)
    return NULL;
  return tomo_live_scan_ref (link->live);
}

/* --- tomolive --listen URL ------------------------------------------------ */

/* What `tomolive --listen` gave, for the first window. */
static struct
{
  TomoLiveCliListen listen;
  char             *angles;
  double            angle_range;
  char             *error;
} startup;

void
tomo_live_link_take_arguments (int    *argc,
                               char ***argv)
{
  GOptionEntry entries[] = {
    { "listen", 'l', 0, G_OPTION_ARG_STRING, &startup.listen.url, NULL, NULL },
    { "protocol", 0, 0, G_OPTION_ARG_STRING, &startup.listen.protocol, NULL, NULL },
    { "socket", 0, 0, G_OPTION_ARG_STRING, &startup.listen.socket, NULL, NULL },
    { "projections", 0, 0, G_OPTION_ARG_INT, &startup.listen.n_projections, NULL, NULL },
    { "angles", 0, 0, G_OPTION_ARG_FILENAME, &startup.angles, NULL, NULL },
    { "angle-range", 0, 0, G_OPTION_ARG_DOUBLE, &startup.angle_range, NULL, NULL },
    { "max-memory", 0, 0, G_OPTION_ARG_STRING, &startup.listen.max_memory, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  gboolean listen = FALSE;

  /* Without --listen the options are the input options of a file. */
  for (int i = 1; i < *argc && !listen; i++)
    listen = g_str_equal ((*argv)[i], "--listen") || g_str_equal ((*argv)[i], "-l") ||
             g_str_has_prefix ((*argv)[i], "--listen=");
  if (!listen)
    return;
  context = g_option_context_new (NULL);
  g_option_context_set_help_enabled (context, FALSE);
  g_option_context_set_ignore_unknown_options (context, TRUE);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, argc, argv, &error))
    startup.error = g_strdup (error->message);
}

static void
window_added (GtkApplication *app,
              GtkWindow      *window,
              gpointer        user_data)
{
  g_autoptr(GError) error = NULL;
  g_autofree double *angles = NULL;
  TomoLiveReceiverOptions options;

  if ((startup.listen.url == NULL && startup.error == NULL) || !TOMO_IS_WINDOW (window))
    return;
  g_signal_handlers_disconnect_by_func (app, window_added, user_data);
  if (startup.error != NULL)
    tomo_window_show_error (TOMO_WINDOW (window), startup.error);
  else if (tomo_live_cli_receiver_options (&startup.listen, startup.angles, startup.angle_range, &options,
                                           &angles, &error))
    tomo_live_link_attach (TOMO_WINDOW (window), &options, &error);
  if (error != NULL)
    tomo_window_show_error (TOMO_WINDOW (window), error->message);
}

void
tomo_live_link_watch_application (GtkApplication *app)
{
  if (startup.listen.url != NULL || startup.error != NULL)
    g_signal_connect (app, "window-added", G_CALLBACK (window_added), NULL);
}
