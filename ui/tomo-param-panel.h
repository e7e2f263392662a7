/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TOMO_TYPE_PARAM_PANEL (tomo_param_panel_get_type ())
G_DECLARE_FINAL_TYPE (TomoParamPanel, tomo_param_panel, TOMO, PARAM_PANEL, GtkBox)

/* The side panel: reconstruction, display and export groups.  Its buttons
 * act through the window's `win.*` actions; the window binds its values to
 * the adjustments and combos (tomo-param-panel-private.h).
 *
 * Adding a section: put its widgets in a new widget of its own and append
 * it with tomo_param_panel_add_section(); it gets a heading and a separator
 * like the built-in groups, and the panel's scroll and sensitivity rules. */
GtkWidget *tomo_param_panel_new         (void);
void       tomo_param_panel_add_section (TomoParamPanel *self,
                                         const char     *title,
                                         GtkWidget      *section);
/* Re-centres the fine centre slider on the centre's current value. */
void       tomo_param_panel_recenter_fine (TomoParamPanel *self);

G_END_DECLS
