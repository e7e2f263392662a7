/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The live parsers over mutated messages: valid packets of every kind,
 * truncated, extended, with bytes and fields overwritten at random (seeded,
 * reproducible).  Whatever a parser accepts must describe memory inside the
 * message and agree with the geometry; everything else is a counted drop. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-live-protocol.h"
#include "tomo-scan-private.h"

#define N_MUTATIONS 20000

static const TomoLiveContext context = { TRUE, 4, 6, 8, 1 << 20 };

static void
check_accepted (const TomoLiveMessage *m,
                const guint8          *data,
                gsize                  size,
                gboolean               json)
{
  switch (m->type)
    {
    case TOMO_LIVE_MSG_FRAME:
      g_assert_cmpuint (m->rows, ==, context.rows);
      g_assert_cmpuint (m->cols, ==, context.cols);
      g_assert_cmpuint (m->n_bytes, ==, (gsize) m->rows * m->cols * _tomo_dtype_size (m->dtype));
      g_assert_true (m->kind >= 0 && m->kind < 3);
      g_assert_cmpuint (m->id, <, TOMO_LIVE_MAX_ID);
      if (!json)
        g_assert_true (m->pixels >= data && m->pixels + m->n_bytes == data + size);
      if (m->has_angle)
        g_assert_true (isfinite (m->angle_deg));
      break;
    case TOMO_LIVE_MSG_PARALLEL_GEOMETRY:
      g_assert_cmpuint (m->n_projections, >, 0);
      g_assert_true (m->angles_rad + 4 * (gsize) m->n_projections == data + size);
      for (guint i = 0; i < m->n_projections; i++)
        {
          float a;
          memcpy (&a, m->angles_rad + 4 * i, 4);
          g_assert_true (isfinite (a));
        }
      break;
    case TOMO_LIVE_MSG_SCAN_SETTINGS:
      g_assert_true (size == 16 || size == 17);
      break;
    case TOMO_LIVE_MSG_GEOMETRY_SPEC:
      g_assert_cmpuint (size, ==, 32);
      break;
    default:
      g_assert_true (json);
    }
}

static GBytes *
valid_tomop (guint which)
{
  static const float vmin[3] = { -1, -1, -1 }, vmax[3] = { 1, 1, 1 };
  float angles[8], px[24];

  for (guint i = 0; i < 8; i++)
    angles[i] = i * 0.3f;
  for (guint i = 0; i < 24; i++)
    px[i] = i;
  switch (which % 5)
    {
    case 0: return tomo_live_encode_geometry_spec (1, vmin, vmax);
    case 1: return tomo_live_encode_scan_settings (1, 2, 3, -1);
    case 2: return tomo_live_encode_scan_settings (1, 2, 3, 1);
    case 3: return tomo_live_encode_parallel_beam (1, 4, 6, 8, angles, 8);
    default: return tomo_live_encode_projection (which % 3, which % 11, 4, 6, px, 24);
    }
}

static void
mutate (GRand      *rand,
        GByteArray *b)
{
  switch (g_rand_int_range (rand, 0, 5))
    {
    case 0:   /* truncate */
      g_byte_array_set_size (b, g_rand_int_range (rand, 0, b->len + 1));
      break;
    case 1:   /* extend */
      for (int n = g_rand_int_range (rand, 1, 9); n > 0; n--)
        {
          guint8 x = g_rand_int (rand);
          g_byte_array_append (b, &x, 1);
        }
      break;
    case 2:   /* flip bytes */
      for (int n = g_rand_int_range (rand, 1, 4); n > 0 && b->len > 0; n--)
        b->data[g_rand_int_range (rand, 0, b->len)] ^= 1 << g_rand_int_range (rand, 0, 8);
      break;
    case 3:   /* overwrite one 32-bit field with an extreme value */
      if (b->len >= 4)
        {
          static const guint32 extremes[] = { 0, 0xffffffff, 0x80000000, 0x7fffffff, 0x7fc00000 /* NaN */,
                                              0x7f800000 /* inf */, 24, 25, 1 << 30 };
          guint32 v = GUINT32_TO_LE (extremes[g_rand_int_range (rand, 0, G_N_ELEMENTS (extremes))]);
          guint at = 4 * g_rand_int_range (rand, 0, b->len / 4);
          memcpy (b->data + at, &v, 4);
        }
      break;
    default:  /* random bytes */
      for (guint i = 0; i < b->len; i++)
        b->data[i] = g_rand_int (rand);
      break;
    }
}

static void
test_tomop (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (20261123);
  guint n_accepted = 0, n_dropped[TOMO_LIVE_N_DROPS] = { 0 };

  for (guint i = 0; i < N_MUTATIONS; i++)
    {
      g_autoptr(GBytes) valid = valid_tomop (i);
      GByteArray *b = g_byte_array_new ();
      g_autofree guint8 *exact = NULL;
      TomoLiveMessage m;
      TomoLiveDrop drop = TOMO_LIVE_N_DROPS;
      g_autofree char *detail = NULL;
      gsize size;

      g_byte_array_append (b, g_bytes_get_data (valid, NULL), g_bytes_get_size (valid));
      if (i % 7 != 0)
        mutate (rand, b);
      /* An exact-size heap copy, so reading past it is caught (MALLOC_CHECK_, sanitizers). */
      size = b->len;
      exact = g_memdup2 (b->data, size);
      g_byte_array_unref (b);
      if (tomo_live_parse_tomop (exact, size, &context, &m, &drop, &detail))
        {
          n_accepted++;
          check_accepted (&m, exact, size, FALSE);
        }
      else
        {
          g_assert_cmpint (drop, <, TOMO_LIVE_N_DROPS);
          g_assert_nonnull (detail);
          n_dropped[drop]++;
        }
    }
  g_test_message ("TomoPackets: %u of %u accepted", n_accepted, N_MUTATIONS);
  g_assert_cmpuint (n_accepted, >=, N_MUTATIONS / 7);
  g_assert_cmpuint (n_dropped[TOMO_LIVE_DROP_SHORT], >, 0);
  g_assert_cmpuint (n_dropped[TOMO_LIVE_DROP_LONG], >, 0);
  g_assert_cmpuint (n_dropped[TOMO_LIVE_DROP_UNKNOWN], >, 0);
}

static void
test_json (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (11232026);
  static guint8 pixels[64];
  guint n_accepted = 0;

  for (guint i = 0; i < N_MUTATIONS; i++)
    {
      g_autofree char *header = tomo_live_encode_json_header (i % 3, i % 9, 4, 6, TOMO_DTYPE_UINT16, i % 2, i * 0.5);
      GByteArray *b = g_byte_array_new ();
      g_autofree guint8 *exact = NULL;
      const guint8 *parts[2];
      gsize sizes[2];
      TomoLiveMessage m;
      TomoLiveDrop drop;
      g_autofree char *detail = NULL;

      g_byte_array_append (b, (const guint8 *) header, strlen (header));
      if (i % 7 != 0)
        {
          /* Mostly printable damage, so the JSON parser sees near-misses. */
          if (g_rand_boolean (rand))
            mutate (rand, b);
          else if (b->len > 0)
            b->data[g_rand_int_range (rand, 0, b->len)] = "{}[]\":,0123456789-e.tfn "[g_rand_int_range (rand, 0, 25)];
        }
      sizes[0] = b->len;
      exact = g_memdup2 (b->data, MAX (b->len, 1));
      g_byte_array_unref (b);
      parts[0] = exact;
      parts[1] = pixels;
      sizes[1] = g_rand_int_range (rand, 0, 8) == 0 ? g_rand_int_range (rand, 0, 64) : 48;
      if (tomo_live_parse_json (parts, sizes, 2, &context, &m, &drop, &detail))
        {
          n_accepted++;
          check_accepted (&m, pixels, sizes[1], TRUE);
          g_assert_true (m.pixels == pixels && m.n_bytes == sizes[1]);
        }
      else
        g_assert_nonnull (detail);
    }
  g_test_message ("JSON: %u of %u accepted", n_accepted, N_MUTATIONS);
  g_assert_cmpuint (n_accepted, >=, N_MUTATIONS / 8);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/tomo/live/parse/tomop-mutations", test_tomop);
  g_test_add_func ("/tomo/live/parse/json-mutations", test_json);
  return g_test_run ();
}
