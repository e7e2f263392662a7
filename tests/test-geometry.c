/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * 360° and offset-axis scans (tomo-geometry.h), from a phantom file through
 * preprocessing, the presented scan and the engine: an offset axis near
 * either edge reconstructed over the doubled field of view against the
 * phantom's truth; a centred 360° scan against the 180° one; bad geometry
 * requests.  Every reconstruction runs on the CPU backend and on the GPU
 * backend where a CUDA device exists (skipped otherwise).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "tomo-engine.h"
#include "tomo-geometry.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"
#include "tomo-test-util.h"
#include "tomo-tiff-writer.h"


typedef struct
{
  char *dir;
  char *path;
} TempScan;

static void
temp_scan_clear (TempScan *t)
{
  if (t->dir)
    tomo_test_remove_tree (t->dir);
  g_clear_pointer (&t->dir, g_free);
  g_clear_pointer (&t->path, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TempScan, temp_scan_clear)

static void
write_scan (TempScan                *t,
            const TomoPhantomParams *p)
{
  g_autoptr(GError) error = NULL;

  t->dir = tomo_test_make_tmp_dir ("tomo-geometry-XXXXXX");
  t->path = g_build_filename (t->dir, "scan.h5", NULL);
  g_assert_true (tomo_phantom_write_dxchange (p, t->path, &error));
  g_assert_no_error (error);
}

/* A noiseless disks phantom over `range_deg`. */
static void
phantom_params (TomoPhantomParams *p,
                guint              width,
                guint              n_proj,
                double             range_deg,
                double             center,
                guint              object_width)
{
  tomo_phantom_params_init (p);
  tomo_phantom_params_set_size (p, width, 4, n_proj);
  p->kind = TOMO_PHANTOM_DISKS;
  p->angle_range_deg = range_deg;
  p->center = center;
  p->object_width = object_width;
  p->max_attenuation = 4.0 / MAX (width, object_width);
  p->noise = FALSE;
}

static TomoEngine *
engine_for (TomoBackend backend)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoEngine) engine = NULL;

  if (!tomo_test_need_backend (backend, "the GPU backend is tested on the GPU machine"))
    return NULL;
  engine = tomo_engine_new (TOMO_BACKEND_CPU);
  g_assert_true (tomo_engine_set_backend (engine, backend, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&engine);
}

/* The slice of `row` at `center`, full size. */
static TomoSlice *
reconstruct (TomoEngine *engine,
             TomoScan   *scan,
             guint       row,
             double      center)
{
  tomo_engine_set_scan (engine, scan);
  return tomo_test_reconstruct (engine, row, 1, center);
}

/* --- parsing -------------------------------------------------------------- */

static void
test_parse (void)
{
  static const struct { const char *text; TomoGeometryKind kind; TomoAxisSide side; } good[] = {
    { "auto", TOMO_GEOMETRY_AUTO, TOMO_AXIS_SIDE_ANY },
    { "180", TOMO_GEOMETRY_180, TOMO_AXIS_SIDE_ANY },
    { "360", TOMO_GEOMETRY_360, TOMO_AXIS_SIDE_ANY },
    { "offset", TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY },
    { "Offset:Left", TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_LEFT },
    { " offset:right ", TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_RIGHT },
  };
  static const char *bad[] = { "", "bogus", "270", "offset:up", "360:left", "offset:", "auto:left" };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autoptr(GError) error = NULL;
      TomoGeometry g;

      g_assert_true (tomo_geometry_parse (good[i].text, &g, &error));
      g_assert_no_error (error);
      g_assert_cmpint (g.kind, ==, good[i].kind);
      g_assert_cmpint (g.side, ==, good[i].side);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      TomoGeometry g;

      g_assert_false (tomo_geometry_parse (bad[i], &g, &error));
      g_assert_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_PARSE);
      g_assert_nonnull (strstr (error->message, bad[i]));
      g_assert_nonnull (strstr (error->message, "offset:left"));
    }
}

/* --- offset axis ------------------------------------------------------------ */

typedef struct
{
  TomoBackend backend;
  double edge;          /* axis column; right of the middle: near the right edge */
  gboolean given;       /* the centre passed, not estimated */
} OffsetCase;

static void
test_offset (gconstpointer data)
{
  const OffsetCase *c = data;
  const guint w = 128, n = 720, object = 236;
  g_autoptr(TomoEngine) engine = engine_for (c->backend);
  g_auto(TempScan) t = { 0 };
  g_autoptr(TomoScan) scan = NULL, presented = NULL;
  g_autoptr(TomoSlice) slice = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree float *truth = NULL;
  TomoGeometry g = { TOMO_GEOMETRY_AUTO, TOMO_AXIS_SIDE_ANY };
  TomoGeometryPlan plan;
  TomoPhantomParams p;
  const TomoEllipsoid *e;
  guint n_e, ws;
  double R, shift;

  if (engine == NULL)
    return;
  phantom_params (&p, w, n, 360.0, c->edge, object);
  write_scan (&t, &p);
  scan = tomo_test_open_scan (t.path);

  presented = tomo_geometry_present (scan, &g, c->given ? c->edge : NAN, &plan, &error);
  g_assert_no_error (error);
  g_assert_nonnull (presented);
  g_assert_cmpint (plan.kind, ==, TOMO_GEOMETRY_OFFSET);
  g_assert_cmpint (plan.side, ==, c->edge < w / 2.0 ? TOMO_AXIS_SIDE_LEFT : TOMO_AXIS_SIDE_RIGHT);
  g_assert_true (plan.center_estimated == !c->given);
  g_assert_cmpfloat (fabs (plan.center - c->edge), <, 0.2);
  /* The presented scan: half the projections, 2·W − overlap columns. */
  ws = tomo_scan_get_width (presented);
  g_assert_cmpuint (ws, ==, plan.width);
  g_assert_cmpuint (tomo_scan_get_n_projections (presented), ==, n / 2);
  g_assert_cmpuint (tomo_scan_get_height (presented), ==, tomo_scan_get_height (scan));
  g_assert_cmpuint (ws, ==, 2 * w - plan.overlap);
  g_assert_cmpuint (ws, >=, 2 * w - 2 * (guint) MIN (c->edge, w - 1 - c->edge) - 2);
  g_test_message ("axis %.2f (%s %.3f): %u × %u stitched, overlap %u, axis at %.2f",
                  c->edge, c->given ? "given" : "found", plan.center, n / 2, ws, plan.overlap,
                  plan.recon_center);

  slice = reconstruct (engine, presented, 2, plan.recon_center);
  g_assert_cmpuint (slice->width, ==, ws);
  g_assert_cmpuint (slice->height, ==, ws);

  /* Region means of every disk against the truth (object × object, centred
   * on the axis); the slice's middle is (ws − 1)/2, the axis recon_center. */
  truth = g_new (float, (gsize) object * object);
  tomo_phantom_slice (&p, 2, truth);
  e = tomo_phantom_get_ellipsoids (TOMO_PHANTOM_DISKS, &n_e);
  R = 0.45 * object;
  shift = plan.recon_center - (ws - 1) / 2.0;
  for (guint k = 0; k < n_e; k++)
    {
      double x = e[k].x0 * R, y = -e[k].y0 * R, rad = 0.5 * MIN (e[k].a, 0.5) * R;
      double want = tomo_test_disc_mean (truth, object, (object - 1) / 2.0 + x, (object - 1) / 2.0 + y, rad);
      double got = tomo_test_disc_mean (slice->data, ws, (ws - 1) / 2.0 + x + shift,
                              (ws - 1) / 2.0 + y, rad);

      g_test_message ("disk %u at (%.0f, %.0f) r %.0f: %.6f, truth %.6f (%+.2f %%)", k, x, y, rad,
                      got, want, 100.0 * (got - want) / want);
      g_assert_cmpfloat (fabs (got - want), <, 0.02 * fabs (want));
    }

  /* Whole volumes read the same rows (the GPU's pipeline through its own
   * readers): the slice of row 2 is the same. */
  {
    g_auto(TomoTestVolume) v = { 0 };
    TomoReconParams params;

    tomo_test_volume_init (&v, 1, ws, ws);
    tomo_recon_params_init (&params, ws);
    params.center = plan.recon_center;
    g_assert_true (tomo_engine_reconstruct_volume (engine, 1, 4, &params, TOMO_KERNEL_AUTO,
                                                   tomo_test_volume_sink, NULL, &v, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (v.slices->len, ==, 3);
    g_assert_cmpfloat (tomo_test_rel_l2 (v.slices->pdata[1], slice->data, (gsize) ws * ws), <,
                       1e-4);
  }
}

/* --- centred 360° --------------------------------------------------------- */

static void
test_centred_360 (gconstpointer data)
{
  TomoBackend backend = ((const TomoTestBackendCase *) data)->backend;
  const guint w = 128, n = 360;
  const double axis = (w - 1) / 2.0 + 1.5;
  g_autoptr(TomoEngine) engine = engine_for (backend);
  g_auto(TempScan) t180 = { 0 };
  g_auto(TempScan) t360 = { 0 };
  g_autoptr(TomoScan) s180 = NULL, s360 = NULL, p360 = NULL;
  g_autoptr(TomoSlice) a = NULL, b = NULL;
  g_autoptr(GError) error = NULL;
  TomoGeometry g = { TOMO_GEOMETRY_AUTO, TOMO_AXIS_SIDE_ANY };
  TomoGeometryPlan plan;
  TomoPhantomParams p;
  double rel;

  if (engine == NULL)
    return;
  /* The same angular step: 360 projections over 180°, 720 over 360°. */
  phantom_params (&p, w, n, 180.0, axis, 0);
  write_scan (&t180, &p);
  phantom_params (&p, w, 2 * n, 360.0, axis, 0);
  write_scan (&t360, &p);
  s180 = tomo_test_open_scan (t180.path);
  s360 = tomo_test_open_scan (t360.path);

  p360 = tomo_geometry_present (s360, &g, axis, &plan, &error);
  g_assert_no_error (error);
  g_assert_cmpint (plan.kind, ==, TOMO_GEOMETRY_360);
  g_assert_false (plan.weighted); /* an even turn: every weight 1 */
  g_assert_cmpuint (tomo_scan_get_n_projections (p360), ==, 2 * n);
  g_assert_cmpuint (tomo_scan_get_width (p360), ==, w);

  a = reconstruct (engine, s180, 2, axis);
  b = reconstruct (engine, p360, 2, axis);
  rel = tomo_test_rel_l2 (b->data, a->data, (gsize) w * w);
  g_test_message ("360° against 180°: relative L2 %.4f", rel);
  /* Both halves count: the values match the 180° slice, not twice it
   * (what differs is the interpolation of the half-pixel axis). */
  g_assert_cmpfloat (rel, <, 0.025);
}

/* Three quarters of a turn: directions 0…90° are seen twice, the rest once.
 * Weighted, every direction counts once and the slice matches the 180° one;
 * as measured, a quarter of the directions counts double. */
static void
test_weighted_360 (void)
{
  const guint w = 96, n = 180;
  const double axis = (w - 1) / 2.0;
  g_autoptr(TomoEngine) engine = engine_for (TOMO_BACKEND_CPU);
  g_auto(TempScan) t = { 0 };
  g_auto(TempScan) t180 = { 0 };
  g_autoptr(TomoScan) scan = NULL, s180 = NULL, weighted = NULL, as_measured = NULL;
  g_autoptr(TomoSlice) a = NULL, b = NULL, c = NULL;
  g_autoptr(GError) error = NULL;
  TomoGeometry g360 = { TOMO_GEOMETRY_360, TOMO_AXIS_SIDE_ANY };
  TomoGeometry g180 = { TOMO_GEOMETRY_180, TOMO_AXIS_SIDE_ANY };
  TomoGeometry gauto = { TOMO_GEOMETRY_AUTO, TOMO_AXIS_SIDE_ANY };
  TomoGeometryPlan plan;
  TomoPhantomParams p;
  double rel_w, rel_u;

  /* The same step: 180 projections over 180°, 270 over 270°. */
  phantom_params (&p, w, n, 180.0, axis, 0);
  write_scan (&t180, &p);
  s180 = tomo_test_open_scan (t180.path);
  phantom_params (&p, w, n + n / 2, 270.0, axis, 0);
  write_scan (&t, &p);
  scan = tomo_test_open_scan (t.path);

  /* AUTO weighs a scan of more than a half-turn. */
  g_clear_object (&weighted);
  weighted = tomo_geometry_present (scan, &gauto, NAN, &plan, &error);
  g_assert_no_error (error);
  g_assert_cmpint (plan.kind, ==, TOMO_GEOMETRY_360);
  g_assert_false (plan.full_turn);
  g_clear_object (&weighted);
  weighted = tomo_geometry_present (scan, &g360, axis, &plan, &error);
  g_assert_no_error (error);
  g_assert_cmpint (plan.kind, ==, TOMO_GEOMETRY_360);
  g_assert_true (plan.weighted);
  as_measured = tomo_geometry_present (scan, &g180, axis, &plan, &error);
  g_assert_no_error (error);
  g_assert_true (as_measured == scan);
  /* Device paths read a file's raw rows; a weighted scan's are its file's,
   * weighted after preprocessing (tomo_geometry_get_row_map()). */
  g_assert_true (tomo_geometry_get_raw_source (scan) == scan);
  g_assert_null (tomo_geometry_get_raw_source (weighted));
  g_assert_true (tomo_geometry_get_mapped_source (weighted) == scan);

  a = reconstruct (engine, s180, 2, axis);
  b = reconstruct (engine, weighted, 2, axis);
  c = reconstruct (engine, as_measured, 2, axis);
  rel_w = tomo_test_rel_l2 (b->data, a->data, (gsize) w * w);
  rel_u = tomo_test_rel_l2 (c->data, a->data, (gsize) w * w);
  g_test_message ("uneven turn against 180°: weighted %.4f, unweighted %.4f", rel_w, rel_u);
  g_assert_cmpfloat (rel_w, <, 0.02);
  g_assert_cmpfloat (rel_w, <, 0.5 * rel_u);
}

/* --- the maps a device builds rows with ------------------------------------ */

/* Row `row` of `presented` made from its base's row with the maps of
 * tomo_geometry_get_row_map(), as tomo-geometry.h writes them out. */
static float *
apply_row_map (TomoScan *presented,
               guint     row)
{
  g_autoptr(GError) error = NULL;
  TomoGeometryRowMap m;
  TomoScan *base = tomo_geometry_get_row_map (presented, &m);
  g_autofree float *in = NULL;
  float *out;

  g_assert_nonnull (base);
  g_assert_cmpuint (m.width, ==, tomo_scan_get_width (base));
  g_assert_cmpuint (m.n_proj, ==, tomo_scan_get_n_projections (base));
  g_assert_cmpuint (m.width_out, ==, tomo_scan_get_width (presented));
  g_assert_cmpuint (m.n_proj_out, ==, tomo_scan_get_n_projections (presented));
  in = g_new (float, (gsize) m.n_proj * m.width);
  out = g_new (float, (gsize) m.n_proj_out * m.width_out);
  g_assert_true (tomo_scan_read_sinogram (base, row, in, NULL, &error));
  g_assert_no_error (error);
  for (guint k = 0; k < m.n_proj_out; k++)
    for (guint u = 0; u < m.width_out; u++)
      {
        gsize o = (gsize) k * m.width_out + u;
        const TomoGeometryStitchProjection *pk;
        const TomoGeometryStitchColumn *cu;
        float vd = 0.0f, vm = 0.0f;

        if (m.weights != NULL)
          {
            out[o] = in[o] * m.weights[k];
            continue;
          }
        pk = &m.proj[k];
        cu = &m.col[u];
        if (cu->direct >= 0)
          vd = in[(gsize) pk->direct * m.width + cu->direct];
        if (cu->mirror >= 0)
          {
            const float *b = in + (gsize) pk->below * m.width, *a = in + (gsize) pk->above * m.width;
            guint i0 = cu->mirror, i1 = MIN (i0 + 1, m.width - 1);
            float ta = pk->t_angle;
            float m0 = (1.0f - ta) * b[i0] + ta * a[i0], m1 = (1.0f - ta) * b[i1] + ta * a[i1];

            vm = (1.0f - cu->t) * m0 + cu->t * m1;
          }
        out[o] = cu->w_direct * vd + (1.0f - cu->w_direct) * vm;
      }
  return out;
}

/* Stitched (left and right, over a tilt correction too) and weighted scans
 * expose maps that rebuild their rows from the base's bit for bit, and
 * name the file a device reads; a file and a tilt correction have none. */
static void
test_row_map (void)
{
  const guint w = 96, n = 240;
  g_auto(TempScan) t_off = { 0 };
  g_auto(TempScan) t_uneven = { 0 };
  g_autoptr(TomoScan) off = NULL, uneven = NULL, tilted = NULL;
  g_autoptr(GError) error = NULL;
  TomoGeometryRowMap m;
  TomoPhantomParams p;
  struct { TomoScan **base; TomoGeometryKind kind; double center; } cases[] = {
    { &off, TOMO_GEOMETRY_OFFSET, 10.5 },
    { &off, TOMO_GEOMETRY_OFFSET, w - 1 - 14.25 },
    { &tilted, TOMO_GEOMETRY_OFFSET, 10.5 },
    { &uneven, TOMO_GEOMETRY_360, (w - 1) / 2.0 },
  };

  phantom_params (&p, w, n, 360.0, 10.5, 2 * w - 30);
  write_scan (&t_off, &p);
  off = tomo_test_open_scan (t_off.path);
  phantom_params (&p, w, n * 3 / 4, 270.0, (w - 1) / 2.0, 0);
  write_scan (&t_uneven, &p);
  uneven = tomo_test_open_scan (t_uneven.path);
  tilted = tomo_geometry_correct_tilt (off, 2.0, &error);
  g_assert_no_error (error);

  g_assert_null (tomo_geometry_get_row_map (off, &m));
  g_assert_null (tomo_geometry_get_row_map (tilted, &m));
  g_assert_true (tomo_geometry_get_mapped_source (off) == off);
  g_assert_true (tomo_geometry_get_mapped_source (tilted) == off);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      TomoGeometry g = { cases[c].kind, TOMO_AXIS_SIDE_ANY };
      TomoGeometryPlan plan;
      g_autoptr(TomoScan) presented = tomo_geometry_present (*cases[c].base, &g, cases[c].center,
                                                             &plan, &error);
      TomoScan *file = cases[c].base == &uneven ? uneven : off;

      g_assert_no_error (error);
      g_assert_cmpint (plan.kind, ==, cases[c].kind);
      g_assert_true (tomo_geometry_get_row_map (presented, &m) == *cases[c].base);
      g_assert_true ((m.weights != NULL) == (cases[c].kind == TOMO_GEOMETRY_360));
      g_assert_true (tomo_geometry_get_mapped_source (presented) == file);
      /* The rows are the presented scan's own; the raw source is not. */
      g_assert_null (tomo_geometry_get_raw_source (presented));
      for (guint row = 0; row < 4; row += 3)
        {
          gsize size = sizeof (float) * tomo_scan_get_width (presented)
                       * tomo_scan_get_n_projections (presented);
          g_autofree float *want = g_malloc (size);
          g_autofree float *got = apply_row_map (presented, row);

          g_assert_true (tomo_scan_read_sinogram (presented, row, want, NULL, &error));
          g_assert_no_error (error);
          g_assert_cmpmem (got, size, want, size);
        }
    }
}

/* --- bad requests ------------------------------------------------------------ */

static void
assert_mismatch (TomoScan           *scan,
                 TomoGeometryKind    kind,
                 TomoAxisSide        side,
                 double              center,
                 const char         *words)
{
  g_autoptr(GError) error = NULL;
  TomoGeometry g = { kind, side };
  TomoGeometryPlan plan;
  g_autoptr(TomoScan) presented = tomo_geometry_present (scan, &g, center, &plan, &error);

  g_assert_null (presented);
  g_assert_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_MISMATCH);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, words));
  g_assert_nonnull (strstr (error->message, tomo_scan_get_path (scan)));
}

static void
test_errors (void)
{
  const guint w = 64, n = 180;
  g_auto(TempScan) t180 = { 0 };
  g_auto(TempScan) t360 = { 0 };
  g_autoptr(TomoScan) s180 = NULL, s360 = NULL, gap = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autofree double *deg = g_new (double, 2 * n);
  guint n_gap = 0;
  TomoPhantomParams p;

  phantom_params (&p, w, n, 180.0, 10.0, 0);
  write_scan (&t180, &p);
  s180 = tomo_test_open_scan (t180.path);
  /* 360° or offset asked of a half-turn scan. */
  assert_mismatch (s180, TOMO_GEOMETRY_360, TOMO_AXIS_SIDE_ANY, NAN, "needs more than a half-turn");
  assert_mismatch (s180, TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY, 10.0, "opposite projection");

  phantom_params (&p, w, 2 * n, 360.0, 10.0, 120);
  write_scan (&t360, &p);
  s360 = tomo_test_open_scan (t360.path);
  /* An axis off the detector, or on the other side than said. */
  assert_mismatch (s360, TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY, -3.0, "not on the detector");
  assert_mismatch (s360, TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY, w + 2.0, "not on the detector");
  assert_mismatch (s360, TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_RIGHT, 10.0, "left of the detector middle");

  /* A full turn with a gap: projections whose opposite was not measured. */
  for (guint i = 0; i < 2 * n; i++)
    {
      double a = 360.0 * i / (2 * n);

      if (a < 200.0 || a > 260.0)
        deg[n_gap++] = a;
    }
  phantom_params (&p, w, n_gap, 360.0, 10.0, 120);
  p.angles_deg = deg;
  path = g_build_filename (t360.dir, "gap.h5", NULL);
  g_assert_true (tomo_phantom_write_dxchange (&p, path, &error));
  g_assert_no_error (error);
  gap = tomo_test_open_scan (path);
  assert_mismatch (gap, TOMO_GEOMETRY_OFFSET, TOMO_AXIS_SIDE_ANY, 10.0, "has no opposite projection");
}

/* --- axis tilt ------------------------------------------------------------- */

#define TILT_W 128
#define TILT_H 32
#define TILT_N 180
#define TILT_CENTER 66.87

/* Disks (the same in every row, so a row shifted is the untilted row),
 * noiseless, the axis tilted by `tilt` degrees. */
static void
write_tilted (TempScan *t,
              double    tilt)
{
  TomoPhantomParams p;

  phantom_params (&p, TILT_W, TILT_N, 180.0, TILT_CENTER, 0);
  p.height = TILT_H;
  p.tilt_deg = tilt;
  write_scan (t, &p);
}

/* A scan whose axis is tilted by 4° (1 px over the 14 rows from row 1 to
 * the middle), corrected: every row reconstructs at the middle row's centre
 * as the untilted scan does (the shift is all that differs: its cubic
 * interpolation), and far from the middle row much better than uncorrected.
 * The correction carries over to a geometry presented on top of it. */
static void
test_tilt (gconstpointer data)
{
  TomoBackend backend = ((const TomoTestBackendCase *) data)->backend;
  g_autoptr(TomoEngine) engine = engine_for (backend);
  g_auto(TempScan) straight = { 0 };
  g_auto(TempScan) tilted = { 0 };
  g_autoptr(TomoScan) ref = NULL, raw = NULL, corrected = NULL, same = NULL, presented = NULL;
  g_autoptr(GError) error = NULL;
  const gsize plane = (gsize) TILT_W * TILT_W, sino = (gsize) TILT_N * TILT_W;
  const guint rows[] = { 1, 15, 30 };
  TomoGeometry geom = { TOMO_GEOMETRY_360, TOMO_AXIS_SIDE_ANY };
  TomoGeometryPlan plan;

  if (engine == NULL)
    return;
  write_tilted (&straight, 0.0);
  write_tilted (&tilted, 4.0);
  ref = tomo_test_open_scan (straight.path);
  raw = tomo_test_open_scan (tilted.path);

  same = tomo_geometry_correct_tilt (raw, 0.0, &error);
  g_assert_no_error (error);
  g_assert_true (same == raw);
  corrected = tomo_geometry_correct_tilt (raw, 4.0, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (tomo_scan_get_axis_tilt_correction (corrected), ==, 4.0);
  g_assert_cmpfloat (tomo_scan_get_axis_tilt_correction (raw), ==, 0.0);
  g_assert_cmpuint (tomo_scan_get_width (corrected), ==, TILT_W);
  g_assert_cmpuint (tomo_scan_get_height (corrected), ==, TILT_H);
  g_assert_cmpuint (tomo_scan_get_n_projections (corrected), ==, TILT_N);
  /* Device paths read the file's raw rows and resample them with the taps
   * the CPU uses: row 1 is read at u + s, s = tan(4°) · (1 − middle row),
   * from the four columns around it. */
  g_assert_true (tomo_geometry_get_raw_source (corrected) == raw);
  {
    TomoGeometryRowTaps taps;
    double shift = tan (4.0 * G_PI / 180.0) * (1 - (TILT_H - 1) / 2.0);

    g_assert_true (tomo_geometry_get_row_taps (corrected, 1, &taps) == raw);
    g_assert_null (tomo_geometry_get_row_taps (raw, 1, &taps));
    g_test_message ("row 1: shift %.4f px, offset %d, weights %.4f %.4f %.4f %.4f", shift,
                    taps.offset, taps.weights[0], taps.weights[1], taps.weights[2], taps.weights[3]);
    g_assert_cmpint (taps.offset, ==, (int) floor (shift) - 1);
    g_assert_cmpfloat (fabs (taps.weights[0] + taps.weights[1] + taps.weights[2] + taps.weights[3] - 1.0),
                       <, 1e-6);
  }

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree float *a = g_new (float, sino), *b = g_new (float, sino);
      g_autoptr(TomoSlice) s_ref = NULL, s_cor = NULL, s_raw = NULL;
      double rel_sino, rel_cor, rel_raw;

      g_assert_true (tomo_scan_read_sinogram (ref, rows[i], a, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (tomo_scan_read_sinogram (corrected, rows[i], b, NULL, &error));
      g_assert_no_error (error);
      tomo_test_assert_finite (b, sino);
      rel_sino = tomo_test_rel_l2 (b, a, sino);

      s_ref = reconstruct (engine, ref, rows[i], TILT_CENTER);
      s_cor = reconstruct (engine, corrected, rows[i], TILT_CENTER);
      s_raw = reconstruct (engine, raw, rows[i], TILT_CENTER);
      rel_cor = tomo_test_rel_l2 (s_cor->data, s_ref->data, plane);
      rel_raw = tomo_test_rel_l2 (s_raw->data, s_ref->data, plane);
      g_test_message ("row %u (axis %+.3f px off the middle row's): sinogram %.4f, "
                      "slice corrected %.4f, uncorrected %.4f", rows[i],
                      tan (4.0 * G_PI / 180.0) * (rows[i] - (TILT_H - 1) / 2.0), rel_sino,
                      rel_cor, rel_raw);
      /* Measured on the CPU: ≤ 0.0004, ≤ 0.0023, and 0.008 of uncorrected. */
      g_assert_cmpfloat (rel_sino, <, 0.002);
      g_assert_cmpfloat (rel_cor, <, 0.01);
      if (rows[i] != 15)
        g_assert_cmpfloat (rel_cor, <, 0.05 * rel_raw);
    }

  /* A half-turn is no 360° scan, corrected or not; 180° takes it. */
  presented = tomo_geometry_present (corrected, &geom, NAN, &plan, &error);
  g_assert_null (presented);
  g_assert_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_MISMATCH);
  g_clear_error (&error);
  geom.kind = TOMO_GEOMETRY_180;
  presented = tomo_geometry_present (corrected, &geom, NAN, &plan, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (tomo_scan_get_axis_tilt_correction (presented), ==, 4.0);
}

/* Tilts that cannot be corrected: a clear error naming the value. */
static void
test_tilt_errors (void)
{
  const double bad[] = { NAN, INFINITY, 10.5, -11.0, 90.0 };
  g_auto(TempScan) t = { 0 };
  g_autoptr(TomoScan) scan = NULL;

  write_tilted (&t, 0.0);
  scan = tomo_test_open_scan (t.path);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TomoScan) corrected = tomo_geometry_correct_tilt (scan, bad[i], &error);

      g_assert_null (corrected);
      g_assert_error (error, TOMO_GEOMETRY_ERROR, TOMO_GEOMETRY_ERROR_TILT);
      g_assert_nonnull (strstr (error->message, "out of range (at most ±10°)"));
    }
}

/* The axis_tilt_deg attribute of an HDF5 volume's /exchange/data. */
static double
read_tilt_attribute (const char *path)
{
  hid_t file = H5Fopen (path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t dset, attr;
  double value = NAN;

  g_assert_cmpint (file, >=, 0);
  dset = H5Dopen2 (file, "/exchange/data", H5P_DEFAULT);
  g_assert_cmpint (dset, >=, 0);
  attr = H5Aopen (dset, "axis_tilt_deg", H5P_DEFAULT);
  g_assert_cmpint (attr, >=, 0);
  g_assert_cmpint (H5Aread (attr, H5T_NATIVE_DOUBLE, &value), >=, 0);
  H5Aclose (attr);
  H5Dclose (dset);
  H5Fclose (file);
  return value;
}

/* reconstruct --tilt: a given tilt and auto (the fitted one) are said and
 * recorded, the slices match the untilted scan's; bad values are refused
 * before anything is read, and nothing is written. */
static void
test_tilt_cli (void)
{
  g_auto(TempScan) straight = { 0 };
  g_auto(TempScan) tilted = { 0 };
  g_auto(TempScan) short_scan = { 0 };
  g_auto(TomoTestResult) r = { 0 };
  g_autofree char *ref = NULL, *out = NULL, *out_auto = NULL, *bad = NULL;
  g_autofree float *a = NULL, *b = NULL;
  g_autoptr(GError) error = NULL;
  guint w, h, n;

  if (g_getenv ("TOMOLIVE") == NULL)
    {
      g_test_skip ("TOMOLIVE is not set (meson test sets it)");
      return;
    }
  write_tilted (&straight, 0.0);
  write_tilted (&tilted, 4.0);
  ref = g_build_filename (tilted.dir, "ref.tif", NULL);
  out = g_build_filename (tilted.dir, "tilt.h5", NULL);
  out_auto = g_build_filename (tilted.dir, "auto.tif", NULL);
  bad = g_build_filename (tilted.dir, "bad.tif", NULL);

  TOMO_TEST_RUN (&r, "reconstruct", straight.path, "--rows", "0:3", "--center", "66.87",
                 "--backend", "cpu", "-q", "-o", ref);
  g_assert_cmpint (r.status, ==, 0);
  tomo_test_result_clear (&r);
  TOMO_TEST_RUN (&r, "reconstruct", tilted.path, "--rows", "0:3", "--center", "66.87",
                 "--backend", "cpu", "--tilt", "4", "-o", out);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "Tilt: 4.0000° corrected, rows shifted about row 15.5"));
  g_assert_cmpfloat (read_tilt_attribute (out), ==, 4.0);
  tomo_test_result_clear (&r);
  TOMO_TEST_RUN (&r, "reconstruct", tilted.path, "--rows", "0:3", "--center", "66.87",
                 "--backend", "cpu", "--tilt", "auto", "-o", out_auto);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "Tilt: 4.0"));
  g_assert_nonnull (strstr (r.out, "(fitted to the centres of up to 16 rows)"));
  tomo_test_result_clear (&r);

  a = tomo_tiff_read_float (ref, &w, &h, &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 3);
  b = tomo_tiff_read_float (out_auto, &w, &h, &n, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (n, ==, 3);
  g_test_message ("--tilt auto against the untilted scan, rows 0–2: relative L2 %.4f",
                  tomo_test_rel_l2 (b, a, (gsize) w * h * n));
  g_assert_cmpfloat (tomo_test_rel_l2 (b, a, (gsize) w * h * n), <, 0.01);

  /* Four rows: too few to fit a tilt to. */
  {
    TomoPhantomParams p;

    phantom_params (&p, 64, 90, 180.0, 33.0, 0);
    write_scan (&short_scan, &p);
  }
  {
    const struct { const char *input, *tilt, *expect; } refused[] = {
      { short_scan.path, "auto", "--tilt auto: the axis tilt of " },
      { tilted.path, "12", "--tilt 12 is out of range" },
      { tilted.path, "steep", "--tilt “steep” is not a number" },
      { "--listen=tcp://127.0.0.1:1", "1", "--tilt needs a scan file" },
    };

    for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
      {
        const char *argv[] = { "reconstruct", refused[i].input, "--tilt", refused[i].tilt,
                               "-o", bad, NULL };

        tomo_test_run_argv (&r, argv);
        tomo_test_assert_fails_with (&r, refused[i].expect);
        tomo_test_result_clear (&r);
        g_assert_false (g_file_test (bad, G_FILE_TEST_EXISTS));
      }
  }
}

/* --- the command line ----------------------------------------------------- */

static void
test_cli (void)
{
  g_auto(TempScan) t180 = { 0 };
  g_auto(TempScan) toff = { 0 };
  g_auto(TomoTestResult) r = { 0 };
  g_autofree char *out = NULL;
  TomoPhantomParams p;

  if (g_getenv ("TOMOLIVE") == NULL)
    {
      g_test_skip ("TOMOLIVE is not set (meson test sets it)");
      return;
    }
  phantom_params (&p, 64, 90, 180.0, 33.0, 0);
  write_scan (&t180, &p);
  phantom_params (&p, 64, 360, 360.0, 6.5, 112);
  write_scan (&toff, &p);
  out = g_build_filename (toff.dir, "slice.tif", NULL);

  /* info says what will be done, with the axis found or given. */
  TOMO_TEST_RUN (&r, "info", toff.path);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "Geometry:    offset axis (left)"));
  g_assert_nonnull (strstr (r.out, "estimated"));
  tomo_test_result_clear (&r);
  TOMO_TEST_RUN (&r, "info", toff.path, "--geometry", "360");
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "Geometry:    360°: all 360 projections"));
  tomo_test_result_clear (&r);
  TOMO_TEST_RUN (&r, "info", t180.path);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "Geometry:    180°"));
  tomo_test_result_clear (&r);

  /* The offset scan reconstructs over the stitched width: 64 + (63 − 2·6.5). */
  TOMO_TEST_RUN (&r, "reconstruct", toff.path, "--center", "6.5", "-o", out);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_nonnull (strstr (r.out, "1 slice of 114×114 from 180 projections"));
  tomo_test_result_clear (&r);

  /* Bad requests: clear errors, exit status 1, nothing written. */
  TOMO_TEST_RUN (&r, "reconstruct", t180.path, "--geometry", "360", "-o", out);
  tomo_test_assert_fails_with (&r, "needs more than a half-turn");
  tomo_test_result_clear (&r);
  TOMO_TEST_RUN (&r, "reconstruct", t180.path, "--geometry", "offset", "-o", out);
  tomo_test_assert_fails_with (&r, "needs a full turn");
  tomo_test_result_clear (&r);
  TOMO_TEST_RUN (&r, "reconstruct", toff.path, "--geometry", "offset:right", "-o", out);
  tomo_test_assert_fails_with (&r, "left of the detector middle");
  tomo_test_result_clear (&r);
  TOMO_TEST_RUN (&r, "phantom", "--width", "64", "--object-width", "300", "-o", out);
  tomo_test_assert_fails_with (&r, "object width");
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS) && g_str_has_suffix (out, ".h5"));
  tomo_test_result_clear (&r);
  TOMO_TEST_RUN (&r, "info", toff.path, "--geometry", "half");
  tomo_test_assert_fails_with (&r, "Unknown geometry “half”");
  g_assert_null (strstr (r.out, "Path:"));
}

int
main (int    argc,
      char **argv)
{
  static const OffsetCase offset_cases[] = {
    { TOMO_BACKEND_CPU, 12.5, FALSE },
    { TOMO_BACKEND_CPU, 127 - 18.0, TRUE },
    { TOMO_BACKEND_GPU, 12.5, FALSE },
    { TOMO_BACKEND_GPU, 127 - 18.0, TRUE },
  };

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/tomo/geometry/parse", test_parse);
  g_test_add_data_func ("/tomo/geometry/cpu/offset-left", &offset_cases[0], test_offset);
  g_test_add_data_func ("/tomo/geometry/cpu/offset-right", &offset_cases[1], test_offset);
  g_test_add_data_func ("/tomo/geometry/gpu/offset-left", &offset_cases[2], test_offset);
  g_test_add_data_func ("/tomo/geometry/gpu/offset-right", &offset_cases[3], test_offset);
  tomo_test_add_backend_case ("/tomo/geometry", TOMO_BACKEND_CPU, "centred-360", NULL, test_centred_360);
  tomo_test_add_backend_case ("/tomo/geometry", TOMO_BACKEND_GPU, "centred-360", NULL, test_centred_360);
  g_test_add_func ("/tomo/geometry/weighted-360", test_weighted_360);
  g_test_add_func ("/tomo/geometry/row-map", test_row_map);
  g_test_add_func ("/tomo/geometry/errors", test_errors);
  g_test_add_func ("/tomo/geometry/cli", test_cli);
  tomo_test_add_backend_case ("/tomo/geometry", TOMO_BACKEND_CPU, "tilt", NULL, test_tilt);
  tomo_test_add_backend_case ("/tomo/geometry", TOMO_BACKEND_GPU, "tilt", NULL, test_tilt);
  g_test_add_func ("/tomo/geometry/tilt/errors", test_tilt_errors);
  g_test_add_func ("/tomo/geometry/tilt/cli", test_tilt_cli);
  return g_test_run ();
}
