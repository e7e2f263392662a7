/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-center-finder.h"
#include "tomo-histogram.h"
#include "tomo-param-panel.h"

G_BEGIN_DECLS

struct _TomoParamPanel
{
  GtkBox parent_instance;

  GtkAdjustment *center_adjustment;
  GtkAdjustment *fine_adjustment;
  GtkAdjustment *row_adjustment;
  GtkAdjustment *min_adjustment;
  GtkAdjustment *max_adjustment;
  GtkAdjustment *export_first_adjustment;
  GtkAdjustment *export_last_adjustment;
  GtkAdjustment *tilt_adjustment;
  GtkScale *center_scale;
  GtkScale *fine_scale;
  GtkToggleButton *center_pin;  /* keep the centre when a new scan opens */
  TomoCenterFinder *center_finder;
  GtkSpinButton *center_spin;
  GtkSpinButton *row_spin;
  GtkSpinButton *min_spin;
  GtkSpinButton *max_spin;
  GtkSpinButton *export_first_spin;
  GtkSpinButton *export_last_spin;
  GtkSpinButton *tilt_spin;
  GtkComboBoxText *filter_combo;
  GtkComboBoxText *geometry_combo;
  GtkComboBoxText *kernel_combo;
  GtkComboBoxText *colormap_combo;
  GtkToggleButton *gpu_button;
  GtkToggleButton *roi_toggle;
  GtkLabel *roi_label;
  TomoHistogram *histogram;

  gboolean fine_dragging;
  gboolean syncing;
};

G_END_DECLS
