/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-live-accumulator.h"
#include "tomo-live-receiver.h"

G_BEGIN_DECLS

/* The slice under a live scan, kept current at most `max_rate` times a
 * second from what has arrived, in its own thread: each step adds only the
 * projections written since the last one (and subtracts what they replace);
 * new flats or darks, a new scan or a parameter change rebuild it. */
typedef enum
{
  TOMO_LIVE_MODE_SCAN = 0,     /* one rotation accumulates; the next one starts afresh */
  TOMO_LIVE_MODE_CONTINUOUS,   /* the last 180°: a projection replaces the one at its angle */
} TomoLiveMode;

typedef struct
{
  int             row;          /* detector row; < 0: the middle one */
  TomoReconParams params;       /* center NAN: the detector's middle */
  TomoBackend     backend;
  TomoLiveMode    mode;
  double          max_rate;     /* steps per second; 0: 60 */
  gboolean        device_only;  /* GPU: slices stay on the device (display through interop) */
} TomoLivePreviewOptions;

typedef struct _TomoLivePreview TomoLivePreview;

/* Called in the preview thread after each step that changed the slice
 * (tomo_live_preview_dup_slice has it); the delays count until it returns,
 * so a caller that shows the slice here measures arrival → shown. */
typedef void (*TomoLivePreviewFunc) (TomoLivePreview *preview,
                                     gpointer         user_data);

void             tomo_live_preview_options_init (TomoLivePreviewOptions *options);
TomoLivePreview *tomo_live_preview_new   (TomoLiveReceiver             *receiver,
                                          const TomoLivePreviewOptions *options,
                                          TomoLivePreviewFunc           func,
                                          gpointer                      user_data);
void             tomo_live_preview_free  (TomoLivePreview *self);
/* One step now, in the caller's thread (the thread is not started when
 * max_rate < 0).  FALSE with an error when the slice cannot be made. */
gboolean         tomo_live_preview_step  (TomoLivePreview *self,
                                          GError         **error);
/* A copy of the slice (width × width) and how many projections are in it
 * (downloaded from the device for a device_only slice). */
float           *tomo_live_preview_dup_image (TomoLivePreview *self,
                                              guint           *width,
                                              guint           *n_in_image,
                                              guint64         *version);
/* The slice as the engine makes them (row, parameters, slice->values), a
 * new reference; NULL before the first step. */
TomoSlice       *tomo_live_preview_dup_slice (TomoLivePreview *self,
                                              guint           *n_in_slice,
                                              guint64         *version);
/* Arrival → in the slice, over every projection added so far. */
void             tomo_live_preview_get_delays (TomoLivePreview *self,
                                               double          *median_ms,
                                               double          *max_ms,
                                               guint           *n);
/* Forgets the delays so far and counts only projections that arrive from
 * now on (e.g. after a warm-up: a step still running then does not add the
 * delays of earlier arrivals). */
void             tomo_live_preview_reset_delays (TomoLivePreview *self);
/* The backend of the slice (AUTO before the first scan). */
TomoBackend      tomo_live_preview_get_backend (TomoLivePreview *self);
char            *tomo_live_preview_dup_error (TomoLivePreview *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoLivePreview, tomo_live_preview_free)

G_END_DECLS
