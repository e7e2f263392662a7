/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Helpers the live tests share. */
#pragma once

#include <math.h>
#include <string.h>

#include "tomo-scan-private.h"

/* Largest difference relative to the largest value of the reference. */
static inline double
relative_difference (const float *reference,
                     const float *value,
                     gsize        n)
{
  double max_diff = 0, max_val = 0;

  for (gsize i = 0; i < n; i++)
    {
      max_diff = MAX (max_diff, fabs ((double) reference[i] - value[i]));
      max_val = MAX (max_val, fabs ((double) reference[i]));
    }
  return max_val > 0 ? max_diff / max_val : max_diff;
}

/* Every frame of `kind`, frame after frame (height × width floats each). */
static inline float *
read_frames (TomoScan      *file,
             TomoFrameKind  kind)
{
  g_autoptr(GError) error = NULL;
  guint w = tomo_scan_get_width (file), h = tomo_scan_get_height (file);
  guint n = kind == TOMO_FRAME_PROJECTION ? tomo_scan_get_n_projections (file)
            : kind == TOMO_FRAME_FLAT ? tomo_scan_get_n_flats (file) : tomo_scan_get_n_darks (file);
  g_autofree float *rows = g_new (float, (gsize) n * w);
  float *frames = g_new (float, (gsize) n * w * h);

  for (guint y = 0; y < h; y++)
    {
      g_assert_true (_tomo_scan_read_frames (file, kind, y, rows, &error));
      g_assert_no_error (error);
      for (guint i = 0; i < n; i++)
        memcpy (frames + ((gsize) i * h + y) * w, rows + (gsize) i * w, sizeof (float) * w);
    }
  return frames;
}

#include "tomo-live-receiver.h"
#include "tomo-live-sender.h"

/* Options of a receiver on loopback, the port the system's choice. */
static inline void
loopback_options (TomoLiveReceiverOptions *options,
                  TomoLiveProtocol         protocol)
{
  tomo_live_receiver_options_init (options);
  options->url = "tcp://127.0.0.1:*";
  options->protocol = protocol;
}

/* A receiver on loopback: PULL or REP, with a memory limit and, where not
 * 0, the number of projections a scan has. */
static inline TomoLiveReceiver *
loopback_receiver_new (TomoLiveProtocol protocol,
                       gboolean         reply,
                       gsize            max_memory,
                       guint            n_projections)
{
  g_autoptr(GError) error = NULL;
  TomoLiveReceiverOptions options;
  TomoLiveReceiver *rx;

  loopback_options (&options, protocol);
  options.reply = reply;
  options.max_memory = max_memory;
  if (n_projections != 0)
    options.n_projections = n_projections;
  rx = tomo_live_receiver_new (&options, &error);
  g_assert_no_error (error);
  return rx;
}

/* Geometry, darks and flats of `file`, as a TomoPackets sender starts a scan. */
static inline void
send_scan_header (TomoLiveSender *tx,
                  TomoScan       *file)
{
  g_autoptr(GError) error = NULL;
  guint w = tomo_scan_get_width (file), h = tomo_scan_get_height (file);
  g_autofree float *flats = read_frames (file, TOMO_FRAME_FLAT);
  g_autofree float *darks = read_frames (file, TOMO_FRAME_DARK);

  g_assert_true (tomo_live_sender_send_geometry (tx, h, w, tomo_scan_get_n_projections (file),
                                                 tomo_scan_get_angles (file), tomo_scan_get_n_darks (file),
                                                 tomo_scan_get_n_flats (file), FALSE, &error));
  for (guint i = 0; i < tomo_scan_get_n_darks (file); i++)
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_DARK, i, h, w, TOMO_DTYPE_FLOAT32,
                                                darks + (gsize) i * w * h, FALSE, 0, &error));
  for (guint i = 0; i < tomo_scan_get_n_flats (file); i++)
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_FLAT, i, h, w, TOMO_DTYPE_FLOAT32,
                                                flats + (gsize) i * w * h, FALSE, 0, &error));
  g_assert_no_error (error);
}

/* Projections [begin, end) of `proj` (from read_frames) with ids from `id0` + begin. */
static inline void
send_projections (TomoLiveSender *tx,
                  TomoScan       *file,
                  const float    *proj,
                  guint           begin,
                  guint           end,
                  guint           id0)
{
  g_autoptr(GError) error = NULL;
  guint w = tomo_scan_get_width (file), h = tomo_scan_get_height (file);

  for (guint i = begin; i < end; i++)
    g_assert_true (tomo_live_sender_send_frame (tx, TOMO_FRAME_PROJECTION, id0 + i, h, w, TOMO_DTYPE_FLOAT32,
                                                proj + (gsize) i * w * h, FALSE, 0, &error));
  g_assert_no_error (error);
}
