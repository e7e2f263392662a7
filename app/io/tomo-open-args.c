/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-io"

#include "config.h"

#include <string.h>

#include "tomo-error.h"
#include "tomo-memory.h"
#include "tomo-probe.h"
#include "tomo-open-args.h"

/* The strings TomoOpenArgs owns. */
static const gsize owned_strings[] = {
  G_STRUCT_OFFSET (TomoOpenArgs, format), G_STRUCT_OFFSET (TomoOpenArgs, flats),
  G_STRUCT_OFFSET (TomoOpenArgs, darks), G_STRUCT_OFFSET (TomoOpenArgs, angles),
  G_STRUCT_OFFSET (TomoOpenArgs, raw_dtype), G_STRUCT_OFFSET (TomoOpenArgs, max_memory),
};

void
tomo_open_args_clear (TomoOpenArgs *a)
{
  for (guint i = 0; i < G_N_ELEMENTS (owned_strings); i++)
    g_clear_pointer (&G_STRUCT_MEMBER (char *, a, owned_strings[i]), g_free);
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
    { "angle-range", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Range in degrees of evenly spaced angles when the file has none (default 180)", "DEG" },
    { "raw-width", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Raw: detector columns", "N" },
    { "raw-height", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Raw: detector rows", "N" },
    { "raw-projections", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Raw: number of projections", "N" },
    { "raw-dtype", 0, 0, G_OPTION_ARG_STRING, &a->raw_dtype,
      "Raw: uint8, uint16, uint32, float32 or float64", "TYPE" },
    { "raw-offset", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Raw: header bytes to skip", "BYTES" },
    { "max-memory", 0, 0, G_OPTION_ARG_STRING, &a->max_memory,
      "Memory a scan may use (e.g. 64G or 80%; default half the RAM)", "SIZE" },
    { "raw-big-endian", 0, 0, G_OPTION_ARG_NONE, &a->raw_big_endian, "Raw: big-endian data", NULL },
    { "already-sinogram", 0, 0, G_OPTION_ARG_NONE, &a->already_sinogram,
      "Data is already flat/dark normalised (no flats needed)", NULL },
    { "already-linear", 0, 0, G_OPTION_ARG_NONE, &a->already_linear,
      "Data is already line integrals (no −log)", NULL },
    G_OPTION_ENTRY_NULL
  };
  const TomoNumberOption numbers[] = {
    { "angle-range", 0, 1e-6, 360000, FALSE, &a->parsed[0] },
    { "raw-width", 0, 1, G_MAXUINT32, TRUE, &a->parsed[1] },
    { "raw-height", 0, 1, G_MAXUINT32, TRUE, &a->parsed[2] },
    { "raw-projections", 0, 1, G_MAXUINT32, TRUE, &a->parsed[3] },
    { "raw-offset", 0, 0, (double) G_MAXINT64, TRUE, &a->parsed[4] },
    { NULL },
  };

  G_STATIC_ASSERT (G_N_ELEMENTS (numbers) == G_N_ELEMENTS (a->numbers));
  memcpy (a->numbers, numbers, sizeof numbers);
  return tomo_number_option_group ("input", "Input options:", entries, a->numbers);
}

/* Numbers the command line gave (checked by tomo_number_option_cb) replace
 * the fields; fields set directly (the viewer's dialog) stay otherwise. */
void
tomo_open_args_take_parsed (TomoOpenArgs *a)
{
  if (a->numbers[0].long_name == NULL)
    return;
  if (a->numbers[0].given)
    a->angle_range = a->parsed[0];
  if (a->numbers[1].given)
    a->raw_width = (guint) a->parsed[1];
  if (a->numbers[2].given)
    a->raw_height = (guint) a->parsed[2];
  if (a->numbers[3].given)
    a->raw_n_proj = (guint) a->parsed[3];
  if (a->numbers[4].given)
    a->raw_offset = (guint64) a->parsed[4];
  memset (a->numbers, 0, sizeof a->numbers);
}

gboolean
tomo_open_args_to_options (const TomoOpenArgs *a,
                           TomoOpenOptions    *options,
                           GError            **error)
{
  tomo_open_args_take_parsed ((TomoOpenArgs *) a);
  tomo_open_options_init (options);
  if (a->max_memory != NULL)
    {
      guint64 bytes;

      if (!tomo_memory_parse_size ("--max-memory", a->max_memory, &bytes, error))
        return FALSE;
      tomo_memory_set_limit (bytes);
    }
  if (a->format != NULL && !tomo_scan_format_from_string (a->format, &options->format, error))
    return FALSE;
  options->flats = a->flats;
  options->darks = a->darks;
  options->angles = a->angles;
  if (a->angle_range != 0)
    options->angle_range_deg = a->angle_range;
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

  if (!tomo_open_args_to_options (a, &options, error) || !tomo_probe_hdf5 (path, &options, error))
    return NULL;
  return tomo_scan_open (path, &options, error);
}

void
tomo_open_args_copy (const TomoOpenArgs *src,
                     TomoOpenArgs       *dest)
{
  *dest = *src;
  for (guint i = 0; i < G_N_ELEMENTS (owned_strings); i++)
    G_STRUCT_MEMBER (char *, dest, owned_strings[i]) =
      g_strdup (G_STRUCT_MEMBER (char *, src, owned_strings[i]));
  memset (dest->numbers, 0, sizeof dest->numbers);
}

