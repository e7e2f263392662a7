/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The `tomolive` command line: info, reconstruct, phantom, bench.  Every
 * failure is one line on stderr naming what was wrong, and exit status 1.
 */
#define G_LOG_DOMAIN "tomo-cli"

#include "config.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tomo-probe.h"
#include "tomo-center.h"
#include "tomo-center-scan.h"
#include "tomo-cli.h"
#include "tomo-plane-cli.h"
#include "tomo-engine.h"
#include "tomo-geometry.h"
#include "tomo-error.h"
#include "tomo-live-cli.h"
#include "tomo-open-args.h"
#include "tomo-options.h"
#include "tomo-output.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"
#include "tomo-tiff-writer.h"
#include "tomo-volume-export.h"

#define ERROR_DOMAIN_CLI (tomo_recon_error_quark ())

static int
fail (const GError *error)
{
  g_printerr ("tomolive: %s\n", error->message);
  return 1;
}

static int
fail_literal (const char *message)
{
  g_printerr ("tomolive: %s\n", message);
  return 1;
}

gboolean
tomo_cli_parse (GOptionContext     *context,
                const GOptionEntry *entries,
                TomoNumberOption   *numbers,
                int                *argc,
                char             ***argv,
                GError            **error)
{
  g_option_context_set_main_group (context, tomo_number_option_group (NULL, NULL, entries, numbers));
  return g_option_context_parse (context, argc, argv, error);
}

/* --- info ---------------------------------------------------------------- */

#define GEOMETRY_HELP \
  "auto (default), 180, 360 (both halves, weighted) or offset[:left|right] (a full turn " \
  "with the axis near an edge: opposite projections stitched, doubled field of view)"

static gboolean
print_geometry (TomoScan           *scan,
                const TomoGeometry *geometry,
                double              center,
                GError            **error)
{
  TomoGeometryPlan plan;
  g_autofree char *text = NULL;

  if (!tomo_geometry_resolve (scan, geometry, center, &plan, error))
    return FALSE;
  text = tomo_geometry_plan_describe (&plan);
  g_print ("Geometry:    %s\n", text);
  return TRUE;
}

static int
cmd_info (int    argc,
          char **argv)
{
  g_autoptr(GOptionContext) context = g_option_context_new ("FILE — describe a scan");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autofree char *text = NULL;
  TomoOpenArgs a = { 0 };
  g_autofree char *geometry = NULL;
  TomoGeometry geom = { 0 };
  double center = NAN;
  GOptionEntry entries[] = {
    { "geometry", 0, 0, G_OPTION_ARG_STRING, &geometry, GEOMETRY_HELP, "G" },
    { "center", 'c', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Rotation axis column (for the geometry; default: estimated from the middle row)", "C" },
    G_OPTION_ENTRY_NULL
  };
  TomoNumberOption numbers[] = {
    { "center", 'c', -1e9, 1e9, FALSE, &center },
    { NULL },
  };
  int status = 1;

  g_option_context_set_summary (context,
    "Prints what is in a scan: format, detector size, projections, flats,\n"
    "darks, data type, angles and pixel size, and the geometry it will be\n"
    "reconstructed in (a full turn reads the middle row to find the axis).");
  g_option_context_add_group (context, tomo_open_args_group (&a));
  if (!tomo_cli_parse (context, entries, numbers, &argc, &argv, &error))
    goto out;
  if (argc != 2)
    {
      g_set_error_literal (&error, ERROR_DOMAIN_CLI, 0, "info needs exactly one FILE");
      goto out;
    }
  if (geometry != NULL && !tomo_geometry_parse (geometry, &geom, &error))
    goto out;
  scan = tomo_open_args_open (argv[1], &a, &error);
  if (scan == NULL)
    goto out;
  text = tomo_scan_describe (scan);
  g_print ("%s", text);
  if (!g_str_has_suffix (text, "\n"))
    g_print ("\n");
  if (tomo_angles_is_full_turn (tomo_scan_get_angles (scan), tomo_scan_get_n_projections (scan)))
    g_print ("Coverage:    360° (a full turn: each direction seen twice, or an offset axis)\n");
  if (!print_geometry (scan, &geom, center, &error))
    goto out;
  status = 0;
out:
  tomo_open_args_clear (&a);
  return error != NULL ? fail (error) : status;
}

/* --- reconstruct --------------------------------------------------------- */

typedef struct
{
  gboolean show_progress;
  gint64 start;
  guint last_percent;
} Output;

static void
show_progress (Output *o,
               guint   done,
               guint   total)
{
  guint percent = total > 0 ? done * 100 / total : 100;
  double elapsed = (g_get_monotonic_time () - o->start) / 1e6;
  char bar[41];
  guint filled = percent * 40 / 100;

  if (!o->show_progress || (percent == o->last_percent && done != total))
    return;
  o->last_percent = percent;
  memset (bar, '#', filled);
  memset (bar + filled, '.', 40 - filled);
  bar[40] = '\0';
  fprintf (stderr, "\r[%s] %3u%%  %u/%u slices  %.1f s", bar, percent, done, total, elapsed);
  if (done == total)
    fputc ('\n', stderr);
  fflush (stderr);
}

static void
progress_cb (guint    done,
             guint    total,
             gpointer user_data)
{
  show_progress (user_data, done, total);
}

static void
print_stages (const TomoVolumeStats *st,
              double                 gus)
{
  double wall = MAX (st->wall_ms, 1e-9);

  g_print ("stages (busy time, %% of wall %.1f ms; stages overlap):\n", st->wall_ms);
#define STAGE(name, ms) g_print ("  %-26s %10.1f ms  %5.1f %%\n", name, ms, 100.0 * (ms) / wall)
  STAGE (st->gpu_preprocess ? "read (CPU; preprocess: GPU)" : "read + preprocess (CPU)",
         st->reader_ms > 0 ? st->reader_ms : st->read_ms);
  if (st->reader_ms > 0)
    STAGE ("  pipeline waiting on it", st->read_ms);
  STAGE ("upload", st->upload_ms);
  STAGE (st->gpu_preprocess ? "preprocess+filter+back proj." : "filter + back projection",
         st->compute_ms);
  STAGE ("download", st->download_ms);
  STAGE ("write (writer threads)", st->write_ms);
  if (st->sink_ms > 0)
    STAGE ("  delivery thread in it", st->sink_ms);
  STAGE ("delivery thread idle", st->wait_ms);
  if (st->n_devices > 0)
    {
      STAGE ("setup (buffers, plans)", st->setup_ms);
      STAGE ("GPU issue stalled", st->stall_ms);
    }
#undef STAGE
  g_print ("  %u rows, %u slice%s per pass, %u GPU%s; %.2f GU/s end to end\n", st->n_rows,
           st->pack, st->pack == 1 ? "" : "s", st->n_devices, st->n_devices == 1 ? "" : "s", gus);
  if (st->n_nonpositive > 0 || st->n_nonfinite > 0)
    g_print ("  preprocessing: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " values clamped "
             "(non-positive), %" G_GUINT64_FORMAT " replaced (NaN/Inf)\n",
             st->n_nonpositive, st->n_values, st->n_nonfinite);
}

/* A single slice goes through the same writer as volumes (temporary file,
 * renamed when complete). */
static gboolean
write_one_slice (const char            *output,
                 TomoVolumeFormat       format,
                 TomoScan              *scan,
                 TomoEngine            *engine,
                 const TomoReconParams *params,
                 TomoSlice             *slice,
                 GError               **error)
{
  TomoVolumeInfo info;
  TomoVolumeWriter *writer;

  tomo_volume_info_describe (&info, scan, engine, params, &slice->roi, slice->row, 1);
  writer = tomo_volume_writer_new (output, format, &info, 1, error);
  if (writer == NULL)
    return FALSE;
  if (!tomo_volume_writer_add (writer, slice->row, slice->data, error))
    {
      tomo_volume_writer_abort (writer);
      return FALSE;
    }
  return tomo_volume_writer_finish (writer, error);
}

/* --center auto: the axis on the middle row of those to be reconstructed
 * (`rows`, else `row`, else the scan's middle), as the viewer estimates it
 * when a scan opens (one sinogram, no tilt), said on stdout unless quiet. */
static gboolean
estimate_center (TomoScan    *scan,
                 const char  *rows,
                 double       row,
                 gboolean     quiet,
                 double      *center,
                 GError     **error)
{
  guint h = tomo_scan_get_height (scan), r = h / 2, start, end;
  TomoCenterResult res;

  if (rows != NULL)
    {
      if (!tomo_parse_rows (rows, h, &start, &end, error))
        return FALSE;
      r = start + (end - start) / 2;
    }
  else if (row >= 0)
    {
      if (row >= h)
        {
          g_set_error (error, ERROR_DOMAIN_CLI, 0, "--row %.0f is outside the scan (rows 0 to %u)",
                       row, h - 1);
          return FALSE;
        }
      r = (guint) row;
    }
  if (!tomo_center_estimate_row (scan, r, TOMO_CENTER_METHOD_AUTO, &res, error))
    {
      g_prefix_error (error, "--center auto, row %u: ", r);
      return FALSE;
    }
  *center = res.center;
  if (!quiet)
    g_print ("Centre: %.3f ± %.3f px (%s, row %u)\n", res.center, res.uncertainty,
             tomo_center_method_to_string (res.method), r);
  return TRUE;
}

#define TILT_HELP \
  "Correct an axis tilt of DEG degrees (positive: the axis moves right going down, as " \
  "find-center reports it): each row shifted so that the middle row's centre serves all; " \
  "or auto: the tilt fitted as find-center fits it"

/* --tilt DEG|auto, checked before any scan is read; a live scan cannot take it. */
static gboolean
parse_tilt (const char *option,
            const char *text,
            gboolean    live,
            double     *tilt,
            gboolean   *tilt_auto,
            GError    **error)
{
  if (live)
    {
      g_set_error (error, ERROR_DOMAIN_CLI, 0,
                   "%s needs a scan file: a live scan is reconstructed as it arrives", option);
      return FALSE;
    }
  *tilt_auto = g_ascii_strcasecmp (g_strstrip ((char *) text), "auto") == 0;
  return *tilt_auto
         || tomo_parse_number (option, text, -TOMO_GEOMETRY_MAX_TILT, TOMO_GEOMETRY_MAX_TILT,
                               FALSE, tilt, error);
}

/* *scan replaced by its rows corrected for the axis tilt `tilt` (auto: the
 * one find-center fits), said on stdout unless quiet. */
static gboolean
correct_tilt (TomoScan **scan,
              double     tilt,
              gboolean   tilt_auto,
              gboolean   quiet,
              GError   **error)
{
  TomoCenterResult res;
  TomoScan *corrected;

  if (tilt_auto)
    {
      if (!tomo_center_find_in_scan (*scan, -1, TOMO_CENTER_METHOD_AUTO, &res, error))
        {
          g_prefix_error (error, "--tilt auto: ");
          return FALSE;
        }
      if (!isfinite (res.tilt_deg))
        {
          g_set_error (error, ERROR_DOMAIN_CLI, 0,
                       "--tilt auto: the axis tilt of %s could not be measured (it takes "
                       "8 rows or more, two of them with contrast); give it as --tilt DEG",
                       tomo_scan_get_path (*scan));
          return FALSE;
        }
      tilt = res.tilt_deg;
      if (!quiet)
        g_print ("Tilt: %.4f ± %.4f° (fitted to the centres of up to 16 rows)\n", tilt,
                 res.tilt_uncertainty_deg);
    }
  corrected = tomo_geometry_correct_tilt (*scan, tilt, error);
  if (corrected == NULL)
    return FALSE;
  if (!quiet && tilt != 0.0)
    g_print ("Tilt: %.4f° corrected, rows shifted about row %.1f\n", tilt,
             (tomo_scan_get_height (*scan) - 1) / 2.0);
  g_object_unref (*scan);
  *scan = corrected;
  return TRUE;
}

static gboolean
parse_volume_format (const char        *name,
                     TomoVolumeFormat  *format,
                     GError           **error)
{
  static const struct { const char *name; TomoVolumeFormat format; } formats[] = {
    { "auto", TOMO_VOLUME_FORMAT_AUTO },
    { "hdf5", TOMO_VOLUME_FORMAT_HDF5 },
    { "tiff", TOMO_VOLUME_FORMAT_TIFF_STACK },
    { "tiff-folder", TOMO_VOLUME_FORMAT_TIFF_FOLDER },
  };

  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    if (g_str_equal (name, formats[i].name))
      {
        *format = formats[i].format;
        return TRUE;
      }
  g_set_error (error, ERROR_DOMAIN_CLI, 0,
               "--output-format “%s” is unknown (auto, hdf5, tiff, tiff-folder)", name);
  return FALSE;
}

/* -o names its format by its ending (or a folder by its slash).  One that
 * says none (a typo of .tif or .h5) is written as a TIFF, and a folder
 * named like a file gets one TIFF per slice: say so, rather than leave
 * what no program takes for the image meant.  Not for what is there and
 * no file (a pipe, a device). */
static void
warn_output_name (const char *output)
{
  GStatBuf st;
  g_autofree char *bare = NULL;

  if (g_stat (output, &st) == 0 && !S_ISREG (st.st_mode) && !S_ISDIR (st.st_mode))
    return;
  if (!tomo_volume_format_is_named (output))
    {
      g_printerr ("tomolive: warning: “%s” names no known format: writing a TIFF (name it "
                  ".tif, .h5 or DIR/, or pass --output-format)\n", output);
      return;
    }
  if (!g_str_has_suffix (output, G_DIR_SEPARATOR_S))
    return;
  bare = g_strndup (output, strlen (output) - 1);
  while (g_str_has_suffix (bare, G_DIR_SEPARATOR_S))
    bare[strlen (bare) - 1] = '\0';
  if (*bare != '\0' && !g_file_test (bare, G_FILE_TEST_IS_DIR)
      && tomo_volume_format_guess (bare) != TOMO_VOLUME_FORMAT_TIFF_STACK)
    g_printerr ("tomolive: warning: “%s” is a folder (the slash): writing one TIFF per slice "
                "into it; for one HDF5 file name it “%s”\n", output, bare);
}

static int
cmd_reconstruct (int    argc,
                 char **argv)
{
  g_autoptr(GOptionContext) context =
    g_option_context_new ("FILE|--listen URL -o OUT.tif|DIR — reconstruct slices");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoEngine) engine = NULL;
  g_autofree char *rows = NULL, *filter = NULL, *interp = NULL, *backend = NULL;
  g_autofree char *roi = NULL, *kernel = NULL, *output = NULL, *plane = NULL;
  g_autofree char *geometry = NULL, *center_text = NULL, *tilt_text = NULL;
  TomoGeometry geom = { 0 };
  TomoGeometryPlan plan = { 0 };
  double row = -1;
  double center = NAN, tilt = 0.0;
  gboolean center_auto = FALSE, tilt_auto = FALSE;
  gboolean progress = FALSE, quiet = FALSE, verbose = FALSE;
  g_autofree char *format = NULL;
  int n_writers = 0;
  TomoOpenArgs a = { 0 };
  TomoLiveCliListen live = { 0 };
  GOptionEntry entries[] = {
    { "row", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
      "Reconstruct detector row N (default: the middle one)", "N" },
    { "rows", 0, 0, G_OPTION_ARG_STRING, &rows, "Reconstruct rows A to B−1 (A:B, either may be empty)", "A:B" },
    { "center", 'c', 0, G_OPTION_ARG_STRING, &center_text,
      "Rotation axis column, fractional (TomoPy's centre; default (width−1)/2), or auto: "
      "found on the middle row reconstructed, as find-center finds it", "C" },
    { "filter", 'f', 0, G_OPTION_ARG_STRING, &filter,
      "ram-lak (default), shepp-logan, cosine, hamming, hann, parzen", "F" },
    { "interp", 'i', 0, G_OPTION_ARG_STRING, &interp, "nearest or linear (default)", "MODE" },
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend,
      "auto (default: GPU if present), cpu or gpu", "B" },
    { "kernel", 'k', 0, G_OPTION_ARG_STRING, &kernel,
      "GPU back projector: auto (default), standard, texture, alu, hybrid", "K" },
    { "roi", 0, 0, G_OPTION_ARG_STRING, &roi, "Only the region x,y,width,height of the slice", "X,Y,W,H" },
    { "geometry", 0, 0, G_OPTION_ARG_STRING, &geometry, GEOMETRY_HELP, "G" },
    { "tilt", 0, 0, G_OPTION_ARG_STRING, &tilt_text, TILT_HELP, "DEG" },
    { "plane", 0, 0, G_OPTION_ARG_STRING, &plane,
      "A vertical or oblique plane through rows --rows (default all) instead of slices: "
      "xz:Y, yz:X or oblique:AZIMUTH[,TILT[,X,Y,Z]]", "SPEC" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Float32 volume: .h5 (HDF5 /exchange/data), .tif (one page per slice), or a folder "
      "(one TIFF per slice; DIR/ is made where it is not there)", "PATH" },
    { "output-format", 0, 0, G_OPTION_ARG_STRING, &format,
      "auto (default: from -o), hdf5, tiff, tiff-folder", "FMT" },
    { "writers", 0, 0, G_OPTION_ARG_INT, &n_writers, "Writer threads, 1 to 256 (default 0: 8 for a folder, 1 for one file)", "N" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose,
      "Print where the time went, stage by stage", NULL },
    { "progress", 0, 0, G_OPTION_ARG_NONE, &progress, "Show the progress bar even when stderr is not a terminal", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "No progress bar and no summary", NULL },
    G_OPTION_ENTRY_NULL
  };
  TomoNumberOption numbers[] = {
    { "row", 0, 0, G_MAXUINT32, TRUE, &row },
    { NULL },
  };
  TomoReconParams params;
  TomoBackend want = TOMO_BACKEND_AUTO;
  TomoKernel gpu_kernel = TOMO_KERNEL_AUTO;
  TomoRoi r;
  guint row_start, row_end, height, width;
  Output o = { 0 };
  TomoVolumeFormat vformat = TOMO_VOLUME_FORMAT_AUTO;
  TomoFilterType filter_type;
  TomoInterp interp_mode;
  TomoVolumeStats stats = { 0 };
  gint64 start;
  double seconds;
  gboolean ok;
  int status = 1;

  g_option_context_set_summary (context,
    "Filtered back projection of sinogram rows into float32 slices\n"
    "(attenuation per pixel).  Slices are W×W pixels of detector-pixel size.");
  g_option_context_add_group (context, tomo_open_args_group (&a));
  g_option_context_add_group (context, tomo_live_cli_listen_group (&live));
  if (!tomo_cli_parse (context, entries, numbers, &argc, &argv, &error))
    goto out;
  if (argc != (live.url ? 1 : 2))
    {
      g_set_error_literal (&error, ERROR_DOMAIN_CLI, 0,
                           "reconstruct needs exactly one FILE, or --listen URL and no FILE");
      goto out;
    }
  if (output == NULL)
    {
      g_set_error_literal (&error, ERROR_DOMAIN_CLI, 0,
                           "reconstruct needs an output: -o OUT.tif or -o DIR");
      goto out;
    }
  if (rows != NULL && numbers[0].given)
    {
      g_set_error_literal (&error, ERROR_DOMAIN_CLI, 0, "--row and --rows exclude each other");
      goto out;
    }
  if (center_text != NULL)
    {
      center_auto = g_ascii_strcasecmp (g_strstrip (center_text), "auto") == 0;
      if (!center_auto && !tomo_parse_number ("--center", center_text, -1e9, 1e9, FALSE, &center,
                                              &error))
        {
          char *end = NULL;

          /* Not a number at all: say what else it may be. */
          g_ascii_strtod (center_text, &end);
          if (end == center_text)
            {
              g_clear_error (&error);
              g_set_error (&error, ERROR_DOMAIN_CLI, 0,
                           "--center “%s” is neither a column (a number) nor auto", center_text);
            }
          goto out;
        }
    }
  if (tilt_text != NULL
      && !parse_tilt ("--tilt", tilt_text, live.url != NULL, &tilt, &tilt_auto, &error))
    goto out;
  /* 0 is the default (8 for a folder, 1 for one file). */
  if (n_writers < 0 || n_writers > 256)
    {
      g_set_error (&error, ERROR_DOMAIN_CLI, 0,
                   "--writers %d is out of range (1 to 256, or 0 for the default)", n_writers);
      goto out;
    }

  if (backend != NULL && !tomo_backend_from_string (backend, &want, &error))
    goto out;
  if (kernel != NULL && !tomo_kernel_from_string (kernel, &gpu_kernel, &error))
    goto out;
  if (geometry != NULL && !tomo_geometry_parse (geometry, &geom, &error))
    goto out;
  if (live.url && geom.kind != TOMO_GEOMETRY_AUTO && geom.kind != TOMO_GEOMETRY_180)
    {
      g_set_error (&error, ERROR_DOMAIN_CLI, 0,
                   "--geometry %s needs a scan file: a live scan is reconstructed as it arrives",
                   geometry);
      goto out;
    }

  /* Everything that needs no scan is checked before one is read or a
   * stream received: a typo must not cost the scan. */
  if ((filter != NULL && !tomo_filter_type_from_string (filter, &filter_type, &error))
      || (interp != NULL && !tomo_interp_from_string (interp, &interp_mode, &error))
      || (format != NULL && !parse_volume_format (format, &vformat, &error)))
    goto out;
  if (vformat == TOMO_VOLUME_FORMAT_AUTO && !quiet)
    warn_output_name (output);

  tomo_open_args_take_parsed (&a);
  live.output = output;
  scan = live.url ? tomo_live_cli_receive (&live, a.angles, a.angle_range, &error)
                   : tomo_open_args_open (argv[1], &a, &error);
  if (scan == NULL || !correct_tilt (&scan, tilt, tilt_auto, quiet, &error))
    goto out;
  if (center_auto && !estimate_center (scan, rows, numbers[0].given ? row : -1, quiet, &center,
                                       &error))
    goto out;
  if (!live.url)
    {
      /* 360° and offset-axis scans: the scan as it will be reconstructed
       * (stitched rows are wider; --center stays a detector column). */
      TomoScan *presented = tomo_geometry_present (scan, &geom, center, &plan, &error);

      if (presented == NULL)
        goto out;
      g_object_unref (scan);
      scan = presented;
      if (plan.kind == TOMO_GEOMETRY_OFFSET)
        center = plan.recon_center;
      if (!quiet && plan.kind != TOMO_GEOMETRY_180)
        {
          g_autofree char *text = tomo_geometry_plan_describe (&plan);

          g_print ("Geometry: %s\n", text);
        }
    }
  width = tomo_scan_get_width (scan);
  height = tomo_scan_get_height (scan);

  tomo_recon_params_init (&params, width);
  if (!isnan (center))
    params.center = center;
  if (filter != NULL)
    params.filter = filter_type;
  if (interp != NULL)
    params.interp = interp_mode;
  if (roi != NULL && !tomo_parse_roi (roi, width, &params.roi, &error))
    goto out;

  if (rows != NULL)
    {
      if (!tomo_parse_rows (rows, height, &row_start, &row_end, &error))
        goto out;
    }
  if (plane != NULL)
    {
      if (row >= 0)
        g_set_error_literal (&error, ERROR_DOMAIN_CLI, 0, "--plane takes --rows A:B, not --row");
      else
        {
          TomoPlaneCliJob job = { plane, rows ? row_start : 0, rows ? row_end : height, &params,
                                  want, output, quiet };

          if (tomo_plane_cli_run (scan, &job, &error))
            status = 0;
        }
      goto out;
    }
  if (rows != NULL)
    ;
  else
    {
      row_start = row >= 0 ? (guint) row : height / 2;
      row_end = row_start + 1;
    }

  if (!tomo_scan_check_reconstructible (scan, &error)
      || !tomo_output_check_inputs (output, tomo_scan_get_input_files (scan), &error))
    goto out;

  engine = tomo_engine_new (TOMO_BACKEND_CPU);
  if (!tomo_engine_set_backend (engine, want, &error))
    goto out;
  tomo_engine_set_scan (engine, scan);
  if (!tomo_engine_check (engine, row_start, row_end, &params, &r, &error))
    goto out;

  o.show_progress = !quiet && (progress || isatty (STDERR_FILENO)) && row_end - row_start > 1;
  o.start = start = g_get_monotonic_time ();
  o.last_percent = G_MAXUINT;

  if (row_end - row_start == 1)
    {
      TomoSliceRequest request;
      g_autoptr(TomoSlice) slice = NULL;

      /* One slice: the engine's own path, with its clamping report. */
      tomo_slice_request_init (&request, scan);
      request.row = row_start;
      request.params = params;
      request.kernel = gpu_kernel;
      slice = tomo_engine_reconstruct (engine, &request, NULL, &error);
      if (slice == NULL)
        goto out;
      if (!quiet && (slice->stats.n_nonpositive > 0 || slice->stats.n_nonfinite > 0))
        g_printerr ("tomolive: warning: row %u: %" G_GUINT64_FORMAT " non-positive and %"
                    G_GUINT64_FORMAT " non-finite values were clamped\n", row_start,
                    slice->stats.n_nonpositive, slice->stats.n_nonfinite);
      ok = write_one_slice (output, vformat, scan, engine, &params, slice, &error);
    }
  else
    {
      g_autoptr(TomoVolumeExport) export = NULL;

      export = tomo_volume_export_new (engine, output, vformat, row_start, row_end, &params,
                                       gpu_kernel);
      tomo_volume_export_set_n_writers (export, n_writers);
      tomo_volume_export_set_progress_func (export, progress_cb, &o);
      /* Ctrl+C: tomo_output's handler removes the temporary files. */
      ok = tomo_volume_export_run (export, NULL, &error);
      tomo_volume_export_get_stats (export, &stats);
      if (!ok && o.show_progress)
        fputc ('\n', stderr);
    }
  if (!ok)
    goto out;

  seconds = (g_get_monotonic_time () - start) / 1e6;
  if (!quiet)
    {
      double updates = (double) r.width * r.height * tomo_scan_get_n_projections (scan)
                       * (row_end - row_start);

      g_print ("%u slice%s of %u×%u from %u projections in %.3f s, %.2f GU/s (%s, %s), "
               "centre %.2f, %s, %s → %s\n",
               row_end - row_start, row_end - row_start == 1 ? "" : "s", r.width, r.height,
               tomo_scan_get_n_projections (scan), seconds, updates / seconds / 1e9,
               tomo_backend_to_string (tomo_engine_get_backend (engine)),
               tomo_engine_get_device_name (engine), params.center,
               tomo_filter_type_to_string (params.filter), tomo_interp_to_string (params.interp),
               output);
      if (verbose && stats.n_rows > 0)
        print_stages (&stats, updates / seconds / 1e9);
    }
  status = 0;
out:
  tomo_open_args_clear (&a);
  tomo_live_cli_listen_clear (&live);
  return error != NULL ? fail (error) : status;
}

/* --- stream -------------------------------------------------------------- */

static TomoScan *
open_scan_cb (const char *path,
              gpointer    data,
              GError    **error)
{
  return tomo_open_args_open (path, data, error);
}

static int
cmd_stream (int    argc,
            char **argv)
{
  g_autoptr(GOptionContext) context =
    g_option_context_new ("FILE --to URL — send a scan as a live sender would");
  TomoOpenArgs a = { 0 };
  int status;

  g_option_context_add_group (context, tomo_open_args_group (&a));
  status = tomo_live_cli_stream (context, argc, argv, open_scan_cb, &a);
  tomo_open_args_clear (&a);
  return status;
}

/* --- phantom ------------------------------------------------------------- */

static int
cmd_phantom (int    argc,
             char **argv)
{
  g_autoptr(GOptionContext) context =
    g_option_context_new ("-o FILE.h5 — write a simulated scan (HDF5 Data Exchange)");
  g_autoptr(GError) error = NULL;
  g_autofree char *output = NULL, *kind = NULL;
  TomoPhantomParams p;
  double width, height, n_proj, n_flats, n_darks, seed, threads = 0;
  double center = NAN, offset = NAN, range, flat, dark, scale = NAN, tilt = 0.0;
  double object_width = 0;
  gboolean noise = FALSE, no_noise = FALSE;

  tomo_phantom_params_init (&p);
  width = p.width;
  height = p.height;
  n_proj = p.n_proj;
  n_flats = p.n_flats;
  n_darks = p.n_darks;
  seed = p.seed;
  range = p.angle_range_deg;
  flat = p.flat_level;
  dark = p.dark_level;

  {
    GOptionEntry entries[] = {
      { "width", 'W', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Detector columns (also the slice size)", "N" },
      { "height", 'H', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Detector rows", "N" },
      { "projections", 'n', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Number of projections", "N" },
      { "angle-range", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Angular range in degrees (180)", "DEG" },
      { "center", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Rotation axis column", "C" },
      { "center-offset", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
        "Rotation axis relative to the detector middle (default +3.37)", "PX" },
      { "tilt", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
        "Axis tilt in degrees (positive: the axis moves right going down)", "DEG" },
      { "object-width", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
        "Pixels across the field of view the object fills (default: the width; about "
        "2·width for an offset-axis scan: --angle-range 360 --center near an edge)", "N" },
      { "kind", 0, 0, G_OPTION_ARG_STRING, &kind, "shepp-logan (default), disks, points", "KIND" },
      { "attenuation", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
        "Attenuation per pixel of a unit-value region (default 4/width)", "MU" },
      { "flat-level", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Counts in the flat field", "COUNTS" },
      { "dark-level", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Counts in the dark field", "COUNTS" },
      { "flats", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Number of flat fields", "N" },
      { "darks", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Number of dark fields", "N" },
      { "noise", 0, 0, G_OPTION_ARG_NONE, &noise, "Poisson noise (default)", NULL },
      { "no-noise", 0, 0, G_OPTION_ARG_NONE, &no_noise, "Exact counts, no noise", NULL },
      { "seed", 0, 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb, "Random seed", "N" },
      { "threads", 'j', 0, G_OPTION_ARG_CALLBACK, tomo_number_option_cb,
        "Rows computed in parallel (default: one per processor; the file is the same)", "N" },
      { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Output HDF5 file", "FILE" },
      G_OPTION_ENTRY_NULL
    };
    TomoNumberOption numbers[] = {
      { "width", 'W', 1, 65536, TRUE, &width },
      { "height", 'H', 1, 65536, TRUE, &height },
      { "projections", 'n', 1, 1000000, TRUE, &n_proj },
      { "angle-range", 0, 1e-6, 360000, FALSE, &range },
      { "center", 0, -1e9, 1e9, FALSE, &center },
      { "center-offset", 0, -1e9, 1e9, FALSE, &offset },
      { "tilt", 0, -45, 45, FALSE, &tilt },
      { "object-width", 0, 0, 1 << 17, TRUE, &object_width },
      { "attenuation", 0, 0, 1e6, FALSE, &scale },
      { "flat-level", 0, 0, 1e12, FALSE, &flat },
      { "dark-level", 0, 0, 1e12, FALSE, &dark },
      { "flats", 0, 0, 100000, TRUE, &n_flats },
      { "darks", 0, 0, 100000, TRUE, &n_darks },
      { "seed", 0, 0, G_MAXUINT32, TRUE, &seed },
      { "threads", 'j', 0, 4096, TRUE, &threads },
      { NULL },
    };

    g_option_context_set_summary (context,
      "Simulates a parallel-beam scan of an analytic phantom: exact line\n"
      "integrals of ellipsoids, turned into raw counts with flats, darks and\n"
      "Poisson noise, with the rotation axis off the detector middle.");
    if (!tomo_cli_parse (context, entries, numbers, &argc, &argv, &error))
      return fail (error);
  }

  if (output == NULL || argc != 1)
    return fail_literal ("phantom needs an output file: -o FILE.h5 (and no other arguments)");
  if (width < 1 || height < 1 || n_proj < 1 || n_flats < 0 || n_darks < 0 || threads < 0)
    return fail_literal ("phantom: width, height and projections must be ≥ 1, flats, darks and threads ≥ 0");
  if (!(flat > dark) || dark < 0)
    return fail_literal ("phantom: the flat level must be above the dark level, and the dark ≥ 0");
  p.width = width;
  p.height = height;
  p.n_proj = n_proj;
  p.n_flats = n_flats;
  p.n_darks = n_darks;
  p.seed = seed;
  p.n_threads = threads;
  p.angle_range_deg = range;
  p.flat_level = flat;
  p.dark_level = dark;
  p.tilt_deg = tilt;
  p.object_width = (guint) object_width;
  p.noise = no_noise ? FALSE : TRUE;
  if (!isnan (scale))
    p.max_attenuation = scale;
  else
    p.max_attenuation = 4.0 / (object_width > 0 ? object_width : width);
  if (!isnan (center))
    p.center = center;
  else
    p.center = (width - 1) / 2.0 + (isnan (offset) ? 3.37 : offset);
  if (kind != NULL)
    {
      if (g_str_equal (kind, "shepp-logan"))
        p.kind = TOMO_PHANTOM_SHEPP_LOGAN;
      else if (g_str_equal (kind, "disks"))
        p.kind = TOMO_PHANTOM_DISKS;
      else if (g_str_equal (kind, "points"))
        p.kind = TOMO_PHANTOM_POINTS;
      else
        {
          g_printerr ("tomolive: unknown phantom kind “%s” (known: shepp-logan, disks, points)\n", kind);
          return 1;
        }
    }
  if (!tomo_phantom_write_dxchange (&p, output, &error))
    return fail (error);
  return 0;
}

/* --- dispatch ------------------------------------------------------------ */

static void
print_usage (void)
{
  g_print (
    "Usage:\n"
    "  tomolive [FILE…]                 open the viewer (on FILE)\n"
    "  tomolive --listen URL            open the viewer waiting for a live scan\n"
    "  tomolive info FILE               describe a scan\n"
    "  tomolive reconstruct FILE -o OUT reconstruct slices to float32 TIFF or HDF5\n"
    "  tomolive reconstruct --listen URL -o OUT\n"
    "                                   receive one scan live, then reconstruct it\n"
    "  tomolive stream FILE --to URL    replay a scan as a live sender\n"
    "  tomolive phantom -o FILE.h5      write a simulated scan\n"
    "  tomolive find-center FILE        find the rotation axis and its tilt\n"
    "  tomolive bench                   measure the GPU back projectors (--cpu, --live, …)\n"
    "\n"
    "Each command has --help.  Scans: HDF5 Data Exchange, HDF5 NeXus NXtomo,\n"
    "TIFF stacks and raw binary.  Centres are detector columns, fractional,\n"
    "as in TomoPy; slices are attenuation per pixel.\n");
}

/* The exit status of the subcommand argv[1] names, or -1 when it names none. */
static int
cli_run (int    argc,
         char **argv)
{
  static const struct
  {
    const char *name;
    int       (*run) (int argc, char **argv);
  } commands[] = {
    { "info", cmd_info }, { "reconstruct", cmd_reconstruct }, { "phantom", cmd_phantom },
    { "stream", cmd_stream }, { "bench", tomo_bench_main }, { "find-center", tomo_find_center_main },
  };
  const char *cmd;

  if (argc < 2)
    return -1;
  cmd = argv[1];
  if (g_str_equal (cmd, "--help") || g_str_equal (cmd, "-h") || g_str_equal (cmd, "help"))
    {
      print_usage ();
      return 0;
    }
  if (g_str_equal (cmd, "--version"))
    {
      int n = tomo_engine_count_gpus ();

      g_print ("tomolive %s (CUDA engine: %s, %d device%s; viewer: %s)\n", PACKAGE_VERSION,
               HAVE_CUDA ? "built" : "not built", n, n == 1 ? "" : "s", HAVE_UI ? "built" : "not built");
      return 0;
    }
  /* The HDF5 probe's helper (tomo-probe.c): default signals, so a fault
   * inside libhdf5 is seen by the parent as what it is. */
  if (g_str_equal (cmd, "probe-hdf5"))
    return tomo_probe_hdf5_main (argc - 1, argv + 1);
  /* Ctrl+C or SIGTERM: incomplete outputs are removed, exit status 1. */
  tomo_output_install_signal_handlers ();
  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (cmd, commands[i].name))
      return commands[i].run (argc - 1, argv + 1);
  return -1;
}

int
tomo_cli_main (int    argc,
               char **argv,
               int  (*open_viewer) (int argc, char **argv))
{
  int status;

  setlocale (LC_ALL, "");
  status = cli_run (argc, argv);
  if (status >= 0)
    return status;
  if (open_viewer != NULL)
    return open_viewer (argc, argv);
  g_printerr ("tomolive was built without the viewer (GTK 4); try “tomolive --help”.\n");
  return 1;
}
