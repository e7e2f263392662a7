/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The correlation estimate with its profiles computed by a backend (the
 * GPU's correlation kernels, or the CPU's loop): app/ reaches gpu/ only
 * through the backend interface.
 */
#define G_LOG_DOMAIN "tomo-center"

#include "config.h"

#include "tomo-center-gpu.h"
#include "tomo-center-private.h"

static gboolean
backend_profile (const TomoCenterPairs *pairs,
                 float                 *out,
                 gpointer               user_data,
                 GError               **error)
{
  TomoBackendImpl *backend = user_data;

  return backend->ops->correlate (backend, pairs, out, error);
}

gboolean
tomo_center_correlation_backend (TomoBackendImpl    *backend,
                                 const TomoSinogram *sino,
                                 TomoCenterResult   *result,
                                 GError            **error)
{
  g_return_val_if_fail (backend != NULL && backend->ops->correlate != NULL, FALSE);
  return _tomo_center_correlation_with (sino, backend_profile, backend, result, error);
}
