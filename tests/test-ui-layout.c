/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The window at the sizes a window manager allows it (its minimum size hint
 * and up): the views beside the panel get at least their minimum width, so
 * nothing of them — the slice, the three views' panes, their controls — is
 * cut off at the window's right edge, on either page of the view stack.
 */
#include "config.h"

#include "tomo-volume-3d.h"
#include "tomo-window-private.h"
#include "ui-test-common.h"

/* Sets the window's size and iterates until its surface (the X window a
 * window manager sizes) has it; FALSE after 10 s. */
static gboolean
resize_and_wait (int width,
                 int height)
{
  gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (window));

  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  while (g_get_monotonic_time () < end)
    {
      tomo_test_spin (50);
      if (gdk_surface_get_width (surface) == width && gdk_surface_get_height (surface) == height)
        {
          tomo_test_spin (300);
          return TRUE;
        }
    }
  g_test_message ("window %d × %d, asked for %d × %d", gdk_surface_get_width (surface),
                  gdk_surface_get_height (surface), width, height);
  return FALSE;
}

static gboolean
is_content (GtkWidget *w)
{
  return TOMO_IS_SLICE_VIEW (w) || TOMO_IS_VOLUME_3D (w) || GTK_IS_SPIN_BUTTON (w)
         || GTK_IS_DROP_DOWN (w);
}

/* Every view and control below `w` that is shown lies inside `area`, and
 * the views are allocated at least their minimum width (a widget given
 * less is drawn at its minimum and cut). */
static guint
assert_inside (GtkWidget  *area,
               GtkWidget  *w,
               const char *page)
{
  guint n = 0;
  int min = 0;

  if (!gtk_widget_get_visible (w) || !gtk_widget_get_child_visible (w))
    return 0;
  gtk_widget_measure (w, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  /* (The views have no CSS margins, which a measure includes and a width not.) */
  if ((TOMO_IS_SLICE_VIEW (w) || TOMO_IS_VOLUME_3D (w) || gtk_widget_get_parent (w) == area)
      && gtk_widget_get_width (w) < min)
    g_error ("%s: a %s is %d px wide, less than its minimum %d px", page,
             G_OBJECT_TYPE_NAME (w), gtk_widget_get_width (w), min);
  if (is_content (w))
    {
      graphene_rect_t b;

      g_assert_true (gtk_widget_compute_bounds (w, area, &b));
      if (b.origin.x < -0.5 || b.origin.x + b.size.width > gtk_widget_get_width (area) + 0.5)
        g_error ("%s: a %s spans x = %.0f…%.0f, outside the view area (0…%d)", page,
                 G_OBJECT_TYPE_NAME (w), b.origin.x, b.origin.x + b.size.width,
                 gtk_widget_get_width (area));
      n++;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL; c = gtk_widget_get_next_sibling (c))
    n += assert_inside (area, c, page);
  return n;
}

static void
test_small_window (gconstpointer data)
{
  const int *size = data;
  GtkWidget *stack;
  graphene_rect_t b;

  UI_TEST_REQUIRE_WINDOW ();
  stack = GTK_WIDGET (window->view_stack);
  g_assert_true (resize_and_wait (size[0], size[1]));

  /* The view area ends inside the window. */
  g_assert_true (gtk_widget_compute_bounds (stack, GTK_WIDGET (window), &b));
  g_assert_cmpfloat (b.origin.x + b.size.width, <=, gtk_widget_get_width (GTK_WIDGET (window)));

  for (guint p = 0; p < 2; p++)
    {
      const char *page = p == 0 ? "slice" : "volume";
      GtkWidget *child;
      guint n;

      gtk_stack_set_visible_child_name (window->view_stack, page);
      tomo_test_spin (500);
      child = gtk_stack_get_visible_child (window->view_stack);
      n = assert_inside (stack, child, page);
      g_test_message ("%d × %d, %s page: %d px wide, %u views and controls inside", size[0],
                      size[1], page, gtk_widget_get_width (child), n);
      g_assert_cmpuint (n, >=, p == 0 ? 1 : 10);
    }
  gtk_stack_set_visible_child_name (window->view_stack, "slice");
}

int
main (int    argc,
      char **argv)
{
  static const int sizes[][2] = { { 800, 600 }, { 1000, 700 } };

  ui_test_init (&argc, &argv);
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      g_autofree char *path = g_strdup_printf ("/tomo/ui/layout/%dx%d", sizes[i][0], sizes[i][1]);

      g_test_add_data_func (path, sizes[i], test_small_window);
    }
  return ui_test_run ();
}
