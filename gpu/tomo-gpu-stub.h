/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Internal to the stubs of a build without CUDA (gpu/tomo-gpu-*stub.c).
 */
#pragma once

#include "tomo-gpu.h"

/* An entry point that needs a device: `fail (error)` sets
 * TOMO_GPU_ERROR_NOT_BUILT and `value` is returned.  The parameters,
 * GError **error last, follow the name. */
#define TOMO_GPU_NOT_BUILT(fail, type, value, name, ...) \
  type                                                   \
  name (__VA_ARGS__)                                     \
  {                                                      \
    fail (error);                                        \
    return value;                                        \
  }
