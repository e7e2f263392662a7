/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Two plane back projectors of the volume store (tomo-gpu-store.cu holds
 * the store and the other kernels).
 *
 * tile kernel, for planes whose rows are horizontal (u_z = 0) with a step
 * of at most one pixel — XZ, YZ, XY and the oblique planes of
 * tomo_plane_init_oblique.  A block of TILE_X = 256 threads covers a tile
 * of 256 samples of K = 8 consecutive plane rows (thread i: sample i of
 * each of the 8 rows).  Per stage of G projections it stages in shared
 * memory, for each projection and plane row, the run of at most 256 + 9
 * bins that row's 256 samples touch, as *pairs* (bin k, bin k + 1): one
 * 4-byte (half store) or 8-byte (float store) shared load then gives both
 * neighbours of the linear interpolation.  Rows between two detector rows
 * are blended once while staging.  The copy of stage s + 1 is in flight in
 * registers (16-byte loads) while stage s is summed.
 *
 * When the plane's columns are vertical too (XZ, YZ, planes turned about
 * the vertical axis: v_x = v_y = 0), a sample's detector position t is the
 * same on all 8 rows: the thread computes t, its bin and weights once per
 * projection and reuses them for 8 rows.  Otherwise each row has its own t
 * and window.
 *
 * Ring path (plane_tile_async_kernel): vertical planes whose rows all lie
 * on stored rows, rows of a multiple of 16 bytes.  No pairs, no registers
 * in between: the bins are copied raw with 16-byte cp.async into a ring of
 * 3 stages (two in flight while one is summed), each sample-projection is
 * then two shared loads, two conversions and two FMAs for each of the 8
 * rows after one position.  On the H100 this path made XZ 2048² from the
 * half store in 6.3 ms where the pair path took 14.2 ms and the rows kernel
 * 8.8 ms: the pair staging through registers cost more instructions than
 * it saved, and its single stage in flight could not hide the loads.
 * The wide path below replaced it as `auto` (4.8 ms).
 *
 * texture kernel: the straightforward texture version, one thread per
 * sample, each projection's value fetched through a texture object of the
 * stored row (hardware linear filtering, 8-bit fractional weights).  The
 * baseline the tile and tilt kernels are measured against: on the H100
 * (2048², half store) XZ 67.9 ms and oblique 108 ms with blocks of 32 × 8,
 * 135 / 253 ms with the earlier 16 × 16 (two plane rows, so two texture
 * objects, a warp); XY 18.6 ms either way.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <math.h>
#include <string.h>

#include <cuda_fp16.h>

#include "tomo-gpu-store-private.h"

#define TILE_X 256
/* Plane rows per block (4 and 16 measured no faster: docs/PERFORMANCE.md). */
#define TILE_K 8

/* Per stored type: its pair of bins, a bin as float, a pair as float2 and
 * two floats as a pair. */
template <typename T> struct Bins;
template <> struct Bins<float>
{
  typedef float2 Pair;
  __device__ static float value (float v) { return v; }
  __device__ static float2 pair (float2 p) { return p; }
  __device__ static float2 make_pair (float a, float b) { return make_float2 (a, b); }
};
template <> struct Bins<__half>
{
  typedef __half2 Pair;
  __device__ static float value (__half v) { return __half2float (v); }
  __device__ static float2 pair (__half2 p) { return __half22float2 (p); }
  __device__ static __half2 make_pair (float a, float b) { return __floats2half2_rn (a, b); }
};

/* VEC bins of one stored row, loaded in one instruction when VEC > 1. */
template <typename T, int VEC>
struct __align__ (sizeof (T) * VEC > 16 ? 16 : sizeof (T) * VEC) Vec
{
  T v[VEC];
};

/* Per projection and plane row of a stage: the window's first bin, the
 * number of bins staged, and the sample's t relative to lo with its clamp. */
typedef struct
{
  int lo, nb;
  float t0, d;       /* t of the tile's first sample − lo; step per sample */
  float cmin, cmax;  /* the detector ([−1, W]) within the window */
} TileMeta;

/* Bins a window can need: 256 samples one pixel apart touch ≤ 257 bins,
 * + 1 for the pair of the last, + VEC − 1 for an aligned start. */
#define TILE_WV(VEC) ((TILE_X + 2 + 2 * ((VEC) - 1)) / (VEC))

template <typename T, int VEC, int G, bool VERT, bool TWO, int LINEAR>
__global__ static void __launch_bounds__ (TILE_X, 2)
plane_tile_kernel (const T      *rows,
                   const float2 *trig,
                   PlaneArgs     a,
                   float        *out)
{
  typedef typename Bins<T>::Pair Pair;
  constexpr int WV = TILE_WV (VEC);
  constexpr int WP = WV * VEC;                 /* pairs per window */
  constexpr int NM = VERT ? 1 : TILE_K;        /* windows per projection */
  extern __shared__ __align__ (16) unsigned char tile_smem[];
  Pair *pairs = (Pair *) tile_smem;            /* [G][TILE_K][WP] */
  __shared__ TileMeta meta[2][G][NM];
  __shared__ int r0_s[TILE_K];
  __shared__ float fz_s[TILE_K];
  const int tid = threadIdx.x;
  const int iA = blockIdx.x * TILE_X;
  const int jA = blockIdx.y * TILE_K;
  const int nA = min (TILE_X, a.w - iA);
  const float W = (float) a.W;
  float acc[TILE_K];
  unsigned int inside = 0;

  /* The detector rows of the block's plane rows: r0 (−1 outside the rows
   * held) and the weight of r0 + 1. */
  if (tid < TILE_K)
    {
      const float z = a.z0 + (jA + tid) * a.vz;
      int r0 = -1;
      float fz = 0.0f;

      /* Outside, rows_for_z leaves r0 and fz as they are. */
      if (jA + tid < a.h)
        rows_for_z (z, a.n_rows, &r0, &fz);
      r0_s[tid] = r0;
      fz_s[tid] = fz;
    }
#pragma unroll
  for (int q = 0; q < TILE_K; q++)
    {
      const float x = a.x0 + (iA + tid) * a.ux + (jA + q) * a.vx;
      const float y = a.y0 + (iA + tid) * a.uy + (jA + q) * a.vy;

      acc[q] = 0.0f;
      if (tid < nA && fabsf (x) <= a.lim && fabsf (y) <= a.lim)
        inside |= 1u << q;
    }

  /* Windows of stage p0 into meta[buf]: thread m < G·NM takes projection
   * m / NM, plane row m % NM. */
  auto plan = [&] (int buf, int p0) {
    if (tid < G * NM && p0 + tid / NM < a.P)
      {
        const int g = tid / NM, q = tid % NM;
        const float2 cs = __ldg (trig + p0 + g);
        const float xA = a.x0 + iA * a.ux + (jA + q) * a.vx;
        const float yA = a.y0 + iA * a.uy + (jA + q) * a.vy;
        const float d = fmaf (a.ux, cs.x, -a.uy * cs.y);
        const float tA = fmaf (xA, cs.x, fmaf (-yA, cs.y, a.center));
        const float tB = fmaf ((float) (nA - 1), d, tA);
        const float tmin = fminf (fmaxf (fminf (tA, tB), -1.0f), W);
        const float tmax = fminf (fmaxf (fmaxf (tA, tB), -1.0f), W);
        int lo = (int) floorf (tmin);
        TileMeta m;

        lo = VEC > 1 ? (lo >= 0 ? lo / VEC * VEC : -((-lo + VEC - 1) / VEC) * VEC) : lo;
        m.lo = lo;
        m.nb = (int) floorf (tmax) + 2 - lo;   /* bins lo … floor(tmax) + 1 */
        m.t0 = tA - lo;
        m.d = d;
        m.cmin = tmin - lo;
        m.cmax = tmax - lo;
        meta[buf][g][q] = m;
      }
  };

  /* The copy: unit e of a stage is (projection g, plane row q, VEC bins
   * from v·VEC and the bin after them, for the last pair); its window is
   * meta[g][VERT ? 0 : q]. */
  constexpr int EU = G * TILE_K * WV;
  constexpr int EPU = (EU + TILE_X - 1) / TILE_X;
  Vec<T, VEC> ua[EPU], ub[TWO ? EPU : 1];
  T una[EPU], unb[TWO ? EPU : 1];

  auto load = [&] (int buf, int p0) {
#pragma unroll
    for (int m = 0; m < EPU; m++)
      {
        const int e = tid + m * TILE_X;
        const int v = e % WV, q = (e / WV) % TILE_K, g = e / (WV * TILE_K);
        bool on = false, non = false, two = false;
        const int mb = TWO ? m : 0;
        size_t off = 0;

#pragma unroll
        for (int k = 0; k < VEC; k++)
          {
            ua[m].v[k] = (T) 0.0f;
            if (TWO)
              ub[TWO ? m : 0].v[k] = (T) 0.0f;
          }
        una[m] = (T) 0.0f;
        if (TWO)
          unb[TWO ? m : 0] = (T) 0.0f;
        if (e < EU && p0 + g < a.P && r0_s[q] >= 0)
          {
            const TileMeta &w = meta[buf][g][VERT ? 0 : q];
            const int col = w.lo + v * VEC;

            on = v * VEC < w.nb && col >= 0 && col + VEC <= a.W;
            non = (v + 1) * VEC < w.nb && col + VEC >= 0 && col + VEC < a.W;
            two = TWO && fz_s[q] > 0.0f;
            off = (size_t) r0_s[q] * a.row_elems + (size_t) (p0 + g) * a.W + col;
          }
        if (on)
          {
            ua[m] = *(const Vec<T, VEC> *) (rows + off);
            if (two)
              ub[mb] = *(const Vec<T, VEC> *) (rows + off + a.row_elems);
          }
        if (non)
          {
            una[m] = rows[off + VEC];
            if (two)
              unb[mb] = rows[off + VEC + a.row_elems];
          }
      }
  };

  auto store = [&] () {
#pragma unroll
    for (int m = 0; m < EPU; m++)
      {
        const int e = tid + m * TILE_X;
        const int v = e % WV, q = (e / WV) % TILE_K, g = e / (WV * TILE_K);

        if (e < EU)
          {
            const float fz = TWO ? fz_s[q] : 0.0f;
            const int mb = TWO ? m : 0;
            float val[VEC + 1];

#pragma unroll
            for (int k = 0; k < VEC; k++)
              {
                val[k] = Bins<T>::value (ua[m].v[k]);
                if (TWO && fz > 0.0f)
                  val[k] = fmaf (fz, Bins<T>::value (ub[mb].v[k]) - val[k], val[k]);
              }
            val[VEC] = Bins<T>::value (una[m]);
            if (TWO && fz > 0.0f)
              val[VEC] = fmaf (fz, Bins<T>::value (unb[mb]) - val[VEC], val[VEC]);

            Vec<Pair, VEC> pv;

#pragma unroll
            for (int k = 0; k < VEC; k++)
              pv.v[k] = Bins<T>::make_pair (val[k], val[k + 1]);
            *(Vec<Pair, VEC> *) (pairs + ((size_t) g * TILE_K + q) * WP + v * VEC) = pv;
          }
      }
  };

  plan (0, 0);
  __syncthreads ();
  load (0, 0);
  for (int p0 = 0, buf = 0; p0 < a.P; p0 += G, buf ^= 1)
    {
      const int ng = min (G, a.P - p0);

      __syncthreads ();          /* the last stage's sums are done */
      store ();
      plan (buf ^ 1, p0 + G);
      __syncthreads ();
      if (p0 + G < a.P)
        load (buf ^ 1, p0 + G);
      for (int g = 0; g < ng; g++)
        {
          const Pair *pg = pairs + (size_t) g * TILE_K * WP;

          if (VERT)
            {
              const TileMeta w = meta[buf][g][0];
              const float t = fminf (fmaxf (fmaf ((float) tid, w.d, w.t0), w.cmin), w.cmax);
              const float f = floorf (LINEAR ? t : t + 0.5f);
              const float fr = t - f;
              const int k = min ((int) f, WP - 1);

#pragma unroll
              for (int q = 0; q < TILE_K; q++)
                {
                  const float2 p = Bins<T>::pair (pg[q * WP + k]);

                  if (LINEAR)
                    acc[q] = fmaf (fr, p.y, fmaf (1.0f - fr, p.x, acc[q]));
                  else
                    acc[q] += p.x;
                }
            }
          else
            {
#pragma unroll
              for (int q = 0; q < TILE_K; q++)
                {
                  const TileMeta w = meta[buf][g][VERT ? 0 : q];
                  const float t = fminf (fmaxf (fmaf ((float) tid, w.d, w.t0), w.cmin), w.cmax);
                  const float f = floorf (LINEAR ? t : t + 0.5f);
                  const float fr = t - f;
                  const int k = min ((int) f, WP - 1);
                  const float2 p = Bins<T>::pair (pg[q * WP + k]);

                  if (LINEAR)
                    acc[q] = fmaf (fr, p.y, fmaf (1.0f - fr, p.x, acc[q]));
                  else
                    acc[q] += p.x;
                }
            }
        }
    }
#pragma unroll
  for (int q = 0; q < TILE_K; q++)
    if (tid < nA && jA + q < a.h)
      out[(size_t) (jA + q) * a.w + iA + tid] = inside & (1u << q) ? acc[q] * a.inv_scale : 0.0f;
}

/* The vertical planes' fast path (VERT, every plane row on a detector row,
 * 16-byte aligned rows): the same tiles, but the bins are copied raw into a
 * ring of NS stages in shared memory — no registers, two stages in flight
 * while one is summed — and read as two neighbours.  The bin position and
 * weights of a sample serve its K rows.  BULK false with SPT = 1 is the
 * ring path: tiles of 256 samples, 16-byte cp.async units, the stage's
 * units walked over the widest window's extent.
 *
 * The wide path, `auto` (BULK, SPT = 2), measured on the H100
 * (docs/PERFORMANCE.md; XZ 2048² from the half store 6.30 → 4.82 ms):
 *
 * - Tiles of 256 · SPT samples (SPT = 2: 512), so a window's halo and
 *   16-byte rounding are shared by twice the samples.  Each thread takes
 *   two neighbouring samples, whose bins (k_a, k_a + 1, k_b, k_b + 1) lie
 *   within four bins from an even one: a half store gives them in two
 *   4-byte shared loads per plane row (one per sample-projection instead of
 *   two), pulled apart with byte permutes whose selectors are computed once
 *   per projection.
 * - BULK: each window is one bulk copy (cp.async.bulk, the tensor memory
 *   accelerator) issued by one lane — lane l of warp w copies projection
 *   l % G of plane row w — its completion counted on an mbarrier per ring
 *   slot; units off the detector are zeroed by plain stores.  With 16-byte
 *   cp.async units the kernel was issue-bound (ncu: 70 % of issue slots
 *   busy at 53 % of DRAM bandwidth, 222 instructions per thread and
 *   projection, of which the sums 128 and the copy most of the rest).
 *   Those cp.async units (5.31 ms) and half2 sums within a stage (4.59 ms,
 *   about 3× the rounding error) lost and were removed. */
#define TILE_NS 3

/* Bins a window holds: the ring's windows (256 samples); the wide path's
 * windows of TX = 256 · SPT samples hold ≤ TX + 10 bins and are read up to
 * 4 bins from an even one: TX + 16. */
template <typename T, int SPT>
__host__ __device__ constexpr int
tile_wp ()
{
  return SPT == 1 ? TILE_WV (16 / (int) sizeof (T)) * (16 / (int) sizeof (T))
                  : (TILE_X * SPT + 16 + 16 / (int) sizeof (T) - 1) / (16 / (int) sizeof (T))
                    * (16 / (int) sizeof (T));
}

__device__ static inline unsigned int
smem_addr (const void *p)
{
  return (unsigned int) __cvta_generic_to_shared (p);
}

template <typename T, int SPT, int G, int NS, bool BULK, int LINEAR>
__global__ static void __launch_bounds__ (TILE_X)
plane_tile_async_kernel (const T      *rows,
                         const float2 *trig,
                         PlaneArgs     a,
                         float        *out)
{
  constexpr int K = TILE_K;
  constexpr int VEC = 16 / (int) sizeof (T);
  constexpr int TX = TILE_X * SPT;
  constexpr int WV = TILE_WV (VEC);
  constexpr int WP = tile_wp<T, SPT> ();
  constexpr int EU = G * K * WV;               /* units of a stage, the ring's copy */
  constexpr int STAGE = G * K * WP;            /* bins per stage */
  constexpr int NW = TILE_X / 32;
  static_assert (!BULK || K % NW == 0, "whole rows per warp");
  static_assert (BULK || SPT == 1, "the ring's copy: windows of 256 samples");
  static_assert (SPT == 1 || SPT == 2, "one or two samples per thread");
  extern __shared__ __align__ (16) unsigned char tile_smem[];
  T *ring = (T *) tile_smem;                   /* [NS][G][K][WP] */
  __shared__ TileMeta meta[NS + 1][G];
  __shared__ int r0_s[K];
  __shared__ __align__ (8) unsigned long long bars[NS];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  static_assert (!BULK || G * (K / NW) <= 32, "one lane per window of a warp");
  const int iA = blockIdx.x * TX;
  const int jA = blockIdx.y * K;
  const int nA = min (TX, a.w - iA);
  const int n_stages = (a.P + G - 1) / G;
  const float W = (float) a.W;
  float acc[SPT][K];
  bool inside[SPT];

  if (tid < K)
    {
      const float z = a.z0 + (jA + tid) * a.vz;
      const int r = (int) rintf (z);

      /* Integer z here (the launcher checked): a row or nothing. */
      r0_s[tid] = jA + tid < a.h && r >= 0 && r < a.n_rows ? r : -1;
    }
  if (BULK && tid == 0)
    {
      /* One arrival per warp and stage.  One thread, one mbarrier.init
       * instruction per barrier: ptxas counts the kernel's mbarriers
       * (EIATTR_NUM_MBARRIERS, which compute-sanitizer's racecheck and
       * synccheck size their per-block tables by) from the init
       * instructions, so an init in a loop over threads counted 1 of the 3
       * and the tools overflowed.  The fences make the initialised
       * barriers visible to the bulk copies' complete_tx (async proxy)
       * before the block's barrier below. */
#pragma unroll
      for (int s = 0; s < NS; s++)
        asm volatile ("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r" (smem_addr (&bars[s])),
                      "r" (NW) : "memory");
      asm volatile ("fence.mbarrier_init.release.cluster;\n" ::: "memory");
      asm volatile ("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
#pragma unroll
  for (int s = 0; s < SPT; s++)
    {
      const int i = iA + tid * SPT + s;
      const float x = a.x0 + i * a.ux + jA * a.vx;
      const float y = a.y0 + i * a.uy + jA * a.vy;

      inside[s] = tid * SPT + s < nA && fabsf (x) <= a.lim && fabsf (y) <= a.lim;
#pragma unroll
      for (int q = 0; q < K; q++)
        acc[s][q] = 0.0f;
    }

  auto plan = [&] (int stage) {
    const int p = stage * G + tid;

    if (tid < G && stage < n_stages && p < a.P)
      {
        const float2 cs = __ldg (trig + p);
        const float d = fmaf (a.ux, cs.x, -a.uy * cs.y);
        const float tA = fmaf (a.x0 + iA * a.ux, cs.x, fmaf (-(a.y0 + iA * a.uy), cs.y, a.center));
        const float tB = fmaf ((float) (nA - 1), d, tA);
        const float tmin = fminf (fmaxf (fminf (tA, tB), -1.0f), W);
        const float tmax = fminf (fmaxf (fmaxf (tA, tB), -1.0f), W);
        int lo = (int) floorf (tmin);
        TileMeta m;

        lo = lo >= 0 ? lo / VEC * VEC : -((-lo + VEC - 1) / VEC) * VEC;
        m.lo = lo;
        m.nb = (int) floorf (tmax) + 2 - lo;
        m.t0 = tA - lo;
        m.d = d;
        m.cmin = tmin - lo;
        m.cmax = tmax - lo;
        meta[stage % (NS + 1)][tid] = m;
      }
  };
  /* The needed units of a stage; off the detector, zeros. */
  auto issue = [&] (int stage) {
    if constexpr (BULK)
      {
        /* Lane l < G · K / NW: projection l % G, row warp + NW · (l / G). */
        if (stage < n_stages)
          {
            const int g = lane % G, q = warp + NW * (lane / G), p = stage * G + g;
            const unsigned int bar = smem_addr (&bars[stage % NS]);

            if (lane < G * (K / NW) && p < a.P && r0_s[q] >= 0)
              {
                const int lo = meta[stage % (NS + 1)][g].lo;
                const int nu = (meta[stage % (NS + 1)][g].nb + VEC - 1) / VEC;
                /* Units [v0, v1) on the detector (lo is a multiple of VEC). */
                const int v0 = min (max (-lo / VEC, 0), nu);
                const int v1 = max (min ((a.W - lo) / VEC, nu), v0);
                T *dst = ring + (size_t) (stage % NS) * STAGE + ((size_t) g * K + q) * WP;
                const T *src = rows + (size_t) r0_s[q] * a.row_elems + (size_t) p * a.W + lo;

                if (v1 > v0)
                  {
                    const unsigned int bytes = (unsigned int) (v1 - v0) * 16u;

                    asm volatile ("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n"
                                  :: "r" (bar), "r" (bytes) : "memory");
                    asm volatile ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                                  "[%0], [%1], %2, [%3];\n"
                                  :: "r" (smem_addr (dst + v0 * VEC)), "l" (src + v0 * VEC),
                                     "r" (bytes), "r" (bar) : "memory");
                  }
                if (v0 > 0 || v1 < nu)
                  {
                    for (int v = 0; v < v0; v++)
                      *(uint4 *) (dst + v * VEC) = make_uint4 (0, 0, 0, 0);
                    for (int v = v1; v < nu; v++)
                      *(uint4 *) (dst + v * VEC) = make_uint4 (0, 0, 0, 0);
                    asm volatile ("fence.proxy.async.shared::cta;\n" ::: "memory");
                  }
              }
            __syncwarp ();
            if (lane == 0)
              asm volatile ("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r" (bar) : "memory");
          }
        return;
      }
    if (stage < n_stages)
      {
        /* The ring's copy: thread e takes units e, e + 256, … of the stage,
         * (projection, plane row, unit) with the unit fastest. */
        T *buf = ring + (size_t) (stage % NS) * STAGE;
        const int p0 = stage * G;

        for (int e = tid; e < EU; e += TILE_X)
          {
            const int v = e % WV, q = (e / WV) % K, g = e / (WV * K);
            const int r = r0_s[q];

            if (p0 + g < a.P && r >= 0)
              {
                const TileMeta &w = meta[stage % (NS + 1)][g];
                const int col = w.lo + v * VEC;

                if (v * VEC < w.nb)
                  {
                    const bool on = col >= 0 && col + VEC <= a.W;
                    const T *src = rows + (size_t) r * a.row_elems + (size_t) (p0 + g) * a.W
                                   + (on ? col : 0);

                    copy_async<16> (buf + ((size_t) g * K + q) * WP + v * VEC, src, on ? 16 : 0);
                  }
              }
          }
      }
    asm volatile ("cp.async.commit_group;\n" ::);
  };

  /* Stage s in shared memory: its barrier's phase, or its commit group. */
  auto wait = [&] (int s) {
    if (BULK)
      {
        /* Use s / NS of slot s % NS: its phase of that parity completes. */
        const unsigned int bar = smem_addr (&bars[s % NS]), parity = (s / NS) & 1;
        unsigned int done = 0;

        while (!done)
          asm volatile ("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                        " selp.u32 %0, 1, 0, p;\n}\n"
                        : "=r" (done) : "r" (bar), "r" (parity) : "memory");
      }
    else
      asm volatile ("cp.async.wait_group %0;\n" :: "n" (NS - 2));
  };
  auto sum = [&] (int s) {
    const T *buf = ring + (size_t) (s % NS) * STAGE;
    const int ng = min (G, a.P - s * G);

    for (int g = 0; g < ng; g++)
      {
        const TileMeta w = meta[s % (NS + 1)][g];
        const T *bg = buf + (size_t) g * K * WP;

        if constexpr (SPT == 1 || sizeof (T) == 4)
          {
#pragma unroll
            for (int sm = 0; sm < SPT; sm++)
              {
                const float t = fminf (fmaxf (fmaf ((float) (tid * SPT + sm), w.d, w.t0), w.cmin),
                                       w.cmax);
                const float f = floorf (LINEAR ? t : t + 0.5f);
                const float fr = t - f;
                const T *b = bg + min ((int) f, WP - 2);

#pragma unroll
                for (int q = 0; q < K; q++)
                  {
                    const float v0 = Bins<T>::value (b[q * WP]);

                    if (LINEAR)
                      acc[sm][q] = fmaf (fr, Bins<T>::value (b[q * WP + 1]),
                                         fmaf (1.0f - fr, v0, acc[sm][q]));
                    else
                      acc[sm][q] += v0;
                  }
              }
          }
        else
          {
            /* Two neighbouring samples of a half store: both pairs within
             * the 4 bins from an even base. */
            const float t = fmaf ((float) (2 * tid), w.d, w.t0);
            const float ta = fminf (fmaxf (t, w.cmin), w.cmax);
            const float tb = fminf (fmaxf (t + w.d, w.cmin), w.cmax);
            const float fa = floorf (LINEAR ? ta : ta + 0.5f);
            const float fb = floorf (LINEAR ? tb : tb + 0.5f);
            const int ka = (int) fa, kb = (int) fb;
            const int base = min (min (ka, kb) & ~1, WP - 4);
            const unsigned int oa = (unsigned int) (ka - base), ob = (unsigned int) (kb - base);
            const unsigned int *wd = (const unsigned int *) (bg + base);
            const unsigned int sa = 0x3210 + oa * 0x2222, sb = 0x3210 + ob * 0x2222;
            const float ra = LINEAR ? ta - fa : 0.0f, rb = LINEAR ? tb - fb : 0.0f;

#pragma unroll
            for (int q = 0; q < K; q++)
              {
                const unsigned int w0 = wd[q * (WP / 2)], w1 = wd[q * (WP / 2) + 1];
                const unsigned int pa = __byte_perm (w0, w1, sa);
                const unsigned int pb = __byte_perm (w0, w1, sb);

                const float2 va = __half22float2 (*(const __half2 *) &pa);
                const float2 vb = __half22float2 (*(const __half2 *) &pb);

                if (LINEAR)
                  {
                    acc[0][q] = fmaf (ra, va.y, fmaf (1.0f - ra, va.x, acc[0][q]));
                    acc[1][q] = fmaf (rb, vb.y, fmaf (1.0f - rb, vb.x, acc[1][q]));
                  }
                else
                  {
                    acc[0][q] += va.x;
                    acc[1][q] += vb.x;
                  }
              }
          }
      }
  };

  stage_ring<NS> (n_stages, plan, issue, wait, sum);
  if (!BULK)
    asm volatile ("cp.async.wait_group 0;\n" ::);
  else
    {
      /* Every thread past its last wait: the barriers' memory is given back
       * invalidated (PTX asks for mbarrier.inval before the location serves
       * anything else — here the next block on this SM). */
      __syncthreads ();
      if (tid == 0)
#pragma unroll
        for (int s = 0; s < NS; s++)
          asm volatile ("mbarrier.inval.shared::cta.b64 [%0];\n" :: "r" (smem_addr (&bars[s]))
                        : "memory");
    }
#pragma unroll
  for (int sm = 0; sm < SPT; sm++)
#pragma unroll
    for (int q = 0; q < K; q++)
      if (tid * SPT + sm < nA && jA + q < a.h)
        out[(size_t) (jA + q) * a.w + iA + tid * SPT + sm]
          = inside[sm] && r0_s[q] >= 0 ? acc[sm][q] * a.inv_scale : 0.0f;
}

/* A tile kernel chosen for a plane: the kernel, its dynamic shared memory
 * and grid (blocks of TILE_X threads), and its name for errors. */
template <typename T>
struct TileKernel
{
  void (*kern) (const T *, const float2 *, PlaneArgs, float *);
  size_t smem;
  dim3 grid;
  const char *what;
};

template <typename T, int G, int SPT, bool BULK>
static TileKernel<T>
tile_async (const PlaneArgs &a,
            int              interp)
{
  return { interp ? plane_tile_async_kernel<T, SPT, G, TILE_NS, BULK, 1>
                  : plane_tile_async_kernel<T, SPT, G, TILE_NS, BULK, 0>,
           (size_t) TILE_NS * G * TILE_K * tile_wp<T, SPT> () * sizeof (T),
           dim3 ((a.w + TILE_X * SPT - 1) / (TILE_X * SPT), (a.h + TILE_K - 1) / TILE_K),
           "plane tile kernel (async)" };
}

template <typename T, int VEC, int G, bool VERT, bool TWO>
static TileKernel<T>
tile_pairs (const PlaneArgs &a,
            int              interp)
{
  return { interp ? plane_tile_kernel<T, VEC, G, VERT, TWO, 1>
                  : plane_tile_kernel<T, VEC, G, VERT, TWO, 0>,
           (size_t) G * TILE_K * TILE_WV (VEC) * VEC * sizeof (typename Bins<T>::Pair),
           dim3 ((a.w + TILE_X - 1) / TILE_X, (a.h + TILE_K - 1) / TILE_K),
           "plane tile kernel" };
}

/* G: projections per stage, as many as keep the copy in flight within
 * 128 registers (half 16-byte units 8, float 4; blending two rows needs
 * twice the registers per unit). */
template <typename T, int VEC, int G>
static TileKernel<T>
tile_kernel (const PlaneArgs &a,
             int              interp)
{
  constexpr int G2 = G > 1 ? G / 2 : 1;
  /* Every plane row on a detector row (integer z, integer step): no blend. */
  const bool two = !(a.z0 == rintf (a.z0) && a.vz == rintf (a.vz));
  const bool vert = a.vx == 0.0f && a.vy == 0.0f;

  if constexpr (VEC > 1)
    if (vert && !two)
      {
        /* TOMO_PLANE_TILE_PATH (for the bench and the tests): ring, the
         * ring path (`auto` before the wide path, the bench's baseline), or
         * pairs, the register-staged pair copy.  Else the wide path (tiles
         * of 512 samples, 4 projections a stage, about 100 KiB of shared
         * memory: two blocks an SM) with bulk copies. */
        const char *path = g_getenv ("TOMO_PLANE_TILE_PATH");

        if (path != NULL && strcmp (path, "pairs") == 0)
          return tile_pairs<T, VEC, G, true, false> (a, interp);
        if (path != NULL && strcmp (path, "ring") == 0)
          return tile_async<T, G, 1, false> (a, interp);
        return tile_async<T, G / 2, 2, true> (a, interp);
      }
  if (vert)
    return two ? tile_pairs<T, VEC, G2, true, true> (a, interp)
               : tile_pairs<T, VEC, G, true, false> (a, interp);
  return two ? tile_pairs<T, VEC, G2, false, true> (a, interp)
             : tile_pairs<T, VEC, G, false, false> (a, interp);
}

gboolean
_tomo_gpu_store_tile_launch (const void       *rows,
                             gboolean          half,
                             const PlaneArgs  *a,
                             const LaunchArgs *l,
                             GError          **error)
{
  /* 16-byte copies where every projection's row starts 16-byte aligned;
   * else one bin at a time, one projection per stage. */
  if (half)
    {
      const TileKernel<__half> k = a->W % 8 == 0 ? tile_kernel<__half, 8, 8> (*a, l->interp)
                                                 : tile_kernel<__half, 1, 1> (*a, l->interp);

      return TOMO_CUDA_LAUNCH_SMEM (k.kern, k.grid, TILE_X, k.smem, l->stream, k.what, error,
                                    (const __half *) rows, l->trig, *a, l->out);
    }
  const TileKernel<float> k = a->W % 4 == 0 ? tile_kernel<float, 4, 4> (*a, l->interp)
                                            : tile_kernel<float, 1, 1> (*a, l->interp);

  return TOMO_CUDA_LAUNCH_SMEM (k.kern, k.grid, TILE_X, k.smem, l->stream, k.what, error,
                                (const float *) rows, l->trig, *a, l->out);
}

/* ------------------------------------------------------------------------ */

__global__ static void
plane_texture_kernel (const cudaTextureObject_t *tex,
                      const float2              *trig,
                      PlaneArgs                  a,
                      int                        linear,
                      float                     *out)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  float x, y, fz, acc = 0.0f;
  int r0;

  if (i >= a.w || j >= a.h)
    return;
  if (plane_sample (a, i, j, &x, &y, &r0, &fz))
    {
      const cudaTextureObject_t A = tex[r0], B = fz > 0.0f ? tex[r0 + 1] : A;

      for (int p = 0; p < a.P; p++)
        {
          const float2 cs = __ldg (trig + p);
          float t = fmaf (x, cs.x, fmaf (-y, cs.y, a.center));
          float v;

          /* Texel k's centre is at k + 0.5; nearest: the centre itself. */
          t = linear ? t + 0.5f : floorf (t + 0.5f) + 0.5f;
          v = tex2D<float> (A, t, p + 0.5f);
          if (fz > 0.0f)
            v = fmaf (fz, tex2D<float> (B, t, p + 0.5f) - v, v);
          acc += v;
        }
      acc *= a.inv_scale;
    }
  out[(size_t) j * a.w + i] = acc;
}

gboolean
_tomo_gpu_store_texture_launch (const cudaTextureObject_t *tex,
                                const PlaneArgs           *a,
                                const LaunchArgs          *l,
                                GError                   **error)
{
  /* Blocks of 32 × 8: a warp on one plane row, so that on planes with
   * horizontal rows its texture objects are the same across the warp.
   * TOMO_PLANE_TEX_BLOCK=16x16 (the bench's variant, before): two rows a
   * warp, two objects — on the H100 twice the time for XZ and oblique
   * planes (docs/PERFORMANCE.md). */
  const char *shape = g_getenv ("TOMO_PLANE_TEX_BLOCK");
  const int bx = shape != NULL && strcmp (shape, "16x16") == 0 ? 16 : 32, by = 256 / bx;
  dim3 block (bx, by), grid ((a->w + bx - 1) / bx, (a->h + by - 1) / by);

  plane_texture_kernel<<<grid, block, 0, l->stream>>> (tex, l->trig, *a, l->interp, l->out);
  return TOMO_CUDA_CHECK_LAUNCH ("plane texture kernel", error);
}
