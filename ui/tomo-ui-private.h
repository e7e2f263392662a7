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

/* A drop-down of `strings` that is as wide whichever one is chosen (the
 * widest): another choice does not move what is beside it. */
GtkWidget  *_tomo_ui_drop_down_new   (const char *const *strings);
/* `control` below its `label` ("Render" above a drop-down), as narrow as
 * the wider of them: one item for a GtkFlowBox or a row. */
GtkWidget  *_tomo_ui_labelled        (const char *label,
                                      GtkWidget  *control);
/* Labelled controls that share a line while it is wide enough and wrap onto
 * the next otherwise: a narrow pane asks only for the widest of them. */
GtkWidget  *_tomo_ui_control_flow    (GtkWidget *first,
                                      ...) G_GNUC_NULL_TERMINATED;

G_END_DECLS
