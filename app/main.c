/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomolive"

#include "config.h"

#include <locale.h>

#include "tomo-cli.h"
#if HAVE_UI
# include "tomo-ui.h"
#endif

int
main (int    argc,
      char **argv)
{
  int status;

  setlocale (LC_ALL, "");
  status = tomo_cli_run (argc, argv);
  if (status >= 0)
    return status;
#if HAVE_UI
  return tomo_ui_main (argc, argv);
#else
  g_printerr ("tomolive was built without the viewer (GTK 4); try “tomolive --help”.\n");
  return 1;
#endif
}
