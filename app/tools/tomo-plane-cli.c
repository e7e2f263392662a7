/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-cli"

#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "tomo-error.h"
#include "tomo-output.h"
#include "tomo-plane-cli.h"
#include "tomo-tiff-writer.h"
#include "tomo-volume.h"
#include "tomo-volume-writer.h"

static gboolean
parse_numbers (const char *text,
               double     *v,
               guint       min,
               guint       max,
               guint      *n)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  guint k = g_strv_length (parts);

  if (k < min || k > max)
    return FALSE;
  for (guint i = 0; i < k; i++)
    {
      char *end = NULL;

      v[i] = g_ascii_strtod (parts[i], &end);
      if (end == parts[i] || *end != '\0' || !isfinite (v[i]))
        return FALSE;
    }
  *n = k;
  return TRUE;
}

gboolean
tomo_plane_cli_parse (const char    *text,
                      guint          width,
                      guint          row_start,
                      guint          row_end,
                      const TomoRoi *roi,
                      TomoPlane     *plane,
                      GError       **error)
{
  const char *arg = strchr (text, ':');
  double v[5];
  guint n = 0, h = row_end - row_start;
  gboolean has_roi = roi != NULL && roi->width > 0;

  if (arg != NULL && (g_str_has_prefix (text, "xz:") || g_str_has_prefix (text, "yz:")))
    {
      if (!parse_numbers (arg + 1, v, 1, 1, &n) || v[0] < 0 || v[0] > width - 1)
        {
          g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                       "--plane “%s”: the position must be a number from 0 to %u", text,
                       width - 1);
          return FALSE;
        }
      if (text[0] == 'x')
        tomo_plane_init_xz (plane, v[0], has_roi ? roi->x : 0, has_roi ? roi->width : width,
                            row_start, h);
      else
        tomo_plane_init_yz (plane, v[0], has_roi ? roi->y : 0, has_roi ? roi->height : width,
                            row_start, h);
      return TRUE;
    }
  if (arg != NULL && g_str_has_prefix (text, "oblique:"))
    {
      double centre[3] = { (width - 1) / 2.0, (width - 1) / 2.0, row_start + (h - 1) / 2.0 };

      if (!parse_numbers (arg + 1, v, 1, 5, &n) || n == 3 || n == 4)
        {
          g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                       "--plane “%s” is not of the form oblique:AZIMUTH[,TILT[,X,Y,Z]] (degrees, "
                       "slice pixels, detector row)", text);
          return FALSE;
        }
      if (n == 5)
        {
          centre[0] = v[2];
          centre[1] = v[3];
          centre[2] = v[4];
        }
      tomo_plane_init_oblique (plane, centre, v[0], n >= 2 ? v[1] : 0.0, width, h, 1.0);
      return tomo_plane_validate (plane, error);
    }
  g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
               "--plane “%s”: expected xz:Y, yz:X or oblique:AZIMUTH[,TILT[,X,Y,Z]]", text);
  return FALSE;
}

gboolean
tomo_plane_cli_run (TomoScan              *scan,
                    const TomoPlaneCliJob *job,
                    GError               **error)
{
  const TomoReconParams *params = job->params;
  g_autoptr (TomoVolume) vol = NULL;
  g_autofree float *out = NULL;
  g_autofree char *desc = NULL;
  TomoPlane plane;
  gint64 t0 = g_get_monotonic_time (), t1;

  if (!tomo_plane_cli_parse (job->text, tomo_scan_get_width (scan), job->row_start, job->row_end,
                             &params->roi, &plane, error))
    return FALSE;
  /* Before the store is filled (minutes for a large scan): the writer
   * checks again, against every input of this process. */
  if (!tomo_output_check_inputs (job->output, tomo_scan_get_input_files (scan), error))
    return FALSE;
  switch (tomo_volume_format_guess (job->output))
    {
    case TOMO_VOLUME_FORMAT_TIFF_FOLDER:
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "--plane writes one TIFF file; “%s” is a folder", job->output);
      return FALSE;
    case TOMO_VOLUME_FORMAT_HDF5:
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "--plane writes one TIFF file; “%s” names an HDF5 file (name it .tif)",
                   job->output);
      return FALSE;
    default:
      break;
    }
  vol = tomo_volume_new (scan, job->row_start, job->row_end, params, job->backend, 0, error);
  if (vol == NULL || !tomo_volume_fill (vol, NULL, NULL, NULL, error))
    return FALSE;
  t1 = g_get_monotonic_time ();
  out = g_new (float, (gsize) plane.width * plane.height);
  if (!tomo_volume_plane (vol, &plane, params->center, params->interp, out, error) ||
      !tomo_tiff_write_float (job->output, out, plane.width, plane.height, 1, error))
    return FALSE;
  if (!job->quiet)
    {
      desc = tomo_volume_describe (vol);
      g_print ("plane %s of %u×%u from rows %u:%u: store filled in %.3f s (%s), plane in %.1f ms, "
               "centre %.2f → %s\n", job->text, plane.width, plane.height, job->row_start,
               job->row_end, (t1 - t0) / 1e6, desc, tomo_volume_get_plane_ms (vol), params->center,
               job->output);
    }
  return TRUE;
}
