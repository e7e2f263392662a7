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
  FuzzLive f;
  g_autofree uint8_t *packet = NULL;
  gboolean ok;

  if (!fuzz_live_begin (data, size, &f))
    return 0;
  /* An exact copy: ASan sees a read past the packet's end. */
  packet = fuzz_live_dup (f.body, f.n);
  ok = tomo_live_parse_tomop (packet, f.n, &f.context, &f.message, &f.drop, &f.detail);
  fuzz_live_check (ok, &f, packet, f.n);
  return 0;
}
