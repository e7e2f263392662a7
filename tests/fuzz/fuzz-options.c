/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The command-line parameter parsers: numbers, --rows, --roi and
 * --max-memory.  The input is split at newlines into their texts; the
 * first byte sets the scan height and the integer flag.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "fuzz-common.h"
#include "tomo-memory.h"
#include "tomo-options.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) fields = NULL;
  guint height, start = 0, end = 0;
  double value = 0;
  guint64 bytes;
  TomoRoi roi;

  if (size < 1)
    return 0;
  height = 1 + data[0];
  text = g_strndup ((const char *) data + 1, size - 1);
  fields = g_strsplit (text, "\n", 4);
  for (guint i = 0; fields[i] != NULL; i++)
    {
      const char *f = fields[i];
      GError *error = NULL;

      if (tomo_parse_number ("--center", f, -1e9, 1e9, data[0] & 1, &value, &error)
          && (!isfinite (value) || value < -1e9 || value > 1e9))
        abort ();
      g_clear_error (&error);
      if (tomo_parse_rows (f, height, &start, &end, &error) && !(start < end && end <= height))
        abort ();
      g_clear_error (&error);
      if (tomo_parse_roi (f, 512, &roi, &error)
          && (roi.width == 0 || roi.height == 0 || (guint64) roi.x + roi.width > 512
              || (guint64) roi.y + roi.height > 512))
        abort ();
      g_clear_error (&error);
      if (tomo_memory_parse_size ("--max-memory", f, &bytes, &error) && bytes == 0)
        abort ();
      g_clear_error (&error);
    }
  return 0;
}
