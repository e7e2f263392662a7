/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include "tomo-connect-dialog.h"
#include "tomo-live-link.h"

typedef struct
{
  TomoWindow  *window;
  GtkWindow   *dialog;
  GtkEntry    *url;
  GtkDropDown *protocol;
  GtkDropDown *socket;
  GtkSpinButton *projections;   /* JSON: frames carry no geometry */
  GtkSpinButton *angle_range;
  GtkLabel    *message;
} Dialog;

static void
connect_clicked (GtkButton *button,
                 Dialog    *d)
{
  g_autoptr(GError) error = NULL;
  TomoLiveReceiverOptions options;
  g_autofree char *url = g_strdup (gtk_editable_get_text (GTK_EDITABLE (d->url)));

  tomo_live_receiver_options_init (&options);
  options.url = url;
  options.protocol = gtk_drop_down_get_selected (d->protocol) == 1 ? TOMO_LIVE_PROTOCOL_JSON
                                                                     : TOMO_LIVE_PROTOCOL_TOMOP;
  options.reply = gtk_drop_down_get_selected (d->socket) == 1;
  if (options.protocol == TOMO_LIVE_PROTOCOL_JSON)
    {
      options.n_projections = (guint) gtk_spin_button_get_value_as_int (d->projections);
      options.angle_range_deg = gtk_spin_button_get_value (d->angle_range);
    }
  if (!tomo_live_link_attach (d->window, &options, &error))
    {
      gtk_label_set_text (d->message, error->message);
      gtk_widget_set_visible (GTK_WIDGET (d->message), TRUE);
      return;
    }
  gtk_window_destroy (d->dialog);
}

static void
cancel_clicked (GtkButton *button,
                Dialog    *d)
{
  gtk_window_destroy (d->dialog);
}

/* The projection count and range are JSON's: TomoPackets announce theirs. */
static void
protocol_changed (GObject    *dropdown,
                  GParamSpec *pspec,
                  Dialog     *d)
{
  gboolean json = gtk_drop_down_get_selected (d->protocol) == 1;

  gtk_widget_set_sensitive (GTK_WIDGET (d->projections), json);
  gtk_widget_set_sensitive (GTK_WIDGET (d->angle_range), json);
}

static GtkWidget *
row (GtkGrid    *grid,
     int         y,
     const char *label,
     GtkWidget  *widget)
{
  GtkWidget *l = gtk_label_new_with_mnemonic (label);

  gtk_label_set_xalign (GTK_LABEL (l), 1.0f);
  gtk_label_set_mnemonic_widget (GTK_LABEL (l), widget);
  gtk_grid_attach (grid, l, 0, y, 1, 1);
  gtk_widget_set_hexpand (widget, TRUE);
  gtk_grid_attach (grid, widget, 1, y, 1, 1);
  return widget;
}

GtkWindow *
tomo_connect_dialog_present (TomoWindow *window)
{
  static const char *const protocols[] = { "TomoPackets (RECAST3D)", "JSON header + raw frame", NULL };
  static const char *const sockets[] = { "PULL", "REP (answer each message)", NULL };
  Dialog *d = g_new0 (Dialog, 1);
  GtkWidget *box, *grid, *buttons, *cancel, *connect;

  d->window = window;
  d->dialog = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_title (d->dialog, "Connect to a live scan");
  gtk_window_set_transient_for (d->dialog, GTK_WINDOW (window));
  gtk_window_set_modal (d->dialog, TRUE);
  gtk_window_set_default_size (d->dialog, 460, -1);
  g_object_set_data_full (G_OBJECT (d->dialog), "tomo-connect", d, g_free);

  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_margin_start (box, 18);
  gtk_widget_set_margin_end (box, 18);
  gtk_widget_set_margin_top (box, 18);
  gtk_widget_set_margin_bottom (box, 18);
  grid = gtk_grid_new ();
  gtk_grid_set_row_spacing (GTK_GRID (grid), 8);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 12);
  d->url = GTK_ENTRY (row (GTK_GRID (grid), 0, "_Listen on", gtk_entry_new ()));
  gtk_widget_set_name (GTK_WIDGET (d->url), "url");
  gtk_editable_set_text (GTK_EDITABLE (d->url), "tcp://*:5558");
  gtk_entry_set_activates_default (d->url, TRUE);
  d->protocol = GTK_DROP_DOWN (row (GTK_GRID (grid), 1, "_Protocol", gtk_drop_down_new_from_strings (protocols)));
  gtk_widget_set_name (GTK_WIDGET (d->protocol), "protocol");
  d->socket = GTK_DROP_DOWN (row (GTK_GRID (grid), 2, "_Socket", gtk_drop_down_new_from_strings (sockets)));
  d->projections = GTK_SPIN_BUTTON (row (GTK_GRID (grid), 3, "P_rojections",
                                         gtk_spin_button_new_with_range (0, 10000000, 1)));
  gtk_widget_set_name (GTK_WIDGET (d->projections), "projections");
  gtk_widget_set_tooltip_text (GTK_WIDGET (d->projections),
                               "JSON: projections of one rotation (--projections), for the incremental slice; "
                               "0: the scan grows with the frames and is reconstructed whole");
  d->angle_range = GTK_SPIN_BUTTON (row (GTK_GRID (grid), 4, "_Angle range (°)",
                                         gtk_spin_button_new_with_range (1, 360000, 1)));
  gtk_widget_set_name (GTK_WIDGET (d->angle_range), "angle-range");
  gtk_spin_button_set_digits (d->angle_range, 1);
  gtk_spin_button_set_value (d->angle_range, 180);
  gtk_widget_set_tooltip_text (GTK_WIDGET (d->angle_range),
                               "JSON: the range evenly spaced angles cover, for frames without “angle” "
                               "(--angle-range; 360 for a full turn)");
  gtk_box_append (GTK_BOX (box), grid);
  {
    GtkWidget *hint = gtk_label_new ("Projections and angle range are for JSON frames, which carry no geometry "
                                     "(TomoPackets announce theirs). 0 projections: the scan grows with the "
                                     "frames and is reconstructed whole.");

    gtk_label_set_wrap (GTK_LABEL (hint), TRUE);
    gtk_label_set_max_width_chars (GTK_LABEL (hint), 50);
    gtk_label_set_xalign (GTK_LABEL (hint), 0.0f);
    gtk_widget_add_css_class (hint, "dim-label");
    gtk_box_append (GTK_BOX (box), hint);
  }

  d->message = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (d->message, TRUE);
  gtk_label_set_xalign (d->message, 0.0f);
  gtk_widget_add_css_class (GTK_WIDGET (d->message), "error");
  gtk_widget_set_visible (GTK_WIDGET (d->message), FALSE);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (d->message));

  buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_set_halign (buttons, GTK_ALIGN_END);
  cancel = gtk_button_new_with_mnemonic ("_Cancel");
  connect = gtk_button_new_with_mnemonic ("C_onnect");
  gtk_widget_add_css_class (connect, "suggested-action");
  gtk_box_append (GTK_BOX (buttons), cancel);
  gtk_box_append (GTK_BOX (buttons), connect);
  gtk_box_append (GTK_BOX (box), buttons);
  gtk_window_set_child (d->dialog, box);
  gtk_window_set_default_widget (d->dialog, connect);

  g_signal_connect (d->protocol, "notify::selected", G_CALLBACK (protocol_changed), d);
  protocol_changed (G_OBJECT (d->protocol), NULL, d);
  g_signal_connect (connect, "clicked", G_CALLBACK (connect_clicked), d);
  g_signal_connect (cancel, "clicked", G_CALLBACK (cancel_clicked), d);
  gtk_window_present (d->dialog);
  return d->dialog;
}
