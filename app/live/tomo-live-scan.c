/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-live"

#include "config.h"

#include <math.h>
#include <string.h>


#include "tomo-error.h"
#include "tomo-live-scan.h"
#include "tomo-scan-private.h"

/* One received frame, in the dtype it came in. */
typedef struct
{
  TomoDType dtype;
  gsize     n_bytes;
  guint8    data[];
} Frame;

struct _TomoLiveBudget
{
  gatomicrefcount ref;
  GMutex          lock;
  gsize           limit;
  gsize           used;
};

TomoLiveBudget *
tomo_live_budget_new (gsize limit)
{
  TomoLiveBudget *self = g_new0 (TomoLiveBudget, 1);

  g_atomic_ref_count_init (&self->ref);
  g_mutex_init (&self->lock);
  self->limit = limit;
  return self;
}

TomoLiveBudget *
tomo_live_budget_ref (TomoLiveBudget *self)
{
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

void
tomo_live_budget_unref (TomoLiveBudget *self)
{
  if (!g_atomic_ref_count_dec (&self->ref))
    return;
  g_mutex_clear (&self->lock);
  g_free (self);
}

gsize
tomo_live_budget_get_limit (TomoLiveBudget *self)
{
  return self->limit;
}

gsize
tomo_live_budget_get_used (TomoLiveBudget *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return self->used;
}

/* Takes `add` bytes and gives back `release`, when the result stays
 * within the limit (`commit` FALSE: only asks). */
static gboolean
budget_charge (TomoLiveBudget *self,
               gsize           add,
               gsize           release,
               gboolean        commit)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  g_assert (release <= self->used);
  if (add > release && add - release > self->limit - MIN (self->used, self->limit))
    return FALSE;
  if (commit)
    self->used = self->used - release + add;
  return TRUE;
}

/* The bookkeeping of a projection slot: the frame pointer, its angle, the
 * generation, id and arrival time it was written at, the geometry's angle. */
#define PROJECTION_SLOT_BYTES (sizeof (gpointer) + 2 * sizeof (double) + sizeof (guint64) + sizeof (guint) + \
                               sizeof (gint64))

/* What `len` slots of `kind` take: arrays grow by doubling. */
static gsize
slot_bytes (int   kind,
            guint len)
{
  gsize capacity = 1;

  if (len == 0)
    return 0;
  while (capacity < len)
    capacity <<= 1;
  return capacity * (kind == TOMO_FRAME_PROJECTION ? PROJECTION_SLOT_BYTES : sizeof (gpointer));
}

struct _TomoLiveScan
{
  gatomicrefcount  ref;
  GMutex           lock;
  GCond            changed;         /* signalled when the generation moves */

  TomoLiveProtocol protocol;
  guint            rows;
  guint            cols;
  guint            n_projections;   /* 0: grows with the ids */
  double          *angles_deg;      /* from the geometry, or NULL */
  double           angle_range_deg;
  TomoLiveBudget  *budget;          /* bytes_held is charged to it */

  GPtrArray       *frames[3];       /* Frame* or NULL, by slot */
  Frame           *spare;           /* the last frame replaced, filled next */
  GArray          *frame_angles;    /* double per projection slot, NAN = none */
  GArray          *slot_seq;        /* guint64 per projection slot: generation when written */
  GArray          *slot_id;         /* guint per projection slot: the id last written */
  GArray          *slot_arrival;    /* gint64 per projection slot: monotonic µs */
  guint64          calibration;     /* generation of the last flat, dark or settings change */
  guint            n_present[3];
  guint            n_expected[3];
  gboolean         settings_seen;
  gboolean         already_linear;
  gboolean         ended;
  gboolean         released;        /* its frames were let go for the next scan */

  guint64          n_frames_received;
  guint64          n_duplicates;
  guint64          bytes_received;
  gsize            bytes_held;      /* frames and slots */
  guint64          generation;
  guint64          layout;          /* see tomo_live_scan_get_layout() */
  guint            max_id;          /* the highest projection id received */
};

TomoLiveScan *
tomo_live_scan_new (TomoLiveProtocol  protocol,
                    guint             rows,
                    guint             cols,
                    guint             n_projections,
                    const double     *angles_deg,
                    double            angle_range_deg,
                    TomoLiveBudget   *budget,
                    GError          **error)
{
  TomoLiveScan *self;
  gsize fixed = slot_bytes (TOMO_FRAME_PROJECTION, n_projections);

  /* A geometry of many projections costs its slots before any frame. */
  if (!budget_charge (budget, fixed, 0, TRUE))
    {
      g_autofree char *size = g_format_size (fixed);
      g_autofree char *limit = g_format_size (budget->limit);

      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_MEMORY,
                   "Live scan of %u projections: their slots take %s, past the memory limit of %s "
                   "(--max-memory) with what is held", n_projections, size, limit);
      return NULL;
    }
  self = g_new0 (TomoLiveScan, 1);
  self->budget = tomo_live_budget_ref (budget);
  self->bytes_held = fixed;
  g_atomic_ref_count_init (&self->ref);
  g_mutex_init (&self->lock);
  g_cond_init (&self->changed);
  self->protocol = protocol;
  self->rows = rows;
  self->cols = cols;
  self->n_projections = n_projections;
  if (angles_deg != NULL && n_projections > 0)
    self->angles_deg = g_memdup2 (angles_deg, sizeof (double) * n_projections);
  self->angle_range_deg = angle_range_deg > 0 && isfinite (angle_range_deg) ? angle_range_deg : 180.0;
  for (guint k = 0; k < 3; k++)
    {
      self->frames[k] = g_ptr_array_new_with_free_func (g_free);
      if (k == TOMO_FRAME_PROJECTION && n_projections > 0)
        g_ptr_array_set_size (self->frames[k], n_projections);
    }
  self->frame_angles = g_array_new (FALSE, FALSE, sizeof (double));
  self->slot_seq = g_array_new (FALSE, TRUE, sizeof (guint64));
  self->slot_id = g_array_new (FALSE, TRUE, sizeof (guint));
  self->slot_arrival = g_array_new (FALSE, TRUE, sizeof (gint64));
  self->n_expected[TOMO_FRAME_PROJECTION] = n_projections;
  return self;
}

TomoLiveScan *
tomo_live_scan_ref (TomoLiveScan *self)
{
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

gboolean
tomo_live_scan_is_shared (TomoLiveScan *self)
{
  return !g_atomic_ref_count_compare (&self->ref, 1);
}

void
tomo_live_scan_unref (TomoLiveScan *self)
{
  if (!g_atomic_ref_count_dec (&self->ref))
    return;
  for (guint k = 0; k < 3; k++)
    g_ptr_array_unref (self->frames[k]);
  g_array_unref (self->frame_angles);
  g_array_unref (self->slot_seq);
  g_array_unref (self->slot_id);
  g_array_unref (self->slot_arrival);
  g_free (self->spare);
  g_free (self->angles_deg);
  budget_charge (self->budget, 0, self->bytes_held, TRUE);
  tomo_live_budget_unref (self->budget);
  g_cond_clear (&self->changed);
  g_mutex_clear (&self->lock);
  g_free (self);
}

guint
tomo_live_scan_get_rows (TomoLiveScan *self)
{
  return self->rows;
}

guint
tomo_live_scan_get_cols (TomoLiveScan *self)
{
  return self->cols;
}

gboolean
tomo_live_scan_same_geometry (TomoLiveScan *self,
                              guint         rows,
                              guint         cols,
                              guint         n_projections,
                              const double *angles_deg)
{
  if (rows != self->rows || cols != self->cols || n_projections != self->n_projections)
    return FALSE;
  if ((angles_deg == NULL) != (self->angles_deg == NULL))
    return FALSE;
  return angles_deg == NULL ||
         memcmp (angles_deg, self->angles_deg, sizeof (double) * n_projections) == 0;
}

/* How many frames of `kind` a TomoScan of this scan has: the ones
 * announced, or the slots made, whichever is more.  No flats: the data
 * is normalised already. */
static guint
n_frames_locked (TomoLiveScan  *self,
                 TomoFrameKind  kind)
{
  return MAX (self->n_expected[kind], self->frames[kind]->len);
}

void
tomo_live_scan_set_settings (TomoLiveScan *self,
                             guint         n_darks,
                             guint         n_flats,
                             gboolean      already_linear)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  already_linear = already_linear != FALSE;
  if (MAX (n_darks, self->frames[TOMO_FRAME_DARK]->len) !=
        n_frames_locked (self, TOMO_FRAME_DARK) ||
      MAX (n_flats, self->frames[TOMO_FRAME_FLAT]->len) !=
        n_frames_locked (self, TOMO_FRAME_FLAT) ||
      already_linear != self->already_linear)
    self->layout++;
  self->settings_seen = TRUE;
  self->n_expected[TOMO_FRAME_DARK] = n_darks;
  self->n_expected[TOMO_FRAME_FLAT] = n_flats;
  self->already_linear = already_linear;
  self->calibration = ++self->generation;
  g_cond_broadcast (&self->changed);
}

/* The slot of message `m`, the frame it replaces (NULL) and what the
 * budget takes and gives back for it (the frame, and the slots it adds).
 * Called with the lock held. */
static void
frame_slot_locked (TomoLiveScan          *self,
                   const TomoLiveMessage *m,
                   guint                 *slot,
                   Frame                **old,
                   gsize                 *add,
                   gsize                 *release)
{
  GPtrArray *slots = self->frames[m->kind];

  *slot = m->id;
  /* Ids past the count are the next rotation: same angle, last one wins. */
  if (m->kind == TOMO_FRAME_PROJECTION && self->n_projections > 0)
    *slot = m->id % self->n_projections;
  *old = *slot < slots->len ? g_ptr_array_index (slots, *slot) : NULL;
  *add = m->n_bytes;
  *release = *old ? (*old)->n_bytes : 0;
  if (*slot >= slots->len && !(m->kind == TOMO_FRAME_PROJECTION && self->n_projections > 0))
    *add += slot_bytes (m->kind, *slot + 1) - slot_bytes (m->kind, slots->len);
}

/* Degrees: the frame's own angle, else the geometry's, else evenly spaced. */
static double
slot_angle_locked (TomoLiveScan *self,
                   guint         slot)
{
  double a = slot < self->frame_angles->len ? g_array_index (self->frame_angles, double, slot) : NAN;
  guint n = self->n_projections > 0 ? self->n_projections : MAX (self->frames[TOMO_FRAME_PROJECTION]->len, 1);

  if (isnan (a))
    a = self->angles_deg != NULL && slot < self->n_projections ? self->angles_deg[slot]
                                                                : self->angle_range_deg * slot / n;
  return a;
}

static gboolean
charge_locked (TomoLiveScan          *self,
               const TomoLiveMessage *m,
               gsize                  add,
               gsize                  release,
               gboolean               commit,
               GError               **error)
{
  if (!budget_charge (self->budget, add, release, commit))
    {
      g_autofree char *held = g_format_size (tomo_live_budget_get_used (self->budget));
      g_autofree char *size = g_format_size (add);
      g_autofree char *limit = g_format_size (self->budget->limit);

      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_MEMORY,
                   "Live scan: %s held, frame %u (%s with its slots) would pass the memory limit of %s "
                   "(--max-memory)", held, m->id, size, limit);
      return FALSE;
    }
  if (commit)
    self->bytes_held = self->bytes_held - release + add;
  return TRUE;
}

gboolean
tomo_live_scan_add_frame (TomoLiveScan          *self,
                          const TomoLiveMessage *m,
                          GError               **error)
{
  g_autofree Frame *frame = NULL;
  g_autofree Frame *dropped = NULL;
  g_autoptr(GMutexLocker) locker = NULL;   /* released before the frees above */
  GPtrArray *slots;
  Frame *old;
  guint slot;
  gsize add, release;

  g_return_val_if_fail (m->type == TOMO_LIVE_MSG_FRAME, FALSE);
  g_return_val_if_fail (m->kind >= 0 && m->kind < 3, FALSE);

  /* The pixels are copied outside the lock, into the frame that the last
   * replacement let go when it has this size (a steady stream allocates
   * nothing and faults no pages; the limit holds one frame more than it
   * counts): a preview reading rows does not wait for megabytes to be
   * copied.  The limit is checked before the copy and again after it. */
  locker = g_mutex_locker_new (&self->lock);
  frame_slot_locked (self, m, &slot, &old, &add, &release);
  if (!charge_locked (self, m, add, release, FALSE, error))
    return FALSE;
  if (self->spare != NULL && self->spare->n_bytes == m->n_bytes)
    frame = g_steal_pointer (&self->spare);
  g_clear_pointer (&locker, g_mutex_locker_free);
  if (frame == NULL)
    frame = g_malloc (sizeof (Frame) + m->n_bytes);
  frame->dtype = m->dtype;
  frame->n_bytes = m->n_bytes;
  memcpy (frame->data, m->pixels, m->n_bytes);

  locker = g_mutex_locker_new (&self->lock);
  frame_slot_locked (self, m, &slot, &old, &add, &release);
  if (!charge_locked (self, m, add, release, TRUE, error))
    return FALSE;
  slots = self->frames[m->kind];

  if (slot >= slots->len)
    {
      /* More slots than a TomoScan made before knows of. */
      if (m->kind == TOMO_FRAME_PROJECTION || slot >= self->n_expected[m->kind])
        self->layout++;
      g_ptr_array_set_size (slots, slot + 1);
    }
  if (old != NULL)
    self->n_duplicates++;
  else
    self->n_present[m->kind]++;
  /* The replaced frame is the next one's memory, or freed after the lock. */
  if (old != NULL && self->spare == NULL && !self->ended)
    self->spare = old;
  else
    dropped = old;
  slots->pdata[slot] = g_steal_pointer (&frame);
  self->bytes_received += m->n_bytes;
  self->n_frames_received++;

  self->generation++;
  if (m->kind == TOMO_FRAME_PROJECTION)
    {
      double nan = NAN;
      double *angle;

      while (self->frame_angles->len <= slot)
        g_array_append_val (self->frame_angles, nan);
      angle = &g_array_index (self->frame_angles, double, slot);
      /* A frame's own angle that differs from the one a scan made before
       * uses for the slot. */
      {
        double before = slot_angle_locked (self, slot);

        *angle = m->has_angle ? m->angle_deg : NAN;
        if (slot_angle_locked (self, slot) != before)
          self->layout++;
      }
      if (self->slot_seq->len <= slot)
        {
          g_array_set_size (self->slot_seq, slot + 1);
          g_array_set_size (self->slot_id, slot + 1);
          g_array_set_size (self->slot_arrival, slot + 1);
        }
      g_array_index (self->slot_seq, guint64, slot) = self->generation;
      g_array_index (self->slot_id, guint, slot) = m->id;
      g_array_index (self->slot_arrival, gint64, slot) = g_get_monotonic_time ();
      self->max_id = MAX (self->max_id, m->id);
    }
  else
    self->calibration = self->generation;
  g_cond_broadcast (&self->changed);
  return TRUE;
}

void
tomo_live_scan_mark_ended (TomoLiveScan *self)
{
  g_autofree Frame *spare = NULL;
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  spare = g_steal_pointer (&self->spare);
  self->ended = TRUE;
  self->generation++;
  g_cond_broadcast (&self->changed);
}

gsize
tomo_live_scan_release_frames (TomoLiveScan *self)
{
  GPtrArray *frames[3] = { NULL, };
  gsize freed;

  {
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

    if (!self->ended || self->released)
      return 0;
    self->released = TRUE;
    /* The frames and the slots' bookkeeping: everything charged, so that
     * holders who keep the scan keep nothing the next one needs. */
    for (guint k = 0; k < 3; k++)
      {
        frames[k] = g_steal_pointer (&self->frames[k]);
        self->frames[k] = g_ptr_array_new_with_free_func (g_free);
      }
    g_array_set_size (self->frame_angles, 0);
    g_array_set_size (self->slot_seq, 0);
    g_array_set_size (self->slot_id, 0);
    g_array_set_size (self->slot_arrival, 0);
    freed = self->bytes_held;
    budget_charge (self->budget, 0, freed, TRUE);
    self->bytes_held = 0;
  }
  /* The frames are freed outside the lock. */
  for (guint k = 0; k < 3; k++)
    g_ptr_array_unref (frames[k]);
  return freed;
}

gboolean
tomo_live_scan_wait_generation (TomoLiveScan *self,
                                guint64       since,
                                gint64        until)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  while (self->generation == since)
    if (!g_cond_wait_until (&self->changed, &self->lock, until))
      break;
  return self->generation != since;
}

static gboolean
is_complete_locked (TomoLiveScan *self)
{
  if (self->protocol == TOMO_LIVE_PROTOCOL_JSON)
    return self->ended && self->n_present[TOMO_FRAME_PROJECTION] > 0;
  return self->n_present[TOMO_FRAME_PROJECTION] == self->n_projections &&
         self->n_present[TOMO_FRAME_DARK] >= self->n_expected[TOMO_FRAME_DARK] &&
         self->n_present[TOMO_FRAME_FLAT] >= self->n_expected[TOMO_FRAME_FLAT];
}

gboolean
tomo_live_scan_is_complete (TomoLiveScan *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return is_complete_locked (self);
}

void
tomo_live_scan_get_info (TomoLiveScan     *self,
                         TomoLiveScanInfo *info)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  for (guint k = 0; k < 3; k++)
    {
      info->n_present[k] = self->n_present[k];
      info->n_expected[k] = self->n_expected[k];
    }
  info->n_frames_received = self->n_frames_received;
  info->n_duplicates = self->n_duplicates;
  info->bytes_received = self->bytes_received;
  info->bytes_held = self->bytes_held;
  info->released = self->released;
  info->complete = is_complete_locked (self);
  info->n_gaps = 0;
  info->first_gap = 0;
  info->rotation = self->n_projections > 0 ? self->max_id / self->n_projections : 0;
  info->n_in_rotation = 0;
  for (guint i = 0; i < self->slot_id->len; i++)
    if (g_ptr_array_index (self->frames[TOMO_FRAME_PROJECTION], i) != NULL &&
        (self->n_projections == 0 || g_array_index (self->slot_id, guint, i) / self->n_projections == info->rotation))
      info->n_in_rotation++;
  {
    GPtrArray *proj = self->frames[TOMO_FRAME_PROJECTION];
    guint top = proj->len;

    while (top > 0 && g_ptr_array_index (proj, top - 1) == NULL)
      top--;
    for (guint i = top; i-- > 0;)
      if (g_ptr_array_index (proj, i) == NULL)
        {
          info->n_gaps++;
          info->first_gap = i;
        }
  }
}

guint8 *
tomo_live_scan_dup_present (TomoLiveScan *self,
                            guint        *n_projections)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  GPtrArray *slots = self->frames[TOMO_FRAME_PROJECTION];
  guint8 *present = g_new0 (guint8, MAX (slots->len, 1));

  for (guint i = 0; i < slots->len; i++)
    present[i] = g_ptr_array_index (slots, i) != NULL;
  *n_projections = slots->len;
  return present;
}

guint64
tomo_live_scan_get_generation (TomoLiveScan *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return self->generation;
}

guint64
tomo_live_scan_get_layout (TomoLiveScan *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return self->layout;
}

guint
tomo_live_scan_collect_changed (TomoLiveScan *self,
                                guint64       since,
                                guint64      *now,
                                guint64      *calibration,
                                GArray       *slots,
                                GArray       *ids,
                                GArray       *arrivals)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  guint n = 0;

  for (guint i = 0; i < self->slot_seq->len; i++)
    if (g_array_index (self->slot_seq, guint64, i) > since)
      {
        g_array_append_val (slots, i);
        g_array_append_val (ids, g_array_index (self->slot_id, guint, i));
        g_array_append_val (arrivals, g_array_index (self->slot_arrival, gint64, i));
        n++;
      }
  *now = self->generation;
  *calibration = self->calibration;
  return n;
}

guint
tomo_live_scan_get_n_projections (TomoLiveScan *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return self->n_projections > 0 ? self->n_projections : self->frames[TOMO_FRAME_PROJECTION]->len;
}

double
tomo_live_scan_get_angle (TomoLiveScan *self,
                          guint         slot)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return slot_angle_locked (self, slot) * G_PI / 180.0;
}

static gboolean mean_row_locked (TomoLiveScan *self, TomoFrameKind kind, guint row, float *out, float *tmp);
static void frame_row (const Frame *f, guint cols, guint row, float *out);

gboolean
tomo_live_scan_read_row (TomoLiveScan *self,
                         guint         row,
                         const guint  *slots,
                         guint         n,
                         float        *out,
                         float        *flat,
                         float        *dark,
                         gboolean     *normalise,
                         gboolean     *apply_log)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autofree float *tmp = g_new (float, self->cols);
  GPtrArray *proj = self->frames[TOMO_FRAME_PROJECTION];

  if (row >= self->rows)
    return FALSE;
  *normalise = mean_row_locked (self, TOMO_FRAME_FLAT, row, flat, tmp);
  if (!mean_row_locked (self, TOMO_FRAME_DARK, row, dark, tmp))
    memset (dark, 0, sizeof (float) * self->cols);
  *apply_log = !self->already_linear;
  for (guint i = 0; i < n; i++)
    {
      const Frame *f = slots[i] < proj->len ? g_ptr_array_index (proj, slots[i]) : NULL;

      float *dst = out + (gsize) i * self->cols;

      if (f != NULL)
        frame_row (f, self->cols, row, dst);
      /* A zero line integral, as a missing projection reads in a TomoScan
       * (fill_row_locked()): the flat, or the dark for line integrals. */
      else if (*normalise)
        memcpy (dst, *apply_log ? flat : dark, sizeof (float) * self->cols);
      else
        for (guint x = 0; x < self->cols; x++)
          dst[x] = *apply_log ? 1.0f : 0.0f;
    }
  return TRUE;
}

guint8 *
tomo_live_scan_dup_frame (TomoLiveScan  *self,
                          int            kind,
                          guint          slot,
                          TomoDType     *dtype,
                          gsize         *n_bytes)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  const Frame *f = slot < self->frames[kind]->len ? g_ptr_array_index (self->frames[kind], slot) : NULL;

  if (f == NULL)
    return NULL;
  *dtype = f->dtype;
  *n_bytes = f->n_bytes;
  return g_memdup2 (f->data, f->n_bytes);
}

guint
tomo_live_scan_get_n_slots (TomoLiveScan *self,
                            int           kind)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return self->frames[kind]->len;
}

/* --- the loader a TomoScan reads through --------------------------------- */

typedef struct
{
  TomoScanLoader parent;
  TomoLiveScan  *live;
} LiveLoader;

static void
frame_row (const Frame *f,
           guint        cols,
           guint        row,
           float       *out)
{
  gsize elem = _tomo_dtype_size (f->dtype);

  _tomo_convert_to_float (f->data + (gsize) row * cols * elem, f->dtype,
                          G_BYTE_ORDER != G_LITTLE_ENDIAN, cols, out);
}

/* Mean of row `row` of the frames of `kind` present, or FALSE when none. */
static gboolean
mean_row_locked (TomoLiveScan  *self,
                 TomoFrameKind  kind,
                 guint          row,
                 float         *out,
                 float         *tmp)
{
  GPtrArray *slots = self->frames[kind];
  guint n = 0;

  memset (out, 0, sizeof (float) * self->cols);
  for (guint i = 0; i < slots->len; i++)
    {
      const Frame *f = g_ptr_array_index (slots, i);

      if (f == NULL)
        continue;
      frame_row (f, self->cols, row, tmp);
      for (guint x = 0; x < self->cols; x++)
        out[x] += tmp[x];
      n++;
    }
  for (guint x = 0; n > 0 && x < self->cols; x++)
    out[x] /= n;
  return n > 0;
}

/* Row `row` of what a missing frame of `kind` reads as: a missing
 * projection as a zero line integral (the flat; 1 for data normalised
 * already, which has none; for data that came as line integrals, the dark
 * where there are flats to normalise by, else 0), a missing flat or dark as
 * the mean of those present (a flat none of which came: the darks'
 * maximum + 1, and a projection the same, so that it still reads as 0). */
static void
fill_row_locked (TomoLiveScan  *self,
                 TomoFrameKind  kind,
                 guint          row,
                 float         *fill,
                 float         *tmp)
{
  TomoFrameKind source = kind == TOMO_FRAME_PROJECTION ? TOMO_FRAME_FLAT : kind;
  float dark_max = 0.0f;

  if (kind == TOMO_FRAME_PROJECTION && self->already_linear)
    {
      if (self->n_present[TOMO_FRAME_FLAT] == 0 || !mean_row_locked (self, TOMO_FRAME_DARK, row, fill, tmp))
        memset (fill, 0, sizeof (float) * self->cols);
      return;
    }

  if (mean_row_locked (self, source, row, fill, tmp))
    return;
  if (kind == TOMO_FRAME_PROJECTION &&
      n_frames_locked (self, TOMO_FRAME_FLAT) == 0)
    {
      /* Normalised already (tomo_live_scan_create_scan()): the darks are not read. */
      for (guint x = 0; x < self->cols; x++)
        fill[x] = 1.0f;
      return;
    }
  if (kind != TOMO_FRAME_DARK && mean_row_locked (self, TOMO_FRAME_DARK, row, tmp, fill))
    for (guint x = 0; x < self->cols; x++)
      dark_max = MAX (dark_max, tmp[x]);
  for (guint x = 0; x < self->cols; x++)
    fill[x] = kind == TOMO_FRAME_DARK ? 0.0f : dark_max + 1.0f;
}

float *
tomo_live_scan_dup_gap_frame (TomoLiveScan *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autofree float *tmp = g_new (float, self->cols);
  float *frame = g_new (float, (gsize) self->rows * self->cols);

  for (guint y = 0; y < self->rows; y++)
    fill_row_locked (self, TOMO_FRAME_PROJECTION, y, frame + (gsize) y * self->cols, tmp);
  return frame;
}

void
tomo_live_scan_get_state (TomoLiveScan *self,
                          gboolean     *normalised,
                          gboolean     *already_linear)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  /* As tomo_live_scan_create_scan() decides. */
  *normalised = n_frames_locked (self, TOMO_FRAME_FLAT) == 0;
  *already_linear = self->already_linear;
}

static void
set_released_error (TomoLiveScan *self,
                    GError      **error)
{
  g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_MEMORY,
               "Live %s scan: its frames were let go to receive the next scan within the memory "
               "limit (--max-memory)", tomo_live_protocol_to_string (self->protocol));
}

static gboolean
live_read_rows (TomoScanLoader *loader,
                TomoFrameKind   kind,
                guint           row,
                float          *out,
                GError        **error)
{
  TomoLiveScan *self = ((LiveLoader *) loader)->live;
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  GPtrArray *slots = self->frames[kind];
  guint cols = self->cols;
  g_autofree float *fill = NULL;
  g_autofree float *tmp = NULL;

  if (self->released)
    {
      set_released_error (self, error);
      return FALSE;
    }
  for (guint i = 0; i < loader->n_frames[kind]; i++)
    {
      const Frame *f = i < slots->len ? g_ptr_array_index (slots, i) : NULL;
      float *dst = out + (gsize) i * cols;

      if (f != NULL)
        {
          frame_row (f, cols, row, dst);
          continue;
        }
      if (fill == NULL)
        {
          fill = g_new (float, cols);
          tmp = g_new (float, cols);
          fill_row_locked (self, kind, row, fill, tmp);
        }
      memcpy (dst, fill, sizeof (float) * cols);
    }
  return TRUE;
}

static void
live_loader_free (TomoScanLoader *loader)
{
  tomo_live_scan_unref (((LiveLoader *) loader)->live);
  g_free (loader);
}

static const TomoScanLoaderClass live_loader_class = {
  .name = "live",
  .read_rows = live_read_rows,
  .free = live_loader_free,
};

TomoScan *
tomo_live_scan_create_scan (TomoLiveScan *self,
                            GError      **error)
{
  LiveLoader *loader;
  TomoOpenOptions options;
  gboolean released;
  guint n_proj;

  tomo_open_options_init (&options);
  loader = _tomo_scan_loader_new (sizeof (LiveLoader), &live_loader_class, TOMO_SCAN_FORMAT_AUTO,
                                  NULL);
  loader->live = tomo_live_scan_ref (self);

  {
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
    gboolean any_angle;

    released = self->released;
    n_proj = self->n_projections > 0 ? self->n_projections : self->frames[TOMO_FRAME_PROJECTION]->len;
    loader->parent.path = g_strdup_printf ("live %s scan", tomo_live_protocol_to_string (self->protocol));
    loader->parent.width = self->cols;
    loader->parent.height = self->rows;
    loader->parent.n_frames[TOMO_FRAME_PROJECTION] = n_proj;
    for (guint k = TOMO_FRAME_FLAT; k <= TOMO_FRAME_DARK; k++)
      loader->parent.n_frames[k] = n_frames_locked (self, k);
    loader->parent.dtype = TOMO_DTYPE_FLOAT32;
    {
      const Frame *first = NULL;

      for (guint i = 0; first == NULL && i < self->frames[TOMO_FRAME_PROJECTION]->len; i++)
        first = g_ptr_array_index (self->frames[TOMO_FRAME_PROJECTION], i);
      if (first != NULL)
        loader->parent.dtype = first->dtype;
    }
    loader->parent.source[TOMO_FRAME_PROJECTION] = g_strdup ("projections received");
    loader->parent.source[TOMO_FRAME_FLAT] = g_strdup ("flats received");
    loader->parent.source[TOMO_FRAME_DARK] = g_strdup ("darks received");

    /* Angles a frame carried win over the geometry's; a gap takes the
     * geometry's, or its place in evenly spaced angles. */
    any_angle = FALSE;
    for (guint i = 0; i < MIN (n_proj, self->frame_angles->len); i++)
      if (!isnan (g_array_index (self->frame_angles, double, i)))
        any_angle = TRUE;
    if (n_proj > 0 && (any_angle || self->angles_deg != NULL))
      {
        loader->parent.angles_deg = g_new (double, n_proj);
        for (guint i = 0; i < n_proj; i++)
          loader->parent.angles_deg[i] = slot_angle_locked (self, i);
      }
    options.angle_range_deg = self->angle_range_deg;
    options.already_linear = self->already_linear;
    /* No flats announced or received: the data is already normalised. */
    options.already_sinogram = loader->parent.n_frames[TOMO_FRAME_FLAT] == 0;
  }

  if (released)
    {
      set_released_error (self, error);
      _tomo_scan_loader_free (&loader->parent);
      return NULL;
    }
  if (n_proj == 0)
    {
      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_INCOMPLETE,
                   "Live %s scan: no projection has arrived yet",
                   tomo_live_protocol_to_string (self->protocol));
      _tomo_scan_loader_free (&loader->parent);
      return NULL;
    }
  return _tomo_scan_new_from_loader (&loader->parent, &options, error);
}

void
tomo_live_scan_refresh (TomoLiveScan *self,
                        TomoScan     *scan)
{
  _tomo_scan_invalidate (scan);
}
