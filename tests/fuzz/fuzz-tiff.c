/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The TIFF stack loader and the TIFF reader on one file (a scratch file:
 * libtiff reads through the path the loader is given).
 */
#include "config.h"

#include "fuzz-common.h"
#include "fuzz-scan-common.h"
#include "tomo-tiff-writer.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autofree float *pixels = NULL;
  TomoOpenOptions options;
  const char *path;
  guint w, h, pages;

  path = fuzz_scratch_file (".tif", data, size);
  tomo_open_options_init (&options);
  options.format = TOMO_SCAN_FORMAT_TIFF;
  options.already_sinogram = TRUE;
  scan = tomo_scan_open (path, &options, &error);
  if (scan != NULL)
    fuzz_exercise_scan (scan);
  g_clear_error (&error);
  pixels = tomo_tiff_read_float (path, &w, &h, &pages, &error);
  return 0;
}
