/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gtk/gtk.h>

#include "tomo-application.h"
#include "tomo-center-sweep.h"
#include "tomo-test-util.h"
#include "tomo-volume-view.h"
#include "tomo-window.h"

/* The sample scan's rotation axis: (512 − 1)/2 + 3.37. */
#define TRUE_CENTER 258.87

/* One window on the sample scan, shared by the tests of a program. */
extern gboolean have_display;
extern TomoApplication *app;
extern TomoWindow *window;
extern char *tmpdir;

/* g_test_init (), then a temporary folder as XDG_CONFIG_HOME and
 * XDG_DATA_HOME (remembered options and recent files go there, not into the
 * user's own) and the display, if there is one. */
void      ui_test_init         (int        *argc,
                                char     ***argv);
/* g_test_run (), then closes the window and removes the temporary folder. */
int       ui_test_run          (void);
/* Iterates the main context until *flag is set; FALSE after timeout_s. */
gboolean  wait_for             (gboolean   *flag,
                                guint       timeout_s);
/* Sets window properties and waits until the slice they cause is shown. */
void      set_and_wait         (const char *property,
                                ...) G_GNUC_NULL_TERMINATED;
void      set_center_and_wait  (double      center);
guint8   *read_pixels          (guint      *w,
                                guint      *h);
gboolean  skip_without_display (void);
/* With $TOMO_SCREENSHOT_DIR set: after a second of frames, the screen into
 * that folder as `name`, by $TOMO_SCREENSHOT_CMD FILE (default ImageMagick's
 * `import -window root`; the GPU window's bundle has `xshot`). */
void      ui_test_screenshot   (const char *name);
/* The first descendant of `widget` (itself included) of `type`, depth
 * first; NULL if none. */
GtkWidget *ui_find_widget      (GtkWidget  *widget,
                                GType       type);
/* Some label of `widget`'s tree containing `text`. */
gboolean   ui_has_label        (GtkWidget  *widget,
                                const char *text);
/* The open sweep window, or NULL. */
TomoCenterSweep *ui_find_sweep (void);
/* Iterates the main context until the sweep has a result (at most 60 s). */
gboolean   ui_wait_sweep       (TomoCenterSweep *sweep);
/* Opens `path` and waits for "scan-loaded"; returns its outcome. */
gboolean  open_and_wait        (const char *path);
/* Opens the window on $TOMO_SAMPLE_SCAN once and waits for its first slice. */
void      ensure_window        (void);
/* In a test function returning void: returns where there is no display
 * (the test skipped), else ensure_window (). */
#define UI_TEST_REQUIRE_WINDOW() \
  G_STMT_START { if (skip_without_display ()) return; ensure_window (); } G_STMT_END
/* The window (1200 × 780, presented) as `window`, and its three views and
 * the stack they share with the slice view. */
TomoVolumeView *volume_window_new (GtkStack **stack);
/* A copy of what a pane of the three views shows (w × h floats). */
float    *volume_pane_data     (TomoVolumeView *view,
                                guint           pane,
                                guint          *w,
                                guint          *h);
void      on_shown             (TomoSliceView *view,
                                gpointer       data);
/* The slice the window exports and the one `tomolive` writes with `argv`
 * (its -o: `cli_path`) are equal up to float summation order. */
void      assert_export_matches_cli (const char  *ui_path,
                                     const char  *cli_path,
                                     const char **argv);
