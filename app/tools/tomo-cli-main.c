/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The entry point of a build without the viewer: only the command line.
 * With GTK 4, ui/tomo-main.c is the entry point instead.
 */
#define G_LOG_DOMAIN "tomolive"

#include "config.h"

#include <locale.h>

#include "tomo-cli.h"

int
main (int    argc,
      char **argv)
{
  int status;

  setlocale (LC_ALL, "");
  status = tomo_cli_run (argc, argv);
  if (status >= 0)
    return status;
  g_printerr ("tomolive was built without the viewer (GTK 4); try “tomolive --help”.\n");
  return 1;
}
