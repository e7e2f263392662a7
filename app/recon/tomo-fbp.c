/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-fbp"

#include "config.h"

#include <math.h>
#include <string.h>

#include <fftw3.h>

#include "tomo-fbp.h"
#include "tomo-filter.h"
#include "tomo-threads.h"

/* FFTW's planner keeps global state: every plan in the process is created and
 * destroyed under this lock.  Executing a plan on new arrays is thread-safe. */
static GMutex fftw_planner_lock;

/* Filtered rows are copied with this many zeros on each side so the inner
 * back-projection loop needs no bounds checks: every pixel of the loop range
 * reads columns −2 … W+1, and the padding contributes exactly zero. */
#define BP_GUARD 2
/* Truncation of t + BP_TRUNC_OFFSET is floor(t) because t ≥ −BP_GUARD. */
#define BP_TRUNC_OFFSET 8.0f
/* Rows × projections per block: the accumulators of a block of rows stay in
 * L1/L2 while a block of filtered projections streams through. */
#define BP_ROW_BLOCK 32
#define BP_PROJ_BLOCK 64

struct _TomoCpuFbp
{
  guint width;
  guint n_proj;
  guint n_threads;
  guint padded;
  TomoFilterType filter;
  TomoPadMode pad;

  double *angles;
  double *cos_a;
  double *sin_a;

  float *response_f;  /* padded/2 + 1 */
  double *response_d; /* padded/2 + 1 */

  fftwf_plan r2c_f;
  fftwf_plan c2r_f;
  fftw_plan r2c_d;
  fftw_plan c2r_d;
};

TomoCpuFbp *
tomo_cpu_fbp_new (guint          width,
                  guint          n_proj,
                  const double  *angles,
                  TomoFilterType filter,
                  TomoPadMode    pad,
                  guint          n_threads)
{
  TomoCpuFbp *fbp;
  guint n_coeffs;
  double scale;

  g_return_val_if_fail (width > 0, NULL);
  g_return_val_if_fail (n_proj > 0, NULL);
  g_return_val_if_fail ((guint) filter < TOMO_N_FILTERS, NULL);
  g_return_val_if_fail (pad == TOMO_PAD_ZERO || pad == TOMO_PAD_EDGE, NULL);

  fbp = g_new0 (TomoCpuFbp, 1);
  fbp->width = width;
  fbp->n_proj = n_proj;
  fbp->n_threads = n_threads > 0 ? n_threads : MAX (g_get_num_processors (), 1);
  fbp->padded = tomo_filter_padded_width (width);
  fbp->filter = filter;
  fbp->pad = pad;

  fbp->angles = g_new (double, n_proj);
  fbp->cos_a = g_new (double, n_proj);
  fbp->sin_a = g_new (double, n_proj);
  for (guint p = 0; p < n_proj; p++)
    {
      fbp->angles[p] = angles != NULL ? angles[p] : G_PI * p / n_proj;
      fbp->cos_a[p] = cos (fbp->angles[p]);
      fbp->sin_a[p] = sin (fbp->angles[p]);
    }

  n_coeffs = fbp->padded / 2 + 1;
  scale = tomo_fbp_scale (n_proj) / fbp->padded;
  fbp->response_d = g_new (double, n_coeffs);
  fbp->response_f = g_new (float, n_coeffs);
  tomo_filter_response (filter, fbp->padded, scale, fbp->response_d);
  for (guint j = 0; j < n_coeffs; j++)
    fbp->response_f[j] = (float) fbp->response_d[j];

  g_mutex_lock (&fftw_planner_lock);
  {
    float *in_f = fftwf_malloc (sizeof (float) * fbp->padded);
    fftwf_complex *out_f = fftwf_malloc (sizeof (fftwf_complex) * n_coeffs);
    double *in_d = fftw_malloc (sizeof (double) * fbp->padded);
    fftw_complex *out_d = fftw_malloc (sizeof (fftw_complex) * n_coeffs);

    /* FFTW_ESTIMATE: planning must not take seconds in an interactive
     * viewer, and it leaves the arrays alone. */
    fbp->r2c_f = fftwf_plan_dft_r2c_1d (fbp->padded, in_f, out_f, FFTW_ESTIMATE);
    fbp->c2r_f = fftwf_plan_dft_c2r_1d (fbp->padded, out_f, in_f, FFTW_ESTIMATE);
    fbp->r2c_d = fftw_plan_dft_r2c_1d (fbp->padded, in_d, out_d, FFTW_ESTIMATE);
    fbp->c2r_d = fftw_plan_dft_c2r_1d (fbp->padded, out_d, in_d, FFTW_ESTIMATE);

    fftwf_free (in_f);
    fftwf_free (out_f);
    fftw_free (in_d);
    fftw_free (out_d);
  }
  g_mutex_unlock (&fftw_planner_lock);

  return fbp;
}

void
tomo_cpu_fbp_free (TomoCpuFbp *fbp)
{
  if (fbp == NULL)
    return;

  g_mutex_lock (&fftw_planner_lock);
  fftwf_destroy_plan (fbp->r2c_f);
  fftwf_destroy_plan (fbp->c2r_f);
  fftw_destroy_plan (fbp->r2c_d);
  fftw_destroy_plan (fbp->c2r_d);
  g_mutex_unlock (&fftw_planner_lock);

  g_free (fbp->angles);
  g_free (fbp->cos_a);
  g_free (fbp->sin_a);
  g_free (fbp->response_f);
  g_free (fbp->response_d);
  g_free (fbp);
}

guint
tomo_cpu_fbp_get_n_threads (TomoCpuFbp *fbp)
{
  g_return_val_if_fail (fbp != NULL, 0);
  return fbp->n_threads;
}

/* ---------------------------------------------------------------------------
 * A minimal parallel-for: items are handed out in order from an atomic
 * counter.  Which thread takes an item never changes its result, because
 * every item writes its own outputs and sums them in a fixed order. */

typedef void (*WorkFunc) (gpointer data, guint item, gpointer scratch);

typedef struct
{
  WorkFunc func;
  gpointer data;
  guint n_items;
  gint next;
  gsize scratch_size;
} ParallelJob;

static gpointer
parallel_worker (gpointer user_data)
{
  ParallelJob *job = user_data;
  gpointer scratch = job->scratch_size > 0 ? fftw_malloc (job->scratch_size) : NULL;

  for (;;)
    {
      gint item = g_atomic_int_add (&job->next, 1);

      if (item < 0 || (guint) item >= job->n_items)
        break;
      job->func (job->data, (guint) item, scratch);
    }

  if (scratch != NULL)
    fftw_free (scratch);
  return NULL;
}

static void
parallel_for (guint    n_threads,
              guint    n_items,
              gsize    scratch_size,
              WorkFunc func,
              gpointer data)
{
  ParallelJob job = { func, data, n_items, 0, scratch_size };

  _tomo_run_threads ("tomo-fbp", n_threads, n_items, parallel_worker, &job);
}

/* ---------------------------------------------------------------------------
 * Filtering */

/* Padding puts the row at the start of the padded buffer.  Edge mode extends
 * it circularly: the samples just after the row repeat its last value, the
 * samples at the end of the buffer (which the circular convolution sees just
 * before column 0) repeat its first value. */
static guint
edge_split (guint width,
            guint padded)
{
  return width + (padded - width) / 2;
}

/* Scratch per thread: the padded real row, then the spectrum at an offset
 * that keeps the alignment FFTW planned with (plans run on new arrays). */
static gsize
spectrum_offset (TomoCpuFbp *fbp,
                 gsize       elem_size)
{
  return (elem_size * fbp->padded + 63) & ~(gsize) 63;
}

typedef struct
{
  TomoCpuFbp *fbp;
  const float *sino;
  float *filtered_f;
  double *filtered_d;
} FilterJob;

/* filter_row_float and filter_row_double: one projection padded (zeros, or
 * the circular edge of edge_split), transformed, multiplied by the filter's
 * response and transformed back; the same steps in FFTW's float and double
 * precision. */
#define DEFINE_FILTER_ROW(name, real, cplx, exec_r2c, exec_c2r, r2c, c2r, response, filtered) \
  static void                                                                   \
  name (gpointer data,                                                          \
        guint    p,                                                             \
        gpointer scratch)                                                       \
  {                                                                             \
    FilterJob *job = data;                                                      \
    TomoCpuFbp *fbp = job->fbp;                                                 \
    guint w = fbp->width, n = fbp->padded, n_coeffs = n / 2 + 1;                \
    const float *row = job->sino + (gsize) p * w;                               \
    real *buf = scratch;                                                        \
    cplx *spec = (cplx *) ((char *) scratch + spectrum_offset (fbp, sizeof (real))); \
    guint split = edge_split (w, n);                                            \
                                                                                \
    for (guint i = 0; i < w; i++)                                               \
      buf[i] = row[i];                                                          \
    for (guint i = w; i < n; i++)                                               \
      buf[i] = fbp->pad == TOMO_PAD_ZERO ? 0 : (i < split ? row[w - 1] : row[0]); \
                                                                                \
    exec_r2c (fbp->r2c, buf, spec);                                             \
    for (guint j = 0; j < n_coeffs; j++)                                        \
      {                                                                         \
        spec[j][0] *= fbp->response[j];                                         \
        spec[j][1] *= fbp->response[j];                                         \
      }                                                                         \
    exec_c2r (fbp->c2r, spec, buf);                                             \
    memcpy (job->filtered + (gsize) p * w, buf, sizeof (real) * w);             \
  }

DEFINE_FILTER_ROW (filter_row_float, float, fftwf_complex, fftwf_execute_dft_r2c,
                   fftwf_execute_dft_c2r, r2c_f, c2r_f, response_f, filtered_f)
DEFINE_FILTER_ROW (filter_row_double, double, fftw_complex, fftw_execute_dft_r2c,
                   fftw_execute_dft_c2r, r2c_d, c2r_d, response_d, filtered_d)

/* Filters every projection into filtered_f, or into filtered_d when that
 * is NULL. */
static void
filter_rows (TomoCpuFbp  *fbp,
             const float *sino,
             float       *filtered_f,
             double      *filtered_d)
{
  FilterJob job = { fbp, sino, filtered_f, filtered_d };
  gsize scratch;

  g_return_if_fail (fbp != NULL);
  g_return_if_fail (sino != NULL && (filtered_f != NULL || filtered_d != NULL));

  scratch = filtered_f != NULL
    ? spectrum_offset (fbp, sizeof (float)) + sizeof (fftwf_complex) * (fbp->padded / 2 + 1)
    : spectrum_offset (fbp, sizeof (double)) + sizeof (fftw_complex) * (fbp->padded / 2 + 1);
  parallel_for (fbp->n_threads, fbp->n_proj, scratch,
                filtered_f != NULL ? filter_row_float : filter_row_double, &job);
}

void
tomo_cpu_fbp_filter (TomoCpuFbp  *fbp,
                     const float *sino,
                     float       *filtered)
{
  filter_rows (fbp, sino, filtered, NULL);
}

void
tomo_cpu_fbp_filter_double (TomoCpuFbp  *fbp,
                            const float *sino,
                            double      *filtered)
{
  filter_rows (fbp, sino, NULL, filtered);
}

/* ---------------------------------------------------------------------------
 * Back projection, double precision: the plain definition, one pixel at a
 * time, so it is easy to check by reading. */

typedef struct
{
  TomoCpuFbp *fbp;
  const double *filtered_d;
  const float *rows_f; /* guarded (value, difference) pairs, 2·(width + 2·BP_GUARD) per row */
  double center;
  TomoInterp interp;
  TomoRoi roi;
  double *out_d;
  float *out_f;
} BackprojectJob;

static void
backproject_row_double (gpointer data,
                        guint    item,
                        gpointer scratch)
{
  BackprojectJob *job = data;
  TomoCpuFbp *fbp = job->fbp;
  guint w = fbp->width;
  double c = (w - 1) / 2.0;
  guint iy = job->roi.y + item;
  double y = iy - c;
  double *out = job->out_d + (gsize) item * job->roi.width;

  for (guint k = 0; k < job->roi.width; k++)
    {
      double x = (job->roi.x + k) - c;
      double sum = 0.0;

      for (guint p = 0; p < fbp->n_proj; p++)
        {
          const double *row = job->filtered_d + (gsize) p * w;
          double t = x * fbp->cos_a[p] - y * fbp->sin_a[p] + job->center;

          if (job->interp == TOMO_INTERP_NEAREST)
            {
              double i = floor (t + 0.5);

              if (i >= 0 && i <= w - 1)
                sum += row[(gsize) i];
            }
          else
            {
              double i0 = floor (t);
              double fr = t - i0;

              if (i0 >= 0 && i0 <= w - 1)
                sum += (1.0 - fr) * row[(gsize) i0];
              if (i0 + 1 >= 0 && i0 + 1 <= w - 1)
                sum += fr * row[(gsize) i0 + 1];
            }
        }
      out[k] = sum;
    }
}

/* The checks both back projections start with, then their job's common
 * fields; FALSE (with a critical) on a programming error. */
static gboolean
backproject_job_init (BackprojectJob *job,
                      TomoCpuFbp     *fbp,
                      gconstpointer   filtered,
                      double          center,
                      TomoInterp      interp,
                      const TomoRoi  *roi,
                      gconstpointer   out)
{
  g_return_val_if_fail (fbp != NULL, FALSE);
  g_return_val_if_fail (filtered != NULL && out != NULL && roi != NULL, FALSE);
  g_return_val_if_fail ((guint64) roi->x + roi->width <= fbp->width, FALSE);
  g_return_val_if_fail ((guint64) roi->y + roi->height <= fbp->width, FALSE);
  g_return_val_if_fail (isfinite (center), FALSE);

  *job = (BackprojectJob) { .fbp = fbp, .center = center, .interp = interp, .roi = *roi };
  return TRUE;
}

void
tomo_cpu_fbp_backproject_double (TomoCpuFbp    *fbp,
                                 const double  *filtered,
                                 double         center,
                                 TomoInterp     interp,
                                 const TomoRoi *roi,
                                 double        *out)
{
  BackprojectJob job;

  if (!backproject_job_init (&job, fbp, filtered, center, interp, roi, out))
    return;
  job.filtered_d = filtered;
  job.out_d = out;
  parallel_for (fbp->n_threads, roi->height, 0, backproject_row_double, &job);
}

/* ---------------------------------------------------------------------------
 * Back projection, single precision: the fast path.
 *
 * For a fixed row iy and projection p the detector position is linear in
 * the column, t(ix) = t0 + ix·cos θ, so the inner loop runs over the columns
 * of one row with a per-row accumulator.  The column range where the pixel
 * can touch the detector is computed once per (row, projection) with a
 * half-pixel margin; the zero guard columns make the pixels in the margin
 * add exactly 0, so the result equals the definition without branches. */

static inline void
column_range (double  t0,
              double  dt,
              double  w,
              guint   x_begin,
              guint   x_end,
              guint  *lo,
              guint  *hi)
{
  const double t_min = -1.5, t_max = w + 0.5;
  double a, b;

  if (fabs (dt) < 1e-12)
    {
      if (t0 >= t_min && t0 < t_max)
        *lo = x_begin, *hi = x_end;
      else
        *lo = *hi = x_begin;
      return;
    }
  if (dt > 0)
    {
      a = ceil ((t_min - t0) / dt);
      b = ceil ((t_max - t0) / dt);
    }
  else
    {
      a = floor ((t_max - t0) / dt) + 1;
      b = floor ((t_min - t0) / dt) + 1;
    }
  a = CLAMP (a, (double) x_begin, (double) x_end);
  b = CLAMP (b, (double) x_begin, (double) x_end);
  *lo = (guint) a;
  *hi = MAX ((guint) b, *lo);
}

/* The inner loops.  Every pixel is computed by the same sequence of
 * single-precision operations whether it falls in a 4-wide SSE2 group or in
 * the scalar tail (the tail uses the scalar forms of the same instructions,
 * so no FMA contraction can creep in): an ROI or another split over threads
 * gives bit-identical pixels. */
#if defined(__SSE2__)
#include <emmintrin.h>

static inline void
bp_linear (float *restrict acc, const float *restrict pairs,
           float t0f, float dtf, guint lo, guint hi)
{
  const __m128 vt0 = _mm_set1_ps (t0f), vdt = _mm_set1_ps (dtf);
  const __m128 step = _mm_set_ps (3.0f, 2.0f, 1.0f, 0.0f);
  guint ix = lo;

  for (; ix + 4 <= hi; ix += 4)
    {
      __m128 x = _mm_add_ps (_mm_set1_ps ((float) ix), step);
      __m128 t = _mm_add_ps (vt0, _mm_mul_ps (x, vdt));
      __m128i i = _mm_cvttps_epi32 (t);
      __m128 fr = _mm_sub_ps (t, _mm_cvtepi32_ps (i));
      int i0 = _mm_cvtsi128_si32 (i);
      int i1 = _mm_cvtsi128_si32 (_mm_shuffle_epi32 (i, 1));
      int i2 = _mm_cvtsi128_si32 (_mm_shuffle_epi32 (i, 2));
      int i3 = _mm_cvtsi128_si32 (_mm_shuffle_epi32 (i, 3));
      __m128 p01 = _mm_castsi128_ps (
        _mm_unpacklo_epi64 (_mm_loadl_epi64 ((const __m128i *) (pairs + 2 * i0)),
                            _mm_loadl_epi64 ((const __m128i *) (pairs + 2 * i1))));
      __m128 p23 = _mm_castsi128_ps (
        _mm_unpacklo_epi64 (_mm_loadl_epi64 ((const __m128i *) (pairs + 2 * i2)),
                            _mm_loadl_epi64 ((const __m128i *) (pairs + 2 * i3))));
      __m128 v = _mm_shuffle_ps (p01, p23, _MM_SHUFFLE (2, 0, 2, 0));
      __m128 d = _mm_shuffle_ps (p01, p23, _MM_SHUFFLE (3, 1, 3, 1));
      __m128 a = _mm_loadu_ps (acc + ix);

      _mm_storeu_ps (acc + ix, _mm_add_ps (a, _mm_add_ps (v, _mm_mul_ps (fr, d))));
    }
  for (; ix < hi; ix++)
    {
      __m128 x = _mm_set_ss ((float) ix);
      __m128 t = _mm_add_ss (_mm_set_ss (t0f), _mm_mul_ss (x, _mm_set_ss (dtf)));
      int i = _mm_cvtt_ss2si (t);
      __m128 fr = _mm_sub_ss (t, _mm_cvtsi32_ss (_mm_setzero_ps (), i));
      __m128 v = _mm_add_ss (_mm_set_ss (pairs[2 * i]),
                             _mm_mul_ss (fr, _mm_set_ss (pairs[2 * i + 1])));

      acc[ix] = _mm_cvtss_f32 (_mm_add_ss (_mm_set_ss (acc[ix]), v));
    }
}

static inline void
bp_nearest (float *restrict acc, const float *restrict pairs,
            float t0f, float dtf, guint lo, guint hi)
{
  const __m128 vt0 = _mm_set1_ps (t0f + 0.5f), vdt = _mm_set1_ps (dtf);
  const __m128 step = _mm_set_ps (3.0f, 2.0f, 1.0f, 0.0f);
  guint ix = lo;

  for (; ix + 4 <= hi; ix += 4)
    {
      __m128 x = _mm_add_ps (_mm_set1_ps ((float) ix), step);
      __m128i i = _mm_cvttps_epi32 (_mm_add_ps (vt0, _mm_mul_ps (x, vdt)));
      int i0 = _mm_cvtsi128_si32 (i);
      int i1 = _mm_cvtsi128_si32 (_mm_shuffle_epi32 (i, 1));
      int i2 = _mm_cvtsi128_si32 (_mm_shuffle_epi32 (i, 2));
      int i3 = _mm_cvtsi128_si32 (_mm_shuffle_epi32 (i, 3));
      __m128 v = _mm_set_ps (pairs[2 * i3], pairs[2 * i2], pairs[2 * i1], pairs[2 * i0]);

      _mm_storeu_ps (acc + ix, _mm_add_ps (_mm_loadu_ps (acc + ix), v));
    }
  for (; ix < hi; ix++)
    {
      __m128 x = _mm_set_ss ((float) ix);
      int i = _mm_cvtt_ss2si (_mm_add_ss (_mm_set_ss (t0f + 0.5f),
                                          _mm_mul_ss (x, _mm_set_ss (dtf))));

      acc[ix] = _mm_cvtss_f32 (_mm_add_ss (_mm_set_ss (acc[ix]), _mm_set_ss (pairs[2 * i])));
    }
}
#else
/* Portable fallback.  volatile keeps the compiler from fusing the multiply
 * and add on some pixels and not on others. */
static inline void
bp_linear (float *restrict acc, const float *restrict pairs,
           float t0f, float dtf, guint lo, guint hi)
{
  for (guint ix = lo; ix < hi; ix++)
    {
      volatile float xt = (float) ix * dtf;
      float t = t0f + xt;
      int i = (int) t;
      volatile float fd = (t - (float) i) * pairs[2 * i + 1];

      acc[ix] += pairs[2 * i] + fd;
    }
}

static inline void
bp_nearest (float *restrict acc, const float *restrict pairs,
            float t0f, float dtf, guint lo, guint hi)
{
  for (guint ix = lo; ix < hi; ix++)
    {
      volatile float xt = (float) ix * dtf;

      acc[ix] += pairs[2 * (int) ((t0f + 0.5f) + xt)];
    }
}
#endif

static void
backproject_block_float (gpointer data,
                         guint    block,
                         gpointer scratch)
{
  BackprojectJob *job = data;
  TomoCpuFbp *fbp = job->fbp;
  guint w = fbp->width;
  gsize stride = 2 * (w + 2 * BP_GUARD);
  double c = (w - 1) / 2.0;
  guint row_begin = block * BP_ROW_BLOCK;
  guint row_end = MIN (row_begin + BP_ROW_BLOCK, job->roi.height);
  guint x_begin = job->roi.x, x_end = job->roi.x + job->roi.width;

  for (guint r = row_begin; r < row_end; r++)
    memset (job->out_f + (gsize) r * job->roi.width, 0, sizeof (float) * job->roi.width);

  for (guint p_begin = 0; p_begin < fbp->n_proj; p_begin += BP_PROJ_BLOCK)
    {
      guint p_end = MIN (p_begin + BP_PROJ_BLOCK, fbp->n_proj);

      for (guint r = row_begin; r < row_end; r++)
        {
          double y = (job->roi.y + r) - c;
          /* Indexed by absolute column so an ROI computes the same numbers. */
          float *acc = job->out_f + (gsize) r * job->roi.width - x_begin;

          for (guint p = p_begin; p < p_end; p++)
            {
              /* Shifted so that the truncation offset lands on column 0. */
              const float *pairs = job->rows_f + p * stride
                                   + 2 * (BP_GUARD - (gssize) BP_TRUNC_OFFSET);
              double t0 = -c * fbp->cos_a[p] - y * fbp->sin_a[p] + job->center;
              float t0f = (float) t0 + BP_TRUNC_OFFSET;
              float dtf = (float) fbp->cos_a[p];
              guint lo, hi;

              column_range (t0, fbp->cos_a[p], w, x_begin, x_end, &lo, &hi);

              if (job->interp == TOMO_INTERP_LINEAR)
                bp_linear (acc, pairs, t0f, dtf, lo, hi);
              else
                bp_nearest (acc, pairs, t0f, dtf, lo, hi);
            }
        }
    }
}

void
tomo_cpu_fbp_backproject (TomoCpuFbp    *fbp,
                          const float   *filtered,
                          double         center,
                          TomoInterp     interp,
                          const TomoRoi *roi,
                          float         *out)
{
  BackprojectJob job;
  g_autofree float *rows = NULL;
  guint w;
  gsize stride;

  if (!backproject_job_init (&job, fbp, filtered, center, interp, roi, out))
    return;
  /* Each column is stored as (value, next − value) — the paper's "advanced
   * caching" — so linear interpolation is one 8-byte load per pixel. */
  w = fbp->width;
  stride = 2 * (w + 2 * BP_GUARD);
  rows = g_new0 (float, stride * fbp->n_proj);
  for (guint p = 0; p < fbp->n_proj; p++)
    {
      const float *src = filtered + (gsize) p * w;
      float *dst = rows + p * stride + 2 * BP_GUARD;

      dst[-1] = src[0];
      for (guint i = 0; i < w; i++)
        {
          dst[2 * i] = src[i];
          dst[2 * i + 1] = (i + 1 < w ? src[i + 1] : 0.0f) - src[i];
        }
    }

  job.rows_f = rows;
  job.out_f = out;
  parallel_for (fbp->n_threads, (roi->height + BP_ROW_BLOCK - 1) / BP_ROW_BLOCK, 0,
                backproject_block_float, &job);
}

void
tomo_cpu_fbp_reconstruct (TomoCpuFbp            *fbp,
                          const float           *sino,
                          const TomoReconParams *params,
                          float                 *out)
{
  g_autoptr (TomoCpuFbp) other = NULL;
  g_autofree float *filtered = NULL;
  TomoRoi roi;

  g_return_if_fail (fbp != NULL);
  g_return_if_fail (sino != NULL && params != NULL && out != NULL);

  /* The filter is part of the plan; a request for another one gets a
   * temporary plan rather than a silently wrong image. */
  if (params->filter != fbp->filter || params->pad != fbp->pad)
    {
      other = tomo_cpu_fbp_new (fbp->width, fbp->n_proj, fbp->angles, params->filter,
                                params->pad, params->n_threads > 0 ? params->n_threads
                                                                   : fbp->n_threads);
      fbp = other;
    }

  roi = tomo_recon_params_get_roi (params, fbp->width);
  filtered = g_new (float, (gsize) fbp->n_proj * fbp->width);
  tomo_cpu_fbp_filter (fbp, sino, filtered);
  tomo_cpu_fbp_backproject (fbp, filtered, params->center, params->interp, &roi, out);
}
