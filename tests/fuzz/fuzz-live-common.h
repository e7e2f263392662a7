/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The live parsers' fuzz targets: the first 8 bytes of an input are the
 * receiver's context (byte 0 bit 0: geometry known; 1, 2: rows, cols;
 * 3–4: projections, little-endian; 5: log2 of the frame memory limit,
 * at most 30), the rest the message.  After a parse, every pointer the
 * message holds must lie inside the input and every byte it names is read
 * (an over-read shows under ASan).
 */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "tomo-live-protocol.h"

#define FUZZ_LIVE_CONTEXT_BYTES 8

/* An exact copy, never NULL (a receiver's buffer never is). */
static inline uint8_t *
fuzz_live_dup (const uint8_t *p,
               gsize          n)
{
  uint8_t *copy = g_malloc (MAX (n, 1));

  memcpy (copy, p, n);
  return copy;
}

static inline void
fuzz_live_context (const uint8_t   *data,
                   TomoLiveContext *context)
{
  context->have_geometry = data[0] & 1;
  context->rows = data[1];
  context->cols = data[2];
  context->n_projections = data[3] | (data[4] << 8);
  context->max_frame_bytes = (gsize) 1 << MIN (data[5], 30);
}

static inline void
fuzz_live_check_span (const uint8_t *p,
                      gsize          n,
                      const uint8_t *start,
                      gsize          size)
{
  volatile uint8_t sink = 0;

  if (n == 0)
    return;
  if (p == NULL || p < start || n > size || p + n > start + size)
    abort ();
  for (gsize i = 0; i < n; i++)
    sink ^= p[i];
  (void) sink;
}

/* One parse: the context read from the input's first bytes, then the
 * message, drop reason and detail the parser fills from `body` (n bytes). */
typedef struct
{
  TomoLiveContext context;
  TomoLiveMessage message;
  TomoLiveDrop drop;
  char *detail;
  const uint8_t *body;
  gsize n;
} FuzzLive;

/* FALSE when the input is too short to hold the context. */
static inline gboolean
fuzz_live_begin (const uint8_t *data,
                 size_t         size,
                 FuzzLive      *f)
{
  if (size < FUZZ_LIVE_CONTEXT_BYTES)
    return FALSE;
  memset (f, 0, sizeof *f);
  f->drop = TOMO_LIVE_DROP_SHORT;
  fuzz_live_context (data, &f->context);
  f->body = data + FUZZ_LIVE_CONTEXT_BYTES;
  f->n = size - FUZZ_LIVE_CONTEXT_BYTES;
  return TRUE;
}

/* The parse's result against the input [start, start + size). */
static inline void
fuzz_live_check (gboolean       ok,
                 FuzzLive      *f,
                 const uint8_t *start,
                 gsize          size)
{
  const TomoLiveMessage *m = &f->message;
  const TomoLiveContext *context = &f->context;

  g_clear_pointer (&f->detail, g_free);
  if (!ok)
    return;
  switch (m->type)
    {
    case TOMO_LIVE_MSG_FRAME:
      if (m->n_bytes > context->max_frame_bytes)
        abort ();
      fuzz_live_check_span (m->pixels, m->n_bytes, start, size);
      if (m->has_angle && !isfinite (m->angle_deg))
        abort ();
      break;
    case TOMO_LIVE_MSG_PARALLEL_GEOMETRY:
      fuzz_live_check_span (m->angles_rad, (gsize) m->n_projections * 4, start, size);
      break;
    default:
      break;
    }
}
