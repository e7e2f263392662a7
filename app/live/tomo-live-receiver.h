/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-live-protocol.h"
#include "tomo-live-scan.h"

G_BEGIN_DECLS

/* Binds a ZeroMQ socket and receives in its own thread: PULL, or REP
 * answering every message with int32 1 before handling it.  The thread
 * only validates and copies; it never waits on a consumer, so a slow
 * viewer cannot make the sender lose data (ZeroMQ's queue pushes back on
 * the sender instead). */
typedef struct _TomoLiveReceiver TomoLiveReceiver;

typedef struct
{
  const char      *url;            /* tcp://HOST:PORT; a "json+" or "tomop+" prefix picks the protocol */
  TomoLiveProtocol protocol;
  gboolean         reply;          /* REP instead of PULL */
  gsize            max_memory;     /* 0: half the RAM; shared by every scan received, held or queued */
  gint64           hold_wait_us;   /* how long a frame waits for a held earlier scan; 0: 2 s */
  /* The geometry JSON frames do not carry (--projections, --angles, --angle-range). */
  guint            n_projections;
  const double    *angles_deg;
  double           angle_range_deg;
} TomoLiveReceiverOptions;

typedef struct
{
  guint64 n_messages;                     /* everything received, dropped included */
  guint64 n_accepted;
  guint64 n_dropped[TOMO_LIVE_N_DROPS];
  guint64 n_dropped_total;
  guint64 bytes;                          /* message bytes received */
  guint   n_scans;                        /* scans started */
  guint   n_resumed;                      /* geometry repeated by a reconnecting sender */
  guint   n_waits;                        /* messages that waited for an earlier scan's memory */
  guint   n_released;                     /* earlier scans whose frames were let go for them */
  gboolean waiting;                       /* a message waits for an earlier scan's memory now */
} TomoLiveReceiverStats;

void              tomo_live_receiver_options_init (TomoLiveReceiverOptions *options);
gsize             tomo_live_default_max_memory    (void);

TomoLiveReceiver *tomo_live_receiver_new          (const TomoLiveReceiverOptions *options,
                                                   GError                       **error);
void              tomo_live_receiver_free         (TomoLiveReceiver *self);
/* The address bound, with the port the system chose for "tcp://host:*". */
const char       *tomo_live_receiver_get_endpoint (TomoLiveReceiver *self);
TomoLiveProtocol  tomo_live_receiver_get_protocol (TomoLiveReceiver *self);
void              tomo_live_receiver_get_stats    (TomoLiveReceiver      *self,
                                                   TomoLiveReceiverStats *stats);
/* The scan being received now (NULL before the first frame/geometry). */
TomoLiveScan     *tomo_live_receiver_dup_current  (TomoLiveReceiver *self);
/* The next scan that became complete, oldest first; NULL and
 * TOMO_LIVE_ERROR_TIMEOUT after `timeout_us` (< 0: wait for ever).  The
 * complete scans not yet taken count toward the memory limit: when a new
 * frame needs their memory they are let go, oldest first (a receiver
 * nobody takes scans from keeps receiving). */
TomoLiveScan     *tomo_live_receiver_wait_complete (TomoLiveReceiver *self,
                                                    gint64            timeout_us,
                                                    GError          **error);
/* The last drop's explanation, for a status line. */
char             *tomo_live_receiver_dup_last_drop (TomoLiveReceiver *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoLiveReceiver, tomo_live_receiver_free)

/* Splits "json+tcp://…" into protocol and ZeroMQ endpoint. */
char             *tomo_live_parse_url             (const char       *url,
                                                   TomoLiveProtocol *protocol,
                                                   GError          **error);

G_END_DECLS
