/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-error"

#include "config.h"

#include "tomo-error.h"

G_DEFINE_QUARK (tomo-io-error-quark, tomo_io_error)
G_DEFINE_QUARK (tomo-recon-error-quark, tomo_recon_error)
