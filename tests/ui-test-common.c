/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-tiff-writer.h"
#include "ui-test-common.h"

gboolean have_display;
TomoApplication *app;
TomoWindow *window;
char *tmpdir;

void
ui_test_init (int    *argc,
              char ***argv)
{
  g_test_init (argc, argv, NULL);
  tmpdir = g_dir_make_tmp ("tomo-ui-XXXXXX", NULL);
  g_assert_nonnull (tmpdir);
  g_setenv ("XDG_CONFIG_HOME", tmpdir, TRUE);
  g_setenv ("XDG_DATA_HOME", tmpdir, TRUE);
  have_display = gtk_init_check ();
}

int
ui_test_run (void)
{
  const char *argv_rm[] = { "rm", "-rf", tmpdir, NULL };
  int ret = g_test_run ();

  if (window != NULL)
    gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&app);
  g_spawn_sync (NULL, (char **) argv_rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  g_clear_pointer (&tmpdir, g_free);
  return ret;
}

void
ui_test_screenshot (const char *name)
{
  const char *dir = g_getenv ("TOMO_SCREENSHOT_DIR");
  const char *tool = g_getenv ("TOMO_SCREENSHOT_CMD");
  g_autofree char *cmd = NULL;

  if (dir == NULL)
    return;
  /* Let the frames be drawn first. */
  tomo_test_spin (1000);
  cmd = g_strdup_printf ("%s %s/%s", tool != NULL ? tool : "import -window root", dir, name);
  g_spawn_command_line_sync (cmd, NULL, NULL, NULL, NULL);
}

/* Iterates the main context until *flag is set; FALSE after timeout_s. */
gboolean
wait_for (gboolean *flag,
          guint     timeout_s)
{
  gboolean timed_out = FALSE;
  guint id = g_timeout_add_seconds (timeout_s, tomo_test_set_flag_cb, &timed_out);

  while (!*flag && !timed_out)
    g_main_context_iteration (NULL, TRUE);
  if (!timed_out)
    g_source_remove (id);
  return *flag;
}

void
on_shown (TomoSliceView *view,
          gpointer       data)
{
  *(gboolean *) data = TRUE;
}

/* Sets a window property and waits until the slice it causes is on screen. */
void
set_and_wait (const char *property,
              ...)
{
  TomoSliceView *view = tomo_window_get_slice_view (window);
  gboolean shown = FALSE;
  gulong id;
  va_list args;

  id = g_signal_connect (view, "slice-shown", G_CALLBACK (on_shown), &shown);
  va_start (args, property);
  g_object_set_valist (G_OBJECT (window), property, args);
  va_end (args);
  g_assert_true (wait_for (&shown, 60));
  g_signal_handler_disconnect (view, id);
}

void
set_center_and_wait (double center)
{
  /* Through the action, as a key binding or a menu would. */
  TomoSliceView *view = tomo_window_get_slice_view (window);
  gboolean shown = FALSE;
  gulong id;
  double current;

  /* No change, no new slice to wait for. */
  g_object_get (window, "center", &current, NULL);
  if (current == center && tomo_slice_view_get_slice (view) != NULL
      && tomo_slice_view_get_slice (view)->params.center == center)
    return;

  id = g_signal_connect (view, "slice-shown", G_CALLBACK (on_shown), &shown);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.set-center", "d", center));
  /* The window keeps the 0.01 px it shows. */
  g_object_get (window, "center", &center, NULL);
  /* A slice of an earlier centre may still be on its way to the screen. */
  do
    {
      shown = FALSE;
      g_assert_true (wait_for (&shown, 60));
    }
  while (tomo_slice_view_get_slice (view)->params.center != center);
  g_signal_handler_disconnect (view, id);
  g_assert_cmpfloat_with_epsilon (tomo_slice_view_get_slice (view)->params.center, center, 1e-9);
}

guint8 *
read_pixels (guint *w,
             guint *h)
{
  g_autoptr(GError) error = NULL;
  guint8 *pixels = tomo_slice_view_read_pixels (tomo_window_get_slice_view (window), w, h, &error);

  g_assert_no_error (error);
  g_assert_nonnull (pixels);
  return pixels;
}

GtkWidget *
ui_find_widget (GtkWidget *widget,
                GType      type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = ui_find_widget (c, type);

      if (found != NULL)
        return found;
    }
  return NULL;
}

gboolean
ui_has_label (GtkWidget  *widget,
              const char *text)
{
  if (GTK_IS_LABEL (widget) && strstr (gtk_label_get_text (GTK_LABEL (widget)), text) != NULL)
    return TRUE;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    if (ui_has_label (c, text))
      return TRUE;
  return FALSE;
}

TomoCenterSweep *
ui_find_sweep (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();   /* not owned */

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GtkWindow) w = g_list_model_get_item (toplevels, i);

      if (TOMO_IS_CENTER_SWEEP (w))
        return TOMO_CENTER_SWEEP (w);
    }
  return NULL;
}

gboolean
ui_wait_sweep (TomoCenterSweep *sweep)
{
  gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  guint n;
  const double *c, *s;

  while (g_get_monotonic_time () < end && !tomo_center_sweep_get_result (sweep, &n, &c, &s))
    g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
  return tomo_center_sweep_get_result (sweep, &n, &c, &s);
}

gboolean
skip_without_display (void)
{
  if (!have_display)
    {
      g_test_skip ("No display: gtk_init_check() failed (run under xvfb-run)");
      return TRUE;
    }
  return FALSE;
}

static void
on_loaded (TomoWindow *w,
           gboolean    ok,
           gpointer    data)
{
  ((gboolean *) data)[0] = TRUE;
  ((gboolean *) data)[1] = ok;
}

/* Opens `path` and waits for "scan-loaded"; returns its outcome. */
gboolean
open_and_wait (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  gboolean state[2] = { FALSE, FALSE };
  gulong id = g_signal_connect (window, "scan-loaded", G_CALLBACK (on_loaded), state);

  tomo_window_open (window, file);
  g_assert_true (wait_for (&state[0], 60));
  g_signal_handler_disconnect (window, id);
  return state[1];
}

void
ensure_window (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  gboolean shown = FALSE;
  gulong id;

  if (window != NULL)
    return;

  g_assert_nonnull (sample);
  app = tomo_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  window = tomo_window_new (GTK_APPLICATION (app));
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &window);
  gtk_window_set_default_size (GTK_WINDOW (window), 1100, 720);
  gtk_window_present (GTK_WINDOW (window));

  id = g_signal_connect (tomo_window_get_slice_view (window), "slice-shown", G_CALLBACK (on_shown), &shown);
  g_assert_true (open_and_wait (sample));
  g_assert_true (wait_for (&shown, 60));
  g_signal_handler_disconnect (tomo_window_get_slice_view (window), id);
}


TomoVolumeView *
volume_window_new (GtkStack **stack)
{
  TomoVolumeView *view;

  app = tomo_application_new (G_APPLICATION_NON_UNIQUE);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  window = tomo_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 780);
  gtk_window_present (GTK_WINDOW (window));
  *stack = GTK_STACK (gtk_widget_get_parent (GTK_WIDGET (tomo_window_get_slice_view (window))));
  view = TOMO_VOLUME_VIEW (gtk_stack_get_child_by_name (*stack, "volume"));
  g_assert_nonnull (view);
  return view;
}

float *
volume_pane_data (TomoVolumeView *view,
                  guint           pane,
                  guint          *w,
                  guint          *h)
{
  TomoSlice *slice = tomo_slice_view_get_slice (tomo_volume_view_get_pane (view, pane));

  g_assert_nonnull (slice);
  g_assert_nonnull (slice->data);
  *w = slice->width;
  *h = slice->height;
  return g_memdup2 (slice->data, sizeof (float) * slice->width * slice->height);
}

void
assert_export_matches_cli (const char  *ui_path,
                           const char  *cli_path,
                           const char **argv)
{
  g_autofree char *cli_err = NULL;
  g_autofree float *a = NULL, *b = NULL;
  g_autoptr(GError) error = NULL;
  guint aw, ah, an, bw, bh, bn;
  double max_diff = 0, max_abs = 0;
  int status;

  g_assert_true (tomo_window_export_slice_tiff (window, ui_path, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                               &cli_err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("tomolive reconstruct failed: %s", cli_err);

  a = tomo_tiff_read_float (ui_path, &aw, &ah, &an, &error);
  g_assert_no_error (error);
  b = tomo_tiff_read_float (cli_path, &bw, &bh, &bn, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (aw, ==, bw);
  g_assert_cmpuint (ah, ==, bh);
  g_assert_cmpuint (an, ==, 1);
  g_assert_cmpuint (bn, ==, 1);
  for (gsize i = 0; i < (gsize) aw * ah; i++)
    {
      g_assert_true (isfinite (a[i]));
      max_diff = MAX (max_diff, fabs ((double) a[i] - b[i]));
      max_abs = MAX (max_abs, fabs ((double) b[i]));
    }
  g_test_message ("max |ui − cli| = %.3g (max |value| %.3g)", max_diff, max_abs);
  /* Same engine, same parameters: equal up to float summation order. */
  g_assert_cmpfloat (max_diff, <=, 1e-5 * max_abs);
  g_unlink (ui_path);
  g_unlink (cli_path);
}
