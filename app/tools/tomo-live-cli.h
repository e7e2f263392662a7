/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-live-receiver.h"
#include "tomo-scan.h"

G_BEGIN_DECLS

/* The live parts of the command line: `reconstruct --listen` and `stream`. */
typedef struct
{
  char    *url;
  char    *protocol;
  char    *socket;
  char    *record;
  char    *max_memory;
  const char *output;      /* -o of reconstruct (not owned): --record must not be it */
  double   timeout;
  int      n_projections;
  gboolean verbose;
} TomoLiveCliListen;

GOptionGroup *tomo_live_cli_listen_group (TomoLiveCliListen *l);
void          tomo_live_cli_listen_clear (TomoLiveCliListen *l);
/* The receiver options that `l`, an angle file (or NULL) and a range (0:
 * not given) ask for, checked: the command line's and the viewer's
 * (tomolive --listen).  *angles owns the file's angles, which
 * options->angles_deg points to. */
gboolean      tomo_live_cli_receiver_options (const TomoLiveCliListen *l,
                                              const char              *angles_file,
                                              double                   angle_range,
                                              TomoLiveReceiverOptions *options,
                                              double                 **angles,
                                              GError                 **error);
/* Receives one complete scan (and records it when asked). */
TomoScan     *tomo_live_cli_receive      (TomoLiveCliListen *l,
                                          const char        *angles_file,
                                          double             angle_range,
                                          GError           **error);

typedef TomoScan *(*TomoCliOpenFunc) (const char *path,
                                      gpointer    data,
                                      GError    **error);
/* `tomolive stream FILE --to URL …`; `context` already holds the input options. */
int           tomo_live_cli_stream       (GOptionContext  *context,
                                          int              argc,
                                          char           **argv,
                                          TomoCliOpenFunc  open,
                                          gpointer         data);

/* `tomolive bench --live` (tomo-live-bench.c). */
int           tomo_live_bench_main       (int    argc,
                                          char **argv);

G_END_DECLS
