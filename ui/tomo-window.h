/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-engine.h"
#include "tomo-open-args.h"
#include "tomo-slice-view.h"

G_BEGIN_DECLS

#define TOMO_TYPE_WINDOW (tomo_window_get_type ())
G_DECLARE_FINAL_TYPE (TomoWindow, tomo_window, TOMO, WINDOW, GtkApplicationWindow)

TomoWindow    *tomo_window_new                   (GtkApplication *application);

/* Opens a scan in a worker thread; "scan-loaded" reports the outcome and a
 * failure also shows the error banner. */
void           tomo_window_open                  (TomoWindow *self,
                                                  GFile      *file);
/* The same with the input options of the command line (NULL: those last
 * used for the scan's folder); options that open a scan are remembered
 * for its folder. */
void           tomo_window_open_with_args        (TomoWindow         *self,
                                                  GFile              *file,
                                                  const TomoOpenArgs *args);
TomoScan      *tomo_window_get_scan              (TomoWindow *self);
TomoEngine    *tomo_window_get_engine            (TomoWindow *self);
/* The file's scan where the rows shown are its offset-axis stitch (made
 * about the centre, so each candidate axis needs its own), else NULL. */
TomoScan      *tomo_window_get_stitched_base     (TomoWindow *self);
TomoSliceView *tomo_window_get_slice_view        (TomoWindow *self);
/* Adds a view (a centre sweep, a volume layout…) as a page beside the
 * slice view; a switcher appears in the header bar once there are two. */
void           tomo_window_add_view              (TomoWindow *self,
                                                  const char *name,
                                                  const char *title,
                                                  GtkWidget  *view);
/* The toast's text after an export, NULL while none is shown. */
const char    *tomo_window_get_toast             (TomoWindow *self);
/* The text of the error banner, NULL while it is hidden. */
void           tomo_window_show_live             (TomoWindow *self,
                                                  TomoScan   *scan,
                                                  const char *status);
const char    *tomo_window_get_error_message     (TomoWindow *self);
void           tomo_window_show_error            (TomoWindow *self,
                                                  const char *message);

/* Float32 TIFF of the slice(s) on screen: one page per slice. */
gboolean       tomo_window_export_slice_tiff     (TomoWindow *self,
                                                  const char *path,
                                                  GError    **error);
/* PNG of the slice(s) as displayed (colour map and window), 1:1. */
gboolean       tomo_window_export_slice_png      (TomoWindow *self,
                                                  const char *path,
                                                  GError    **error);
/* Every row of the scan with the current parameters as a TIFF stack, in a
 * worker thread; progress in the status bar. */
void           tomo_window_export_volume_async   (TomoWindow          *self,
                                                  const char          *path,
                                                  GCancellable        *cancellable,
                                                  GAsyncReadyCallback  callback,
                                                  gpointer             user_data);
/* Rows first_row…last_row (included) the same way. */
void           tomo_window_export_rows_async     (TomoWindow          *self,
                                                  const char          *path,
                                                  guint                first_row,
                                                  guint                last_row,
                                                  GCancellable        *cancellable,
                                                  GAsyncReadyCallback  callback,
                                                  gpointer             user_data);
gboolean       tomo_window_export_volume_finish  (TomoWindow    *self,
                                                  GAsyncResult  *result,
                                                  GError       **error);

G_END_DECLS
