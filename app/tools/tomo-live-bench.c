/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * `tomolive bench --live`: sustained ingest over loopback ZeroMQ with the
 * preview on.  Sender threads push JSON + uint16 frames (zero-copy on the
 * sending side) to one receiver per stream; the receivers validate and copy
 * into live scans whose slots wrap like the rotations of a continuous scan;
 * the preview reconstructs the middle row of stream 0 at display rate.
 * Beside it, in the same run, a plain memcpy of the same frames: the
 * ceiling for one copy per byte.
 */
#define G_LOG_DOMAIN "tomo-cli"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-options.h"
#include "tomo-cli.h"
#include "tomo-gpu.h"
#include "tomo-gpu-gl.h"
#include "tomo-live-cli.h"
#include "tomo-live-preview.h"
#include "tomo-live-receiver.h"
#include "tomo-live-sender.h"
#include "tomo-median.h"
#include "tomo-scan-private.h"

typedef struct
{
  char          *url;
  guint          size;
  const guint16 *frames;     /* n_distinct frames of size² */
  guint          n_distinct;
  const guint16 *flat;
  const guint16 *dark;
  gint          *stop;
  double         frame_rate;  /* projections/s; 0: as fast as possible */
  guint64        sent;
  GError        *error;
} Sender;

static gpointer
sender_thread (gpointer data)
{
  Sender *s = data;
  g_autoptr(TomoLiveSender) tx = tomo_live_sender_new (s->url, TOMO_LIVE_PROTOCOL_JSON, FALSE, 5000, &s->error);
  guint id = 0;
  gint64 start;

  if (tx == NULL)
    return NULL;
  tomo_live_sender_set_zero_copy (tx, TRUE);
  if (!tomo_live_sender_send_frame (tx, TOMO_FRAME_DARK, 0, s->size, s->size, TOMO_DTYPE_UINT16, s->dark,
                                    FALSE, 0, &s->error) ||
      !tomo_live_sender_send_frame (tx, TOMO_FRAME_FLAT, 0, s->size, s->size, TOMO_DTYPE_UINT16, s->flat,
                                    FALSE, 0, &s->error))
    return NULL;
  start = g_get_monotonic_time ();
  while (!g_atomic_int_get (s->stop))
    {
      if (s->frame_rate > 0)
        {
          gint64 due = start + (gint64) (s->sent * G_USEC_PER_SEC / s->frame_rate);
          gint64 now = g_get_monotonic_time ();

          if (now < due)
            g_usleep (due - now);
        }
      if (!tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, id, s->size, s->size, TOMO_DTYPE_UINT16,
                                        s->frames + (gsize) (id % s->n_distinct) * s->size * s->size,
                                        FALSE, 0, &s->error))
        return NULL;
      id = (id + 1) % TOMO_LIVE_MAX_ID;
      s->sent++;
    }
  return NULL;
}

static guint64
received_frames (TomoLiveReceiver *rx)
{
  g_autoptr(TomoLiveScan) scan = tomo_live_receiver_dup_current (rx);
  TomoLiveScanInfo info;

  if (scan == NULL)
    return 0;
  tomo_live_scan_get_info (scan, &info);
  return info.n_frames_received;
}

/* The display in the preview thread: each new slice into an OpenGL texture
 * through CUDA–GL interop, as the window's slice view does, on a headless
 * context opened by the first slice (on that thread, as GL wants). */
typedef struct
{
  TomoGpuGlHeadless *gl;
  char              *why_not;   /* no texture: the reason */
  guint              n_shown;
  guint              n_host;    /* slices that came downloaded */
  GArray            *step_ms;   /* double: the preview's step (read, put, statistics, copy) */
  GArray            *device_ms; /* double: its device work (CUDA events) */
  GArray            *show_ms;   /* double: copy into the texture + glFinish */
} Display;

static double
median_of (GArray *values)
{
  g_autoptr(GArray) copy = g_array_copy (values);

  return copy->len ? _tomo_median ((double *) copy->data, copy->len) : NAN;
}

static void
display_cb (TomoLivePreview *preview,
            gpointer         user_data)
{
  Display *d = user_data;
  g_autoptr(TomoSlice) slice = tomo_live_preview_dup_slice (preview, NULL, NULL);
  g_autoptr(GError) error = NULL;
  const float *src;

  if (slice == NULL)
    return;
  g_array_append_val (d->step_ms, slice->total_ms);
  g_array_append_val (d->device_ms, slice->backproject_ms);
  if (slice->data != NULL)
    d->n_host++;
  src = tomo_slice_get_device_data (slice, NULL);
  if (src == NULL || d->why_not != NULL)
    return;
#if HAVE_CUDA
  if (d->gl == NULL)
    {
      d->gl = tomo_gpu_gl_headless_open (slice->width, slice->height, &error);
      if (d->gl == NULL)
        {
          d->why_not = g_strdup (error->message);
          return;
        }
    }
  {
    gint64 t0 = g_get_monotonic_time ();
    double ms;

    if (!tomo_gpu_gl_headless_show (d->gl, src, slice->width, slice->height, &error))
      {
        d->why_not = g_strdup (error->message);
        return;
      }
    ms = (g_get_monotonic_time () - t0) / 1e3;
    g_array_append_val (d->show_ms, ms);
  }
  d->n_shown++;
#else
  (void) error;
  d->why_not = g_strdup ("built without CUDA");
#endif
}

static const char *
renderer_of (TomoGpuGlHeadless *gl)
{
#if HAVE_CUDA
  return tomo_gpu_gl_headless_get_renderer (gl);
#else
  return "none";
#endif
}

/* One thread copying frames into slots, as the receiver does after ZeroMQ. */
static double
memcpy_gbps (const guint16 *frames,
             guint          n_distinct,
             gsize          frame_bytes,
             guint          slots)
{
  g_autofree guint8 *dst = g_malloc (frame_bytes * slots);
  gint64 start;
  guint n = 0;

  memset (dst, 0, frame_bytes * slots);
  start = g_get_monotonic_time ();
  while (g_get_monotonic_time () - start < 1000000)
    {
      memcpy (dst + (n % slots) * frame_bytes, (const guint8 *) frames + (n % n_distinct) * frame_bytes,
              frame_bytes);
      n++;
    }
  return (double) n * frame_bytes / ((g_get_monotonic_time () - start) / 1e6) / 1e9;
}

int
tomo_live_bench_main (int    argc,
                      char **argv)
{
  g_autoptr(GOptionContext) octx = g_option_context_new ("--live — ingest over loopback ZeroMQ");
  g_autoptr(GError) error = NULL;
  g_autofree char *backend_name = NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *date = g_date_time_format (now, "%Y-%m-%d %H:%M %Z");
  g_autofree char *pace = NULL;
  gboolean live = FALSE, no_preview = FALSE;
  double size_v = 2048, streams_v = 1, slots_v = 128, rate_v = 60;
  int size, streams, slots, rate;
  double seconds = 10, frame_rate = 0;
  GOptionEntry entries[] = {
    { "live", 0, 0, G_OPTION_ARG_NONE, &live, "Measure live ingest", NULL },
    { "size", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Frames of N×N uint16 (default 2048)", "N" },
    { "seconds", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Measured time after 1 s of warm-up (default 10)", "S" },
    { "streams", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Sender/receiver socket pairs (default 1)", "K" },
    { "slots", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Projections per rotation (memory per stream; default 128)", "N" },
    { "rate", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Preview steps per second (default 60)", "HZ" },
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend_name, "Preview backend: auto, cpu or gpu", "B" },
    { "no-preview", 0, 0, G_OPTION_ARG_NONE, &no_preview, "Ingest only", NULL },
    { "frame-rate", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Projections per second per stream (default 0: as fast as possible)", "N" },
    G_OPTION_ENTRY_NULL
  };
  TomoNumberOption numbers[] = {
    { "size", 0, 16, 16384, TRUE, &size_v },
    { "seconds", 0, 0.001, 3600, FALSE, &seconds },
    { "streams", 0, 1, 64, TRUE, &streams_v },
    { "slots", 0, 1, 65536, TRUE, &slots_v },
    { "rate", 0, 1, 1000, TRUE, &rate_v },
    { "frame-rate", 0, 0, 1e6, FALSE, &frame_rate },
    { NULL },
  };
  TomoBackend backend = TOMO_BACKEND_AUTO;
  g_autoptr(GPtrArray) receivers = g_ptr_array_new_with_free_func ((GDestroyNotify) tomo_live_receiver_free);
  g_autofree Sender *senders = NULL;
  g_autofree GThread **threads = NULL;
  g_autofree guint16 *frames = NULL, *flat = NULL, *dark = NULL;
  g_autoptr(TomoLivePreview) preview = NULL;
  TomoLivePreviewOptions popts;
  guint n_distinct = 8;
  gsize frame_bytes;
  guint64 first = 0, last = 0, dropped = 0;
  gint stop = 0;
  gint64 t0, t1;
  double gbps, copy_gbps, median = NAN, max = NAN;
  TomoBackend used = TOMO_BACKEND_AUTO;
  guint n_delays = 0;
  Display display = { NULL, NULL, 0, 0, g_array_new (FALSE, FALSE, sizeof (double)),
                      g_array_new (FALSE, FALSE, sizeof (double)), g_array_new (FALSE, FALSE, sizeof (double)) };

  if (!tomo_cli_parse (octx, entries, numbers, &argc, &argv, &error))
    goto out;
  size = (int) size_v;
  streams = (int) streams_v;
  slots = (int) slots_v;
  rate = (int) rate_v;
  if (size < 16 || size > 16384 || streams < 1 || streams > 64 || slots < 1 || !(seconds > 0) ||
      seconds > 3600 || rate < 1 || !(frame_rate >= 0) || frame_rate > 1e6)
    {
      g_set_error (&error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_URL,
                   "bench --live: --size %d, --streams %d, --slots %d, --seconds %g, --rate %d, "
                   "--frame-rate %g out of range", size, streams, slots, seconds, rate, frame_rate);
      goto out;
    }
  if (backend_name != NULL && !tomo_backend_from_string (backend_name, &backend, &error))
    goto out;

  /* Projections of a few disks: something worth reconstructing. */
  frame_bytes = (gsize) size * size * 2;
  frames = g_new (guint16, (gsize) n_distinct * size * size);
  flat = g_new (guint16, (gsize) size * size);
  dark = g_new (guint16, (gsize) size * size);
  for (guint i = 0; i < n_distinct; i++)
    for (int y = 0; y < size; y++)
      for (int x = 0; x < size; x++)
        {
          double t = (x - size / 2.0) / (size / 2.0) + 0.2 * cos (i * G_PI / n_distinct);
          double path = t * t < 0.25 ? 2 * sqrt (0.25 - t * t) : 0;

          frames[((gsize) i * size + y) * size + x] = (guint16) (100 + 20000 * exp (-path));
        }
  for (gsize p = 0; p < (gsize) size * size; p++)
    {
      flat[p] = 20100;
      dark[p] = 100;
    }

  senders = g_new0 (Sender, streams);
  threads = g_new0 (GThread *, streams);
  for (int k = 0; k < streams; k++)
    {
      TomoLiveReceiverOptions ro;
      TomoLiveReceiver *rx;

      tomo_live_receiver_options_init (&ro);
      ro.url = "tcp://127.0.0.1:*";
      ro.protocol = TOMO_LIVE_PROTOCOL_JSON;
      ro.n_projections = slots;
      ro.max_memory = frame_bytes * (slots + 4);
      rx = tomo_live_receiver_new (&ro, &error);
      if (rx == NULL)
        goto out;
      g_ptr_array_add (receivers, rx);
      senders[k] = (Sender) { g_strdup (tomo_live_receiver_get_endpoint (rx)), size, frames, n_distinct,
                              flat, dark, &stop, frame_rate, 0, NULL };
    }
  if (!no_preview)
    {
      tomo_live_preview_options_init (&popts);
      popts.backend = backend;
      popts.mode = TOMO_LIVE_MODE_CONTINUOUS;
      popts.max_rate = rate;
      popts.device_only = TRUE;
      preview = tomo_live_preview_new (g_ptr_array_index (receivers, 0), &popts, display_cb, &display);
    }
  for (int k = 0; k < streams; k++)
    threads[k] = g_thread_new ("bench-sender", sender_thread, &senders[k]);

  g_usleep (G_USEC_PER_SEC);
  /* Delays too are counted after the warm-up (plans, the GL context). */
  if (preview != NULL)
    tomo_live_preview_reset_delays (preview);
  for (guint k = 0; k < receivers->len; k++)
    first += received_frames (g_ptr_array_index (receivers, k));
  t0 = g_get_monotonic_time ();
  g_usleep ((gulong) (seconds * G_USEC_PER_SEC));
  for (guint k = 0; k < receivers->len; k++)
    last += received_frames (g_ptr_array_index (receivers, k));
  t1 = g_get_monotonic_time ();
  g_atomic_int_set (&stop, 1);
  for (guint k = 0; k < receivers->len; k++)
    {
      TomoLiveReceiverStats s;

      tomo_live_receiver_get_stats (g_ptr_array_index (receivers, k), &s);
      dropped += s.n_dropped_total;
    }
  if (preview != NULL)
    {
      tomo_live_preview_get_delays (preview, &median, &max, &n_delays);
      used = tomo_live_preview_get_backend (preview);
    }
  {
    g_autofree char *perr = preview ? tomo_live_preview_dup_error (preview) : NULL;
    if (perr != NULL)
      g_printerr ("tomolive: preview: %s\n", perr);
  }
  /* Senders end first, while the receivers still drain their queues. */
  for (int k = 0; k < streams; k++)
    {
      g_thread_join (threads[k]);
      if (senders[k].error != NULL)
        g_printerr ("tomolive: stream %d: %s\n", k, senders[k].error->message);
      g_clear_error (&senders[k].error);
      g_free (senders[k].url);
    }
  g_clear_pointer (&preview, tomo_live_preview_free);
  g_ptr_array_set_size (receivers, 0);

  gbps = (double) (last - first) * frame_bytes / ((t1 - t0) / 1e6) / 1e9;
  copy_gbps = memcpy_gbps (frames, n_distinct, frame_bytes, MIN (slots, 32));

  pace = frame_rate > 0 ? g_strdup_printf ("sent at %g projections/s per stream", frame_rate)
                        : g_strdup ("sent as fast as possible");
  g_print ("# tomolive bench --live, %s, %d stream%s, %d×%d uint16 (%.1f MB), JSON over tcp loopback, %s\n",
           date, streams, streams == 1 ? "" : "s", size, size, frame_bytes / 1e6,
           pace);
  g_print ("%-28s %10.2f GB/s  %8.1f proj/s  (%.1f s, %" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT
           " dropped)\n", "ingest", gbps, (last - first) / ((t1 - t0) / 1e6), (t1 - t0) / 1e6, last - first,
           dropped);
  g_print ("%-28s %10.2f GB/s  (one thread, same frames: the ceiling of one copy)\n", "baseline memcpy", copy_gbps);
  if (!no_preview)
    {
      g_print ("%-28s median %.2f ms, max %.2f ms over %u projections (%s, at most %d steps/s, %d² slice)\n",
               display.n_shown > 0 ? "arrival → slice in texture" : "arrival → slice", median, max, n_delays,
               tomo_backend_to_string (used), rate, size);
      g_print ("%-28s median %.3f ms (of it the accumulate op: %.3f ms; CUDA events on the GPU) over %u steps\n", "preview step",
               median_of (display.step_ms), median_of (display.device_ms), display.step_ms->len);
      if (display.n_shown > 0)
        g_print ("%-28s %u slices into the GL texture through interop (%s), median %.3f ms each, %u downloaded\n",
                 "display", display.n_shown, renderer_of (display.gl),
                 median_of (display.show_ms), display.n_host);
      else
        g_print ("%-28s none in a texture (%s), %u slices downloaded\n", "display",
                 display.why_not != NULL ? display.why_not : "slices on the host", display.n_host);
    }
  /* The context was opened, and is current, on the preview thread, which has
   * ended: it goes with the process. */
  g_free (display.why_not);
  g_array_unref (display.step_ms);
  g_array_unref (display.device_ms);
  g_array_unref (display.show_ms);
out:
  if (error != NULL)
    {
      g_printerr ("tomolive: %s\n", error->message);
      return 1;
    }
  return 0;
}
