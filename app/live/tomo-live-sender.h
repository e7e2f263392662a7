/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "tomo-live-protocol.h"
#include "tomo-scan.h"

G_BEGIN_DECLS

/* A live sender: connects PUSH (or REQ, waiting for each reply) and sends
 * messages in either protocol.  What `tomolive stream` and the tests use. */
typedef struct _TomoLiveSender TomoLiveSender;

TomoLiveSender *tomo_live_sender_new        (const char       *url,
                                             TomoLiveProtocol  protocol,
                                             gboolean          request,
                                             guint             timeout_ms,
                                             GError          **error);
void            tomo_live_sender_free       (TomoLiveSender *self);
/* JSON pixel frames are handed to ZeroMQ without a copy: the caller keeps
 * them unchanged until the sender is freed. */
void            tomo_live_sender_set_zero_copy (TomoLiveSender *self,
                                                gboolean        zero_copy);
/* One message of `n_parts` frames, as is (the tests send broken ones). */
gboolean        tomo_live_sender_send_parts (TomoLiveSender     *self,
                                             const void * const *parts,
                                             const gsize        *sizes,
                                             guint               n_parts,
                                             GError            **error);
gboolean        tomo_live_sender_send_bytes (TomoLiveSender *self,
                                             GBytes         *bytes,
                                             GError        **error);
/* TomoPackets: GeometrySpecification, ScanSettings, ParallelBeamGeometry.
 * JSON: nothing (the geometry travels with each frame). */
gboolean        tomo_live_sender_send_geometry (TomoLiveSender *self,
                                                guint           rows,
                                                guint           cols,
                                                guint           n_projections,
                                                const double   *angles_rad,
                                                guint           n_darks,
                                                guint           n_flats,
                                                gboolean        already_linear,
                                                GError        **error);
/* `pixels` are rows × cols of `dtype` (TomoPackets sends them as float32). */
gboolean        tomo_live_sender_send_frame (TomoLiveSender *self,
                                             int             kind,
                                             guint           id,
                                             guint           rows,
                                             guint           cols,
                                             TomoDType       dtype,
                                             const void     *pixels,
                                             gboolean        has_angle,
                                             double          angle_deg,
                                             GError        **error);
/* JSON: {"end": true}.  TomoPackets has no such message: nothing sent. */
gboolean        tomo_live_sender_send_end   (TomoLiveSender *self,
                                             GError        **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoLiveSender, tomo_live_sender_free)

typedef struct
{
  TomoLiveProtocol protocol;
  gboolean         request;       /* REQ instead of PUSH */
  double           rate;          /* projections per second, 0: as fast as possible */
  gboolean         loop;          /* again and again (next rotation / next scan) */
  guint            timeout_ms;    /* per message, 0: 30 s */
} TomoLiveStreamOptions;

/* Replays `scan` (darks, flats, then projections) as a live sender would. */
gboolean        tomo_live_stream_scan       (TomoScan                    *scan,
                                             const char                  *url,
                                             const TomoLiveStreamOptions *options,
                                             GCancellable                *cancellable,
                                             GError                     **error);

G_END_DECLS
