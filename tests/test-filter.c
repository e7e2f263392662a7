/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>

#include <glib.h>

#include "tomo-filter.h"

static gboolean
smooth7 (guint n)
{
  static const guint primes[] = { 2, 3, 5, 7 };

  for (guint i = 0; i < G_N_ELEMENTS (primes); i++)
    while (n > 1 && n % primes[i] == 0)
      n /= primes[i];
  return n == 1;
}

static void
test_padded_width (void)
{
  g_assert_cmpuint (tomo_filter_padded_width (1024), ==, 2048);
  g_assert_cmpuint (tomo_filter_padded_width (500), ==, 1000);
  g_assert_cmpuint (tomo_filter_padded_width (13), ==, 28);   /* 26 is not smooth, 27 is odd */
  g_assert_cmpuint (tomo_filter_padded_width (2049), ==, 4116); /* 2²·3·7³ */
  g_assert_cmpuint (tomo_filter_padded_width (2560), ==, 5120);

  for (guint w = 1; w <= 5000; w++)
    {
      guint p = tomo_filter_padded_width (w);

      g_assert_cmpuint (p, >=, 2 * w);
      g_assert_cmpuint (p % 2, ==, 0);
      g_assert_true (smooth7 (p));
      /* The smallest such number. */
      for (guint q = 2 * w; q < p; q += 2)
        g_assert_false (smooth7 (q));
    }
}

/* The wrapped spatial ramp and its DFT by the definition, term by term:
 * an independent computation of what the response should be. */
static void
brute_force_ramp (guint   n,
                  double *out)
{
  g_autofree double *h = g_new0 (double, n);

  for (guint k = 0; k < n; k++)
    {
      guint d = MIN (k, n - k);

      if (d == 0)
        h[k] = 0.5;
      else if (d % 2 == 1)
        h[k] = -2.0 / (G_PI * G_PI * (double) d * d);
    }
  for (guint j = 0; j <= n / 2; j++)
    {
      double re = 0.0, im = 0.0;

      for (guint k = 0; k < n; k++)
        {
          re += h[k] * cos (2.0 * G_PI * j * k / n);
          im -= h[k] * sin (2.0 * G_PI * j * k / n);
        }
      g_assert_cmpfloat (fabs (im), <, 1e-12); /* real and even */
      out[j] = re;
    }
}

static void
test_ramp_against_definition (void)
{
  const guint sizes[] = { 64, 27, 30, 98, 250 };
  const guint n_sizes = G_N_ELEMENTS (sizes);

  /* Forwards, then backwards with each length asked twice: the kept ramps
   * (the last four lengths) are hit, the first length's was let go and is
   * made anew; each is the definition's, never another length's. */
  for (guint i = 0; i < 3 * n_sizes; i++)
    {
      guint n = i < n_sizes ? sizes[i] : sizes[n_sizes - 1 - (i - n_sizes) / 2];
      g_autofree double *expected = g_new (double, n / 2 + 1);
      g_autofree double *got = g_new (double, n / 2 + 1);

      brute_force_ramp (n, expected);
      tomo_filter_response (TOMO_FILTER_RAMLAK, n, 1.0, got);
      for (guint j = 0; j <= n / 2; j++)
        g_assert_cmpfloat_with_epsilon (got[j], expected[j], 1e-12);
    }
}

/* Threads asking for six lengths at once, more than the ramps kept: every
 * response is its length's, whoever summed or evicted it meanwhile. */
#define N_RACE_SIZES 6
static const guint race_sizes[N_RACE_SIZES] = { 64, 98, 250, 30, 512, 126 };
static double *race_expected[N_RACE_SIZES];

static gpointer
race_worker (gpointer data)
{
  guint seed = GPOINTER_TO_UINT (data);
  g_autofree double *got = g_new (double, 512 / 2 + 1);

  for (guint k = 0; k < 60; k++)
    {
      guint i = (seed * 7 + k * 5) % N_RACE_SIZES, n = race_sizes[i];

      tomo_filter_response (TOMO_FILTER_RAMLAK, n, 1.0, got);
      for (guint j = 0; j <= n / 2; j++)
        if (got[j] != race_expected[i][j])
          return GUINT_TO_POINTER (n);
    }
  return NULL;
}

static void
test_ramp_threads (void)
{
  GThread *threads[4];

  for (guint i = 0; i < N_RACE_SIZES; i++)
    {
      race_expected[i] = g_new (double, race_sizes[i] / 2 + 1);
      _tomo_filter_forget_ramp ();
      tomo_filter_response (TOMO_FILTER_RAMLAK, race_sizes[i], 1.0, race_expected[i]);
    }
  _tomo_filter_forget_ramp ();
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    threads[t] = g_thread_new ("ramp", race_worker, GUINT_TO_POINTER (t));
  for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
    g_assert_null (g_thread_join (threads[t]));
  for (guint i = 0; i < N_RACE_SIZES; i++)
    g_clear_pointer (&race_expected[i], g_free);
}

static void
test_ramp_dc_and_nyquist (void)
{
  const guint n = 2048;
  g_autofree double *r = g_new (double, n / 2 + 1);
  double dc = 0.5;

  tomo_filter_response (TOMO_FILTER_RAMLAK, n, 1.0, r);

  /* DC = Σ h: 1/2 − (4/π²)·Σ_{odd d < n/2} 1/d², a small positive number
   * (the discrete ramp has no negative DC offset, unlike a sampled |f|
   * which is exactly 0 there). */
  for (guint d = 1; d < n / 2; d += 2)
    dc -= 4.0 / (G_PI * G_PI) / ((double) d * d);
  g_assert_cmpfloat_with_epsilon (r[0], dc, 1e-14);
  g_assert_cmpfloat (r[0], >, 0.0);
  g_assert_cmpfloat (r[0], <, 1.0 / n);

  /* At Nyquist the ramp reaches 1 (Σ_{odd} 1/d² = π²/8), less a tail O(1/n). */
  g_assert_cmpfloat (fabs (r[n / 2] - 1.0), <, 2.0 / n);
  /* Monotonic rise in between, and close to 2|f| in the middle. */
  for (guint j = 1; j <= n / 2; j++)
    g_assert_cmpfloat (r[j], >, r[j - 1]);
  g_assert_cmpfloat_with_epsilon (r[n / 4], 0.5, 1e-3);
}

typedef struct
{
  TomoFilterType type;
  double w;        /* fraction of Nyquist */
  double expected; /* window value there */
} WindowCase;

static void
test_windows (void)
{
  /* Values worked out by hand from the usual definitions. */
  static const WindowCase cases[] = {
    { TOMO_FILTER_RAMLAK, 0.5, 1.0 },
    { TOMO_FILTER_RAMLAK, 1.0, 1.0 },
    { TOMO_FILTER_SHEPP_LOGAN, 0.5, 0.900316316157106 }, /* sin(π/4)/(π/4) */
    { TOMO_FILTER_SHEPP_LOGAN, 1.0, 0.636619772367581 }, /* 2/π */
    { TOMO_FILTER_COSINE, 0.5, 0.707106781186548 },
    { TOMO_FILTER_COSINE, 1.0, 0.0 },
    { TOMO_FILTER_HAMMING, 0.5, 0.54 },
    { TOMO_FILTER_HAMMING, 1.0, 0.08 },
    { TOMO_FILTER_HANN, 0.25, 0.853553390593274 }, /* 0.5 + 0.5·cos(π/4) */
    { TOMO_FILTER_HANN, 0.5, 0.5 },
    { TOMO_FILTER_HANN, 1.0, 0.0 },
    { TOMO_FILTER_PARZEN, 0.25, 0.71875 },  /* 1 − 6·w²·(1 − w) */
    { TOMO_FILTER_PARZEN, 0.5, 0.25 },
    { TOMO_FILTER_PARZEN, 0.75, 0.03125 }, /* 2·(1 − w)³ */
    { TOMO_FILTER_PARZEN, 1.0, 0.0 },
  };
  const guint n = 64;
  double ramp[n / 2 + 1], r[n / 2 + 1];

  tomo_filter_response (TOMO_FILTER_RAMLAK, n, 1.0, ramp);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      guint j = (guint) round (cases[i].w * n / 2);

      tomo_filter_response (cases[i].type, n, 1.0, r);
      g_test_message ("%s at %.2f of Nyquist: %.15f", tomo_filter_type_to_string (cases[i].type),
                      cases[i].w, r[j] / ramp[j]);
      g_assert_cmpfloat_with_epsilon (r[j] / ramp[j], cases[i].expected, 1e-12);
    }

  /* Every window is 1 at DC and no window amplifies. */
  for (TomoFilterType t = 0; t < TOMO_N_FILTERS; t++)
    {
      tomo_filter_response (t, n, 1.0, r);
      g_assert_cmpfloat_with_epsilon (r[0], ramp[0], 1e-15);
      for (guint j = 0; j <= n / 2; j++)
        {
          g_assert_cmpfloat (r[j], <=, ramp[j] + 1e-15);
          g_assert_cmpfloat (r[j], >=, 0.0);
        }
    }
}

static void
test_scale (void)
{
  const guint n = 100;
  double a[n / 2 + 1], b[n / 2 + 1];

  g_assert_cmpfloat_with_epsilon (tomo_fbp_scale (180), G_PI / 360, 1e-15);
  g_assert_cmpfloat_with_epsilon (tomo_fbp_scale (1), G_PI / 2, 1e-15);

  for (TomoFilterType t = 0; t < TOMO_N_FILTERS; t++)
    {
      double scale = tomo_fbp_scale (360) / n;

      tomo_filter_response (t, n, 1.0, a);
      tomo_filter_response (t, n, scale, b);
      for (guint j = 0; j <= n / 2; j++)
        g_assert_cmpfloat_with_epsilon (b[j], a[j] * scale, 1e-15);
    }

  /* The back projector's response: width 50 pads to 100, scale π/(2·360)/100. */
  for (TomoFilterType t = 0; t < TOMO_N_FILTERS; t++)
    {
      guint padded = 0;
      g_autofree double *c = tomo_filter_fbp_response (t, 50, 360, &padded);

      g_assert_cmpuint (padded, ==, n);
      tomo_filter_response (t, n, tomo_fbp_scale (360) / n, b);
      g_assert_cmpmem (c, sizeof b, b, sizeof b);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tomo/filter/padded-width", test_padded_width);
  g_test_add_func ("/tomo/filter/ramp/definition", test_ramp_against_definition);
  g_test_add_func ("/tomo/filter/ramp/dc-nyquist", test_ramp_dc_and_nyquist);
  g_test_add_func ("/tomo/filter/ramp/threads", test_ramp_threads);
  g_test_add_func ("/tomo/filter/windows", test_windows);
  g_test_add_func ("/tomo/filter/scale", test_scale);

  return g_test_run ();
}
