/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-live"

#include "config.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "tomo-live-receiver.h"

#define MAX_PARTS 4

struct _TomoLiveReceiver
{
  void            *ctx;
  void            *socket;
  char            *endpoint;
  TomoLiveProtocol protocol;
  gboolean         reply;
  gsize            max_memory;
  gint64           hold_wait_us;
  TomoLiveBudget  *budget;          /* shared by every scan it made */
  guint            json_n_projections;
  double          *json_angles_deg;
  double           angle_range_deg;

  GThread         *thread;
  gint             stop;

  GMutex           lock;            /* guards what follows */
  TomoLiveScan    *current;
  gboolean         current_announced;
  gboolean         have_settings;
  guint            settings_darks, settings_flats;
  gboolean         settings_linear;
  TomoLiveReceiverStats stats;
  char            *last_drop;
  GAsyncQueue     *complete;        /* TomoLiveScan refs, not yet taken */
  GPtrArray       *ended;           /* TomoLiveScan refs: ended scans others still hold, oldest first */
};

/* How long a frame that does not fit waits, by default, for an earlier
 * scan's holder (the viewer, within a few of its ticks) to let go, the
 * sender held back by ZeroMQ meanwhile, before that scan's frames are
 * released for it. */
#define HOLD_WAIT_US (2 * G_USEC_PER_SEC)
#define HOLD_POLL_US (10 * 1000)

/* A message may be a frame as large as the limit, plus its header (JSON,
 * or the TomoPackets fields); ZeroMQ refuses larger ones unread. */
#define HEADER_ROOM (64 * 1024)

void
tomo_live_receiver_options_init (TomoLiveReceiverOptions *options)
{
  memset (options, 0, sizeof *options);
  options->url = "tcp://*:5558";
  options->angle_range_deg = 180.0;
}

gsize
tomo_live_default_max_memory (void)
{
  long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);

  if (pages <= 0 || page <= 0)
    return (gsize) 4 << 30;
  return (gsize) pages * (gsize) page / 2;
}

char *
tomo_live_parse_url (const char       *url,
                     TomoLiveProtocol *protocol,
                     GError          **error)
{
  const char *plus = strstr (url, "://");
  const char *sep = strchr (url, '+');

  if (plus == NULL)
    {
      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_URL,
                   "“%s” is not a ZeroMQ address such as tcp://*:5558", url);
      return NULL;
    }
  if (sep != NULL && sep < plus)
    {
      g_autofree char *name = g_strndup (url, sep - url);

      if (!tomo_live_protocol_from_string (name, protocol, error))
        return NULL;
      return g_strdup (sep + 1);
    }
  return g_strdup (url);
}

static void
set_error_zmq (GError    **error,
               const char *what,
               const char *endpoint)
{
  g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_SOCKET,
               "Cannot %s %s: %s", what, endpoint, zmq_strerror (zmq_errno ()));
}

static void
drop_message (TomoLiveReceiver *self,
              TomoLiveDrop      why,
              char             *detail)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  /* Stopping (what still waited for memory): counted, not worth a word. */
  if (self->stats.n_dropped[why]++ == 0 && !g_atomic_int_get (&self->stop))
    g_message ("Dropped a message (%s): %s; further ones of this kind are only counted",
               tomo_live_drop_to_string (why), detail ? detail : "");
  self->stats.n_dropped_total++;
  g_free (self->last_drop);
  self->last_drop = g_strdup_printf ("%s: %s", tomo_live_drop_to_string (why), detail ? detail : "");
  g_free (detail);
}

static void
context_locked (TomoLiveReceiver *self,
                TomoLiveContext  *ctx)
{
  memset (ctx, 0, sizeof *ctx);
  ctx->max_frame_bytes = self->max_memory;
  ctx->n_projections = self->protocol == TOMO_LIVE_PROTOCOL_JSON ? self->json_n_projections : 0;
  if (self->current != NULL)
    {
      ctx->have_geometry = TRUE;
      ctx->rows = tomo_live_scan_get_rows (self->current);
      ctx->cols = tomo_live_scan_get_cols (self->current);
    }
}

/* The current scan receives nothing more; its memory goes once nobody
 * holds it (or to the scan after it, see make_room_locked()). */
static void
end_current_locked (TomoLiveReceiver *self)
{
  if (self->current == NULL)
    return;
  tomo_live_scan_mark_ended (self->current);
  g_ptr_array_add (self->ended, g_steal_pointer (&self->current));
}

/* Runs `func` on `scan` and lets go of it, dropping the lock meanwhile:
 * freeing a scan's frames may take a while (gigabytes), and the window's
 * ticks ask for the counters under the lock.  Only the receiving thread
 * changes what the lock guards, so nothing moves under it. */
static void
unref_scan_locked (TomoLiveReceiver *self,
                   TomoLiveScan     *scan,
                   gsize           (*func) (TomoLiveScan *),
                   gsize            *result)
{
  g_mutex_unlock (&self->lock);
  if (func != NULL)
    *result = func (scan);
  tomo_live_scan_unref (scan);
  g_mutex_lock (&self->lock);
}

/* Lets go of the ended scans nobody else holds: they are freed (the lock
 * dropped meanwhile, as by every caller of this). */
static void
prune_ended_locked (TomoLiveReceiver *self)
{
  for (guint i = self->ended->len; i-- > 0;)
    if (!tomo_live_scan_is_shared (g_ptr_array_index (self->ended, i)))
      unref_scan_locked (self, g_ptr_array_steal_index (self->ended, i), NULL, NULL);
}

static void
start_scan_locked (TomoLiveReceiver *self,
                   TomoLiveScan     *scan)
{
  end_current_locked (self);
  self->current = scan;
  self->current_announced = FALSE;
  self->stats.n_scans++;
  if (self->have_settings)
    tomo_live_scan_set_settings (scan, self->settings_darks, self->settings_flats, self->settings_linear);
}

static void
announce_if_complete_locked (TomoLiveReceiver *self)
{
  if (self->current != NULL && !self->current_announced && tomo_live_scan_is_complete (self->current))
    {
      self->current_announced = TRUE;
      g_async_queue_push (self->complete, tomo_live_scan_ref (self->current));
    }
}

/* Lets go of the complete scans nobody took, oldest first, until one is
 * freed: their memory is the budget's again.  FALSE when there were none
 * (whoever holds the others still counts). */
static gboolean
evict_complete_locked (TomoLiveReceiver *self)
{
  gsize used = tomo_live_budget_get_used (self->budget);
  TomoLiveScan *scan;

  while ((scan = g_async_queue_try_pop (self->complete)) != NULL)
    {
      tomo_live_scan_unref (scan);
      prune_ended_locked (self);
      if (tomo_live_budget_get_used (self->budget) < used)
        return TRUE;
    }
  return FALSE;
}

/* Memory for what did not fit, taken from the scans before the current
 * one: first the complete ones nobody took; then, while someone still holds
 * an ended scan, a wait of up to hold_wait_us from *deadline (0: starts it)
 * for them to let go, the lock released meanwhile; last the frames of the
 * oldest ended scan still held.  FALSE when nothing but the current scan
 * holds memory: what did not fit is dropped. */
static gboolean
make_room_locked (TomoLiveReceiver *self,
                  gint64           *deadline)
{
  gsize used;
  gboolean let_go = FALSE;

  if (evict_complete_locked (self))
    return TRUE;
  prune_ended_locked (self);
  if (self->ended->len == 0)
    return FALSE;

  if (*deadline == 0)
    {
      *deadline = g_get_monotonic_time () + self->hold_wait_us;
      self->stats.n_waits++;
    }
  used = tomo_live_budget_get_used (self->budget);
  self->stats.waiting = TRUE;
  while (!let_go && g_get_monotonic_time () < *deadline && !g_atomic_int_get (&self->stop))
    {
      g_mutex_unlock (&self->lock);
      g_usleep (HOLD_POLL_US);
      g_mutex_lock (&self->lock);
      prune_ended_locked (self);
      let_go = tomo_live_budget_get_used (self->budget) < used;
    }
  self->stats.waiting = FALSE;
  if (let_go)
    return TRUE;
  /* Stopping: whoever holds the scan keeps it whole (reconstruct --listen
   * reads the scan it took after the receiver is gone). */
  if (g_atomic_int_get (&self->stop))
    return FALSE;

  /* A released scan holds nothing charged: it is not waited for again. */
  while (self->ended->len > 0)
    {
      TomoLiveScan *scan = g_ptr_array_steal_index (self->ended, 0);
      gsize freed = 0;

      /* Let go of since the last look: freed whole, nothing released. */
      if (!tomo_live_scan_is_shared (scan))
        {
          unref_scan_locked (self, scan, NULL, NULL);
          return TRUE;
        }
      unref_scan_locked (self, scan, tomo_live_scan_release_frames, &freed);
      if (freed > 0)
        {
          if (self->stats.n_released++ == 0)
            g_message ("An earlier scan was still held after %.1f s: its frames were let go to receive "
                       "the next one within the memory limit (--max-memory)", self->hold_wait_us / 1e6);
          return TRUE;
        }
    }
  return FALSE;
}

/* A new scan, after making room where its slots need memory. */
static TomoLiveScan *
new_scan_locked (TomoLiveReceiver *self,
                 TomoLiveProtocol  protocol,
                 const TomoLiveMessage *m,
                 guint             n_projections,
                 const double     *angles_deg,
                 double            angle_range_deg,
                 GError          **error)
{
  TomoLiveScan *scan;
  gint64 deadline = 0;

  do
    {
      g_clear_error (error);
      scan = tomo_live_scan_new (protocol, m->rows, m->cols, n_projections, angles_deg, angle_range_deg,
                                 self->budget, error);
    }
  while (scan == NULL && make_room_locked (self, &deadline));
  return scan;
}

static void
handle (TomoLiveReceiver *self,
        const guint8    **parts,
        const gsize      *sizes,
        guint             n_parts)
{
  TomoLiveContext ctx;
  TomoLiveMessage m;
  TomoLiveDrop why;
  char *detail = NULL;
  gboolean ok;

  {
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
    context_locked (self, &ctx);
  }

  if (self->protocol == TOMO_LIVE_PROTOCOL_TOMOP)
    {
      if (n_parts != 1)
        {
          drop_message (self, TOMO_LIVE_DROP_PARTS,
                        g_strdup_printf ("TomoPackets message in %u parts", n_parts));
          return;
        }
      ok = tomo_live_parse_tomop (parts[0], sizes[0], &ctx, &m, &why, &detail);
    }
  else
    ok = tomo_live_parse_json (parts, sizes, n_parts, &ctx, &m, &why, &detail);
  if (!ok)
    {
      drop_message (self, why, detail);
      return;
    }

  g_mutex_lock (&self->lock);
  switch (m.type)
    {
    case TOMO_LIVE_MSG_GEOMETRY_SPEC:
      break;

    case TOMO_LIVE_MSG_SCAN_SETTINGS:
      self->have_settings = TRUE;
      self->settings_darks = m.n_darks;
      self->settings_flats = m.n_flats;
      self->settings_linear = m.already_linear;
      if (self->current != NULL)
        tomo_live_scan_set_settings (self->current, m.n_darks, m.n_flats, m.already_linear);
      break;

    case TOMO_LIVE_MSG_PARALLEL_GEOMETRY:
      {
        g_autofree double *deg = g_new (double, m.n_projections);

        for (guint i = 0; i < m.n_projections; i++)
          {
            guint32 v;
            float f;

            memcpy (&v, m.angles_rad + 4 * (gsize) i, 4);
            v = GUINT32_FROM_LE (v);
            memcpy (&f, &v, 4);
            deg[i] = (double) f * 180.0 / G_PI;
          }
        /* A sender that reconnects repeats the geometry: same scan. */
        if (self->current != NULL && !tomo_live_scan_is_complete (self->current) &&
            tomo_live_scan_same_geometry (self->current, m.rows, m.cols, m.n_projections, deg))
          self->stats.n_resumed++;
        else
          {
            g_autoptr(GError) error = NULL;
            TomoLiveScan *scan;

            end_current_locked (self);
            scan = new_scan_locked (self, TOMO_LIVE_PROTOCOL_TOMOP, &m, m.n_projections, deg, 180.0, &error);
            if (scan == NULL)
              {
                g_mutex_unlock (&self->lock);
                drop_message (self, TOMO_LIVE_DROP_MEMORY, g_strdup (error->message));
                return;
              }
            start_scan_locked (self, scan);
          }
      }
      break;

    case TOMO_LIVE_MSG_FRAME:
      {
        g_autoptr(GError) error = NULL;
        TomoLiveScan *scan = self->current;
        gint64 deadline = 0;
        gboolean added;

        if (scan == NULL)   /* JSON: the first frame opens a scan */
          {
            scan = new_scan_locked (self, TOMO_LIVE_PROTOCOL_JSON, &m, self->json_n_projections,
                                    self->json_angles_deg, self->angle_range_deg, &error);
            if (scan == NULL)
              {
                g_mutex_unlock (&self->lock);
                drop_message (self, TOMO_LIVE_DROP_MEMORY, g_strdup (error->message));
                return;
              }
            start_scan_locked (self, scan);
          }
        /* Earlier scans give way to the one arriving. */
        do
          {
            g_clear_error (&error);
            added = tomo_live_scan_add_frame (scan, &m, &error);
          }
        while (!added && g_error_matches (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_MEMORY) &&
               make_room_locked (self, &deadline));
        if (!added)
          {
            g_mutex_unlock (&self->lock);
            drop_message (self, TOMO_LIVE_DROP_MEMORY, g_strdup (error->message));
            return;
          }
      }
      break;

    case TOMO_LIVE_MSG_END:
      if (self->current != NULL)
        {
          tomo_live_scan_mark_ended (self->current);
          announce_if_complete_locked (self);
          end_current_locked (self);
        }
      break;
    }
  self->stats.n_accepted++;
  announce_if_complete_locked (self);
  g_mutex_unlock (&self->lock);
}

static gpointer
receive_thread (gpointer data)
{
  TomoLiveReceiver *self = data;
  zmq_msg_t msgs[MAX_PARTS];

  for (guint i = 0; i < MAX_PARTS; i++)
    zmq_msg_init (&msgs[i]);

  while (!g_atomic_int_get (&self->stop))
    {
      zmq_pollitem_t item = { self->socket, 0, ZMQ_POLLIN, 0 };
      const guint8 *parts[MAX_PARTS];
      gsize sizes[MAX_PARTS];
      guint n_parts = 0, n_kept = 0;
      gsize bytes = 0;
      int more = 1;

      /* Ended scans are freed as soon as the last holder lets go (only
       * this thread changes the list: no lock to look whether it is empty). */
      if (self->ended->len > 0)
        {
          g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
          prune_ended_locked (self);
        }
      if (zmq_poll (&item, 1, 50) <= 0 || !(item.revents & ZMQ_POLLIN))
        continue;

      /* A message is all its parts; more than MAX_PARTS are counted only. */
      while (more)
        {
          zmq_msg_t *msg = &msgs[MIN (n_kept, MAX_PARTS - 1)];

          if (zmq_msg_recv (msg, self->socket, 0) < 0)
            break;
          bytes += zmq_msg_size (msg);
          n_parts++;
          if (n_kept < MAX_PARTS)
            n_kept++;
          more = zmq_msg_more (msg);
        }
      if (n_parts == 0)
        continue;

      if (self->reply)
        {
          guint32 one = GUINT32_TO_LE (1);

          zmq_send (self->socket, &one, sizeof one, 0);
        }

      {
        g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
        self->stats.n_messages++;
        self->stats.bytes += bytes;
      }

      for (guint i = 0; i < n_kept; i++)
        {
          parts[i] = zmq_msg_data (&msgs[i]);
          sizes[i] = zmq_msg_size (&msgs[i]);
        }
      if (n_parts > n_kept)
        drop_message (self, TOMO_LIVE_DROP_PARTS, g_strdup_printf ("message of %u parts", n_parts));
      else
        handle (self, parts, sizes, n_parts);
    }

  for (guint i = 0; i < MAX_PARTS; i++)
    zmq_msg_close (&msgs[i]);
  return NULL;
}

TomoLiveReceiver *
tomo_live_receiver_new (const TomoLiveReceiverOptions *options,
                        GError                       **error)
{
  g_autoptr(TomoLiveReceiver) self = g_new0 (TomoLiveReceiver, 1);
  g_autofree char *endpoint = NULL;
  char last[256];
  size_t last_len = sizeof last;
  int zero = 0, hwm = 64;
  int64_t max_message;

  g_mutex_init (&self->lock);
  self->complete = g_async_queue_new_full ((GDestroyNotify) tomo_live_scan_unref);
  self->ended = g_ptr_array_new_with_free_func ((GDestroyNotify) tomo_live_scan_unref);
  self->protocol = options->protocol;
  endpoint = tomo_live_parse_url (options->url ? options->url : "tcp://*:5558", &self->protocol, error);
  if (endpoint == NULL)
    return NULL;
  self->reply = options->reply;
  self->max_memory = options->max_memory ? options->max_memory : tomo_live_default_max_memory ();
  self->hold_wait_us = options->hold_wait_us > 0 ? options->hold_wait_us : HOLD_WAIT_US;
  self->budget = tomo_live_budget_new (self->max_memory);
  self->json_n_projections = options->n_projections;
  if (options->angles_deg != NULL && options->n_projections > 0)
    self->json_angles_deg = g_memdup2 (options->angles_deg, sizeof (double) * options->n_projections);
  self->angle_range_deg = options->angle_range_deg > 0 ? options->angle_range_deg : 180.0;

  self->ctx = zmq_ctx_new ();
  self->socket = zmq_socket (self->ctx, self->reply ? ZMQ_REP : ZMQ_PULL);
  zmq_setsockopt (self->socket, ZMQ_LINGER, &zero, sizeof zero);
  /* A short queue: when the receiver falls behind the sender waits, nothing is dropped. */
  zmq_setsockopt (self->socket, ZMQ_RCVHWM, &hwm, sizeof hwm);
  /* Nothing larger than a frame can be kept is read into memory: ZeroMQ
   * closes the connection of a sender that tries (it reconnects). */
  max_message = (int64_t) MIN (self->max_memory, (gsize) G_MAXINT64 - HEADER_ROOM) + HEADER_ROOM;
  zmq_setsockopt (self->socket, ZMQ_MAXMSGSIZE, &max_message, sizeof max_message);
  if (zmq_bind (self->socket, endpoint) != 0)
    {
      set_error_zmq (error, "listen on", endpoint);
      return NULL;
    }
  if (zmq_getsockopt (self->socket, ZMQ_LAST_ENDPOINT, last, &last_len) == 0)
    self->endpoint = g_strndup (last, last_len);
  else
    self->endpoint = g_strdup (endpoint);

  self->thread = g_thread_try_new ("tomo-live-rx", receive_thread, self, error);
  if (self->thread == NULL)
    return NULL;
  return g_steal_pointer (&self);
}

void
tomo_live_receiver_free (TomoLiveReceiver *self)
{
  if (self == NULL)
    return;
  g_atomic_int_set (&self->stop, 1);
  if (self->thread != NULL)
    g_thread_join (self->thread);
  if (self->socket != NULL)
    zmq_close (self->socket);
  if (self->ctx != NULL)
    zmq_ctx_term (self->ctx);
  g_clear_pointer (&self->current, tomo_live_scan_unref);
  g_async_queue_unref (self->complete);
  g_clear_pointer (&self->ended, g_ptr_array_unref);
  if (self->budget != NULL)
    tomo_live_budget_unref (self->budget);
  g_free (self->last_drop);
  g_free (self->endpoint);
  g_free (self->json_angles_deg);
  g_mutex_clear (&self->lock);
  g_free (self);
}

const char *
tomo_live_receiver_get_endpoint (TomoLiveReceiver *self)
{
  return self->endpoint;
}

TomoLiveProtocol
tomo_live_receiver_get_protocol (TomoLiveReceiver *self)
{
  return self->protocol;
}

void
tomo_live_receiver_get_stats (TomoLiveReceiver      *self,
                              TomoLiveReceiverStats *stats)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  *stats = self->stats;
}

TomoLiveScan *
tomo_live_receiver_dup_current (TomoLiveReceiver *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return self->current ? tomo_live_scan_ref (self->current) : NULL;
}

char *
tomo_live_receiver_dup_last_drop (TomoLiveReceiver *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return g_strdup (self->last_drop);
}

TomoLiveScan *
tomo_live_receiver_wait_complete (TomoLiveReceiver *self,
                                  gint64            timeout_us,
                                  GError          **error)
{
  TomoLiveScan *scan;

  if (timeout_us < 0)
    return g_async_queue_pop (self->complete);
  scan = g_async_queue_timeout_pop (self->complete, timeout_us);
  if (scan == NULL)
    g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_TIMEOUT,
                 "No complete scan arrived on %s within %.1f s", self->endpoint, timeout_us / 1e6);
  return scan;
}
