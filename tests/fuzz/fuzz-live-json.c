/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The JSON header + raw frame parser (live input): after the context bytes
 * of fuzz-live-common.h, the header up to the first NUL byte, then the
 * frame part (no NUL: a message of one part).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-live-common.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  FuzzLive f;
  g_autofree uint8_t *header = NULL, *frame = NULL;
  const uint8_t *nul;
  const guint8 *parts[2];
  gsize sizes[2];
  guint n_parts;
  gboolean ok;

  if (!fuzz_live_begin (data, size, &f))
    return 0;
  nul = memchr (f.body, 0, f.n);
  /* Exact copies of each part, so ASan sees a read past either. */
  sizes[0] = nul ? (gsize) (nul - f.body) : f.n;
  header = fuzz_live_dup (f.body, sizes[0]);
  parts[0] = header;
  n_parts = 1;
  if (nul != NULL)
    {
      sizes[1] = f.n - sizes[0] - 1;
      frame = fuzz_live_dup (nul + 1, sizes[1]);
      parts[1] = frame;
      n_parts = 2;
    }
  ok = tomo_live_parse_json (parts, sizes, n_parts, &f.context, &f.message, &f.drop, &f.detail);
  fuzz_live_check (ok, &f, frame, n_parts == 2 ? sizes[1] : 0);
  return 0;
}
