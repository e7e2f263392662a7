/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The tilted plane back projector of the volume store (tomo-gpu-store.cu
 * holds the store, the dispatch and the other kernels).
 *
 * For planes whose rows are horizontal (u_z = 0) with |u| ≤ 1 and |v| ≤ 1
 * — the oblique planes of tomo_plane_init_oblique (an azimuth and a tilt),
 * XY, and vertical planes between stored rows.  Along a plane row the
 * stored-row coordinate z = z0 + j·v_z is constant, and the detector
 * position of sample (i, j) for projection θ is
 *   t = t_A + (i − i_A)·d + (j − j_A)·e,  d = u·n_θ,  e = v·n_θ
 * with n_θ = (cos θ, −sin θ): linear in both plane directions.
 *
 * A block of TILT_X = 256 threads takes a tile of 256 samples of TILT_K = 8
 * consecutive plane rows (thread i: sample i of each row).  The tile's rows
 * lie between stored rows r_lo … r_lo + n − 1 with n ≤ 8·|v_z| + 2 (≤ 10);
 * per projection their samples need one window of at most 256 + 8 + 8
 * bins (the tile's four corners bound it).  Per stage of G projections the
 * windows of the n stored rows are copied raw with cp.async (16 bytes per
 * unit, zeros off the detector and past the last row) into a ring of
 * TILT_NS = 3 stages — two in flight while one is summed, as the tile
 * kernel's ring path does for XZ — so the bins read are about those of an
 * XZ plane (n / 8 ≈ 1.1 times), not those of two rows blended per plane row.
 *
 * Each thread then takes, per projection and plane row, its bin k and the
 * two linear weights once (a float add of 1.5·2²³ rounds t to an integer
 * on the FP units: no conversion instructions), and interpolates both
 * stored rows the plane row lies between.  The blend between the two rows
 * uses a weight constant along the plane row, so it is deferred: two float
 * sums per plane row (lower and upper stored row), blended once at the end
 * with the row weight fz in float — the same value as blending every
 * projection, exactly in real arithmetic, and only float roundings in
 * between.  Projections whose whole tile stays on the detector ([−1, W])
 * skip the clamp of t.
 *
 * Widths whose projection rows are not 16-byte aligned copy single bins
 * (cp.async of 4 bytes for float, plain loads for half): correct, slower.
 * Nearest interpolation takes rint(t) (ties to even; the reference rounds
 * ties up).
 *
 * On the H100 (2048² planes of a 2048³ store, docs/PERFORMANCE.md): oblique
 * 30°/15° 12.1 ms from the half store (rows kernel 15.6 ms), XY 9.4 ms
 * (15.3 ms); float 14.9 / 10.4 ms.  On XZ it takes 9.5 ms where the tile
 * kernel's ring path, copying about the same bins, takes 6.3 ms: the time
 * goes to the per-sample instructions and shared loads, not the copy.
 *
 * The pairs path (TOMO_PLANE_TILT_PATH=pairs, linear interpolation; `auto`
 * stays on the path above): 2 projections a stage, the ring sized for the
 * stored rows the plane's v_z lets a tile need (ceil(7·|v_z|) + 3), and
 * once per stage, after the copy, each stored row's window turned into
 * float pairs (m, δ) = ((b_k + b_{k+1}) / 2, b_k − b_{k+1}); a sample then
 * takes m + d0·δ per stored row: one 8-byte shared load, an add and an
 * FMA, where the path above takes two 2-byte loads, two conversions and two
 * FMAs (about 14 PTX instructions per sample, row and projection instead
 * of 21; one more barrier a stage).  pairs-half: the pairs as half2 (half
 * the shared wavefronts, m and δ rounded to half).  On the H100: 19.6 and
 * 17.3 ms for the oblique plane.
 *
 * The bulk path (TOMO_PLANE_TILT_PATH=bulk-h2, below): bulk copies per
 * window and exact half2 pairs (b_k, b_{k+1}) built once a stage; 12.1 ms
 * for the oblique plane (the raw path 12.1 ms in the same run), XY 9.95 ms
 * (9.38), so `auto` stays on the raw path.  Variants measured and removed
 * (docs/PERFORMANCE.md): float pairs (s, δ) with 11 PTX instructions per
 * sample-row in the sums (17.4 ms: their 16-byte stores 64 bytes apart
 * meet a quarter of the bank quads), deeper rings with fewer blocks per SM
 * (14.0–14.8 ms).
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>

#include <cuda_fp16.h>

#include "tomo-gpu-store-private.h"

#define TILT_X 256
#define TILT_K 8
#define TILT_NR (TILT_K + 2)   /* stored rows a tile can need with |v_z| ≤ 1 (and float z) */
#define TILT_NS 3
#define TILT_MARGIN 0.0625f    /* the window's slack for float rounding of t, in bins */
/* x + 1.5·2²³ rounds x to an integer in the low mantissa bits (|x| < 2²²). */
#define TILT_MAGIC 12582912.0f
#define TILT_MAGIC_BITS 0x4B400000

/* Bins per window: 255·|d| + 7·|e| + 2·margin ≤ 262.125 apart, so at most
 * 264 + VEC − 1 + 1 bins from an aligned start; 8 more of slack. */
#define TILT_WP(VEC) ((264 + (VEC) + 8 + (VEC) - 1) / (VEC) * (VEC))

/* A projection's window within a stage: t0 is t of the tile's first
 * sample and row relative to lo (minus 0.5 for linear interpolation), d
 * and e its steps per sample and per plane row, [cmin, cmax] the clamp
 * (the detector and the window, same shift), inner: no clamp needed. */
typedef struct
{
  float t0, d, e, cmin, cmax;
  int lo, nb, inner;
} TiltMeta;

/* A bin as float: float itself, or __half's conversion (__half2float). */
template <typename T>
__device__ static inline float
tilt_value (T v)
{
  return static_cast<float> (v);
}

/* The pairs path (TOMO_PLANE_TILT_PATH=pairs, linear interpolation): once
 * per stage, each stored row's window becomes float pairs (m, δ) per bin k,
 * m = (b_k + b_{k+1}) / 2 and δ = b_k − b_{k+1}, so that the linear
 * interpolation w0·b_k + w1·b_{k+1} with w0 = 1/2 + d0, w1 = 1/2 − d0 (d0 =
 * k − t as below) is m + d0·δ: one 8-byte shared load, one add and one FMA
 * per sample, row and projection instead of two 2-byte loads, two
 * conversions and two FMAs — the pairs are built once per stored row (about
 * 5 rows for 8 plane rows at tilt 15°) rather than once per plane row.
 * From a half store m and δ are exact in float.
 * TOMO_PLANE_TILT_PATH=pairs-half (half store): the pairs held as half2,
 * 4-byte loads (half the shared-memory wavefronts, two conversions more;
 * m and δ rounded to half, the sums in float).  Pairs k (m0, δ0) and, with
 * both, k + 1 (m1, δ1) at o (k even). */
typedef struct __align__ (8)
{
  __half2 a, b;
} TiltHalfPairs;

template <typename P>
__device__ static inline void
tilt_put_pairs (P *o, float m0, float d0, float m1, float d1, bool both)
{
  if constexpr (std::is_same_v<P, __half2>)
    {
      if (both)
        *(TiltHalfPairs *) o = TiltHalfPairs { __floats2half2_rn (m0, d0),
                                               __floats2half2_rn (m1, d1) };
      else
        *o = __floats2half2_rn (m0, d0);
    }
  else if (both)
    *(float4 *) o = make_float4 (m0, d0, m1, d1);
  else
    *o = make_float2 (m0, d0);
}

/* Bins k and k + 1 of a window as float; aligned: k even in a row of
 * 16-byte units (one 4- or 8-byte load). */
template <bool ALIGNED>
__device__ static inline float2
tilt_two (const __half *p)
{
  if (ALIGNED)
    return __half22float2 (*(const __half2 *) p);
  return make_float2 (__half2float (p[0]), __half2float (p[1]));
}

template <bool ALIGNED>
__device__ static inline float2
tilt_two (const float *p)
{
  if (ALIGNED)
    return *(const float2 *) p;
  return make_float2 (p[0], p[1]);
}

/* The stored rows of a tile's plane rows jA … jA + 7 (warp 0 of the
 * block): row q lies between rows rlo + ro[q] and the one above, with
 * weight fz[q] on the upper (as rows_for_z; ro kept inside a stage of nrs
 * rows), nr the rows a stage copies (0: no plane row within the rows
 * held), bit q of valid set for the rows held. */
typedef struct
{
  int ro[TILT_K];
  float fz[TILT_K];
  int rlo, nr;
  unsigned int valid;
} TiltRows;

__device__ static inline void
tilt_rows (const PlaneArgs &a,
           int              jA,
           int              nrs,
           bool             two,
           TiltRows        *t)
{
  const int tid = threadIdx.x;
  int r0 = -1, lo, hi;
  float fz = 0.0f;

  if (tid < TILT_K && jA + tid < a.h)
    {
      int r;
      float f;

      if (rows_for_z (a.z0 + (jA + tid) * a.vz, a.n_rows, &r, &f))
        {
          r0 = r;
          fz = f;
        }
    }
  lo = r0 >= 0 ? r0 : INT_MAX;
  hi = r0 >= 0 ? r0 : -1;
  for (int s = 1; s < 32; s <<= 1)
    {
      lo = min (lo, __shfl_xor_sync (0xffffffffu, lo, s));
      hi = max (hi, __shfl_xor_sync (0xffffffffu, hi, s));
    }
  const unsigned int valid = __ballot_sync (0xffffffffu, r0 >= 0);

  if (tid < TILT_K)
    {
      /* n ≤ TILT_NR for |v_z| ≤ 1 (the launcher checks); kept inside the
       * stage regardless. */
      t->ro[tid] = r0 >= 0 ? min (r0 - lo, nrs - (two ? 2 : 1)) : 0;
      t->fz[tid] = fz;
    }
  if (tid == 0)
    {
      t->rlo = lo;
      t->nr = hi < 0 ? 0 : min (hi - lo + (two ? 2 : 1), nrs);
      t->valid = valid;
    }
}

/* Projection cs's window for the tile at (iA, jA), bins from a multiple of
 * VEC (see TiltMeta). */
template <int VEC, int LINEAR>
__device__ static inline TiltMeta
tilt_window (const PlaneArgs &a,
             float2           cs,
             int              iA,
             int              jA)
{
  const float W = (float) a.W;
  const float d = fmaf (a.ux, cs.x, -a.uy * cs.y);
  const float e = fmaf (a.vx, cs.x, -a.vy * cs.y);
  const float xA = a.x0 + iA * a.ux + jA * a.vx, yA = a.y0 + iA * a.uy + jA * a.vy;
  const float tA = fmaf (xA, cs.x, fmaf (-yA, cs.y, a.center));
  /* All 256 threads' samples (those past a short tile's end too: they are
   * not written, but read inside the window). */
  const float di = (TILT_X - 1) * d, dj = (TILT_K - 1) * e;
  const float tmin = tA + fminf (di, 0.0f) + fminf (dj, 0.0f) - TILT_MARGIN;
  const float tmax = tA + fmaxf (di, 0.0f) + fmaxf (dj, 0.0f) + TILT_MARGIN;
  const float tlo = fminf (fmaxf (tmin, -1.0f), W), thi = fminf (fmaxf (tmax, -1.0f), W);
  const float shift = LINEAR ? 0.5f : 0.0f;
  constexpr int WP = TILT_WP (VEC);
  int lo = (int) floorf (tlo);
  TiltMeta m;

  lo = lo >= 0 ? lo / VEC * VEC : -((-lo + VEC - 1) / VEC) * VEC;
  m.lo = lo;
  m.nb = min ((int) floorf (thi) + 2 - lo, WP);
  m.t0 = tA - lo - shift;
  m.d = d;
  m.e = e;
  m.cmin = tlo - lo - shift;
  m.cmax = fminf (thi - lo, WP - 2.0f) - shift;
  m.inner = tmin >= -1.0f && tmax <= W && (int) floorf (thi) + 2 - lo <= WP;
  return m;
}

/* The tile's results: row q blended with fz[q] (two) and scaled, zero
 * outside the slice or the rows held. */
__device__ static inline void
tilt_write (const PlaneArgs &a,
            const TiltRows  &rows,
            int              iA,
            int              jA,
            unsigned int     inside,
            bool             two,
            float            scale,
            const float     *acc_a,
            const float     *acc_b,
            float           *out)
{
  const int tid = threadIdx.x;

#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    if (iA + tid < a.w && jA + q < a.h)
      {
        const float v = two ? fmaf (rows.fz[q], acc_b[q] - acc_a[q], acc_a[q]) : acc_a[q];

        out[(size_t) (jA + q) * a.w + iA + tid] = inside & (1u << q) ? v * scale : 0.0f;
      }
}

/* Bit q: sample tid of plane row q is written and inside the slice. */
__device__ static inline unsigned int
tilt_inside (const PlaneArgs &a,
             const TiltRows  &rows,
             int              iA,
             int              jA)
{
  const int tid = threadIdx.x;
  unsigned int inside = 0;

#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    {
      const float x = a.x0 + (iA + tid) * a.ux + (jA + q) * a.vx;
      const float y = a.y0 + (iA + tid) * a.uy + (jA + q) * a.vy;

      if (iA + tid < a.w && jA + q < a.h && (rows.valid >> q & 1u) && fabsf (x) <= a.lim &&
          fabsf (y) <= a.lim)
        inside |= 1u << q;
    }
  return inside;
}

/* A tile's start: the sums zeroed, the tile's stored rows in *rs (every
 * thread, after a barrier); FALSE when no plane row of the tile lies
 * within the rows held (uniform; zeros written). */
__device__ static inline bool
tilt_begin (const PlaneArgs &a,
            int              iA,
            int              jA,
            int              nrs,
            bool             two,
            TiltRows        *rs,
            float           *acc_a,
            float           *acc_b,
            float           *out)
{
#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    {
      acc_a[q] = 0.0f;
      acc_b[q] = 0.0f;
    }
  if ((int) threadIdx.x < 32)
    tilt_rows (a, jA, nrs, two, rs);
  __syncthreads ();
  if (rs->nr == 0)
    {
      tilt_write (a, *rs, iA, jA, 0u, false, 0.0f, acc_a, acc_b, out);
      return false;
    }
  return true;
}

/* Bytes of the ring of raw windows with nrs rows per projection, rounded
 * up to 16 (the pairs follow it). */
template <typename T, int VEC, int G>
__host__ __device__ static inline size_t
tilt_ring_bytes (int nrs)
{
  return ((size_t) TILT_NS * G * nrs * TILT_WP (VEC) * sizeof (T) + 15) / 16 * 16;
}

/* One projection of a stage for the 8 plane rows of this thread: pa[q]
 * offsets (elements) of row q's lower stored row in the stage's window.
 * E: the stored type, or with PAIRS the pairs' (float2, __half2); WP: the
 * row stride in E. */
template <typename E, int WP, bool TWO, int LINEAR, bool CLAMP, bool PAIRS = false>
__device__ static inline void
tilt_project (const E        *win,
              const TiltMeta &m,
              float           tb,
              const int      *ro,
              float          *acc_a,
              float          *acc_b)
{
#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    {
      float t = fmaf ((float) q, m.e, tb);

      if (CLAMP)
        t = fminf (fmaxf (t, m.cmin), m.cmax);

      const float tm = __fadd_rn (t, TILT_MAGIC);
      const E *pa = win + ro[q] + (__float_as_int (tm) - TILT_MAGIC_BITS);

      if constexpr (PAIRS)
        {
          const float d0 = __fsub_rn (__fsub_rn (tm, TILT_MAGIC), t);
          float2 va, vb;

          if constexpr (std::is_same_v<E, __half2>)
            va = __half22float2 (pa[0]);
          else
            va = pa[0];
          acc_a[q] = fmaf (d0, va.y, acc_a[q] + va.x);
          if (TWO)
            {
              if constexpr (std::is_same_v<E, __half2>)
                vb = __half22float2 (pa[WP]);
              else
                vb = pa[WP];
              acc_b[q] = fmaf (d0, vb.y, acc_b[q] + vb.x);
            }
        }
      else if (LINEAR)
        {
          /* t here is t − 0.5: k = rint(t − 0.5) is floor(t), or floor(t) − 1
           * with weight 1 on k + 1 when t is an integer; d0 = k − (t − 0.5). */
          const float d0 = __fsub_rn (__fsub_rn (tm, TILT_MAGIC), t);
          const float w0 = 0.5f + d0, w1 = 0.5f - d0;

          acc_a[q] = fmaf (w1, tilt_value (pa[1]), fmaf (w0, tilt_value (pa[0]), acc_a[q]));
          if (TWO)
            acc_b[q] = fmaf (w1, tilt_value (pa[WP + 1]), fmaf (w0, tilt_value (pa[WP]), acc_b[q]));
        }
      else
        {
          acc_a[q] += tilt_value (pa[0]);
          if (TWO)
            acc_b[q] += tilt_value (pa[WP]);
        }
    }
}

/* The hybrid's texture projections: x of the tile's first sample and
 * row in texture coordinates (bin k's centre at k + 0.5), its steps per
 * sample and per plane row, and y (projection p's texel centre). */
__device__ static inline float4
tilt_tex_meta (const PlaneArgs &a,
               float2           cs,
               int              iA,
               int              jA,
               int              p)
{
  const float xA = a.x0 + iA * a.ux + jA * a.vx, yA = a.y0 + iA * a.uy + jA * a.vy;

  return make_float4 (fmaf (xA, cs.x, fmaf (-yA, cs.y, a.center)) + 0.5f,
                      fmaf (a.ux, cs.x, -a.uy * cs.y), fmaf (a.vx, cs.x, -a.vy * cs.y),
                      p + 0.5f);
}

/* One texture projection for the 8 plane rows of this thread: the lower
 * and upper stored row's values, linearly filtered along the detector by
 * the texture unit (8-bit weights; zero off the detector, as the ring's
 * zero fill). */
__device__ static inline void
tilt_tex_fetch (const cudaTextureObject_t (*handle)[2],
                float4                      m,
                float                      *va,
                float                      *vb)
{
  const float xb = fmaf ((float) threadIdx.x, m.y, m.x);

#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    {
      const float x = fmaf ((float) q, m.z, xb);

      va[q] = tex2D<float> (handle[q][0], x, m.w);
      vb[q] = tex2D<float> (handle[q][1], x, m.w);
    }
}

/* T: the stored type; VEC bins per copy (16 bytes, or 1); G projections
 * per stage; TWO: some plane row lies between two stored rows; PAIRS: the
 * pairs path (linear only; 1: float2 pairs, 2: half2), whose ring holds
 * nrl rows per projection (the launcher's bound for the plane's v_z) and
 * is followed by the stage's pairs [G][nrl][MDP]; 0: nrl is TILT_NR.
 * Three blocks per SM (four with G = 2 of a half store: 34 KiB of bins,
 * at most 64 registers). */
template <typename T, int VEC, int G, bool TWO, int LINEAR, int PAIRS, int TX = 0>
__global__ static void __launch_bounds__ (TILT_X, G == 2 && sizeof (T) == 2 ? 4 : 3)
plane_tilt_kernel (const T                   *rows,
                   const float2              *trig,
                   PlaneArgs                  a,
                   int                        nrl,
                   const cudaTextureObject_t *tex,
                   float                     *out)
{
  static_assert (!PAIRS || LINEAR, "pairs: linear interpolation");
  static_assert (TX == 0 || (LINEAR && !PAIRS && TWO && TX <= G), "hybrid: linear, raw, TX ≤ G");
  constexpr int GS = G + TX;                    /* projections per stage */
  constexpr int WP = TILT_WP (VEC);
  constexpr int WV = WP / VEC;
  constexpr int BYTES = VEC * (int) sizeof (T);
  constexpr int MDP = (WP + 1) / 2 * 2;         /* pairs per row: rows of 16-byte multiples */
  const int nrs = PAIRS ? nrl : TILT_NR;        /* rows per projection in a stage */
  const int STAGE = G * nrs * WP;               /* bins per stage */
  extern __shared__ __align__ (16) unsigned char tilt_smem[];
  T *ring = (T *) tilt_smem;                    /* [TILT_NS][G][nrs][WP] */
  using P = std::conditional_t<PAIRS == 2, __half2, float2>;
  P *pairs = (P *) (tilt_smem + (PAIRS ? tilt_ring_bytes<T, VEC, G> (nrs) : 0));
  __shared__ TiltMeta meta[TILT_NS + 1][G];
  __shared__ TiltRows rs;
  /* The hybrid (TX > 0): per stage TX projections more, fetched through
   * the texture objects of the stored rows (x0, d, e, y of each; the
   * objects of each plane row's two stored rows). */
  __shared__ float4 tmeta[TILT_NS + 1][TX > 0 ? TX : 1];
  __shared__ __align__ (16) cudaTextureObject_t thandle[TX > 0 ? TILT_K : 1][2];
  const int tid = threadIdx.x, iA = blockIdx.x * TILT_X, jA = blockIdx.y * TILT_K;
  const int n_stages = (a.P + GS - 1) / GS;
  float acc_a[TILT_K], acc_b[TILT_K];
  int ro[TILT_K];

  if (!tilt_begin (a, iA, jA, nrs, TWO, &rs, acc_a, acc_b, out))
    return;
  if constexpr (TX > 0)
    if (tid < TILT_K)
      {
        /* Plane rows outside the rows held read row rlo (their sums are
         * not written); the upper row of the last row held is that row
         * again (weight 0). */
        const int r = rs.rlo + rs.ro[tid];

        thandle[tid][0] = tex[r];
        thandle[tid][1] = tex[min (r + 1, a.n_rows - 1)];
      }

  const unsigned int inside = tilt_inside (a, rs, iA, jA);

#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    ro[q] = rs.ro[q] * (PAIRS ? MDP : WP);

  const int rlo = rs.rlo, nr = rs.nr;

  /* Windows of a stage: thread g < G takes projection stage·G + g. */
  auto plan = [&] (int stage) {
    const int p = stage * GS + tid;

    if (tid < G && stage < n_stages && p < a.P)
      meta[stage % (TILT_NS + 1)][tid] = tilt_window<VEC, LINEAR> (a, __ldg (trig + p), iA, jA);
    if constexpr (TX > 0)
      if (tid >= G && tid < GS && stage < n_stages && p < a.P)
        tmeta[stage % (TILT_NS + 1)][tid - G] = tilt_tex_meta (a, __ldg (trig + p), iA, jA, p);
  };

  /* The windows of a stage's nr stored rows; zeros off the detector and
   * past the last row held.  Unit u: (row r, projection g, bins v·VEC …). */
  auto issue = [&] (int stage) {
    if (stage < n_stages)
      {
        T *buf = ring + (size_t) (stage % TILT_NS) * STAGE;
        const int p0 = stage * GS;

        for (int u = tid; u < nr * G * WV; u += TILT_X)
          {
            const int v = u % WV, rg = u / WV, g = rg % G, r = rg / G;
            const TiltMeta &m = meta[stage % (TILT_NS + 1)][g];

            if (p0 + g < a.P && v * VEC < m.nb)
              {
                const int col = m.lo + v * VEC;
                const bool on = col >= 0 && col + VEC <= a.W && rlo + r < a.n_rows;
                const T *src = on ? rows + (size_t) (rlo + r) * a.row_elems +
                                      (size_t) (p0 + g) * a.W + col
                                  : rows;
                T *dst = buf + ((size_t) g * nrs + r) * WP + v * VEC;

                if constexpr (BYTES == 16 || BYTES == 4)
                  copy_async<BYTES> (dst, src, on ? BYTES : 0);
                else
                  *dst = on ? *src : (T) 0.0f;
              }
          }
      }
    asm volatile ("cp.async.commit_group;\n" ::);
  };

  /* Stage s in shared memory: each projection's 8 plane rows. */
  auto sum = [&] (int s) {
    const T *buf = ring + (size_t) (s % TILT_NS) * STAGE;
    const int ng = min (G, a.P - s * GS);

    if constexpr (PAIRS)
      {
        /* The pairs of bins k < nb − 1 (the sums read k ≤ nb − 2, as the
         * other path reads bins ≤ nb − 1), two bins a thread; the
         * previous stage's sums are done (the ring's barrier). */
        constexpr int UPR = MDP / 2;

#pragma unroll
        for (int g = 0; g < G; g++)
          if (g < ng)
            {
              const int nb = meta[s % (TILT_NS + 1)][g].nb;
              const T *raw = buf + (size_t) g * nrs * WP;
              P *dst = pairs + (size_t) g * nrs * MDP;

              for (int u = tid; u < nr * UPR; u += TILT_X)
                {
                  const int r = u / UPR, k = 2 * (u - r * UPR);

                  if (k + 1 < nb)
                    {
                      const T *src = raw + r * WP + k;
                      const float2 b = tilt_two<(VEC > 1)> (src);
                      const bool both = k + 2 < nb;
                      const float b2 = both ? tilt_value (src[2]) : 0.0f;

                      tilt_put_pairs (dst + r * MDP + k, 0.5f * (b.x + b.y), b.x - b.y,
                                      0.5f * (b.y + b2), b.y - b2, both);
                    }
                }
            }
        __syncthreads ();
      }

    /* The sums: from the pairs, or the raw windows. */
    using E = std::conditional_t<PAIRS != 0, P, T>;
    constexpr int RS = PAIRS ? MDP : WP;
    const E *base = PAIRS ? (const E *) pairs : (const E *) buf;

    const int nt = TX > 0 ? min (TX, a.P - s * GS - G) : 0;   /* texture projections */

#pragma unroll
    for (int g = 0; g < G; g++)
      {
        /* The hybrid: texture projection h's fetches issued before ALU
         * projection h·G / TX and added after it, so the texture units
         * work while the sums from shared memory run. */
        float ta[TILT_K], tb2[TILT_K];
        int h = -1;

#pragma unroll
        for (int hh = 0; hh < TX; hh++)
          if (hh * G / (TX > 0 ? TX : 1) == g)
            h = hh;
        if (TX > 0 && h >= 0 && h < nt)
          tilt_tex_fetch (thandle, tmeta[s % (TILT_NS + 1)][h], ta, tb2);
        if (g < ng)
          {
            const TiltMeta m = meta[s % (TILT_NS + 1)][g];
            const E *win = base + (size_t) g * nrs * RS;
            const float tb = fmaf ((float) tid, m.d, m.t0);

            if (m.inner)
              tilt_project<E, RS, TWO, LINEAR, false, PAIRS != 0> (win, m, tb, ro, acc_a, acc_b);
            else
              tilt_project<E, RS, TWO, LINEAR, true, PAIRS != 0> (win, m, tb, ro, acc_a, acc_b);
          }
        if (TX > 0 && h >= 0 && h < nt)
#pragma unroll
          for (int q = 0; q < TILT_K; q++)
            {
              acc_a[q] += ta[q];
              acc_b[q] += tb2[q];
            }
      }
  };

  cp_async_ring<TILT_NS> (n_stages, plan, issue, sum);
  tilt_write (a, rs, iA, jA, inside, TWO, a.inv_scale, acc_a, acc_b, out);
}

/* ------------------------------------------------------------------------
 * The bulk path (TOMO_PLANE_TILT_PATH=bulk-h2; linear interpolation from a
 * half store of 16-byte rows; not `auto`: on the H100 as fast as the raw
 * path for the oblique plane, slower for XY and vertical planes between
 * rows, docs/PERFORMANCE.md).  The raw windows come in as one bulk copy
 * (cp.async.bulk) per stored row and projection, issued by lanes of every
 * warp and counted on an mbarrier per ring slot (NS slots of G
 * projections), instead of 16-byte cp.async units with their address
 * arithmetic per unit.  Once a stage is in, the block turns each stored
 * row's window into pairs (b_k, b_{k+1}) as half2 — byte permutes of the
 * 4-byte words, exact — 8 bins a thread, so that a sample takes both bins
 * of a stored row in one 4-byte shared load (one 2-byte load each on the
 * raw path).  With k = rint(t − 1/2) and D = 2·(k − (t − 1/2)) the linear
 * interpolation is ((1 + D)·b_k + (1 − D)·b_{k+1}) / 2 (the factor 1/2 goes
 * into the final scale). */

/* The bulk path's shared memory: the ring of raw windows [NS][G][nrl][WP]
 * (+ 16 bytes: a unit's last pair reads one bin past its window), then the
 * stage's pairs [G][TILT_NR][WP] (a projection's pairs at a constant
 * offset). */
template <int G, int NS>
__host__ __device__ static inline size_t
tilt_bulk_ring_bytes (int nrl)
{
  return ((size_t) NS * G * nrl * TILT_WP (8) * sizeof (__half) + 16 + 15) / 16 * 16;
}

template <int G, int NS>
__host__ __device__ static inline size_t
tilt_bulk_smem (int nrl)
{
  return tilt_bulk_ring_bytes<G, NS> (nrl) + (size_t) G * TILT_NR * TILT_WP (8) * sizeof (__half2);
}

__device__ static inline unsigned int
tilt_saddr (const void *p)
{
  return (unsigned int) __cvta_generic_to_shared (p);
}

/* A bulk copy of bytes (a multiple of 16) into shared memory, counted on
 * the mbarrier at bar (expected first). */
__device__ static inline void
tilt_bulk_copy (void *dst, const void *src, unsigned int bytes, unsigned int bar)
{
  asm volatile ("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n"
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%2], [%3], %1, [%0];\n"
                :: "r" (bar), "r" (bytes), "r" (tilt_saddr (dst)), "l" (src) : "memory");
}

/* Returns once the mbarrier at bar has completed its phase of parity. */
__device__ static inline void
tilt_bar_wait (unsigned int bar, unsigned int parity)
{
  unsigned int done = 0;

  while (!done)
    asm volatile ("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                  " selp.u32 %0, 1, 0, p;\n}\n" : "=r" (done) : "r" (bar), "r" (parity) : "memory");
}

/* One projection's pairs for the 8 plane rows of this thread: base[q] the
 * shared byte address of row q's lower stored row's pairs, less the magic
 * number's bits times 4, GOFS the projection's offset from it (bytes); RS
 * the bytes between stored rows.  t2 = 2·(t − 1/2) of plane row 0, e2 its
 * step per row. */
template <int RS, unsigned int GOFS, bool CLAMP>
__device__ static inline void
tilt_project_bulk (const unsigned int *base,
                   float               t2,
                   float               e2,
                   float               c2min,
                   float               c2max,
                   float              *acc_a,
                   float              *acc_b)
{
#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    {
      float t = fmaf ((float) q, e2, t2);

      if (CLAMP)
        t = fminf (fmaxf (t, c2min), c2max);

      /* k = rint(t / 2), D = 2·(k − t / 2) */
      const float tm = fmaf (t, 0.5f, TILT_MAGIC);
      const float D = fmaf (__fsub_rn (tm, TILT_MAGIC), 2.0f, -t);
      const unsigned int adr = base[q] + (unsigned int) __float_as_int (tm) * 4u;
      const float w0 = 1.0f + D, w1 = 1.0f - D;
      unsigned int ha, hb;

      asm volatile ("ld.shared.b32 %0, [%1+%2];" : "=r" (ha) : "r" (adr), "n" (GOFS));
      asm volatile ("ld.shared.b32 %0, [%1+%2];" : "=r" (hb) : "r" (adr), "n" (GOFS + RS));
      const float2 pa = __half22float2 (*(const __half2 *) &ha);
      const float2 pb = __half22float2 (*(const __half2 *) &hb);

      acc_a[q] = fmaf (w1, pa.y, fmaf (w0, pa.x, acc_a[q]));
      acc_b[q] = fmaf (w1, pb.y, fmaf (w0, pb.x, acc_b[q]));
    }
}

/* Unit v of a window (bins 8v … 8v + 8, 16-byte aligned) as the pairs
 * (b_k, b_{k+1}) of k = 8v … 8v + 7. */
__device__ static inline void
tilt_unit_pairs (const __half *src,
                 __half2      *dst,
                 int           v)
{
  const uint4 w = *(const uint4 *) src;
  const unsigned int n = *(const unsigned int *) (src + 8);
  const uint4 x = make_uint4 (w.x, __byte_perm (w.x, w.y, 0x5432), w.y,
                              __byte_perm (w.y, w.z, 0x5432));
  const uint4 y = make_uint4 (w.z, __byte_perm (w.z, w.w, 0x5432), w.w,
                              __byte_perm (w.w, n, 0x5432));
  /* Units v … v + 7 of a row 32 bytes apart: units 4 … 7 store their
   * second half first, so that the 8 lanes of a 16-byte store meet 8
   * different bank quads. */
  const bool c = (v >> 2) & 1;

  *(uint4 *) (dst + (c ? 4 : 0)) = c ? y : x;
  *(uint4 *) (dst + (c ? 0 : 4)) = c ? x : y;
}

/* G projections per stage, NS stages (one lane per window: G · nrl ≤
 * 256); at least BLOCKS blocks an SM (registers). */
template <int G, int NS, int BLOCKS>
__global__ static void __launch_bounds__ (TILT_X, BLOCKS)
plane_tilt_bulk_kernel (const __half *rows,
                        const float2 *trig,
                        PlaneArgs     a,
                        int           nrl,
                        float        *out)
{
  constexpr int VEC = 8;
  constexpr int WP = TILT_WP (VEC);
  constexpr int NW = TILT_X / 32;
  static_assert (G * TILT_NR <= 32 * NW, "one lane per window");
  static_assert (G == 1 || G == 2, "one or two projections a stage");
  static_assert (WP % VEC == 0, "whole units");
  extern __shared__ __align__ (16) unsigned char tilt_smem[];
  __half *ring = (__half *) tilt_smem;
  __half2 *pairs = (__half2 *) (tilt_smem + tilt_bulk_ring_bytes<G, NS> (nrl));
  __shared__ TiltMeta meta[NS + 1][G];
  __shared__ TiltRows rs;
  __shared__ __align__ (8) unsigned long long bars[NS];
  const int tid = threadIdx.x, iA = blockIdx.x * TILT_X, jA = blockIdx.y * TILT_K;
  const int n_stages = (a.P + G - 1) / G, STAGE = G * nrl * WP;
  float acc_a[TILT_K], acc_b[TILT_K];
  unsigned int base[TILT_K];

  if (!tilt_begin (a, iA, jA, nrl, true, &rs, acc_a, acc_b, out))
    return;
  if (tid < NS)
    {
      /* One arrival a stage per warp, after the warp's copies. */
      asm volatile ("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r" (tilt_saddr (&bars[tid])),
                    "n" (NW) : "memory");
      asm volatile ("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }

  const unsigned int inside = tilt_inside (a, rs, iA, jA);
  const int rlo = rs.rlo, nr = rs.nr;

  auto plan = [&] (int stage) {
    const int p = stage * G + tid;

    if (tid < G && stage < n_stages && p < a.P)
      meta[stage % (NS + 1)][tid] = tilt_window<VEC, 1> (a, __ldg (trig + p), iA, jA);
  };

  /* Window w = g + G·r (stored row r, projection g): lane w / NW of warp
   * w % NW, so that the copies' issue is spread over the warps; one
   * arrival per warp. */
  auto issue = [&] (int stage) {
    if (stage >= n_stages)
      return;

    const unsigned int bar = tilt_saddr (&bars[stage % NS]);
    const int w = (tid >> 5) + NW * (tid & 31);
    const int g = w % G, r = w / G, p = stage * G + g;

    if (r < nr && p < a.P)
      {
        const TiltMeta &m = meta[stage % (NS + 1)][g];
        const int nu = (m.nb + VEC - 1) / VEC;
        const bool held = rlo + r < a.n_rows;
        /* Units [v0, v1) on the detector (lo is a multiple of VEC). */
        const int v0 = held ? min (max (-m.lo / VEC, 0), nu) : nu;
        const int v1 = held ? max (min ((a.W - m.lo) / VEC, nu), v0) : nu;
        __half *dst = ring + (size_t) (stage % NS) * STAGE + ((size_t) g * nrl + r) * WP;

        for (int v = 0; v < v0; v++)
          *(uint4 *) (dst + v * VEC) = make_uint4 (0, 0, 0, 0);
        for (int v = v1; v < nu; v++)
          *(uint4 *) (dst + v * VEC) = make_uint4 (0, 0, 0, 0);
        /* The block's reads of this slot (its last stage, before the
         * ring's barrier) and the stores above, before the copy's writes. */
        asm volatile ("fence.proxy.async.shared::cta;\n" ::: "memory");
        if (v1 > v0)
          tilt_bulk_copy (dst + v0 * VEC,
                          rows + (size_t) (rlo + r) * a.row_elems + (size_t) p * a.W + m.lo +
                            v0 * VEC,
                          (unsigned int) (v1 - v0) * 16u, bar);
      }
    __syncwarp ();
    if ((tid & 31) == 0)
      asm volatile ("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r" (bar) : "memory");
  };

  /* Stage s uses slot s % NS for the (s / NS)-th time: that phase. */
  auto wait = [&] (int s) {
    tilt_bar_wait (tilt_saddr (&bars[s % NS]), (s / NS) & 1);
  };

  const unsigned int pairs_a = tilt_saddr (pairs);

#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    base[q] = pairs_a + (unsigned int) (rs.ro[q] * WP * 4) - (unsigned int) TILT_MAGIC_BITS * 4u;

  auto sum = [&] (int s) {
    const __half *raw = ring + (size_t) (s % NS) * STAGE;
    const int ng = min (G, a.P - s * G);

    /* The pairs of bins k ≤ nb − 2 (the sums read no others), VEC a unit:
     * units (g, r, v) with v < nu_g, numbered over both projections so
     * that every thread has work; r = u / nu_g through a float reciprocal
     * (exact: u < 2¹⁰, (u + 1/2) / nu_g is ≥ 1/72 from an integer).  The
     * last stage's sums are done (the ring's barrier). */
    {
      const int nu0 = (meta[s % (NS + 1)][0].nb + VEC - 2) / VEC;
      const int nu1 = G > 1 && ng > 1 ? (meta[s % (NS + 1)][G - 1].nb + VEC - 2) / VEC : 0;
      const float inv0 = __frcp_rn ((float) nu0), inv1 = __frcp_rn ((float) max (nu1, 1));
      const int cnt0 = nr * nu0, total = cnt0 + nr * nu1;

      for (int u = tid; u < total; u += TILT_X)
        {
          const int g = G > 1 && u >= cnt0 ? 1 : 0;
          const int uu = g ? u - cnt0 : u, nu = g ? nu1 : nu0;
          const int r = (int) (((float) uu + 0.5f) * (g ? inv1 : inv0)), v = uu - r * nu;

          tilt_unit_pairs (raw + (g * nrl + r) * WP + v * VEC,
                           pairs + (g * TILT_NR + r) * WP + v * VEC, v);
        }
    }
    __syncthreads ();

    /* Projection g's sums (g a constant: its pairs' offset goes into the
     * loads). */
    auto project = [&] (auto gc) {
      constexpr int g = decltype (gc)::value;
      constexpr unsigned int GOFS = (unsigned int) (g * TILT_NR * WP * 4);
      const TiltMeta m = meta[s % (NS + 1)][g];
      const float t2 = 2.0f * fmaf ((float) tid, m.d, m.t0);

      if (m.inner)
        tilt_project_bulk<WP * 4, GOFS, false> (base, t2, 2.0f * m.e, 0.0f, 0.0f, acc_a, acc_b);
      else
        tilt_project_bulk<WP * 4, GOFS, true> (base, t2, 2.0f * m.e, 2.0f * m.cmin, 2.0f * m.cmax,
                                               acc_a, acc_b);
    };

    project (std::integral_constant<int, 0> {});
    if constexpr (G > 1)
      if (ng > 1)
        project (std::integral_constant<int, 1> {});
  };

  stage_ring<NS> (n_stages, plan, issue, wait, sum);
  /* Every thread past its last wait: the barriers' memory given back
   * invalidated (the next block on this SM may use it otherwise). */
  __syncthreads ();
  if (tid < NS)
    asm volatile ("mbarrier.inval.shared::cta.b64 [%0];\n" :: "r" (tilt_saddr (&bars[tid]))
                  : "memory");
  tilt_write (a, rs, iA, jA, inside, true, 0.5f * a.inv_scale, acc_a, acc_b, out);
}

template <int G, int NS, int BLOCKS>
static gboolean
launch_tilt_bulk (const __half *rows, const float2 *trig, const PlaneArgs &a, float *out,
                  cudaStream_t stream, GError **error)
{
  /* The stored rows a tile can need (as the pairs path's bound below). */
  const int nrl = MIN (TILT_NR, (int) ceilf (7.0f * fabsf (a.vz) + 0.01f) + 3);
  const size_t smem = tilt_bulk_smem<G, NS> (nrl);
  dim3 grid ((a.w + TILT_X - 1) / TILT_X, (a.h + TILT_K - 1) / TILT_K);
  auto kern = plane_tilt_bulk_kernel<G, NS, BLOCKS>;

  if (!TOMO_CUDA_CHECK (cudaFuncSetAttribute (kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int) smem), error))
    return FALSE;
  kern<<<grid, TILT_X, smem, stream>>> (rows, trig, a, nrl, out);
  return TOMO_CUDA_CHECK_LAUNCH ("plane tilt kernel (bulk)", error);
}

/* G: projections per stage.  Half, 16-byte units: 4 (3 × 67 KiB of bins,
 * three blocks per SM), or 2 with TOMO_PLANE_TILT_STAGE=2 (the bench's
 * variant: four blocks per SM); float: 2.  On the H100 (half store, 2048²
 * planes) 8 projections per stage, one block per SM, took 1.5 times as
 * long as 4: the kernel wants warps in flight.  pairs: the pairs path
 * (linear interpolation; G = 2), its ring and pairs sized for the stored
 * rows a tile can need: 8 plane rows z0 + j·v_z span 7·|v_z| (plus float
 * rounding, < 0.01), so their lower rows differ by at most
 * ceil(7·|v_z| + 0.01) + 1 (rows_for_z may round up by one) and the tile
 * needs that + 2 rows (5 at tilt 15°, 4 for XY; ≤ TILT_NR). */
template <typename T, int VEC, int G, int PAIRS = 0, int TX = 0>
static gboolean
launch_tilt (const T *rows, const float2 *trig, const PlaneArgs &a, int interp, float *out,
             cudaStream_t stream, GError **error, const cudaTextureObject_t *tex = NULL)
{
  const int nrl = PAIRS ? MIN (TILT_NR, (int) ceilf (7.0f * fabsf (a.vz) + 0.01f) + 3) : TILT_NR;
  const size_t smem = tilt_ring_bytes<T, VEC, G> (nrl) +
                      (PAIRS ? (size_t) G * nrl * ((TILT_WP (VEC) + 1) / 2 * 2) *
                                 (PAIRS == 2 ? sizeof (__half2) : sizeof (float2))
                             : 0);
  dim3 grid ((a.w + TILT_X - 1) / TILT_X, (a.h + TILT_K - 1) / TILT_K);
  /* Every plane row on a stored row (integer z, integer step): no blend. */
  const bool two = !(a.z0 == rintf (a.z0) && a.vz == rintf (a.vz));
  auto kern = TX > 0 ? plane_tilt_kernel<T, VEC, G, true, 1, 0, TX>
            : PAIRS ? (two ? plane_tilt_kernel<T, VEC, G, true, 1, PAIRS>
                           : plane_tilt_kernel<T, VEC, G, false, 1, PAIRS>)
            : two ? (interp ? plane_tilt_kernel<T, VEC, G, true, 1, 0>
                            : plane_tilt_kernel<T, VEC, G, true, 0, 0>)
                  : (interp ? plane_tilt_kernel<T, VEC, G, false, 1, 0>
                            : plane_tilt_kernel<T, VEC, G, false, 0, 0>);

  if (!TOMO_CUDA_CHECK (cudaFuncSetAttribute (kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int) smem), error))
    return FALSE;
  kern<<<grid, TILT_X, smem, stream>>> (rows, trig, a, nrl, tex, out);
  return TOMO_CUDA_CHECK_LAUNCH ("plane tilt kernel", error);
}

/* TOMO_PLANE_TILT_TEX (see tomo-gpu-store-private.h): "G:T" as 10·G + T
 * for the splits built (4:1 … 4:4, 2:1, 2:2), 0 for none (unset, "0",
 * anything else). */
int
_tomo_gpu_store_tilt_hybrid_split (void)
{
  const char *v = g_getenv ("TOMO_PLANE_TILT_TEX");
  int g = 0, t = 0;

  if (v == NULL || sscanf (v, "%d:%d", &g, &t) != 2)
    return 0;
  if ((g == 4 && t >= 1 && t <= 4) || (g == 2 && t >= 1 && t <= 2))
    return 10 * g + t;
  return 0;
}

gboolean
_tomo_gpu_store_tilt_hybrid_ok (gboolean half, const PlaneArgs *a, int interp)
{
  /* Linear interpolation from a half store of 16-byte rows, plane rows
   * between stored rows (the kernel blends two). */
  return half && interp == 1 && a->W % 8 == 0 && !(a->z0 == rintf (a->z0) && a->vz == rintf (a->vz)) &&
         _tomo_gpu_store_tilt_hybrid_split () != 0;
}

/* As _tomo_gpu_store_tile_launch (tomo-gpu-store-private.h).
 * TOMO_PLANE_TILT_PATH (the bench's and the tests' variants): unset, auto
 * or raw, the raw windows through 16-byte cp.async units (with
 * TOMO_PLANE_TILT_STAGE=2: 2 projections per stage from a half store);
 * bulk-h2, the bulk path (2 projections × 4 stages; linear interpolation
 * from a half store of 16-byte rows, else the raw path); pairs and
 * pairs-half, the pairs path (linear; pairs-half its half2 pairs from a
 * half store, from a float store pairs).  On the H100 (docs/PERFORMANCE.md)
 * neither bulk nor pairs beat the raw path, which stays `auto`. */
gboolean
_tomo_gpu_store_tilt_launch (const void *rows, gboolean half, const float2 *trig,
                             const PlaneArgs *a, int interp, float *out, cudaStream_t stream,
                             const cudaTextureObject_t *tex, GError **error)
{
  const char *stage = g_getenv ("TOMO_PLANE_TILT_STAGE");
  const char *path = g_getenv ("TOMO_PLANE_TILT_PATH");
  const gboolean narrow = stage != NULL && atoi (stage) == 2;
  const gboolean use_pairs = interp && path != NULL && strcmp (path, "pairs") == 0;
  const gboolean half_pairs = interp && path != NULL && strcmp (path, "pairs-half") == 0;
  const gboolean wide = a->W % (half ? 8 : 4) == 0;
  const gboolean bulk = interp && half && wide && path != NULL && strcmp (path, "bulk-h2") == 0;

  if (bulk)
    return launch_tilt_bulk<2, 4, 3> ((const __half *) rows, trig, *a, out, stream, error);
  if (tex != NULL && _tomo_gpu_store_tilt_hybrid_ok (half, a, interp))
    {
      const __half *r = (const __half *) rows;

      switch (_tomo_gpu_store_tilt_hybrid_split ())
        {
        case 41: return launch_tilt<__half, 8, 4, 0, 1> (r, trig, *a, 1, out, stream, error, tex);
        case 42: return launch_tilt<__half, 8, 4, 0, 2> (r, trig, *a, 1, out, stream, error, tex);
        case 43: return launch_tilt<__half, 8, 4, 0, 3> (r, trig, *a, 1, out, stream, error, tex);
        case 44: return launch_tilt<__half, 8, 4, 0, 4> (r, trig, *a, 1, out, stream, error, tex);
        case 21: return launch_tilt<__half, 8, 2, 0, 1> (r, trig, *a, 1, out, stream, error, tex);
        case 22: return launch_tilt<__half, 8, 2, 0, 2> (r, trig, *a, 1, out, stream, error, tex);
        default: break;
        }
    }
  if (half)
    {
      const __half *r = (const __half *) rows;

      if (!wide)
        return use_pairs    ? launch_tilt<__half, 1, 2, 1> (r, trig, *a, interp, out, stream, error)
               : half_pairs ? launch_tilt<__half, 1, 2, 2> (r, trig, *a, interp, out, stream, error)
                            : launch_tilt<__half, 1, 4> (r, trig, *a, interp, out, stream, error);
      if (use_pairs)
        return launch_tilt<__half, 8, 2, 1> (r, trig, *a, interp, out, stream, error);
      if (half_pairs)
        return launch_tilt<__half, 8, 2, 2> (r, trig, *a, interp, out, stream, error);
      return narrow ? launch_tilt<__half, 8, 2> (r, trig, *a, interp, out, stream, error)
                    : launch_tilt<__half, 8, 4> (r, trig, *a, interp, out, stream, error);
    }

  const float *r = (const float *) rows;

  if (!wide)
    return use_pairs || half_pairs
             ? launch_tilt<float, 1, 2, 1> (r, trig, *a, interp, out, stream, error)
             : launch_tilt<float, 1, 2> (r, trig, *a, interp, out, stream, error);
  return use_pairs || half_pairs
           ? launch_tilt<float, 4, 2, 1> (r, trig, *a, interp, out, stream, error)
           : launch_tilt<float, 4, 2> (r, trig, *a, interp, out, stream, error);
}
