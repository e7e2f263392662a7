/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-options.h"

G_BEGIN_DECLS

/* The program's main(): sets the locale and runs a subcommand (info,
 * reconstruct, phantom, bench, …) if argv[1] names one, else returns
 * open_viewer (argc, argv); a build without the viewer passes NULL and
 * says so, exit status 1. */
int tomo_cli_main (int    argc,
                   char **argv,
                   int  (*open_viewer) (int argc, char **argv));

/* Makes `entries` (numbers filled through tomo_number_option_cb into
 * `numbers`) the main group of `context`, then parses argv.  --help shows
 * the main group as "Application Options", so it needs no name. */
gboolean tomo_cli_parse (GOptionContext     *context,
                         const GOptionEntry *entries,
                         TomoNumberOption   *numbers,
                         int                *argc,
                         char             ***argv,
                         GError            **error);

/* `tomolive bench …` (app/tomo-bench.c). */
int tomo_bench_main (int    argc,
                     char **argv);

/* `tomolive find-center …` (tomo-find-center.c). */
int tomo_find_center_main (int    argc,
                           char **argv);

/* `tomolive bench --center` (tomo-center-bench.c). */
int tomo_center_bench (guint width,
                       guint runs,
                       int   device);

G_END_DECLS
