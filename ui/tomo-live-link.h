/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-live-receiver.h"
#include "tomo-live-scan.h"
#include "tomo-window.h"

G_BEGIN_DECLS

/* Connects a window to a live receiver: the window shows the scan as it
 * arrives (re-reconstructed at most ten times a second from what has
 * arrived) and the state in its subtitle — waiting, receiving (projections,
 * MB/s, projections/s, dropped messages) or complete.  The link lives as
 * long as the window, or until another replaces it. */
gboolean    tomo_live_link_attach      (TomoWindow                    *window,
                                        const TomoLiveReceiverOptions *options,
                                        GError                       **error);
/* The subtitle text now; NULL when the window has no link. */
const char *tomo_live_link_get_status  (TomoWindow *window);
const char *tomo_live_link_get_endpoint (TomoWindow *window);
/* The receiver's counters now; FALSE when the window has no link. */
gboolean    tomo_live_link_get_stats   (TomoWindow            *window,
                                        TomoLiveReceiverStats *stats);
/* The live scan `scan` reads (a new reference), when `scan` is the window's
 * live scan; NULL otherwise.  Its generation moves with every frame: views
 * of their own (the three views) follow it. */
TomoLiveScan *tomo_live_link_dup_live_scan (TomoWindow *window,
                                            TomoScan   *scan);

/* `tomolive --listen URL [--protocol P] [--socket S] [--projections N]
 * [--angles FILE] [--angle-range DEG] [--max-memory SIZE]`: with --listen,
 * removes those options from argv and remembers them for the first window
 * (a mistake in them is shown there). */
void        tomo_live_link_take_arguments (int    *argc,
                                           char ***argv);
void        tomo_live_link_watch_application (GtkApplication *app);

G_END_DECLS
