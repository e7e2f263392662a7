/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Live input over real ZeroMQ sockets on loopback: every protocol and
 * socket pattern delivers the sample scan bit for bit, broken messages are
 * counted and ignored while good ones keep flowing, senders come and go. */
#include "config.h"

#include <math.h>
#include <signal.h>
#include <string.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <hdf5.h>

#include "tomo-engine.h"
#include "tomo-live-preview.h"
#include "tomo-live-receiver.h"
#include "tomo-live-recorder.h"
#include "tomo-live-sender.h"
#include "tomo-scan-private.h"
#include "test-live-util.h"
#include "tomo-test-util.h"

#define WAIT_US (60 * G_USEC_PER_SEC)

static const char *sample_path;
static const char *tomolive;

static TomoLiveReceiver *
receiver_new (TomoLiveProtocol protocol,
              gboolean         reply)
{
  return loopback_receiver_new (protocol, reply, (gsize) 2 << 30, 0);
}

/* A sender to `rx` in `protocol`, without replies, 10 s timeout. */
static TomoLiveSender *
sender_new (TomoLiveReceiver *rx,
            TomoLiveProtocol  protocol)
{
  g_autoptr(GError) error = NULL;
  TomoLiveSender *tx = tomo_live_sender_new (tomo_live_receiver_get_endpoint (rx), protocol, FALSE,
                                             10000, &error);

  g_assert_no_error (error);
  return tx;
}

/* Frames of each kind, row by row, and the angles: identical. */
static void
assert_same_scan (TomoScan *a,
                  TomoScan *b)
{
  guint width = tomo_scan_get_width (a), height = tomo_scan_get_height (a);
  guint n[3] = { tomo_scan_get_n_projections (a), tomo_scan_get_n_flats (a), tomo_scan_get_n_darks (a) };

  g_assert_cmpuint (tomo_scan_get_width (b), ==, width);
  g_assert_cmpuint (tomo_scan_get_height (b), ==, height);
  g_assert_cmpuint (tomo_scan_get_n_projections (b), ==, n[0]);
  g_assert_cmpuint (tomo_scan_get_n_flats (b), ==, n[1]);
  g_assert_cmpuint (tomo_scan_get_n_darks (b), ==, n[2]);
  for (guint k = 0; k < 3; k++)
    {
      g_autofree float *ra = g_new (float, (gsize) MAX (n[k], 1) * width);
      g_autofree float *rb = g_new (float, (gsize) MAX (n[k], 1) * width);

      for (guint y = 0; y < height && n[k] > 0; y++)
        {
          g_autoptr(GError) error = NULL;

          g_assert_true (_tomo_scan_read_frames (a, k, y, ra, &error));
          g_assert_true (_tomo_scan_read_frames (b, k, y, rb, &error));
          g_assert_no_error (error);
          g_assert_cmpmem (ra, sizeof (float) * n[k] * width, rb, sizeof (float) * n[k] * width);
        }
    }
  for (guint i = 0; i < n[0]; i++)
    g_assert_cmpfloat_with_epsilon (tomo_scan_get_angles (a)[i], tomo_scan_get_angles (b)[i], 1e-6);
}

static TomoSlice *
reconstruct_row (TomoScan *scan,
                 guint     row)
{
  g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, scan);

  return tomo_test_reconstruct (engine, row, 1, (tomo_scan_get_width (scan) - 1) / 2.0);
}


typedef struct
{
  TomoScan             *scan;
  char                 *url;
  TomoLiveStreamOptions options;
  GError               *error;
} StreamJob;

static gpointer
stream_thread (gpointer data)
{
  StreamJob *job = data;

  tomo_live_stream_scan (job->scan, job->url, &job->options, NULL, &job->error);
  return NULL;
}

static double stream_rate;   /* projections per second, 0: as fast as possible */

static GThread *
stream_async (StreamJob        *job,
              TomoScan         *scan,
              TomoLiveReceiver *rx,
              TomoLiveProtocol  protocol,
              gboolean          request)
{
  memset (job, 0, sizeof *job);
  job->scan = scan;
  job->url = g_strdup (tomo_live_receiver_get_endpoint (rx));
  job->options.protocol = protocol;
  job->options.request = request;
  job->options.timeout_ms = 20000;
  job->options.rate = stream_rate;
  return g_thread_new ("sender", stream_thread, job);
}

static void
stream_join (GThread   *thread,
             StreamJob *job)
{
  g_thread_join (thread);
  g_assert_no_error (job->error);
  g_free (job->url);
}

/* Streams `file` to `rx` from a thread and waits for the whole scan. */
static TomoLiveScan *
stream_and_wait (TomoScan         *file,
                 TomoLiveReceiver *rx,
                 TomoLiveProtocol  protocol,
                 gboolean          request)
{
  g_autoptr(GError) error = NULL;
  StreamJob job;
  GThread *sender = stream_async (&job, file, rx, protocol, request);
  TomoLiveScan *live = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);

  g_assert_no_error (error);
  stream_join (sender, &job);
  return live;
}

/* The scan that `live` makes; it must hold the same data as `file`. */
static TomoScan *
create_same_scan (TomoLiveScan *live,
                  TomoScan     *file)
{
  g_autoptr(GError) error = NULL;
  TomoScan *scan = tomo_live_scan_create_scan (live, &error);

  g_assert_no_error (error);
  assert_same_scan (file, scan);
  return scan;
}

/* --- each protocol × socket pattern -------------------------------------- */

typedef struct
{
  TomoLiveProtocol protocol;
  gboolean         request;
} RoundTrip;

static void
test_round_trip (gconstpointer data)
{
  const RoundTrip *rt = data;
  g_autoptr(TomoScan) file = tomo_test_open_scan (sample_path);
  g_autoptr(TomoLiveReceiver) rx = receiver_new (rt->protocol, rt->request);
  g_autoptr(TomoLiveScan) live = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoSlice) want = NULL, got = NULL;
  TomoLiveReceiverStats stats;
  double diff;

  live = stream_and_wait (file, rx, rt->protocol, rt->request);
  scan = create_same_scan (live, file);

  tomo_live_receiver_get_stats (rx, &stats);
  g_assert_cmpuint (stats.n_dropped_total, ==, 0);
  g_assert_cmpuint (stats.n_scans, ==, 1);

  /* The same data: the same slice.  TomoPackets carries angles as float32,
   * JSON as decimal degrees; both round the file's angles, hence not exact. */
  want = reconstruct_row (file, tomo_scan_get_height (file) / 2);
  got = reconstruct_row (scan, tomo_scan_get_height (file) / 2);
  g_assert_cmpuint (want->width, ==, got->width);
  diff = relative_difference (want->data, got->data, (gsize) want->width * want->height);
  g_test_message ("live vs file reconstruction: max difference %.3g of the maximum", diff);
  g_assert_cmpfloat (diff, <, 1e-4);
}

/* --- broken messages ------------------------------------------------------ */

typedef struct
{
  TomoLiveReceiver *rx;
  TomoLiveSender   *tx;
  guint             rows, cols;
  guint             n_good;
} Flow;

static void
flow_send_good (Flow *f)
{
  g_autoptr(GError) error = NULL;
  g_autofree float *pixels = g_new0 (float, (gsize) f->rows * f->cols);

  for (gsize i = 0; i < (gsize) f->rows * f->cols; i++)
    pixels[i] = 1000 + f->n_good;
  g_assert_true (tomo_live_sender_send_frame (f->tx, TOMO_FRAME_PROJECTION, f->n_good % 8, f->rows, f->cols,
                                              TOMO_DTYPE_FLOAT32, pixels, TRUE, f->n_good % 8, &error));
  g_assert_no_error (error);
  f->n_good++;
}

static void
flow_send_raw (Flow         *f,
               const guint8 *data,
               gsize         size)
{
  g_autoptr(GError) error = NULL;
  const void *parts[1] = { data };

  g_assert_true (tomo_live_sender_send_parts (f->tx, parts, &size, 1, &error));
  g_assert_no_error (error);
}

static void
flow_send_bytes (Flow   *f,
                 GBytes *bytes)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (bytes, &size);

  flow_send_raw (f, data, size);
  g_bytes_unref (bytes);
}

/* Waits until the receiver has seen `n` messages. */
static void
flow_wait (Flow   *f,
           guint64 n)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_US;
  TomoLiveReceiverStats s;

  do
    {
      tomo_live_receiver_get_stats (f->rx, &s);
      if (s.n_messages >= n)
        return;
      g_usleep (2000);
    }
  while (g_get_monotonic_time () < deadline);
  g_assert_cmpuint (s.n_messages, >=, n);
}

static void
put32 (guint8 *p,
       gint32  v)
{
  guint32 le = GUINT32_TO_LE ((guint32) v);
  memcpy (p, &le, 4);
}

static void
test_malformed_tomop (void)
{
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_TOMOP, FALSE);
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  TomoLiveReceiverStats s;
  TomoLiveScanInfo info;
  Flow f = { rx, NULL, 4, 6, 0 };
  float angles[8], bad_angles[8];
  guint64 sent = 0;
  g_autofree guint8 *frame = NULL;
  GBytes *good;
  gsize good_size;

  tx = sender_new (rx, TOMO_LIVE_PROTOCOL_TOMOP);
  f.tx = tx;
  for (guint i = 0; i < 8; i++)
    angles[i] = bad_angles[i] = i * G_PI / 8;
  bad_angles[3] = NAN;

  /* A projection before any geometry. */
  flow_send_good (&f), sent++;
  flow_send_bytes (&f, tomo_live_encode_scan_settings (0, 0, 0, -1)), sent++;
  flow_send_bytes (&f, tomo_live_encode_parallel_beam (0, 4, 6, 8, angles, 8)), sent++;

  /* A well-formed projection, to cut and extend. */
  {
    g_autofree float *px = g_new0 (float, 24);
    good = tomo_live_encode_projection (2, 1, 4, 6, px, 24);
    frame = g_bytes_unref_to_data (good, &good_size);
  }

  struct { const char *what; TomoLiveDrop drop; } expect[] = {
    { "no geometry", TOMO_LIVE_DROP_NO_GEOMETRY },
    { "short", TOMO_LIVE_DROP_SHORT },
    { "long", TOMO_LIVE_DROP_LONG },
    { "unknown", TOMO_LIVE_DROP_UNKNOWN },
    { "ignored", TOMO_LIVE_DROP_IGNORED },
    { "shape", TOMO_LIVE_DROP_SHAPE },
    { "huge", TOMO_LIVE_DROP_TOO_LARGE },
    { "negative", TOMO_LIVE_DROP_NEGATIVE },
    { "nan angle", TOMO_LIVE_DROP_ANGLE },
    { "id", TOMO_LIVE_DROP_ID },
  };

  /* Each broken message is followed by a good one. */
  flow_send_raw (&f, frame, good_size - 5), sent++;                 /* short: truncated data */
  flow_send_good (&f), sent++;
  {
    g_autofree guint8 *longer = g_malloc0 (good_size + 1);
    memcpy (longer, frame, good_size);
    flow_send_raw (&f, longer, good_size + 1), sent++;              /* long: one byte too many */
  }
  flow_send_good (&f), sent++;
  {
    guint8 msg[8];
    put32 (msg, 0x999);
    put32 (msg + 4, 0);
    flow_send_raw (&f, msg, 8), sent++;                             /* unknown descriptor */
    put32 (msg, 0x201);
    flow_send_raw (&f, msg, 8), sent++;                             /* RECAST3D slice data: ignored */
  }
  flow_send_good (&f), sent++;
  {
    g_autofree float *px = g_new0 (float, 24);
    flow_send_bytes (&f, tomo_live_encode_projection (2, 1, 6, 4, px, 24)), sent++;  /* 6×4 ≠ 4×6 */
    flow_send_bytes (&f, tomo_live_encode_projection (2, 1, 4, 6, px, 20)), sent++;  /* 20 values for 24 pixels */
  }
  flow_send_good (&f), sent++;
  {
    g_autofree guint8 *huge = g_memdup2 (frame, good_size);
    put32 (huge + 12, 1 << 30);                                     /* rows × cols × 4 overflows 32 bits */
    put32 (huge + 16, 1 << 30);
    flow_send_raw (&f, huge, good_size), sent++;
    put32 (huge + 12, -4);                                          /* negative rows */
    put32 (huge + 16, 6);
    flow_send_raw (&f, huge, good_size), sent++;
  }
  flow_send_bytes (&f, tomo_live_encode_parallel_beam (0, 4, 6, 8, bad_angles, 8)), sent++;
  flow_send_good (&f), sent++;
  {
    g_autofree float *px = g_new0 (float, 24);
    flow_send_bytes (&f, tomo_live_encode_projection (2, -1, 4, 6, px, 24)), sent++;  /* negative id */
    flow_send_bytes (&f, tomo_live_encode_projection (7, 1, 4, 6, px, 24)), sent++;   /* type 7 */
  }
  /* Both ScanSettings forms are accepted; an 18-byte one is not. */
  flow_send_bytes (&f, tomo_live_encode_scan_settings (0, 0, 0, 1)), sent++;
  {
    guint8 settings18[18] = { 0 };
    put32 (settings18, 0x302);
    flow_send_raw (&f, settings18, 18), sent++;
  }
  for (guint i = 0; i < 8; i++)
    flow_send_good (&f), sent++;
  flow_wait (&f, sent);

  tomo_live_receiver_get_stats (rx, &s);
  for (guint i = 0; i < G_N_ELEMENTS (expect); i++)
    {
      guint64 want = expect[i].drop == TOMO_LIVE_DROP_SHORT ? 1 :
                     expect[i].drop == TOMO_LIVE_DROP_LONG ? 2 :      /* + the 18-byte settings */
                     expect[i].drop == TOMO_LIVE_DROP_SHAPE ? 2 :
                     expect[i].drop == TOMO_LIVE_DROP_ID ? 2 : 1;
      g_test_message ("%s: %" G_GUINT64_FORMAT, expect[i].what, s.n_dropped[expect[i].drop]);
      g_assert_cmpuint (s.n_dropped[expect[i].drop], ==, want);
    }
  g_assert_cmpuint (s.n_messages, ==, sent);
  g_assert_cmpuint (s.n_dropped_total, ==, 13);
  /* The good ones all arrived (the first, before the geometry, could not). */
  live = tomo_live_receiver_dup_current (rx);
  g_assert_nonnull (live);
  tomo_live_scan_get_info (live, &info);
  g_assert_cmpuint (info.n_frames_received, ==, f.n_good - 1);
  g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], ==, 8);
  g_assert_true (info.complete);
  g_assert_cmpuint (s.n_scans, ==, 1);   /* the NaN geometry did not start a scan */
}

static void
test_malformed_json (void)
{
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_JSON, FALSE);
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  TomoLiveReceiverStats s;
  guint16 px[24] = { 0 };
  struct { const char *header; gsize pixel_bytes; guint n_parts; TomoLiveDrop drop; } bad[] = {
    { "this is not JSON", 48, 2, TOMO_LIVE_DROP_JSON },
    { "{\"frame\": 1, \"shape\": [4, 6], \"dty", 48, 2, TOMO_LIVE_DROP_JSON },        /* truncated */
    { "[1, 2, 3]", 48, 2, TOMO_LIVE_DROP_JSON },
    { "{\"frame\": -1, \"shape\": [4, 6], \"dtype\": \"uint16\"}", 48, 2, TOMO_LIVE_DROP_JSON },
    { "{\"frame\": 1, \"shape\": [4, 6], \"dtype\": \"uint16\"}", 48, 1, TOMO_LIVE_DROP_PARTS },  /* no pixels */
    { "{\"frame\": 1, \"shape\": [4, 6], \"dtype\": \"uint16\"}", 48, 3, TOMO_LIVE_DROP_PARTS },
    { "{\"frame\": 1, \"shape\": [4, 6], \"dtype\": \"uint16\"}", 46, 2, TOMO_LIVE_DROP_SHAPE },
    { "{\"frame\": 1, \"shape\": [6, 4], \"dtype\": \"uint16\"}", 48, 2, TOMO_LIVE_DROP_SHAPE },
    { "{\"frame\": 1, \"shape\": [4, 6], \"dtype\": \"complex64\"}", 48, 2, TOMO_LIVE_DROP_DTYPE },
    { "{\"frame\": 1, \"shape\": [4000000, 4000000], \"dtype\": \"uint32\"}", 48, 2, TOMO_LIVE_DROP_TOO_LARGE },
    { "{\"frame\": 1, \"shape\": [-4, 6], \"dtype\": \"uint16\"}", 48, 2, TOMO_LIVE_DROP_NEGATIVE },
    { "{\"frame\": 1, \"image_attributes\": {\"scan_index\": 5}, \"shape\": [4, 6], \"dtype\": \"uint16\"}",
      48, 2, TOMO_LIVE_DROP_ID },
    { "{\"frame\": 1, \"shape\": [4, 6], \"dtype\": \"uint16\", \"angle\": \"north\"}", 48, 2, TOMO_LIVE_DROP_ANGLE },
  };
  guint64 sent = 0;
  guint n_good = 0;

  tx = sender_new (rx, TOMO_LIVE_PROTOCOL_JSON);

#define SEND_GOOD() \
  G_STMT_START { \
    px[0] = n_good; \
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, n_good, 4, 6, TOMO_DTYPE_UINT16, \
                                                px, TRUE, n_good * 10.0, &error)); \
    n_good++, sent++; \
  } G_STMT_END

  SEND_GOOD ();
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      static guint8 pixels[64];
      const void *parts[3] = { bad[i].header, pixels, pixels };
      gsize sizes[3] = { strlen (bad[i].header), bad[i].pixel_bytes, 4 };

      g_assert_true (tomo_live_sender_send_parts (tx, parts, sizes, bad[i].n_parts, &error));
      sent++;
      SEND_GOOD ();
    }
  g_assert_true (tomo_live_sender_send_end (tx, &error));
  sent++;

  live = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
  g_assert_no_error (error);
  tomo_live_receiver_get_stats (rx, &s);
  g_assert_cmpuint (s.n_messages, ==, sent);
  g_assert_cmpuint (s.n_dropped_total, ==, G_N_ELEMENTS (bad));
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    g_assert_cmpuint (s.n_dropped[bad[i].drop], >=, 1);
  g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_JSON], ==, 4);
  g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_PARTS], ==, 2);
  g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_SHAPE], ==, 2);
  {
    TomoLiveScanInfo info;
    g_autoptr(TomoScan) scan = NULL;

    tomo_live_scan_get_info (live, &info);
    g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], ==, n_good);
    g_assert_cmpuint (info.n_gaps, ==, 0);
    scan = tomo_live_scan_create_scan (live, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (tomo_scan_get_n_projections (scan), ==, n_good);
    /* Angles from the headers. */
    g_assert_cmpfloat_with_epsilon (tomo_scan_get_angles (scan)[3], 30.0 * G_PI / 180, 1e-12);
  }
#undef SEND_GOOD
}

/* --- ordering, restarts, second scans -------------------------------------- */

static void
test_flats_after_projections (void)
{
  g_autoptr(TomoScan) file = tomo_test_open_scan (sample_path);
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_TOMOP, FALSE);
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  g_autoptr(TomoScan) scan = NULL, early = NULL;
  g_autoptr(TomoSlice) before = NULL, after = NULL, want = NULL;
  guint w = tomo_scan_get_width (file), h = tomo_scan_get_height (file);
  guint n[3] = { tomo_scan_get_n_projections (file), tomo_scan_get_n_flats (file), tomo_scan_get_n_darks (file) };
  static const TomoFrameKind order[3] = { TOMO_FRAME_PROJECTION, TOMO_FRAME_DARK, TOMO_FRAME_FLAT };

  tx = sender_new (rx, TOMO_LIVE_PROTOCOL_TOMOP);
  g_assert_true (tomo_live_sender_send_geometry (tx, h, w, n[0], tomo_scan_get_angles (file), n[2], n[1],
                                                 FALSE, &error));
  for (guint o = 0; o < 3; o++)
    {
      TomoFrameKind k = order[o];
      g_autofree float *frames = read_frames (file, k);
      /* Projections in reverse order: ids, not arrival, place them. */
      for (guint j = 0; j < n[k]; j++)
        {
          guint i = k == TOMO_FRAME_PROJECTION ? n[k] - 1 - j : j;
          g_assert_true (tomo_live_sender_send_frame (tx, k, i, h, w, TOMO_DTYPE_FLOAT32,
                                                      frames + (gsize) i * w * h, FALSE, 0, &error));
        }
      g_assert_no_error (error);
      if (k == TOMO_FRAME_PROJECTION)
        {
          /* All projections, no flats yet: a scan can be made, not yet complete. */
          gint64 deadline = g_get_monotonic_time () + WAIT_US;
          TomoLiveScanInfo info = { 0 };
          g_autoptr(TomoLiveScan) cur = NULL;

          while (g_get_monotonic_time () < deadline)
            {
              g_clear_pointer (&cur, tomo_live_scan_unref);
              cur = tomo_live_receiver_dup_current (rx);
              if (cur != NULL)
                tomo_live_scan_get_info (cur, &info);
              if (info.n_present[TOMO_FRAME_PROJECTION] == n[0])
                break;
              g_usleep (5000);
            }
          g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], ==, n[0]);
          g_assert_false (info.complete);
          early = tomo_live_scan_create_scan (cur, &error);
          g_assert_no_error (error);
          before = reconstruct_row (early, h / 2);
        }
    }
  live = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
  g_assert_no_error (error);
  scan = create_same_scan (live, file);

  /* The early scan reads the same live data: once refreshed, its slice is
   * the normalised one. */
  tomo_live_scan_refresh (live, early);
  {
    g_autoptr(TomoEngine) engine = tomo_test_engine_new (TOMO_BACKEND_CPU, early);
    TomoSliceRequest request;

    tomo_slice_request_init (&request, early);
    request.row = h / 2;
    after = tomo_engine_reconstruct (engine, &request, NULL, &error);
    g_assert_no_error (error);
  }
  want = reconstruct_row (file, h / 2);
  g_assert_cmpfloat (relative_difference (want->data, after->data, (gsize) w * w), <, 1e-4);
  g_assert_cmpfloat (relative_difference (want->data, before->data, (gsize) w * w), >, 1e-2);
}

static void
test_second_scan (void)
{
  g_autoptr(TomoScan) file = tomo_test_open_scan (sample_path);
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_JSON, FALSE);
  TomoLiveReceiverStats s;

  for (guint pass = 0; pass < 2; pass++)
    {
      g_autoptr(TomoLiveScan) live = stream_and_wait (file, rx, TOMO_LIVE_PROTOCOL_JSON, FALSE);

      g_object_unref (create_same_scan (live, file));
    }
  tomo_live_receiver_get_stats (rx, &s);
  g_assert_cmpuint (s.n_scans, ==, 2);
  g_assert_cmpuint (s.n_dropped_total, ==, 0);
}

static GSubprocess *
spawn_stream (const char *url,
              const char *rate)
{
  g_autoptr(GError) error = NULL;
  GSubprocess *p;

  p = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, tomolive, "stream", sample_path,
                        "--to", url, "--timeout", "20", rate ? "--rate" : NULL, rate, NULL);
  g_assert_no_error (error);
  return p;
}

static void
test_sender_restart (void)
{
  g_autoptr(TomoScan) file = tomo_test_open_scan (sample_path);
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_TOMOP, FALSE);
  g_autoptr(GSubprocess) first = NULL, second = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  g_autoptr(TomoScan) scan = NULL;
  const char *url = tomo_live_receiver_get_endpoint (rx);
  gint64 deadline = g_get_monotonic_time () + WAIT_US;
  TomoLiveScanInfo info = { 0 };
  TomoLiveReceiverStats s;

  /* Slowly, then killed mid-scan. */
  first = spawn_stream (url, "300");
  while (g_get_monotonic_time () < deadline)
    {
      g_autoptr(TomoLiveScan) cur = tomo_live_receiver_dup_current (rx);

      if (cur != NULL)
        tomo_live_scan_get_info (cur, &info);
      if (info.n_present[TOMO_FRAME_PROJECTION] >= 40)
        break;
      g_usleep (5000);
    }
  g_subprocess_force_exit (first);
  g_assert_true (g_subprocess_wait (first, NULL, &error));
  g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], >=, 40);
  g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], <, tomo_scan_get_n_projections (file));

  /* The restarted sender repeats the same geometry: the scan goes on. */
  second = spawn_stream (url, NULL);
  live = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (second, NULL, &error));
  g_assert_no_error (error);
  scan = create_same_scan (live, file);
  tomo_live_receiver_get_stats (rx, &s);
  g_assert_cmpuint (s.n_scans, ==, 1);
  g_assert_cmpuint (s.n_resumed, ==, 1);
  tomo_live_scan_get_info (live, &info);
  g_assert_cmpuint (info.n_duplicates, >=, 40);
}

/* --- the command line ------------------------------------------------------ */

static guint
free_port (void)
{
  g_autoptr(GSocket) sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, 0, NULL);
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) addr = g_inet_socket_address_new (lo, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_socket_bind (sock, addr, TRUE, &error));
  bound = g_socket_get_local_address (sock, &error);
  g_assert_no_error (error);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

static float *
read_tiff_slice (const char *path,
                 guint      *width)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  TomoOpenOptions options;
  float *out;

  tomo_open_options_init (&options);
  options.already_sinogram = TRUE;
  options.already_linear = TRUE;
  scan = tomo_scan_open (path, &options, &error);
  g_assert_no_error (error);
  *width = tomo_scan_get_width (scan);
  out = g_new (float, (gsize) *width * tomo_scan_get_height (scan));
  for (guint y = 0; y < tomo_scan_get_height (scan); y++)
    g_assert_true (tomo_scan_read_raw_sinogram (scan, y, out + (gsize) y * *width, &error));
  return out;
}

static void
test_cli (gconstpointer data)
{
  const char *protocol = data;
  g_autofree char *dir = g_dir_make_tmp ("tomo-live-XXXXXX", NULL);
  g_autofree char *live_tif = g_build_filename (dir, "live.tif", NULL);
  g_autofree char *file_tif = g_build_filename (dir, "file.tif", NULL);
  g_autofree char *record = g_build_filename (dir, "record.h5", NULL);
  g_autofree char *bind = g_strdup_printf ("tcp://127.0.0.1:%u", free_port ());
  g_autoptr(GSubprocess) rx = NULL, tx = NULL, ref = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) file = tomo_test_open_scan (sample_path);
  g_autoptr(TomoScan) recorded = NULL;
  g_autofree float *a = NULL, *b = NULL;
  guint wa, wb;

  rx = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, tomolive, "reconstruct", "--listen", bind,
                         "--protocol", protocol, "--socket", "rep", "--timeout", "60",
                         "--record", record, "-q", "-o", live_tif, NULL);
  g_assert_no_error (error);
  g_usleep (200000);
  tx = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, tomolive, "stream", sample_path, "--to", bind,
                         "--protocol", protocol, "--socket", "req", "--timeout", "30", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (tx, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (rx, NULL, &error));
  g_assert_no_error (error);

  ref = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error, tomolive, "reconstruct", sample_path, "-q",
                          "-o", file_tif, NULL);
  g_assert_true (g_subprocess_wait_check (ref, NULL, &error));
  g_assert_no_error (error);
  a = read_tiff_slice (file_tif, &wa);
  b = read_tiff_slice (live_tif, &wb);
  g_assert_cmpuint (wa, ==, wb);
  g_assert_cmpfloat (relative_difference (a, b, (gsize) wa * wa), <, 1e-4);

  /* The recording is a scan like the file. */
  recorded = tomo_test_open_scan (record);
  assert_same_scan (file, recorded);

  g_unlink (live_tif);
  g_unlink (file_tif);
  g_unlink (record);
  g_rmdir (dir);
}

static void
test_cli_timeout (void)
{
  g_autofree char *bind = g_strdup_printf ("tcp://127.0.0.1:%u", free_port ());
  g_autoptr(GSubprocess) rx = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  gint64 start = g_get_monotonic_time ();

  rx = g_subprocess_new (G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, tomolive, "reconstruct", "--listen", bind,
                         "--timeout", "0.5", "-o", "/nonexistent/never.tif", NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (rx, NULL, NULL, NULL, &err, &error));
  g_assert_cmpint (g_subprocess_get_exit_status (rx), ==, 1);
  g_assert_nonnull (strstr (err, "No complete scan"));
  g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
}

/* --record never overwrites what the run reads or writes (the angle file,
 * or -o) or an earlier recording; refused before anything is received. */
static void
test_cli_record_refuses (void)
{
  g_autofree char *dir = g_dir_make_tmp ("tomo-live-XXXXXX", NULL);
  g_autofree char *angles = g_build_filename (dir, "angles.txt", NULL);
  g_autofree char *out = g_build_filename (dir, "out.tif", NULL);
  g_autofree char *earlier = g_build_filename (dir, "earlier.h5", NULL);
  g_autofree char *bind = g_strdup_printf ("tcp://127.0.0.1:%u", free_port ());
  const char *text = "0\n90\n", *earlier_text = "an earlier recording";

  g_assert_true (g_file_set_contents (angles, text, -1, NULL));
  g_assert_true (g_file_set_contents (earlier, earlier_text, -1, NULL));
  for (guint i = 0; i < 3; i++)
    {
      /* The angle file itself; -o (neither exists yet) as the recording;
       * an earlier recording. */
      const char *record = i == 0 ? angles : i == 1 ? out : earlier;
      g_autoptr(GSubprocess) rx = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *err = NULL, *kept = NULL;
      gint64 start = g_get_monotonic_time ();

      rx = g_subprocess_new (G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, tomolive, "reconstruct", "--listen", bind,
                             "--protocol", "json", "--angles", angles, "--record", record, "--timeout", "30",
                             "-q", "-o", out, NULL);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_communicate_utf8 (rx, NULL, NULL, NULL, &err, &error));
      g_test_message ("%s", err);
      g_assert_cmpint (g_subprocess_get_exit_status (rx), ==, 1);
      g_assert_nonnull (strstr (err, record));
      g_assert_cmpint (g_get_monotonic_time () - start, <, 10 * G_USEC_PER_SEC);
      g_assert_true (g_file_get_contents (angles, &kept, NULL, NULL));
      g_assert_cmpstr (kept, ==, text);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
      g_clear_pointer (&kept, g_free);
      g_assert_true (g_file_get_contents (earlier, &kept, NULL, NULL));
      g_assert_cmpstr (kept, ==, earlier_text);
      if (record == earlier)
        g_assert_nonnull (strstr (err, "exists"));
    }
  g_unlink (angles);
  g_unlink (earlier);
  g_rmdir (dir);
}

/* A run killed while it records leaves the recording readable with what
 * came, and says that it is kept (not that output was removed). */
static void
test_cli_record_killed (void)
{
  g_autoptr(TomoScan) file = tomo_test_open_scan (sample_path);
  g_autofree char *dir = g_dir_make_tmp ("tomo-live-XXXXXX", NULL);
  g_autofree char *record = g_build_filename (dir, "record.h5", NULL);
  g_autofree char *out = g_build_filename (dir, "out.tif", NULL);
  g_autofree char *bind = g_strdup_printf ("tcp://127.0.0.1:%u", free_port ());
  g_autofree float *proj = read_frames (file, TOMO_FRAME_PROJECTION);
  g_autoptr(GSubprocess) rx = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  guint n = tomo_scan_get_n_projections (file);
  hid_t h5, dset, space;
  hsize_t dims[3] = { 0 };

  rx = g_subprocess_new (G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, tomolive, "reconstruct", "--listen", bind,
                         "--record", record, "--timeout", "60", "-q", "-o", out, NULL);
  g_assert_no_error (error);
  g_usleep (200000);
  tx = tomo_live_sender_new (bind, TOMO_LIVE_PROTOCOL_TOMOP, FALSE, 20000, &error);
  g_assert_no_error (error);
  send_scan_header (tx, file);
  send_projections (tx, file, proj, 0, n / 2, 0);
  /* Flushed every 200 ms. */
  g_usleep (1500000);
  g_subprocess_send_signal (rx, SIGTERM);
  g_assert_true (g_subprocess_communicate_utf8 (rx, NULL, NULL, NULL, &err, &error));
  g_test_message ("%s", err);
  g_assert_cmpint (g_subprocess_get_if_signaled (rx) ? 0 : g_subprocess_get_exit_status (rx), ==, 1);
  g_assert_nonnull (strstr (err, "kept"));
  g_assert_null (strstr (err, "removed"));

  _tomo_hdf5_lock ();
  h5 = H5Fopen (record, H5F_ACC_RDONLY, H5P_DEFAULT);
  g_assert_cmpint (h5, >=, 0);
  dset = H5Dopen2 (h5, "/exchange/data", H5P_DEFAULT);
  g_assert_cmpint (dset, >=, 0);
  space = H5Dget_space (dset);
  H5Sget_simple_extent_dims (space, dims, NULL);
  H5Sclose (space);
  H5Dclose (dset);
  H5Fclose (h5);
  _tomo_hdf5_unlock ();
  g_assert_cmpuint (dims[0], >=, n / 2);
  g_unlink (record);
  g_rmdir (dir);
}

/* --- volume: 5000 projections as fast as possible --------------------------- */

#define MANY_N 5000
#define MANY_SIZE 256

static guint16
many_value (guint i,
            guint y,
            guint x)
{
  return (guint16) (i * 131u + y * 7u + x * 3u + ((i * y) & 0xff));
}

typedef struct
{
  char   *url;
  GError *error;
} ManyJob;

static gpointer
many_sender (gpointer data)
{
  ManyJob *job = data;
  g_autoptr(TomoLiveSender) tx = tomo_live_sender_new (job->url, TOMO_LIVE_PROTOCOL_JSON, FALSE, 30000, &job->error);
  g_autofree guint16 *frame = g_new (guint16, MANY_SIZE * MANY_SIZE);

  if (tx == NULL)
    return NULL;
  for (guint i = 0; i < MANY_N; i++)
    {
      for (guint y = 0; y < MANY_SIZE; y++)
        for (guint x = 0; x < MANY_SIZE; x++)
          frame[y * MANY_SIZE + x] = GUINT16_TO_LE (many_value (i, y, x));
      if (!tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, i, MANY_SIZE, MANY_SIZE, TOMO_DTYPE_UINT16,
                                        frame, TRUE, i * 180.0 / MANY_N, &job->error))
        return NULL;
    }
  tomo_live_sender_send_end (tx, &job->error);
  return NULL;
}

static void
test_many_projections (void)
{
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_JSON, FALSE);
  g_autoptr(TomoLiveScan) live = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tomo-live-XXXXXX", NULL);
  g_autofree char *record = g_build_filename (dir, "many.h5", NULL);
  g_autofree guint16 *block = NULL;
  TomoLiveReceiverStats s;
  TomoLiveScanInfo info;
  ManyJob job = { g_strdup (tomo_live_receiver_get_endpoint (rx)), NULL };
  GThread *thread;
  guint64 want = 0, got = 0;
  gint64 start = g_get_monotonic_time ();
  hid_t file, dset, space, mspace;
  hsize_t dims[3];

  thread = g_thread_new ("many", many_sender, &job);
  /* Recorded while it arrives, as reconstruct --record does. */
  {
    g_autoptr(TomoLiveRecorder) recorder = NULL;
    gint64 deadline = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
    guint n_flushes = 0;

    while (live == NULL && g_get_monotonic_time () < deadline)
      {
        g_autoptr(GError) wait_error = NULL;
        g_autoptr(TomoLiveScan) current = NULL;

        live = tomo_live_receiver_wait_complete (rx, 100000, &wait_error);
        current = live ? tomo_live_scan_ref (live) : tomo_live_receiver_dup_current (rx);
        if (current != NULL && recorder == NULL)
          {
            recorder = tomo_live_recorder_new (current, record, &error);
            g_assert_no_error (error);
          }
        if (recorder != NULL)
          {
            g_assert_true (tomo_live_recorder_flush (recorder, &error));
            g_assert_no_error (error);
            n_flushes++;
          }
      }
    g_assert_nonnull (live);
    g_test_message ("%u flushes while receiving", n_flushes);
    g_assert_cmpuint (n_flushes, >=, 2);
    g_assert_true (tomo_live_recorder_finish (g_steal_pointer (&recorder), &error));
    g_assert_no_error (error);
  }
  g_thread_join (thread);
  g_free (job.url);
  g_assert_no_error (job.error);
  g_assert_no_error (error);
  g_test_message ("5000 × 256² uint16 received in %.2f s", (g_get_monotonic_time () - start) / 1e6);

  tomo_live_receiver_get_stats (rx, &s);
  tomo_live_scan_get_info (live, &info);
  g_assert_cmpuint (s.n_dropped_total, ==, 0);
  g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], ==, MANY_N);
  g_assert_cmpuint (info.n_duplicates, ==, 0);

  g_clear_pointer (&live, tomo_live_scan_unref);

  /* Count and checksum of the recorded file, read back by HDF5 itself. */
  for (guint i = 0; i < MANY_N; i++)
    for (guint y = 0; y < MANY_SIZE; y++)
      for (guint x = 0; x < MANY_SIZE; x++)
        want += (guint64) many_value (i, y, x) * (1 + (i % 977));
  _tomo_hdf5_lock ();
  file = H5Fopen (record, H5F_ACC_RDONLY, H5P_DEFAULT);
  g_assert_cmpint (file, >=, 0);
  dset = H5Dopen2 (file, "/exchange/data", H5P_DEFAULT);
  space = H5Dget_space (dset);
  H5Sget_simple_extent_dims (space, dims, NULL);
  g_assert_cmpuint (dims[0], ==, MANY_N);
  g_assert_cmpuint (dims[1], ==, MANY_SIZE);
  g_assert_cmpuint (dims[2], ==, MANY_SIZE);
  block = g_new (guint16, (gsize) 100 * MANY_SIZE * MANY_SIZE);
  {
    hsize_t count[3] = { 100, MANY_SIZE, MANY_SIZE };
    mspace = H5Screate_simple (3, count, NULL);
    for (guint i0 = 0; i0 < MANY_N; i0 += 100)
      {
        hsize_t start3[3] = { i0, 0, 0 };

        H5Sselect_hyperslab (space, H5S_SELECT_SET, start3, NULL, count, NULL);
        g_assert_cmpint (H5Dread (dset, H5T_NATIVE_UINT16, mspace, space, H5P_DEFAULT, block), >=, 0);
        for (guint j = 0; j < 100; j++)
          for (gsize p = 0; p < MANY_SIZE * MANY_SIZE; p++)
            got += (guint64) block[(gsize) j * MANY_SIZE * MANY_SIZE + p] * (1 + ((i0 + j) % 977));
      }
    H5Sclose (mspace);
  }
  H5Sclose (space);
  H5Dclose (dset);
  H5Fclose (file);
  _tomo_hdf5_unlock ();
  g_assert_cmpuint (got, ==, want);
  g_unlink (record);
  g_rmdir (dir);
}


/* --- the slice while data arrives ------------------------------------------ */

/* A preview of `rx` on the CPU (or the GPU, keeping the slice on the device),
 * stepping at most max_rate times a second (< 0: only when the test steps it). */
static TomoLivePreview *
preview_new (TomoLiveReceiver *rx,
             gboolean          gpu,
             TomoLiveMode      mode,
             double            max_rate)
{
  TomoLivePreviewOptions options;

  tomo_live_preview_options_init (&options);
  options.backend = gpu ? TOMO_BACKEND_GPU : TOMO_BACKEND_CPU;
  options.device_only = gpu;
  options.mode = mode;
  options.max_rate = max_rate;
  return tomo_live_preview_new (rx, &options, NULL, NULL);
}

static void
test_preview (gconstpointer data)
{
  TomoLiveMode mode = GPOINTER_TO_INT (data);
  g_autoptr(TomoScan) file = tomo_test_open_scan (sample_path);
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_TOMOP, FALSE);
  g_autoptr(TomoLivePreview) preview = NULL;
  g_autoptr(TomoSlice) want = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree float *image = NULL;
  guint n_proj = tomo_scan_get_n_projections (file);
  guint width = 0, n_in = 0, n_changes = 0, last_n = 0;
  guint64 version = 0, last_version = 0;
  gint64 deadline;
  StreamJob job;
  GThread *sender;
  double median, max;
  guint n_delays;

  preview = preview_new (rx, FALSE, mode, 30);

  /* About a second of data: the preview steps ~30 times meanwhile. */
  stream_rate = 400;
  sender = stream_async (&job, file, rx, TOMO_LIVE_PROTOCOL_TOMOP, FALSE);
  stream_rate = 0;
  /* Watch the slice fill in. */
  deadline = g_get_monotonic_time () + WAIT_US;
  while (g_get_monotonic_time () < deadline)
    {
      g_free (image);
      image = tomo_live_preview_dup_image (preview, &width, &n_in, &version);
      if (image != NULL && version != last_version)
        {
          g_assert_cmpuint (n_in, >=, last_n);
          if (n_in > last_n)
            n_changes++;
          last_version = version;
          last_n = n_in;
        }
      if (n_in == n_proj)
        break;
      g_usleep (5000);
    }
  stream_join (sender, &job);
  live = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n_in, ==, n_proj);
  g_test_message ("the slice changed %u times while %u projections arrived", n_changes, n_proj);
  g_assert_cmpuint (n_changes, >=, 2);

  want = reconstruct_row (file, tomo_scan_get_height (file) / 2);
  g_assert_cmpuint (width, ==, want->width);
  g_assert_cmpfloat (relative_difference (want->data, image, (gsize) width * width), <, 1e-4);
  tomo_live_preview_get_delays (preview, &median, &max, &n_delays);
  g_test_message ("arrival → slice: median %.2f ms, max %.2f ms over %u projections", median, max, n_delays);
  g_assert_cmpuint (n_delays, >=, n_proj);
  g_assert_cmpfloat (median, >=, 0);
}

/* A second rotation, half of it: continuous mode replaces the projections
 * at those angles (the slice stays that of one rotation), scan mode starts
 * the slice afresh with the new rotation's projections only.  With
 * TOMO_LIVE_ON_GPU in the data: on the device, the slice kept there
 * (device_only) and downloaded only for the comparison. */
#define TOMO_LIVE_ON_GPU 0x100

static void
test_preview_second_rotation (gconstpointer data)
{
  TomoLiveMode mode = GPOINTER_TO_INT (data) & 0xff;
  gboolean gpu = (GPOINTER_TO_INT (data) & TOMO_LIVE_ON_GPU) != 0;
  g_autoptr(TomoScan) file = tomo_test_open_scan (sample_path);
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_TOMOP, FALSE);
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(TomoLivePreview) preview = NULL;
  g_autoptr(TomoSlice) want = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree float *proj = read_frames (file, TOMO_FRAME_PROJECTION);
  g_autofree float *image = NULL;
  guint w = tomo_scan_get_width (file), h = tomo_scan_get_height (file);
  guint n = tomo_scan_get_n_projections (file);
  guint width, n_in = 0;
  guint64 version;
  double diff, tolerance = gpu ? 1e-3 : 1e-4;   /* the GPU: float trigonometry and preprocessing */

  if (gpu && !tomo_test_need_gpu ("none found, or built without CUDA"))
    return;
  preview = preview_new (rx, gpu, mode, -1);   /* stepped here */
  tx = sender_new (rx, TOMO_LIVE_PROTOCOL_TOMOP);
  send_scan_header (tx, file);
  send_projections (tx, file, proj, 0, n, 0);
  {
    g_autoptr(TomoLiveScan) complete = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
    g_assert_no_error (error);
  }
  g_assert_true (tomo_live_preview_step (preview, &error));
  g_assert_no_error (error);

  /* The next rotation's first half: ids n … n + n/2 − 1, the same frames again. */
  send_projections (tx, file, proj, 0, n / 2, n);
  {
    gint64 deadline = g_get_monotonic_time () + WAIT_US;
    TomoLiveScanInfo info = { 0 };

    while (g_get_monotonic_time () < deadline && info.n_duplicates < n / 2)
      {
        g_autoptr(TomoLiveScan) cur = tomo_live_receiver_dup_current (rx);
        tomo_live_scan_get_info (cur, &info);
        g_usleep (2000);
      }
    g_assert_cmpuint (info.n_duplicates, ==, n / 2);
  }
  g_assert_true (tomo_live_preview_step (preview, &error));
  g_assert_no_error (error);
  g_assert_cmpint (tomo_live_preview_get_backend (preview), ==, gpu ? TOMO_BACKEND_GPU : TOMO_BACKEND_CPU);
  if (gpu)
    {
      g_autoptr(TomoSlice) slice = tomo_live_preview_dup_slice (preview, NULL, NULL);

      g_assert_null (slice->data);
      g_assert_nonnull (slice->device_buffer);
      g_assert_true (slice->values.valid);
    }
  image = tomo_live_preview_dup_image (preview, &width, &n_in, &version);
  g_assert_nonnull (image);
  want = reconstruct_row (file, h / 2);
  diff = relative_difference (want->data, image, (gsize) w * w);
  g_test_message ("%u projections in the slice, %.3g from one full rotation", n_in, diff);
  if (mode == TOMO_LIVE_MODE_CONTINUOUS)
    {
      g_assert_cmpuint (n_in, ==, n);
      g_assert_cmpfloat (diff, <, tolerance);    /* replaced, not counted twice */
    }
  else
    {
      g_assert_cmpuint (n_in, ==, n / 2);
      g_assert_cmpfloat (diff, >, 1e-2);    /* half a rotation only */
    }
}

/* A receiver whose memory is full drops frames with a clear reason and keeps
 * every one it accepted; a frame larger than the limit is refused unread. */
static void
test_memory_limit (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoLiveReceiver) rx = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  g_autofree char *last = NULL;
  TomoLiveReceiverStats s = { 0 };
  TomoLiveScanInfo info;
  guint16 px[100 * 100] = { 0 };
  const gsize max_memory = 3 * sizeof px + 1000;   /* three frames and their slots */
  gint64 deadline;

  rx = loopback_receiver_new (TOMO_LIVE_PROTOCOL_JSON, FALSE, max_memory, 0);
  tx = sender_new (rx, TOMO_LIVE_PROTOCOL_JSON);
  for (guint i = 0; i < 5; i++)
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, i, 100, 100, TOMO_DTYPE_UINT16, px,
                                                FALSE, 0, &error));
  /* The same slot again replaces, within the limit. */
  g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, 1, 100, 100, TOMO_DTYPE_UINT16, px,
                                              FALSE, 0, &error));
  {
    const char *header = "{\"frame\": 9, \"shape\": [1000, 1000], \"dtype\": \"uint16\"}";
    const void *parts[2] = { header, px };
    gsize sizes[2] = { strlen (header), sizeof px };

    g_assert_true (tomo_live_sender_send_parts (tx, parts, sizes, 2, &error));
  }
  deadline = g_get_monotonic_time () + WAIT_US;
  while (g_get_monotonic_time () < deadline && s.n_messages < 7)
    {
      tomo_live_receiver_get_stats (rx, &s);
      g_usleep (2000);
    }
  g_assert_cmpuint (s.n_messages, ==, 7);
  g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_MEMORY], ==, 2);
  g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_TOO_LARGE], ==, 1);
  last = tomo_live_receiver_dup_last_drop (rx);
  g_assert_nonnull (strstr (last, "too large"));
  live = tomo_live_receiver_dup_current (rx);
  tomo_live_scan_get_info (live, &info);
  g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], ==, 3);
  g_assert_cmpuint (info.n_duplicates, ==, 1);
  g_assert_cmpuint (info.bytes_held, <=, max_memory);
}

/* Waits until `rx` has handled (accepted or dropped) `n` messages. */
static TomoLiveReceiverStats
wait_messages (TomoLiveReceiver *rx,
               guint64           n)
{
  gint64 deadline = g_get_monotonic_time () + WAIT_US;
  TomoLiveReceiverStats s = { 0 };

  while (g_get_monotonic_time () < deadline)
    {
      tomo_live_receiver_get_stats (rx, &s);
      if (s.n_accepted + s.n_dropped_total >= n)
        break;
      g_usleep (2000);
    }
  g_assert_cmpuint (s.n_accepted + s.n_dropped_total, >=, n);
  return s;
}

/* Complete scans that nobody takes (the viewer never does) count toward the
 * limit and give way to the scans after them: ten scans through a limit of
 * three keep arriving whole, and what is held stays within the limit. */
#define SHARED_ROWS 32
#define SHARED_COLS 64
#define SHARED_N 16

/* Sends scan `scan_i` of SHARED_N projections, its pixels all 1 + scan_i,
 * with a geometry that differs from the last: a new scan each time. */
static void
send_shared_scan (TomoLiveSender *tx,
                  guint           scan_i)
{
  g_autoptr(GError) error = NULL;
  g_autofree float *px = g_new (float, SHARED_ROWS * SHARED_COLS);
  double angles[SHARED_N];

  for (guint i = 0; i < SHARED_N; i++)
    angles[i] = G_PI * i / SHARED_N;
  angles[0] = scan_i * 1e-3;
  for (guint i = 0; i < SHARED_ROWS * SHARED_COLS; i++)
    px[i] = 1 + scan_i;
  g_assert_true (tomo_live_sender_send_geometry (tx, SHARED_ROWS, SHARED_COLS, SHARED_N, angles, 0, 0,
                                                 FALSE, &error));
  for (guint i = 0; i < SHARED_N; i++)
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, i, SHARED_ROWS, SHARED_COLS,
                                                TOMO_DTYPE_FLOAT32, px, FALSE, 0, &error));
  g_assert_no_error (error);
}

static void
test_memory_shared (void)
{
  gsize scan_bytes = (gsize) SHARED_N * SHARED_ROWS * SHARED_COLS * sizeof (float);
  gsize limit = 3 * scan_bytes + 64 * 1024;
  g_autoptr(TomoLiveReceiver) rx = loopback_receiver_new (TOMO_LIVE_PROTOCOL_TOMOP, FALSE, limit, 0);
  g_autoptr(TomoLiveSender) tx = sender_new (rx, TOMO_LIVE_PROTOCOL_TOMOP);
  TomoLiveReceiverStats s;
  TomoLiveScan *scan;
  gsize held = 0;
  guint n_queued = 0;

  for (guint scan_i = 0; scan_i < 10; scan_i++)
    send_shared_scan (tx, scan_i);
  /* The geometry is three messages (spec, scan settings, parallel beam
   * geometry), then one per projection. */
  s = wait_messages (rx, 10 * (SHARED_N + 3));
  {
    /* Said before the checks, so that a failure shows why. */
    g_autofree char *last = tomo_live_receiver_dup_last_drop (rx);

    g_test_message ("%u scans, %u resumed, %" G_GUINT64_FORMAT " accepted, %" G_GUINT64_FORMAT
                    " dropped (last: %s), %u waits, %u released", s.n_scans, s.n_resumed,
                    s.n_accepted, s.n_dropped_total, last ? last : "none", s.n_waits,
                    s.n_released);
  }
  g_assert_cmpuint (s.n_dropped_total, ==, 0);
  g_assert_cmpuint (s.n_accepted, ==, 10 * (SHARED_N + 3));
  g_assert_cmpuint (s.n_scans, ==, 10);

  /* What the queue still holds, and the scan being received. */
  while ((scan = tomo_live_receiver_wait_complete (rx, 0, NULL)) != NULL)
    {
      TomoLiveScanInfo info;

      tomo_live_scan_get_info (scan, &info);
      g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], ==, SHARED_N);
      held += info.bytes_held;
      n_queued++;
      tomo_live_scan_unref (scan);
    }
  g_test_message ("%u complete scans still queued, %" G_GSIZE_FORMAT " bytes of a limit of %" G_GSIZE_FORMAT,
                  n_queued, held, limit);
  g_assert_cmpuint (n_queued, >=, 1);
  g_assert_cmpuint (n_queued, <=, 3);
  g_assert_cmpuint (held, <=, limit);
}

/* Row `row` of every projection of `scan` reads as `value`. */
static void
assert_scan_value (TomoScan *scan,
                   float     value)
{
  g_autoptr(GError) error = NULL;
  g_autofree float *rows = g_new (float, SHARED_N * SHARED_COLS);

  g_assert_true (_tomo_scan_read_frames (scan, TOMO_FRAME_PROJECTION, SHARED_ROWS / 2, rows, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < SHARED_N * SHARED_COLS; i++)
    g_assert_cmpfloat (rows[i], ==, value);
}

typedef enum
{
  HOLDER_LETS_GO,      /* while the next scan waits */
  HOLDER_KEEPS,        /* past the wait */
  RECEIVER_STOPS,      /* while the next scan waits */
} HeldCase;

/* Sends the first scan and takes it as the viewer does (a reference and a
 * TomoScan of it); then the next scan, which waits for its memory. */
static guint64
hold_first_scan (TomoLiveReceiver *rx,
                 TomoLiveSender   *tx,
                 TomoLiveScan    **first,
                 TomoScan        **shown)
{
  g_autoptr(GError) error = NULL;
  TomoLiveReceiverStats s;
  guint64 n_per_scan;
  gint64 start;

  send_shared_scan (tx, 0);
  *first = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
  g_assert_no_error (error);
  *shown = tomo_live_scan_create_scan (*first, &error);
  g_assert_no_error (error);
  assert_scan_value (*shown, 1);
  tomo_live_receiver_get_stats (rx, &s);
  n_per_scan = s.n_accepted;

  start = g_get_monotonic_time ();
  send_shared_scan (tx, 1);
  /* The receiver waits (it took the geometry and what fits). */
  while (tomo_live_receiver_get_stats (rx, &s), s.n_waits == 0 && s.n_accepted < 2 * n_per_scan)
    {
      g_assert_cmpint (g_get_monotonic_time () - start, <, WAIT_US);
      g_usleep (2000);
    }
  return n_per_scan;
}

/* A scan the viewer still shows when the next arrives, with room for about
 * one and a half: the next scan's frames wait for the first to be let go
 * (the sender is held back), and arrive whole, none dropped.  The holder
 * lets go while they wait; or, after the wait, the held scan's frames are
 * released for them, and it says so where it is read; or the receiver is
 * freed while they wait (reconstruct --listen, done with the scan it took):
 * the scan held stays whole. */
static void
held_scan_gives_way (gconstpointer data)
{
  HeldCase held = GPOINTER_TO_INT (data);
  gsize scan_bytes = (gsize) SHARED_N * SHARED_ROWS * SHARED_COLS * sizeof (float);
  gsize limit = scan_bytes * 3 / 2;
  g_autoptr(TomoLiveReceiver) rx = loopback_receiver_new (TOMO_LIVE_PROTOCOL_TOMOP, FALSE, limit, 0);
  g_autoptr(TomoLiveSender) tx = sender_new (rx, TOMO_LIVE_PROTOCOL_TOMOP);
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoLiveScan) first = NULL, second = NULL;
  g_autoptr(TomoScan) shown = NULL, next = NULL;
  g_autofree float *rows = g_new (float, SHARED_N * SHARED_COLS);
  TomoLiveReceiverStats s;
  TomoLiveScanInfo info;
  guint64 n_per_scan;
  gint64 start;

  n_per_scan = hold_first_scan (rx, tx, &first, &shown);
  start = g_get_monotonic_time ();
  tomo_live_receiver_get_stats (rx, &s);
  g_assert_cmpuint (s.n_waits, ==, 1);
  g_assert_cmpuint (s.n_accepted, <, 2 * n_per_scan);
  if (held == RECEIVER_STOPS)
    {
      g_clear_pointer (&rx, tomo_live_receiver_free);
      g_test_message ("receiver freed in %.3f s", (g_get_monotonic_time () - start) / 1e6);
      g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
      tomo_live_scan_get_info (first, &info);
      g_assert_false (info.released);
      assert_scan_value (shown, 1);
      return;
    }
  if (held == HOLDER_LETS_GO)
    {
      g_clear_object (&shown);
      g_clear_pointer (&first, tomo_live_scan_unref);
    }
  second = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
  g_assert_no_error (error);
  g_assert_nonnull (second);
  tomo_live_receiver_get_stats (rx, &s);
  g_test_message ("next scan whole after %.2f s: %u waits, %u released",
                  (g_get_monotonic_time () - start) / 1e6, s.n_waits, s.n_released);
  g_assert_cmpuint (s.n_dropped_total, ==, 0);
  g_assert_cmpuint (s.n_accepted, ==, 2 * n_per_scan);
  tomo_live_scan_get_info (second, &info);
  g_assert_true (info.complete);
  g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], ==, SHARED_N);
  g_assert_cmpuint (info.bytes_held, <=, limit);
  next = tomo_live_scan_create_scan (second, &error);
  g_assert_no_error (error);
  assert_scan_value (next, 2);

  if (held == HOLDER_LETS_GO)
    {
      g_assert_cmpuint (s.n_released, ==, 0);
      return;
    }
  /* Held all along: its frames went to the next scan. */
  g_assert_cmpuint (s.n_released, ==, 1);
  tomo_live_scan_get_info (first, &info);
  g_assert_true (info.released);
  g_assert_cmpuint (info.bytes_held, ==, 0);          /* its slots too */
  g_assert_cmpuint (info.n_present[TOMO_FRAME_PROJECTION], ==, SHARED_N);   /* what it received */
  g_assert_false (_tomo_scan_read_frames (shown, TOMO_FRAME_PROJECTION, 0, rows, &error));
  g_assert_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_MEMORY);
  g_assert_nonnull (strstr (error->message, "--max-memory"));
  g_clear_error (&error);
  /* Nor is a new TomoScan made of it. */
  g_assert_null (tomo_live_scan_create_scan (first, &error));
  g_assert_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_MEMORY);
}

/* A projection slot without a frame (none arrived, or released) reads as a
 * zero line integral, alike in the preview's rows (which copied whatever
 * its scratch memory held when there were no flats) and in a TomoScan's:
 * the flat before −log, 1 without flats (with darks it read the darks'
 * maximum + 1: a line integral of −log 1.125); for data that came as line
 * integrals the dark (normalised: 0) where there are flats, else 0 (it
 * read 1). */
static void
test_read_row_gap (void)
{
  static const struct { gboolean linear, flats, darks; float gap; } cases[] = {
    { FALSE, FALSE, FALSE, 1.0f }, { TRUE, FALSE, FALSE, 0.0f }, { TRUE, TRUE, TRUE, 0.125f },
    { FALSE, TRUE, TRUE, 0.75f }, { FALSE, FALSE, TRUE, 1.0f }, { TRUE, FALSE, TRUE, 0.0f },
  };
  g_autoptr(TomoLiveBudget) budget = tomo_live_budget_new (1 << 20);
  float px[4 * 3], out[3 * 3], flat[3], dark[3], live_row[3];
  const guint slots[3] = { 0, 1, 2 };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TomoScan) frames = NULL;
      TomoLiveScan *scan = tomo_live_scan_new (TOMO_LIVE_PROTOCOL_TOMOP, 4, 3, 3, NULL, 180, budget, &error);
      TomoLiveMessage m = { .type = TOMO_LIVE_MSG_FRAME, .rows = 4, .cols = 3, .kind = TOMO_FRAME_PROJECTION,
                            .id = 1, .dtype = TOMO_DTYPE_FLOAT32, .pixels = (const guint8 *) px,
                            .n_bytes = sizeof px };
      gboolean normalise, apply_log;

      g_assert_no_error (error);
      tomo_live_scan_set_settings (scan, cases[c].darks, cases[c].flats, cases[c].linear);
      /* Projection 1 of 0.25; a dark of 0.125 and a flat of 0.75. */
      for (guint k = 0; k < 3; k++)
        {
          if ((k == 1 && !cases[c].darks) || (k == 2 && !cases[c].flats))
            continue;
          for (guint i = 0; i < G_N_ELEMENTS (px); i++)
            px[i] = k == 0 ? 0.25f : k == 1 ? 0.125f : 0.75f;
          m.kind = k == 0 ? TOMO_FRAME_PROJECTION : k == 1 ? TOMO_FRAME_DARK : TOMO_FRAME_FLAT;
          m.id = k == 0 ? 1 : 0;
          g_assert_true (tomo_live_scan_add_frame (scan, &m, &error));
          g_assert_no_error (error);
        }
      for (guint i = 0; i < G_N_ELEMENTS (out); i++)
        out[i] = NAN;
      g_assert_true (tomo_live_scan_read_row (scan, 2, slots, 3, out, flat, dark, &normalise, &apply_log));
      g_assert_cmpint (normalise, ==, cases[c].flats);
      g_assert_cmpint (apply_log, ==, !cases[c].linear);
      for (guint x = 0; x < 3; x++)
        {
          g_assert_cmpfloat (out[x], ==, cases[c].gap);       /* slot 0: none arrived */
          g_assert_cmpfloat (out[3 + x], ==, 0.25f);          /* slot 1 */
          g_assert_cmpfloat (out[6 + x], ==, cases[c].gap);   /* slot 2 */
        }
      frames = tomo_live_scan_create_scan (scan, &error);
      g_assert_no_error (error);
      g_assert_true (_tomo_scan_read_frames (frames, TOMO_FRAME_PROJECTION, 2, out, &error));
      g_assert_no_error (error);
      for (guint x = 0; x < 3; x++)
        {
          g_assert_cmpfloat (out[x], ==, cases[c].gap);
          g_assert_cmpfloat (out[3 + x], ==, 0.25f);
          g_assert_cmpfloat (out[6 + x], ==, cases[c].gap);
        }
      /* Preprocessed, in the live TomoScan and in a recording of it
       * reopened: the gaps add nothing. */
      for (guint pass = 0; pass < 2; pass++)
        {
          g_autofree char *dir = pass == 1 ? g_dir_make_tmp ("tomo-gap-XXXXXX", NULL) : NULL;
          g_autofree char *path = pass == 1 ? g_build_filename (dir, "gap.h5", NULL) : NULL;
          g_autoptr(TomoScan) read = NULL;

          if (pass == 0)
            read = g_object_ref (frames);
          else
            {
              TomoLiveRecorder *recorder = tomo_live_recorder_new (scan, path, &error);

              g_assert_no_error (error);
              g_assert_true (tomo_live_recorder_finish (recorder, &error));
              g_assert_no_error (error);
              read = tomo_test_open_scan (path);
            }
          g_assert_true (tomo_scan_read_sinogram (read, 2, out, NULL, &error));
          g_assert_no_error (error);
          /* (Line integrals divided by flats: a value not above the dark
           * is clamped to 1e-6 before the division.) */
          for (guint x = 0; x < 3; x++)
            {
              g_assert_cmpfloat_with_epsilon (out[x], 0.0f, 2e-6f);
              g_assert_cmpfloat (fabsf (out[3 + x]), >, 0.1f);
              g_assert_cmpfloat_with_epsilon (out[6 + x], 0.0f, 2e-6f);
            }
          if (pass == 0)
            memcpy (live_row, out + 3, sizeof live_row);
          else
            for (guint x = 0; x < 3; x++)   /* the recording reopens as received */
              g_assert_cmpfloat_with_epsilon (out[3 + x], live_row[x], 1e-6f);
          g_clear_object (&read);
          if (path != NULL)
            {
              g_unlink (path);
              g_rmdir (dir);
            }
        }
      g_clear_object (&frames);
      tomo_live_scan_unref (scan);
    }
  g_assert_cmpuint (tomo_live_budget_get_used (budget), ==, 0);
}

/* What the wire says cannot make the receiver allocate past its limit: a
 * projection id far past the frames held (JSON grows a slot per id), dark
 * and flat ids and counts beyond any scan's, a message larger than any frame
 * may be (refused by ZeroMQ before it is read). */
/* JSON with a projection count whose slots alone exceed the memory limit:
 * the first frame cannot open the scan, and is dropped as over the limit
 * (the receiver went on dereferencing the error it had cleared); a later
 * message is still received. */
static void
test_memory_json_count (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoLiveReceiver) rx = NULL;
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  TomoLiveReceiverStats s;
  guint8 px[4] = { 1, 2, 3, 4 };

  rx = loopback_receiver_new (TOMO_LIVE_PROTOCOL_JSON, FALSE, 2048, 100000);
  tx = sender_new (rx, TOMO_LIVE_PROTOCOL_JSON);
  for (guint i = 0; i < 2; i++)
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, i, 2, 2, TOMO_DTYPE_UINT8, px,
                                                FALSE, 0, &error));
  g_assert_no_error (error);
  s = wait_messages (rx, 2);
  g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_MEMORY], ==, 2);
  g_assert_cmpuint (s.n_accepted, ==, 0);
  live = tomo_live_receiver_dup_current (rx);
  g_assert_null (live);
}

static void
test_memory_wire (void)
{
  gsize limit = (gsize) 1 << 20;
  g_autoptr(GError) error = NULL;
  guint8 px[4] = { 1, 2, 3, 4 };

  /* JSON: frame 2²⁴ − 1 of a growing scan would need 2²⁴ slots. */
  {
    g_autoptr(TomoLiveReceiver) rx = loopback_receiver_new (TOMO_LIVE_PROTOCOL_JSON, FALSE, limit, 0);
    g_autoptr(TomoLiveSender) tx = sender_new (rx, TOMO_LIVE_PROTOCOL_JSON);
    g_autoptr(TomoLiveScan) live = NULL;
    TomoLiveReceiverStats s;
    TomoLiveScanInfo info;

    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, 0, 2, 2, TOMO_DTYPE_UINT8, px,
                                                FALSE, 0, &error));
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, TOMO_LIVE_MAX_ID - 1, 2, 2,
                                                TOMO_DTYPE_UINT8, px, FALSE, 0, &error));
    /* A dark id beyond any scan's. */
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_DARK, TOMO_LIVE_MAX_ID - 1, 2, 2,
                                                TOMO_DTYPE_UINT8, px, FALSE, 0, &error));
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_DARK, TOMO_LIVE_MAX_CALIBRATION - 1, 2, 2,
                                                TOMO_DTYPE_UINT8, px, FALSE, 0, &error));
    g_assert_no_error (error);
    s = wait_messages (rx, 4);
    g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_MEMORY], ==, 1);
    g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_ID], ==, 1);
    live = tomo_live_receiver_dup_current (rx);
    tomo_live_scan_get_info (live, &info);
    g_assert_cmpuint (tomo_live_scan_get_n_slots (live, TOMO_FRAME_PROJECTION), ==, 1);
    g_assert_cmpuint (tomo_live_scan_get_n_slots (live, TOMO_FRAME_DARK), ==, TOMO_LIVE_MAX_CALIBRATION);
    g_assert_cmpuint (info.n_present[TOMO_FRAME_DARK], ==, 1);
    g_assert_cmpuint (info.bytes_held, <=, limit);
  }

  /* TomoPackets: a dark id and a ScanSettings count beyond any scan's; a
   * message four times the limit. */
  {
    g_autoptr(TomoLiveReceiver) rx = loopback_receiver_new (TOMO_LIVE_PROTOCOL_TOMOP, FALSE, limit, 0);
    g_autoptr(TomoLiveSender) tx = sender_new (rx, TOMO_LIVE_PROTOCOL_TOMOP);
    g_autoptr(TomoLiveSender) big = sender_new (rx, TOMO_LIVE_PROTOCOL_TOMOP);
    g_autoptr(TomoLiveScan) live = NULL;
    g_autofree guint8 *huge = g_malloc0 (4 * limit);
    double angles[4] = { 0, 45, 90, 135 };
    float f[4] = { 1, 2, 3, 4 };
    const void *parts[1] = { huge };
    gsize size = 4 * limit;
    TomoLiveReceiverStats s;

    guint64 n0;

    g_assert_true (tomo_live_sender_send_geometry (tx, 2, 2, 4, angles, 0, 0, FALSE, &error));
    /* The geometry is three messages (specification, settings, beam). */
    s = wait_messages (rx, 3);
    n0 = s.n_messages;
    flow_send_bytes (&(Flow) { rx, tx, 2, 2, 0 }, tomo_live_encode_projection (0, TOMO_LIVE_MAX_ID - 1, 2, 2, f, 4));
    flow_send_bytes (&(Flow) { rx, tx, 2, 2, 0 }, tomo_live_encode_scan_settings (0, TOMO_LIVE_MAX_ID, 1, 0));
    s = wait_messages (rx, n0 + 2);
    g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_ID], ==, 1);
    g_assert_cmpuint (s.n_dropped[TOMO_LIVE_DROP_TOO_LARGE], ==, 1);
    live = tomo_live_receiver_dup_current (rx);
    g_assert_cmpuint (tomo_live_scan_get_n_slots (live, TOMO_FRAME_DARK), ==, 0);

    /* 4 MiB under a 1 MiB limit: not received at all (counted nowhere),
     * and what comes after it still is. */
    memcpy (huge, (guint8[]) { 0x09, 0x03, 0, 0 }, 4);
    g_assert_true (tomo_live_sender_send_parts (big, parts, &size, 1, &error));
    g_assert_no_error (error);
    g_usleep (300000);
    flow_send_bytes (&(Flow) { rx, tx, 2, 2, 0 }, tomo_live_encode_projection (2, 1, 2, 2, f, 4));
    s = wait_messages (rx, n0 + 3);
    g_assert_cmpuint (s.n_messages, ==, n0 + 3);
    g_assert_cmpuint (s.bytes, <, limit);
    g_assert_cmpuint (s.n_accepted, ==, n0 + 1);
  }
}

/* A recording reads back as the live scan did: a projection that never
 * came is the flat (a zero line integral), not zeros; data already
 * normalised (no flats) reopens without options; the state is recorded. */
static void
test_record_gaps (void)
{
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_JSON, FALSE);
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("tomo-live-XXXXXX", NULL);
  guint16 flat[4 * 6], px[4 * 6];

  for (guint i = 0; i < G_N_ELEMENTS (px); i++)
    {
      flat[i] = 1000 + i;
      px[i] = 500;
    }
  tx = sender_new (rx, TOMO_LIVE_PROTOCOL_JSON);
  for (guint pass = 0; pass < 2; pass++)
    {
      /* Pass 0 with a flat (raw counts); pass 1 none (already normalised). */
      g_autofree char *path = g_strdup_printf ("%s/record-%u.h5", dir, pass);
      g_autoptr(TomoLiveScan) live = NULL;
      g_autoptr(TomoScan) scan = NULL, recorded = NULL;
      g_autoptr(TomoLiveRecorder) recorder = NULL;
      float raw_live[11 * 6], raw_file[11 * 6];
      float sino_live[11 * 6], sino_file[11 * 6];
      guint8 flag = 7;
      hid_t file, dset, attr;

      if (pass == 0)
        g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_FLAT, 0, 4, 6, TOMO_DTYPE_UINT16, flat, FALSE, 0,
                                                    &error));
      /* Projections 0 … 10 but 4 and 9. */
      for (guint i = 0; i <= 10; i++)
        if (i != 4 && i != 9)
          g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, i, 4, 6, TOMO_DTYPE_UINT16,
                                                      pass == 0 ? px : flat, TRUE, i * 18.0, &error));
      g_assert_true (tomo_live_sender_send_end (tx, &error));
      g_assert_no_error (error);
      live = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
      g_assert_no_error (error);
      recorder = tomo_live_recorder_new (live, path, &error);
      g_assert_no_error (error);
      g_assert_true (tomo_live_recorder_finish (g_steal_pointer (&recorder), &error));
      g_assert_no_error (error);

      scan = tomo_live_scan_create_scan (live, &error);
      g_assert_no_error (error);
      recorded = tomo_test_open_scan (path);
      g_assert_cmpuint (tomo_scan_get_n_projections (recorded), ==, 11);
      for (guint i = 0; i < 11; i++)
        g_assert_cmpfloat_with_epsilon (tomo_scan_get_angles (recorded)[i], tomo_scan_get_angles (scan)[i], 1e-9);
      g_assert_true (tomo_scan_read_raw_sinogram (scan, 2, raw_live, &error));
      g_assert_true (tomo_scan_read_raw_sinogram (recorded, 2, raw_file, &error));
      g_assert_true (tomo_scan_read_sinogram (scan, 2, sino_live, NULL, &error));
      g_assert_true (tomo_scan_read_sinogram (recorded, 2, sino_file, NULL, &error));
      g_assert_no_error (error);
      for (guint x = 0; x < 6; x++)
        {
          g_assert_cmpfloat (raw_file[4 * 6 + x], ==, raw_live[4 * 6 + x]);   /* the gap: the flat, or 1 */
          g_assert_cmpfloat (raw_file[9 * 6 + x], ==, raw_live[9 * 6 + x]);
          g_assert_cmpfloat (raw_file[4 * 6 + x], !=, 0);
        }
      for (guint i = 0; i < 11 * 6; i++)
        g_assert_cmpfloat_with_epsilon (sino_file[i], sino_live[i], 1e-6);
      g_assert_cmpfloat_with_epsilon (sino_file[4 * 6], 0, 1e-6);   /* a gap adds nothing */

      _tomo_hdf5_lock ();
      file = H5Fopen (path, H5F_ACC_RDONLY, H5P_DEFAULT);
      dset = H5Dopen2 (file, "/exchange/data", H5P_DEFAULT);
      attr = H5Aopen (dset, "already_normalised", H5P_DEFAULT);
      g_assert_cmpint (attr, >=, 0);
      H5Aread (attr, H5T_NATIVE_UINT8, &flag);
      H5Aclose (attr);
      H5Dclose (dset);
      H5Fclose (file);
      _tomo_hdf5_unlock ();
      g_assert_cmpuint (flag, ==, pass == 1);
      g_unlink (path);
    }
  g_rmdir (dir);
}

/* Frames that never arrive are gaps: counted, named, and read as the flat
 * field so that they add nothing to the slice. */
static void
test_gaps (void)
{
  g_autoptr(TomoLiveReceiver) rx = receiver_new (TOMO_LIVE_PROTOCOL_JSON, FALSE);
  g_autoptr(TomoLiveSender) tx = NULL;
  g_autoptr(TomoLiveScan) live = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(GError) error = NULL;
  guint16 flat[4 * 6], px[4 * 6];
  float raw[10 * 6];
  TomoLiveScanInfo info;

  for (guint i = 0; i < G_N_ELEMENTS (px); i++)
    {
      flat[i] = 1000 + i;
      px[i] = 500;
    }
  tx = sender_new (rx, TOMO_LIVE_PROTOCOL_JSON);
  g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_FLAT, 0, 4, 6, TOMO_DTYPE_UINT16, flat, FALSE, 0, &error));
  for (guint i = 0; i < 10; i++)
    if (i != 4 && i != 7)
      g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, i, 4, 6, TOMO_DTYPE_UINT16, px,
                                                  TRUE, 100 + i * 7.0, &error));
  g_assert_true (tomo_live_sender_send_end (tx, &error));
  live = tomo_live_receiver_wait_complete (rx, WAIT_US, &error);
  g_assert_no_error (error);
  tomo_live_scan_get_info (live, &info);
  g_assert_cmpuint (info.n_gaps, ==, 2);
  g_assert_cmpuint (info.first_gap, ==, 4);
  scan = tomo_live_scan_create_scan (live, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tomo_scan_get_n_projections (scan), ==, 10);
  /* The frames' own angles; the gaps evenly spaced. */
  g_assert_cmpfloat_with_epsilon (tomo_scan_get_angles (scan)[3], (100 + 3 * 7.0) * G_PI / 180, 1e-12);
  g_assert_cmpfloat_with_epsilon (tomo_scan_get_angles (scan)[4], 4 * 18.0 * G_PI / 180, 1e-12);
  g_assert_true (tomo_scan_read_raw_sinogram (scan, 2, raw, &error));
  for (guint x = 0; x < 6; x++)
    {
      g_assert_cmpfloat (raw[4 * 6 + x], ==, flat[2 * 6 + x]);   /* the gap reads as the flat */
      g_assert_cmpfloat (raw[3 * 6 + x], ==, 500);
    }
}

int
main (int    argc,
      char **argv)
{
  static const RoundTrip trips[] = {
    { TOMO_LIVE_PROTOCOL_TOMOP, FALSE }, { TOMO_LIVE_PROTOCOL_TOMOP, TRUE },
    { TOMO_LIVE_PROTOCOL_JSON, FALSE }, { TOMO_LIVE_PROTOCOL_JSON, TRUE },
  };
  static const char *const trip_names[] = {
    "/tomo/live/round-trip/tomop-pull", "/tomo/live/round-trip/tomop-rep",
    "/tomo/live/round-trip/json-pull", "/tomo/live/round-trip/json-rep",
  };

  g_test_init (&argc, &argv, NULL);
  sample_path = tomo_test_require_env ("TOMO_SAMPLE_SCAN");
  tomolive = tomo_test_require_env ("TOMOLIVE");

  for (guint i = 0; i < G_N_ELEMENTS (trips); i++)
    g_test_add_data_func (trip_names[i], &trips[i], test_round_trip);
  g_test_add_func ("/tomo/live/malformed/tomop", test_malformed_tomop);
  g_test_add_func ("/tomo/live/malformed/json", test_malformed_json);
  g_test_add_func ("/tomo/live/flats-after-projections", test_flats_after_projections);
  g_test_add_func ("/tomo/live/second-scan", test_second_scan);
  g_test_add_func ("/tomo/live/sender-restart", test_sender_restart);
  g_test_add_data_func ("/tomo/live/cli/tomop", "tomop", test_cli);
  g_test_add_data_func ("/tomo/live/cli/json", "json", test_cli);
  g_test_add_func ("/tomo/live/cli/timeout", test_cli_timeout);
  g_test_add_func ("/tomo/live/cli/record-refuses", test_cli_record_refuses);
  g_test_add_func ("/tomo/live/cli/record-killed", test_cli_record_killed);
  g_test_add_func ("/tomo/live/many-projections", test_many_projections);
  g_test_add_func ("/tomo/live/memory-limit", test_memory_limit);
  g_test_add_func ("/tomo/live/memory-shared", test_memory_shared);
  g_test_add_func ("/tomo/live/read-row-gap", test_read_row_gap);
  g_test_add_data_func ("/tomo/live/memory-held/let-go", GINT_TO_POINTER (HOLDER_LETS_GO), held_scan_gives_way);
  g_test_add_data_func ("/tomo/live/memory-held/released", GINT_TO_POINTER (HOLDER_KEEPS), held_scan_gives_way);
  g_test_add_data_func ("/tomo/live/memory-held/receiver-stops", GINT_TO_POINTER (RECEIVER_STOPS),
                        held_scan_gives_way);
  g_test_add_func ("/tomo/live/memory-wire", test_memory_wire);
  g_test_add_func ("/tomo/live/memory-json-count", test_memory_json_count);
  g_test_add_func ("/tomo/live/gaps", test_gaps);
  g_test_add_func ("/tomo/live/record/gaps", test_record_gaps);
  g_test_add_data_func ("/tomo/live/preview/scan", GINT_TO_POINTER (TOMO_LIVE_MODE_SCAN), test_preview);
  g_test_add_data_func ("/tomo/live/preview/continuous", GINT_TO_POINTER (TOMO_LIVE_MODE_CONTINUOUS),
                        test_preview);
  g_test_add_data_func ("/tomo/live/preview/second-rotation/scan", GINT_TO_POINTER (TOMO_LIVE_MODE_SCAN),
                        test_preview_second_rotation);
  g_test_add_data_func ("/tomo/live/preview/second-rotation/continuous",
                        GINT_TO_POINTER (TOMO_LIVE_MODE_CONTINUOUS), test_preview_second_rotation);
  g_test_add_data_func ("/tomo/live/preview/second-rotation/scan-gpu",
                        GINT_TO_POINTER (TOMO_LIVE_MODE_SCAN | TOMO_LIVE_ON_GPU), test_preview_second_rotation);
  g_test_add_data_func ("/tomo/live/preview/second-rotation/continuous-gpu",
                        GINT_TO_POINTER (TOMO_LIVE_MODE_CONTINUOUS | TOMO_LIVE_ON_GPU), test_preview_second_rotation);
  return g_test_run ();
}
