/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-open-args.h"
#include "tomo-window.h"

G_BEGIN_DECLS

#define TOMO_TYPE_OPEN_DIALOG (tomo_open_dialog_get_type ())
G_DECLARE_FINAL_TYPE (TomoOpenDialog, tomo_open_dialog, TOMO, OPEN_DIALOG, GtkWindow)

/* "Open with Options…": a scan and how to read it — format, flats, darks,
 * angles, already normalised / already line integrals, raw dimensions and
 * type, angle range.  The options are remembered per folder and filled in
 * again when a scan from the same folder is chosen. */
TomoOpenDialog *tomo_open_dialog_new      (TomoWindow     *window);
void            tomo_open_dialog_set_path (TomoOpenDialog *self,
                                           const char     *path);
/* The options as the dialog shows them now. */
void            tomo_open_dialog_get_args (TomoOpenDialog *self,
                                           TomoOpenArgs   *args);

/* The options last used to open a scan from the folder of `path`
 * (a TIFF stack's folder is its own); FALSE when there are none. */
gboolean        tomo_open_args_recall     (const char     *path,
                                           TomoOpenArgs   *args);
void            tomo_open_args_remember   (const char     *path,
                                           const TomoOpenArgs *args);

G_END_DECLS
