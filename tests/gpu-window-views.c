/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A preload for the viewer in the GPU machine's window run
 * (tests/run-views-on-gpu.sh): it opens the three views with the 3D pane
 * (the action win-volume.three-views, key V) TOMO_VIEWS_AT seconds after
 * start (default 4), and moves the centre by one pixel (win.nudge-center)
 * TOMO_NUDGE_AT seconds after start (default 10; 0: never), so that a
 * second preview is made.  It reports each step on stderr with "[views]";
 * the titles it leads to are logged by the bundle's spy.  Nothing else.
 *
 *   gcc -shared -fPIC -o libtomoviews.so tests/gpu-window-views.c \
 *       $(pkg-config --cflags --libs gtk4)
 */
#include <gtk/gtk.h>
#include <stdio.h>
#include <stdlib.h>

static guint
seconds_from_env (const char *name,
                  guint       fallback)
{
  const char *v = g_getenv (name);

  return v != NULL && *v != '\0' ? (guint) strtoul (v, NULL, 10) : fallback;
}

static GtkWidget *
find_window (void)
{
  GApplication *app = g_application_get_default ();
  GtkWindow *w;

  if (app == NULL || !GTK_IS_APPLICATION (app))
    return NULL;
  w = gtk_application_get_active_window (GTK_APPLICATION (app));
  return w != NULL ? GTK_WIDGET (w) : NULL;
}

static gboolean
step (gpointer data)
{
  const char *action = data;
  GtkWidget *w = find_window ();
  gboolean ok;

  if (w == NULL)
    {
      fprintf (stderr, "[views] no window yet for %s; trying again in 1 s\n", action);
      g_timeout_add_seconds (1, step, data);
      return G_SOURCE_REMOVE;
    }
  if (g_str_equal (action, "nudge"))
    ok = gtk_widget_activate_action (w, "win.nudge-center", "d", 1.0);
  else
    ok = gtk_widget_activate_action (w, "win-volume.three-views", NULL);
  fprintf (stderr, "[views] %s: %s\n", action, ok ? "done" : "the action was not found");
  return G_SOURCE_REMOVE;
}

__attribute__ ((constructor)) static void
views_init (void)
{
  guint views_at = seconds_from_env ("TOMO_VIEWS_AT", 4);
  guint nudge_at = seconds_from_env ("TOMO_NUDGE_AT", 10);

  /* Only the viewer: `tomolive phantom` and the like have no window. */
  g_timeout_add_seconds (views_at, step, (gpointer) "three-views");
  if (nudge_at > 0)
    g_timeout_add_seconds (nudge_at, step, (gpointer) "nudge");
  fprintf (stderr, "[views] loaded: three views at %u s, centre nudge at %u s\n", views_at,
           nudge_at);
}
