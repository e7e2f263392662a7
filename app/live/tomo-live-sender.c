/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-live"

#include "config.h"

#include <math.h>
#include <string.h>

#include <gio/gio.h>
#include <zmq.h>

#include "tomo-live-receiver.h"
#include "tomo-live-sender.h"
#include "tomo-scan-private.h"

struct _TomoLiveSender
{
  void            *ctx;
  void            *socket;
  char            *endpoint;
  TomoLiveProtocol protocol;
  gboolean         request;
  gboolean         zero_copy;
  float           *convert;   /* float32 staging for TomoPackets */
  gsize            convert_len;
};

TomoLiveSender *
tomo_live_sender_new (const char       *url,
                      TomoLiveProtocol  protocol,
                      gboolean          request,
                      guint             timeout_ms,
                      GError          **error)
{
  g_autoptr(TomoLiveSender) self = g_new0 (TomoLiveSender, 1);
  int timeout = timeout_ms ? (int) timeout_ms : 30000;
  int linger = timeout;
  /* As many messages queued here as the receiver queues (ZeroMQ's default
   * of 1000 frames of 8 MiB would be 8 GiB held while a receiver waits). */
  int hwm = 64;

  self->protocol = protocol;
  self->endpoint = tomo_live_parse_url (url, &self->protocol, error);
  if (self->endpoint == NULL)
    return NULL;
  self->request = request;
  self->ctx = zmq_ctx_new ();
  self->socket = zmq_socket (self->ctx, request ? ZMQ_REQ : ZMQ_PUSH);
  zmq_setsockopt (self->socket, ZMQ_SNDTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt (self->socket, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
  zmq_setsockopt (self->socket, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt (self->socket, ZMQ_SNDHWM, &hwm, sizeof hwm);
  if (zmq_connect (self->socket, self->endpoint) != 0)
    {
      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_SOCKET,
                   "Cannot connect to %s: %s", self->endpoint, zmq_strerror (zmq_errno ()));
      return NULL;
    }
  return g_steal_pointer (&self);
}

void
tomo_live_sender_free (TomoLiveSender *self)
{
  if (self == NULL)
    return;
  if (self->socket != NULL)
    zmq_close (self->socket);
  if (self->ctx != NULL)
    zmq_ctx_term (self->ctx);
  g_free (self->convert);
  g_free (self->endpoint);
  g_free (self);
}

gboolean
tomo_live_sender_send_parts (TomoLiveSender     *self,
                             const void * const *parts,
                             const gsize        *sizes,
                             guint               n_parts,
                             GError            **error)
{
  for (guint i = 0; i < n_parts; i++)
    if ((self->zero_copy && i > 0
           ? zmq_send_const (self->socket, parts[i], sizes[i], i + 1 < n_parts ? ZMQ_SNDMORE : 0)
           : zmq_send (self->socket, parts[i], sizes[i], i + 1 < n_parts ? ZMQ_SNDMORE : 0)) < 0)
      {
        g_set_error (error, TOMO_LIVE_ERROR,
                     zmq_errno () == EAGAIN ? TOMO_LIVE_ERROR_TIMEOUT : TOMO_LIVE_ERROR_SOCKET,
                     "Sending to %s: %s", self->endpoint,
                     zmq_errno () == EAGAIN ? "the receiver does not take messages" : zmq_strerror (zmq_errno ()));
        return FALSE;
      }
  if (self->request)
    {
      guint8 reply[16];
      int n = zmq_recv (self->socket, reply, sizeof reply, 0);

      if (n < 0)
        {
          g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_TIMEOUT,
                       "No reply from %s: %s", self->endpoint,
                       zmq_errno () == EAGAIN ? "timed out" : zmq_strerror (zmq_errno ()));
          return FALSE;
        }
    }
  return TRUE;
}

void
tomo_live_sender_set_zero_copy (TomoLiveSender *self,
                                gboolean        zero_copy)
{
  self->zero_copy = zero_copy;
}

gboolean
tomo_live_sender_send_bytes (TomoLiveSender *self,
                             GBytes         *bytes,
                             GError        **error)
{
  gsize size = 0;
  const void *data = g_bytes_get_data (bytes, &size);

  return tomo_live_sender_send_parts (self, &data, &size, 1, error);
}

gboolean
tomo_live_sender_send_geometry (TomoLiveSender *self,
                                guint           rows,
                                guint           cols,
                                guint           n_projections,
                                const double   *angles_rad,
                                guint           n_darks,
                                guint           n_flats,
                                gboolean        already_linear,
                                GError        **error)
{
  const float vmin[3] = { -(float) cols / 2, -(float) cols / 2, -(float) rows / 2 };
  const float vmax[3] = { (float) cols / 2, (float) cols / 2, (float) rows / 2 };
  g_autofree float *angles = g_new (float, MAX (n_projections, 1));
  g_autoptr(GBytes) spec = NULL, settings = NULL, geometry = NULL;

  if (self->protocol != TOMO_LIVE_PROTOCOL_TOMOP)
    return TRUE;
  for (guint i = 0; i < n_projections; i++)
    angles[i] = (float) angles_rad[i];
  spec = tomo_live_encode_geometry_spec (0, vmin, vmax);
  /* The 16-byte form unless the flag has something to say. */
  settings = tomo_live_encode_scan_settings (0, n_darks, n_flats, already_linear ? 1 : -1);
  geometry = tomo_live_encode_parallel_beam (0, rows, cols, n_projections, angles, n_projections);
  return tomo_live_sender_send_bytes (self, spec, error) &&
         tomo_live_sender_send_bytes (self, settings, error) &&
         tomo_live_sender_send_bytes (self, geometry, error);
}

gboolean
tomo_live_sender_send_frame (TomoLiveSender *self,
                             int             kind,
                             guint           id,
                             guint           rows,
                             guint           cols,
                             TomoDType       dtype,
                             const void     *pixels,
                             gboolean        has_angle,
                             double          angle_deg,
                             GError        **error)
{
  gsize n = (gsize) rows * cols;

  if (self->protocol == TOMO_LIVE_PROTOCOL_TOMOP)
    {
      static const int wire_type[3] = { [TOMO_FRAME_PROJECTION] = 2, [TOMO_FRAME_FLAT] = 1,
                                        [TOMO_FRAME_DARK] = 0 };
      gint32 head[6];
      const void *parts[1];
      gsize sizes[1];
      guint8 *buf;
      gsize total = sizeof head + n * 4;

      if (self->convert_len < total)
        {
          g_free (self->convert);
          self->convert = g_malloc (total);
          self->convert_len = total;
        }
      buf = (guint8 *) self->convert;
      head[0] = GINT32_TO_LE (TOMOP_PROJECTION);
      head[1] = GINT32_TO_LE (wire_type[kind]);
      head[2] = GINT32_TO_LE ((gint32) id);
      head[3] = GINT32_TO_LE ((gint32) rows);
      head[4] = GINT32_TO_LE ((gint32) cols);
      head[5] = GINT32_TO_LE ((gint32) n);
      memcpy (buf, head, sizeof head);
      if (dtype == TOMO_DTYPE_FLOAT32)
        memcpy (buf + sizeof head, pixels, n * 4);
      else
        {
          float *dst = (float *) (buf + sizeof head);

          _tomo_convert_to_float (pixels, dtype, FALSE, n, dst);
        }
      parts[0] = buf;
      sizes[0] = total;
      return tomo_live_sender_send_parts (self, parts, sizes, 1, error);
    }
  else
    {
      g_autofree char *header = tomo_live_encode_json_header (kind, id, rows, cols, dtype,
                                                              has_angle, angle_deg);
      const void *parts[2] = { header, pixels };
      gsize sizes[2] = { strlen (header), n * _tomo_dtype_size (dtype) };

      return tomo_live_sender_send_parts (self, parts, sizes, 2, error);
    }
}

gboolean
tomo_live_sender_send_end (TomoLiveSender *self,
                           GError        **error)
{
  static const char end[] = "{\"end\": true}";
  const void *parts[1] = { end };
  gsize sizes[1] = { sizeof end - 1 };

  if (self->protocol != TOMO_LIVE_PROTOCOL_JSON)
    return TRUE;
  return tomo_live_sender_send_parts (self, parts, sizes, 1, error);
}

/* --- replaying a scan ---------------------------------------------------- */

/* Every frame of `kind` as rows × cols of `dtype`, frame after frame. */
static guint8 *
read_all_frames (TomoScan      *scan,
                 TomoFrameKind  kind,
                 guint          n,
                 TomoDType      dtype,
                 GError       **error)
{
  guint rows = tomo_scan_get_height (scan), cols = tomo_scan_get_width (scan);
  gsize elem = _tomo_dtype_size (dtype), frame = (gsize) rows * cols * elem;
  g_autofree float *row = g_try_new (float, (gsize) MAX (n, 1) * cols);
  g_autofree guint8 *all = g_try_malloc ((gsize) MAX (n, 1) * frame);

  if (row == NULL || all == NULL)
    {
      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_MEMORY,
                   "Scan %s: %u frames of %u × %u do not fit in memory for streaming",
                   tomo_scan_get_path (scan), n, rows, cols);
      return NULL;
    }
  for (guint y = 0; y < rows && n > 0; y++)
    {
      if (!_tomo_scan_read_frames (scan, kind, y, row, error))
        return NULL;
      for (guint i = 0; i < n; i++)
        {
          guint8 *dst = all + i * frame + (gsize) y * cols * elem;
          const float *src = row + (gsize) i * cols;

          /* Back to the file's own type: exact, the values came from it. */
          for (guint x = 0; x < cols; x++)
            switch (dtype)
              {
              case TOMO_DTYPE_UINT8: dst[x] = (guint8) src[x]; break;
              case TOMO_DTYPE_UINT16: ((guint16 *) dst)[x] = GUINT16_TO_LE ((guint16) src[x]); break;
              case TOMO_DTYPE_UINT32: ((guint32 *) dst)[x] = GUINT32_TO_LE ((guint32) src[x]); break;
              default: memcpy (dst + 4 * (gsize) x, &src[x], 4); break;
              }
        }
    }
  return g_steal_pointer (&all);
}

gboolean
tomo_live_stream_scan (TomoScan                    *scan,
                       const char                  *url,
                       const TomoLiveStreamOptions *options,
                       GCancellable                *cancellable,
                       GError                     **error)
{
  g_autoptr(TomoLiveSender) sender = NULL;
  guint8 *frames[3] = { NULL, };
  guint rows = tomo_scan_get_height (scan), cols = tomo_scan_get_width (scan);
  guint n[3];
  const double *angles = tomo_scan_get_angles (scan);
  TomoDType dtype = tomo_scan_get_dtype (scan);
  gsize frame_bytes;
  gint64 start;
  guint64 sent = 0;

  if (dtype == TOMO_DTYPE_FLOAT64 || options->protocol == TOMO_LIVE_PROTOCOL_TOMOP)
    dtype = TOMO_DTYPE_FLOAT32;
  frame_bytes = (gsize) rows * cols * _tomo_dtype_size (dtype);
  n[TOMO_FRAME_PROJECTION] = tomo_scan_get_n_projections (scan);
  n[TOMO_FRAME_FLAT] = tomo_scan_get_n_flats (scan);
  n[TOMO_FRAME_DARK] = tomo_scan_get_n_darks (scan);
  for (guint k = 0; k < 3; k++)
    if (n[k] > 0 && (frames[k] = read_all_frames (scan, k, n[k], dtype, error)) == NULL)
      goto fail;

  sender = tomo_live_sender_new (url, options->protocol, options->request, options->timeout_ms, error);
  if (sender == NULL)
    goto fail;

  start = g_get_monotonic_time ();
  for (guint pass = 0; pass == 0 || options->loop; pass++)
    {
      static const TomoFrameKind order[3] = { TOMO_FRAME_DARK, TOMO_FRAME_FLAT, TOMO_FRAME_PROJECTION };

      if (!tomo_live_sender_send_geometry (sender, rows, cols, n[0], angles, n[TOMO_FRAME_DARK],
                                           n[TOMO_FRAME_FLAT], FALSE, error))
        goto fail;
      for (guint o = 0; o < 3; o++)
        {
          TomoFrameKind k = order[o];

          for (guint i = 0; i < n[k]; i++)
            {
              if (g_cancellable_set_error_if_cancelled (cancellable, error))
                goto fail;
              if (k == TOMO_FRAME_PROJECTION && options->rate > 0)
                {
                  gint64 due = start + (gint64) (sent / options->rate * 1e6);
                  gint64 now = g_get_monotonic_time ();

                  if (due > now)
                    g_usleep (due - now);
                }
              if (!tomo_live_sender_send_frame (sender, k, i, rows, cols, dtype,
                                                frames[k] + i * frame_bytes,
                                                k == TOMO_FRAME_PROJECTION,
                                                k == TOMO_FRAME_PROJECTION ? angles[i] * 180.0 / G_PI : 0,
                                                error))
                goto fail;
              if (k == TOMO_FRAME_PROJECTION)
                sent++;
            }
        }
      if (!tomo_live_sender_send_end (sender, error))
        goto fail;
    }

  for (guint k = 0; k < 3; k++)
    g_free (frames[k]);
  return TRUE;

fail:
  for (guint k = 0; k < 3; k++)
    g_free (frames[k]);
  return FALSE;
}
