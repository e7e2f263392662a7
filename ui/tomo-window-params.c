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
  g_key_file_set_double (kf, GROUP, "center", p->center);
  g_key_file_set_integer (kf, GROUP, "row", p->row);
  g_key_file_set_string (kf, GROUP, "filter", tomo_filter_type_to_string (p->filter));
  g_key_file_set_string (kf, GROUP, "interpolation", tomo_interp_to_string (p->interp));
  g_key_file_set_integer (kf, GROUP, "slices", p->n_slices);
  g_key_file_set_string (kf, GROUP, "kernel", tomo_kernel_to_string (p->kernel));
  g_key_file_set_integer_list (kf, GROUP, "roi", roi, 4);
  return g_key_file_save_to_file (kf, path, error);
}

/* FALSE with `error` for a file that cannot be read or holds a wrong value
 * (named with the key); FALSE without error when there is no file. */
gboolean
_tomo_window_load_params (TomoWindow *self,
                          GError    **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_autofree char *path = _tomo_window_params_path (self);
  g_autofree char *filter = NULL, *interp = NULL, *kernel = NULL;
  g_autofree int *roi = NULL;
  GError *local = NULL;
  gsize n_roi = 0;
  double center;
  int row, slices;

  if (path == NULL || !g_file_test (path, G_FILE_TEST_EXISTS))
    return FALSE;
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, error))
    return FALSE;

  center = g_key_file_get_double (kf, GROUP, "center", &local);
  if (local == NULL)
    row = g_key_file_get_integer (kf, GROUP, "row", &local);
  if (local == NULL)
    slices = g_key_file_get_integer (kf, GROUP, "slices", &local);
  if (local != NULL)
    {
      g_propagate_prefixed_error (error, local, "Parameters “%s”: ", path);
      return FALSE;
    }
  filter = g_key_file_get_string (kf, GROUP, "filter", NULL);
  interp = g_key_file_get_string (kf, GROUP, "interpolation", NULL);
  kernel = g_key_file_get_string (kf, GROUP, "kernel", NULL);
  roi = g_key_file_get_integer_list (kf, GROUP, "roi", &n_roi, NULL);

  if (!isfinite (center) || center < 0 || center > tomo_scan_get_width (self->scan) - 1
      || row < 0 || (guint) row >= tomo_scan_get_height (self->scan))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                   "Parameters “%s”: centre %g or row %d is outside the scan (%u × %u)",
                   path, center, row, tomo_scan_get_width (self->scan), tomo_scan_get_height (self->scan));
      return FALSE;
    }

  g_object_freeze_notify (G_OBJECT (self));
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
      && (guint) roi[0] + roi[2] <= tomo_scan_get_width (self->scan)
      && (guint) roi[1] + roi[3] <= tomo_scan_get_width (self->scan))
    _tomo_window_set_roi (self, roi[0], roi[1], roi[2], roi[3]);
  return TRUE;
}
