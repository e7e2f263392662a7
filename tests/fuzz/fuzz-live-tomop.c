/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The TomoPackets parser (live input): one packet after the context bytes
 * of fuzz-live-common.h.
 */
#include "config.h"

#include <math.h>

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
  g_autofree uint8_t *packet = NULL;
  gsize n;
  gboolean ok;

  if (size < FUZZ_LIVE_CONTEXT_BYTES)
    return 0;
  fuzz_live_context (data, &context);
  /* An exact copy: ASan sees a read past the packet's end. */
  n = size - FUZZ_LIVE_CONTEXT_BYTES;
  packet = fuzz_live_dup (data + FUZZ_LIVE_CONTEXT_BYTES, n);
  ok = tomo_live_parse_tomop (packet, n, &context, &message, &drop, &detail);
  fuzz_live_check (ok, &message, &context, packet, n, detail);
  return 0;
}
