/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The raw loader's size arithmetic and options: the first 16 bytes are
 * width, height and projections (32 bits each, little-endian), the data
 * type, the byte order and a 16-bit header offset; the rest is the file.
 */
#include "config.h"

#include "fuzz-common.h"
#include "fuzz-scan-common.h"

static guint32
u32 (const uint8_t *p)
{
  return p[0] | (guint32) p[1] << 8 | (guint32) p[2] << 16 | (guint32) p[3] << 24;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  TomoOpenOptions options;
  const char *path;

  if (size < 16)
    return 0;
  tomo_open_options_init (&options);
  options.format = TOMO_SCAN_FORMAT_RAW;
  options.raw_width = u32 (data);
  options.raw_height = u32 (data + 4);
  options.raw_n_projections = u32 (data + 8);
  options.raw_dtype = data[12] % 5;
  options.raw_big_endian = data[13] & 1;
  options.already_sinogram = TRUE;
  options.already_linear = (data[13] >> 1) & 1;
  options.raw_offset = data[14] | (guint) data[15] << 8;
  path = fuzz_scratch_file (".raw", data + 16, size - 16);
  scan = tomo_scan_open (path, &options, &error);
  if (scan != NULL)
    fuzz_exercise_scan (scan);
  return 0;
}
