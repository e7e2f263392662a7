/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "tomo-engine.h"
#include "tomo-volume-stats.h"
#include "tomo-volume-writer.h"

G_BEGIN_DECLS

/* What a writer records of rows [row_start, + n_rows) of `scan`, as
 * `engine` reconstructs them with `params` over `roi` (the slices' size);
 * the strings are borrowed from those.  For exports and single slices. */
void tomo_volume_info_describe (TomoVolumeInfo        *info,
                                TomoScan              *scan,
                                TomoEngine            *engine,
                                const TomoReconParams *params,
                                const TomoRoi         *roi,
                                guint                  row_start,
                                guint                  n_rows);

/* Reconstructs rows [row_start, row_end) of the engine's scan (the one it
 * has at tomo_volume_export_new(), kept to the end whatever scan the engine
 * is given meanwhile) and writes them to a file or folder (TIFF per slice, multi-page TIFF or HDF5), every
 * stage overlapped: the engine's volume pipeline computes while a pool of
 * writer threads writes.  One export runs once.  On failure or cancel
 * nothing half-written is left under the output name; the error says so. */
#define TOMO_TYPE_VOLUME_EXPORT (tomo_volume_export_get_type ())
G_DECLARE_FINAL_TYPE (TomoVolumeExport, tomo_volume_export, TOMO, VOLUME_EXPORT, GObject)

TomoVolumeExport *tomo_volume_export_new        (TomoEngine            *engine,
                                                 const char            *path,
                                                 TomoVolumeFormat       format,
                                                 guint                  row_start,
                                                 guint                  row_end,
                                                 const TomoReconParams *params,
                                                 int                    kernel);
/* Writer threads (0 = default). */
void              tomo_volume_export_set_n_writers (TomoVolumeExport *self,
                                                    guint             n_writers);
/* Called on the thread that runs the export, after each slice is handed
 * to the writers (the CLI's progress bar).  The "progress" property
 * (0…1) is notified on the main context of the caller of _run_async(). */
void              tomo_volume_export_set_progress_func (TomoVolumeExport *self,
                                                        TomoProgressFunc  func,
                                                        gpointer          user_data);
double            tomo_volume_export_get_progress (TomoVolumeExport *self);

/* Blocking. */
gboolean          tomo_volume_export_run        (TomoVolumeExport *self,
                                                 GCancellable     *cancellable,
                                                 GError          **error);
/* On a thread of its own; `callback` on the caller's thread-default main
 * context. */
void              tomo_volume_export_run_async  (TomoVolumeExport    *self,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
gboolean          tomo_volume_export_run_finish (TomoVolumeExport *self,
                                                 GAsyncResult     *result,
                                                 GError          **error);

/* After the run: the engine's stage times, with write_ms the writer
 * threads' busy time (summed) and wall_ms the whole export. */
void              tomo_volume_export_get_stats  (TomoVolumeExport *self,
                                                 TomoVolumeStats  *stats);
TomoVolumeFormat  tomo_volume_export_get_format (TomoVolumeExport *self);

G_END_DECLS
