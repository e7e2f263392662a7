/* SPDX-License-Identifier: GPL-3.0-or-later */
/* placeholder: being written */
#include "config.h"
#include "tomo-ui.h"
int
tomo_ui_main (int argc, char **argv)
{
  g_printerr ("viewer not written yet\n");
  return 1;
}
