/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-raw-rows.h"

G_BEGIN_DECLS

/* Reads sinogram rows around the one being looked at into the scan's row
 * cache on one low-priority background thread, so that the next row the
 * user scrubs to is served from memory.  Each aim replaces the rows still
 * pending; a row being read when the aim changes is finished (a request
 * for that same row joins that read in the scan). */
typedef struct _TomoScrubPrefetch TomoScrubPrefetch;

TomoScrubPrefetch *tomo_scrub_prefetch_new    (void);
/* Queues up to `ahead` rows after `row` in `direction` (+1 or −1) and
 * `behind` rows on the other side, nearest first, interleaved 2:1 toward the
 * direction of travel, and no more than half the scan's cache holds. */
void               tomo_scrub_prefetch_aim    (TomoScrubPrefetch *self,
                                               TomoScan          *scan,
                                               guint              row,
                                               int                direction,
                                               guint              ahead,
                                               guint              behind);
/* The same into a raw row cache (the device path's): rows already there
 * are skipped, a row read brings its slab; no more than half the cache. */
void               tomo_scrub_prefetch_aim_raw (TomoScrubPrefetch *self,
                                                TomoRawRows       *raw,
                                                guint              row,
                                                int                direction,
                                                guint              ahead,
                                                guint              behind);
/* Drops every pending row (a read under way finishes). */
void               tomo_scrub_prefetch_cancel (TomoScrubPrefetch *self);
/* Waits until no row is pending or being read. */
void               tomo_scrub_prefetch_wait_idle (TomoScrubPrefetch *self);
/* Rows read so far (slab reads for a raw row cache). */
guint              tomo_scrub_prefetch_get_n_read (TomoScrubPrefetch *self);
/* Stops the thread (after the read under way, if any) and frees. */
void               tomo_scrub_prefetch_free   (TomoScrubPrefetch *self);

G_END_DECLS
