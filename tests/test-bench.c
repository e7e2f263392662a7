/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * `tomolive bench` run as a user would, as a child process: the CPU backend
 * measurements on a small slice (their tables must hold finite, positive
 * numbers and the temporary scans must be gone afterwards), bad arguments,
 * and what a machine without a GPU is told.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-engine.h"
#include "tomo-test-util.h"

static int n_devices;

/* Runs `tomolive bench args…` with TMPDIR set to `tmp` (NULL: unchanged). */
static void
run_bench (TomoTestResult     *r,
           const char         *tmp,
           const char *const  *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_auto(GStrv) env = g_get_environ ();

  g_ptr_array_add (argv, (char *) "bench");
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);
  if (tmp != NULL)
    env = g_environ_setenv (env, "TMPDIR", tmp, TRUE);
  tomo_test_run_argv_env (r, (const char *const *) env, (const char **) argv->pdata);
  g_test_message ("tomolive bench exited %d\n%s%s", r->status, r->out, r->err);
}

#define RUN(r, tmp, ...) \
  G_STMT_START { const char *a_[] = { __VA_ARGS__, NULL }; run_bench (r, tmp, a_); } G_STMT_END

/* A Markdown table row split at '|' and stripped: cells[0] is the empty
 * text before the first bar. */
static char **
split_row (const char *line)
{
  char **cells = g_strsplit (line, "|", -1);

  for (guint c = 0; cells[c] != NULL; c++)
    g_strstrip (cells[c]);
  return cells;
}

/* The table row of `out` that starts with `prefix`, split_row(). */
static char **
table_row (const char *out,
           const char *prefix)
{
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], prefix))
      return split_row (lines[i]);
  g_error ("no table row starting with “%s” in:\n%s", prefix, out);
  return NULL;
}

/* The first row of numbers in the table after `heading`. */
static char **
first_data_row (const char *out,
                const char *heading)
{
  const char *section = strstr (out, heading);
  g_auto(GStrv) lines = NULL;

  if (section == NULL)
    g_error ("no “%s” in:\n%s", heading, out);
  lines = g_strsplit (section, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "| ") && g_ascii_isdigit (lines[i][2]))
      return split_row (lines[i]);
  g_error ("no row of numbers after “%s” in:\n%s", heading, out);
  return NULL;
}

/* A table cell that must be a finite positive number. */
static double
positive_cell (char      **cells,
               guint       column,
               const char *what)
{
  char *end = NULL;
  double v;

  g_assert_cmpuint (g_strv_length (cells), >, column);
  v = g_ascii_strtod (cells[column], &end);
  if (end == cells[column] || *end != '\0' || !isfinite (v) || v <= 0)
    g_error ("%s: “%s” is not a finite positive number", what, cells[column]);
  return v;
}

static void
test_cpu (void)
{
  g_autofree char *tmp = tomo_test_make_tmp_dir ("test-bench-XXXXXX");
  g_auto(TomoTestResult) r = { 0 };
  const guint S = 96, N = 60;
  g_autofree char *linear = g_strdup_printf ("| %u² | %u | linear |", S, N);
  g_autofree char *nearest = g_strdup_printf ("| %u² | %u | nearest |", S, N);
  g_auto(GStrv) row_lin = NULL;
  g_auto(GStrv) row_near = NULL;
  g_auto(GStrv) centre = NULL;
  g_auto(GStrv) row = NULL;
  g_auto(GStrv) header = NULL;
  double s, gus, ms, ups;

  RUN (&r, tmp, "--cpu", "--sizes", "96", "--projections", "60", "--runs", "3");
  g_assert_cmpint (r.status, ==, 0);

  /* Back projection: time and GU/s agree with each other and the size. */
  row_lin = table_row (r.out, linear);
  row_near = table_row (r.out, nearest);
  for (guint k = 0; k < 2; k++)
    {
      char **cells = k == 0 ? row_lin : row_near;

      g_assert_cmpuint (atoi (cells[4]), ==, g_get_num_processors ());
      s = positive_cell (cells, 5, "back-projection seconds");
      gus = positive_cell (cells, 6, "GU/s");
      /* Both printed to 3 significant digits. */
      g_assert_cmpfloat (fabs (gus / ((double) S * S * N / s / 1e9) - 1.0), <=, 0.012);
    }

  /* The viewer's loop: updates/s is 1000 / ms, both positive. */
  centre = table_row (r.out, "| centre |");
  row = table_row (r.out, "| row |");
  for (guint k = 0; k < 2; k++)
    {
      char **cells = k == 0 ? centre : row;

      ms = positive_cell (cells, 3, "update ms");
      ups = positive_cell (cells, 5, "updates/s");
      /* Both printed to 0.1: some time within 0.05 of the printed ms must
       * give an update rate within 0.05 of the printed one. */
      g_assert_cmpfloat (1000.0 / (ms + 0.05), <=, ups + 0.05 + 1e-9);
      g_assert_cmpfloat (1000.0 / MAX (ms - 0.05, 1e-9), >=, ups - 0.05 - 1e-9);
    }
  g_assert_nonnull (strstr (r.out, "360 projections"));

  /* The header: the declared scan as written, opened at least once. */
  g_assert_nonnull (strstr (r.out, "1800 × 2048 × 2048 uint16"));
  header = first_data_row (r.out, "Opening a scan header");
  positive_cell (header, 1, "first open ms");
  positive_cell (header, 2, "median open ms");

  g_assert_nonnull (strstr (r.out, "load average"));
  g_assert_nonnull (strstr (r.err, "fewer than 5 runs"));
  /* Every temporary scan removed, the folder too. */
  g_assert_cmpuint (tomo_test_count_entries (tmp), ==, 0);
  g_assert_cmpint (g_rmdir (tmp), ==, 0);
}

static void
test_bad_arguments (void)
{
  static const struct { const char *args[4]; const char *words; } cases[] = {
    { { "--cpu", "--sizes", "0" }, "--sizes" },
    { { "--cpu", "--sizes", "12x" }, "--sizes" },
    { { "--cpu", "--runs", "-2" }, "--runs" },
    { { "--cpu", "--projections", "70000" }, "--projections" },
    { { "--no-such-option" }, "no-such-option" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto(TomoTestResult) r = { 0 };

      run_bench (&r, NULL, cases[i].args);
      g_assert_cmpint (r.status, ==, 1);
      g_assert_true (g_str_has_prefix (r.err, "tomolive bench: "));
      if (strstr (r.err, cases[i].words) == NULL)
        g_error ("expected “%s” in the error, got: %s", cases[i].words, r.err);
      g_assert_null (strstr (r.out, "## "));
    }
}

static void
test_no_gpu (void)
{
  g_auto(TomoTestResult) r = { 0 };
  g_auto(TomoTestResult) r2 = { 0 };

  if (n_devices > 0)
    {
      g_test_skip ("a CUDA device is present: the GPU tables would run");
      return;
    }
  RUN (&r, NULL, "--sizes", "64");
  g_assert_cmpint (r.status, ==, 1);
  g_assert_nonnull (strstr (r.err, "no GPU"));
  g_assert_nonnull (strstr (r.err, "tomolive bench --cpu"));

  /* --interop skips with a reason instead of failing. */
  RUN (&r2, NULL, "--interop");
  g_assert_cmpint (r2.status, ==, 0);
  g_assert_nonnull (strstr (r2.out, "skipped"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  tomo_test_require_env ("TOMOLIVE");
  n_devices = tomo_engine_count_gpus ();

  g_test_add_func ("/tomo/bench/cpu", test_cpu);
  g_test_add_func ("/tomo/bench/bad-arguments", test_bad_arguments);
  g_test_add_func ("/tomo/bench/no-gpu", test_no_gpu);
  return g_test_run ();
}
