/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-filter"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-filter.h"

static gboolean
is_7_smooth (guint64 n)
{
  static const guint primes[] = { 2, 3, 5, 7 };

  if (n == 0)
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (primes); i++)
    while (n % primes[i] == 0)
      n /= primes[i];
  return n == 1;
}

guint
tomo_filter_padded_width (guint width)
{
  guint64 n = MAX ((guint64) width * 2, 2);

  /* Even as well as 7-smooth: the GPU packs two real rows into one complex
   * transform and its R2C path wants an even length.  7-smooth numbers are
   * dense enough that this loop runs only a few steps. */
  while (!is_7_smooth (n) || n % 2 != 0)
    n += 2;
  g_return_val_if_fail (n <= G_MAXUINT, 0);
  return (guint) n;
}

double
tomo_fbp_scale (guint n_proj)
{
  g_return_val_if_fail (n_proj > 0, 0.0);
  return G_PI / (2.0 * n_proj);
}

double *
tomo_filter_fbp_response (TomoFilterType type,
                          guint          width,
                          guint          n_proj,
                          guint         *padded_width)
{
  guint padded = tomo_filter_padded_width (width);
  double *response = g_new (double, padded / 2 + 1);

  tomo_filter_response (type, padded, tomo_fbp_scale (n_proj) / padded, response);
  *padded_width = padded;
  return response;
}

/* w is the frequency as a fraction of Nyquist, in [0, 1]. */
static double
window (TomoFilterType type,
        double         w)
{
  switch (type)
    {
    case TOMO_FILTER_RAMLAK:
      return 1.0;
    case TOMO_FILTER_SHEPP_LOGAN:
      {
        double x = G_PI * w / 2.0;
        return x == 0.0 ? 1.0 : sin (x) / x;
      }
    case TOMO_FILTER_COSINE:
      return cos (G_PI * w / 2.0);
    case TOMO_FILTER_HAMMING:
      return 0.54 + 0.46 * cos (G_PI * w);
    case TOMO_FILTER_HANN:
      return 0.5 + 0.5 * cos (G_PI * w);
    case TOMO_FILTER_PARZEN:
      {
        double a = fabs (w);
        if (a <= 0.5)
          return 1.0 - 6.0 * a * a * (1.0 - a);
        return 2.0 * (1.0 - a) * (1.0 - a) * (1.0 - a);
      }
    case TOMO_N_FILTERS:
    default:
      g_return_val_if_reached (1.0);
    }
}

/* The DFT of the wrapped spatial ramp, n/2 + 1 coefficients: real and even,
 * summed directly in double (only odd taps are non-zero) with a cosine
 * table indexed by (j·d mod n), stepped by 2j as d steps by 2: exact to
 * rounding, no FFT plan, no FFTW lock.  n²/4 terms, a few ms at n = 4096. */
static double *
ramp_dft (guint n)
{
  guint n_coeffs = n / 2 + 1;
  g_autofree double *cos_table = g_new (double, n);
  double *ramp = g_new (double, n_coeffs);

  for (guint k = 0; k < n; k++)
    cos_table[k] = cos (2.0 * G_PI * k / n);

  for (guint j = 0; j < n_coeffs; j++)
    {
      guint64 step = ((guint64) 2 * j) % n, jk = j % n;
      double sum = 0.0;

      /* Taps at distance d = 1 … ⌊(n−1)/2⌋ appear twice (k = d and k = n − d);
       * for even n the tap at d = n/2 appears once. */
      for (guint d = 1; 2 * d < n; d += 2)
        {
          sum += cos_table[jk] / ((double) d * d);
          jk += step;
          if (jk >= n)
            jk -= n;
        }
      sum *= 2.0;
      if (n % 2 == 0 && (n / 2) % 2 == 1)
        {
          double d = n / 2;
          sum += cos_table[((guint64) j * (n / 2)) % n] / (d * d);
        }
      ramp[j] = 0.5 - 2.0 / (G_PI * G_PI) * sum;
    }
  return ramp;
}

/* The ramps of the last few lengths (the engine's rows, a stitched
 * geometry's, the centre finder's and the live slice's may differ and
 * alternate): the same for every filter type and scale, so a change of
 * filter, axis tilt or scan of a width seen lately reuses one.  Least
 * recently used goes first. */
#define RAMP_CACHE_SIZE 4
typedef struct
{
  guint n;          /* 0: empty */
  guint64 used;     /* stamp of the last use */
  double *ramp;
} RampEntry;
G_LOCK_DEFINE_STATIC (ramp_cache);
static RampEntry ramp_cache[RAMP_CACHE_SIZE];
static guint64 ramp_clock;

void
_tomo_filter_forget_ramp (void)
{
  G_LOCK (ramp_cache);
  for (guint i = 0; i < RAMP_CACHE_SIZE; i++)
    {
      g_clear_pointer (&ramp_cache[i].ramp, g_free);
      ramp_cache[i].n = 0;
      ramp_cache[i].used = 0;   /* empty entries are taken first */
    }
  G_UNLOCK (ramp_cache);
}

/* The ramp of length n into `out` (n/2 + 1 values): kept, or summed outside
 * the lock (callers of other lengths do not wait) and kept. */
static void
get_ramp (guint   n,
          double *out)
{
  gsize bytes = (n / 2 + 1) * sizeof (double);
  RampEntry *oldest = &ramp_cache[0];
  double *ramp;

  G_LOCK (ramp_cache);
  for (guint i = 0; i < RAMP_CACHE_SIZE; i++)
    if (ramp_cache[i].n == n)
      {
        ramp_cache[i].used = ++ramp_clock;
        memcpy (out, ramp_cache[i].ramp, bytes);
        G_UNLOCK (ramp_cache);
        return;
      }
  G_UNLOCK (ramp_cache);

  ramp = ramp_dft (n);
  memcpy (out, ramp, bytes);
  G_LOCK (ramp_cache);
  for (guint i = 0; i < RAMP_CACHE_SIZE; i++)
    {
      if (ramp_cache[i].n == n)   /* another thread was quicker */
        {
          oldest = NULL;
          break;
        }
      if (ramp_cache[i].used < oldest->used)
        oldest = &ramp_cache[i];
    }
  if (oldest != NULL)
    {
      g_free (oldest->ramp);
      *oldest = (RampEntry) { n, ++ramp_clock, g_steal_pointer (&ramp) };
    }
  G_UNLOCK (ramp_cache);
  g_free (ramp);
}

void
tomo_filter_response (TomoFilterType type,
                      guint          padded_width,
                      double         scale,
                      double        *response)
{
  guint n = padded_width;
  guint n_coeffs = n / 2 + 1;

  g_return_if_fail ((guint) type < TOMO_N_FILTERS);
  g_return_if_fail (padded_width >= 2);
  g_return_if_fail (response != NULL);

  get_ramp (n, response);
  for (guint j = 0; j < n_coeffs; j++)
    {
      double w = 2.0 * j / n;

      response[j] *= window (type, MIN (w, 1.0)) * scale;
    }
}
