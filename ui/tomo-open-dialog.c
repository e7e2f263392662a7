/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <errno.h>
#include <string.h>
#include <glib/gstdio.h>

#include "tomo-open-dialog.h"

struct _TomoOpenDialog
{
  GtkWindow parent_instance;

  TomoWindow *window;
  GtkEntry *path_entry;
  GtkDropDown *format_drop;
  GtkEntry *flats_entry;
  GtkEntry *darks_entry;
  GtkEntry *angles_entry;
  GtkSpinButton *angle_range_spin;
  GtkCheckButton *sinogram_check;
  GtkCheckButton *linear_check;
  GtkSpinButton *raw_width_spin;
  GtkSpinButton *raw_height_spin;
  GtkSpinButton *raw_proj_spin;
  GtkDropDown *raw_dtype_drop;
  GtkSpinButton *raw_offset_spin;
  GtkCheckButton *raw_big_endian_check;
};

G_DEFINE_FINAL_TYPE (TomoOpenDialog, tomo_open_dialog, GTK_TYPE_WINDOW)

static const char *formats[] = { "auto", "dxchange", "nxtomo", "tiff", "raw", NULL };
static const char *dtypes[] = { "uint16", "uint8", "uint32", "float32", "float64", NULL };

/* ---- remembered per folder -------------------------------------------------- */

static char *
store_path (void)
{
  return g_build_filename (g_get_user_config_dir (), "tomolive", "open-options.ini", NULL);
}

static char *
folder_key (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    return g_canonicalize_filename (path, NULL);
  {
    g_autofree char *dir = g_path_get_dirname (path);
    return g_canonicalize_filename (dir, NULL);
  }
}

/* The text options kept per folder (an empty one stands for NULL). */
static const struct
{
  const char *key;
  gsize offset;
} string_options[] = {
  { "format", G_STRUCT_OFFSET (TomoOpenArgs, format) },
  { "flats", G_STRUCT_OFFSET (TomoOpenArgs, flats) },
  { "darks", G_STRUCT_OFFSET (TomoOpenArgs, darks) },
  { "angles", G_STRUCT_OFFSET (TomoOpenArgs, angles) },
  { "raw_dtype", G_STRUCT_OFFSET (TomoOpenArgs, raw_dtype) },
};

gboolean
tomo_open_args_recall (const char   *path,
                       TomoOpenArgs *a)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *file = store_path ();
  g_autofree char *key = folder_key (path);

  if (!g_key_file_load_from_file (kf, file, G_KEY_FILE_NONE, NULL)
      || !g_key_file_has_group (kf, key))
    return FALSE;

  tomo_open_args_clear (a);
  memset (a, 0, sizeof *a);
  for (guint i = 0; i < G_N_ELEMENTS (string_options); i++)
    {
      char **value = G_STRUCT_MEMBER_P (a, string_options[i].offset);

      *value = g_key_file_get_string (kf, key, string_options[i].key, NULL);
      if (*value != NULL && (*value)[0] == '\0')
        g_clear_pointer (value, g_free);
    }
  a->raw_width = g_key_file_get_integer (kf, key, "raw_width", NULL);
  a->raw_height = g_key_file_get_integer (kf, key, "raw_height", NULL);
  a->raw_n_proj = g_key_file_get_integer (kf, key, "raw_n_proj", NULL);
  a->raw_offset = g_key_file_get_int64 (kf, key, "raw_offset", NULL);
  a->raw_big_endian = g_key_file_get_boolean (kf, key, "raw_big_endian", NULL);
  a->angle_range = g_key_file_get_double (kf, key, "angle_range", NULL);
  a->already_sinogram = g_key_file_get_boolean (kf, key, "already_sinogram", NULL);
  a->already_linear = g_key_file_get_boolean (kf, key, "already_linear", NULL);
  return TRUE;
}

void
tomo_open_args_remember (const char         *path,
                         const TomoOpenArgs *a)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *file = store_path ();
  g_autofree char *dir = g_path_get_dirname (file);
  g_autofree char *key = folder_key (path);

  g_key_file_load_from_file (kf, file, G_KEY_FILE_KEEP_COMMENTS, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (string_options); i++)
    {
      const char *value = G_STRUCT_MEMBER (const char *, a, string_options[i].offset);

      g_key_file_set_string (kf, key, string_options[i].key, value ? value : "");
    }
  g_key_file_set_integer (kf, key, "raw_width", a->raw_width);
  g_key_file_set_integer (kf, key, "raw_height", a->raw_height);
  g_key_file_set_integer (kf, key, "raw_n_proj", a->raw_n_proj);
  g_key_file_set_int64 (kf, key, "raw_offset", a->raw_offset);
  g_key_file_set_boolean (kf, key, "raw_big_endian", a->raw_big_endian);
  g_key_file_set_double (kf, key, "angle_range", a->angle_range);
  g_key_file_set_boolean (kf, key, "already_sinogram", a->already_sinogram);
  g_key_file_set_boolean (kf, key, "already_linear", a->already_linear);

  if (g_mkdir_with_parents (dir, 0700) != 0 || !g_key_file_save_to_file (kf, file, &error))
    g_warning ("Could not remember the input options in %s: %s", file,
               error ? error->message : g_strerror (errno));
}

/* ---- the dialog ---------------------------------------------------------------- */

static guint
index_of (const char **names,
          const char  *name,
          guint        fallback)
{
  for (guint i = 0; name != NULL && names[i] != NULL; i++)
    if (g_str_equal (names[i], name))
      return i;
  return fallback;
}

static void
set_args (TomoOpenDialog     *self,
          const TomoOpenArgs *a)
{
  gtk_drop_down_set_selected (self->format_drop, index_of (formats, a->format, 0));
  gtk_editable_set_text (GTK_EDITABLE (self->flats_entry), a->flats ? a->flats : "");
  gtk_editable_set_text (GTK_EDITABLE (self->darks_entry), a->darks ? a->darks : "");
  gtk_editable_set_text (GTK_EDITABLE (self->angles_entry), a->angles ? a->angles : "");
  gtk_spin_button_set_value (self->angle_range_spin, a->angle_range > 0 ? a->angle_range : 180);
  gtk_check_button_set_active (self->sinogram_check, a->already_sinogram);
  gtk_check_button_set_active (self->linear_check, a->already_linear);
  gtk_spin_button_set_value (self->raw_width_spin, a->raw_width);
  gtk_spin_button_set_value (self->raw_height_spin, a->raw_height);
  gtk_spin_button_set_value (self->raw_proj_spin, a->raw_n_proj);
  gtk_drop_down_set_selected (self->raw_dtype_drop, index_of (dtypes, a->raw_dtype, 0));
  gtk_spin_button_set_value (self->raw_offset_spin, a->raw_offset);
  gtk_check_button_set_active (self->raw_big_endian_check, a->raw_big_endian);
}

static char *
entry_text (GtkEntry *entry)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));

  return text[0] != '\0' ? g_strdup (text) : NULL;
}

void
tomo_open_dialog_get_args (TomoOpenDialog *self,
                           TomoOpenArgs   *a)
{
  guint format = gtk_drop_down_get_selected (self->format_drop);

  g_return_if_fail (TOMO_IS_OPEN_DIALOG (self));

  memset (a, 0, sizeof *a);
  a->format = format > 0 && format < G_N_ELEMENTS (formats) - 1 ? g_strdup (formats[format]) : NULL;
  a->flats = entry_text (self->flats_entry);
  a->darks = entry_text (self->darks_entry);
  a->angles = entry_text (self->angles_entry);
  a->angle_range = gtk_spin_button_get_value (self->angle_range_spin);
  a->already_sinogram = gtk_check_button_get_active (self->sinogram_check);
  a->already_linear = gtk_check_button_get_active (self->linear_check);
  a->raw_width = gtk_spin_button_get_value_as_int (self->raw_width_spin);
  a->raw_height = gtk_spin_button_get_value_as_int (self->raw_height_spin);
  a->raw_n_proj = gtk_spin_button_get_value_as_int (self->raw_proj_spin);
  if (a->raw_width > 0)
    a->raw_dtype = g_strdup (dtypes[MIN (gtk_drop_down_get_selected (self->raw_dtype_drop),
                                         G_N_ELEMENTS (dtypes) - 2)]);
  a->raw_offset = (gint64) gtk_spin_button_get_value (self->raw_offset_spin);
  a->raw_big_endian = gtk_check_button_get_active (self->raw_big_endian_check);
}

void
tomo_open_dialog_set_path (TomoOpenDialog *self,
                           const char     *path)
{
  g_return_if_fail (TOMO_IS_OPEN_DIALOG (self));
  gtk_editable_set_text (GTK_EDITABLE (self->path_entry), path);
}

static void
on_path_changed (TomoOpenDialog *self)
{
  const char *path = gtk_editable_get_text (GTK_EDITABLE (self->path_entry));
  TomoOpenArgs a = { 0 };

  if (path[0] != '\0' && tomo_open_args_recall (path, &a))
    set_args (self, &a);
  tomo_open_args_clear (&a);
}

static void
on_open (TomoOpenDialog *self)
{
  const char *path = gtk_editable_get_text (GTK_EDITABLE (self->path_entry));
  g_autoptr(GFile) file = NULL;
  TomoOpenArgs a;

  if (path[0] == '\0')
    {
      gtk_widget_add_css_class (GTK_WIDGET (self->path_entry), "error");
      gtk_widget_grab_focus (GTK_WIDGET (self->path_entry));
      return;
    }
  tomo_open_dialog_get_args (self, &a);
  file = g_file_new_for_path (path);
  tomo_window_open_with_args (self->window, file, &a);
  tomo_open_args_clear (&a);
  gtk_window_destroy (GTK_WINDOW (self));
}

static void
chosen (GtkNativeDialog *chooser,
        int              response,
        TomoOpenDialog  *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      GtkEntry *target = g_object_get_data (G_OBJECT (chooser), "tomo-entry");

      if (path != NULL)
        gtk_editable_set_text (GTK_EDITABLE (target), path);
    }
  g_object_unref (chooser);
}

static void
on_browse (GtkButton      *button,
           TomoOpenDialog *self)
{
  GtkEntry *target = g_object_get_data (G_OBJECT (button), "tomo-entry");
  gboolean folder = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "tomo-folder"));
  GtkFileChooserNative *chooser;
  const char *current = gtk_editable_get_text (GTK_EDITABLE (self->path_entry));

  chooser = gtk_file_chooser_native_new (folder ? "Choose a Folder" : "Choose a File", GTK_WINDOW (self),
                                         folder ? GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER
                                                : GTK_FILE_CHOOSER_ACTION_OPEN, NULL, NULL);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (chooser), TRUE);
  if (current[0] != '\0')
    {
      g_autofree char *dir = g_file_test (current, G_FILE_TEST_IS_DIR) ? g_strdup (current)
                                                                       : g_path_get_dirname (current);
      g_autoptr(GFile) d = g_file_new_for_path (dir);

      gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (chooser), d, NULL);
    }
  g_object_set_data (G_OBJECT (chooser), "tomo-entry", target);
  g_signal_connect (chooser, "response", G_CALLBACK (chosen), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* A row of the form: label, then the field (with a file button). */
static GtkWidget *
add_row (GtkGrid    *grid,
         int         row,
         const char *label,
         GtkWidget  *field,
         const char *tooltip)
{
  GtkWidget *l = gtk_label_new (label);

  gtk_label_set_xalign (GTK_LABEL (l), 0);
  gtk_widget_set_hexpand (field, TRUE);
  if (tooltip != NULL)
    gtk_widget_set_tooltip_text (field, tooltip);
  gtk_grid_attach (grid, l, 0, row, 1, 1);
  gtk_grid_attach (grid, field, 1, row, 1, 1);
  return field;
}

static GtkWidget *
path_field (TomoOpenDialog *self,
            GtkEntry      **entry,
            gboolean        with_folder)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
  GtkWidget *file_button = gtk_button_new_with_label ("File…");

  *entry = GTK_ENTRY (gtk_entry_new ());
  gtk_widget_set_hexpand (GTK_WIDGET (*entry), TRUE);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (*entry));
  g_object_set_data (G_OBJECT (file_button), "tomo-entry", *entry);
  g_signal_connect (file_button, "clicked", G_CALLBACK (on_browse), self);
  gtk_box_append (GTK_BOX (box), file_button);
  if (with_folder)
    {
      GtkWidget *folder_button = gtk_button_new_with_label ("Folder…");

      g_object_set_data (G_OBJECT (folder_button), "tomo-entry", *entry);
      g_object_set_data (G_OBJECT (folder_button), "tomo-folder", GINT_TO_POINTER (TRUE));
      g_signal_connect (folder_button, "clicked", G_CALLBACK (on_browse), self);
      gtk_box_append (GTK_BOX (box), folder_button);
    }
  return box;
}

static GtkSpinButton *
int_spin (double upper)
{
  GtkWidget *spin = gtk_spin_button_new_with_range (0, upper, 1);

  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), 0);
  gtk_spin_button_set_update_policy (GTK_SPIN_BUTTON (spin), GTK_UPDATE_IF_VALID);
  return GTK_SPIN_BUTTON (spin);
}

static void
tomo_open_dialog_class_init (TomoOpenDialogClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
tomo_open_dialog_init (TomoOpenDialog *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  GtkGrid *grid = GTK_GRID (gtk_grid_new ());
  GtkWidget *buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  GtkWidget *cancel = gtk_button_new_with_mnemonic ("_Cancel");
  GtkWidget *open = gtk_button_new_with_mnemonic ("_Open");
  GtkWidget *raw_label = gtk_label_new ("Raw binary (projections × rows × columns)");
  int row = 0;

  gtk_window_set_title (GTK_WINDOW (self), "Open Scan with Options");
  gtk_window_set_modal (GTK_WINDOW (self), TRUE);
  gtk_window_set_default_size (GTK_WINDOW (self), 560, -1);

  gtk_grid_set_row_spacing (grid, 6);
  gtk_grid_set_column_spacing (grid, 10);
  for (GtkWidget *w = box; w != NULL; w = NULL)
    {
      gtk_widget_set_margin_start (w, 16);
      gtk_widget_set_margin_end (w, 16);
      gtk_widget_set_margin_top (w, 16);
      gtk_widget_set_margin_bottom (w, 16);
    }

  add_row (grid, row++, "Scan", path_field (self, &self->path_entry, TRUE),
           "A HDF5/NeXus file, a TIFF stack's folder or glob, or a raw file");
  self->format_drop = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (formats));
  add_row (grid, row++, "Format", GTK_WIDGET (self->format_drop), "auto: from the file's name and contents");
  add_row (grid, row++, "Flat fields", path_field (self, &self->flats_entry, TRUE),
           "TIFF/raw: file, folder or glob of flat fields");
  add_row (grid, row++, "Dark fields", path_field (self, &self->darks_entry, TRUE),
           "TIFF/raw: file, folder or glob of dark fields");
  add_row (grid, row++, "Angles", path_field (self, &self->angles_entry, FALSE),
           "Text file with one angle in degrees per projection; empty: evenly spaced");
  self->angle_range_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (1, 360, 1));
  gtk_spin_button_set_value (self->angle_range_spin, 180);
  add_row (grid, row++, "Angle range (°)", GTK_WIDGET (self->angle_range_spin),
           "Range of evenly spaced angles when the file has none");
  self->sinogram_check = GTK_CHECK_BUTTON (gtk_check_button_new_with_label ("Already normalised (no flat/dark fields)"));
  gtk_grid_attach (grid, GTK_WIDGET (self->sinogram_check), 1, row++, 1, 1);
  self->linear_check = GTK_CHECK_BUTTON (gtk_check_button_new_with_label ("Already line integrals (no −log)"));
  gtk_grid_attach (grid, GTK_WIDGET (self->linear_check), 1, row++, 1, 1);

  gtk_label_set_xalign (GTK_LABEL (raw_label), 0);
  gtk_widget_add_css_class (raw_label, "heading");
  gtk_widget_set_margin_top (raw_label, 8);
  gtk_grid_attach (grid, raw_label, 0, row++, 2, 1);
  self->raw_width_spin = int_spin (1 << 20);
  add_row (grid, row++, "Columns", GTK_WIDGET (self->raw_width_spin), "0: not a raw file");
  self->raw_height_spin = int_spin (1 << 20);
  add_row (grid, row++, "Rows", GTK_WIDGET (self->raw_height_spin), NULL);
  self->raw_proj_spin = int_spin (1 << 24);
  add_row (grid, row++, "Projections", GTK_WIDGET (self->raw_proj_spin), NULL);
  self->raw_dtype_drop = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (dtypes));
  add_row (grid, row++, "Data type", GTK_WIDGET (self->raw_dtype_drop), NULL);
  self->raw_offset_spin = int_spin (1e15);
  add_row (grid, row++, "Header bytes", GTK_WIDGET (self->raw_offset_spin), "Bytes to skip at the start");
  self->raw_big_endian_check = GTK_CHECK_BUTTON (gtk_check_button_new_with_label ("Big-endian"));
  gtk_grid_attach (grid, GTK_WIDGET (self->raw_big_endian_check), 1, row++, 1, 1);

  gtk_widget_set_halign (buttons, GTK_ALIGN_END);
  gtk_widget_add_css_class (open, "suggested-action");
  gtk_box_append (GTK_BOX (buttons), cancel);
  gtk_box_append (GTK_BOX (buttons), open);
  g_signal_connect_swapped (cancel, "clicked", G_CALLBACK (gtk_window_destroy), self);
  g_signal_connect_swapped (open, "clicked", G_CALLBACK (on_open), self);
  g_signal_connect_swapped (self->path_entry, "changed", G_CALLBACK (on_path_changed), self);
  g_signal_connect_swapped (self->path_entry, "activate", G_CALLBACK (on_open), self);

  gtk_box_append (GTK_BOX (box), GTK_WIDGET (grid));
  gtk_box_append (GTK_BOX (box), buttons);
  gtk_window_set_child (GTK_WINDOW (self), box);
  gtk_window_set_default_widget (GTK_WINDOW (self), open);
}

TomoOpenDialog *
tomo_open_dialog_new (TomoWindow *window)
{
  TomoOpenDialog *self = g_object_new (TOMO_TYPE_OPEN_DIALOG,
                                       "transient-for", window,
                                       "destroy-with-parent", TRUE,
                                       NULL);

  self->window = window;
  return self;
}
