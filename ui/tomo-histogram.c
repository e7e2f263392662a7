/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-histogram.h"
#include "tomo-ui-private.h"

#define N_BINS 256
#define GRAB_PX 8.0

struct _TomoHistogram
{
  GtkWidget parent_instance;

  guint bins[N_BINS];
  guint max_count;
  double lo, hi;         /* value range of the bins */
  gboolean have_data;
  double window_min, window_max;

  enum { GRAB_NONE, GRAB_MIN, GRAB_MAX, GRAB_BOTH } grab;
  double grab_min, grab_max;
};

G_DEFINE_FINAL_TYPE (TomoHistogram, tomo_histogram, GTK_TYPE_WIDGET)

enum {
  WINDOW_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

void
tomo_histogram_set_bins (TomoHistogram *self,
                         const guint32 *bins,
                         guint          n_bins,
                         double         lo,
                         double         hi)
{
  g_return_if_fail (TOMO_IS_HISTOGRAM (self));

  memset (self->bins, 0, sizeof self->bins);
  self->max_count = 0;
  self->have_data = bins != NULL && n_bins > 0 && isfinite (lo) && isfinite (hi) && hi > lo;

  if (self->have_data)
    {
      /* Resample onto the widget's bins; the counts arrive binned already,
       * so nothing here depends on the size of the slice. */
      for (guint i = 0; i < n_bins; i++)
        self->bins[(guint64) i * N_BINS / n_bins] += bins[i];
      for (guint b = 0; b < N_BINS; b++)
        self->max_count = MAX (self->max_count, self->bins[b]);
      self->lo = lo;
      self->hi = hi;
    }

  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tomo_histogram_set_window (TomoHistogram *self,
                           double         min,
                           double         max)
{
  g_return_if_fail (TOMO_IS_HISTOGRAM (self));

  self->window_min = min;
  self->window_max = max;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static double
value_to_x (TomoHistogram *self,
            double         value)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self));

  return (value - self->lo) / (self->hi - self->lo) * w;
}

static double
x_to_value (TomoHistogram *self,
            double         x)
{
  int w = MAX (1, gtk_widget_get_width (GTK_WIDGET (self)));

  return self->lo + x / w * (self->hi - self->lo);
}

static void
tomo_histogram_snapshot (GtkWidget   *widget,
                         GtkSnapshot *snapshot)
{
  TomoHistogram *self = TOMO_HISTOGRAM (widget);
  int w = gtk_widget_get_width (widget);
  int h = gtk_widget_get_height (widget);
  cairo_t *cr;
  double xmin, xmax, log_max;

  cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, h));

  cairo_set_source_rgb (cr, 0.13, 0.13, 0.14);
  cairo_paint (cr);

  if (!self->have_data || self->max_count == 0)
    {
      cairo_destroy (cr);
      return;
    }

  xmin = value_to_x (self, self->window_min);
  xmax = value_to_x (self, self->window_max);

  /* The window as a band, gray ramp inside. */
  cairo_set_source_rgba (cr, 0.35, 0.55, 0.85, 0.18);
  cairo_rectangle (cr, xmin, 0, xmax - xmin, h);
  cairo_fill (cr);

  /* Log counts: the background peak would flatten everything else. */
  log_max = log1p (self->max_count);
  cairo_set_source_rgb (cr, 0.78, 0.80, 0.84);
  cairo_move_to (cr, 0, h);
  for (guint b = 0; b < N_BINS; b++)
    {
      double y = h - (h - 4) * log1p (self->bins[b]) / log_max;
      cairo_line_to (cr, (double) b * w / N_BINS, y);
      cairo_line_to (cr, (double) (b + 1) * w / N_BINS, y);
    }
  cairo_line_to (cr, w, h);
  cairo_close_path (cr);
  cairo_fill (cr);

  cairo_set_line_width (cr, 2);
  cairo_set_source_rgb (cr, 0.95, 0.75, 0.15);
  cairo_move_to (cr, xmin, 0);
  cairo_line_to (cr, xmin, h);
  cairo_move_to (cr, xmax, 0);
  cairo_line_to (cr, xmax, h);
  cairo_stroke (cr);

  cairo_destroy (cr);
}

static void
tomo_histogram_measure (GtkWidget      *widget,
                        GtkOrientation  orientation,
                        int             for_size,
                        int            *minimum,
                        int            *natural,
                        int            *minimum_baseline,
                        int            *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural = 120;
  else
    *minimum = *natural = 72;
}

static void
on_drag_begin (GtkGestureDrag *gesture,
               double          x,
               double          y,
               TomoHistogram  *self)
{
  double xmin = value_to_x (self, self->window_min);
  double xmax = value_to_x (self, self->window_max);

  self->grab_min = self->window_min;
  self->grab_max = self->window_max;

  if (!self->have_data)
    self->grab = GRAB_NONE;
  else if (fabs (x - xmin) <= GRAB_PX && fabs (x - xmin) <= fabs (x - xmax))
    self->grab = GRAB_MIN;
  else if (fabs (x - xmax) <= GRAB_PX)
    self->grab = GRAB_MAX;
  else if (x > xmin && x < xmax)
    self->grab = GRAB_BOTH;
  else
    {
      /* Click outside the window: move the nearer edge there. */
      self->grab = x < xmin ? GRAB_MIN : GRAB_MAX;
      if (self->grab == GRAB_MIN)
        self->grab_min = x_to_value (self, x);
      else
        self->grab_max = x_to_value (self, x);
      g_signal_emit (self, signals[WINDOW_CHANGED], 0, self->grab_min, self->grab_max);
    }
}

static void
on_drag_update (GtkGestureDrag *gesture,
                double          dx,
                double          dy,
                TomoHistogram  *self)
{
  double dv = x_to_value (self, dx) - x_to_value (self, 0);
  double min = self->grab_min, max = self->grab_max;
  double eps = (self->hi - self->lo) * 1e-3;

  switch (self->grab)
    {
    case GRAB_MIN:
      min = MIN (min + dv, max - eps);
      break;
    case GRAB_MAX:
      max = MAX (max + dv, min + eps);
      break;
    case GRAB_BOTH:
      min += dv;
      max += dv;
      break;
    case GRAB_NONE:
    default:
      return;
    }

  g_signal_emit (self, signals[WINDOW_CHANGED], 0, min, max);
}

static void
tomo_histogram_class_init (TomoHistogramClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  widget_class->snapshot = tomo_histogram_snapshot;
  widget_class->measure = tomo_histogram_measure;

  /* The user dragged the window edges (or the window). */
  signals[WINDOW_CHANGED] =
    g_signal_new ("window-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE, G_TYPE_DOUBLE);

  gtk_widget_class_set_css_name (widget_class, "histogram");
}

static void
tomo_histogram_init (TomoHistogram *self)
{
  self->lo = 0;
  self->hi = 1;
  self->window_max = 1;
  _tomo_ui_add_drag (GTK_WIDGET (self), G_CALLBACK (on_drag_begin), G_CALLBACK (on_drag_update),
                     NULL, self);
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "col-resize");
}
