/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-plane"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-error.h"
#include "tomo-plane.h"
#include "tomo-threads.h"

#define PLANE_MAX_SIDE 32768

/* A vertical plane (v along z) whose u axis is x or y; centred at (cx, cy)
 * and on the z span [z0, z0 + height). */
static void
init_vertical (TomoPlane *plane,
               double     cx,
               double     cy,
               gboolean   u_along_x,
               guint      width,
               guint      z0,
               guint      height)
{
  *plane = (TomoPlane) {
    .centre = { cx, cy, z0 + (height - 1.0) / 2.0 },
    .u = { u_along_x ? 1.0 : 0.0, u_along_x ? 0.0 : 1.0, 0.0 },
    .v = { 0.0, 0.0, 1.0 },
    .width = width,
    .height = height,
  };
}

void
tomo_plane_init_xz (TomoPlane *plane,
                    double     iy,
                    guint      x0,
                    guint      width,
                    guint      z0,
                    guint      height)
{
  g_return_if_fail (plane != NULL);
  init_vertical (plane, x0 + (width - 1.0) / 2.0, iy, TRUE, width, z0, height);
}

void
tomo_plane_init_yz (TomoPlane *plane,
                    double     ix,
                    guint      y0,
                    guint      width,
                    guint      z0,
                    guint      height)
{
  g_return_if_fail (plane != NULL);
  init_vertical (plane, ix, y0 + (width - 1.0) / 2.0, FALSE, width, z0, height);
}

void
tomo_plane_init_oblique (TomoPlane    *plane,
                         const double  centre[3],
                         double        azimuth_deg,
                         double        tilt_deg,
                         guint         width,
                         guint         height,
                         double        spacing)
{
  double a = azimuth_deg * G_PI / 180.0, t = tilt_deg * G_PI / 180.0;
  double ca = cos (a), sa = sin (a), ct = cos (t), st = sin (t);

  g_return_if_fail (plane != NULL && centre != NULL);

  /* Exact zeros at the right angles keep 0° and 90° bit-identical to the
   * XZ and YZ planes. */
  if (fmod (azimuth_deg, 90.0) == 0.0)
    {
      ca = round (ca);
      sa = round (sa);
    }
  if (fmod (tilt_deg, 90.0) == 0.0)
    {
      ct = round (ct);
      st = round (st);
    }

  *plane = (TomoPlane) {
    .centre = { centre[0], centre[1], centre[2] },
    /* Rows stay horizontal; the normal of the untilted plane is (−sin a,
     * cos a, 0) and tilting turns v from z towards it. */
    .u = { spacing * ca, spacing * sa, 0.0 },
    .v = { -spacing * st * sa, spacing * st * ca, spacing * ct },
    .width = width,
    .height = height,
  };
}

gboolean
tomo_plane_is_vertical (const TomoPlane *plane)
{
  double z0 = plane->centre[2] - (plane->height - 1.0) / 2.0 * plane->v[2];

  return plane->u[2] == 0.0 && plane->v[0] == 0.0 && plane->v[1] == 0.0 &&
         plane->v[2] == 1.0 && z0 == floor (z0);
}

gboolean
tomo_plane_validate (const TomoPlane *plane,
                     GError         **error)
{
  g_return_val_if_fail (plane != NULL, FALSE);

  if (plane->width < 1 || plane->height < 1 ||
      plane->width > PLANE_MAX_SIDE || plane->height > PLANE_MAX_SIDE)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Plane size %u × %u: each side must be 1 … %u samples",
                   plane->width, plane->height, PLANE_MAX_SIDE);
      return FALSE;
    }
  for (guint k = 0; k < 3; k++)
    if (!isfinite (plane->centre[k]) || !isfinite (plane->u[k]) || !isfinite (plane->v[k]))
      {
        g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                     "Plane centre (%g, %g, %g) or directions are not finite numbers",
                     plane->centre[0], plane->centre[1], plane->centre[2]);
        return FALSE;
      }
  return TRUE;
}

/* ---------------------------------------------------------------------------
 * The reference: one plane row per work item; per sample its (x, y) and the
 * two detector rows it blends, then projection-major accumulation so a
 * filtered projection row is read once per plane row. */

typedef struct _PlaneJob PlaneJob;

/* A worker's scratch for one plane row, plane->width samples each: x, y
 * centred, the first stored row r0 (−1: no sample), the weight fz of the
 * next one, and the sums. */
typedef struct
{
  double *x, *y;
  gint64 *r0;
  double *fz;
  double *acc;
} PlaneRow;

typedef void (*PlaneRowFunc) (PlaneJob *job, guint j, PlaneRow *row);

struct _PlaneJob
{
  const TomoPlaneSource *src;
  double center;
  TomoInterp interp;
  const TomoPlane *plane;
  const double *cos_a, *sin_a;
  float *out;
  PlaneRowFunc row_func;
  volatile gint next;
};

static inline double
sample_row (const float *row,
            guint        w,
            double       t,
            TomoInterp   interp)
{
  if (interp == TOMO_INTERP_NEAREST)
    {
      double i = floor (t + 0.5);

      return i >= 0 && i <= w - 1 ? row[(gsize) i] : 0.0;
    }
  else
    {
      double i0 = floor (t), fr = t - i0, s = 0.0;

      if (i0 >= 0 && i0 <= w - 1)
        s += (1.0 - fr) * row[(gsize) i0];
      if (i0 + 1 >= 0 && i0 + 1 <= w - 1)
        s += fr * row[(gsize) i0 + 1];
      return s;
    }
}

/* Per sample of plane row j: its position, rows and weight; acc zeroed. */
static void
plane_row_setup (PlaneJob *job,
                 guint     j,
                 PlaneRow *row)
{
  double *x = row->x, *y = row->y, *fz = row->fz, *acc = row->acc;
  gint64 *r0 = row->r0;
  const TomoPlaneSource *src = job->src;
  const TomoPlane *pl = job->plane;
  guint w = src->width, n = pl->width;
  double c = (w - 1) / 2.0, lim = (w - 1) / 2.0 + 1e-9;
  double dj = j - (pl->height - 1) / 2.0;

  for (guint i = 0; i < n; i++)
    {
      double di = i - (n - 1) / 2.0;
      double px = pl->centre[0] + di * pl->u[0] + dj * pl->v[0];
      double py = pl->centre[1] + di * pl->u[1] + dj * pl->v[1];
      double pz = pl->centre[2] + di * pl->u[2] + dj * pl->v[2];
      double zr = pz - src->row_start, z0 = floor (zr);

      x[i] = px - c;
      y[i] = py - c;
      fz[i] = zr - z0;
      r0[i] = (gint64) z0;
      /* Outside the W × W square or the rows held: no sample.  A sample
       * exactly on the last row blends it with weight 1. */
      if (fabs (x[i]) > lim || fabs (y[i]) > lim || zr < -1e-9 ||
          zr > src->n_rows - 1 + 1e-9)
        r0[i] = -1;
      else if (r0[i] == (gint64) src->n_rows - 1 || r0[i] < 0)
        {
          r0[i] = (gint64) round (zr);
          fz[i] = 0.0;
        }
      acc[i] = 0.0;
    }
}

static void
plane_row (PlaneJob *job,
           guint     j,
           PlaneRow *scratch)
{
  const TomoPlaneSource *src = job->src;
  guint w = src->width, n = job->plane->width;
  gsize sino = (gsize) src->n_proj * w;
  double *x = scratch->x, *y = scratch->y, *fz = scratch->fz, *acc = scratch->acc;
  gint64 *r0 = scratch->r0;

  plane_row_setup (job, j, scratch);
  for (guint p = 0; p < src->n_proj; p++)
    {
      double cs = job->cos_a[p], sn = job->sin_a[p];

      for (guint i = 0; i < n; i++)
        {
          const float *row;
          double t;

          if (r0[i] < 0)
            continue;
          t = x[i] * cs - y[i] * sn + job->center;
          row = src->filtered + (gsize) r0[i] * sino + (gsize) p * w;
          if (fz[i] == 0.0)
            acc[i] += sample_row (row, w, t, job->interp);
          else
            acc[i] += (1.0 - fz[i]) * sample_row (row, w, t, job->interp) +
                      fz[i] * sample_row (row + sino, w, t, job->interp);
        }
    }

  for (guint i = 0; i < n; i++)
    job->out[(gsize) j * n + i] = (float) acc[i];
}

static gpointer
plane_worker (gpointer data)
{
  PlaneJob *job = data;
  guint n = job->plane->width;
  g_autofree double *x = g_new (double, n);
  g_autofree double *y = g_new (double, n);
  g_autofree gint64 *r0 = g_new (gint64, n);
  g_autofree double *fz = g_new (double, n);
  g_autofree double *acc = g_new (double, n);
  PlaneRow row = { x, y, r0, fz, acc };

  for (;;)
    {
      gint j = g_atomic_int_add (&job->next, 1);

      if (j < 0 || (guint) j >= job->plane->height)
        break;
      job->row_func (job, (guint) j, &row);
    }
  return NULL;
}

static void
run_plane_job (const TomoPlaneSource *source,
               double                 center,
               TomoInterp             interp,
               const TomoPlane       *plane,
               guint                  n_threads,
               PlaneRowFunc           row_func,
               float                 *out)
{
  PlaneJob job = { 0 };
  g_autofree double *cos_a = NULL;
  g_autofree double *sin_a = NULL;

  g_return_if_fail (source != NULL && plane != NULL && out != NULL);
  g_return_if_fail (source->filtered != NULL && source->angles != NULL);
  g_return_if_fail (source->width > 0 && source->n_proj > 0 && source->n_rows > 0);
  g_return_if_fail (tomo_plane_validate (plane, NULL));
  g_return_if_fail (isfinite (center));

  cos_a = g_new (double, source->n_proj);
  sin_a = g_new (double, source->n_proj);
  for (guint p = 0; p < source->n_proj; p++)
    {
      cos_a[p] = cos (source->angles[p]);
      sin_a[p] = sin (source->angles[p]);
    }
  job = (PlaneJob) { source, center, interp, plane, cos_a, sin_a, out, row_func, 0 };

  _tomo_run_threads ("tomo-plane", n_threads, plane->height, plane_worker, &job);
}

/* ---------------------------------------------------------------------------
 * The fast path.  A plane row with u_z = 0 lies at one z, so it blends the
 * same two detector rows everywhere, and along it the detector position is
 * linear: t(i) = t(0) + i·dt.  For each projection the samples whose t keeps
 * both neighbours on the detector are summed without tests; the few at the
 * detector's edges go through sample_row(). */

static void
plane_row_fast (PlaneJob *job,
                guint     j,
                PlaneRow *scratch)
{
  const TomoPlaneSource *src = job->src;
  const TomoPlane *pl = job->plane;
  guint w = src->width, n = pl->width;
  gsize sino = (gsize) src->n_proj * w;
  const double *x = scratch->x, *y = scratch->y, *fz = scratch->fz;
  const gint64 *r0 = scratch->r0;
  float *acc = (float *) scratch->acc;
  guint ia = n, ib = 0;   /* samples inside the W × W square: [ia, ib) */
  double fzr;
  gint64 r;

  /* Positions, the square and the rows, as the reference computes them. */
  plane_row_setup (job, j, scratch);
  for (guint i = 0; i < n; i++)
    if (r0[i] >= 0)
      {
        ia = MIN (ia, i);
        ib = i + 1;
      }
  for (guint i = 0; i < n; i++)
    acc[i] = 0.0f;
  if (ia >= ib)
    goto done;
  /* The square is convex and the row a line: [ia, ib) has no holes. */
  r = r0[ia];
  fzr = fz[ia];

  for (guint p = 0; p < src->n_proj; p++)
    {
      double cs = job->cos_a[p], sn = job->sin_a[p];
      double t0 = x[ia] * cs - y[ia] * sn + job->center;
      double dt = pl->u[0] * cs - pl->u[1] * sn;
      const float *rows[2] = { src->filtered + (gsize) r * sino + (gsize) p * w, NULL };
      float wts[2] = { (float) (1.0 - fzr), (float) fzr };
      guint fa = ib, fb = ib;   /* fast range: t ∈ [1, W − 2], a sample to spare each side */

      if (fzr > 0.0)
        rows[1] = rows[0] + sino;
      else
        wts[0] = 1.0f;
      if (fabs (dt) < 1e-12)
        {
          if (t0 >= 1.0 && t0 <= w - 2.0)
            fa = ia;
        }
      else
        {
          double lo = ((dt > 0 ? 1.0 : w - 2.0) - t0) / dt;
          double hi = ((dt > 0 ? w - 2.0 : 1.0) - t0) / dt;
          double a = MAX (ceil (lo) + 1, 0.0), b = MIN (floor (hi) - 1, (double) (ib - ia) - 1);

          if (a <= b)
            {
              fa = ia + (guint) a;
              fb = ia + (guint) b + 1;
            }
        }

      /* Edges: the reference's sampling. */
      for (guint i = ia; i < ib; i++)
        {
          double t, v;

          if (i == fa)
            {
              i = fb - 1;
              continue;
            }
          t = t0 + (i - ia) * dt;
          v = sample_row (rows[0], w, t, job->interp);
          if (rows[1] != NULL)
            v = wts[0] * v + wts[1] * sample_row (rows[1], w, t, job->interp);
          acc[i] += (float) v;
        }
      for (guint k = 0; k < 2 && fa < fb && rows[k] != NULL; k++)
        {
          const float *row = rows[k];
          float wt = wts[k], tf0 = (float) (t0 + (fa - ia) * dt), dtf = (float) dt;

          if (job->interp == TOMO_INTERP_LINEAR)
            for (guint i = fa; i < fb; i++)
              {
                float t = tf0 + (float) (i - fa) * dtf;
                int c = CLAMP ((int) t, 0, (int) w - 2);
                float f = t - c;

                acc[i] += wt * (row[c] + f * (row[c + 1] - row[c]));
              }
          else
            for (guint i = fa; i < fb; i++)
              {
                float t = tf0 + (float) (i - fa) * dtf;
                int c = CLAMP ((int) (t + 0.5f), 0, (int) w - 1);

                acc[i] += wt * row[c];
              }
        }
    }

done:
  for (guint i = 0; i < n; i++)
    job->out[(gsize) j * n + i] = acc[i];
}

void
tomo_plane_backproject_reference (const TomoPlaneSource *source,
                                  double                 center,
                                  TomoInterp             interp,
                                  const TomoPlane       *plane,
                                  guint                  n_threads,
                                  float                 *out)
{
  run_plane_job (source, center, interp, plane, n_threads, plane_row, out);
}

void
tomo_plane_backproject (const TomoPlaneSource *source,
                        double                 center,
                        TomoInterp             interp,
                        const TomoPlane       *plane,
                        guint                  n_threads,
                        float                 *out)
{
  run_plane_job (source, center, interp, plane, n_threads,
                 plane->u[2] == 0.0 ? plane_row_fast : plane_row, out);
}
