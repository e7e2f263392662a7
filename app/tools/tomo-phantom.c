/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-phantom"

#include "config.h"

#include <math.h>
#include <string.h>

#include <hdf5.h>

#include "tomo-error.h"
#include "tomo-hdf5-private.h"
#include "tomo-output.h"
#include "tomo-phantom.h"

/* Modified Shepp–Logan (Toft's contrast values) in its usual 3-D form; the
 * tilt of the two inner ellipsoids about the x axis is dropped because the
 * rotation axis is z and only rotations about it are modelled. */
static const TomoEllipsoid shepp_logan[] = {
  /* value   a       b      c      x0     y0       z0     phi */
  { 1.0,  0.6900, 0.920, 0.810,  0.00,  0.0000,  0.00,   0.0 },
  { -0.8, 0.6624, 0.874, 0.780,  0.00, -0.0184,  0.00,   0.0 },
  { -0.2, 0.1100, 0.310, 0.220,  0.22,  0.0000,  0.00, -18.0 },
  { -0.2, 0.1600, 0.410, 0.280, -0.22,  0.0000,  0.00,  18.0 },
  { 0.1,  0.2100, 0.250, 0.410,  0.00,  0.3500, -0.15,   0.0 },
  { 0.1,  0.0460, 0.046, 0.050,  0.00,  0.1000,  0.25,   0.0 },
  { 0.1,  0.0460, 0.046, 0.050,  0.00, -0.1000,  0.25,   0.0 },
  { 0.1,  0.0460, 0.023, 0.050, -0.08, -0.6050,  0.00,   0.0 },
  { 0.1,  0.0230, 0.023, 0.020,  0.00, -0.6060,  0.00,   0.0 },
  { 0.1,  0.0230, 0.046, 0.020,  0.06, -0.6050,  0.00,   0.0 },
};

/* Cylinders along z (c ≫ 1) so every row shows the same disks:
 * background 1.0, and regions of 2.0, 0.5 and 1.5 away from the edges. */
static const TomoEllipsoid disks[] = {
  { 1.0,  0.85, 0.85, 100.0,  0.00,  0.00, 0.0, 0.0 },
  { 1.0,  0.22, 0.22, 100.0, -0.40,  0.30, 0.0, 0.0 },
  { -0.5, 0.22, 0.22, 100.0,  0.40,  0.30, 0.0, 0.0 },
  { 0.5,  0.25, 0.25, 100.0,  0.00, -0.40, 0.0, 0.0 },
};

static const TomoEllipsoid points[] = {
  { 1.0, 0.02, 0.02, 100.0,  0.00,  0.00, 0.0, 0.0 },
  { 1.0, 0.02, 0.02, 100.0,  0.50,  0.00, 0.0, 0.0 },
  { 1.0, 0.02, 0.02, 100.0, -0.50,  0.30, 0.0, 0.0 },
  { 1.0, 0.02, 0.02, 100.0,  0.20, -0.60, 0.0, 0.0 },
  { 1.0, 0.02, 0.02, 100.0, -0.30, -0.70, 0.0, 0.0 },
  { 1.0, 0.02, 0.02, 100.0,  0.75,  0.45, 0.0, 0.0 },
};

const TomoEllipsoid *
tomo_phantom_get_ellipsoids (TomoPhantomKind kind,
                             guint          *n)
{
  g_return_val_if_fail (n != NULL, NULL);

  switch (kind)
    {
    case TOMO_PHANTOM_SHEPP_LOGAN:
      *n = G_N_ELEMENTS (shepp_logan);
      return shepp_logan;
    case TOMO_PHANTOM_DISKS:
      *n = G_N_ELEMENTS (disks);
      return disks;
    case TOMO_PHANTOM_POINTS:
      *n = G_N_ELEMENTS (points);
      return points;
    default:
      *n = 0;
      g_return_val_if_reached (NULL);
    }
}

void
tomo_phantom_params_init (TomoPhantomParams *params)
{
  g_return_if_fail (params != NULL);

  memset (params, 0, sizeof *params);
  params->kind = TOMO_PHANTOM_SHEPP_LOGAN;
  tomo_phantom_params_set_size (params, 256, 16, 180);
  params->angle_range_deg = 180.0;
  params->flat_level = 20000.0;
  params->dark_level = 100.0;
  params->n_flats = 10;
  params->n_darks = 5;
  params->noise = TRUE;
  params->seed = 1;
}

void
tomo_phantom_params_set_size (TomoPhantomParams *params,
                              guint              width,
                              guint              height,
                              guint              n_proj)
{
  g_return_if_fail (params != NULL && width > 0);

  params->width = width;
  params->height = height;
  params->n_proj = n_proj;
  params->center = (width - 1) / 2.0 + 3.37;
  params->max_attenuation = 4.0 / width;
}

/* A small tilt of the axis in the detector plane is modelled as a centre
 * that moves linearly with the row: what the projections show of it. */
double
tomo_phantom_row_center (const TomoPhantomParams *params,
                         guint                    row)
{
  g_return_val_if_fail (params != NULL, 0.0);

  return params->center + tan (params->tilt_deg * G_PI / 180.0) * (row - (params->height - 1) / 2.0);
}

/* Half-width of the field of view in pixels: the object stays inside the
 * detector even with the axis a few pixels off the middle. */
guint
tomo_phantom_slice_width (const TomoPhantomParams *params)
{
  g_return_val_if_fail (params != NULL, 0);
  return params->object_width > 0 ? params->object_width : params->width;
}

static double
fov_radius (const TomoPhantomParams *params)
{
  return 0.45 * tomo_phantom_slice_width (params);
}

/* z of a detector row in phantom units: row 0 at the top (z = +1 side), the
 * middle of the detector at z = 0. */
static double
row_z (guint height,
       guint row)
{
  return ((height - 1) / 2.0 - row) / (height / 2.0);
}

/* The cut of an ellipsoid at height z, in slice pixels (x right, y down):
 * centre (cx, cy), semi-axes A along u = (cos φ, −sin φ) and B along v. */
typedef struct
{
  double value;
  double cx, cy;
  double A, B;
  double phi;
} Ellipse;

static guint
cut_ellipses (const TomoPhantomParams *params,
              guint                    row,
              Ellipse                 *out)
{
  const TomoEllipsoid *e;
  guint n, n_out = 0;
  double R = fov_radius (params);
  double z = row_z (params->height, row);

  e = tomo_phantom_get_ellipsoids (params->kind, &n);
  for (guint i = 0; i < n; i++)
    {
      double dz = (z - e[i].z0) / e[i].c;
      double k;

      if (dz * dz >= 1.0)
        continue;
      k = sqrt (1.0 - dz * dz);
      /* The phantom's y axis points up, the slice's rows go down. */
      out[n_out++] = (Ellipse) {
        .value = e[i].value * params->max_attenuation,
        .cx = e[i].x0 * R,
        .cy = -e[i].y0 * R,
        .A = e[i].a * R * k,
        .B = e[i].b * R * k,
        .phi = e[i].phi_deg * G_PI / 180.0,
      };
    }
  return n_out;
}

/* ∫ sqrt(w² − s²) ds from −w to s, for s clamped to [−w, w]. */
static double
half_disk_area (double w,
                double s)
{
  s = CLAMP (s, -w, w);
  return 0.5 * (s * sqrt (MAX (w * w - s * s, 0.0)) + w * w * asin (s / w)) + G_PI * w * w / 4.0;
}

static void
angles_or_default (const TomoPhantomParams *params,
                   const double            *angles,
                   double                  *out)
{
  for (guint p = 0; p < params->n_proj; p++)
    out[p] = angles != NULL ? angles[p]
                            : params->angle_range_deg * G_PI / 180.0 * p / params->n_proj;
}

void
tomo_phantom_sinogram (const TomoPhantomParams *params,
                       const double            *angles,
                       guint                    row,
                       double                  *out)
{
  Ellipse cut[32];
  guint n_cut;
  g_autofree double *theta = NULL;
  double center;

  g_return_if_fail (params != NULL && out != NULL);
  g_return_if_fail (params->width > 0 && params->height > 0 && params->n_proj > 0);
  g_return_if_fail (row < params->height);

  center = tomo_phantom_row_center (params, row);

  theta = g_new (double, params->n_proj);
  angles_or_default (params, angles, theta);
  n_cut = cut_ellipses (params, row, cut);
  memset (out, 0, sizeof (double) * params->n_proj * params->width);

  for (guint p = 0; p < params->n_proj; p++)
    {
      double ct = cos (theta[p]), st = sin (theta[p]);
      double *line = out + (gsize) p * params->width;

      for (guint e = 0; e < n_cut; e++)
        {
          const Ellipse *el = &cut[e];
          /* Ray normal n = (cos θ, −sin θ): a point projects to p·n + center. */
          double un = cos (el->phi) * ct + sin (el->phi) * st;
          double vn = sin (el->phi) * ct - cos (el->phi) * st;
          double w = sqrt (el->A * el->A * un * un + el->B * el->B * vn * vn);
          double s_c = el->cx * ct - el->cy * st + center;
          /* Chord length at offset s from the centre: (2AB/w²)·sqrt(w² − s²);
           * integrating it over the pixel [t − ½, t + ½] is exact. */
          double k = 2.0 * el->A * el->B / (w * w) * el->value;
          guint i_lo, i_hi;

          if (w <= 0)
            continue;
          i_lo = (guint) MAX (floor (s_c - w - 1.0), 0.0);
          i_hi = (guint) CLAMP (ceil (s_c + w + 1.0), 0.0, (double) params->width - 1);
          for (guint i = i_lo; i <= i_hi && i < params->width; i++)
            {
              double a = i - 0.5 - s_c, b = i + 0.5 - s_c;

              line[i] += k * (half_disk_area (w, b) - half_disk_area (w, a));
            }
        }
    }
}

void
tomo_phantom_slice (const TomoPhantomParams *params,
                    guint                    row,
                    float                   *out)
{
  const guint ss = 4;
  Ellipse cut[32];
  guint n_cut;
  guint w;
  double c;

  g_return_if_fail (params != NULL && out != NULL);
  g_return_if_fail (params->width > 0 && params->height > 0);
  g_return_if_fail (row < params->height);

  w = tomo_phantom_slice_width (params);
  c = (w - 1) / 2.0;
  n_cut = cut_ellipses (params, row, cut);

  for (guint iy = 0; iy < w; iy++)
    for (guint ix = 0; ix < w; ix++)
      {
        double sum = 0.0;

        for (guint sy = 0; sy < ss; sy++)
          for (guint sx = 0; sx < ss; sx++)
            {
              double x = ix - c + (sx + 0.5) / ss - 0.5;
              double y = iy - c + (sy + 0.5) / ss - 0.5;

              for (guint e = 0; e < n_cut; e++)
                {
                  const Ellipse *el = &cut[e];
                  double dx = x - el->cx, dy = y - el->cy;
                  /* u = (cos φ, −sin φ), v = (sin φ, cos φ) in slice pixels. */
                  double pu = dx * cos (el->phi) - dy * sin (el->phi);
                  double pv = dx * sin (el->phi) + dy * cos (el->phi);

                  if ((pu * pu) / (el->A * el->A) + (pv * pv) / (el->B * el->B) <= 1.0)
                    sum += el->value;
                }
            }
        out[(gsize) iy * w + ix] = (float) (sum / (ss * ss));
      }
}

/* ---------------------------------------------------------------------------
 * Raw counts
 *
 * Noise is counter-based: the draws of each value come from a hash of the
 * seed, the dataset, the detector row, the value's place in the row block
 * (projection × width + column) and the draw's number.  Any thread can draw
 * any value, so rows are made in parallel and the file is the same, value for
 * value, whatever the number of threads or the order the rows are made in. */

typedef enum
{
  NOISE_DATA = 1,
  NOISE_FLAT = 2,
  NOISE_DARK = 3,
} NoiseSet;

/* splitmix64's finaliser: a bijection with full avalanche. */
static inline guint64
mix64 (guint64 z)
{
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  return z ^ (z >> 31);
}

#define GOLDEN G_GUINT64_CONSTANT (0x9e3779b97f4a7c15)

/* The key of a row block of one dataset; values are keyed from it. */
static guint64
noise_row_key (guint32  seed,
               NoiseSet set,
               guint    row)
{
  return mix64 (mix64 ((guint64) seed + GOLDEN) ^ ((guint64) set << 40 | row));
}

typedef struct
{
  guint64 key;
  guint64 k;
} Draws;

static inline void
draws_init (Draws   *d,
            guint64  row_key,
            gsize    index)
{
  d->key = mix64 (row_key + (guint64) index * G_GUINT64_CONSTANT (0xd1b54a32d192ed03));
  d->k = 0;
}

/* Uniform in [0, 1), 53 bits. */
static inline double
draw_uniform (Draws *d)
{
  return (mix64 (d->key + ++d->k * GOLDEN) >> 11) * 0x1.0p-53;
}

/* Rounded `mean`, or a Poisson draw around it when `d` is given: Knuth's
 * exact method below 30 counts (from `d`'s draws), else the normal
 * approximation mean + √mean · z with the standard normal `z`. */
static guint16
counts (double  mean,
        Draws  *d,
        double  z)
{
  double v = mean;

  if (d != NULL && mean > 0)
    {
      if (mean < 30.0)
        {
          double l = exp (-mean), prod = draw_uniform (d);
          guint k = 0;

          while (prod > l)
            {
              k++;
              prod *= draw_uniform (d);
            }
          v = k;
        }
      else
        v = mean + sqrt (mean) * z;
    }
  return (guint16) CLAMP (floor (v + 0.5), 0.0, 65535.0);
}

/* n values of the row block of `set` at `row`, each of mean means[i] (or
 * `level` for all when means is NULL), rounded or drawn.  Values go in
 * pairs (2k, 2k + 1) that share one Box–Muller draw (its cosine and sine
 * half), so that the logarithm and the trigonometry are paid once per two
 * values. */
static void
make_counts (const TomoPhantomParams *params,
             NoiseSet                 set,
             guint                    row,
             const double            *means,
             double                   level,
             gsize                    n,
             guint16                 *out)
{
  guint64 row_key = noise_row_key (params->seed, set, row);
  guint64 pair_key = mix64 (row_key ^ G_GUINT64_CONSTANT (0x5851f42d4c957f2d));

  for (gsize i = 0; i < n; i += 2)
    {
      guint m = MIN (2, n - i);
      double mean[2], z[2] = { 0, 0 };

      for (guint j = 0; j < m; j++)
        mean[j] = means != NULL ? means[i + j] : level;
      if (!params->noise)
        {
          for (guint j = 0; j < m; j++)
            out[i + j] = counts (mean[j], NULL, 0);
          continue;
        }
      if (mean[0] >= 30.0 || (m == 2 && mean[1] >= 30.0))
        {
          Draws d;
          double u1, u2, r;

          draws_init (&d, pair_key, i / 2);
          u1 = draw_uniform (&d);
          u2 = draw_uniform (&d);
          r = sqrt (-2.0 * log (1.0 - u1));
          z[0] = r * cos (2.0 * G_PI * u2);
          z[1] = r * sin (2.0 * G_PI * u2);
        }
      for (guint j = 0; j < m; j++)
        {
          Draws d = { 0, 0 };

          /* Dim values draw their own uniforms. */
          if (mean[j] < 30.0)
            draws_init (&d, row_key, i + j);
          out[i + j] = counts (mean[j], &d, z[j]);
        }
    }
}

/* ---------------------------------------------------------------------------
 * Rows in parallel
 *
 * Each detector row — line integrals, mean counts, the counts with their
 * noise, and the row's flats and darks — is made by a pool of threads into
 * a ring of slots, a few rows ahead of the thread that writes them. */

typedef struct
{
  const TomoPhantomParams *params;
  const double *theta;
  gsize plane;           /* n_proj × width */
  guint n_slots;
  double **mean;         /* per slot: line integrals, then mean counts */
  guint16 **counts;      /* per slot: projections, then flats, then darks */
  gint64 *ready;         /* per slot: the row it holds, or −1 */
  GThreadPool *pool;
  GMutex lock;
  GCond cond;
} RowMaker;

static void
row_maker_run (gpointer data,
               gpointer user_data)
{
  RowMaker *m = user_data;
  guint row = GPOINTER_TO_UINT (data) - 1;
  guint slot = row % m->n_slots;
  const TomoPhantomParams *params = m->params;
  double gain = params->flat_level - params->dark_level;
  double *mean = m->mean[slot];
  guint16 *out = m->counts[slot];
  gsize n_flat = (gsize) params->n_flats * params->width;
  gsize n_dark = (gsize) params->n_darks * params->width;

  tomo_phantom_sinogram (params, m->theta, row, mean);
  for (gsize i = 0; i < m->plane; i++)
    mean[i] = params->dark_level + gain * exp (-mean[i]);
  make_counts (params, NOISE_DATA, row, mean, 0, m->plane, out);
  make_counts (params, NOISE_FLAT, row, NULL, params->flat_level, n_flat, out + m->plane);
  make_counts (params, NOISE_DARK, row, NULL, params->dark_level, n_dark,
               out + m->plane + n_flat);

  g_mutex_lock (&m->lock);
  m->ready[slot] = row;
  g_cond_broadcast (&m->cond);
  g_mutex_unlock (&m->lock);
}

static void
row_maker_push (RowMaker *m,
                guint     row)
{
  if (row < m->params->height)
    g_thread_pool_push (m->pool, GUINT_TO_POINTER (row + 1), NULL);
}

static RowMaker *
row_maker_new (const TomoPhantomParams *params,
               const double            *theta,
               guint                    n_threads)
{
  RowMaker *m = g_new0 (RowMaker, 1);
  gsize n_counts;

  m->params = params;
  m->theta = theta;
  m->plane = (gsize) params->n_proj * params->width;
  n_counts = m->plane + (gsize) (params->n_flats + params->n_darks) * params->width;
  m->n_slots = MIN (2 * MAX (n_threads, 1), params->height);
  m->mean = g_new0 (double *, m->n_slots);
  m->counts = g_new0 (guint16 *, m->n_slots);
  m->ready = g_new (gint64, m->n_slots);
  for (guint s = 0; s < m->n_slots; s++)
    {
      m->mean[s] = g_new (double, m->plane);
      m->counts[s] = g_new (guint16, n_counts);
      m->ready[s] = -1;
    }
  g_mutex_init (&m->lock);
  g_cond_init (&m->cond);
  m->pool = g_thread_pool_new (row_maker_run, m, MAX (n_threads, 1), TRUE, NULL);
  for (guint s = 0; s < m->n_slots; s++)
    row_maker_push (m, s);
  return m;
}

/* Waits for `row` and returns its counts: projections (n_proj × width),
 * then flats, then darks. */
static const guint16 *
row_maker_take (RowMaker *m,
                guint     row)
{
  guint slot = row % m->n_slots;

  g_mutex_lock (&m->lock);
  while (m->ready[slot] != row)
    g_cond_wait (&m->cond, &m->lock);
  g_mutex_unlock (&m->lock);
  return m->counts[slot];
}

/* The slot of `row` is free again: start the row that reuses it. */
static void
row_maker_release (RowMaker *m,
                   guint     row)
{
  g_mutex_lock (&m->lock);
  m->ready[row % m->n_slots] = -1;
  g_mutex_unlock (&m->lock);
  row_maker_push (m, row + m->n_slots);
}

static void
row_maker_free (RowMaker *m)
{
  /* Waits for the rows being computed; queued ones are dropped. */
  g_thread_pool_free (m->pool, TRUE, TRUE);
  for (guint s = 0; s < m->n_slots; s++)
    {
      g_free (m->mean[s]);
      g_free (m->counts[s]);
    }
  g_free (m->mean);
  g_free (m->counts);
  g_free (m->ready);
  g_mutex_clear (&m->lock);
  g_cond_clear (&m->cond);
  g_free (m);
}

static gboolean
check_params (const TomoPhantomParams *params,
              const char              *path,
              GError                 **error)
{
  const char *what = NULL;
  double value = 0;

  if (params->width < 2)
    what = "width", value = params->width;
  else if (params->height < 1)
    what = "height", value = params->height;
  else if (params->n_proj < 1)
    what = "number of projections", value = params->n_proj;
  else if (!isfinite (params->angle_range_deg) || params->angle_range_deg <= 0)
    what = "angle range", value = params->angle_range_deg;
  else if (!isfinite (params->center) || params->center < 0 || params->center > params->width - 1.0)
    what = "centre", value = params->center;
  else if (params->object_width > 4 * params->width)
    what = "object width (pixels, at most 4 × the detector width)", value = params->object_width;
  else if (!isfinite (params->tilt_deg) || fabs (params->tilt_deg) > 10.0)
    what = "axis tilt (degrees, at most ±10)", value = params->tilt_deg;
  else if (!isfinite (params->max_attenuation) || params->max_attenuation < 0)
    what = "maximum attenuation", value = params->max_attenuation;
  else if (!isfinite (params->dark_level) || params->dark_level < 0 || params->dark_level > 65535)
    what = "dark level", value = params->dark_level;
  else if (!isfinite (params->flat_level) || params->flat_level <= params->dark_level
           || params->flat_level > 65535)
    what = "flat level", value = params->flat_level;
  else if ((guint) params->kind > TOMO_PHANTOM_POINTS)
    what = "phantom kind", value = params->kind;

  if (what != NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
                   "Cannot write phantom “%s”: invalid %s %g", path, what, value);
      return FALSE;
    }
  return TRUE;
}

/* Creates a uint16 dataset (n, height, width) chunked by whole detector rows
 * over many projections, so one sinogram row is a few chunk reads. */
static hid_t
create_counts_dataset (hid_t       file,
                       const char *name,
                       hsize_t     n,
                       hsize_t     height,
                       hsize_t     width)
{
  hsize_t dims[3] = { n, height, width };
  hsize_t chunk[3] = { MAX (MIN (n, MAX (1, (1 << 19) / width)), 1), 1, width };
  hid_t space = H5Screate_simple (3, dims, NULL);
  hid_t dcpl = H5Pcreate (H5P_DATASET_CREATE);
  hid_t dset;

  H5Pset_chunk (dcpl, 3, chunk);
  dset = H5Dcreate2 (file, name, H5T_STD_U16LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose (dcpl);
  H5Sclose (space);
  return dset;
}

/* Writes rows (n, 1, width) at detector row `row`. */
static gboolean
write_row (hid_t          dset,
           hsize_t        n,
           hsize_t        row,
           hsize_t        width,
           const guint16 *data)
{
  hsize_t start[3] = { 0, row, 0 }, count[3] = { n, 1, width };
  hid_t fspace = H5Dget_space (dset);
  hid_t mspace = H5Screate_simple (3, count, NULL);
  herr_t status;

  H5Sselect_hyperslab (fspace, H5S_SELECT_SET, start, NULL, count, NULL);
  status = H5Dwrite (dset, H5T_NATIVE_UINT16, mspace, fspace, H5P_DEFAULT, data);
  H5Sclose (mspace);
  H5Sclose (fspace);
  return status >= 0;
}

gboolean
tomo_phantom_write_dxchange (const TomoPhantomParams *params,
                             const char              *path,
                             GError                 **error)
{
  g_autofree double *theta = NULL;
  g_autofree double *theta_deg = NULL;
  g_autoptr(TomoOutput) output = NULL;
  hid_t file = -1, group = -1, data = -1, white = -1, dark = -1;
  const char *failed = NULL;
  RowMaker *maker = NULL;
  guint w, h, n, n_threads;

  g_return_val_if_fail (params != NULL, FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_params (params, path, error))
    return FALSE;

  w = params->width;
  h = params->height;
  n = params->n_proj;
  n_threads = params->n_threads > 0 ? params->n_threads : (guint) g_get_num_processors ();

  theta = g_new (double, n);
  theta_deg = g_new (double, n);
  angles_or_default (params, NULL, theta);
  for (guint p = 0; p < n; p++)
    theta_deg[p] = params->angle_range_deg * p / n;
  if (params->angles_deg != NULL)
    for (guint p = 0; p < n; p++)
      {
        theta_deg[p] = params->angles_deg[p];
        theta[p] = theta_deg[p] * G_PI / 180.0;
      }

  output = tomo_output_open (path, NULL, error);
  if (output == NULL)
    return FALSE;
  /* HDF5 reads back what it writes (the file is also opened again below):
   * on /dev/null that fails, and libhdf5 1.10 then crashes at exit. */
  if (tomo_output_is_in_place (output))
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write phantom “%s”: it is not a regular file, and an HDF5 file must "
                   "be one (HDF5 reads back what it writes)", path);
      return FALSE;
    }

  H5E_BEGIN_TRY
  {
    /* Created, closed and opened again: H5F_ACC_TRUNC truncates the (empty)
     * temporary file, and on ext4 the first close() after a truncation to
     * zero writes every dirty page out and waits — for a 17 GB scan,
     * seconds; closing the fresh file spends that on nothing. */
    file = H5Fcreate (tomo_output_get_write_path (output), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file >= 0 && H5Fclose (file) >= 0)
      file = H5Fopen (tomo_output_get_write_path (output), H5F_ACC_RDWR, H5P_DEFAULT);
    else
      file = -1;
    if (file < 0)
      {
        failed = "create the file";
        goto out;
      }

    group = H5Gcreate2 (file, "/exchange", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (group < 0)
      {
        failed = "create /exchange";
        goto out;
      }
    H5Gclose (group);
    group = -1;

    data = create_counts_dataset (file, "/exchange/data", n, h, w);
    white = params->n_flats > 0
              ? create_counts_dataset (file, "/exchange/data_white", params->n_flats, h, w)
              : 0;
    dark = params->n_darks > 0
             ? create_counts_dataset (file, "/exchange/data_dark", params->n_darks, h, w)
             : 0;
    if (data < 0 || white < 0 || dark < 0)
      {
        failed = "create the datasets in /exchange";
        goto out;
      }

    maker = row_maker_new (params, theta, n_threads);
    for (guint row = 0; row < h; row++)
      {
        const guint16 *proj = row_maker_take (maker, row);
        const guint16 *flats = proj + (gsize) n * w;
        const guint16 *darks = flats + (gsize) params->n_flats * w;

        if (!write_row (data, n, row, w, proj))
          failed = "write /exchange/data";
        else if (params->n_flats > 0 && !write_row (white, params->n_flats, row, w, flats))
          failed = "write /exchange/data_white";
        else if (params->n_darks > 0 && !write_row (dark, params->n_darks, row, w, darks))
          failed = "write /exchange/data_dark";
        if (failed != NULL)
          goto out;
        row_maker_release (maker, row);
      }

    if (!_tomo_hdf5_write_doubles (file, "/exchange/theta", n, theta_deg))
      {
        failed = "write /exchange/theta";
        goto out;
      }

    /* The truth, for tests and benchmarks that check a found centre. */
    group = H5Gcreate2 (file, "/process", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (group >= 0)
      {
        H5Gclose (group);
        group = H5Gcreate2 (file, "/process/tomolive", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      }
    if (group < 0
        || !_tomo_hdf5_write_doubles (group, "center", 0, &params->center)
        || !_tomo_hdf5_write_doubles (group, "tilt", 0, &params->tilt_deg)
        || !_tomo_hdf5_write_doubles (group, "max_attenuation", 0, &params->max_attenuation))
      {
        failed = "write /process/tomolive";
        goto out;
      }

  out:
    g_clear_pointer (&maker, row_maker_free);
    if (group > 0)
      H5Gclose (group);
    if (data > 0)
      H5Dclose (data);
    if (white > 0)
      H5Dclose (white);
    if (dark > 0)
      H5Dclose (dark);
    if (file >= 0 && H5Fclose (file) < 0 && failed == NULL)
      failed = "close the file";
  }
  H5E_END_TRY;

  if (failed != NULL)
    {
      g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE,
                   "Cannot write phantom “%s”: could not %s", path, failed);
      return FALSE;   /* freeing the output removes the incomplete file */
    }
  return tomo_output_commit (output, error);
}

gboolean
tomo_phantom_write_dxchange_timed (const TomoPhantomParams *params,
                                   const char              *path,
                                   double                  *seconds,
                                   GError                 **error)
{
  gint64 t0 = g_get_monotonic_time ();

  if (!tomo_phantom_write_dxchange (params, path, error))
    return FALSE;
  *seconds = (g_get_monotonic_time () - t0) / 1e6;
  return TRUE;
}
