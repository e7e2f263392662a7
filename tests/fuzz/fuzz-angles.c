/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The angle-file parser: one angle in degrees per line, '#' comments.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "fuzz-common.h"
#include "tomo-scan-private.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autofree double *angles = NULL;
  guint n = 0;

  angles = _tomo_parse_angles ("fuzz.txt", (const char *) data, size, &n, &error);
  if ((angles == NULL) == (error == NULL))
    abort ();
  for (guint i = 0; angles != NULL && i < n; i++)
    if (!isfinite (angles[i]) || fabs (angles[i]) > TOMO_MAX_ANGLE_DEG)
      abort ();
  return 0;
}
