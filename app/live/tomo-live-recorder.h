/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-live-scan.h"

G_BEGIN_DECLS

/* Writes a live scan to HDF5 Data Exchange while it arrives: each flush
 * writes the projections received since the last one (flats and darks when
 * they change) into datasets that grow with the ids; finishing adds
 * /exchange/theta (degrees) and closes the file, which tomo_scan_open()
 * then reads like any other.  Slots never received stay zeros. */
typedef struct _TomoLiveRecorder TomoLiveRecorder;

TomoLiveRecorder *tomo_live_recorder_new    (TomoLiveScan *scan,
                                             const char   *path,
                                             GError      **error);
gboolean          tomo_live_recorder_flush  (TomoLiveRecorder *self,
                                             GError          **error);
/* Flushes, writes the angles, closes; the recorder is freed either way. */
gboolean          tomo_live_recorder_finish (TomoLiveRecorder *self,
                                             GError          **error);
/* Closes without the angles (the file stays incomplete). */
void              tomo_live_recorder_free   (TomoLiveRecorder *self);
guint64           tomo_live_recorder_get_n_written (TomoLiveRecorder *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoLiveRecorder, tomo_live_recorder_free)

G_END_DECLS
