/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Internal to gpu/: the state behind tomo_gpu_fault_configure().  Plain C,
 * so the stub build parses the same settings.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  TOMO_GPU_FAULT_POINT_ALLOC,  /* a device allocation */
  TOMO_GPU_FAULT_POINT_LAUNCH, /* a kernel launch */
  TOMO_GPU_FAULT_POINT_CALL,   /* any checked CUDA call */
  TOMO_GPU_FAULT_POINT_KEEP,   /* a store output kept on the device
                                * (tomo_gpu_store_keep_output) */
} TomoGpuFaultPoint;

/* TRUE when the call at `point` is to fail; once lost, every call fails. */
gboolean _tomo_gpu_fault_hit          (TomoGpuFaultPoint point);
gboolean _tomo_gpu_fault_is_lost      (void);
/* 0: no cap. */
guint64  _tomo_gpu_fault_memory_limit (void);
/* The device memory in use at the first capped allocation on `device`
 * (recorded when *used is set the first time). */
guint64  _tomo_gpu_fault_baseline     (int     device,
                                       guint64 used_now);

G_END_DECLS
