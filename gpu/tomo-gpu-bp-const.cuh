/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Per-projection cos/sin in constant memory, for the kernels that read them
 * there (standard, texture).  Without relocatable device code every unit
 * that includes this has its own c_cs, so the bookkeeping of who wrote it
 * last is per unit too (static): each family uploads into its own copy.
 */
#pragma once

#include "tomo-gpu-bp-device.cuh"

static __constant__ float2 c_cs[BP_CONST_PROJ];

/* ---------------------------------------------------------------------- */
/* Constant memory: one set of cos/sin per device at a time                */

/* Who last wrote c_cs on each device, and an event after the last kernel
 * that read it: a TomoBp that needs other constants waits for that event
 * on its own stream before overwriting them. */
typedef struct
{
  guint serial, generation, chunk;
  cudaEvent_t last;
} BpConstState;

static GMutex bp_const_lock;
static BpConstState bp_const_state[64];

/* Called with bp_const_lock held. */
static gboolean
bp_const_acquire (TomoBp      *bp,
                  guint        chunk,
                  guint        p0,
                  guint        np,
                  cudaStream_t stream,
                  GError     **error)
{
  BpConstState *st = &bp_const_state[bp->device % 64];

  if (st->last == NULL
      && !TOMO_CUDA_CHECK (cudaEventCreateWithFlags (&st->last, cudaEventDisableTiming), error))
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaStreamWaitEvent (stream, st->last, 0), error))
    return FALSE;
  if (st->serial == bp->serial && st->generation == bp->generation && st->chunk == chunk)
    return TRUE;
  st->serial = 0;
  if (!TOMO_CUDA_CHECK (cudaMemcpyToSymbolAsync (c_cs, bp->d_cs_f + p0, np * sizeof (float2), 0,
                                          cudaMemcpyDeviceToDevice, stream), error))
    return FALSE;
  st->serial = bp->serial;
  st->generation = bp->generation;
  st->chunk = chunk;
  return TRUE;
}

static gboolean
bp_const_release (TomoBp      *bp,
                  cudaStream_t stream,
                  GError     **error)
{
  return TOMO_CUDA_CHECK (cudaEventRecord (bp_const_state[bp->device % 64].last, stream), error);
}

/* Runs `launch (p0, np)` once per chunk of BP_CONST_PROJ projections, each
 * with its cos/sin in c_cs, holding the lock from upload to launch. */
template <typename Launch>
static gboolean
bp_const_chunks (TomoBp       *bp,
                 const BpGeom &g,
                 cudaStream_t  stream,
                 const char   *what,
                 GError      **error,
                 Launch        launch)
{
  gboolean ok = TRUE;

  g_mutex_lock (&bp_const_lock);
  for (int p0 = 0, chunk = 0; ok && p0 < g.n_proj; p0 += BP_CONST_PROJ, chunk++)
    {
      const int np = MIN (BP_CONST_PROJ, g.n_proj - p0);

      ok = bp_const_acquire (bp, chunk, p0, np, stream, error);
      if (!ok)
        break;
      launch (p0, np);
      ok = TOMO_CUDA_CHECK_LAUNCH (what, error) && bp_const_release (bp, stream, error);
    }
  g_mutex_unlock (&bp_const_lock);
  return ok;
}
