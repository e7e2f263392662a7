/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-param-panel-private.h"
#include "tomo-sinogram-view.h"
#include "tomo-geometry.h"
#include "tomo-window.h"

G_BEGIN_DECLS

/* What the window asks the engine for: one struct, so a request, an export
 * and a saved parameter file all read the same values. */
typedef struct
{
  double center;
  guint row;
  TomoFilterType filter;
  TomoInterp interp;
  guint n_slices;
  int kernel;            /* TomoKernel */
  TomoRoi roi;
} TomoWindowParams;

/* Engine callbacks may arrive after the window is gone; they find it
 * through a weak reference that lives as long as the engine. */
typedef struct
{
  GWeakRef window;
} TomoWindowLink;

struct _TomoWindow
{
  GtkApplicationWindow parent_instance;

  /* template */
  GtkLabel *subtitle_label;
  GtkInfoBar *banner;
  GtkLabel *banner_label;
  GtkStack *main_stack;        /* "empty" until a scan is open, then "scan" */
  GtkStack *view_stack;        /* the views: "slice", and those added later */
  GtkStackSwitcher *view_switcher;
  GtkScrolledWindow *panel_scroller;
  TomoParamPanel *panel;
  TomoSliceView *slice_view;
  GtkLabel *rows_label;
  GtkRevealer *sinogram_revealer;
  TomoSinogramView *sinogram_view;
  GtkLabel *device_label;
  GtkLabel *status_label;
  GtkLabel *diagnostics_label;
  GtkLabel *pointer_label;
  GtkProgressBar *progress_bar;
  GtkButton *cancel_button;
  GtkRevealer *toast_revealer;
  GtkLabel *toast_label;
  GMenu *recent_section;

  GSettings *settings;
  TomoEngine *engine;
  TomoWindowLink *link;
  TomoScan *scan;              /* as reconstructed: base_scan in its geometry */
  TomoScan *base_scan;         /* opened_scan corrected for the axis tilt */
  TomoScan *opened_scan;       /* as opened */
  double tilt;                 /* the axis tilt corrected, degrees (0: none) */
  char *geometry_id;           /* the panel's geometry choice now shown */
  gboolean geometry_syncing;
  TomoGeometryPlan plan;       /* how scan presents base_scan (have_plan: not live) */
  gboolean have_plan;
  /* Column of the presented rows (what the engine reconstructs, what
   * params.center counts in) minus the detector column it shows: where
   * the offset geometry's stitched rows start, left of the detector's
   * first column; 0 in every other geometry.  The centre a user sees,
   * types and saves is the detector column, as on the command line. */
  double center_shift;
  GKeyFile *pending_params;    /* loaded, waiting for their geometry to be shown */
  gboolean center_held;        /* loaded parameters set it: no estimate moves it */
  double live_center;          /* a live scan's centre when it was shown (NAN: a file);
                                * moved since, the estimate at its end leaves it */
  GCancellable *load_cancellable;
  GCancellable *export_cancellable;
  guint pulse_id;
  guint request_idle_id;
  guint restitch_id;           /* offset axis: stitch again about the centre moved to */
  gboolean restitching;        /* the scan now shown is the last one stitched anew */
  guint toast_id;
  char *toast_folder;
  double panel_pointer_x, panel_pointer_y;

  TomoWindowParams params;
  TomoBackend backend;
  gboolean auto_contrast;
  gboolean show_sinogram;
  gboolean applying_auto;
  gboolean device_stats_missing; /* GPU slices without host data came without statistics */
  char *error_message;
  char *backend_note;          /* why the backend differs from the one asked for */
};

/* tomo-window.c */
void  _tomo_window_show_slice     (TomoWindow *self,
                                   TomoSlice  *slice);
/* `center` in the presented rows, kept to the 0.01 px of the detector
 * column shown. */
void  _tomo_window_set_center     (TomoWindow *self,
                                   double      center);
/* The detector column a centre in the presented rows stands for, to the
 * 0.01 px shown. */
double _tomo_window_detector_center (TomoWindow *self,
                                     double      center);
/* The presented rows change their first column by `shift` (the scan's
 * geometry): the centre stays on its detector column. */
void  _tomo_window_set_center_shift (TomoWindow *self,
                                     double      shift);
void  _tomo_window_set_row        (TomoWindow *self,
                                   guint       row);
void  _tomo_window_set_roi        (TomoWindow *self,
                                   guint       x,
                                   guint       y,
                                   guint       width,
                                   guint       height);
void  _tomo_window_set_busy       (TomoWindow *self,
                                   const char *text,
                                   gboolean    pulse);
void  _tomo_window_show_toast     (TomoWindow *self,
                                   const char *message,
                                   const char *folder);
/* How writing (or reading) the file `path` went: with `error` NULL, a toast
 * "`done` PATH" with a link to its folder; else the error banner
 * "`failed`: MESSAGE". */
void  _tomo_window_report_file    (TomoWindow   *self,
                                   const char   *path,
                                   const GError *error,
                                   const char   *done,
                                   const char   *failed);
/* The scan's folder, else the last folder used; NULL when neither exists. */
char *_tomo_window_dup_folder     (TomoWindow *self);

/* tomo-window-actions.c */
/* Geometry (tomo-window-geometry.c). */
/* `center`: the axis on the detector, NAN: estimated where needed. */
TomoScan *_tomo_window_geometry_present (TomoScan         *base,
                                         TomoGeometryKind  kind,
                                         double            center,
                                         TomoGeometryPlan *plan,
                                         GError          **error);
/* Shows the scan as opened in `kind` (the panel's choice too), in the
 * background; the offset geometry about the axis `center` (NAN: found). */
void  _tomo_window_geometry_show    (TomoWindow       *self,
                                     TomoGeometryKind  kind,
                                     double            center);
/* A scan opened (plan: the Auto choice) or, plan NULL, a live scan. */
void  _tomo_window_geometry_opened  (TomoWindow             *self,
                                     TomoScan               *base,
                                     const TomoGeometryPlan *plan);
void  _tomo_window_geometry_setup   (TomoWindow *self);
/* The offset geometry: the rows stitched again about the centre the
 * control shows, where it moved off the one they are stitched about; the
 * row, the region, the views and an open sweep (it stitches each of its
 * candidates itself) stay. */
void  _tomo_window_geometry_restitch (TomoWindow *self);
/* The axis tilt corrected (degrees, |tilt| ≤ TOMO_GEOMETRY_MAX_TILT):
 * the rows shown again in the same geometry, about the same centre; the
 * row, the region and the views stay.  Not for a live scan. */
void  _tomo_window_set_tilt         (TomoWindow *self,
                                     double      tilt);
/* The scan shown was replaced under the same parameters: a new slice,
 * and the views told (the centre's notify). */
void  _tomo_window_refresh          (TomoWindow *self);
/* A restitch still waiting for the centre to rest, done now (an export
 * must write the rows about the centre shown); TRUE where it ran. */
gboolean _tomo_window_flush_restitch (TomoWindow *self);
/* (Again) in a third of a second. */
void  _tomo_window_schedule_restitch (TomoWindow *self);
/* The centre control's range for the scan shown: its stitched columns,
 * within the detector for an offset axis (the axis is on it). */
void  _tomo_window_configure_center (TomoWindow *self);
void  _tomo_window_hide_error       (TomoWindow *self);
/* The subtitle and its tooltip from the scan as opened, its geometry and
 * the axis tilt corrected. */
void  _tomo_window_update_subtitle  (TomoWindow *self);
/* Shows `scan` (base_scan in another geometry); the offset geometry puts
 * the centre on its axis. */
void  _tomo_window_present_scan     (TomoWindow             *self,
                                     TomoScan               *scan,
                                     const TomoGeometryPlan *plan);

void  _tomo_window_class_add_actions (GtkWidgetClass *widget_class);
void  _tomo_window_add_view_shortcuts (TomoWindow *self);
void  _tomo_window_update_actions (TomoWindow *self);
/* Fills Open Recent from the desktop's recent files that tomolive opened. */
void  _tomo_window_update_recent  (TomoWindow *self);

/* tomo-window-params.c: "<scan>.tomolive" beside the scan */
char     *_tomo_window_params_path (TomoWindow *self);
gboolean  _tomo_window_save_params (TomoWindow *self,
                                    GError    **error);
gboolean  _tomo_window_load_params (TomoWindow *self,
                                    GError    **error);
/* The geometry of loaded parameters is shown now: the rest of them apply. */
void      _tomo_window_apply_pending_params (TomoWindow *self);

/* tomo-window-export.c */
void  _tomo_window_export_volume_chosen (TomoWindow *self,
                                         GFile      *file);

G_END_DECLS
