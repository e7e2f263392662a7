/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Internal to the stubs of a build without CUDA (gpu/tomo-gpu-*stub.c).
 */
#pragma once

#include "tomo-gpu.h"

/* An entry point that needs a device: it sets TOMO_GPU_ERROR_NOT_BUILT,
 * saying that there is no `what`, and returns `value`.  The parameters,
 * GError **error last, follow the name. */
#define TOMO_GPU_NOT_BUILT(what, type, value, name, ...)                          \
  type                                                                            \
  name (__VA_ARGS__)                                                              \
  {                                                                               \
    g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NOT_BUILT,         \
                         "tomolive was built without CUDA: no " what);            \
    return value;                                                                 \
  }
