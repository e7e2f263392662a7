/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-live-scan.h"

G_BEGIN_DECLS

/* Writes a live scan to HDF5 Data Exchange while it arrives: each flush
 * writes the projections received since the last one (flats and darks when
 * they change) into datasets that grow with the ids, and flushes the file
 * (a run killed later leaves what came, readable); finishing writes the
 * slots never received as the live scan reads them (the mean flat), a unit
 * flat for data already normalised, /exchange/theta (degrees) and the
 * attributes already_normalised and already_linear of /exchange/data, and
 * closes the file, which tomo_scan_open() then reads like any other (data
 * already linear needs --already-linear). */
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
