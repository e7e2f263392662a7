/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The entry point of a build without the viewer: only the command line.
 * With GTK 4, ui/tomo-main.c is the entry point instead.
 */
#define G_LOG_DOMAIN "tomolive"

#include "config.h"

#include "tomo-cli.h"

int
main (int    argc,
      char **argv)
{
  return tomo_cli_main (argc, argv, NULL);
}
