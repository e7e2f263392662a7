/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include "tomo-live-link.h"

#include "tomo-application.h"
#include "tomo-ui-private.h"
#include "tomo-ui-resources.h"
#include "tomo-ui.h"

void
_tomo_ui_ensure_resources (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done))
    {
      tomo_ui_register_resource ();
      g_once_init_leave (&done, 1);
    }
}

GtkGesture *
_tomo_ui_add_drag (GtkWidget *widget,
                   GCallback  begin,
                   GCallback  update,
                   GCallback  end,
                   gpointer   data)
{
  GtkGesture *drag = gtk_gesture_drag_new ();

  g_signal_connect (drag, "drag-begin", begin, data);
  g_signal_connect (drag, "drag-update", update, data);
  if (end != NULL)
    g_signal_connect (drag, "drag-end", end, data);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));
  return drag;
}

/* An uninstalled build keeps its compiled schema in <builddir>/data; use it
 * when the schema is not installed, so settings work from ./run.sh too. */
static void
use_build_schemas (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, APPLICATION_ID, TRUE);
  if (schema == NULL && g_getenv ("GSETTINGS_SCHEMA_DIR") == NULL
      && g_file_test (TOMO_BUILD_SCHEMA_DIR "/gschemas.compiled", G_FILE_TEST_EXISTS))
    g_setenv ("GSETTINGS_SCHEMA_DIR", TOMO_BUILD_SCHEMA_DIR, TRUE);
}

int
tomo_ui_main (int    argc,
              char **argv)
{
  g_autoptr(TomoApplication) app = NULL;

  use_build_schemas ();
  _tomo_ui_ensure_resources ();
  app = tomo_application_new (G_APPLICATION_DEFAULT_FLAGS);
  tomo_live_link_watch_application (GTK_APPLICATION (app));
  return g_application_run (G_APPLICATION (app), argc, argv);
}
