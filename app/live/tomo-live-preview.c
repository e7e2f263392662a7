/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-live"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-backend.h"
#include "tomo-live-preview.h"
#include "tomo-median.h"

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
  /* A step's host buffers, kept from step to step: a step allocates nothing
   * once they are as large as its batches. */
  GArray                *slots, *ids, *arrivals, *add; /* guint, guint, gint64, guint */
  GHashTable            *seen;
  GArray                *raw;         /* float: add->len + 2 rows (flat, dark) */
  GArray                *angles;      /* double */

  GMutex                 lock;        /* guards what follows */
  guint                  image_n;     /* projections in `slice` */
  guint64                version;
  TomoSlice             *slice;       /* the slice as the engine's, with its values */
  TomoBackend            backend;     /* that the slice runs on */
  GArray                *delays;      /* double ms */
  gint64                 delays_from; /* arrivals before it are not counted */
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

gboolean
tomo_live_preview_step (TomoLivePreview *self,
                        GError         **error)
{
  g_autoptr(TomoLiveScan) scan = tomo_live_receiver_dup_current (self->rx);
  GArray *slots = self->slots, *ids = self->ids, *arrivals = self->arrivals, *add = self->add;
  GHashTable *seen = self->seen;
  float *raw, *flat, *dark;
  double *angles;
  g_autoptr(TomoSlice) slice = NULL;
  guint64 now, calibration;
  gboolean normalise, apply_log;
  guint w;
  gint64 done, started = g_get_monotonic_time ();

  if (scan == NULL)
    return TRUE;
  g_array_set_size (slots, 0);
  g_array_set_size (ids, 0);
  g_array_set_size (arrivals, 0);
  g_array_set_size (add, 0);
  g_hash_table_remove_all (seen);
  if (scan != self->scan && !start_scan (self, scan, error))
    return FALSE;

  if (self->since != 0 && tomo_live_scan_get_generation (scan) == self->since)
    return TRUE;   /* nothing new */
  tomo_live_scan_collect_changed (scan, self->since, &now, &calibration, slots, ids, arrivals);
  if (calibration != self->calibration)
    {
      /* New flats or darks: every row is normalised anew. */
      tomo_live_accumulator_clear (self->acc);
      self->calibration = calibration;
      self->since = 0;
      g_array_set_size (slots, 0);
      g_array_set_size (ids, 0);
      g_array_set_size (arrivals, 0);
      tomo_live_scan_collect_changed (scan, 0, &now, &calibration, slots, ids, arrivals);
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
          self->rotation = rotation;
          g_array_set_size (add, 0);
          g_hash_table_remove_all (seen);
        }
      /* A slot written twice since the last step is read once, as it is now. */
      if (g_hash_table_add (seen, GUINT_TO_POINTER (s + 1)))
        g_array_append_val (add, s);
    }

  g_array_set_size (self->raw, ((gsize) add->len + 2) * w);
  g_array_set_size (self->angles, MAX (add->len, 1));
  raw = (float *) self->raw->data;
  flat = raw + (gsize) add->len * w;
  dark = flat + w;
  angles = (double *) self->angles->data;
  if (!tomo_live_scan_read_row (scan, self->row, (const guint *) add->data, add->len, raw, flat, dark,
                                &normalise, &apply_log))
    {
      g_set_error (error, TOMO_LIVE_ERROR, TOMO_LIVE_ERROR_INCOMPLETE,
                   "Live slice: row %u is outside the scan's %u rows", self->row, tomo_live_scan_get_rows (scan));
      return FALSE;
    }
  for (guint i = 0; i < add->len; i++)
    angles[i] = tomo_live_scan_get_angle (scan, g_array_index (add, guint, i));
  {
    TomoLiveRows rows = { raw, { normalise ? flat : NULL, normalise ? dark : NULL, apply_log },
                          (const guint *) add->data, angles, add->len };

    if (!tomo_live_accumulator_put (self->acc, &rows, error))
      return FALSE;
  }

  /* The window shows it as the engine's: statistics come with the slice. */
  slice = tomo_live_accumulator_dup_slice (self->acc, self->row, self->options.device_only, error);
  if (slice == NULL)
    return FALSE;
  slice->total_ms = (g_get_monotonic_time () - started) / 1e3;
  {
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

    g_clear_pointer (&self->slice, tomo_slice_unref);
    self->slice = tomo_slice_ref (slice);
    self->image_n = tomo_live_accumulator_get_n (self->acc);
    self->version++;
  }
  /* Arrival → shown: after the caller's display of the slice. */
  if (self->func != NULL)
    self->func (self, self->user_data);
  done = g_get_monotonic_time ();
  {
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

    for (guint i = 0; i < arrivals->len && self->delays->len < 1000000; i++)
      {
        double ms = (done - g_array_index (arrivals, gint64, i)) / 1e3;

        if (g_array_index (arrivals, gint64, i) >= self->delays_from)
          g_array_append_val (self->delays, ms);
      }
  }
  return TRUE;
}

/* A step as soon as something has arrived (the scan's change wakes the
 * thread; a new scan or a stop is seen within 2 ms), and at most max_rate
 * steps a second: a projection waits for the step after it, not for the
 * next tick of a fixed clock. */
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
      guint64 version;

      if (now < next)
        {
          g_usleep (MIN (next - now, 1000));
          continue;
        }
      g_mutex_lock (&self->lock);
      version = self->version;
      g_mutex_unlock (&self->lock);
      if (!tomo_live_preview_step (self, &error))
        {
          g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

          if (self->error == NULL)
            g_message ("Live preview: %s", error->message);
          g_free (self->error);
          self->error = g_strdup (error->message);
          reset (self);
          next = now + period;
          continue;
        }
      g_mutex_lock (&self->lock);
      if (self->version != version)
        next = now + period;
      else
        next = 0;
      g_mutex_unlock (&self->lock);
      if (next == 0)
        {
          /* Nothing new: until the scan changes. */
          if (self->scan != NULL && self->since != 0)
            tomo_live_scan_wait_generation (self->scan, self->since, g_get_monotonic_time () + 2000);
          else
            g_usleep (1000);
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
  self->delays = g_array_new (FALSE, FALSE, sizeof (double));
  self->slots = g_array_new (FALSE, FALSE, sizeof (guint));
  self->ids = g_array_new (FALSE, FALSE, sizeof (guint));
  self->arrivals = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->add = g_array_new (FALSE, FALSE, sizeof (guint));
  self->seen = g_hash_table_new (NULL, NULL);
  self->raw = g_array_new (FALSE, FALSE, sizeof (float));
  self->angles = g_array_new (FALSE, FALSE, sizeof (double));
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
  g_array_unref (self->delays);
  g_array_unref (self->slots);
  g_array_unref (self->ids);
  g_array_unref (self->arrivals);
  g_array_unref (self->add);
  g_hash_table_unref (self->seen);
  g_array_unref (self->raw);
  g_array_unref (self->angles);
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
  g_autoptr(TomoSlice) slice = NULL;
  g_autofree float *image = NULL;
  gsize n;

  slice = tomo_live_preview_dup_slice (self, n_in_image, version);
  if (slice == NULL)
    return NULL;
  *width = slice->width;
  n = (gsize) slice->width * slice->height;
  if (slice->data != NULL)
    return g_memdup2 (slice->data, sizeof (float) * n);
  image = g_new (float, n);
  if (slice->device_buffer == NULL ||
      !((const TomoDeviceBufferOps *) slice->device_ops)->download (slice->device_buffer, image))
    return NULL;
  return g_steal_pointer (&image);
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

void
tomo_live_preview_reset_delays (TomoLivePreview *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);

  g_array_set_size (self->delays, 0);
  self->delays_from = g_get_monotonic_time ();
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
