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
static const TomoNameTable filter_table = {
  "filter", filter_names, TOMO_N_FILTERS,
  /* Common spellings from other packages. */
  (const char *const[]) { "ramlak", "ram-lak", "ramp", "ram-lak", "shepp", "shepp-logan",
                          "hanning", "hann", NULL },
  NULL, tomo_recon_error_quark, TOMO_RECON_ERROR_INVALID_PARAM,
};
static const TomoNameTable interp_table = {
  "interpolation", (const char *const[]) { "nearest", "linear" }, 2, NULL, NULL,
  tomo_recon_error_quark, TOMO_RECON_ERROR_INVALID_PARAM,
};
static const TomoNameTable backend_table = {
  "backend", (const char *const[]) { "auto", "cpu", "gpu" }, 3, NULL, NULL,
  tomo_recon_error_quark, TOMO_RECON_ERROR_INVALID_PARAM,
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

TOMO_DEFINE_FROM_STRING (tomo_filter_type_from_string, TomoFilterType, filter_table)

const char *
tomo_interp_to_string (TomoInterp interp)
{
  return interp == TOMO_INTERP_NEAREST ? "nearest" : "linear";
}

TOMO_DEFINE_FROM_STRING (tomo_interp_from_string, TomoInterp, interp_table)

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

TOMO_DEFINE_FROM_STRING (tomo_backend_from_string, TomoBackend, backend_table)

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

int
_tomo_name_parse (const TomoNameTable *table,
                  const char          *name,
                  GError             **error)
{
  g_autoptr (GString) known = NULL;
  guint i;

  if (_tomo_name_lookup (table->names, table->n, name, &i))
    return i;
  for (const char *const *a = table->aliases; name != NULL && a != NULL && a[0] != NULL; a += 2)
    if (g_ascii_strcasecmp (name, a[0]) == 0 && _tomo_name_lookup (table->names, table->n, a[1], &i))
      return i;
  known = g_string_new (table->known);
  for (i = 0; table->known == NULL && i < table->n; i++)
    g_string_append_printf (known, "%s%s", i == 0 ? "known: " : ", ", table->names[i]);
  g_set_error (error, table->domain (), table->code, "Unknown %s “%s” (%s)", table->what,
               name != NULL ? name : "", known->str);
  return -1;
}

const char *
_tomo_name_of (const char *const *names,
               guint              n,
               guint              value)
{
  return value < n && names[value] != NULL ? names[value] : "unknown";
}
