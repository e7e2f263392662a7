/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * `tomolive find-center FILE`: the rotation axis (and its tilt) from the
 * data, for people and, with --json, for scripts.
 */
#define G_LOG_DOMAIN "tomo-cli"

#include "config.h"

#include <math.h>

#include "tomo-open-args.h"
#include "tomo-options.h"
#include "tomo-center-scan.h"
#include "tomo-engine.h"
#include "tomo-cli.h"

static void
json_number (GString    *s,
             const char *key,
             double      v,
             gboolean    last)
{
  if (isfinite (v))
    g_string_append_printf (s, "  \"%s\": %.4f%s\n", key, v, last ? "" : ",");
  else
    g_string_append_printf (s, "  \"%s\": null%s\n", key, last ? "" : ",");
}

int
tomo_find_center_main (int    argc,
                       char **argv)
{
  g_autoptr(GOptionContext) context = g_option_context_new ("FILE — find the rotation axis");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autofree char *method_name = NULL, *backend_name = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  TomoBackend backend = TOMO_BACKEND_AUTO;
  TomoOpenArgs a = { 0 };
  TomoCenterMethod method = TOMO_CENTER_METHOD_AUTO;
  TomoCenterResult r;
  int row, status = 1;
  double row_v = -1;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "row", 'r', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Detector row (default: the middle)", "N" },
    { "method", 'm', 0, G_OPTION_ARG_STRING, &method_name,
      "auto (default), correlation, sinogram or sweep", "METHOD" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object", NULL },
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend_name,
      "Where the sweep reconstructs its candidates: auto (the GPU where there is one), cpu or gpu", "B" },
    G_OPTION_ENTRY_NULL
  };
  TomoNumberOption numbers[] = {
    { "row", 'r', 0, G_MAXUINT32 / 2, TRUE, &row_v },
    { NULL },
  };

  g_option_context_set_summary (context,
    "Finds the rotation axis column (TomoPy's centre) and the axis tilt:\n"
    "  correlation  each projection against the mirrored one 180° away\n"
    "  sinogram     sinusoid fit of the centre of mass (no 180° pair needed)\n"
    "  sweep        reconstructs candidates and keeps the one with the least\n"
    "               negative values (slowest, independent of the others)\n"
    "  auto         correlation when the scan has a 180° pair, else sinogram\n"
    "The tilt is fitted to the centres of up to 16 rows (degrees; positive\n"
    "when the axis column grows towards the bottom rows); reconstruct\n"
    "--tilt DEG (or auto) corrects it.");
  /* The scan opens as `info` and `reconstruct` open it: --flats,
   * --already-sinogram, raw dimensions… */
  g_option_context_add_group (context, tomo_open_args_group (&a));
  if (!tomo_cli_parse (context, entries, numbers, &argc, &argv, &error))
    goto out;
  row = (int) row_v;
  if (argc != 2)
    {
      g_set_error_literal (&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                           "find-center needs exactly one FILE");
      goto out;
    }
  if (method_name != NULL && !tomo_center_method_from_string (method_name, &method, &error))
    goto out;
  if (backend_name != NULL && !tomo_backend_from_string (backend_name, &backend, &error))
    goto out;
  scan = tomo_open_args_open (argv[1], &a, &error);
  if (scan == NULL)
    goto out;
  /* The sweep's candidates on the GPU where asked for or present; the CPU
   * sweep otherwise (the estimate's own loop, as without an engine). */
  if (method == TOMO_CENTER_METHOD_SWEEP && backend != TOMO_BACKEND_CPU
      && (backend == TOMO_BACKEND_GPU || tomo_engine_count_gpus () > 0))
    {
      engine = tomo_engine_new (TOMO_BACKEND_CPU);
      if (!tomo_engine_set_backend (engine, TOMO_BACKEND_GPU, &error))
        goto out;
      tomo_engine_set_scan (engine, scan);
    }
  if (!tomo_center_find_in_scan_with (scan, row, method, engine, &r, &error))
    goto out;

  if (json)
    {
      g_autoptr(GString) s = g_string_new ("{\n");
      g_autofree char *path = g_strescape (argv[1], NULL);

      g_string_append_printf (s, "  \"file\": \"%s\",\n", path);
      g_string_append_printf (s, "  \"row\": %d,\n",
                              row >= 0 ? row : (int) tomo_scan_get_height (scan) / 2);
      g_string_append_printf (s, "  \"method\": \"%s\",\n", tomo_center_method_to_string (r.method));
      g_string_append_printf (s, "  \"full_turn\": %s,\n",
                              tomo_angles_is_full_turn (tomo_scan_get_angles (scan),
                                                        tomo_scan_get_n_projections (scan))
                                ? "true" : "false");
      json_number (s, "center", r.center, FALSE);
      json_number (s, "uncertainty", r.uncertainty, FALSE);
      json_number (s, "tilt_deg", r.tilt_deg, FALSE);
      json_number (s, "tilt_uncertainty_deg", r.tilt_uncertainty_deg, TRUE);
      g_string_append (s, "}\n");
      g_print ("%s", s->str);
    }
  else
    {
      g_print ("centre: %.3f ± %.3f px (%s, %u used)\n", r.center, r.uncertainty,
               tomo_center_method_to_string (r.method), r.n_used);
      if (isfinite (r.tilt_deg))
        g_print ("tilt:   %.4f ± %.4f°%s\n", r.tilt_deg, r.tilt_uncertainty_deg,
                 /* Beyond two standard deviations: worth correcting. */
                 fabs (r.tilt_deg) > 2.0 * r.tilt_uncertainty_deg
                 ? " (reconstruct --tilt auto corrects it)" : "");
      else
        g_print ("tilt:   not measured (too few rows with contrast)\n");
    }
  status = 0;

out:
  if (error != NULL)
    g_printerr ("tomolive: %s\n", error->message);
  tomo_open_args_clear (&a);
  return status;
}
