/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-live-protocol.h"
#include "tomo-scan.h"

G_BEGIN_DECLS

/* A scan being received: frames kept as they came (their own dtype), in
 * slots by id.  Thread-safe; reference counted.  A TomoScan made from it
 * reads the live data: a missing projection reads as the flat field (so it
 * adds nothing to a reconstruction), a missing flat or dark as the mean of
 * those present. */
typedef struct _TomoLiveScan TomoLiveScan;

/* The memory limit (--max-memory) that the scans of one receiver share:
 * every frame a scan holds and the bookkeeping of its slots count until
 * the scan is freed, whoever holds it.  Thread-safe; reference counted. */
typedef struct _TomoLiveBudget TomoLiveBudget;

TomoLiveBudget *tomo_live_budget_new       (gsize           limit);
TomoLiveBudget *tomo_live_budget_ref       (TomoLiveBudget *self);
void            tomo_live_budget_unref     (TomoLiveBudget *self);
gsize           tomo_live_budget_get_limit (TomoLiveBudget *self);
gsize           tomo_live_budget_get_used  (TomoLiveBudget *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoLiveBudget, tomo_live_budget_unref)

typedef struct
{
  guint   n_present[3];        /* by TomoFrameKind */
  guint   n_expected[3];       /* 0 where not announced */
  guint64 n_frames_received;   /* accepted frames, duplicates included */
  guint64 n_duplicates;        /* accepted frames that replaced an earlier one */
  guint64 bytes_received;      /* pixel bytes accepted */
  gsize   bytes_held;          /* frames and slot bookkeeping, counted in the budget */
  guint   n_gaps;              /* projection slots missing below the highest one received */
  guint   first_gap;           /* the first of them (valid when n_gaps > 0) */
  gboolean complete;
  gboolean released;           /* tomo_live_scan_release_frames() let its frames go */
  /* A scan of known size: the rotation of the highest projection id
   * (id / N; 0 while the first one arrives) and how many slots hold a
   * projection of that rotation. */
  guint   rotation;
  guint   n_in_rotation;
} TomoLiveScanInfo;

TomoLiveScan *tomo_live_scan_new          (TomoLiveProtocol  protocol,
                                           guint             rows,
                                           guint             cols,
                                           guint             n_projections, /* 0: grows */
                                           const double     *angles_deg,    /* or NULL */
                                           double            angle_range_deg,
                                           TomoLiveBudget   *budget,
                                           GError          **error);
TomoLiveScan *tomo_live_scan_ref          (TomoLiveScan *self);
void          tomo_live_scan_unref        (TomoLiveScan *self);
/* Whether anyone but the caller's one reference holds it: reliable for a
 * caller whose reference nobody can copy (no new reference can appear at a
 * count of one). */
gboolean      tomo_live_scan_is_shared    (TomoLiveScan *self);

guint         tomo_live_scan_get_rows     (TomoLiveScan *self);
guint         tomo_live_scan_get_cols     (TomoLiveScan *self);
/* Same geometry as another announcement (a sender that reconnects). */
gboolean      tomo_live_scan_same_geometry (TomoLiveScan *self,
                                            guint         rows,
                                            guint         cols,
                                            guint         n_projections,
                                            const double *angles_deg);

void          tomo_live_scan_set_settings (TomoLiveScan *self,
                                           guint         n_darks,
                                           guint         n_flats,
                                           gboolean      already_linear);
/* Copies one frame in.  FALSE (TOMO_LIVE_ERROR_MEMORY) when it would pass
 * the memory limit; nothing is changed then. */
gboolean      tomo_live_scan_add_frame    (TomoLiveScan    *self,
                                           const TomoLiveMessage *message,
                                           GError         **error);
/* Nothing more arrives (JSON end of scan, or the receiver moved on to
 * another scan): the frame kept for reuse is let go. */
void          tomo_live_scan_mark_ended   (TomoLiveScan *self);
/* An ended scan gives its frames and its slots' bookkeeping back to the
 * budget, for the scan after it: a TomoScan made of it fails to read from
 * then on, naming the memory limit; its info keeps the counts received.
 * The bytes freed (0 for a scan not ended, or released before). */
gsize         tomo_live_scan_release_frames (TomoLiveScan *self);
gboolean      tomo_live_scan_is_complete  (TomoLiveScan *self);
void          tomo_live_scan_get_info     (TomoLiveScan     *self,
                                           TomoLiveScanInfo *info);
/* Which projection slots hold data now (n_projections booleans). */
guint8       *tomo_live_scan_dup_present  (TomoLiveScan *self,
                                           guint        *n_projections);
/* Bumped by every accepted frame. */
guint64       tomo_live_scan_get_generation (TomoLiveScan *self);
/* Bumped whenever something a TomoScan from tomo_live_scan_create_scan()
 * fixes changes: the number of projections, flats or darks, whether the
 * data is normalised or linear, a projection's own angle.  A caller that
 * keeps such a scan makes a new one when this moves. */
guint64       tomo_live_scan_get_layout   (TomoLiveScan *self);
/* Waits until the generation is no longer `since` or the monotonic time
 * `until` (µs) comes; TRUE when it moved. */
gboolean      tomo_live_scan_wait_generation (TomoLiveScan *self,
                                              guint64       since,
                                              gint64        until);

/* For the incremental preview: the projection slots written after
 * generation `since` (their slot, id and arrival time, appended to the
 * arrays of guint, guint and gint64); *now is the generation to pass next,
 * *calibration the generation of the last flat/dark/settings change. */
guint         tomo_live_scan_collect_changed (TomoLiveScan *self,
                                              guint64       since,
                                              guint64      *now,
                                              guint64      *calibration,
                                              GArray       *slots,
                                              GArray       *ids,
                                              GArray       *arrivals);
guint         tomo_live_scan_get_n_projections (TomoLiveScan *self);
/* Radians: the frame's own angle, else the geometry's, else evenly spaced. */
double        tomo_live_scan_get_angle    (TomoLiveScan *self,
                                           guint         slot);
/* Row `row` of the projections in `slots` (n × cols raw counts), and the
 * mean flat and dark of that row; *normalise is FALSE when no flat has
 * arrived (the data is then taken as normalised). */
gboolean      tomo_live_scan_read_row     (TomoLiveScan *self,
                                           guint         row,
                                           const guint  *slots,
                                           guint         n,
                                           float        *out,
                                           float        *flat,
                                           float        *dark,
                                           gboolean     *normalise,
                                           gboolean     *apply_log);

/* A copy of the frame in a slot as it came (NULL for a gap), and how many
 * slots of `kind` there are so far. */
guint8       *tomo_live_scan_dup_frame    (TomoLiveScan *self,
                                           int           kind,
                                           guint         slot,
                                           TomoDType    *dtype,
                                           gsize        *n_bytes);
guint         tomo_live_scan_get_n_slots  (TomoLiveScan *self,
                                           int           kind);
/* What a projection slot that never received a frame reads as (the mean
 * flat: a zero line integral), one frame of rows × cols floats; and the
 * state of the data (no flats: normalised; linear: no −log). */
float        *tomo_live_scan_dup_gap_frame (TomoLiveScan *self);
void          tomo_live_scan_get_state    (TomoLiveScan *self,
                                           gboolean     *normalised,
                                           gboolean     *already_linear);

/* A TomoScan over the frames received so far (and those still coming: the
 * counts are fixed now, the contents are read live; call
 * tomo_live_scan_refresh() after new frames so cached rows are dropped). */
TomoScan     *tomo_live_scan_create_scan  (TomoLiveScan *self,
                                           GError      **error);
void          tomo_live_scan_refresh      (TomoLiveScan *self,
                                           TomoScan     *scan);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoLiveScan, tomo_live_scan_unref)

G_END_DECLS
