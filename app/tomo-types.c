/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-types"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-error.h"
#include "tomo-types.h"

static const char *const filter_names[TOMO_N_FILTERS] = {
  "ram-lak", "shepp-logan", "cosine", "hamming", "hann", "parzen",
};

void
tomo_recon_params_init (TomoReconParams *params,
                        guint            width)
{
  g_return_if_fail (params != NULL);

  memset (params, 0, sizeof *params);
  params->center = width > 0 ? (width - 1) / 2.0 : 0.0;
  params->filter = TOMO_FILTER_RAMLAK;
  params->interp = TOMO_INTERP_LINEAR;
  params->pad = TOMO_PAD_EDGE;
}

TomoRoi
tomo_recon_params_get_roi (const TomoReconParams *params,
                           guint                  width)
{
  TomoRoi roi = params->roi;

  if (roi.width == 0 || roi.height == 0)
    roi = (TomoRoi) { 0, 0, width, width };
  return roi;
}

gboolean
tomo_recon_params_validate (const TomoReconParams *params,
                            guint                  width,
                            GError               **error)
{
  g_return_val_if_fail (params != NULL, FALSE);

  if (!isfinite (params->center) || params->center < 0 || params->center > (double) width - 1)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Rotation centre %g is outside the detector (columns 0 to %u)",
                   params->center, width > 0 ? width - 1 : 0);
      return FALSE;
    }
  if ((guint) params->filter >= TOMO_N_FILTERS)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Unknown filter %d", params->filter);
      return FALSE;
    }
  if (params->interp != TOMO_INTERP_NEAREST && params->interp != TOMO_INTERP_LINEAR)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Unknown interpolation %d", params->interp);
      return FALSE;
    }
  if (params->roi.width != 0 || params->roi.height != 0)
    {
      const TomoRoi *r = &params->roi;

      if (r->width == 0 || r->height == 0
          || (guint64) r->x + r->width > width || (guint64) r->y + r->height > width)
        {
          g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                       "ROI %u,%u,%u,%u does not fit in the %u×%u slice",
                       r->x, r->y, r->width, r->height, width, width);
          return FALSE;
        }
    }
  return TRUE;
}

const char *
tomo_filter_type_to_string (TomoFilterType type)
{
  g_return_val_if_fail ((guint) type < TOMO_N_FILTERS, NULL);
  return filter_names[type];
}

gboolean
tomo_filter_type_from_string (const char     *name,
                              TomoFilterType *type,
                              GError        **error)
{
  guint i;

  if (_tomo_name_lookup (filter_names, TOMO_N_FILTERS, name, &i))
    {
      *type = i;
      return TRUE;
    }
  /* Common spellings from other packages. */
  if (g_ascii_strcasecmp (name, "ramlak") == 0 || g_ascii_strcasecmp (name, "ramp") == 0)
    {
      *type = TOMO_FILTER_RAMLAK;
      return TRUE;
    }
  if (g_ascii_strcasecmp (name, "shepp") == 0)
    {
      *type = TOMO_FILTER_SHEPP_LOGAN;
      return TRUE;
    }
  if (g_ascii_strcasecmp (name, "hanning") == 0)
    {
      *type = TOMO_FILTER_HANN;
      return TRUE;
    }
  g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
               "Unknown filter “%s” (known: ram-lak, shepp-logan, cosine, hamming, hann, parzen)",
               name);
  return FALSE;
}

const char *
tomo_interp_to_string (TomoInterp interp)
{
  return interp == TOMO_INTERP_NEAREST ? "nearest" : "linear";
}

gboolean
tomo_interp_from_string (const char *name,
                         TomoInterp *interp,
                         GError    **error)
{
  if (g_ascii_strcasecmp (name, "nearest") == 0)
    *interp = TOMO_INTERP_NEAREST;
  else if (g_ascii_strcasecmp (name, "linear") == 0)
    *interp = TOMO_INTERP_LINEAR;
  else
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Unknown interpolation “%s” (known: nearest, linear)", name);
      return FALSE;
    }
  return TRUE;
}

const char *
tomo_backend_to_string (TomoBackend backend)
{
  switch (backend)
    {
    case TOMO_BACKEND_CPU: return "cpu";
    case TOMO_BACKEND_GPU: return "gpu";
    case TOMO_BACKEND_AUTO:
    default: return "auto";
    }
}

gboolean
tomo_backend_from_string (const char  *name,
                          TomoBackend *backend,
                          GError     **error)
{
  for (TomoBackend b = TOMO_BACKEND_AUTO; b <= TOMO_BACKEND_GPU; b++)
    if (g_ascii_strcasecmp (name, tomo_backend_to_string (b)) == 0)
      {
        *backend = b;
        return TRUE;
      }
  g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
               "Unknown backend “%s” (known: auto, cpu, gpu)", name);
  return FALSE;
}

gboolean
_tomo_name_lookup (const char *const *names,
                   guint              n,
                   const char        *name,
                   guint             *index)
{
  for (guint i = 0; name != NULL && i < n; i++)
    if (names[i] != NULL && g_ascii_strcasecmp (name, names[i]) == 0)
      {
        *index = i;
        return TRUE;
      }
  return FALSE;
}

const char *
_tomo_name_of (const char *const *names,
               guint              n,
               guint              value)
{
  return value < n && names[value] != NULL ? names[value] : "unknown";
}
