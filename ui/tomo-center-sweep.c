/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-center.h"
#include "tomo-center-engine.h"
#include "tomo-center-sweep.h"
#include "tomo-geometry.h"
#include "tomo-window.h"

#define ZOOM_SIZE 256
#define WHOLE_MAX 1024 /* larger slices show the zoomed region only */

struct _TomoCenterSweep
{
  GtkWindow parent_instance;

  GtkDropDown *count_drop;
  GtkSpinButton *step_spin;
  GtkCheckButton *zoom_check;
  GtkLabel *status_label;
  GtkGrid *grid;
  GtkDrawingArea *curve;

  TomoScan *scan;
  TomoEngine *engine; /* the viewer's, where its scan is ours: the sweep runs there */
  guint row;
  double center;      /* detector column, as the panel shows centres */
  GCancellable *cancellable;
  guint generation;   /* of the last engine sweep asked for */

  /* the last result */
  guint n;
  double *centers;    /* detector columns */
  double *scores;
  gboolean ready;
};

G_DEFINE_FINAL_TYPE (TomoCenterSweep, tomo_center_sweep, GTK_TYPE_WINDOW)

enum { CENTER_PICKED, N_SIGNALS };
static guint signals[N_SIGNALS];

typedef struct
{
  TomoScan *scan;
  TomoScan *stitch_base; /* offset axis: the file's scan, stitched about each candidate */
  gboolean zoom;
  guint row, n;
  double *centers;       /* detector columns */
  TomoRoi view;
  float *images;
  double *scores;
  gboolean gpu;          /* stitched: candidates on the GPU (else the CPU) */
  double ms;             /* stitched: the candidates' time */
} Job;

/* The window's centre minus the detector column (the offset geometry's
 * stitched rows start left of the detector); it changes as they are
 * stitched anew, so the sweep keeps detector columns. */
static double
window_shift (TomoCenterSweep *self)
{
  GtkWindow *parent = gtk_window_get_transient_for (GTK_WINDOW (self));
  double shift = 0;

  if (TOMO_IS_WINDOW (parent))
    g_object_get (parent, "center-shift", &shift, NULL);
  return shift;
}

/* As the panel shows centres: to the 0.01 px the window keeps. */
static double
shown_center (double center)
{
  return round (center * 100.0) / 100.0;
}

static void
job_free (Job *job)
{
  g_object_unref (job->scan);
  g_clear_object (&job->stitch_base);
  g_free (job->centers);
  g_free (job->images);
  g_free (job->scores);
  g_free (job);
}

/* The view of a slice `w` wide: the whole slice, or its middle. */
static guint
view_size (gboolean zoom,
           guint    w)
{
  return zoom || w > WHOLE_MAX ? MIN (ZOOM_SIZE, w) : w;
}

/* The offset axis: the rows are stitched about the axis, so each candidate
 * is reconstructed in the row stitched about itself, at the axis column
 * in it, as `reconstruct --geometry offset --center` makes it, on an engine
 * of the sweep's own (on the GPU where the window's is: the rows are then
 * stitched on the device from the file's raw row, read once).  The
 * candidates' slices differ in width by twice their distance; all are
 * centred on the axis, so one view size in their middle shows the same
 * part of the sample in each. */
static gboolean
sweep_stitched (Job          *job,
                GCancellable *cancellable,
                GError      **error)
{
  g_autoptr(TomoEngine) engine = tomo_engine_new (TOMO_BACKEND_CPU);
  guint narrowest, size;
  gint64 t0;

  /* The layouts first (no read): the narrowest makes the view. */
  if (!tomo_center_stitched_width (job->stitch_base, job->centers, job->n, &narrowest, error))
    return FALSE;
  size = view_size (job->zoom, narrowest);
  job->view = (TomoRoi) { 0, 0, size, size };
  job->images = g_new (float, (gsize) job->n * size * size);
  if (job->gpu && !tomo_engine_set_backend (engine, TOMO_BACKEND_GPU, NULL))
    job->gpu = FALSE;   /* the CPU then */
  tomo_engine_set_prefetch (engine, 0, 0);
  t0 = g_get_monotonic_time ();
  if (!tomo_center_sweep_stitched (engine, job->stitch_base, job->row, job->centers, job->n, size,
                                   job->images, job->scores, cancellable, error))
    return FALSE;
  job->ms = (g_get_monotonic_time () - t0) / 1000.0;
  return TRUE;
}

/* The curve is the quality of what the grid shows: each candidate's view
 * scored, as the engine's sweep scores the views it reconstructs (a whole
 * slice where the grid shows whole slices, else its middle). */
static void
score_views (Job *job)
{
  gsize plane = (gsize) job->view.width * job->view.height;

  for (guint i = 0; i < job->n; i++)
    job->scores[i] = tomo_center_negativity (job->images + i * plane, job->view.width,
                                             job->view.height);
}

static void
sweep_thread (GTask        *task,
              gpointer      source,
              gpointer      task_data,
              GCancellable *cancellable)
{
  Job *job = task_data;
  GError *error = NULL;
  gboolean ok;

  if (job->stitch_base != NULL)
    ok = sweep_stitched (job, cancellable, &error);
  else
    {
      guint w = tomo_scan_get_width (job->scan), n_proj = tomo_scan_get_n_projections (job->scan);
      g_autofree float *sino = g_new (float, (gsize) n_proj * w);
      TomoSinogram s = { sino, n_proj, w, tomo_scan_get_angles (job->scan) };
      TomoCenterCandidates candidates = { job->centers, job->n, TOMO_CENTER_SCORE_NEGATIVITY, 0,
                                          &job->view, job->images };

      ok = tomo_scan_read_sinogram (job->scan, job->row, sino, NULL, &error)
           && tomo_center_sweep_scores (&s, &candidates, job->scores, &error);
    }
  if (!ok)
    {
      g_task_return_error (task, error);
      return;
    }
  score_views (job);
  g_task_return_boolean (task, TRUE);
}

/* Grey 8-bit texture over one value range shared by all candidates. */
static GdkTexture *
make_texture (const float *img,
              guint        w,
              guint        h,
              float        lo,
              float        hi)
{
  g_autoptr(GBytes) bytes = NULL;
  guint8 *px = g_malloc ((gsize) w * h * 3);

  for (gsize i = 0; i < (gsize) w * h; i++)
    {
      float t = (img[i] - lo) / (hi - lo);
      guint8 v = (guint8) CLAMP (t * 255.0f + 0.5f, 0.0f, 255.0f);

      px[3 * i] = px[3 * i + 1] = px[3 * i + 2] = v;
    }
  bytes = g_bytes_new_take (px, (gsize) w * h * 3);
  return gdk_memory_texture_new (w, h, GDK_MEMORY_R8G8B8, bytes, (gsize) w * 3);
}

static void
on_pressed (GtkGestureClick *gesture,
            int              n_press,
            double           x,
            double           y,
            TomoCenterSweep *self)
{
  GtkWidget *cell = gtk_event_controller_get_widget (GTK_EVENT_CONTROLLER (gesture));
  double c = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (cell), "index"));

  if (!self->ready)
    return;
  c = self->centers[(guint) c] + window_shift (self);
  g_signal_emit (self, signals[CENTER_PICKED], 0, c);
}

static void
show_job (TomoCenterSweep *self,
          Job             *job,
          const char      *timing)
{
  GtkWidget *child;
  guint cols, best = 0;
  float lo = INFINITY, hi = -INFINITY;
  gsize plane = (gsize) job->view.width * job->view.height;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->grid))) != NULL)
    gtk_grid_remove (self->grid, child);
  /* One value range for all, the middle candidate's: differences between
   * candidates show as differences, not as each one's own contrast. */
  {
    const float *mid = job->images + plane * (job->n / 2);

    for (gsize i = 0; i < plane; i++)
      {
        lo = MIN (lo, mid[i]);
        hi = MAX (hi, mid[i]);
      }
    if (!(hi > lo))
      hi = lo + 1.0f;
  }
  for (guint i = 1; i < job->n; i++)
    if (job->scores[i] < job->scores[best])
      best = i;
  cols = (guint) ceil (sqrt (job->n));
  for (guint i = 0; i < job->n; i++)
    {
      g_autoptr(GdkTexture) tex = make_texture (job->images + plane * i, job->view.width, job->view.height, lo, hi);
      GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
      GtkWidget *pic = gtk_picture_new_for_paintable (GDK_PAINTABLE (tex));
      g_autofree char *text = g_strdup_printf ("%s%.2f%s", i == best ? "▶ " : "",
                                               shown_center (job->centers[i]),
                                               i == best ? " ◀" : "");
      GtkWidget *label = gtk_label_new (text);
      GtkGesture *click = gtk_gesture_click_new ();

      gtk_widget_set_vexpand (pic, TRUE);
      gtk_widget_set_hexpand (pic, TRUE);
      gtk_box_append (GTK_BOX (box), pic);
      gtk_box_append (GTK_BOX (box), label);
      gtk_widget_set_tooltip_text (box, "Click to use this centre");
      g_object_set_data (G_OBJECT (box), "index", GUINT_TO_POINTER (i));
      g_signal_connect (click, "pressed", G_CALLBACK (on_pressed), self);
      gtk_widget_add_controller (box, GTK_EVENT_CONTROLLER (click));
      gtk_grid_attach (self->grid, box, i % cols, i / cols, 1, 1);
    }

  g_free (self->centers);
  g_free (self->scores);
  self->n = job->n;
  self->centers = g_memdup2 (job->centers, sizeof (double) * job->n);
  self->scores = g_memdup2 (job->scores, sizeof (double) * job->n);
  self->ready = TRUE;
  {
    /* A live scan's sweep says how much of it the candidates saw. */
    TomoScan *swept = job->stitch_base != NULL ? job->stitch_base : job->scan;
    g_autofree char *status = g_strdup_printf ("Row %u · %u projections · sharpest (least negative): %.2f px%s",
                                               job->row, tomo_scan_get_n_projections (swept),
                                               shown_center (job->centers[best]), timing);
    gtk_label_set_text (self->status_label, status);
  }
  gtk_widget_queue_draw (GTK_WIDGET (self->curve));
}

static void
sweep_done (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  TomoCenterSweep *self = TOMO_CENTER_SWEEP (source);
  g_autoptr(GError) error = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        gtk_label_set_text (self->status_label, error->message);
      return;
    }
  if (g_cancellable_is_cancelled (g_task_get_cancellable (G_TASK (result))))
    return;
  {
    Job *job = g_task_get_task_data (G_TASK (result));

    g_autofree char *timing = job->stitch_base != NULL
      ? g_strdup_printf (" · %s, each candidate stitched about itself: %u candidates in %.0f ms",
                         job->gpu ? "GPU" : "CPU", job->n, job->ms)
      : NULL;

    show_job (self, job, timing != NULL ? timing : " · CPU");
  }
}

typedef struct
{
  GWeakRef self;
  guint generation;
  Job *job;
} EngineTicket;

static void
engine_ticket_free (gpointer data)
{
  EngineTicket *ticket = data;

  g_weak_ref_clear (&ticket->self);
  job_free (ticket->job);
  g_free (ticket);
}

static void
engine_sweep_done (TomoEngine   *engine,
                   TomoSlice    *slice,
                   const GError *error,
                   gpointer      user_data)
{
  EngineTicket *ticket = user_data;
  g_autoptr(TomoCenterSweep) self = g_weak_ref_get (&ticket->self);
  Job *job = ticket->job;
  gsize plane = (gsize) job->view.width * job->view.height;
  g_autofree char *timing = NULL;

  if (self == NULL || ticket->generation != self->generation)
    return;
  if (error != NULL)
    {
      gtk_label_set_text (self->status_label, error->message);
      return;
    }
  g_assert (slice->n_slices == job->n && slice->width == job->view.width
            && slice->height == job->view.height);
  memcpy (job->images, slice->data, sizeof (float) * plane * job->n);
  memcpy (job->scores, slice->negativity, sizeof (double) * job->n);
  timing = g_strdup_printf (" · %s: %u candidates in %.1f ms",
                            slice->backend == TOMO_BACKEND_GPU ? "GPU" : "CPU", job->n,
                            slice->total_ms);
  show_job (self, job, timing);
}

/* The engine's scan is this window's (same file): the sweep can run there. */
static gboolean
engine_usable (TomoCenterSweep *self)
{
  TomoScan *scan;

  if (self->engine == NULL)
    return FALSE;
  scan = tomo_engine_get_scan (self->engine);
  return scan != NULL && g_strcmp0 (tomo_scan_get_path (scan), tomo_scan_get_path (self->scan)) == 0
         && tomo_scan_get_width (scan) == tomo_scan_get_width (self->scan);
}

static void
recompute (TomoCenterSweep *self)
{
  static const guint counts[] = { 4, 9, 16, 25 };
  g_autoptr(GTask) task = NULL;
  TomoScan *stitch_base;
  guint w, sel;
  double step;
  Job *job;

  if (self->scan == NULL)
    return;
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  self->generation++; /* an engine sweep still out is stale */
  self->ready = FALSE;

  w = tomo_scan_get_width (self->scan);
  {
    GtkWindow *parent = gtk_window_get_transient_for (GTK_WINDOW (self));
    TomoScan *base = TOMO_IS_WINDOW (parent) ? tomo_window_get_stitched_base (TOMO_WINDOW (parent)) : NULL;

    stitch_base = base != NULL ? g_object_ref (base) : NULL;
  }
  sel = MIN (gtk_drop_down_get_selected (self->count_drop), G_N_ELEMENTS (counts) - 1);
  step = gtk_spin_button_get_value (self->step_spin);
  job = g_new0 (Job, 1);
  job->scan = g_object_ref (self->scan);
  job->stitch_base = stitch_base;
  job->gpu = self->engine != NULL && tomo_engine_get_backend (self->engine) == TOMO_BACKEND_GPU;
  job->zoom = gtk_check_button_get_active (self->zoom_check);
  job->row = self->row;
  job->n = counts[sel];
  job->centers = g_new (double, job->n);
  job->scores = g_new (double, job->n);
  for (guint i = 0; i < job->n; i++)
    job->centers[i] = self->center + (i - (job->n - 1) / 2.0) * step;
  /* The stitched candidates' view is known once their rows are. */
  if (stitch_base == NULL)
    {
      guint size = view_size (job->zoom, w);

      job->view = (TomoRoi) { (w - size) / 2, (w - size) / 2, size, size };
      job->images = g_new (float, (gsize) job->n * size * size);
    }

  if (stitch_base == NULL && engine_usable (self))
    {
      EngineTicket *ticket = g_new0 (EngineTicket, 1);
      TomoSliceRequest request;

      tomo_slice_request_init (&request, self->scan);
      request.row = job->row;
      request.params.roi = job->view;
      /* Each candidate's view scored where it is reconstructed. */
      request.negativity = TRUE;
      g_weak_ref_init (&ticket->self, self);
      ticket->generation = self->generation;
      ticket->job = job;
      tomo_engine_submit_centers (self->engine, &request, job->centers, job->n, engine_sweep_done,
                                  ticket, engine_ticket_free);
      gtk_label_set_text (self->status_label, "Reconstructing the candidates…");
      return;
    }
  task = g_task_new (self, self->cancellable, sweep_done, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, sweep_thread);
  gtk_label_set_text (self->status_label, "Reconstructing the candidates…");
}

static void
draw_curve (GtkDrawingArea *area,
            cairo_t        *cr,
            int             width,
            int             height,
            gpointer        user_data)
{
  TomoCenterSweep *self = user_data;
  double lo = INFINITY, hi = -INFINITY;
  const double m = 12;

  cairo_set_source_rgb (cr, 0.12, 0.13, 0.15);
  cairo_paint (cr);
  if (!self->ready || self->n < 2)
    return;
  for (guint i = 0; i < self->n; i++)
    {
      lo = MIN (lo, self->scores[i]);
      hi = MAX (hi, self->scores[i]);
    }
  if (!(hi > lo))
    hi = lo + 1;
  cairo_set_source_rgb (cr, 0.95, 0.75, 0.2);
  cairo_set_line_width (cr, 2);
  for (guint i = 0; i < self->n; i++)
    {
      double x = m + (width - 2 * m) * i / (self->n - 1.0);
      double y = height - 2 * m - (height - 3 * m) * (self->scores[i] - lo) / (hi - lo);

      if (i == 0)
        cairo_move_to (cr, x, y);
      else
        cairo_line_to (cr, x, y);
    }
  cairo_stroke (cr);
  for (guint i = 0; i < self->n; i++)
    {
      double x = m + (width - 2 * m) * i / (self->n - 1.0);
      double y = height - 2 * m - (height - 3 * m) * (self->scores[i] - lo) / (hi - lo);

      cairo_arc (cr, x, y, 3, 0, 2 * G_PI);
      cairo_fill (cr);
    }
  cairo_set_source_rgb (cr, 0.8, 0.8, 0.8);
  cairo_move_to (cr, m, height - 3);
  {
    g_autofree char *text = g_strdup_printf ("%.2f px … image quality (negativity; lower is sharper) … %.2f px",
                                             shown_center (self->centers[0]),
                                             shown_center (self->centers[self->n - 1]));
    cairo_show_text (cr, text);
  }
}

void
tomo_center_sweep_set_target (TomoCenterSweep *self,
                              TomoScan        *scan,
                              guint            row,
                              double           center)
{
  g_return_if_fail (TOMO_IS_CENTER_SWEEP (self));
  g_return_if_fail (TOMO_IS_SCAN (scan));
  g_set_object (&self->scan, scan);
  self->row = row;
  self->center = center - window_shift (self);
  recompute (self);
}

gboolean
tomo_center_sweep_get_result (TomoCenterSweep *self,
                              guint           *n,
                              const double   **centers,
                              const double   **scores)
{
  g_return_val_if_fail (TOMO_IS_CENTER_SWEEP (self), FALSE);
  if (!self->ready)
    return FALSE;
  *n = self->n;
  *centers = self->centers;
  *scores = self->scores;
  return TRUE;
}

TomoCenterSweep *
tomo_center_sweep_new (GtkWindow *parent,
                       TomoScan  *scan,
                       guint      row,
                       double     center)
{
  TomoCenterSweep *self = g_object_new (TOMO_TYPE_CENTER_SWEEP, "transient-for", parent, NULL);

  if (TOMO_IS_WINDOW (parent))
    self->engine = g_object_ref (tomo_window_get_engine (TOMO_WINDOW (parent)));
  tomo_center_sweep_set_target (self, scan, row, center);
  return self;
}

static void
on_changed (TomoCenterSweep *self)
{
  recompute (self);
}

static void
tomo_center_sweep_dispose (GObject *object)
{
  TomoCenterSweep *self = TOMO_CENTER_SWEEP (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->scan);
  g_clear_object (&self->engine);
  g_clear_pointer (&self->centers, g_free);
  g_clear_pointer (&self->scores, g_free);
  gtk_widget_dispose_template (GTK_WIDGET (self), TOMO_TYPE_CENTER_SWEEP);
  G_OBJECT_CLASS (tomo_center_sweep_parent_class)->dispose (object);
}

static void
tomo_center_sweep_class_init (TomoCenterSweepClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tomo_center_sweep_dispose;
  signals[CENTER_PICKED] = g_signal_new ("center-picked", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_DOUBLE);
  gtk_widget_class_set_template_from_resource (widget_class, "/org/tomolive/Tomolive/tomo-center-sweep.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, TomoCenterSweep, name)
  BIND (count_drop);
  BIND (step_spin);
  BIND (zoom_check);
  BIND (status_label);
  BIND (grid);
  BIND (curve);
#undef BIND
  /* A tool window: closed from the keyboard as a dialog is. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "window.close", NULL);
}

static void
tomo_center_sweep_init (TomoCenterSweep *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_drawing_area_set_draw_func (self->curve, draw_curve, self, NULL);
  g_signal_connect_swapped (self->count_drop, "notify::selected", G_CALLBACK (on_changed), self);
  g_signal_connect_swapped (self->step_spin, "value-changed", G_CALLBACK (on_changed), self);
  g_signal_connect_swapped (self->zoom_check, "toggled", G_CALLBACK (on_changed), self);
}
