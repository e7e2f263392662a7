/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-backend.h"
#include "tomo-center.h"

G_BEGIN_DECLS

/* tomo_center_correlation() with the correlation profiles of every pair
 * computed by `backend` (ops->correlate): on the GPU one launch per pass of
 * the direct kernel; on the CPU the same loop as tomo_center_correlation(),
 * so the same answer. */
gboolean tomo_center_correlation_backend (TomoBackendImpl    *backend,
                                          const TomoSinogram *sino,
                                          TomoCenterResult   *result,
                                          GError            **error);

G_END_DECLS
