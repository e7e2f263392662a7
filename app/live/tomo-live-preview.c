/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-live"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-live-preview.h"
#include "tomo-median.h"
#include "tomo-preprocess.h"

struct _TomoLivePreview
{
  TomoLiveReceiver      *rx;
  TomoLivePreviewOptions options;
  TomoLivePreviewFunc    func;
  gpointer               user_data;
  GThread               *thread;
  gint                   stop;

  /* The preview thread's own state. */
  TomoLiveScan          *scan;
  TomoLiveAccumulator   *acc;
  guint                  width, n_scan, row;
  TomoReconParams        params;      /* of the slice: the centre resolved */
  guint64                since, calibration;
  gint64                 rotation;    /* scan mode: the rotation shown */
  GArray                *stored;      /* float rows by slot: what is in the slice */
  GArray                *in_slice;    /* guint8 by slot */
  guint                  n_in_slice;

  GMutex                 lock;        /* guards what follows */
  float                 *image;
  guint                  image_n;     /* projections in `image` */
  guint64                version;
  TomoSlice             *slice;       /* `image` as the engine's slices, with its values */
  TomoBackend            backend;     /* that the slice runs on */
  GArray                *delays;      /* double ms */
  char                  *error;
};

void
tomo_live_preview_options_init (TomoLivePreviewOptions *options)
{
  memset (options, 0, sizeof *options);
  options->row = -1;
  tomo_recon_params_init (&options->params, 1);
  options->params.center = NAN;
  options->backend = TOMO_BACKEND_AUTO;
  options->max_rate = 60;
}

static void
reset (TomoLivePreview *self)
{
  g_clear_pointer (&self->acc, tomo_live_accumulator_free);
  g_clear_pointer (&self->scan, tomo_live_scan_unref);
  g_array_set_size (self->stored, 0);
  g_array_set_size (self->in_slice, 0);
  self->n_in_slice = 0;
  self->since = 0;
  self->calibration = 0;
  self->rotation = -1;
}

static gboolean
start_scan (TomoLivePreview *self,
            TomoLiveScan    *scan,
            GError         **error)
{
  TomoReconParams params = self->options.params;
  guint rows = tomo_live_scan_get_rows (scan);

  reset (self);
  self->scan = tomo_live_scan_ref (scan);
  self->width = tomo_live_scan_get_cols (scan);
  self->n_scan = MAX (tomo_live_scan_get_n_projections (scan), 1);
  self->row = self->options.row >= 0 && (guint) self->options.row < rows ? (guint) self->options.row : rows / 2;
  if (isnan (params.center))
    params.center = (self->width - 1) / 2.0;
  params.roi = (TomoRoi) { 0, 0, 0, 0 };
  self->params = params;
  self->acc = tomo_live_accumulator_new (self->width, self->n_scan, &params, self->options.backend, error);
  if (self->acc != NULL)
    {
      g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
      self->backend = tomo_live_accumulator_get_backend (self->acc);
    }
  return self->acc != NULL;
}

/* Adds (or with weight −1 removes) the rows of `slots` kept in `stored`. */
static gboolean
apply_stored (TomoLivePreview *self,
              GArray          *slots,
              float            weight,
              GError         **error)
{
  g_autofree float *rows = NULL;
  g_autofree double *angles = NULL;
  guint w = self->width;

  if (slots->len == 0)
    return TRUE;
  rows = g_new (float, (gsize) slots->len * w);
  angles = g_new (double, slots->len);
  for (guint i = 0; i < slots->len; i++)
    {
      guint s = g_array_index (slots, guint, i);

      memcpy (rows + (gsize) i * w, &g_array_index (self->stored, float, (gsize) s * w), sizeof (float) * w);
      angles[i] = tomo_live_scan_get_angle (self->scan, s);
    }
  return tomo_live_accumulator_add (self->acc, rows, angles, slots->len, weight, error);
}

gboolean
tomo_live_preview_step (TomoLivePreview *self,
                        GError         **error)
{
  g_autoptr(TomoLiveScan) scan = tomo_live_receiver_dup_current (self->rx);
  g_autoptr(GArray) slots = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) ids = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) arrivals = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr(GArray) add = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) remove = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autofree float *raw = NULL, *flat = NULL, *dark = NULL;
  guint64 now, calibration;
  gboolean normalise, apply_log;
  const float *image;
  guint w;
  gint64 done, started = g_get_monotonic_time ();

  if (scan == NULL)
    return TRUE;
  if (scan != self->scan && !start_scan (self, scan, error))
    return FALSE;

  tomo_live_scan_collect_changed (scan, 0, &now, &calibration, slots, ids, arrivals);
  if (calibration != self->calibration)
    {
      /* New flats or darks: every row is normalised anew. */
      tomo_live_accumulator_clear (self->acc);
      memset (self->in_slice->data, 0, self->in_slice->len);
      self->n_in_slice = 0;
      self->calibration = calibration;
      self->since = 0;
    }
  else
    {
      g_array_set_size (slots, 0);
      g_array_set_size (ids, 0);
      g_array_set_size (arrivals, 0);
      tomo_live_scan_collect_changed (scan, self->since, &now, &calibration, slots, ids, arrivals);
    }
  if (slots->len == 0 && self->since == now)
    return TRUE;
  self->since = now;

  w = self->width;
  for (guint i = 0; i < slots->len; i++)
    {
      guint s = g_array_index (slots, guint, i);
      gint64 rotation = g_array_index (ids, guint, i) / self->n_scan;

      if (self->options.mode == TOMO_LIVE_MODE_SCAN && rotation != self->rotation)
        {
          if (rotation < self->rotation)
            continue;
          /* A new rotation starts an empty slice. */
          tomo_live_accumulator_clear (self->acc);
          memset (self->in_slice->data, 0, self->in_slice->len);
          self->n_in_slice = 0;
          self->rotation = rotation;
          g_array_set_size (add, 0);
          g_array_set_size (remove, 0);
        }
      if (s >= self->in_slice->len)
        {
          g_array_set_size (self->in_slice, s + 1);
          g_array_set_size (self->stored, (gsize) (s + 1) * w);
        }
      if (g_array_index (self->in_slice, guint8, s))
        g_array_append_val (remove, s);
      g_array_append_val (add, s);
    }

  /* Out with what is replaced, in with the new rows. */
  if (!apply_stored (self, remove, -1.0f, error))
    return FALSE;
  raw = g_new (float, (gsize) MAX (add->len, 1) * w);
  flat = g_new (float, w);
  dark = g_new (float, w);
  if (!tomo_live_scan_read_row (scan, self->row, (const guint *) add->data, add->len, raw, flat, dark,
                                &normalise, &apply_log))
    return FALSE;
  tomo_preprocess_row (raw, add->len, w, normalise ? flat : NULL, normalise ? dark : NULL, apply_log, raw, NULL);
  for (guint i = 0; i < add->len; i++)
    {
      guint s = g_array_index (add, guint, i);

      memcpy (&g_array_index (self->stored, float, (gsize) s * w), raw + (gsize) i * w, sizeof (float) * w);
      if (!g_array_index (self->in_slice, guint8, s))
        self->n_in_slice++;
      g_array_index (self->in_slice, guint8, s) = 1;
    }
  if (!apply_stored (self, add, 1.0f, error))
    return FALSE;

  image = tomo_live_accumulator_get_image (self->acc, error);
  if (image == NULL)
    return FALSE;
  {
    /* The window shows it as the engine's: statistics come with the slice. */
    TomoSlice *slice = g_new0 (TomoSlice, 1);

    slice->ref_count = 1;
    slice->row = self->row;
    slice->n_slices = 1;
    slice->width = slice->height = w;
    slice->roi = (TomoRoi) { 0, 0, w, w };
    slice->params = self->params;
    slice->params.roi = slice->roi;
    slice->data = g_memdup2 (image, sizeof (float) * w * w);
    slice->backend = tomo_live_accumulator_get_backend (self->acc);
    slice->kernel = g_strdup ("live-accumulate");
    tomo_live_accumulator_get_last_ms (self->acc, &slice->filter_ms, &slice->backproject_ms);
    tomo_slice_stats_compute (slice->data, (gsize) w * w, &slice->values);
    done = g_get_monotonic_time ();
    slice->total_ms = (done - started) / 1e3;

    g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

    g_clear_pointer (&self->slice, tomo_slice_unref);
    self->slice = slice;
    g_free (self->image);
    self->image = g_memdup2 (image, sizeof (float) * w * w);
    self->image_n = self->n_in_slice;
    self->version++;
    for (guint i = 0; i < arrivals->len && self->delays->len < 1000000; i++)
      {
        double ms = (done - g_array_index (arrivals, gint64, i)) / 1e3;
        g_array_append_val (self->delays, ms);
      }
  }
  if (self->func != NULL)
    self->func (self, self->user_data);
  return TRUE;
}

static gpointer
preview_thread (gpointer data)
{
  TomoLivePreview *self = data;
  gint64 period = (gint64) (G_USEC_PER_SEC / self->options.max_rate);
  gint64 next = g_get_monotonic_time ();

  while (!g_atomic_int_get (&self->stop))
    {
      g_autoptr(GError) error = NULL;
      gint64 now = g_get_monotonic_time ();

      if (now < next)
        {
          g_usleep (MIN (next - now, 10000));
          continue;
        }
      next = now + period;
      if (!tomo_live_preview_step (self, &error))
        {
          g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

          if (self->error == NULL)
            g_message ("Live preview: %s", error->message);
          g_free (self->error);
          self->error = g_strdup (error->message);
          reset (self);
        }
    }
  return NULL;
}

TomoLivePreview *
tomo_live_preview_new (TomoLiveReceiver             *receiver,
                       const TomoLivePreviewOptions *options,
                       TomoLivePreviewFunc           func,
                       gpointer                      user_data)
{
  TomoLivePreview *self = g_new0 (TomoLivePreview, 1);

  self->rx = receiver;
  self->options = *options;
  if (self->options.max_rate == 0 || !isfinite (self->options.max_rate))
    self->options.max_rate = 60;
  self->func = func;
  self->user_data = user_data;
  self->stored = g_array_new (FALSE, TRUE, sizeof (float));
  self->in_slice = g_array_new (FALSE, TRUE, sizeof (guint8));
  self->delays = g_array_new (FALSE, FALSE, sizeof (double));
  self->rotation = -1;
  g_mutex_init (&self->lock);
  if (self->options.max_rate > 0)
    self->thread = g_thread_new ("tomo-live-preview", preview_thread, self);
  return self;
}

void
tomo_live_preview_free (TomoLivePreview *self)
{
  if (self == NULL)
    return;
  g_atomic_int_set (&self->stop, 1);
  if (self->thread != NULL)
    g_thread_join (self->thread);
  reset (self);
  g_array_unref (self->stored);
  g_array_unref (self->in_slice);
  g_array_unref (self->delays);
  g_free (self->image);
  g_clear_pointer (&self->slice, tomo_slice_unref);
  g_free (self->error);
  g_mutex_clear (&self->lock);
  g_free (self);
}

float *
tomo_live_preview_dup_image (TomoLivePreview *self,
                             guint           *width,
                             guint           *n_in_image,
                             guint64         *version)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  if (self->image == NULL)
    return NULL;
  *width = self->width;
  if (n_in_image != NULL)
    *n_in_image = self->image_n;
  if (version != NULL)
    *version = self->version;
  return g_memdup2 (self->image, sizeof (float) * self->width * self->width);
}

TomoSlice *
tomo_live_preview_dup_slice (TomoLivePreview *self,
                             guint           *n_in_slice,
                             guint64         *version)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  if (self->slice == NULL)
    return NULL;
  if (n_in_slice != NULL)
    *n_in_slice = self->image_n;
  if (version != NULL)
    *version = self->version;
  return tomo_slice_ref (self->slice);
}

void
tomo_live_preview_get_delays (TomoLivePreview *self,
                              double          *median_ms,
                              double          *max_ms,
                              guint           *n)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  g_autoptr(GArray) sorted = g_array_copy (self->delays);

  *n = sorted->len;
  *median_ms = sorted->len ? _tomo_median ((double *) sorted->data, sorted->len) : NAN;
  *max_ms = sorted->len ? g_array_index (sorted, double, sorted->len - 1) : NAN;
}

char *
tomo_live_preview_dup_error (TomoLivePreview *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return g_strdup (self->error);
}

TomoBackend
tomo_live_preview_get_backend (TomoLivePreview *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  return self->backend;
}
