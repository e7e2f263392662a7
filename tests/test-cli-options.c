/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Numeric options of bench, bench --live, stream, find-center and the live
 * listener: NaN, Inf, negative, huge and fractional values are refused
 * before anything runs, with exit status 1 and a message naming the
 * option and the value.
 */
#include "config.h"

#include <string.h>

#include "tomo-test-util.h"

typedef struct
{
  const char *args[8];
  const char *words;  /* in the message */
} Case;

static const Case cases[] = {
  { { "bench", "--runs", "nan" }, "--runs “nan” is not a finite number" },
  { { "bench", "--runs", "0" }, "--runs 0 is out of range" },
  { { "bench", "--projections", "inf" }, "--projections “inf” is not a finite number" },
  { { "bench", "--projections", "-5" }, "--projections -5 is out of range" },
  { { "bench", "--projections", "1e12" }, "--projections 1e12 is out of range" },
  { { "bench", "--volume", "2.5" }, "--volume" },
  { { "bench", "--volume", "99999999999999999999" }, "--volume" },
  { { "bench", "--device", "-1" }, "--device -1 is out of range" },
  { { "bench", "--planes", "--rows", "nan" }, "--rows “nan” is not a finite number" },
  { { "bench", "--live", "--size", "1e9" }, "--size 1e9 is out of range" },
  { { "bench", "--live", "--seconds", "nan" }, "--seconds “nan” is not a finite number" },
  { { "bench", "--live", "--seconds", "-1" }, "--seconds -1 is out of range" },
  { { "bench", "--live", "--streams", "inf" }, "--streams “inf” is not a finite number" },
  { { "bench", "--live", "--slots", "4294967297" }, "--slots 4294967297 is out of range" },
  { { "bench", "--live", "--rate", "0" }, "--rate 0 is out of range" },
  { { "bench", "--live", "--frame-rate", "-inf" }, "--frame-rate “-inf” is not a finite number" },
  { { "stream", "x.h5", "--to", "tcp://127.0.0.1:1", "--rate", "nan" }, "--rate “nan” is not a finite number" },
  { { "stream", "x.h5", "--to", "tcp://127.0.0.1:1", "--rate", "-3" }, "--rate -3 is out of range" },
  { { "stream", "x.h5", "--to", "tcp://127.0.0.1:1", "--timeout", "inf" }, "--timeout “inf” is not a finite number" },
  { { "stream", "x.h5", "--to", "tcp://127.0.0.1:1", "--timeout", "1e30" }, "--timeout 1e30 is out of range" },
  { { "find-center", "x.h5", "--row", "nan" }, "--row “nan” is not a finite number" },
  { { "find-center", "x.h5", "--row", "-2" }, "--row -2 is out of range" },
  { { "find-center", "x.h5", "--angle-range", "inf" }, "--angle-range “inf” is not a finite number" },
  { { "find-center", "x.h5", "--angle-range", "0" }, "--angle-range 0 is out of range" },
  { { "reconstruct", "-o", "never-written.tif", "--listen", "tcp://127.0.0.1:0", "--timeout", "nan" }, "--timeout nan is out of range" },
  { { "reconstruct", "-o", "never-written.tif", "--listen", "tcp://127.0.0.1:0", "--timeout", "inf" }, "--timeout inf is out of range" },
  { { "reconstruct", "-o", "never-written.tif", "--listen", "tcp://127.0.0.1:0", "--projections", "-4" }, "--projections -4 is out of range" },
  { { "reconstruct", "x.h5", "-o", "never-written.tif", "--writers", "257" }, "--writers 257 is out of range (1 to 256, or 0 for the default)" },
  { { "reconstruct", "x.h5", "-o", "never-written.tif", "--writers", "-1" }, "--writers -1 is out of range (1 to 256, or 0 for the default)" },
};

static void
test_case (gconstpointer data)
{
  const Case *c = data;
  g_auto(TomoTestResult) r = { 0 };

  tomo_test_run_argv (&r, (const char **) c->args);
  g_assert_cmpint (r.status, ==, 1);
  if (strstr (r.err, c->words) == NULL)
    g_error ("expected “%s” in the error, got: %s", c->words, r.err);
  /* Refused while parsing: nothing ran, nothing was printed on stdout. */
  g_assert_cmpstr (r.out, ==, "");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *joined = g_strjoinv ("_", (char **) cases[i].args);
      g_autofree char *path = NULL;

      g_strdelimit (joined, "-/:.", '_');
      path = g_strdup_printf ("/tomo/cli-options/%u-%s", i, joined);
      g_test_add_data_func (path, &cases[i], test_case);
    }
  return g_test_run ();
}
