/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-window.h"

G_BEGIN_DECLS

/* Connect…: asks for the address, protocol and socket (and for JSON,
 * whose frames carry no geometry, the projections of a rotation and the
 * angle range), then attaches a live link to `window`; a refused address
 * is said in the dialog. */
GtkWindow *tomo_connect_dialog_present (TomoWindow *window);

G_END_DECLS
