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
  TomoLiveContext context = { 0 };
  TomoLiveMessage message = { 0 };
  TomoLiveDrop drop = TOMO_LIVE_DROP_SHORT;
  char *detail = NULL;
  g_autofree uint8_t *header = NULL, *frame = NULL;
  const uint8_t *body, *nul;
  const guint8 *parts[2];
  gsize sizes[2], n;
  guint n_parts;
  gboolean ok;

  if (size < FUZZ_LIVE_CONTEXT_BYTES)
    return 0;
  fuzz_live_context (data, &context);
  body = data + FUZZ_LIVE_CONTEXT_BYTES;
  n = size - FUZZ_LIVE_CONTEXT_BYTES;
  nul = memchr (body, 0, n);
  /* Exact copies of each part, so ASan sees a read past either. */
  sizes[0] = nul ? (gsize) (nul - body) : n;
  header = fuzz_live_dup (body, sizes[0]);
  parts[0] = header;
  n_parts = 1;
  if (nul != NULL)
    {
      sizes[1] = n - sizes[0] - 1;
      frame = fuzz_live_dup (nul + 1, sizes[1]);
      parts[1] = frame;
      n_parts = 2;
    }
  ok = tomo_live_parse_json (parts, sizes, n_parts, &context, &message, &drop, &detail);
  fuzz_live_check (ok, &message, &context, frame, n_parts == 2 ? sizes[1] : 0, detail);
  return 0;
}
