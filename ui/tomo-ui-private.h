/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Registers the viewer's GResource (shaders, .ui files) once.  The resource
 * lives in a static library, so a constructor could be dropped by the
 * linker: every entry point calls this instead. */
void        _tomo_ui_ensure_resources (void);
/* A drag gesture added to `widget`: its drag-begin, drag-update and
 * drag-end (`end` may be NULL) call the handlers with `data`. */
GtkGesture *_tomo_ui_add_drag        (GtkWidget *widget,
                                      GCallback  begin,
                                      GCallback  update,
                                      GCallback  end,
                                      gpointer   data);

G_END_DECLS
