/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-cli"

#include "config.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tomo-options.h"
#include "tomo-cli.h"
#include "tomo-error.h"
#include "tomo-live-cli.h"
#include "tomo-live-receiver.h"
#include "tomo-live-recorder.h"
#include "tomo-live-sender.h"
#include "tomo-memory.h"
#include "tomo-output.h"
#include "tomo-scan-private.h"

GOptionGroup *
tomo_live_cli_listen_group (TomoLiveCliListen *l)
{
  GOptionEntry entries[] = {
    { "listen", 'l', 0, G_OPTION_ARG_STRING, &l->url,
      "Receive the scan live: bind this ZeroMQ address (tcp://*:5558) instead of reading FILE", "URL" },
    { "protocol", 0, 0, G_OPTION_ARG_STRING, &l->protocol, "tomop (default) or json", "P" },
    { "socket", 0, 0, G_OPTION_ARG_STRING, &l->socket,
      "pull (default) or rep (answer every message with int32 1)", "S" },
    { "record", 0, 0, G_OPTION_ARG_FILENAME, &l->record,
      "Also write what was received as HDF5 Data Exchange, flushed as it arrives (not the --angles file or -o)",
      "FILE.h5" },
    { "timeout", 0, 0, G_OPTION_ARG_DOUBLE, &l->timeout,
      "Give up (exit 1) when no complete scan arrived after S seconds", "S" },
    { "max-memory", 0, 0, G_OPTION_ARG_STRING, &l->max_memory,
      "Memory for received frames, all scans together (e.g. 8G; default half the RAM)", "SIZE" },
    { "projections", 0, 0, G_OPTION_ARG_INT, &l->n_projections,
      "JSON: number of projections of a rotation (angles from --angles or --angle-range)", "N" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &l->verbose, "Report what arrives", NULL },
    G_OPTION_ENTRY_NULL
  };
  GOptionGroup *group = g_option_group_new ("live", "Live input options:",
                                            "Show options for receiving scans live", NULL, NULL);

  g_option_group_add_entries (group, entries);
  return group;
}

void
tomo_live_cli_listen_clear (TomoLiveCliListen *l)
{
  g_free (l->url);
  g_free (l->protocol);
  g_free (l->socket);
  g_free (l->record);
  g_free (l->max_memory);
}

static void
print_stats (TomoLiveReceiver *rx,
             TomoLiveScan     *scan,
             double            seconds)
{
  TomoLiveReceiverStats s;
  TomoLiveScanInfo info;

  tomo_live_receiver_get_stats (rx, &s);
  tomo_live_scan_get_info (scan, &info);
  g_printerr ("tomolive: received %u projections, %u flats, %u darks in %.2f s "
              "(%.1f MB/s), %" G_GUINT64_FORMAT " duplicates, %" G_GUINT64_FORMAT " dropped\n",
              info.n_present[TOMO_FRAME_PROJECTION], info.n_present[TOMO_FRAME_FLAT],
              info.n_present[TOMO_FRAME_DARK], seconds,
              seconds > 0 ? s.bytes / seconds / 1e6 : 0.0, info.n_duplicates, s.n_dropped_total);
  for (guint k = 0; k < TOMO_LIVE_N_DROPS; k++)
    if (s.n_dropped[k] > 0)
      g_printerr ("tomolive:   dropped %" G_GUINT64_FORMAT " × %s\n", s.n_dropped[k],
                  tomo_live_drop_to_string (k));
}

gboolean
tomo_live_cli_receiver_options (const TomoLiveCliListen *l,
                                const char              *angles_file,
                                double                   angle_range,
                                TomoLiveReceiverOptions *options,
                                double                 **angles,
                                GError                 **error)
{
  guint n_angles = 0;

  *angles = NULL;
  tomo_live_receiver_options_init (options);
  options->url = l->url;
  if (l->protocol != NULL && !tomo_live_protocol_from_string (l->protocol, &options->protocol, error))
    return FALSE;
  if (l->socket != NULL)
    {
      if (g_ascii_strcasecmp (l->socket, "rep") == 0)
        options->reply = TRUE;
      else if (g_ascii_strcasecmp (l->socket, "pull") != 0)
        {
          g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_URL,
                       "--socket “%s”: pull or rep", l->socket);
          return FALSE;
        }
    }
  if (l->max_memory != NULL)
    {
      guint64 bytes;

      if (!tomo_memory_parse_size ("--max-memory", l->max_memory, &bytes, error))
        return FALSE;
      options->max_memory = (gsize) MIN (bytes, (guint64) G_MAXSIZE);
    }
  if (l->n_projections < 0 || l->n_projections > 10000000)
    {
      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_URL,
                   "--projections %d is out of range (0 to 10000000)", l->n_projections);
      return FALSE;
    }
  /* 0: not given (the default, 180°). */
  if (angle_range != 0 && !(angle_range > 0 && angle_range <= TOMO_MAX_ANGLE_DEG))
    {
      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_URL,
                   "--angle-range %g is out of range (more than 0, at most %g degrees)",
                   angle_range, TOMO_MAX_ANGLE_DEG);
      return FALSE;
    }
  if (angles_file != NULL)
    {
      g_autofree double *values = _tomo_read_angle_file (angles_file, &n_angles, error);

      if (values == NULL)
        return FALSE;
      if (l->n_projections > 0 && n_angles != (guint) l->n_projections)
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "Angle file %s has %u angles but --projections is %d",
                       angles_file, n_angles, l->n_projections);
          return FALSE;
        }
      options->n_projections = n_angles;
      options->angles_deg = values;
      *angles = g_steal_pointer (&values);
    }
  else
    options->n_projections = l->n_projections;
  if (angle_range > 0)
    options->angle_range_deg = angle_range;
  return TRUE;
}

/* While recording, SIGINT or SIGTERM keep the file (flushed every 200 ms,
 * readable) and say so; no output of reconstruct exists yet (-o is written
 * after the scan came), so there is nothing to remove. */
static char record_kept_int[4200], record_kept_term[4200];
static struct sigaction previous_int, previous_term;

static void
on_signal_recording (int signum)
{
  const char *msg = signum == SIGINT ? record_kept_int : record_kept_term;

  if (write (STDERR_FILENO, msg, strlen (msg)) < 0)
    { /* nothing left to do */ }
  _exit (1);
}

static void
recording_signals (const char *path,
                   gboolean    install)
{
  struct sigaction sa;

  if (!install)
    {
      sigaction (SIGINT, &previous_int, NULL);
      sigaction (SIGTERM, &previous_term, NULL);
      return;
    }
  g_snprintf (record_kept_int, sizeof record_kept_int,
              "\ntomolive: interrupted; the recording %s is kept with what arrived\n", path);
  g_snprintf (record_kept_term, sizeof record_kept_term,
              "\ntomolive: terminated; the recording %s is kept with what arrived\n", path);
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal_recording;
  sigemptyset (&sa.sa_mask);
  sigaddset (&sa.sa_mask, SIGINT);
  sigaddset (&sa.sa_mask, SIGTERM);
  sigaction (SIGINT, &sa, &previous_int);
  sigaction (SIGTERM, &sa, &previous_term);
}

/* --record must not overwrite what the run reads (--angles) or writes
 * (-o), nor any file already there: a recording is made when the stream
 * begins, before the run could know it will succeed, and the file it would
 * replace is most likely an earlier recording. */
static gboolean
check_record_path (const TomoLiveCliListen *l,
                   const char              *angles_file,
                   GError                 **error)
{
  const char *inputs[3] = { NULL, };
  const char *record[2] = { l->record, NULL };
  GStatBuf st;
  guint n = 0;

  if (angles_file != NULL)
    inputs[n++] = angles_file;
  if (l->output != NULL)
    inputs[n++] = l->output;
  if (!tomo_output_check_inputs (l->record, inputs, error))
    return FALSE;
  if (g_lstat (l->record, &st) == 0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "--record %s exists: a recording never replaces a file "
                   "(remove it or choose another name)", l->record);
      return FALSE;
    }
  /* -o a folder that would hold the recording. */
  if (l->output != NULL && !tomo_output_check_inputs (l->output, record, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *a = g_canonicalize_filename (l->record, NULL);
      g_autofree char *b = g_canonicalize_filename (inputs[i], NULL);

      /* Neither exists yet: the same name. */
      if (g_str_equal (a, b))
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                       "--record %s is the same file as %s %s", l->record,
                       inputs[i] == angles_file ? "--angles" : "-o", inputs[i]);
          return FALSE;
        }
    }
  return TRUE;
}

TomoScan *
tomo_live_cli_receive (TomoLiveCliListen *l,
                       const char        *angles_file,
                       double             angle_range,
                       GError           **error)
{
  g_autoptr(TomoLiveReceiver) rx = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  g_autofree double *angles = NULL;
  TomoLiveReceiverOptions options;
  gint64 start;

  if (!tomo_live_cli_receiver_options (l, angles_file, angle_range, &options, &angles, error))
    return NULL;
  /* GOption takes "nan" and "inf" for a double: a NaN timeout would wait
   * for ever and an infinite one overflows the deadline. */
  if (!isfinite (l->timeout) || l->timeout < 0 || l->timeout > 86400)
    {
      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_URL,
                   "--timeout %g is out of range (a finite number of seconds, 0 to 86400)",
                   l->timeout);
      return NULL;
    }

  if (l->record != NULL && !check_record_path (l, angles_file, error))
    return NULL;
  rx = tomo_live_receiver_new (&options, error);
  if (rx == NULL)
    return NULL;
  if (l->verbose)
    g_printerr ("tomolive: listening on %s (%s, %s)\n", tomo_live_receiver_get_endpoint (rx),
                tomo_live_protocol_to_string (tomo_live_receiver_get_protocol (rx)),
                options.reply ? "rep" : "pull");
  start = g_get_monotonic_time ();
  if (l->record == NULL)
    live = tomo_live_receiver_wait_complete (rx, l->timeout > 0 ? (gint64) (l->timeout * 1e6) : -1, error);
  else
    {
      /* Record while it arrives: flush what came every 200 ms. */
      g_autoptr(TomoLiveRecorder) recorder = NULL;
      TomoLiveScan *recorded = NULL;
      gint64 deadline = l->timeout > 0 ? start + (gint64) (l->timeout * 1e6) : G_MAXINT64;
      gboolean ok = TRUE;

      recording_signals (l->record, TRUE);
      while (live == NULL && ok)
        {
          g_autoptr(GError) wait_error = NULL;
          g_autoptr(TomoLiveScan) current = NULL;

          live = tomo_live_receiver_wait_complete (rx, 200000, &wait_error);
          current = live ? tomo_live_scan_ref (live) : tomo_live_receiver_dup_current (rx);
          if (current != NULL && current != recorded)
            {
              /* A new scan replaces the one begun in the file. */
              g_clear_pointer (&recorder, tomo_live_recorder_free);
              recorder = tomo_live_recorder_new (current, l->record, error);
              ok = recorder != NULL;
              recorded = current;
            }
          ok = ok && (recorder == NULL || tomo_live_recorder_flush (recorder, error));
          if (live == NULL && g_get_monotonic_time () >= deadline)
            {
              g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_TIMEOUT,
                           "No complete scan arrived on %s within %.1f s",
                           tomo_live_receiver_get_endpoint (rx), l->timeout);
              break;
            }
        }
      if (ok && live != NULL)
        ok = tomo_live_recorder_finish (g_steal_pointer (&recorder), error);
      recording_signals (l->record, FALSE);
      if (!ok)
        return NULL;
    }
  if (live == NULL)
    {
      g_autoptr(TomoLiveScan) partial = tomo_live_receiver_dup_current (rx);

      if (partial != NULL)
        {
          TomoLiveScanInfo info;

          tomo_live_scan_get_info (partial, &info);
          g_prefix_error (error, "Scan incomplete (%u of %u projections, %u of %u flats, %u of %u darks): ",
                          info.n_present[0], info.n_expected[0], info.n_present[1], info.n_expected[1],
                          info.n_present[2], info.n_expected[2]);
        }
      return NULL;
    }
  if (l->verbose)
    print_stats (rx, live, (g_get_monotonic_time () - start) / 1e6);
  {
    TomoLiveScanInfo info;

    tomo_live_scan_get_info (live, &info);
    if (info.n_gaps > 0)
      g_printerr ("tomolive: warning: %u projections never arrived (the first at %.2f°); "
                  "the reconstruction goes without them\n",
                  info.n_gaps, tomo_live_scan_get_angle (live, info.first_gap) * 180.0 / G_PI);
  }
  return tomo_live_scan_create_scan (live, error);
}

int
tomo_live_cli_stream (GOptionContext  *context,
                      int              argc,
                      char           **argv,
                      TomoCliOpenFunc  open,
                      gpointer         data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autofree char *to = NULL, *protocol = NULL, *socket = NULL;
  double rate = 0, timeout = 0;
  gboolean loop = FALSE;
  TomoNumberOption numbers[] = {
    { "rate", 0, 0, 1e6, FALSE, &rate },
    { "timeout", 0, 0, 86400, FALSE, &timeout },
    { NULL },
  };
  GOptionEntry entries[] = {
    { "to", 't', 0, G_OPTION_ARG_STRING, &to, "Receiver's ZeroMQ address (tcp://host:5558)", "URL" },
    { "protocol", 0, 0, G_OPTION_ARG_STRING, &protocol, "tomop (default) or json", "P" },
    { "rate", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Projections per second (default: as fast as possible)", "N" },
    { "loop", 0, 0, G_OPTION_ARG_NONE, &loop, "Send the scan again and again", NULL },
    { "socket", 0, 0, G_OPTION_ARG_STRING, &socket, "push (default) or req (wait for each reply)", "S" },
    { "timeout", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Fail when the receiver takes no message for S seconds (default 30)", "S" },
    G_OPTION_ENTRY_NULL
  };
  TomoLiveStreamOptions options = { 0, };

  g_option_context_set_summary (context,
    "Replays a scan as a live sender (TomoPackets or JSON header + raw frame):\n"
    "darks, flats, then projections.");
  if (!tomo_cli_parse (context, entries, numbers, &argc, &argv, &error))
    goto out;
  if (argc != 2 || to == NULL)
    {
      g_set_error_literal (&error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_URL,
                           "stream needs one FILE and --to URL");
      goto out;
    }
  if (protocol != NULL && !tomo_live_protocol_from_string (protocol, &options.protocol, &error))
    goto out;
  if (socket != NULL)
    {
      if (g_ascii_strcasecmp (socket, "req") == 0)
        options.request = TRUE;
      else if (g_ascii_strcasecmp (socket, "push") != 0)
        {
          g_set_error (&error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_URL, "--socket “%s”: push or req", socket);
          goto out;
        }
    }
  if (!(rate >= 0) || !isfinite (rate) || !(timeout >= 0) || timeout > 86400)
    {
      g_set_error (&error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_URL,
                   "--rate %g and --timeout %g must be non-negative", rate, timeout);
      goto out;
    }
  options.rate = rate;
  options.loop = loop;
  options.timeout_ms = (guint) (timeout * 1000);
  scan = open (argv[1], data, &error);
  if (scan == NULL)
    goto out;
  tomo_live_stream_scan (scan, to, &options, NULL, &error);

out:
  if (error != NULL)
    {
      g_printerr ("tomolive: %s\n", error->message);
      return 1;
    }
  return 0;
}
