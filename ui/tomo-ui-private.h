/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Registers the viewer's GResource (shaders, .ui files) once.  The resource
 * lives in a static library, so a constructor could be dropped by the
 * linker: every entry point calls this instead. */
void _tomo_ui_ensure_resources (void);

G_END_DECLS
