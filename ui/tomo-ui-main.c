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

static void
drop_item_setup (GtkSignalListItemFactory *factory,
                 GtkListItem              *item,
                 gpointer                  data)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 0.0f);
  gtk_label_set_width_chars (GTK_LABEL (label), GPOINTER_TO_INT (data));
  gtk_list_item_set_child (item, label);
}

static void
drop_item_bind (GtkSignalListItemFactory *factory,
                GtkListItem              *item,
                gpointer                  data)
{
  GtkStringObject *string = gtk_list_item_get_item (item);

  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)),
                      gtk_string_object_get_string (string));
}

GtkWidget *
_tomo_ui_drop_down_new (const char *const *strings)
{
  GtkWidget *drop = gtk_drop_down_new_from_strings (strings);
  g_autoptr(GtkListItemFactory) factory = gtk_signal_list_item_factory_new ();
  glong chars = 0;

  for (guint i = 0; strings[i] != NULL; i++)
    chars = MAX (chars, g_utf8_strlen (strings[i], -1));
  /* Characters are counted at the font's average width: one more keeps the
   * widest string inside it. */
  g_signal_connect (factory, "setup", G_CALLBACK (drop_item_setup), GINT_TO_POINTER (chars + 1));
  g_signal_connect (factory, "bind", G_CALLBACK (drop_item_bind), NULL);
  gtk_drop_down_set_factory (GTK_DROP_DOWN (drop), factory);
  return drop;
}

GtkWidget *
_tomo_ui_labelled (const char *label,
                   GtkWidget  *control)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *caption = gtk_label_new (label);

  gtk_label_set_xalign (GTK_LABEL (caption), 0.0f);
  gtk_widget_add_css_class (caption, "caption");
  gtk_widget_add_css_class (caption, "dim-label");
  gtk_label_set_mnemonic_widget (GTK_LABEL (caption), control);
  gtk_box_append (GTK_BOX (box), caption);
  gtk_box_append (GTK_BOX (box), control);
  return box;
}

GtkWidget *
_tomo_ui_control_flow (GtkWidget *first,
                       ...)
{
  GtkFlowBox *flow = GTK_FLOW_BOX (gtk_flow_box_new ());
  va_list args;

  gtk_flow_box_set_selection_mode (flow, GTK_SELECTION_NONE);
  gtk_flow_box_set_homogeneous (flow, FALSE);
  gtk_flow_box_set_column_spacing (flow, 12);
  gtk_flow_box_set_row_spacing (flow, 4);
  gtk_flow_box_set_max_children_per_line (flow, 8);
  va_start (args, first);
  for (GtkWidget *w = first; w != NULL; w = va_arg (args, GtkWidget *))
    {
      gtk_flow_box_append (flow, w);
      /* The controls take focus, not the slot they are in. */
      gtk_widget_set_focusable (gtk_widget_get_parent (w), FALSE);
    }
  va_end (args);
  return GTK_WIDGET (flow);
}
