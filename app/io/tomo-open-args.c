/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-io"

#include "config.h"

#include "tomo-error.h"
#include "tomo-open-args.h"


void
tomo_open_args_clear (TomoOpenArgs *a)
{
  g_clear_pointer (&a->format, g_free);
  g_clear_pointer (&a->flats, g_free);
  g_clear_pointer (&a->darks, g_free);
  g_clear_pointer (&a->angles, g_free);
  g_clear_pointer (&a->raw_dtype, g_free);
}

GOptionGroup *
tomo_open_args_group (TomoOpenArgs *a)
{
  GOptionEntry entries[] = {
    { "format", 0, 0, G_OPTION_ARG_STRING, &a->format,
      "Input format: auto (default), dxchange, nxtomo, tiff, raw", "FORMAT" },
    { "flats", 0, 0, G_OPTION_ARG_FILENAME, &a->flats,
      "TIFF: flat fields (file, folder or glob)", "PATH" },
    { "darks", 0, 0, G_OPTION_ARG_FILENAME, &a->darks,
      "TIFF: dark fields (file, folder or glob)", "PATH" },
    { "angles", 0, 0, G_OPTION_ARG_FILENAME, &a->angles,
      "TIFF/raw: text file with one angle in degrees per projection", "FILE" },
    { "angle-range", 0, 0, G_OPTION_ARG_DOUBLE, &a->angle_range,
      "Range in degrees of evenly spaced angles when the file has none (default 180)", "DEG" },
    { "raw-width", 0, 0, G_OPTION_ARG_INT, &a->raw_width, "Raw: detector columns", "N" },
    { "raw-height", 0, 0, G_OPTION_ARG_INT, &a->raw_height, "Raw: detector rows", "N" },
    { "raw-projections", 0, 0, G_OPTION_ARG_INT, &a->raw_n_proj, "Raw: number of projections", "N" },
    { "raw-dtype", 0, 0, G_OPTION_ARG_STRING, &a->raw_dtype,
      "Raw: uint8, uint16, uint32, float32 or float64", "TYPE" },
    { "raw-offset", 0, 0, G_OPTION_ARG_INT64, &a->raw_offset, "Raw: header bytes to skip", "BYTES" },
    { "raw-big-endian", 0, 0, G_OPTION_ARG_NONE, &a->raw_big_endian, "Raw: big-endian data", NULL },
    { "already-sinogram", 0, 0, G_OPTION_ARG_NONE, &a->already_sinogram,
      "Data is already flat/dark normalised (no flats needed)", NULL },
    { "already-linear", 0, 0, G_OPTION_ARG_NONE, &a->already_linear,
      "Data is already line integrals (no −log)", NULL },
    G_OPTION_ENTRY_NULL
  };
  GOptionGroup *group = g_option_group_new ("input", "Input options:",
                                            "Show options for reading scans", NULL, NULL);

  g_option_group_add_entries (group, entries);
  return group;
}

gboolean
tomo_open_args_to_options (const TomoOpenArgs *a,
                           TomoOpenOptions    *options,
                           GError            **error)
{
  tomo_open_options_init (options);
  if (a->format != NULL && !tomo_scan_format_from_string (a->format, &options->format, error))
    return FALSE;
  options->flats = a->flats;
  options->darks = a->darks;
  options->angles = a->angles;
  if (a->angle_range != 0)
    options->angle_range_deg = a->angle_range;
  if (a->raw_width < 0 || a->raw_height < 0 || a->raw_n_proj < 0 || a->raw_offset < 0)
    {
      g_set_error_literal (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
                           "Raw dimensions and offset must not be negative");
      return FALSE;
    }
  options->raw_width = a->raw_width;
  options->raw_height = a->raw_height;
  options->raw_n_projections = a->raw_n_proj;
  options->raw_offset = a->raw_offset;
  options->raw_big_endian = a->raw_big_endian;
  if (a->raw_dtype != NULL && !tomo_dtype_from_string (a->raw_dtype, &options->raw_dtype, error))
    return FALSE;
  if (a->raw_width > 0 && a->format == NULL)
    options->format = TOMO_SCAN_FORMAT_RAW;
  options->already_sinogram = a->already_sinogram;
  options->already_linear = a->already_linear;
  return TRUE;
}

TomoScan *
tomo_open_args_open (const char         *path,
                     const TomoOpenArgs *a,
                     GError            **error)
{
  TomoOpenOptions options;

  if (!tomo_open_args_to_options (a, &options, error))
    return NULL;
  return tomo_scan_open (path, &options, error);
}

void
tomo_open_args_copy (const TomoOpenArgs *src,
                     TomoOpenArgs       *dest)
{
  *dest = *src;
  dest->format = g_strdup (src->format);
  dest->flats = g_strdup (src->flats);
  dest->darks = g_strdup (src->darks);
  dest->angles = g_strdup (src->angles);
  dest->raw_dtype = g_strdup (src->raw_dtype);
}

