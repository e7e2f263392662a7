/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>

#include "tomo-param-panel-private.h"
#include "tomo-ui-private.h"

G_DEFINE_FINAL_TYPE (TomoParamPanel, tomo_param_panel, GTK_TYPE_BOX)

/* Half the span of the fine centre slider, in detector pixels: over ~200
 * screen pixels of slider that is 0.05 px per pixel of drag. */
#define FINE_SPAN 5.0

/* Re-centres the fine centre slider on the centre's current value. */
static void
tomo_param_panel_recenter_fine (TomoParamPanel *self)
{
  double c = gtk_adjustment_get_value (self->center_adjustment);
  double lower = gtk_adjustment_get_lower (self->center_adjustment);
  double upper = gtk_adjustment_get_upper (self->center_adjustment);

  g_return_if_fail (TOMO_IS_PARAM_PANEL (self));

  self->syncing = TRUE;
  gtk_adjustment_configure (self->fine_adjustment, c,
                            MAX (lower, c - FINE_SPAN), MIN (upper, c + FINE_SPAN),
                            0.01, 0.1, 0);
  self->syncing = FALSE;
}

static void
on_fine_changed (TomoParamPanel *self)
{
  if (!self->syncing)
    gtk_adjustment_set_value (self->center_adjustment,
                              gtk_adjustment_get_value (self->fine_adjustment));
}

static void
on_center_changed (TomoParamPanel *self)
{
  /* While the fine slider is dragged its range stays put under the pointer;
   * any other change of the centre moves the range with it. */
  if (!self->fine_dragging)
    tomo_param_panel_recenter_fine (self);
}

static gboolean
on_fine_event (GtkEventControllerLegacy *controller,
               GdkEvent                 *event,
               TomoParamPanel           *self)
{
  GdkEventType type = gdk_event_get_event_type (event);

  if (type == GDK_BUTTON_PRESS || type == GDK_TOUCH_BEGIN)
    self->fine_dragging = TRUE;
  else if (type == GDK_BUTTON_RELEASE || type == GDK_TOUCH_END || type == GDK_TOUCH_CANCEL)
    {
      self->fine_dragging = FALSE;
      tomo_param_panel_recenter_fine (self);
    }
  return GDK_EVENT_PROPAGATE;
}

/* ---- spin buttons that only take numbers ---------------------------------- */

static gboolean
clear_hint_cb (gpointer data)
{
  GtkWidget *spin = data;

  gtk_widget_remove_css_class (spin, "error");
  gtk_widget_set_tooltip_text (spin, g_object_get_data (G_OBJECT (spin), "tomo-tooltip"));
  g_object_set_data (G_OBJECT (spin), "tomo-hint-id", NULL);
  return G_SOURCE_REMOVE;
}

/* A spin button parses its text strictly: a number, nothing else.  Anything
 * else keeps the old value (update policy if-valid) and says so, instead of
 * GTK's default of committing 0 or the number's prefix. */
static int
on_spin_input (GtkSpinButton *spin,
               double        *value)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (spin));
  g_autofree char *trimmed = g_strstrip (g_strdup (text));
  char *end = NULL;
  double v;
  guint id;

  v = g_ascii_strtod (trimmed, &end);
  if (trimmed[0] != '\0' && end != NULL && *end == '\0' && isfinite (v))
    {
      *value = v;
      return TRUE;
    }

  {
    g_autofree char *hint = g_strdup_printf ("“%s” is not a number: the value stays %.*f",
                                             trimmed, gtk_spin_button_get_digits (spin),
                                             gtk_spin_button_get_value (spin));

    gtk_widget_add_css_class (GTK_WIDGET (spin), "error");
    gtk_widget_set_tooltip_text (GTK_WIDGET (spin), hint);
    gtk_widget_error_bell (GTK_WIDGET (spin));
  }
  id = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (spin), "tomo-hint-id"));
  if (id != 0)
    g_source_remove (id);
  id = g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, 4, clear_hint_cb,
                                   g_object_ref (spin), g_object_unref);
  g_object_set_data (G_OBJECT (spin), "tomo-hint-id", GUINT_TO_POINTER (id));
  return GTK_INPUT_ERROR;
}

static void
make_strict (GtkSpinButton *spin)
{
  g_object_set_data_full (G_OBJECT (spin), "tomo-tooltip",
                          gtk_widget_get_tooltip_text (GTK_WIDGET (spin))
                            ? g_strdup (gtk_widget_get_tooltip_text (GTK_WIDGET (spin))) : NULL,
                          g_free);
  gtk_spin_button_set_update_policy (spin, GTK_UPDATE_IF_VALID);
  g_signal_connect (spin, "input", G_CALLBACK (on_spin_input), NULL);
}

/* ---- GObject ----------------------------------------------------------------- */

static void
tomo_param_panel_class_init (TomoParamPanelClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  _tomo_ui_ensure_resources ();
  g_type_ensure (TOMO_TYPE_HISTOGRAM);
  g_type_ensure (TOMO_TYPE_CENTER_FINDER);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/tomolive/Tomolive/tomo-param-panel.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, TomoParamPanel, name)
  BIND (center_adjustment);
  BIND (center_finder);
  BIND (fine_adjustment);
  BIND (row_adjustment);
  BIND (min_adjustment);
  BIND (max_adjustment);
  BIND (export_first_adjustment);
  BIND (export_last_adjustment);
  BIND (tilt_adjustment);
  BIND (center_scale);
  BIND (fine_scale);
  BIND (center_pin);
  BIND (center_spin);
  BIND (row_spin);
  BIND (min_spin);
  BIND (max_spin);
  BIND (export_first_spin);
  BIND (export_last_spin);
  BIND (tilt_spin);
  BIND (filter_combo);
  BIND (geometry_combo);
  BIND (kernel_combo);
  BIND (colormap_combo);
  BIND (gpu_button);
  BIND (roi_toggle);
  BIND (roi_label);
  BIND (histogram);
#undef BIND
}

static void
tomo_param_panel_init (TomoParamPanel *self)
{
  GtkEventController *legacy;
  GtkSpinButton *spins[] = { NULL, NULL, NULL, NULL, NULL, NULL, NULL };

  gtk_widget_init_template (GTK_WIDGET (self));

  g_signal_connect_swapped (self->fine_adjustment, "value-changed", G_CALLBACK (on_fine_changed), self);
  g_signal_connect_swapped (self->center_adjustment, "value-changed", G_CALLBACK (on_center_changed), self);
  g_signal_connect_swapped (self->center_adjustment, "changed", G_CALLBACK (on_center_changed), self);
  legacy = gtk_event_controller_legacy_new ();
  gtk_event_controller_set_propagation_phase (legacy, GTK_PHASE_CAPTURE);
  g_signal_connect (legacy, "event", G_CALLBACK (on_fine_event), self);
  gtk_widget_add_controller (GTK_WIDGET (self->fine_scale), legacy);
  tomo_param_panel_recenter_fine (self);

  spins[0] = self->center_spin;
  spins[1] = self->row_spin;
  spins[2] = self->min_spin;
  spins[3] = self->max_spin;
  spins[4] = self->export_first_spin;
  spins[5] = self->export_last_spin;
  spins[6] = self->tilt_spin;
  for (guint i = 0; i < G_N_ELEMENTS (spins); i++)
    make_strict (spins[i]);
}
