/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define TOMO_TYPE_APPLICATION (tomo_application_get_type ())
G_DECLARE_FINAL_TYPE (TomoApplication, tomo_application, TOMO, APPLICATION, GtkApplication)

TomoApplication *tomo_application_new (GApplicationFlags flags);

G_END_DECLS
