/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>

#include <glib.h>

#include "tomo-preprocess.h"
#include "tomo-test-util.h"

static void
test_formula (void)
{
  /* 2 projections × 3 columns, numbers chosen by hand. */
  const float raw[] = { 550.f, 300.f, 1010.f,
                        100.f, 900.f, 60.f };
  const float flat[] = { 1000.f, 1200.f, 2010.f };
  const float dark[] = { 100.f, 0.f, 10.f };
  float out[6];
  TomoPreprocessStats stats = { 0, };

  tomo_preprocess_row (raw, 2, 3, &(TomoFlatField) { flat, dark, TRUE }, out, &stats);

  for (guint p = 0; p < 2; p++)
    for (guint x = 0; x < 3; x++)
      {
        double r = raw[p * 3 + x], expected;

        if (p == 1 && x == 0)
          continue; /* raw == dark: clamped, checked below */
        expected = -log ((r - dark[x]) / (flat[x] - dark[x]));
        g_assert_cmpfloat_with_epsilon (out[p * 3 + x], expected, 1e-6);
      }
  /* Spot values worked out by hand. */
  g_assert_cmpfloat_with_epsilon (out[0], -log (0.5), 1e-6);
  g_assert_cmpfloat_with_epsilon (out[1], -log (0.25), 1e-6);
  g_assert_cmpfloat_with_epsilon (out[2], -log (0.5), 1e-6);
  g_assert_cmpfloat_with_epsilon (out[4], -log (0.75), 1e-6);

  /* raw == dark: numerator clamped to a tiny positive value, finite, large. */
  g_assert_true (isfinite (out[3]));
  g_assert_cmpfloat (out[3], >, 10.0);

  g_assert_cmpuint (stats.n_values, ==, 6);
  g_assert_cmpuint (stats.n_nonpositive, ==, 1);
  g_assert_cmpuint (stats.n_nonfinite, ==, 0);
}

static void
test_no_log (void)
{
  const float raw[] = { 550.f, 300.f };
  const float flat[] = { 1000.f, 1100.f };
  const float dark[] = { 100.f, 100.f };
  float out[2];

  tomo_preprocess_row (raw, 1, 2, &(TomoFlatField) { flat, dark, FALSE }, out, NULL);
  g_assert_cmpfloat_with_epsilon (out[0], 0.5, 1e-7);
  g_assert_cmpfloat_with_epsilon (out[1], 0.2, 1e-7);
}

static void
test_normalised (void)
{
  /* flat == NULL: the data is already (raw − dark)/(flat − dark). */
  const float raw[] = { 1.0f, 0.5f, 0.25f, 2.0f };
  float out[4];
  float lin[4];
  TomoPreprocessStats stats = { 0, };

  tomo_preprocess_row (raw, 2, 2, &(TomoFlatField) { NULL, NULL, TRUE }, out, &stats);
  g_assert_cmpfloat_with_epsilon (out[0], 0.0, 1e-7);
  g_assert_cmpfloat_with_epsilon (out[1], log (2.0), 1e-6);
  g_assert_cmpfloat_with_epsilon (out[2], log (4.0), 1e-6);
  g_assert_cmpfloat_with_epsilon (out[3], -log (2.0), 1e-6);
  g_assert_cmpuint (stats.n_values, ==, 4);
  g_assert_cmpuint (stats.n_nonpositive, ==, 0);

  /* Already line integrals: passed through untouched, even negative ones. */
  {
    const float li[] = { -0.5f, 0.0f, 3.25f, 1e-3f };
    tomo_preprocess_row (li, 1, 4, &(TomoFlatField) { NULL, NULL, FALSE }, lin, NULL);
    for (guint i = 0; i < 4; i++)
      g_assert_cmpfloat (lin[i], ==, li[i]);
  }
}

static void
test_clamp (void)
{
  /* Column 0: flat == dark (dead pixel); column 1: raw below dark. */
  const float raw[] = { 500.f, 50.f };
  const float flat[] = { 100.f, 1000.f };
  const float dark[] = { 100.f, 100.f };
  float out[2];
  TomoPreprocessStats stats = { 0, };

  tomo_preprocess_row (raw, 1, 2, &(TomoFlatField) { flat, dark, TRUE }, out, &stats);
  tomo_test_assert_finite (out, 2);
  g_assert_cmpuint (stats.n_nonpositive, ==, 2);
  g_assert_cmpuint (stats.n_nonfinite, ==, 0);
  /* Raw below dark means "nothing came through": strong attenuation. */
  g_assert_cmpfloat (out[1], >, 5.0);

  /* Negative normalised value with −log: clamped too. */
  {
    const float norm[] = { -0.5f, 0.0f };
    TomoPreprocessStats s2 = { 0, };
    tomo_preprocess_row (norm, 1, 2, &(TomoFlatField) { NULL, NULL, TRUE }, out, &s2);
    tomo_test_assert_finite (out, 2);
    g_assert_cmpuint (s2.n_nonpositive, ==, 2);
  }
}

static void
test_nonfinite (void)
{
  const float raw[] = { NAN, INFINITY, -INFINITY, 600.f, 600.f, 600.f };
  const float flat[] = { 1100.f, 1100.f, 1100.f, NAN, 1100.f, INFINITY };
  const float dark[] = { 100.f, 100.f, 100.f, 100.f, NAN, 100.f };
  float out[6];
  TomoPreprocessStats stats = { 0, };

  tomo_preprocess_row (raw, 1, 6, &(TomoFlatField) { flat, dark, TRUE }, out, &stats);
  tomo_test_assert_finite (out, 6);
  /* Non-finite inputs give 0. */
  g_assert_cmpfloat (out[0], ==, 0.0f);
  g_assert_cmpfloat (out[1], ==, 0.0f);
  g_assert_cmpfloat (out[2], ==, 0.0f);
  g_assert_cmpuint (stats.n_nonfinite, ==, 3);
  /* A NaN flat is a bad denominator: clamped and counted. */
  g_assert_cmpuint (stats.n_nonpositive, >=, 2);
  /* A NaN dark counts as 0: −log(600/1100). */
  g_assert_cmpfloat_with_epsilon (out[4], -log (600.0 / 1100.0), 1e-6);
  g_assert_cmpuint (stats.n_values, ==, 6);
}

static void
test_in_place (void)
{
  float data[] = { 550.f, 300.f, 200.f, 1000.f };
  const float flat[] = { 1000.f, 500.f };
  const float dark[] = { 100.f, 100.f };

  tomo_preprocess_row (data, 2, 2, &(TomoFlatField) { flat, dark, TRUE }, data, NULL);
  g_assert_cmpfloat_with_epsilon (data[0], -log (0.5), 1e-6);
  g_assert_cmpfloat_with_epsilon (data[1], -log (0.5), 1e-6);
  g_assert_cmpfloat_with_epsilon (data[2], -log (100.0 / 900.0), 1e-6);
  g_assert_cmpfloat_with_epsilon (data[3], -log (900.0 / 400.0), 1e-6);
}

static void
test_average (void)
{
  /* 3 frames × 3 columns; column 1 has one NaN, column 2 only non-finite. */
  const float frames[] = { 1.f, 10.f, NAN,
                           2.f, NAN, INFINITY,
                           6.f, 20.f, NAN };
  float out[3];
  TomoPreprocessStats stats = { 0, };

  tomo_average_frames (frames, 3, 3, out, &stats);
  g_assert_cmpfloat_with_epsilon (out[0], 3.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (out[1], 15.0, 1e-6);
  g_assert_cmpfloat (out[2], ==, 0.0f);
  g_assert_cmpuint (stats.n_nonfinite, ==, 4);
  g_assert_cmpuint (stats.n_values, ==, 9);
}

static void
test_stats_add (void)
{
  TomoPreprocessStats a = { 10, 2, 1 };
  TomoPreprocessStats b = { 5, 1, 3 };

  tomo_preprocess_stats_add (&a, &b);
  g_assert_cmpuint (a.n_values, ==, 15);
  g_assert_cmpuint (a.n_nonpositive, ==, 3);
  g_assert_cmpuint (a.n_nonfinite, ==, 4);
  tomo_preprocess_stats_add (&a, NULL);
  g_assert_cmpuint (a.n_values, ==, 15);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tomo/preprocess/formula", test_formula);
  g_test_add_func ("/tomo/preprocess/no-log", test_no_log);
  g_test_add_func ("/tomo/preprocess/normalised", test_normalised);
  g_test_add_func ("/tomo/preprocess/clamp", test_clamp);
  g_test_add_func ("/tomo/preprocess/nonfinite", test_nonfinite);
  g_test_add_func ("/tomo/preprocess/in-place", test_in_place);
  g_test_add_func ("/tomo/preprocess/average", test_average);
  g_test_add_func ("/tomo/preprocess/stats-add", test_stats_add);

  return g_test_run ();
}
