/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <string.h>

#include "tomo-application.h"
#include "tomo-ui-private.h"
#include "tomo-window.h"

struct _TomoApplication
{
  GtkApplication parent_instance;

  /* --format, --flats, --already-sinogram…: as `tomolive reconstruct`. */
  TomoOpenArgs open_args;
};

G_DEFINE_FINAL_TYPE (TomoApplication, tomo_application, GTK_TYPE_APPLICATION)

static TomoWindow *
get_window (TomoApplication *self)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));

  if (TOMO_IS_WINDOW (window))
    return TOMO_WINDOW (window);
  return tomo_window_new (GTK_APPLICATION (self));
}

static void
tomo_application_activate (GApplication *app)
{
  gtk_window_present (GTK_WINDOW (get_window (TOMO_APPLICATION (app))));
}

static gboolean
args_given (const TomoOpenArgs *a)
{
  static const TomoOpenArgs none = { 0 };

  return memcmp (a, &none, sizeof none) != 0;
}

static void
tomo_application_open (GApplication  *app,
                       GFile        **files,
                       int            n_files,
                       const char    *hint)
{
  TomoWindow *window = get_window (TOMO_APPLICATION (app));

  /* One scan per window: the first file wins, the rest open their own. */
  for (int i = 0; i < n_files; i++)
    {
      TomoWindow *w = i == 0 ? window : tomo_window_new (GTK_APPLICATION (app));

      tomo_window_open_with_args (w, files[i], args_given (&TOMO_APPLICATION (app)->open_args)
                                                 ? &TOMO_APPLICATION (app)->open_args : NULL);
      gtk_window_present (GTK_WINDOW (w));
    }
}

static void
quit_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  GList *windows = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (user_data)));

  /* Closing the windows lets them save their size and cancel exports. */
  for (GList *l = windows; l != NULL; l = l->next)
    gtk_window_close (GTK_WINDOW (l->data));
  g_list_free (windows);
}

static void
about_action (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       user_data)
{
  static const char *authors[] = { "The tomolive developers", NULL };
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (user_data));

  gtk_show_about_dialog (parent,
                         "program-name", "tomolive",
                         "logo-icon-name", APPLICATION_ID,
                         "version", PACKAGE_VERSION,
                         "comments", "Live filtered back projection of parallel-beam X-ray tomography on the GPU or CPU",
                         "license-type", GTK_LICENSE_GPL_3_0,
                         "authors", authors,
                         NULL);
}

static void
tomo_application_startup (GApplication *app)
{
  static const GActionEntry entries[] = {
    { .name = "quit", .activate = quit_action },
    { .name = "about", .activate = about_action },
  };
  static const char *quit_accels[] = { "<Control>q", NULL };
  static const char *open_accels[] = { "<Control>o", NULL };
  static const char *open_options_accels[] = { "<Control><Shift>o", NULL };
  static const char *export_accels[] = { "<Control>e", NULL };
  static const char *png_accels[] = { "<Control><Shift>e", NULL };

  _tomo_ui_ensure_resources ();

  G_APPLICATION_CLASS (tomo_application_parent_class)->startup (app);

  g_action_map_add_action_entries (G_ACTION_MAP (app), entries, G_N_ELEMENTS (entries), app);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.open", open_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.open-options", open_options_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.export-tiff", export_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "win.export-png", png_accels);

  /* Accelerators with a modifier act wherever focus is, text fields
   * included (they are handled before the focused widget sees the key);
   * the plain keys live on the slice view. */
  {
    static const struct { const char *action; const char *accel; } accels[] = {
      { "win.nudge-center(-0.1)", "<Alt>Left" },
      { "win.nudge-center(0.1)", "<Alt>Right" },
      { "win.nudge-center(-1.0)", "<Alt><Shift>Left" },
      { "win.nudge-center(1.0)", "<Alt><Shift>Right" },
      { "win.nudge-row(1)", "<Alt>Up" },
      { "win.nudge-row(-1)", "<Alt>Down" },
      { "win.show-sinogram", "<Control>g" },
      { "win.focus-slice", "F6" },
      { "win.save-params", "<Control>s" },
      { "win.load-params", "<Control>l" },
    };

    for (guint i = 0; i < G_N_ELEMENTS (accels); i++)
      {
        const char *list[] = { accels[i].accel, NULL };

        gtk_application_set_accels_for_action (GTK_APPLICATION (app), accels[i].action, list);
      }
  }

  gtk_window_set_default_icon_name (APPLICATION_ID);
}

static void
tomo_application_finalize (GObject *object)
{
  tomo_open_args_clear (&TOMO_APPLICATION (object)->open_args);
  G_OBJECT_CLASS (tomo_application_parent_class)->finalize (object);
}

static void
tomo_application_class_init (TomoApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = tomo_application_finalize;

  app_class->activate = tomo_application_activate;
  app_class->open = tomo_application_open;
  app_class->startup = tomo_application_startup;
}

static void
tomo_application_init (TomoApplication *self)
{
  /* The same input options as the command line's subcommands, so every
   * scan `tomolive reconstruct` opens, `tomolive FILE` opens too. */
  g_application_add_option_group (G_APPLICATION (self), tomo_open_args_group (&self->open_args));
}

TomoApplication *
tomo_application_new (GApplicationFlags flags)
{
  return g_object_new (TOMO_TYPE_APPLICATION,
                       "application-id", APPLICATION_ID,
                       "flags", flags | G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", "/org/tomolive/Tomolive",
                       NULL);
}
