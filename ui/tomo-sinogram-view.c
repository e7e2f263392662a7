/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>

#include "tomo-engine.h"
#include "tomo-sinogram-view.h"

struct _TomoSinogramView
{
  GtkWidget parent_instance;

  TomoScan *scan;
  guint row;
  double center;

  GdkTexture *texture;   /* of shown_row, in the scan's width */
  int shown_row;         /* −1: nothing shown */
  guint texture_width;
  GCancellable *load;    /* the row being read, NULL when idle */
  guint loading_row;
};

G_DEFINE_FINAL_TYPE (TomoSinogramView, tomo_sinogram_view, GTK_TYPE_WIDGET)

enum {
  ROW_SHOWN,
  LOAD_FAILED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* ---- worker ----------------------------------------------------------------- */

typedef struct
{
  TomoScan *scan;
  guint row;
} RowJob;

static void
row_job_free (RowJob *job)
{
  g_clear_object (&job->scan);
  g_free (job);
}

/* Reads the row and turns it into an 8-bit grey texture: the whole of the
 * heavy work (file read, percentile pass, colouring) is here, off the UI
 * thread. */
static void
load_row_thread (GTask        *task,
                 gpointer      source_object,
                 gpointer      task_data,
                 GCancellable *cancellable)
{
  RowJob *job = task_data;
  guint width = tomo_scan_get_width (job->scan);
  guint n_proj = tomo_scan_get_n_projections (job->scan);
  gsize n = (gsize) width * n_proj;
  g_autofree float *sinogram = g_try_new (float, n);
  GError *error = NULL;
  guint8 *grey;
  double lo, hi, scale;
  g_autoptr(GBytes) bytes = NULL;

  if (sinogram == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                               "Out of memory for the sinogram of row %u (%u × %u)",
                               job->row, width, n_proj);
      return;
    }
  if (!tomo_scan_read_sinogram (job->scan, job->row, sinogram, NULL, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (g_cancellable_is_cancelled (cancellable))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
      return;
    }

  if (!tomo_percentiles (sinogram, n, 0.5, 99.5, &lo, &hi) || hi <= lo)
    lo = 0, hi = 1;
  scale = 255.0 / (hi - lo);

  grey = g_malloc (3 * n);
  for (gsize i = 0; i < n; i++)
    {
      float v = sinogram[i];

      grey[3 * i] = grey[3 * i + 1] = grey[3 * i + 2]
        = isfinite (v) ? (guint8) CLAMP ((v - lo) * scale, 0, 255) : 0;
    }
  bytes = g_bytes_new_take (grey, 3 * n);
  g_task_return_pointer (task,
                         gdk_memory_texture_new (width, n_proj, GDK_MEMORY_R8G8B8, bytes, 3 * width),
                         g_object_unref);
}

static void load_row (TomoSinogramView *self);

/* Stops the read in flight, if any; its completion then leaves the view alone. */
static void
cancel_load (TomoSinogramView *self)
{
  if (self->load != NULL)
    g_cancellable_cancel (self->load);
  g_clear_object (&self->load);
}

static void
load_row_done (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  TomoSinogramView *self = TOMO_SINOGRAM_VIEW (source);
  RowJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GError) error = NULL;
  gboolean cancelled = g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result)));

  texture = g_task_propagate_pointer (G_TASK (result), &error);
  if (!cancelled)
    g_clear_object (&self->load);

  if (texture == NULL)
    {
      if (!cancelled && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_autofree char *message = g_strdup_printf ("Reading the sinogram of row %u failed: %s",
                                                      job->row, error->message);
          g_signal_emit (self, signals[LOAD_FAILED], 0, message);
        }
      return;
    }
  if (cancelled || job->scan != self->scan)
    return;

  g_set_object (&self->texture, texture);
  self->shown_row = job->row;
  self->texture_width = tomo_scan_get_width (job->scan);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[ROW_SHOWN], 0, job->row);

  /* The row moved on while this one was read: latest wins. */
  if (self->row != job->row)
    load_row (self);
}

static void
load_row (TomoSinogramView *self)
{
  g_autoptr(GTask) task = NULL;
  RowJob *job;

  if (self->scan == NULL || !gtk_widget_get_mapped (GTK_WIDGET (self)))
    return;
  if (self->shown_row == (int) self->row)
    return;
  /* One read at a time; its completion starts the next if needed. */
  if (self->load != NULL)
    {
      if (self->loading_row == self->row)
        return;
      if (!g_cancellable_is_cancelled (self->load))
        return;
    }

  g_clear_object (&self->load);
  self->load = g_cancellable_new ();
  self->loading_row = self->row;

  job = g_new0 (RowJob, 1);
  job->scan = g_object_ref (self->scan);
  job->row = self->row;
  task = g_task_new (self, self->load, load_row_done, NULL);
  g_task_set_source_tag (task, load_row);
  g_task_set_task_data (task, job, (GDestroyNotify) row_job_free);
  g_task_run_in_thread (task, load_row_thread);
}

/* ---- public ----------------------------------------------------------------- */

void
tomo_sinogram_view_set_scan (TomoSinogramView *self,
                             TomoScan         *scan)
{
  g_return_if_fail (TOMO_IS_SINOGRAM_VIEW (self));

  cancel_load (self);
  g_set_object (&self->scan, scan);
  g_clear_object (&self->texture);
  self->shown_row = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  load_row (self);
}

void
tomo_sinogram_view_set_row (TomoSinogramView *self,
                            guint             row)
{
  g_return_if_fail (TOMO_IS_SINOGRAM_VIEW (self));

  if (row == self->row)
    return;
  self->row = row;
  load_row (self);
}

void
tomo_sinogram_view_set_center (TomoSinogramView *self,
                               double            center)
{
  g_return_if_fail (TOMO_IS_SINOGRAM_VIEW (self));

  if (center == self->center)
    return;
  self->center = center;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
tomo_sinogram_view_get_center (TomoSinogramView *self)
{
  g_return_val_if_fail (TOMO_IS_SINOGRAM_VIEW (self), 0);
  return self->center;
}

int
tomo_sinogram_view_get_shown_row (TomoSinogramView *self)
{
  g_return_val_if_fail (TOMO_IS_SINOGRAM_VIEW (self), -1);
  return self->shown_row;
}

/* ---- GtkWidget -------------------------------------------------------------- */

static void
tomo_sinogram_view_snapshot (GtkWidget   *widget,
                             GtkSnapshot *snapshot)
{
  TomoSinogramView *self = TOMO_SINOGRAM_VIEW (widget);
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  double x;

  if (self->texture == NULL || width <= 0 || height <= 0)
    return;

  gtk_snapshot_append_texture (snapshot, self->texture, &GRAPHENE_RECT_INIT (0, 0, width, height));
  /* The rotation centre: a good centre makes the sinogram symmetric about it.
   * Column c covers [c, c + 1) of the texture, so its middle is c + 0.5. */
  x = (self->center + 0.5) / self->texture_width * width;
  gtk_snapshot_append_color (snapshot, &(GdkRGBA) { 0.9, 0.16, 0.16, 1.0 },
                             &GRAPHENE_RECT_INIT ((float) x - 1.0f, 0, 2, height));
}

static void
tomo_sinogram_view_map (GtkWidget *widget)
{
  GTK_WIDGET_CLASS (tomo_sinogram_view_parent_class)->map (widget);
  load_row (TOMO_SINOGRAM_VIEW (widget));
}

static void
tomo_sinogram_view_dispose (GObject *object)
{
  TomoSinogramView *self = TOMO_SINOGRAM_VIEW (object);

  cancel_load (self);
  g_clear_object (&self->texture);
  g_clear_object (&self->scan);

  G_OBJECT_CLASS (tomo_sinogram_view_parent_class)->dispose (object);
}

static void
tomo_sinogram_view_class_init (TomoSinogramViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tomo_sinogram_view_dispose;
  widget_class->snapshot = tomo_sinogram_view_snapshot;
  widget_class->map = tomo_sinogram_view_map;

  /* The picture of a row is on screen. */
  signals[ROW_SHOWN] =
    g_signal_new ("row-shown", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  /* A row could not be read; the message names the row and the cause. */
  signals[LOAD_FAILED] =
    g_signal_new ("load-failed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_css_name (widget_class, "sinogram");
}

static void
tomo_sinogram_view_init (TomoSinogramView *self)
{
  self->shown_row = -1;
  gtk_widget_set_overflow (GTK_WIDGET (self), GTK_OVERFLOW_HIDDEN);
}
