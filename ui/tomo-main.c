/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The program's entry point when the viewer is built: a subcommand runs the
 * command line, anything else opens the window.
 */
#define G_LOG_DOMAIN "tomolive"

#include "config.h"

#include <locale.h>

#include "tomo-cli.h"
#include "tomo-live-link.h"
#include "tomo-ui.h"

int
main (int    argc,
      char **argv)
{
  int status;

  setlocale (LC_ALL, "");
  status = tomo_cli_run (argc, argv);
  if (status >= 0)
    return status;
  tomo_live_link_take_arguments (&argc, &argv);
  return tomo_ui_main (argc, argv);
}
