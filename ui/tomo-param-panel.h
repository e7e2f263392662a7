/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TOMO_TYPE_PARAM_PANEL (tomo_param_panel_get_type ())
G_DECLARE_FINAL_TYPE (TomoParamPanel, tomo_param_panel, TOMO, PARAM_PANEL, GtkBox)

/* The side panel: reconstruction, display and export groups.  Its buttons
 * act through the window's `win.*` actions; the window binds its values to
 * the adjustments and combos (tomo-param-panel-private.h). */

G_END_DECLS
