/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-cli"
#include "config.h"
#include "tomo-cli.h"
int tomo_cli_run (int argc, char **argv) { return -1; }
