/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-error.h"
#include "tomo-window-private.h"

/* The reconstruction parameters of a scan in a small key file beside it,
 * "<scan>.tomolive", so the centre found today is there tomorrow (and
 * readable by a script). */

#define GROUP "reconstruction"

char *
_tomo_window_params_path (TomoWindow *self)
{
  g_autofree char *scan_path = NULL;

  if (self->scan == NULL)
    return NULL;
  scan_path = g_strdup (tomo_scan_get_path (self->scan));
  /* A TIFF stack's folder or glob: the file goes beside the folder. */
  while (g_str_has_suffix (scan_path, G_DIR_SEPARATOR_S) && strlen (scan_path) > 1)
    scan_path[strlen (scan_path) - 1] = '\0';
  return g_strconcat (scan_path, ".tomolive", NULL);
}

gboolean
_tomo_window_save_params (TomoWindow *self,
                          GError    **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *path = _tomo_window_params_path (self);
  const TomoWindowParams *p = &self->params;
  int roi[4] = { p->roi.x, p->roi.y, p->roi.width, p->roi.height };

  if (path == NULL)
    {
      g_set_error_literal (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                           "No scan is open: there are no parameters to save");
      return FALSE;
    }
  g_key_file_set_comment (kf, NULL, NULL, " tomolive reconstruction parameters of the scan beside this file", NULL);
  /* The detector column, as --center takes it, in the geometry it is
   * one in (--geometry). */
  if (self->have_plan)
    g_key_file_set_string (kf, GROUP, "geometry", tomo_geometry_kind_to_string (self->plan.kind));
  {
    /* The field's digits (set_double would write 258.97000000000003). */
    char center[G_ASCII_DTOSTR_BUF_SIZE];

    g_ascii_formatd (center, sizeof center, "%.2f", _tomo_window_detector_center (self, p->center));
    g_key_file_set_value (kf, GROUP, "center", center);
  }
  if (self->have_plan)
    {
      /* The axis tilt corrected, as --tilt takes it. */
      char tilt[G_ASCII_DTOSTR_BUF_SIZE];

      g_ascii_formatd (tilt, sizeof tilt, "%.4f", self->tilt);
      g_key_file_set_value (kf, GROUP, "tilt", tilt);
    }
  g_key_file_set_integer (kf, GROUP, "row", p->row);
  g_key_file_set_string (kf, GROUP, "filter", tomo_filter_type_to_string (p->filter));
  g_key_file_set_string (kf, GROUP, "interpolation", tomo_interp_to_string (p->interp));
  g_key_file_set_integer (kf, GROUP, "slices", p->n_slices);
  g_key_file_set_string (kf, GROUP, "kernel", tomo_kernel_to_string (p->kernel));
  g_key_file_set_integer_list (kf, GROUP, "roi", roi, 4);
  return g_key_file_save_to_file (kf, path, error);
}

/* Sets what `kf` says (checked by the caller, but for the centre, which is
 * checked here against the scan now shown). */
static gboolean
apply_params (TomoWindow *self,
              GKeyFile   *kf,
              const char *path,
              GError    **error)
{
  g_autofree char *filter = g_key_file_get_string (kf, GROUP, "filter", NULL);
  g_autofree char *interp = g_key_file_get_string (kf, GROUP, "interpolation", NULL);
  g_autofree char *kernel = g_key_file_get_string (kf, GROUP, "kernel", NULL);
  g_autofree int *roi = NULL;
  gsize n_roi = 0;
  double detector = g_key_file_get_double (kf, GROUP, "center", NULL);
  double center = detector + self->center_shift;
  int row = g_key_file_get_integer (kf, GROUP, "row", NULL);
  int slices = g_key_file_get_integer (kf, GROUP, "slices", NULL);
  guint width = tomo_scan_get_width (self->scan);

  if (!isfinite (center) || center < 0 || center > width - 1.0)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Parameters “%s”: centre %g is outside the scan (detector columns %g…%g)",
                   path, detector, -self->center_shift, width - 1.0 - self->center_shift);
      return FALSE;
    }
  roi = g_key_file_get_integer_list (kf, GROUP, "roi", &n_roi, NULL);
  g_object_freeze_notify (G_OBJECT (self));
  /* The tilt first: the centre saved is the one of the rows corrected. */
  if (g_key_file_has_key (kf, GROUP, "tilt", NULL))
    _tomo_window_set_tilt (self, g_key_file_get_double (kf, GROUP, "tilt", NULL));
  g_object_set (self, "center", center, "row", (guint) row, NULL);
  if (slices == 1 || slices == 2 || slices == 4)
    g_object_set (self, "n-slices", (guint) slices, NULL);
  if (filter != NULL)
    g_object_set (self, "filter", filter, NULL);
  if (interp != NULL)
    g_object_set (self, "interp", interp, NULL);
  if (kernel != NULL)
    g_object_set (self, "kernel", kernel, NULL);
  g_object_thaw_notify (G_OBJECT (self));
  if (roi != NULL && n_roi == 4 && roi[0] >= 0 && roi[1] >= 0 && roi[2] >= 0 && roi[3] >= 0
      && (guint) roi[0] + roi[2] <= width && (guint) roi[1] + roi[3] <= width)
    _tomo_window_set_roi (self, roi[0], roi[1], roi[2], roi[3]);
  /* The background estimate of a geometry just shown does not move it. */
  self->center_held = TRUE;
  return TRUE;
}

void
_tomo_window_apply_pending_params (TomoWindow *self)
{
  g_autoptr(GKeyFile) kf = g_steal_pointer (&self->pending_params);
  g_autofree char *path = _tomo_window_params_path (self);
  g_autoptr(GError) error = NULL;

  if (kf != NULL && !apply_params (self, kf, path, &error))
    {
      g_autofree char *message = g_strdup_printf ("Could not load the parameters: %s",
                                                  error->message);

      tomo_window_show_error (self, message);
    }
}

/* FALSE with `error` for a file that cannot be read or holds a wrong value
 * (named with the key); FALSE without error when there is no file.  Saved
 * in another geometry (or about another offset axis), the scan is shown in
 * that one first, in the background, and the rest applies then. */
gboolean
_tomo_window_load_params (TomoWindow *self,
                          GError    **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *path = _tomo_window_params_path (self);
  g_autofree char *geometry = NULL;
  GError *local = NULL;
  double center;
  int row;
  TomoGeometry g = { TOMO_GEOMETRY_AUTO, TOMO_AXIS_SIDE_ANY };

  if (path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
    return FALSE;
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, error))
    return FALSE;

  center = g_key_file_get_double (kf, GROUP, "center", &local);
  if (local == NULL)
    row = g_key_file_get_integer (kf, GROUP, "row", &local);
  if (local == NULL)
    g_key_file_get_integer (kf, GROUP, "slices", &local);
  if (local == NULL && g_key_file_has_key (kf, GROUP, "tilt", NULL))
    {
      double tilt = g_key_file_get_double (kf, GROUP, "tilt", &local);

      if (local == NULL && !(fabs (tilt) <= TOMO_GEOMETRY_MAX_TILT))
        {
          g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                       "Parameters “%s”: axis tilt %g° is out of range (at most ±%g°)", path,
                       tilt, TOMO_GEOMETRY_MAX_TILT);
          return FALSE;
        }
    }
  if (local != NULL)
    {
      g_propagate_prefixed_error (error, local, "Parameters “%s”: ", path);
      return FALSE;
    }
  geometry = g_key_file_get_string (kf, GROUP, "geometry", NULL);
  if (geometry != NULL && (!tomo_geometry_parse (geometry, &g, &local) || g.kind == TOMO_GEOMETRY_AUTO))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Parameters “%s”: geometry “%s” is not 180, 360 or offset", path, geometry);
      g_clear_error (&local);
      return FALSE;
    }
  if (!isfinite (center) || row < 0 || (guint) row >= tomo_scan_get_height (self->scan))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Parameters “%s”: centre %g or row %d is outside the scan (%u × %u)",
                   path, center, row, tomo_scan_get_width (self->base_scan),
                   tomo_scan_get_height (self->scan));
      return FALSE;
    }

  if (geometry != NULL && self->have_plan
      && (g.kind != self->plan.kind || (g.kind == TOMO_GEOMETRY_OFFSET && center != self->plan.center)))
    {
      /* The offset geometry's rows are stitched about the axis saved, as
       * --geometry offset --center stitches them. */
      g_clear_pointer (&self->pending_params, g_key_file_unref);
      self->pending_params = g_key_file_ref (kf);
      _tomo_window_geometry_show (self, g.kind, g.kind == TOMO_GEOMETRY_OFFSET ? center : NAN);
      return TRUE;
    }
  return apply_params (self, kf, path, error);
}
