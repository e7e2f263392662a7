/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-connect-dialog.h"
#include "tomo-open-dialog.h"
#include "tomo-window-private.h"

/* ---- file choosers -------------------------------------------------------- */

typedef void (*ChosenFunc) (TomoWindow *self,
                            GFile      *file);

static void
chooser_response (GtkNativeDialog *dialog,
                  int              response,
                  gpointer         user_data)
{
  TomoWindow *self = g_object_get_data (G_OBJECT (dialog), "tomo-window");
  ChosenFunc func = user_data;

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));

      if (file != NULL)
        func (self, file);
    }
  g_object_unref (dialog);
}

static char *
suggest_name (TomoWindow *self,
              const char *what,
              const char *ext)
{
  g_autofree char *base = NULL;
  double center;
  char *dot;

  if (self->scan == NULL)
    return g_strdup_printf ("slice.%s", ext);
  base = g_path_get_basename (tomo_scan_get_path (self->scan));
  if ((dot = strrchr (base, '.')) != NULL)
    *dot = '\0';
  center = _tomo_window_detector_center (self, self->params.center);
  if (g_str_equal (what, "volume"))
    return g_strdup_printf ("%s-volume-c%.2f.%s", base, center, ext);
  return g_strdup_printf ("%s-row%u-c%.2f.%s", base, self->params.row, center, ext);
}

static void
open_chosen (TomoWindow *self,
             GFile      *file)
{
  tomo_window_open (self, file);
}

/* Writes the slice shown to the file chosen with `export` and says how it went. */
static void
export_slice (TomoWindow *self,
              GFile      *file,
              gboolean  (*export) (TomoWindow *self, const char *path, GError **error))
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_file_get_path (file);
  gboolean ok = export (self, path, &error);

  _tomo_window_report_file (self, path, ok ? NULL : error, "Saved", "Export failed");
}

static void
export_tiff_chosen (TomoWindow *self,
                    GFile      *file)
{
  export_slice (self, file, tomo_window_export_slice_tiff);
}

static void
export_png_chosen (TomoWindow *self,
                   GFile      *file)
{
  export_slice (self, file, tomo_window_export_slice_png);
}

/* The actions that ask for a file: what the chooser shows, the name it
 * suggests (`what` and `ext` for suggest_name(); none when opening), and
 * what the file chosen is for. */
typedef struct
{
  const char *action, *title;
  const char *what, *ext;
  const char *pattern, *pattern_name;
  ChosenFunc chosen;
} Chooser;

static const Chooser choosers[] = {
  { "win.open", "Open Scan", NULL, NULL, "*.h5;*.hdf5;*.hdf;*.nxs;*.tif;*.tiff;*.raw;*.bin",
    "Scans (HDF5, NeXus, TIFF, raw)", open_chosen },
  { "win.export-tiff", "Export Slice as Float32 TIFF", "slice", "tif", "*.tif;*.tiff",
    "TIFF images", export_tiff_chosen },
  { "win.export-png", "Export Slice as PNG", "slice", "png", "*.png", "PNG images",
    export_png_chosen },
  { "win.export-volume", "Export Volume as TIFF Stack", "volume", "tif", "*.tif;*.tiff",
    "TIFF stacks", _tomo_window_export_volume_chosen },
};

static void
run_chooser (TomoWindow    *self,
             const Chooser *c)
{
  GtkFileChooserNative *chooser;
  g_autofree char *folder = NULL;
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
  g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();
  g_auto(GStrv) patterns = g_strsplit (c->pattern, ";", -1);

  chooser = gtk_file_chooser_native_new (c->title, GTK_WINDOW (self),
                                         c->ext != NULL ? GTK_FILE_CHOOSER_ACTION_SAVE
                                                        : GTK_FILE_CHOOSER_ACTION_OPEN,
                                         NULL, NULL);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  g_object_set_data (G_OBJECT (chooser), "tomo-window", self);

  gtk_file_filter_set_name (filter, c->pattern_name);
  for (guint i = 0; patterns[i] != NULL; i++)
    gtk_file_filter_add_pattern (filter, patterns[i]);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), filter);
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (chooser), all);

  /* Dialogs start where the scan is: exports land beside their data. */
  folder = _tomo_window_dup_folder (self);
  if (folder != NULL)
    {
      g_autoptr(GFile) dir = g_file_new_for_path (folder);
      gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), dir, NULL);
    }
  if (c->ext != NULL)
    {
      g_autofree char *name = suggest_name (self, c->what, c->ext);

      gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (chooser), name);
    }

  g_signal_connect (chooser, "response", G_CALLBACK (chooser_response), c->chosen);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* ---- actions -------------------------------------------------------------- */

static void
chooser_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  for (guint i = 0; i < G_N_ELEMENTS (choosers); i++)
    if (g_str_equal (action_name, choosers[i].action))
      run_chooser (TOMO_WINDOW (widget), &choosers[i]);
}

static void
open_options_action (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);
  TomoOpenDialog *dialog = tomo_open_dialog_new (self);
  g_autofree char *folder = _tomo_window_dup_folder (self);

  if (self->scan != NULL)
    tomo_open_dialog_set_path (dialog, tomo_scan_get_path (self->scan));
  else if (folder != NULL)
    {
      g_autofree char *start = g_strconcat (folder, G_DIR_SEPARATOR_S, NULL);

      tomo_open_dialog_set_path (dialog, start);
    }
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
cancel_export_action (GtkWidget  *widget,
                      const char *action_name,
                      GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);

  if (self->export_cancellable != NULL)
    g_cancellable_cancel (self->export_cancellable);
}

static void
set_center_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  _tomo_window_set_center (TOMO_WINDOW (widget), g_variant_get_double (parameter));
}

static void
nudge_center_action (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);
  double upper = tomo_scan_get_width (self->scan) - 1.0;

  _tomo_window_set_center (self, CLAMP (self->params.center + g_variant_get_double (parameter), 0, upper));
}

static void
nudge_row_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);
  gint64 row = (gint64) self->params.row + g_variant_get_int32 (parameter);

  _tomo_window_set_row (self, (guint) MAX (row, 0));
}

static void
clear_roi_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  _tomo_window_set_roi (TOMO_WINDOW (widget), 0, 0, 0, 0);
}

static void
zoom_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);

  if (g_str_equal (action_name, "win.zoom-fit"))
    tomo_slice_view_zoom_fit (self->slice_view);
  else
    tomo_slice_view_zoom_one (self->slice_view);
}

static void
params_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);
  g_autoptr(GError) error = NULL;
  g_autofree char *path = _tomo_window_params_path (self);
  gboolean save = g_str_equal (action_name, "win.save-params");
  gboolean ok = save ? _tomo_window_save_params (self, &error) : _tomo_window_load_params (self, &error);

  if (ok || error != NULL)
    _tomo_window_report_file (self, path, ok ? NULL : error,
                              save ? "Parameters saved to" : "Parameters loaded from",
                              save ? "Could not save the parameters" : "Could not load the parameters");
  else
    {
      g_autofree char *message = g_strdup_printf ("No saved parameters for this scan (%s)", path);

      _tomo_window_show_toast (self, message, NULL);
    }
}

static void
open_recent_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  g_autoptr(GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));

  tomo_window_open (TOMO_WINDOW (widget), file);
}

static int
newest_first (gconstpointer a,
              gconstpointer b)
{
  return g_date_time_compare (gtk_recent_info_get_modified ((GtkRecentInfo *) b),
                              gtk_recent_info_get_modified ((GtkRecentInfo *) a));
}

void
_tomo_window_update_recent (TomoWindow *self)
{
  GList *items = g_list_sort (gtk_recent_manager_get_items (gtk_recent_manager_get_default ()),
                              newest_first);
  const char *app_name = g_get_application_name ();
  guint n = 0;

  g_menu_remove_all (self->recent_section);
  for (GList *l = items; l != NULL && n < 8; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      g_autofree char *label = NULL;
      g_autoptr(GMenuItem) item = NULL;

      if (app_name == NULL || !gtk_recent_info_has_application (info, app_name)
          || !gtk_recent_info_exists (info))
        continue;
      label = gtk_recent_info_get_short_name (info);
      item = g_menu_item_new (label, NULL);
      g_menu_item_set_action_and_target_value (item, "win.open-recent",
                                               g_variant_new_string (gtk_recent_info_get_uri (info)));
      g_menu_append_item (self->recent_section, item);
      n++;
    }
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

static void
connect_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  tomo_connect_dialog_present (TOMO_WINDOW (widget));
}

static void
toast_open_folder_action (GtkWidget  *widget,
                          const char *action_name,
                          GVariant   *parameter)
{
  TomoWindow *self = TOMO_WINDOW (widget);
  g_autoptr(GFile) folder = NULL;
  g_autofree char *uri = NULL;

  if (self->toast_folder == NULL)
    return;
  folder = g_file_new_for_path (self->toast_folder);
  uri = g_file_get_uri (folder);
  gtk_show_uri (GTK_WINDOW (self), uri, GDK_CURRENT_TIME);
}

static void
focus_slice_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  gtk_widget_grab_focus (GTK_WIDGET (TOMO_WINDOW (widget)->slice_view));
}

/* Sensitivity follows the state: nothing acts on a scan before one is open. */
void
_tomo_window_update_actions (TomoWindow *self)
{
  GtkWidget *w = GTK_WIDGET (self);
  gboolean have_scan = self->scan != NULL;
  gboolean exporting = self->export_cancellable != NULL;
  const char *scan_actions[] = {
    "win.export-tiff", "win.export-png", "win.set-center", "win.nudge-center",
    "win.nudge-row", "win.clear-roi", "win.zoom-fit", "win.zoom-one",
    "win.save-params", "win.load-params",
  };

  for (guint i = 0; i < G_N_ELEMENTS (scan_actions); i++)
    gtk_widget_action_set_enabled (w, scan_actions[i], have_scan);
  gtk_widget_action_set_enabled (w, "win.export-volume", have_scan && !exporting);
  gtk_widget_action_set_enabled (w, "win.cancel-export", exporting);
  gtk_widget_set_sensitive (GTK_WIDGET (self->panel), have_scan);
}

static void
on_view_pressed (GtkGestureClick *gesture,
                 int              n_press,
                 double           x,
                 double           y,
                 GtkWidget       *view)
{
  /* Not claimed: panning and ROI drags go on as before. */
  gtk_widget_grab_focus (view);
}

/* Keys that act on the view live on the slice view, which takes focus when
 * clicked: typed into a text field, the same keys stay text. */
void
_tomo_window_add_view_shortcuts (TomoWindow *self)
{
  static const struct {
    guint key;
    GdkModifierType mods;
    const char *action;
    const char *format;
    double value;
  } keys[] = {
    { GDK_KEY_Left, 0, "win.nudge-center", "d", -0.1 },
    { GDK_KEY_Right, 0, "win.nudge-center", "d", 0.1 },
    { GDK_KEY_Left, GDK_SHIFT_MASK, "win.nudge-center", "d", -1.0 },
    { GDK_KEY_Right, GDK_SHIFT_MASK, "win.nudge-center", "d", 1.0 },
    { GDK_KEY_Left, GDK_CONTROL_MASK, "win.nudge-center", "d", -10.0 },
    { GDK_KEY_Right, GDK_CONTROL_MASK, "win.nudge-center", "d", 10.0 },
    { GDK_KEY_bracketleft, 0, "win.nudge-center", "d", -0.1 },
    { GDK_KEY_bracketright, 0, "win.nudge-center", "d", 0.1 },
    { GDK_KEY_braceleft, GDK_SHIFT_MASK, "win.nudge-center", "d", -1.0 },
    { GDK_KEY_braceright, GDK_SHIFT_MASK, "win.nudge-center", "d", 1.0 },
    { GDK_KEY_Up, 0, "win.nudge-row", "i", 1 },
    { GDK_KEY_Down, 0, "win.nudge-row", "i", -1 },
    { GDK_KEY_Page_Up, 0, "win.nudge-row", "i", 10 },
    { GDK_KEY_Page_Down, 0, "win.nudge-row", "i", -10 },
    { GDK_KEY_f, 0, "win.zoom-fit", NULL, 0 },
    { GDK_KEY_1, 0, "win.zoom-one", NULL, 0 },
    { GDK_KEY_a, 0, "win.auto-contrast", NULL, 0 },
    { GDK_KEY_s, 0, "win.show-sinogram", NULL, 0 },
    { GDK_KEY_Escape, 0, "win.clear-roi", NULL, 0 },
  };
  GtkEventController *controller = gtk_shortcut_controller_new ();

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      GtkShortcut *shortcut;
      GVariant *args = NULL;

      if (keys[i].format != NULL && keys[i].format[0] == 'd')
        args = g_variant_new_double (keys[i].value);
      else if (keys[i].format != NULL)
        args = g_variant_new_int32 ((gint32) keys[i].value);
      shortcut = gtk_shortcut_new (gtk_keyval_trigger_new (keys[i].key, keys[i].mods),
                                   gtk_named_action_new (keys[i].action));
      if (args != NULL)
        gtk_shortcut_set_arguments (shortcut, args);
      gtk_shortcut_controller_add_shortcut (GTK_SHORTCUT_CONTROLLER (controller), shortcut);
    }
  gtk_widget_add_controller (GTK_WIDGET (self->slice_view), controller);

  controller = GTK_EVENT_CONTROLLER (gtk_gesture_click_new ());
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (controller), 0);
  gtk_event_controller_set_propagation_phase (controller, GTK_PHASE_CAPTURE);
  g_signal_connect (controller, "pressed", G_CALLBACK (on_view_pressed), self->slice_view);
  gtk_widget_add_controller (GTK_WIDGET (self->slice_view), controller);
  gtk_widget_set_focusable (GTK_WIDGET (self->slice_view), TRUE);
  gtk_widget_set_focus_on_click (GTK_WIDGET (self->slice_view), TRUE);
}

void
_tomo_window_class_add_actions (GtkWidgetClass *widget_class)
{
  for (guint i = 0; i < G_N_ELEMENTS (choosers); i++)
    gtk_widget_class_install_action (widget_class, choosers[i].action, NULL, chooser_action);
  gtk_widget_class_install_action (widget_class, "win.open-options", NULL, open_options_action);
  gtk_widget_class_install_action (widget_class, "win.connect", NULL, connect_action);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "win.save-params", NULL, params_action);
  gtk_widget_class_install_action (widget_class, "win.load-params", NULL, params_action);
  gtk_widget_class_install_action (widget_class, "win.cancel-export", NULL, cancel_export_action);
  gtk_widget_class_install_action (widget_class, "win.set-center", "d", set_center_action);
  gtk_widget_class_install_action (widget_class, "win.nudge-center", "d", nudge_center_action);
  gtk_widget_class_install_action (widget_class, "win.nudge-row", "i", nudge_row_action);
  gtk_widget_class_install_action (widget_class, "win.clear-roi", NULL, clear_roi_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.zoom-one", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "win.focus-slice", NULL, focus_slice_action);
  gtk_widget_class_install_action (widget_class, "win.toast-open-folder", NULL, toast_open_folder_action);
  gtk_widget_class_install_property_action (widget_class, "win.row", "row");
  gtk_widget_class_install_property_action (widget_class, "win.filter", "filter");
  gtk_widget_class_install_property_action (widget_class, "win.interp", "interp");
  gtk_widget_class_install_property_action (widget_class, "win.n-slices", "n-slices");
  gtk_widget_class_install_property_action (widget_class, "win.kernel", "kernel");
  gtk_widget_class_install_property_action (widget_class, "win.backend", "backend");
  gtk_widget_class_install_property_action (widget_class, "win.colormap", "colormap");
  gtk_widget_class_install_property_action (widget_class, "win.auto-contrast", "auto-contrast");
  gtk_widget_class_install_property_action (widget_class, "win.show-sinogram", "show-sinogram");
}
