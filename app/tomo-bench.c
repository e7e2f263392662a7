/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-bench"
#include "config.h"
#include "tomo-cli.h"
int tomo_bench_main (int argc, char **argv) { return 1; }
