/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "tomo-fbp.h"
#include "tomo-filter.h"
#include "tomo-gpu-store.h"
#include "tomo-phantom.h"
#include "tomo-plane.h"
#include "tomo-preview.h"
#include "tomo-test-util.h"

/* The volume store and its plane kernels against the CPU reference
 * (tomo_plane_backproject_reference, double accumulation).  Tolerances, relative L2
 * over the plane: float store 2e-5 linear / 2e-3 nearest (nearest flips a
 * bin wherever float and double round t to different sides of a half);
 * half store 2e-3 (half's 11-bit mantissa). */

typedef struct
{
  TomoPhantomParams params;
  guint w, h, n;
  double *angles;
  float *sinos;    /* h × n × w */
  float *filtered; /* h × n × w */
  TomoPlaneSource src;
} Fixture;

static void
fixture_init (Fixture *fx,
              guint    width,
              guint    height,
              guint    n_proj)
{
  g_autoptr (TomoCpuFbp) fbp = NULL;
  g_autofree double *sino_d = g_new (double, (gsize) n_proj * width);
  gsize ns = (gsize) n_proj * width;

  fx->w = width;
  fx->h = height;
  fx->n = n_proj;
  tomo_test_phantom_params (&fx->params, width, height, n_proj);
  fx->angles = tomo_test_half_turn (n_proj);

  fbp = tomo_cpu_fbp_new (width, n_proj, fx->angles, TOMO_FILTER_SHEPP_LOGAN, TOMO_PAD_EDGE, 0);
  fx->sinos = g_new (float, height * ns);
  fx->filtered = g_new (float, height * ns);
  for (guint r = 0; r < height; r++)
    {
      tomo_phantom_sinogram (&fx->params, fx->angles, r, sino_d);
      for (gsize i = 0; i < ns; i++)
        fx->sinos[r * ns + i] = (float) sino_d[i];
      tomo_cpu_fbp_filter (fbp, fx->sinos + r * ns, fx->filtered + r * ns);
    }
  fx->src = (TomoPlaneSource) { width, n_proj, fx->angles, 0, height, fx->filtered };
}

static void
fixture_clear (Fixture *fx)
{
  g_free (fx->angles);
  g_free (fx->sinos);
  g_free (fx->filtered);
}

static TomoGpuStore *
store_new (Fixture              *fx,
           guint                 row_start,
           guint                 n_rows,
           TomoGpuStorePrecision precision)
{
  g_autoptr (GError) error = NULL;
  TomoGpuStore *store = tomo_gpu_store_new (0, fx->w, fx->n, fx->angles, row_start, n_rows,
                                            precision, 0, &error);

  g_assert_no_error (error);
  g_assert_nonnull (store);
  g_assert_true (tomo_gpu_store_put_filtered (store, row_start, n_rows,
                                              fx->filtered + (gsize) row_start * fx->n * fx->w,
                                              &error));
  g_assert_no_error (error);
  return store;
}

/* GPU plane against the CPU reference; returns the relative L2 error. */
static double
compare_plane (Fixture            *fx,
               TomoGpuStore       *store,
               const TomoPlane    *plane,
               TomoInterp          interp,
               TomoGpuPlaneKernel  kernel)
{
  g_autoptr (GError) error = NULL;
  gsize n = (gsize) plane->width * plane->height;
  g_autofree float *ref = g_new (float, n);
  g_autofree float *got = g_new (float, n);
  TomoPlaneSource src = fx->src;
  TomoGpuPlane gp;
  gboolean ok;

  src.row_start = tomo_gpu_store_get_row_start (store);
  src.n_rows = tomo_gpu_store_get_n_rows (store);
  src.filtered = fx->filtered + (gsize) src.row_start * fx->n * fx->w;
  tomo_plane_backproject_reference (&src, fx->params.center, interp, plane, 0, ref);

  G_STATIC_ASSERT (sizeof (TomoGpuPlane) == sizeof (TomoPlane));
  memcpy (&gp, plane, sizeof gp);
  ok = tomo_gpu_store_plane (store, &gp, fx->params.center, interp, kernel, &error);
  g_assert_no_error (error);   /* first: a failure shows its message */
  g_assert_true (ok);
  g_assert_true (tomo_gpu_store_download (store, got, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < n; i++)
    g_assert_true (isfinite (got[i]));
  return tomo_test_rel_l2 (got, ref, n);
}

/* compare_plane() with the environment variable `name` (a kernel's
 * variant) set to `value` for that plane; NULL leaves it unset. */
static double
compare_plane_env (Fixture            *fx,
                   TomoGpuStore       *store,
                   const TomoPlane    *plane,
                   TomoInterp          interp,
                   TomoGpuPlaneKernel  kernel,
                   const char         *name,
                   const char         *value)
{
  double e;

  if (value != NULL)
    g_setenv (name, value, TRUE);
  e = compare_plane (fx, store, plane, interp, kernel);
  g_unsetenv (name);
  return e;
}

static void
test_planes (gconstpointer data)
{
  TomoGpuStorePrecision precision = GPOINTER_TO_INT (data);
  Fixture fx;
  TomoGpuStore *store;
  TomoPlane planes[7];
  const char *names[7] = { "XZ", "YZ", "XY", "oblique 37°/20° ×0.8", "oblique 120°/−35° ×1.5",
                           "XZ partly above the rows", "XZ with rows tilted 20°" };

  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  fixture_init (&fx, 161, 11, 181);
  store = store_new (&fx, 0, fx.h, precision);
  g_assert_cmpint (tomo_gpu_store_get_precision (store), ==, precision);
  g_assert_cmpuint (tomo_gpu_store_get_bytes (store), ==,
                    (guint64) fx.h * fx.n * fx.w * (precision == TOMO_GPU_STORE_FLOAT ? 4 : 2));

  tomo_plane_init_xz (&planes[0], 70, 0, fx.w, 0, fx.h);
  tomo_plane_init_yz (&planes[1], 91, 0, fx.w, 0, fx.h);
  tomo_plane_init_xz (&planes[2], 0, 0, fx.w, 0, fx.w);
  planes[2].v[2] = 0.0;
  planes[2].v[1] = 1.0;
  planes[2].centre[1] = (fx.w - 1) / 2.0;
  planes[2].centre[2] = 6.0;    /* XY of row 6 */
  tomo_plane_init_oblique (&planes[3], (double[3]) { 80.0, 77.0, 5.0 }, 37.0, 20.0, 143, 13, 0.8);
  tomo_plane_init_oblique (&planes[4], (double[3]) { 70.0, 85.0, 5.0 }, 120.0, -35.0, 99, 7, 1.5);
  tomo_plane_init_xz (&planes[5], 60, 10, 131, 6, 9);
  planes[6] = planes[0];
  planes[6].u[0] = cos (20.0 * G_PI / 180.0);
  planes[6].u[2] = sin (20.0 * G_PI / 180.0);

  for (guint k = 0; k < G_N_ELEMENTS (planes); k++)
    for (TomoInterp in = TOMO_INTERP_NEAREST; in <= TOMO_INTERP_LINEAR; in++)
      for (TomoGpuPlaneKernel kern = TOMO_GPU_PLANE_AUTO; kern <= TOMO_GPU_PLANE_TILE; kern++)
        {
          double tol, e;

          if ((kern == TOMO_GPU_PLANE_CACHED || kern == TOMO_GPU_PLANE_TILE) && (k == 4 || k == 6))
            continue;   /* step 1.5 > 1 pixel, rows not horizontal: checked below */
          if (kern == TOMO_GPU_PLANE_ROWS && k == 6)
            continue;
          e = compare_plane (&fx, store, &planes[k], in, kern);
          tol = precision == TOMO_GPU_STORE_HALF ? 2e-3 : in == TOMO_INTERP_LINEAR ? 2e-5 : 2e-3;
          g_test_message ("%s store, %s, %s, %s kernel (ran %s): relative L2 %.3g (tolerance %g)",
                          tomo_gpu_store_precision_to_string (precision), names[k],
                          tomo_interp_to_string (in), tomo_gpu_plane_kernel_to_string (kern),
                          tomo_gpu_plane_kernel_to_string (tomo_gpu_store_get_last_kernel (store)),
                          e, tol);
          g_assert_cmpfloat (e, <=, tol);
          /* auto: the tile kernel for vertical planes on whole rows of
           * 16-byte rows (not here: 161 columns), else rows or global. */
          if (kern == TOMO_GPU_PLANE_AUTO)
            g_assert_cmpint (tomo_gpu_store_get_last_kernel (store), ==,
                             k == 4 || k == 6 ? TOMO_GPU_PLANE_GLOBAL : TOMO_GPU_PLANE_ROWS);
        }

  /* The cached kernel refuses planes it cannot hold; the store survives. */
  {
    g_autoptr (GError) error = NULL;
    TomoGpuPlane gp;

    memcpy (&gp, &planes[4], sizeof gp);
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1,
                                          TOMO_GPU_PLANE_CACHED, &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
    g_clear_error (&error);
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1,
                                          TOMO_GPU_PLANE_TILE, &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
    g_clear_error (&error);
    memcpy (&gp, &planes[6], sizeof gp);
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1,
                                          TOMO_GPU_PLANE_ROWS, &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
    g_clear_error (&error);
    /* 161 columns: rows of 644 or 322 bytes, no texture pitch. */
    memcpy (&gp, &planes[0], sizeof gp);
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1,
                                          TOMO_GPU_PLANE_TEXTURE, &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
    g_test_message ("%s", error->message);
    g_clear_error (&error);
    gp.centre[0] = NAN;
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1,
                                          TOMO_GPU_PLANE_AUTO, &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  }
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* 128 columns (16-byte copies in the tile kernel, rows a texture can
 * take): the tile and texture kernels against the reference on XZ, YZ, XY,
 * a plane turned about the vertical axis, oblique planes (one tilted, so
 * between rows) and a tile cut by the rows' end; tolerances as above, the
 * texture's 2e-2 (its hardware weights have 8 fractional bits). Then the
 * tile kernel's XZ and YZ planes against the columns of its own XY slices
 * of every row, and oblique planes at 0° / 90° against XZ / YZ. */
static void
test_tile (gconstpointer data)
{
  TomoGpuStorePrecision precision = GPOINTER_TO_INT (data);
  Fixture fx;
  TomoGpuStore *store;
  TomoPlane planes[8], xz, yz, ob;
  const char *names[8] = { "XZ", "YZ", "XY", "turned 25°", "oblique 37°/20°",
                           "oblique 200°/0° ×0.7", "XZ rows 5…", "turned 25° ×0.2" };
  const double tol = precision == TOMO_GPU_STORE_HALF ? 2e-3 : 2e-5;
  g_autoptr (GError) error = NULL;
  g_autofree float *xy = NULL, *vert = NULL, *col = NULL, *o = NULL;
  TomoGpuPlane gp;
  double worst = 0;

  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  fixture_init (&fx, 128, 21, 150);
  store = store_new (&fx, 0, fx.h, precision);
  tomo_plane_init_xz (&planes[0], 70.5, 0, fx.w, 0, fx.h);
  tomo_plane_init_yz (&planes[1], 50, 3, 120, 0, fx.h);
  planes[2] = (TomoPlane) { { 63.5, 63.5, 7.0 }, { 1, 0, 0 }, { 0, 1, 0 }, fx.w, fx.w };
  planes[3] = planes[0];
  planes[3].u[0] = cos (25.0 * G_PI / 180.0);
  planes[3].u[1] = sin (25.0 * G_PI / 180.0);
  planes[3].width = 300;   /* two tiles across, the second partly off the slice */
  tomo_plane_init_oblique (&planes[4], (double[3]) { 60.0, 70.0, 10.0 }, 37.0, 20.0, 140, 19, 1.0);
  tomo_plane_init_oblique (&planes[5], (double[3]) { 64.0, 60.0, 9.5 }, 200.0, 0.0, 97, 13, 0.7);
  tomo_plane_init_xz (&planes[6], 30, 0, fx.w, 5, 20);   /* rows 5 … 24 of 0 … 20 */
  /* 600 samples 0.2 px apart, inside the slice: two tiles of the wide path. */
  planes[7] = planes[3];
  planes[7].u[0] *= 0.2;
  planes[7].u[1] *= 0.2;
  planes[7].width = 600;

  /* Planes 0, 1, 3, 6 and 7 are vertical on whole rows: auto (the wide
   * path with bulk copies), the ring path and the pair path are each
   * checked. */
  static const char *const variants[] = { NULL, "ring", "pairs" };

  for (guint k = 0; k < G_N_ELEMENTS (planes); k++)
    for (TomoInterp in = TOMO_INTERP_NEAREST; in <= TOMO_INTERP_LINEAR; in++)
      {
        const gboolean vertical = k == 0 || k == 1 || k == 3 || k == 6 || k == 7;
        double e_tex = compare_plane (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TEXTURE);
        double t = in == TOMO_INTERP_NEAREST ? 2e-3 : tol;
        double e_tex2;

        /* The texture kernel's blocks of 16 × 16 (above: 32 × 8, a warp on
         * one plane row). */
        e_tex2 = compare_plane_env (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TEXTURE,
                                    "TOMO_PLANE_TEX_BLOCK", "16x16");
        g_test_message ("%s store, %s, %s: relative L2 texture, 16 × 16 blocks %.3g (2e-2)",
                        tomo_gpu_store_precision_to_string (precision), names[k],
                        tomo_interp_to_string (in), e_tex2);
        g_assert_cmpfloat (e_tex2, <=, 2e-2);

        for (guint v = 0; v < (vertical ? G_N_ELEMENTS (variants) : 1); v++)
          {
            double e_tile = compare_plane_env (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TILE,
                                               "TOMO_PLANE_TILE_PATH", variants[v]);

            g_test_message ("%s store, %s, %s: relative L2 tile (%s) %.3g (tolerance %g), "
                            "texture %.3g (2e-2)",
                            tomo_gpu_store_precision_to_string (precision), names[k],
                            tomo_interp_to_string (in),
                            variants[v] ? variants[v] : vertical ? "bulk" : "pairs", e_tile, t,
                            e_tex);
            g_assert_cmpfloat (e_tile, <=, t);
          }
        g_assert_cmpfloat (e_tex, <=, 2e-2);
        compare_plane (&fx, store, &planes[k], in, TOMO_GPU_PLANE_AUTO);
        g_assert_cmpint (tomo_gpu_store_get_last_kernel (store), ==,
                         vertical ? TOMO_GPU_PLANE_TILE : TOMO_GPU_PLANE_TILT);
      }

  /* XZ at iy = 70 and YZ at ix = 41 against the columns of XY slices. */
  xy = g_new (float, (gsize) fx.h * fx.w * fx.w);
  for (guint r = 0; r < fx.h; r++)
    {
      TomoPlane p = { { 63.5, 63.5, r }, { 1, 0, 0 }, { 0, 1, 0 }, fx.w, fx.w };

      memcpy (&gp, &p, sizeof gp);
      g_assert_true (tomo_gpu_store_plane (store, &gp, fx.params.center, 1, TOMO_GPU_PLANE_TILE,
                                           &error));
      g_assert_true (tomo_gpu_store_download (store, xy + (gsize) r * fx.w * fx.w, &error));
    }
  vert = g_new (float, (gsize) fx.w * fx.h);
  col = g_new (float, (gsize) fx.w * fx.h);
  for (guint kind = 0; kind < 2; kind++)
    {
      TomoPlane p;

      if (kind == 0)
        tomo_plane_init_xz (&p, 70, 0, fx.w, 0, fx.h);
      else
        tomo_plane_init_yz (&p, 41, 0, fx.w, 0, fx.h);
      memcpy (&gp, &p, sizeof gp);
      g_assert_true (tomo_gpu_store_plane (store, &gp, fx.params.center, 1, TOMO_GPU_PLANE_TILE,
                                           &error));
      g_assert_true (tomo_gpu_store_download (store, vert, &error));
      for (guint r = 0; r < fx.h; r++)
        for (guint i = 0; i < fx.w; i++)
          col[r * fx.w + i] = kind == 0 ? xy[((gsize) r * fx.w + 70) * fx.w + i]
                                        : xy[((gsize) r * fx.w + i) * fx.w + 41];
      worst = MAX (worst, tomo_test_rel_l2 (vert, col, (gsize) fx.w * fx.h));
    }
  g_test_message ("XZ / YZ against the XY stack's columns: relative L2 %.3g (tolerance %g)",
                  worst, tol);
  g_assert_cmpfloat (worst, <=, tol);

  /* Oblique at azimuth 0°, tilt 0° is XZ; at 90° it is YZ (through the
   * same centre). */
  o = g_new (float, (gsize) fx.w * fx.h);
  for (guint kind = 0; kind < 2; kind++)
    {
      double centre[3] = { 63.5, kind == 0 ? 70.0 : 63.5, (fx.h - 1) / 2.0 };

      if (kind == 0)
        tomo_plane_init_xz (&xz, 70, 0, fx.w, 0, fx.h);
      else
        {
          tomo_plane_init_yz (&yz, 63.5, 0, fx.w, 0, fx.h);
          xz = yz;
        }
      tomo_plane_init_oblique (&ob, centre, kind == 0 ? 0.0 : 90.0, 0.0, fx.w, fx.h, 1.0);
      memcpy (&gp, &xz, sizeof gp);
      g_assert_true (tomo_gpu_store_plane (store, &gp, fx.params.center, 1, TOMO_GPU_PLANE_AUTO,
                                           &error));
      g_assert_true (tomo_gpu_store_download (store, vert, &error));
      memcpy (&gp, &ob, sizeof gp);
      g_assert_true (tomo_gpu_store_plane (store, &gp, fx.params.center, 1, TOMO_GPU_PLANE_AUTO,
                                           &error));
      g_assert_true (tomo_gpu_store_download (store, o, &error));
      g_test_message ("oblique %s° against %s: relative L2 %.3g", kind == 0 ? "0" : "90",
                      kind == 0 ? "XZ" : "YZ", tomo_test_rel_l2 (o, vert, (gsize) fx.w * fx.h));
      g_assert_cmpfloat (tomo_test_rel_l2 (o, vert, (gsize) fx.w * fx.h), <=, tol);
    }
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* The tilt kernel against the reference, nearest and linear, tolerances
 * as above.  data: 0 — 128 columns (16-byte copies), 21 rows, all held:
 * oblique planes (tilt 15°, 40° with every row between stored rows, a
 * negative tilt at 0.9 px, tilted past the vertical so v_z < 0, one two
 * tiles wide running off the slice and above the rows held), XY on a row
 * and between rows, XZ half a row up (vertical, between rows), an odd
 * plane width with a short last row tile; auto takes the tilt kernel for
 * all of them.  1 — the same store holding rows 3 … 14 only: the tilted
 * planes run past both ends.  2 — 161 columns (single-bin copies; auto
 * keeps the rows kernel there).  3 — as 0, four of the planes only (for
 * the sanitizers: the 30°/15° planes on the packed path, 120°/110° on
 * interleaved pairs of up to 5 stored rows with `il`, XY at z 7.4 16 rows
 * high, where auto reads interleaved pairs).  Each plane runs `auto` and the raw path
 * (TOMO_PLANE_TILT_PATH=raw) and, from half stores of 16-byte rows with
 * linear interpolation, every split of the texture+ALU hybrid. */
static void
run_tilt (TomoGpuStorePrecision precision,
          guint                 kind)
{
  const double tol = precision == TOMO_GPU_STORE_HALF ? 2e-3 : 2e-5;
  const char *names[9] = { "oblique 30°/15°", "oblique 37°/40°", "oblique 200°/−35° ×0.9",
                           "oblique 120°/110°", "oblique 30°/15° wide, past the rows",
                           "XY on row 7", "XY at z 7.4", "XZ at z + 0.5",
                           "oblique 30°/15°, 201 × 13" };
  TomoPlane planes[9];
  Fixture fx;
  TomoGpuStore *store;
  guint n = kind == 2 ? 3 : G_N_ELEMENTS (planes);
  double zc;

  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  if (kind == 2)
    fixture_init (&fx, 161, 11, 181);
  else
    fixture_init (&fx, 128, 21, 150);
  store = kind == 1 ? store_new (&fx, 3, 12, precision) : store_new (&fx, 0, fx.h, precision);
  zc = (fx.h - 1) / 2.0;
  {
    const double c = (fx.w - 1) / 2.0;

    tomo_plane_init_oblique (&planes[0], (double[3]) { c, c, zc }, 30.0, 15.0, fx.w, fx.h, 1.0);
    tomo_plane_init_oblique (&planes[1], (double[3]) { c + 3, c - 2, zc - 0.7 }, 37.0, 40.0,
                             fx.w, fx.h, 1.0);
    tomo_plane_init_oblique (&planes[2], (double[3]) { c - 4, c + 5, zc + 0.2 }, 200.0, -35.0,
                             fx.w - 9, fx.h - 2, 0.9);
    tomo_plane_init_oblique (&planes[3], (double[3]) { c, c + 1, zc }, 120.0, 110.0, fx.w, 17,
                             1.0);
    tomo_plane_init_oblique (&planes[4], (double[3]) { c + 20, c, zc + 7 }, 30.0, 15.0, 300, 25,
                             1.0);
    planes[5] = (TomoPlane) { { c, c, 7.0 }, { 1, 0, 0 }, { 0, 1, 0 }, fx.w, fx.w };
    planes[6] = planes[5];
    planes[6].centre[2] = 7.4;
    tomo_plane_init_xz (&planes[7], 70, 0, fx.w, 0, fx.h);
    planes[7].centre[2] += 0.5;
    tomo_plane_init_oblique (&planes[8], (double[3]) { c, c - 3, zc - 0.25 }, 30.0, 15.0, 201, 13,
                             1.0);
  }
  if (kind == 2)
    {
      planes[1] = planes[5];       /* 161 columns: XY on a row, XY between rows */
      planes[1].centre[2] = 6.0;
      planes[2] = planes[6];
      names[1] = "XY on row 6";
      names[2] = "XY at z 7.4";
    }
  if (kind == 3)
    planes[6].height = 16;

  for (guint k = 0; k < n; k++)
    for (TomoInterp in = TOMO_INTERP_NEAREST; in <= TOMO_INTERP_LINEAR; in++)
      {
        const double t = in == TOMO_INTERP_NEAREST ? 2e-3 : tol;
        /* v: the default path (auto: the packed sums where they apply —
         * from interleaved pairs where a tile needs at most 3 stored rows —
         * else the raw path; no texture share); the raw path; the packed half2
         * sums (TOMO_PLANE_TILT_PATH=pack: half store of 16-byte rows,
         * linear, plane rows between stored rows; elsewhere the raw
         * path, to the bit); the packed sums from interleaved pairs
         * (TOMO_PLANE_TILT_PATH=il: the same half2 arithmetic from
         * another layout in shared memory, so the packed sums' result to
         * the bit, where |v_z| < 3/7 from the pairs and above from the
         * packed path; il4: four blocks an SM where |v_z| < 2/7). */
        static const char *const paths[] = { NULL, "raw", "pack", "il", "il4" };
        static const char *const labels[] = { "", ", raw path", ", packed", ", interleaved pairs",
                                              ", interleaved pairs, 4 blocks an SM" };
        const double zr = planes[k].centre[2] - (planes[k].height - 1) / 2.0 * planes[k].v[2] -
                          tomo_gpu_store_get_row_start (store);
        const gboolean packs = precision == TOMO_GPU_STORE_HALF && kind != 2 &&
                               in == TOMO_INTERP_LINEAR &&
                               !(zr == rint (zr) && planes[k].v[2] == rint (planes[k].v[2]));
        double e_raw0 = 0.0, e_pack0 = 0.0;

        if (kind == 3 && k != 0 && k != 3 && k != 4 && k != 6)
          continue;
        for (guint v = 0; v < G_N_ELEMENTS (paths); v++)
          {
            double e = compare_plane_env (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TILT,
                                          "TOMO_PLANE_TILT_PATH", paths[v]);

            g_test_message ("%s store, %u columns, rows %u … %u, %s, %s%s: relative L2 tilt "
                            "%.3g (tolerance %g), %.3f ms",
                            tomo_gpu_store_precision_to_string (precision), fx.w,
                            tomo_gpu_store_get_row_start (store),
                            tomo_gpu_store_get_row_start (store) +
                              tomo_gpu_store_get_n_rows (store) - 1,
                            names[k], tomo_interp_to_string (in), labels[v], e, t,
                            tomo_gpu_store_get_plane_ms (store));
            g_assert_cmpint (tomo_gpu_store_get_last_kernel (store), ==, TOMO_GPU_PLANE_TILT);
            g_assert_cmpfloat (e, <=, t);
            if (v == 1)
              e_raw0 = e;
            if (v == 2)
              e_pack0 = e;
            /* The packed sums ran where they apply (their half roundings
             * differ from the raw path's float sums), the raw path
             * elsewhere. */
            if (v == 2 && packs)
              g_assert_cmpfloat (e, !=, e_raw0);
            else if (v == 2)
              g_assert_cmpfloat (e, ==, e_raw0);
            if (v >= 3)
              g_assert_cmpfloat (e, ==, packs ? e_pack0 : e_raw0);
          }

        /* The hybrid (TOMO_PLANE_TILT_TEX=G:T, T of every G + T
         * projections through the texture units, on request only):
         * linear, half store of 16-byte rows, plane rows between stored
         * rows.  Tolerance as the half store's (its texture share's 8-bit
         * weights: the texture kernel alone is within 5e-4 on these
         * planes); it must differ from the raw path, which it falls back
         * to elsewhere. */
        if (precision == TOMO_GPU_STORE_HALF && kind != 2 && in == TOMO_INTERP_LINEAR)
          {
            static const char *const splits[] = { "4:1", "4:2", "4:3", "4:4", "3:1", "2:1",
                                                  "2:2", "2:1L", "4:1L" };
            const double z0 = planes[k].centre[2] - (planes[k].height - 1) / 2.0 * planes[k].v[2] -
                              tomo_gpu_store_get_row_start (store);
            const gboolean two = !(z0 == rint (z0) && planes[k].v[2] == rint (planes[k].v[2]));
            double e_raw, e_auto;

            e_auto = compare_plane (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TILT);
            g_setenv ("TOMO_PLANE_TILT_PATH", "raw", TRUE);
            e_raw = compare_plane (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TILT);
            /* auto: the packed sums where they apply. */
            if (two)
              g_assert_cmpfloat (e_auto, !=, e_raw);
            else
              g_assert_cmpfloat (e_auto, ==, e_raw);
            for (guint v = 0; v < G_N_ELEMENTS (splits); v++)
              {
                double e = compare_plane_env (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TILT,
                                              "TOMO_PLANE_TILT_TEX", splits[v]);

                g_test_message ("%s store, rows %u … %u, %s, hybrid %s: relative L2 %.3g "
                                "(tolerance %g; raw path %.3g), %.3f ms",
                                tomo_gpu_store_precision_to_string (precision),
                                tomo_gpu_store_get_row_start (store),
                                tomo_gpu_store_get_row_start (store) +
                                  tomo_gpu_store_get_n_rows (store) - 1,
                                names[k], splits[v], e, t, e_raw,
                                tomo_gpu_store_get_plane_ms (store));
                g_assert_cmpfloat (e, <=, t);
                if (two)
                  g_assert_cmpfloat (e, !=, e_raw);
                else
                  g_assert_cmpfloat (e, ==, e_raw);
              }
            /* The hybrid 4:1L with the packed sums. */
            {
              double e, e_h, e_il;

              g_setenv ("TOMO_PLANE_TILT_TEX", "4:1L", TRUE);
              e_h = compare_plane (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TILT);
              g_setenv ("TOMO_PLANE_TILT_PATH", "pack", TRUE);
              e = compare_plane (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TILT);
              g_unsetenv ("TOMO_PLANE_TILT_TEX");
              g_test_message ("%s store, rows %u … %u, %s, packed + hybrid 4:1L: relative L2 "
                              "%.3g (tolerance %g; raw path %.3g, hybrid 4:1L %.3g), %.3f ms",
                              tomo_gpu_store_precision_to_string (precision),
                              tomo_gpu_store_get_row_start (store),
                              tomo_gpu_store_get_row_start (store) +
                                tomo_gpu_store_get_n_rows (store) - 1,
                              names[k], e, t, e_raw, e_h, tomo_gpu_store_get_plane_ms (store));
              g_assert_cmpfloat (e, <=, t);
              if (two)
                g_assert_cmpfloat (e, !=, e_h);
              else
                g_assert_cmpfloat (e, ==, e_raw);

              /* From interleaved pairs (three and four blocks an SM):
               * the same sums, to the bit. */
              for (guint b = 3; b <= 4; b++)
                {
                  g_setenv ("TOMO_PLANE_TILT_TEX", "4:1L", TRUE);
                  g_setenv ("TOMO_PLANE_TILT_PATH", b == 3 ? "il" : "il4", TRUE);
                  e_il = compare_plane (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TILT);
                  g_unsetenv ("TOMO_PLANE_TILT_TEX");
                  g_test_message ("%s store, rows %u … %u, %s, interleaved pairs (%u blocks an "
                                  "SM) + hybrid 4:1L: relative L2 %.3g (packed + 4:1L %.3g), "
                                  "%.3f ms",
                                  tomo_gpu_store_precision_to_string (precision),
                                  tomo_gpu_store_get_row_start (store),
                                  tomo_gpu_store_get_row_start (store) +
                                    tomo_gpu_store_get_n_rows (store) - 1,
                                  names[k], b, e_il, e, tomo_gpu_store_get_plane_ms (store));
                  g_assert_cmpfloat (e_il, ==, e);
                }
            }
            g_unsetenv ("TOMO_PLANE_TILT_PATH");
          }
        compare_plane (&fx, store, &planes[k], in, TOMO_GPU_PLANE_AUTO);
        g_assert_cmpint (tomo_gpu_store_get_last_kernel (store), ==,
                         kind == 2 ? TOMO_GPU_PLANE_ROWS : TOMO_GPU_PLANE_TILT);
      }

  /* Refused: a column step over one pixel, rows not horizontal. */
  {
    g_autoptr (GError) error = NULL;
    TomoGpuPlane gp;

    tomo_plane_init_oblique (&planes[0], (double[3]) { 60, 60, zc }, 30.0, 15.0, 50, 9, 1.5);
    planes[0].u[0] = 0.6;
    planes[0].u[1] = 0.0;
    memcpy (&gp, &planes[0], sizeof gp);
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1, TOMO_GPU_PLANE_TILT,
                                          &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
    g_test_message ("%s", error->message);
    g_clear_error (&error);
    gp.v[0] = gp.v[1] = 0.0;
    gp.v[2] = 1.0;
    gp.u[2] = 0.1;
    g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1, TOMO_GPU_PLANE_TILT,
                                          &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  }
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* Sinograms of 144 columns × 151 projections of half bins (43 488 bytes, an
 * odd multiple of 32) start at addresses no texture may start at: the
 * texture kernel says so, and the tilt kernel, whose texture+ALU hybrid
 * wants a texture over each stored row, runs without it (its packed
 * sums), on every call. */
static void
test_tex_unaligned (void)
{
  g_autoptr (GError) error = NULL;
  Fixture fx;
  TomoGpuStore *store;
  TomoPlane ob;
  TomoGpuPlane gp;

  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  fixture_init (&fx, 144, 12, 151);
  store = store_new (&fx, 0, fx.h, TOMO_GPU_STORE_HALF);
  tomo_plane_init_oblique (&ob, (double[3]) { 70.0, 75.0, 5.5 }, 37.0, 20.0, 150, 9, 1.0);
  memcpy (&gp, &ob, sizeof gp);
  g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, TOMO_INTERP_LINEAR,
                                        TOMO_GPU_PLANE_TEXTURE, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "sinograms of a multiple of"));
  g_test_message ("%s", error->message);
  for (guint run = 0; run < 2; run++)
    {
      double e = compare_plane (&fx, store, &ob, TOMO_INTERP_LINEAR, TOMO_GPU_PLANE_TILT);

      g_test_message ("run %u: oblique 37°/20°, tilt kernel on unaligned sinograms: relative "
                      "L2 %.3g (tolerance 2e-3)", run, e);
      g_assert_cmpfloat (e, <=, 2e-3);
      g_assert_cmpint (tomo_gpu_store_get_last_kernel (store), ==, TOMO_GPU_PLANE_TILT);
    }
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* data: TILT_CASE (precision, kind). */
#define TILT_CASE(precision, kind) GINT_TO_POINTER ((precision) | (kind) << 4)

static void
test_tilt (gconstpointer data)
{
  run_tilt (GPOINTER_TO_INT (data) & 0xf, GPOINTER_TO_INT (data) >> 4);
}

/* The tile kernel's wide path (bulk copies, an mbarrier per ring slot) on
 * a small store, both precisions: small enough for compute-sanitizer's
 * racecheck and synccheck (tests/run-on-gpu.sh) yet every part of the ring
 * — 40 projections are 10 stages of the half store and 20 of the float
 * store, so each of the 3 slots completes phases of both parities; windows
 * partly off the detector (zeroed units); 9 plane rows, so the second
 * block's rows 1…7 copy nothing; a plane of 600 samples, two tiles, the
 * second partial. */
static void
test_tile_wide_small (void)
{
  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  for (TomoGpuStorePrecision precision = TOMO_GPU_STORE_FLOAT; precision <= TOMO_GPU_STORE_HALF;
       precision++)
    {
      const double tol = precision == TOMO_GPU_STORE_HALF ? 2e-3 : 2e-5;
      Fixture fx;
      TomoGpuStore *store;
      TomoPlane planes[2];

      fixture_init (&fx, 128, 9, 40);
      store = store_new (&fx, 0, fx.h, precision);
      tomo_plane_init_xz (&planes[0], 98, 0, fx.w, 0, fx.h);   /* corners off the detector */
      tomo_plane_init_oblique (&planes[1], (double[3]) { 63.5, 63.5, 4.0 }, 25.0, 0.0, 600,
                               fx.h, 0.2);
      for (guint k = 0; k < G_N_ELEMENTS (planes); k++)
        for (TomoInterp in = TOMO_INTERP_NEAREST; in <= TOMO_INTERP_LINEAR; in++)
          {
            const double t = in == TOMO_INTERP_NEAREST ? 2e-3 : tol;
            double e = compare_plane (&fx, store, &planes[k], in, TOMO_GPU_PLANE_TILE);

            g_test_message ("%s store, plane %u (%u × %u), %s, bulk (auto): relative L2 %.3g "
                            "(tolerance %g)",
                            tomo_gpu_store_precision_to_string (precision), k, planes[k].width,
                            planes[k].height, tomo_interp_to_string (in), e, t);
            g_assert_cmpfloat (e, <=, t);
            g_assert_cmpint (tomo_gpu_store_get_last_kernel (store), ==, TOMO_GPU_PLANE_TILE);
          }
      tomo_gpu_store_free (store);
      fixture_clear (&fx);
    }
}

/* The preview volume of the store against tomo_preview_backproject() on the
 * same filtered rows: float store ≤ 1e-4, half ≤ 3e-3 (relative L2; the
 * H100 gave ≤ 7.7e-7 and ≤ 7.3e-5, nearest and linear); 161
 * columns, 181 projections, 11 rows: 40 × 30 × 4 voxels (bins of 4,
 * every 2nd projection, slabs of 2 or 3 rows) and 16³ (bins of 10, every
 * 5th, rows shared by slabs); a new centre and a refill both change it. */
static void
test_preview (gconstpointer data)
{
  TomoGpuStorePrecision precision = GPOINTER_TO_INT (data);
  static const guint sizes[2][3] = { { 40, 30, 4 }, { 16, 16, 16 } };
  const double tol = precision == TOMO_GPU_STORE_HALF ? 3e-3 : 1e-4;
  g_autoptr (GError) error = NULL;
  Fixture fx;
  TomoGpuStore *store;

  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  fixture_init (&fx, 161, 11, 181);
  store = store_new (&fx, 0, fx.h, precision);
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (guint run = 0; run < 2; run++)
      for (int interp = 0; interp <= 1; interp++)
        {
          const guint nx = sizes[s][0], ny = sizes[s][1], nz = sizes[s][2];
          const double center = fx.params.center + 0.37 * run;
          g_autofree float *got = g_new (float, nx * ny * nz);
          g_autofree float *ref = g_new (float, nx * ny * nz);
          TomoPreviewGeometry geo;
          TomoGpuPreview pv;
          double e;

          tomo_preview_geometry_init (&geo, fx.w, fx.n, nx, ny, nz);
          pv = (TomoGpuPreview) { geo.nx, geo.ny, geo.nz, geo.bin, geo.step };
          g_assert_true (tomo_gpu_store_preview (store, &pv, center, interp, &error));
          g_assert_no_error (error);
          g_assert_true (tomo_gpu_store_download (store, got, &error));
          tomo_preview_backproject (&fx.src, &geo, center,
                                    interp ? TOMO_INTERP_LINEAR : TOMO_INTERP_NEAREST, 0, ref);
          e = tomo_test_rel_l2 (got, ref, nx * ny * nz);
          g_test_message ("%s store, preview %u × %u × %u (bin %u, step %u), %s, centre %.2f: "
                          "relative L2 %.3g (tolerance %g), kernel %.3f ms, copy %.3f ms",
                          tomo_gpu_store_precision_to_string (precision), nx, ny, nz, geo.bin,
                          geo.step, interp ? "linear" : "nearest", center, e,
                          tol, tomo_gpu_store_get_plane_ms (store),
                          tomo_gpu_store_get_preview_prep_ms (store));
          g_assert_cmpfloat (e, <=, tol);
        }

  /* Rows put again (here: row 5 zeroed) invalidate the copy. */
  {
    g_autofree float *zero = g_new0 (float, (gsize) fx.n * fx.w);
    g_autofree float *got = g_new (float, 16 * 16 * 16);
    g_autofree float *ref = g_new (float, 16 * 16 * 16);
    TomoPreviewGeometry geo;
    TomoGpuPreview pv;

    memcpy (fx.filtered + (gsize) 5 * fx.n * fx.w, zero, (gsize) fx.n * fx.w * sizeof (float));
    g_assert_true (tomo_gpu_store_put_filtered (store, 5, 1, zero, &error));
    tomo_preview_geometry_init (&geo, fx.w, fx.n, 16, 16, 16);
    pv = (TomoGpuPreview) { geo.nx, geo.ny, geo.nz, geo.bin, geo.step };
    g_assert_true (tomo_gpu_store_preview (store, &pv, fx.params.center, 1, &error));
    g_assert_true (tomo_gpu_store_download (store, got, &error));
    tomo_preview_backproject (&fx.src, &geo, fx.params.center, TOMO_INTERP_LINEAR, 0, ref);
    g_assert_cmpfloat (tomo_test_rel_l2 (got, ref, 16 * 16 * 16), <=, tol);

    pv.step = 0;
    g_assert_false (tomo_gpu_store_preview (store, &pv, fx.params.center, 1, &error));
    g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  }
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* A store of rows [3, 9): planes against the reference of the same rows,
 * rows outside are 0. */
static void
test_row_range (void)
{
  Fixture fx;
  TomoGpuStore *store;
  TomoPlane plane;

  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  fixture_init (&fx, 100, 12, 120);
  store = store_new (&fx, 3, 6, TOMO_GPU_STORE_FLOAT);
  tomo_plane_init_yz (&plane, 40, 5, 83, 0, fx.h);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR,
                                    TOMO_GPU_PLANE_CACHED), <=, 2e-5);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR,
                                    TOMO_GPU_PLANE_GLOBAL), <=, 2e-5);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR,
                                    TOMO_GPU_PLANE_ROWS), <=, 2e-5);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR,
                                    TOMO_GPU_PLANE_TILE), <=, 2e-5);
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* Rows put one call at a time: a row put again counts once, so a store
 * with a row never put refuses planes, naming how many it holds; the last
 * row put makes it whole. */
static void
test_put_counts_rows (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *holds = NULL;
  Fixture fx;
  TomoGpuStore *store;
  TomoPlane plane;
  TomoGpuPlane gp;

  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  fixture_init (&fx, 64, 6, 90);
  store = tomo_gpu_store_new (0, fx.w, fx.n, fx.angles, 0, fx.h, TOMO_GPU_STORE_FLOAT, 0, &error);
  g_assert_no_error (error);
  for (guint k = 0; k < 2; k++)
    g_assert_true (tomo_gpu_store_put_filtered (store, 0, 1, fx.filtered, &error));
  g_assert_cmpuint (tomo_gpu_store_get_n_filled (store), ==, 1);
  g_assert_true (tomo_gpu_store_put_filtered (store, 0, fx.h - 1, fx.filtered, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (tomo_gpu_store_get_n_filled (store), ==, fx.h - 1);

  tomo_plane_init_yz (&plane, 30, 2, 60, 0, fx.h);
  memcpy (&gp, &plane, sizeof gp);
  g_assert_false (tomo_gpu_store_plane (store, &gp, fx.params.center, 1, TOMO_GPU_PLANE_AUTO,
                                        &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  holds = g_strdup_printf ("holds %u of its %u rows", fx.h - 1, fx.h);
  g_assert_nonnull (strstr (error->message, holds));
  g_clear_error (&error);

  g_assert_true (tomo_gpu_store_put_filtered (store, fx.h - 1, 1,
                                              fx.filtered + (gsize) (fx.h - 1) * fx.n * fx.w,
                                              &error));
  g_assert_cmpuint (tomo_gpu_store_get_n_filled (store), ==, fx.h);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR, TOMO_GPU_PLANE_AUTO),
                     <=, 2e-5);
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* read and progress get the same user data. */
typedef struct
{
  Fixture *fx;
  guint calls;
  guint last_done;
} ReadData;

static gboolean
read_row (guint    row,
          float   *sino,
          gpointer user_data,
          GError **error)
{
  ReadData *rd = user_data;
  gsize ns = (gsize) rd->fx->n * rd->fx->w;

  g_assert_cmpuint (row, <, rd->fx->h);
  memcpy (sino, rd->fx->sinos + row * ns, ns * sizeof (float));
  rd->calls++;
  return TRUE;
}

static void
count_progress (guint    done,
                guint    total,
                gpointer user_data)
{
  ReadData *rd = user_data;

  g_assert_cmpuint (done, >, rd->last_done);
  g_assert_cmpuint (done, <=, total);
  g_assert_cmpuint (done, ==, rd->calls);
  rd->last_done = done;
}

/* Filled from the raw sinograms through the GPU filter: same planes as
 * from the CPU-filtered rows. */
static void
test_fill (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree double *response = NULL;
  Fixture fx;
  TomoGpuStore *store;
  TomoPlane plane;
  ReadData rd;
  guint padded;

  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  fixture_init (&fx, 128, 7, 150);  /* 7 rows: groups of 4, 2 and 1 */
  rd = (ReadData) { &fx, 0, 0 };
  store = tomo_gpu_store_new (0, fx.w, fx.n, fx.angles, 0, fx.h, TOMO_GPU_STORE_AUTO, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpint (tomo_gpu_store_get_precision (store), ==, TOMO_GPU_STORE_FLOAT);

  /* No filter yet: a clear refusal. */
  g_assert_false (tomo_gpu_store_fill (store, read_row, NULL, &rd, NULL, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_clear_error (&error);

  response = tomo_filter_fbp_response (TOMO_FILTER_SHEPP_LOGAN, fx.w, fx.n, &padded);
  g_assert_true (tomo_gpu_store_set_filter (store, padded, response, TOMO_PAD_EDGE, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_store_fill (store, read_row, count_progress, &rd, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (rd.last_done, ==, fx.h);
  g_assert_cmpuint (tomo_gpu_store_get_n_filled (store), ==, fx.h);
  g_test_message ("filled %u rows in %.2f ms", fx.h, tomo_gpu_store_get_fill_ms (store));

  tomo_plane_init_xz (&plane, 60, 0, fx.w, 0, fx.h);
  g_assert_cmpfloat (compare_plane (&fx, store, &plane, TOMO_INTERP_LINEAR,
                                    TOMO_GPU_PLANE_AUTO), <=, 1e-4);
  tomo_gpu_store_free (store);
  fixture_clear (&fx);
}

/* Device-memory caps: float that does not fit → half; half that does not
 * fit → a clear error, no store, nothing crashes. */
static void
test_memory_cap (void)
{
  g_autoptr (GError) error = NULL;
  double angles[16];
  TomoGpuStore *store;
  guint64 elems = 10ull * 16 * 100;

  TOMO_TEST_REQUIRE_GPU ("the GPU volume store");
  for (guint p = 0; p < 16; p++)
    angles[p] = G_PI * p / 16;
  store = tomo_gpu_store_new (0, 100, 16, angles, 0, 10, TOMO_GPU_STORE_AUTO, elems * 4 - 1,
                              &error);
  g_assert_no_error (error);
  g_assert_cmpint (tomo_gpu_store_get_precision (store), ==, TOMO_GPU_STORE_HALF);
  tomo_gpu_store_free (store);

  store = tomo_gpu_store_new (0, 100, 16, angles, 0, 10, TOMO_GPU_STORE_AUTO, elems * 2 - 1,
                              &error);
  g_assert_null (store);
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "rows 0…9"));
  g_clear_error (&error);

  /* A scan far larger than any device: refused the same way. */
  store = tomo_gpu_store_new (0, 8192, 8192, angles, 0, 65536, TOMO_GPU_STORE_AUTO, 0, &error);
  g_assert_null (store);
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY);
}

/* Registers /tomo/gpu/store/<name>-float and <name>-half, the case's
 * `kind` (a tilt case's plane set) beside the precision. */
static void
add_per_precision (const char    *name,
                   int            kind,
                   GTestDataFunc  func)
{
  for (int p = TOMO_GPU_STORE_FLOAT; p <= TOMO_GPU_STORE_HALF; p++)
    {
      g_autofree char *path = g_strdup_printf ("/tomo/gpu/store/%s-%s", name,
                                               tomo_gpu_store_precision_to_string (p));

      g_test_add_data_func (path, TILT_CASE (p, kind), func);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  add_per_precision ("planes", 0, test_planes);
  add_per_precision ("tile", 0, test_tile);
  g_test_add_func ("/tomo/gpu/store/tile-wide-small", test_tile_wide_small);
  g_test_add_func ("/tomo/gpu/store/tex-unaligned", test_tex_unaligned);
  add_per_precision ("tilt", 0, test_tilt);
  add_per_precision ("tilt-rows", 1, test_tilt);
  add_per_precision ("tilt-odd", 2, test_tilt);
  g_test_add_data_func ("/tomo/gpu/store/tilt-small-half", TILT_CASE (TOMO_GPU_STORE_HALF, 3),
                        test_tilt);
  add_per_precision ("preview", 0, test_preview);
  g_test_add_func ("/tomo/gpu/store/row-range", test_row_range);
  g_test_add_func ("/tomo/gpu/store/put-counts-rows", test_put_counts_rows);
  g_test_add_func ("/tomo/gpu/store/fill", test_fill);
  g_test_add_func ("/tomo/gpu/store/memory-cap", test_memory_cap);
  return g_test_run ();
}
