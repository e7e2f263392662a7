/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "tomo-engine.h"

G_BEGIN_DECLS

#define TOMO_TYPE_VOLUME_EXPORT (tomo_volume_export_get_type ())
G_DECLARE_FINAL_TYPE (TomoVolumeExport, tomo_volume_export, TOMO, VOLUME_EXPORT, GObject)

/* Rows row_start…row_end−1 of the engine's scan, reconstructed with
 * `params` and written as float32 TIFF: one stack at `path`, or one file
 * per row (slice_NNNNN.tif) when `path` is a folder.  Nothing is written
 * over an input of the scan, and a failed or cancelled export leaves no
 * half-written file.  One implementation for `tomolive reconstruct --rows`
 * and the viewer's Export Volume. */
TomoVolumeExport *tomo_volume_export_new        (TomoEngine            *engine,
                                                 const char            *path,
                                                 guint                  row_start,
                                                 guint                  row_end,
                                                 const TomoReconParams *params,
                                                 int                    kernel);
const char       *tomo_volume_export_get_path   (TomoVolumeExport *self);
/* Rows written so far and in all; "rows-done" is notified on the main
 * context of the caller of run_async, at most once per idle. */
guint             tomo_volume_export_get_rows_done  (TomoVolumeExport *self);
guint             tomo_volume_export_get_rows_total (TomoVolumeExport *self);

/* Blocking, any thread; `progress` runs on that thread. */
gboolean          tomo_volume_export_run        (TomoVolumeExport  *self,
                                                 TomoProgressFunc   progress,
                                                 gpointer           user_data,
                                                 GCancellable      *cancellable,
                                                 GError           **error);
void              tomo_volume_export_run_async  (TomoVolumeExport    *self,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
gboolean          tomo_volume_export_run_finish (TomoVolumeExport  *self,
                                                 GAsyncResult      *result,
                                                 GError           **error);

G_END_DECLS
