/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>

#include "tomo-center-finder.h"
#include "tomo-center-scan.h"
#include "tomo-center-sweep.h"

struct _TomoCenterFinder
{
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkLabel *note_label;

  TomoScan *scan;
  gboolean live;  /* the scan is still arriving: no estimate of its own */
  guint row;
  GCancellable *cancellable;
  enum { IDLE, ESTIMATING, FINDING } running; /* the quick estimate, or the button's */
  TomoCenterSweep *sweep; /* weak: the sweep window while open */
};

G_DEFINE_FINAL_TYPE (TomoCenterFinder, tomo_center_finder, GTK_TYPE_WIDGET)

enum { CENTER_FOUND, TILT_FOUND, N_SIGNALS };
static guint signals[N_SIGNALS];

typedef struct
{
  TomoScan *scan;
  guint row;
  gboolean full; /* the button: tilt too */
  gboolean completed; /* the estimate once a live scan has all its frames */
} Job;

static void
job_free (Job *job)
{
  g_object_unref (job->scan);
  g_free (job);
}

static void
find_thread (GTask        *task,
             gpointer      source,
             gpointer      task_data,
             GCancellable *cancellable)
{
  Job *job = task_data;
  TomoCenterResult *r = g_new (TomoCenterResult, 1);
  GError *error = NULL;
  gboolean ok;

  if (job->full)
    ok = tomo_center_find_in_scan (job->scan, job->row, TOMO_CENTER_METHOD_AUTO, r, &error);
  else
    ok = tomo_center_estimate_row (job->scan, job->row, TOMO_CENTER_METHOD_AUTO, r, &error);
  if (ok)
    g_task_return_pointer (task, r, g_free);
  else
    {
      g_free (r);
      g_task_return_error (task, error);
    }
}

static void get_from_window (TomoCenterFinder *self,
                             const char       *property,
                             gpointer          value);

/* A centre found in the scan's columns as the window shows it: the
 * detector column (the offset geometry's stitched rows start left of the
 * detector), to the 0.01 px the window keeps. */
static double
shown_center (TomoCenterFinder *self,
              double            center)
{
  double shift = 0;

  get_from_window (self, "center-shift", &shift);
  return round ((center - shift) * 100.0) / 100.0;
}

static gboolean
same_detector (TomoScan *a,
               TomoScan *b)
{
  return tomo_scan_get_width (a) == tomo_scan_get_width (b) && tomo_scan_get_height (a) == tomo_scan_get_height (b);
}

static void
find_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  TomoCenterFinder *self = TOMO_CENTER_FINDER (source);
  Job *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  g_autofree TomoCenterResult *r = g_task_propagate_pointer (G_TASK (result), &error);
  g_autofree char *note = NULL;

  /* A live scan replaced by its next layout (the same detector, more
   * frames) still answers for it. */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  self->running = IDLE;
  if (job->scan != self->scan && !(self->live && self->scan != NULL && same_detector (job->scan, self->scan)))
    return;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "finder.find", TRUE);
  if (r == NULL)
    {
      note = g_strdup_printf ("No centre from the data: %s", error->message);
      gtk_label_set_text (self->note_label, note);
      return;
    }
  if (job->full && isfinite (r->tilt_deg))
    {
      gboolean corrected = FALSE;

      /* Whoever shows the scan may correct the tilt; then the centre found
       * on this row is where the middle row has it, on every row. */
      g_signal_emit (self, signals[TILT_FOUND], 0, r->tilt_deg, r->tilt_uncertainty_deg,
                     &corrected);
      if (corrected)
        {
          r->center -= tan (r->tilt_deg * G_PI / 180.0)
                       * (job->row - (tomo_scan_get_height (job->scan) - 1) / 2.0);
          note = g_strdup_printf ("Axis tilt %.3f ± %.3f° found and corrected; centre %.2f ± "
                                  "%.2f px on every row (%s, row %u)", r->tilt_deg,
                                  r->tilt_uncertainty_deg, shown_center (self, r->center),
                                  r->uncertainty, tomo_center_method_to_string (r->method),
                                  job->row);
        }
      else
        note = g_strdup_printf ("Found %.2f ± %.2f px on row %u (%s); axis tilt %.3f ± %.3f°",
                                shown_center (self, r->center), r->uncertainty, job->row,
                                tomo_center_method_to_string (r->method), r->tilt_deg,
                                r->tilt_uncertainty_deg);
    }
  else
    note = g_strdup_printf ("%s %.2f ± %.2f px on row %u (%s)",
                            job->full ? "Found"
                            : job->completed ? "Estimated when the scan completed:"
                                             : "Estimated when the scan opened:",
                            shown_center (self, r->center), r->uncertainty, job->row,
                            tomo_center_method_to_string (r->method));
  gtk_label_set_text (self->note_label, note);
  g_signal_emit (self, signals[CENTER_FOUND], 0, r->center, !job->full);
}

/* Reads `property` (the row, the centre) of the window the finder is in,
 * where that window has one; `value` is left as it is otherwise. */
static void
get_from_window (TomoCenterFinder *self,
                 const char       *property,
                 gpointer          value)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));

  if (root != NULL && g_object_class_find_property (G_OBJECT_GET_CLASS (root), property) != NULL)
    g_object_get (root, property, value, NULL);
}

static void
start (TomoCenterFinder *self,
       gboolean          full,
       gboolean          completed)
{
  g_autoptr(GTask) task = NULL;
  Job *job;

  if (self->scan == NULL)
    return;
  get_from_window (self, "row", &self->row);
  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  job = g_new0 (Job, 1);
  job->scan = g_object_ref (self->scan);
  job->row = MIN (self->row, tomo_scan_get_height (self->scan) - 1);
  job->full = full;
  job->completed = completed;
  self->running = full ? FINDING : ESTIMATING;
  task = g_task_new (self, self->cancellable, find_done, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, find_thread);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "finder.find", FALSE);
  gtk_label_set_text (self->note_label, full ? "Finding the centre and the tilt…"
                                             : "Estimating the centre…");
}

static void
set_scan (TomoCenterFinder *self,
          TomoScan         *scan,
          gboolean          live)
{
  gboolean same = live && self->live && self->scan != NULL && scan != NULL && same_detector (self->scan, scan);

  if (!g_set_object (&self->scan, scan))
    return;
  self->live = live;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "finder.sweep", scan != NULL);
  /* An open sweep stays while a live scan grows on the same detector. */
  if (self->sweep != NULL && !same)
    gtk_window_destroy (GTK_WINDOW (self->sweep));
  if (scan == NULL)
    return;
  self->row = tomo_scan_get_height (scan) / 2;
  if (!live)
    start (self, FALSE, FALSE);
  else if (!same)
    {
      /* Too few projections at first for an estimate of its own; the
       * button and the sweep take what has arrived when asked. */
      g_cancellable_cancel (self->cancellable);
      self->running = IDLE;
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "finder.find", TRUE);
      gtk_label_set_text (self->note_label,
                          "Live scan: Find centre and Sweep… use the projections received so far");
    }
}

void
tomo_center_finder_set_scan (TomoCenterFinder *self,
                             TomoScan         *scan)
{
  g_return_if_fail (TOMO_IS_CENTER_FINDER (self));

  set_scan (self, scan, FALSE);
}

void
tomo_center_finder_set_live_scan (TomoCenterFinder *self,
                                  TomoScan         *scan)
{
  g_return_if_fail (TOMO_IS_CENTER_FINDER (self));

  set_scan (self, scan, TRUE);
}

void
tomo_center_finder_replace_scan (TomoCenterFinder *self,
                                 TomoScan         *scan)
{
  g_return_if_fail (TOMO_IS_CENTER_FINDER (self));
  g_return_if_fail (TOMO_IS_SCAN (scan));

  if (!g_set_object (&self->scan, scan))
    return;
  /* An estimate in flight counts in the old rows' columns: it goes, and
   * the button is free again.  An open sweep counts in detector columns
   * and stitches each candidate itself: it stays. */
  if (self->running != IDLE)
    {
      g_cancellable_cancel (self->cancellable);
      self->running = IDLE;
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "finder.find", TRUE);
      gtk_label_set_text (self->note_label,
                          "The rows were stitched anew about the centre: Find centre estimates on them");
    }
}

void
tomo_center_finder_scan_completed (TomoCenterFinder *self)
{
  g_return_if_fail (TOMO_IS_CENTER_FINDER (self));

  /* A Find centre the user started answers instead (with the tilt). */
  if (self->live && self->running != FINDING)
    start (self, FALSE, TRUE);
}

gboolean
tomo_center_finder_has_sweep (TomoCenterFinder *self)
{
  g_return_val_if_fail (TOMO_IS_CENTER_FINDER (self), FALSE);

  return self->sweep != NULL;
}

TomoScan *
tomo_center_finder_get_scan (TomoCenterFinder *self)
{
  g_return_val_if_fail (TOMO_IS_CENTER_FINDER (self), NULL);

  return self->scan;
}

/* The button: the full estimate on the current row. */
static void
find_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  start (TOMO_CENTER_FINDER (widget), TRUE, FALSE);
}

static void
on_picked (TomoCenterFinder *self,
           double            center)
{
  g_autofree char *note = g_strdup_printf ("Picked %.2f px from the sweep (row %u)",
                                           shown_center (self, center), self->row);

  gtk_label_set_text (self->note_label, note);
  g_signal_emit (self, signals[CENTER_FOUND], 0, center, FALSE);
}

static void
sweep_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  TomoCenterFinder *self = TOMO_CENTER_FINDER (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  double center;

  if (self->scan == NULL)
    return;
  /* Of the slice shown. */
  get_from_window (self, "row", &self->row);
  self->row = MIN (self->row, tomo_scan_get_height (self->scan) - 1);
  center = (tomo_scan_get_width (self->scan) - 1) / 2.0;
  get_from_window (self, "center", &center);
  if (self->sweep != NULL)
    tomo_center_sweep_set_target (self->sweep, self->scan, self->row, center);
  else
    {
      self->sweep = tomo_center_sweep_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                           self->scan, self->row, center);
      g_object_add_weak_pointer (G_OBJECT (self->sweep), (gpointer *) &self->sweep);
      g_signal_connect_object (self->sweep, "center-picked", G_CALLBACK (on_picked), self,
                               G_CONNECT_SWAPPED);
    }
  gtk_window_present (GTK_WINDOW (self->sweep));
}

static void
tomo_center_finder_dispose (GObject *object)
{
  TomoCenterFinder *self = TOMO_CENTER_FINDER (object);

  if (self->sweep != NULL)
    {
      g_object_remove_weak_pointer (G_OBJECT (self->sweep), (gpointer *) &self->sweep);
      gtk_window_destroy (GTK_WINDOW (self->sweep));
      self->sweep = NULL;
    }

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->scan);
  gtk_widget_dispose_template (GTK_WIDGET (self), TOMO_TYPE_CENTER_FINDER);
  G_OBJECT_CLASS (tomo_center_finder_parent_class)->dispose (object);
}

static void
tomo_center_finder_class_init (TomoCenterFinderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = tomo_center_finder_dispose;

  signals[CENTER_FOUND] = g_signal_new ("center-found", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE,
                                        G_TYPE_BOOLEAN);
  /* Find centre measured the axis tilt (degrees, and its uncertainty); a
   * handler returns TRUE where it corrected it (before ::center-found). */
  signals[TILT_FOUND] = g_signal_new ("tilt-found", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                      0, g_signal_accumulator_true_handled, NULL, NULL,
                                      G_TYPE_BOOLEAN, 2, G_TYPE_DOUBLE, G_TYPE_DOUBLE);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/tomolive/Tomolive/tomo-center-finder.ui");
  gtk_widget_class_bind_template_child (widget_class, TomoCenterFinder, box);
  gtk_widget_class_bind_template_child (widget_class, TomoCenterFinder, note_label);
  gtk_widget_class_install_action (widget_class, "finder.find", NULL, find_action);
  gtk_widget_class_install_action (widget_class, "finder.sweep", NULL, sweep_action);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
tomo_center_finder_init (TomoCenterFinder *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "finder.find", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "finder.sweep", FALSE);
}
