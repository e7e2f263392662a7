/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The program's entry point when the viewer is built: a subcommand runs the
 * command line, anything else opens the window.
 */
#define G_LOG_DOMAIN "tomolive"

#include "config.h"

#include "tomo-cli.h"
#include "tomo-live-link.h"
#include "tomo-ui.h"

static int
open_viewer (int    argc,
             char **argv)
{
  tomo_live_link_take_arguments (&argc, &argv);
  return tomo_ui_main (argc, argv);
}

int
main (int    argc,
      char **argv)
{
  return tomo_cli_main (argc, argv, open_viewer);
}
