/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-options"

#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "tomo-error.h"
#include "tomo-options.h"

gboolean
tomo_parse_number (const char *option,
                   const char *text,
                   double      min,
                   double      max,
                   gboolean    integer,
                   double     *value,
                   GError    **error)
{
  char *end = NULL;
  double v;

  g_return_val_if_fail (option != NULL && text != NULL && value != NULL, FALSE);

  errno = 0;
  v = g_ascii_strtod (text, &end);
  while (end != NULL && g_ascii_isspace (*end))
    end++;
  if (end == text || *text == '\0' || *end != '\0' || g_ascii_isspace (*text))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "%s “%s” is not a number", option, text);
      return FALSE;
    }
  if (!isfinite (v) || errno == ERANGE)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "%s “%s” is not a finite number", option, text);
      return FALSE;
    }
  if (integer && v != floor (v))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "%s “%s” is not a whole number", option, text);
      return FALSE;
    }
  if (v < min || v > max)
    {
      if (integer)
        g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                     "%s %s is out of range (%.0f to %.0f)", option, text, min, max);
      else
        g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                     "%s %s is out of range (%g to %g)", option, text, min, max);
      return FALSE;
    }
  *value = v;
  return TRUE;
}

gboolean
tomo_number_option_cb (const char *option_name,
                       const char *value,
                       gpointer    data,
                       GError    **error)
{
  TomoNumberOption *numbers = data;
  const char *name = option_name;

  g_return_val_if_fail (numbers != NULL, FALSE);

  while (*name == '-')
    name++;
  for (TomoNumberOption *n = numbers; n->long_name != NULL; n++)
    if (g_str_equal (name, n->long_name) || (n->short_name && name[0] == n->short_name && name[1] == '\0'))
      {
        g_autofree char *shown = g_strconcat ("--", n->long_name, NULL);

        if (!tomo_parse_number (shown, value, n->min, n->max, n->integer, n->value, error))
          return FALSE;
        n->given = TRUE;
        return TRUE;
      }
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "Unknown option %s", option_name);
  return FALSE;
}

GOptionGroup *
tomo_number_option_group (const char         *name,
                          const char         *description,
                          const GOptionEntry *entries,
                          TomoNumberOption   *numbers)
{
  GOptionGroup *group = g_option_group_new (name, description, description, numbers, NULL);

  g_option_group_add_entries (group, entries);
  return group;
}

gboolean
tomo_parse_rows (const char *text,
                 guint       height,
                 guint      *start,
                 guint      *end,
                 GError    **error)
{
  g_auto(GStrv) parts = g_strsplit (text, ":", 2);
  guint64 a = 0, b = height;

  if (g_strv_length (parts) != 2
      || (parts[0][0] != '\0' && !g_ascii_string_to_unsigned (parts[0], 10, 0, G_MAXUINT, &a, NULL))
      || (parts[1][0] != '\0' && !g_ascii_string_to_unsigned (parts[1], 10, 0, G_MAXUINT, &b, NULL)))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "--rows “%s” is not of the form A:B (rows A to B−1)", text);
      return FALSE;
    }
  if (a >= b)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "--rows %s is empty or reversed: A:B means rows A to B−1 with A < B", text);
      return FALSE;
    }
  if (b > height)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Rows %s are out of range: the scan has rows 0 to %u", text, height - 1);
      return FALSE;
    }
  *start = a;
  *end = b;
  return TRUE;
}

gboolean
tomo_parse_roi (const char *text,
                guint       slice_size,
                TomoRoi    *roi,
                GError    **error)
{
  g_auto(GStrv) parts = g_strsplit (text, ",", 0);
  guint64 v[4];

  if (g_strv_length (parts) != 4)
    goto bad;
  for (guint i = 0; i < 4; i++)
    if (!g_ascii_string_to_unsigned (g_strstrip (parts[i]), 10, 0, G_MAXUINT, &v[i], NULL))
      goto bad;
  if (v[2] == 0 || v[3] == 0)
    goto bad;
  if (slice_size > 0 && (v[0] + v[2] > slice_size || v[1] + v[3] > slice_size))
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "--roi %s does not fit in the %u×%u slice", text, slice_size, slice_size);
      return FALSE;
    }
  *roi = (TomoRoi) { v[0], v[1], v[2], v[3] };
  return TRUE;
bad:
  g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
               "--roi “%s” is not of the form x,y,width,height with positive width and height",
               text);
  return FALSE;
}
