/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-live"

#include "config.h"

#include <math.h>
#include <string.h>

#include <hdf5.h>

#include "tomo-error.h"
#include "tomo-hdf5-private.h"
#include "tomo-live-recorder.h"
#include "tomo-scan-private.h"

static const char *const dataset_names[3] = {
  [TOMO_FRAME_PROJECTION] = "/exchange/data",
  [TOMO_FRAME_FLAT] = "/exchange/data_white",
  [TOMO_FRAME_DARK] = "/exchange/data_dark",
};

struct _TomoLiveRecorder
{
  TomoLiveScan *scan;
  char         *path;
  hid_t         file;
  hid_t         dsets[3];
  hsize_t       dims[3];       /* first dimension of each dataset */
  guint64       since;
  guint64       calibration;
  guint64       n_written;
};

static hid_t
h5_type (TomoDType dtype)
{
  switch (dtype)
    {
    case TOMO_DTYPE_UINT8: return H5T_STD_U8LE;
    case TOMO_DTYPE_UINT16: return H5T_STD_U16LE;
    case TOMO_DTYPE_UINT32: return H5T_STD_U32LE;
    case TOMO_DTYPE_FLOAT64: return H5T_IEEE_F64LE;
    default: return H5T_IEEE_F32LE;
    }
}

static gboolean
fail (TomoLiveRecorder *self,
      const char       *what,
      GError          **error)
{
  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE, "Recording %s: could not %s", self->path, what);
  return FALSE;
}

TomoLiveRecorder *
tomo_live_recorder_new (TomoLiveScan *scan,
                        const char   *path,
                        GError      **error)
{
  g_autoptr(TomoLiveRecorder) self = g_new0 (TomoLiveRecorder, 1);
  hid_t group;

  self->scan = tomo_live_scan_ref (scan);
  self->path = g_strdup (path);
  self->file = -1;
  for (guint k = 0; k < 3; k++)
    self->dsets[k] = -1;
  _tomo_hdf5_lock ();
  self->file = H5Fcreate (path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  group = self->file >= 0 ? H5Gcreate2 (self->file, "/exchange", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
  if (group >= 0)
    H5Gclose (group);
  _tomo_hdf5_unlock ();
  if (group < 0)
    {
      fail (self, "create the file", error);
      return NULL;
    }
  return g_steal_pointer (&self);
}

/* Writes one frame at `slot`, creating or growing the dataset. */
static gboolean
write_frame_locked (TomoLiveRecorder *self,
                    int               kind,
                    guint             slot,
                    TomoDType         dtype,
                    const guint8     *data)
{
  hsize_t rows = tomo_live_scan_get_rows (self->scan), cols = tomo_live_scan_get_cols (self->scan);
  hsize_t count[3] = { 1, rows, cols }, start[3] = { slot, 0, 0 };
  hid_t space, mspace;
  herr_t status;

  if (self->dsets[kind] < 0)
    {
      hsize_t dims[3] = { slot + 1, rows, cols }, maxdims[3] = { H5S_UNLIMITED, rows, cols };
      hid_t dcpl = H5Pcreate (H5P_DATASET_CREATE);

      space = H5Screate_simple (3, dims, maxdims);
      H5Pset_chunk (dcpl, 3, count);
      self->dsets[kind] = H5Dcreate2 (self->file, dataset_names[kind], h5_type (dtype), space, H5P_DEFAULT,
                                      dcpl, H5P_DEFAULT);
      H5Pclose (dcpl);
      H5Sclose (space);
      if (self->dsets[kind] < 0)
        return FALSE;
      self->dims[kind] = slot + 1;
    }
  else if (slot >= self->dims[kind])
    {
      hsize_t dims[3] = { slot + 1, rows, cols };

      if (H5Dset_extent (self->dsets[kind], dims) < 0)
        return FALSE;
      self->dims[kind] = slot + 1;
    }
  space = H5Dget_space (self->dsets[kind]);
  mspace = H5Screate_simple (3, count, NULL);
  H5Sselect_hyperslab (space, H5S_SELECT_SET, start, NULL, count, NULL);
  status = H5Dwrite (self->dsets[kind], h5_type (dtype), mspace, space, H5P_DEFAULT, data);
  H5Sclose (mspace);
  H5Sclose (space);
  self->n_written++;
  return status >= 0;
}

/* An integer attribute (0 or 1) of `dset`. */
static gboolean
write_flag (hid_t       dset,
            const char *name,
            gboolean    value)
{
  guint8 v = value != FALSE;

  return _tomo_hdf5_write_attr (dset, name, H5T_STD_U8LE, H5T_NATIVE_UINT8, &v);
}

static gboolean
write_slot (TomoLiveRecorder *self,
            int               kind,
            guint             slot)
{
  g_autofree guint8 *data = NULL;
  TomoDType dtype;
  gsize n_bytes;
  gboolean ok;

  data = tomo_live_scan_dup_frame (self->scan, kind, slot, &dtype, &n_bytes);
  if (data == NULL)
    return TRUE;
  _tomo_hdf5_lock ();
  ok = write_frame_locked (self, kind, slot, dtype, data);
  _tomo_hdf5_unlock ();
  return ok;
}

gboolean
tomo_live_recorder_flush (TomoLiveRecorder *self,
                          GError          **error)
{
  g_autoptr(GArray) slots = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) ids = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr(GArray) arrivals = g_array_new (FALSE, FALSE, sizeof (gint64));
  guint64 now, calibration;
  gboolean flushed;

  tomo_live_scan_collect_changed (self->scan, self->since, &now, &calibration, slots, ids, arrivals);
  for (guint i = 0; i < slots->len; i++)
    if (!write_slot (self, TOMO_FRAME_PROJECTION, g_array_index (slots, guint, i)))
      return fail (self, "write /exchange/data", error);
  if (calibration != self->calibration)
    for (int k = TOMO_FRAME_FLAT; k <= TOMO_FRAME_DARK; k++)
      for (guint s = 0; s < tomo_live_scan_get_n_slots (self->scan, k); s++)
        if (!write_slot (self, k, s))
          return fail (self, dataset_names[k] + 1, error);
  self->since = now;
  self->calibration = calibration;
  /* A run killed now leaves a file HDF5 reads, with what came so far. */
  _tomo_hdf5_lock ();
  flushed = H5Fflush (self->file, H5F_SCOPE_LOCAL) >= 0;
  _tomo_hdf5_unlock ();
  if (!flushed)
    return fail (self, "flush the file", error);
  return TRUE;
}

static void
close_locked (TomoLiveRecorder *self)
{
  for (guint k = 0; k < 3; k++)
    if (self->dsets[k] >= 0)
      {
        H5Dclose (self->dsets[k]);
        self->dsets[k] = -1;
      }
}

gboolean
tomo_live_recorder_finish (TomoLiveRecorder *self,
                           GError          **error)
{
  g_autoptr(TomoLiveRecorder) owned = self;
  g_autoptr(TomoScan) scan = NULL;
  g_autofree double *theta = NULL;
  g_autofree guint8 *present = NULL;
  g_autofree float *gap = NULL;
  const double *angles;
  guint n_present;
  hsize_t n;
  gboolean ok, normalised, linear;

  if (!tomo_live_recorder_flush (self, error))
    return FALSE;
  /* The counts and angles as a reader of the live scan sees them. */
  scan = tomo_live_scan_create_scan (self->scan, error);
  if (scan == NULL)
    return FALSE;
  n = tomo_scan_get_n_projections (scan);
  angles = tomo_scan_get_angles (scan);
  theta = g_new (double, n);
  for (hsize_t i = 0; i < n; i++)
    theta[i] = angles[i] * 180.0 / G_PI;

  present = tomo_live_scan_dup_present (self->scan, &n_present);
  for (hsize_t i = 0; i < n && gap == NULL; i++)
    if (i >= n_present || !present[i])
      gap = tomo_live_scan_dup_gap_frame (self->scan);
  tomo_live_scan_get_state (self->scan, &normalised, &linear);
  _tomo_hdf5_lock ();
  /* A projection that never came reads as the live scan reads it (the mean
   * flat: it adds nothing), not as zeros; gaps at the end too, so that
   * data is as long as theta. */
  ok = TRUE;
  for (hsize_t i = 0; i < n && ok; i++)
    if (i >= n_present || !present[i])
      ok = write_frame_locked (self, TOMO_FRAME_PROJECTION, i, TOMO_DTYPE_FLOAT32, (const guint8 *) gap);
  /* Data already normalised (no flats): a unit flat, so that the file
   * reopens as it was received; and the state, for the reader. */
  if (ok && normalised && self->dsets[TOMO_FRAME_FLAT] < 0)
    {
      g_autofree float *ones = g_new (float, (gsize) tomo_live_scan_get_rows (self->scan) *
                                             tomo_live_scan_get_cols (self->scan));

      for (gsize i = 0; i < (gsize) tomo_live_scan_get_rows (self->scan) * tomo_live_scan_get_cols (self->scan); i++)
        ones[i] = 1.0f;
      ok = write_frame_locked (self, TOMO_FRAME_FLAT, 0, TOMO_DTYPE_FLOAT32, (const guint8 *) ones);
    }
  ok = ok && write_flag (self->dsets[TOMO_FRAME_PROJECTION], "already_normalised", normalised) &&
       write_flag (self->dsets[TOMO_FRAME_PROJECTION], "already_linear", linear);
  ok = ok && _tomo_hdf5_write_doubles (self->file, "/exchange/theta", n, theta);
  close_locked (self);
  ok = H5Fclose (self->file) >= 0 && ok;
  self->file = -1;
  _tomo_hdf5_unlock ();
  if (!ok)
    return fail (self, "fill the gaps, write /exchange/theta and close", error);
  return TRUE;
}

void
tomo_live_recorder_free (TomoLiveRecorder *self)
{
  if (self == NULL)
    return;
  if (self->file >= 0)
    {
      _tomo_hdf5_lock ();
      close_locked (self);
      H5Fclose (self->file);
      _tomo_hdf5_unlock ();
    }
  tomo_live_scan_unref (self->scan);
  g_free (self->path);
  g_free (self);
}

guint64
tomo_live_recorder_get_n_written (TomoLiveRecorder *self)
{
  return self->n_written;
}
