/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The store's preview volume on the CPU (see tomo-preview.h): the reduced
 * copy of the filtered sinograms, then one back projection of all voxels,
 * slabs shared out among threads.  The GPU's reference.
 */
#define G_LOG_DOMAIN "tomo-recon"

#include "config.h"

#include <math.h>
#include <string.h>

#include "tomo-error.h"
#include "tomo-preview.h"
#include "tomo-threads.h"

void
tomo_preview_geometry_init (TomoPreviewGeometry *g,
                            guint                width,
                            guint                n_proj,
                            guint                nx,
                            guint                ny,
                            guint                nz)
{
  guint n = MAX (MAX (nx, ny), 1);

  g->nx = nx;
  g->ny = ny;
  g->nz = nz;
  g->bin = MAX (width / n, 1);
  g->step = MAX (n_proj / (2 * n), 1);
}

gboolean
tomo_preview_geometry_check (const TomoPreviewGeometry *g,
                             GError                   **error)
{
  if (g->nx == 0 || g->ny == 0 || g->nz == 0 || g->nx > 4096 || g->ny > 4096 || g->nz > 4096 ||
      g->bin == 0 || g->step == 0)
    {
      g_set_error (error, TOMO_RECON_ERROR, TOMO_RECON_ERROR_INVALID_PARAM,
                   "Preview volume %u × %u × %u (bins of %u columns, projection step %u): "
                   "each side must be 1 to 4096", g->nx, g->ny, g->nz, g->bin, g->step);
      return FALSE;
    }
  return TRUE;
}

typedef struct
{
  const TomoPlaneSource *src;
  const TomoPreviewGeometry *g;
  double center;
  TomoInterp interp;
  guint Wb, Pb;
  const double *cos_a, *sin_a;   /* of the projections used */
  float *out;
  gint next;
} PreviewJob;

/* Slab k: the reduced rows (Pb × Wb, one zero bin each side and one more
 * on the right), then every voxel of the slab. */
static void
preview_slab (PreviewJob *job,
              guint       k,
              double     *binned,
              double     *acc)
{
  const TomoPlaneSource *src = job->src;
  const TomoPreviewGeometry *g = job->g;
  const guint W = src->width, R = src->n_rows, wp = job->Wb + 3;
  const guint r0 = (guint) ((guint64) k * R / g->nz);
  const guint r1 = MAX (r0 + 1, (guint) ((guint64) (k + 1) * R / g->nz));
  const double c = (W - 1) / 2.0, off = (g->bin - 1) / 2.0;
  const double weight = (double) src->n_proj / job->Pb;
  const double sx = (double) W / g->nx, sy = (double) W / g->ny;

  for (guint pb = 0; pb < job->Pb; pb++)
    {
      double *row = binned + (gsize) pb * wp;

      row[0] = row[job->Wb + 1] = row[job->Wb + 2] = 0.0;
      for (guint cb = 0; cb < job->Wb; cb++)
        {
          guint c0 = cb * g->bin, c1 = MIN (c0 + g->bin, W);
          double sum = 0.0;

          for (guint r = r0; r < r1; r++)
            {
              const float *s = src->filtered + ((gsize) r * src->n_proj + (gsize) pb * g->step) * W;

              for (guint col = c0; col < c1; col++)
                sum += s[col];
            }
          row[cb + 1] = sum / ((double) g->bin * (r1 - r0));
        }
    }
  /* Projection by projection over the slab's voxels: along a voxel row
   * the binned position is linear in ix. */
  memset (acc, 0, (gsize) g->nx * g->ny * sizeof *acc);
  for (guint pb = 0; pb < job->Pb; pb++)
    {
      const double *row = binned + (gsize) pb * wp + 1;   /* bin −1 at row[−1] */
      const double cs = job->cos_a[pb], sn = job->sin_a[pb];
      const double dtb = sx * cs / g->bin, hi = job->Wb;
      const double x0 = 0.5 * sx - 0.5 - c;

      for (guint iy = 0; iy < g->ny; iy++)
        {
          const double y = (iy + 0.5) * sy - 0.5 - c;
          const double base = (x0 * cs - y * sn + job->center - off) / g->bin;
          double *a = acc + (gsize) iy * g->nx;

          /* tb ≥ −1: truncating tb + 1 is the floor, without a libm call. */
          if (job->interp == TOMO_INTERP_LINEAR)
            for (guint ix = 0; ix < g->nx; ix++)
              {
                double tb = CLAMP (base + ix * dtb, -1.0, hi);
                gssize k = (gssize) (tb + 1.0) - 1;
                const double *r = row + k;

                a[ix] += r[0] + (tb - k) * (r[1] - r[0]);
              }
          else
            for (guint ix = 0; ix < g->nx; ix++)
              {
                double tb = CLAMP (base + ix * dtb, -1.0, hi);

                a[ix] += row[(gssize) (tb + 1.5) - 1];
              }
        }
    }
  for (gsize i = 0; i < (gsize) g->nx * g->ny; i++)
    job->out[(gsize) k * g->nx * g->ny + i] = (float) (acc[i] * weight);
}

static gpointer
preview_worker (gpointer data)
{
  PreviewJob *job = data;
  g_autofree double *binned = g_new (double, (gsize) job->Pb * (job->Wb + 3));
  g_autofree double *acc = g_new (double, (gsize) job->g->nx * job->g->ny);

  for (;;)
    {
      gint k = g_atomic_int_add (&job->next, 1);

      if (k < 0 || (guint) k >= job->g->nz)
        break;
      preview_slab (job, (guint) k, binned, acc);
    }
  return NULL;
}

void
tomo_preview_backproject (const TomoPlaneSource     *src,
                          const TomoPreviewGeometry *g,
                          double                     center,
                          TomoInterp                 interp,
                          guint                      n_threads,
                          float                     *out)
{
  g_autofree double *cos_a = NULL;
  g_autofree double *sin_a = NULL;
  PreviewJob job;

  g_return_if_fail (src != NULL && g != NULL && out != NULL && src->filtered != NULL);
  g_return_if_fail (tomo_preview_geometry_check (g, NULL) && isfinite (center));
  g_return_if_fail (src->width > 0 && src->n_proj > 0 && src->n_rows > 0);

  job = (PreviewJob) { src, g, center, interp, (src->width + g->bin - 1) / g->bin,
                       (src->n_proj + g->step - 1) / g->step, NULL, NULL, out, 0 };
  cos_a = g_new (double, job.Pb);
  sin_a = g_new (double, job.Pb);
  for (guint pb = 0; pb < job.Pb; pb++)
    {
      cos_a[pb] = cos (src->angles[pb * g->step]);
      sin_a[pb] = sin (src->angles[pb * g->step]);
    }
  job.cos_a = cos_a;
  job.sin_a = sin_a;

  _tomo_run_threads ("tomo-preview", n_threads, g->nz, preview_worker, &job);
}
