/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Runs the viewer (GtkApplication); files on the command line are opened. */
int tomo_ui_main (int    argc,
                  char **argv);

G_END_DECLS
