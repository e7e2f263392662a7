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
 * two linear weights once (a float add of 1.5·2²³, rounded down, gives
 * floor(t) on the FP units: no conversion instructions), and interpolates
 * both stored rows the plane row lies between: one shared address per
 * plane row and stage, the four bins at immediate offsets of the loads
 * (tilt_project; 18 SASS instructions per plane row and projection).
 * The blend between the two rows uses a weight constant along the plane
 * row, so it is deferred: two float sums per plane row (lower and upper
 * stored row), blended once at the end with the row weight fz in float —
 * the same value as blending every projection, exactly in real
 * arithmetic, and only float roundings in between.  Projections whose
 * whole tile stays on the detector ([−1, W]) skip the clamp of t.
 *
 * Widths whose projection rows are not 16-byte aligned copy single bins
 * (cp.async of 4 bytes for float, plain loads for half): correct, slower.
 * Nearest interpolation takes rint(t) (ties to even; the reference rounds
 * ties up).
 *
 * On the H100 (2048² planes of a 2048³ store, docs/PERFORMANCE.md): oblique
 * 30°/15° 10.3 ms from the half store (12.1 ms before the shared
 * addresses were folded; rows kernel 15.6 ms), XY 7.5 ms (9.4; 15.3 ms);
 * float 14.9 / 10.4 ms before the fold.  On XZ it takes 8.2 ms where the
 * tile kernel's ring path, copying about the same bins, takes 6.3 ms: the
 * time goes to the per-sample instructions and shared loads, not the
 * copy.
 *
 * The hybrid (TOMO_PLANE_TILT_TEX; `auto` from a half store with linear
 * interpolation between rows until the slot copy below): per stage of G ring projections, T more
 * are interpolated by the texture units (one texture object per stored
 * row, hardware linear filtering along the detector), their fetches issued
 * before a ring projection's sums and added after them, so that the
 * texture pipe works beside the shared-memory and FP pipes.  On the H100:
 * 4 ring + 1 texture projection a stage, added after the stage's last
 * ring projection (`auto`), oblique 9.8 ms (raw path 10.3 ms in the same
 * run), XY 7.4 ms (7.5).  ncu (oblique 2048², before the fold): raw path
 * and hybrid are bound by instruction issue (86 % / 83 % of the issue
 * slots busy; 39 / 33 instructions per sample and projection), not by
 * shared memory (LSU wavefronts 46 %) or DRAM (23–25 %); the interpolation
 * of a plane row's two stored rows took 25 SASS instructions, 7 of them
 * address arithmetic (the magic number's bias added once per shared load,
 * since it does not fit the load's offset field), now 18 with 1.
 *
 * The packed sums (PK; TOMO_PLANE_TILT_PATH=pack, `auto` from a half
 * store with linear interpolation between rows): bin k of the lower and
 * upper stored row go into one half2 (two 16-bit loads, one PRMT), bin
 * k + 1 into another, and both rows are interpolated at once by two HFMA2
 * with the weights (w0, w1) packed once (F2FP) and broadcast by the
 * operands' half selects; the half2 sums of a stage (4 projections) are
 * added to the float sums once a stage.  15 SASS instructions per plane
 * row and projection instead of 18 (no conversions from half, no float
 * FMAs).  On the H100 (18:35 run): oblique 30°/15° 9.48 ms alone, 9.38 ms
 * with the hybrid 4 + 1 late (`auto` there; 10.27 / 9.76 without the
 * packing), XY 6.82 ms alone (`auto` on level planes; 7.20 with the
 * hybrid, raw path 7.46).  Relative L2 against the CPU reference up to
 * 2.6·10⁻⁴ in the tests (raw path 6.3·10⁻⁵; tolerance 2·10⁻³).
 *
 * The interleaved pairs (IL; TOMO_PLANE_TILT_PATH=il, il4; `auto` as il
 * where a tile needs at most 3 stored rows, |v_z| < 1/7, e.g. XY): once a stage's raw windows are in, bin k of
 * each pair of stored rows (r, r + 1) the tile uses becomes one 32-bit
 * word, half2 (row r, row r + 1) (tilt_il_build: 8-byte loads, byte
 * permutes, 16-byte stores), in one of two buffers built beside the
 * previous stage's sums (one barrier a stage), so a plane row's bins k
 * and k + 1 of both rows are two 32-bit loads and no PRMT: 11 SASS
 * instructions per plane row and projection instead of 15, the packed
 * sums' arithmetic to the bit.  The ring then holds only the rows the
 * plane needs (⌊7·|v_z|⌋ + 3; il up to 5, il4 four blocks an SM at 64
 * registers up to 4); steeper planes take the packed path.  On the H100
 * (19:43 run): XY 6.83 → 6.29 ms (il4; 6.79 at three blocks an SM); the
 * oblique plane 30°/15° (v_z = cos 15° = 0.97: 9 stored rows and 8 pairs
 * a tile, twice the shared memory) stays on the packed path + 4 + 1 late,
 * 9.38 ms.
 *
 * The copy into the ring (20:10 run): each thread takes a slot (a
 * projection and 16-byte unit of its window) and copies it for each of
 * the tile's stored rows, the source stepped by a stored row and the
 * destination by the ring's row stride.  Before, every (row, projection,
 * unit) was numbered over the block, each with its own divisions, window
 * load and 64-bit address: about 65 SASS instructions a copy, a third of
 * the kernel's instructions on the oblique plane (ncu of the packed path
 * at 19:45: 7.82 G warp instructions, the sums about 4 G of them).  On
 * the H100, same run, old build beside: oblique 30°/15° packed 9.48 →
 * 6.95–7.46 ms, with 4:1L 9.38 → 7.50–7.74 (so `auto` now runs no
 * texture share), raw path 10.27 → 7.35–7.94; XY il 6.78 → 6.16 (now
 * `auto`; il4 6.27).
 *
 * Removed after their measurements (docs/PERFORMANCE.md): the pairs path
 * (float or half2 pairs (m, δ) built once a stage: 19.6 / 17.3 ms for the
 * oblique plane), the bulk path (cp.async.bulk windows and exact half2
 * pairs: 12.1 ms, XY 9.95 ms), 2 projections a stage from a half store
 * (12.25 ms), float pairs and deeper rings — none beat the raw path; the
 * packed sums at four blocks an SM alone (3 projections a stage for the
 * oblique plane: 9.93 against 9.47 ms; XY 6.84 against 6.83).
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>


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
/* The hybrid runs only where TOMO_PLANE_TILT_TEX asks for it (see
 * _tomo_gpu_store_tilt_hybrid_split): `auto` took 4 ring + 1 texture
 * projection a stage ("4:1L") while the copy into the ring cost a third of
 * the kernel's instructions; since the copy walks a slot's rows (20:10
 * run, docs/PERFORMANCE.md) the packed sums alone are faster on the
 * oblique plane (6.95–7.46 ms against 7.56–7.74 with 4:1L). */

/* Whether `auto` takes the packed sums (tilt_project's PK): on the H100
 * (18:35 run) oblique 9.76 → 9.38 ms with 4:1L, XY between rows 7.37 →
 * 6.82 ms; with the slot copy (20:10 run) oblique 7.34–7.94 → 6.95–7.46
 * ms, XY 6.81–6.83 → 6.37–6.39 ms. */
#define TILT_PACK_AUTO TRUE
/* The interleaved pairs (IL; TOMO_PLANE_TILT_PATH=il, il4) up to
 * TILT_IL_NR_MAX stored rows a tile: 5 rows (|v_z| < 3/7) keep three
 * blocks an SM (3 × 66 KiB of raw windows and pairs), 6 would leave two;
 * 4 rows (|v_z| < 2/7) leave room for four (4 × 53 KiB; at most 64
 * registers).  `auto` takes them where a tile needs at most
 * TILT_IL_AUTO_NR stored rows and no texture share runs: on the H100
 * (19:36 run) XY 6.85 → 6.28 ms with four blocks an SM (il4); with the
 * slot copy (20:10 run) three blocks an SM (il) are faster, 6.15–6.17
 * against 6.26–6.27 ms. */
#define TILT_IL_NR_MAX 5
#define TILT_IL_AUTO_NR 3

/* Stored rows a tile's 8 plane rows can need with a step of v_z along
 * the plane's columns: their z spans 7·|v_z| (plus float rounding), so
 * their lower rows at most ⌊7·|v_z|⌋ + 2 and one above. */
static inline int
tilt_plane_rows (float vz)
{
  return MIN (TILT_NR, (int) floorf ((TILT_K - 1) * fabsf (vz) + 1.0f / 64) + 3);
}

/* Bins per window: 255·|d| + 7·|e| + 2·margin ≤ 262.125 apart, so at most
 * 264 + VEC − 1 + 1 bins from an aligned start; 8 more of slack. */
#define TILT_WP(VEC) ((264 + (VEC) + 8 + (VEC) - 1) / (VEC) * (VEC))

/* A projection's window within a stage: t0 is t of the tile's first
 * sample and row relative to lo, d and e its steps per sample and per
 * plane row, [cmin, cmax] the clamp (the detector and the window, same
 * shift), inner: no clamp needed. */
typedef struct
{
  float t0, d, e, cmin, cmax;
  int lo, nb, inner;
} TiltMeta;

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
template <int VEC>
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
  constexpr int WP = TILT_WP (VEC);
  int lo = (int) floorf (tlo);
  TiltMeta m;

  lo = lo >= 0 ? lo / VEC * VEC : -((-lo + VEC - 1) / VEC) * VEC;
  m.lo = lo;
  m.nb = min ((int) floorf (thi) + 2 - lo, WP);
  m.t0 = tA - lo;
  m.d = d;
  m.e = e;
  m.cmin = tlo - lo;
  m.cmax = fminf (thi - lo, WP - 2.0f);
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
 * up to 16. */
template <typename T, int VEC, int G>
__host__ __device__ static inline size_t
tilt_ring_bytes (int nrs)
{
  return ((size_t) TILT_NS * G * nrs * TILT_WP (VEC) * sizeof (T) + 15) / 16 * 16;
}

/* The interleaved pairs (IL): bytes of one stage's, np = nrs − 1 pairs
 * of stored rows (r, r + 1) of G windows of WP bins, one 32-bit word a
 * bin ([pair][G][WP]; two stages after the ring). */
template <int G>
__host__ __device__ static inline size_t
tilt_il_stage_bytes (int nrs)
{
  return (size_t) (nrs - 1) * G * TILT_WP (8) * 4;
}

/* The pairs of a stage of raw windows ([nrs][G][WP] half bins, every
 * thread of the block): word k of pair r, projection g = (bin k of row r,
 * bin k of row r + 1) as half2, for the np pairs the tile's plane rows
 * use (r = 0 … np − 1) and the window's nb bins of the ng projections.
 * Units of 4 bins: one 8-byte load from each row, 4 byte permutes, one
 * 16-byte store; unit u is at u·8 bytes in the raw windows and u·16 in the
 * pairs, so a warp's loads and stores are contiguous (no bank conflicts). */
template <int G, int WP>
__device__ static inline void
tilt_il_build (const __half   *raw,
               unsigned int   *pairs,
               const TiltMeta *m,
               int             ng,
               int             np)
{
  constexpr unsigned int WU = WP / 4;
  const unsigned int n = (unsigned int) (np * G) * WU;

  for (unsigned int u = threadIdx.x; u < n; u += TILT_X)
    {
      const unsigned int w = u / WU, v = u - w * WU, g = w % G;

      if ((int) g < ng && (int) (v * 4) < m[g].nb)
        {
          const uint2 lo = *(const uint2 *) (raw + (size_t) u * 4);
          const uint2 hi = *(const uint2 *) (raw + (size_t) u * 4 + G * WP);

          *(uint4 *) (pairs + (size_t) u * 4) =
            make_uint4 (__byte_perm (lo.x, hi.x, 0x5410), __byte_perm (lo.x, hi.x, 0x7632),
                        __byte_perm (lo.y, hi.y, 0x5410), __byte_perm (lo.y, hi.y, 0x7632));
        }
    }
}

/* A bin of the ring at shared address ad (bytes), as float. */
template <typename E>
__device__ static inline float
tilt_lds (unsigned int ad)
{
  if constexpr (sizeof (E) == 2)
    {
      unsigned short v;

      asm volatile ("ld.shared.u16 %0, [%1];" : "=h" (v) : "r" (ad));
      return __half2float (__ushort_as_half (v));
    }
  else
    {
      float v;

      asm volatile ("ld.shared.f32 %0, [%1];" : "=f" (v) : "r" (ad));
      return v;
    }
}

/* Bins at shared addresses lo and hi as one half2 (lo in the low half). */
__device__ static inline __half2
tilt_lds2 (unsigned int lo,
           unsigned int hi)
{
  unsigned short a, b;

  asm volatile ("ld.shared.u16 %0, [%1];" : "=h" (a) : "r" (lo));
  asm volatile ("ld.shared.u16 %0, [%1];" : "=h" (b) : "r" (hi));
  return __halves2half2 (__ushort_as_half (a), __ushort_as_half (b));
}

/* A word of the interleaved pairs at shared address ad: bin k of the lower
 * stored row (low half) and of the upper (high half). */
__device__ static inline __half2
tilt_lds_pair (unsigned int ad)
{
  unsigned int v;

  asm volatile ("ld.shared.b32 %0, [%1];" : "=r" (v) : "r" (ad));
  return *reinterpret_cast<__half2 *> (&v);
}

/* One projection of a stage for the 8 plane rows of this thread, with one
 * shared address per plane row (E: the stored type; WP: the row stride
 * in E; goff: the projection's window in the stage, bytes): rb[q] is the
 * shared byte address of row q's lower stored row in this stage's first
 * window less the rounding constant's bits times the bin size, so that
 * adding the bits of t + 1.5·2²³ (one LEA) gives bin k's address and the
 * other three bins, the projection's window (goff) included, are
 * immediate offsets of the loads.  Linear: t is the position itself (no
 * 0.5 shift), k = floor(t) by rounding down (__fadd_rd), w1 = t − k.
 * IL (with PK): rb[q] points into the interleaved pairs instead, one
 * 32-bit word a bin (both stored rows), so bin k's pair is one load and
 * bin k + 1's another, at +4. */
template <typename E, int WP, bool TWO, int LINEAR, bool CLAMP, bool PK = false, bool IL = false>
__device__ static inline void
tilt_project (const unsigned int *rb,
              unsigned int        goff,
              const TiltMeta     &m,
              float               tb,
              float              *acc_a,
              float              *acc_b,
              __half2            *acc_h,
              bool                first)
{
  constexpr int SH = IL ? 2 : sizeof (E) == 2 ? 1 : 2;
  constexpr unsigned int B = IL ? 4 : sizeof (E), R = WP * sizeof (E);

#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    {
      /* Row 0: tb itself (0·e is 0 for a finite e; the fma would stay). */
      float t = q == 0 ? tb : fmaf ((float) q, m.e, tb);

      if (CLAMP)
        t = fminf (fmaxf (t, m.cmin), m.cmax);

      const float tm = LINEAR ? __fadd_rd (t, TILT_MAGIC) : __fadd_rn (t, TILT_MAGIC);
      const unsigned int ad = rb[q] + goff + ((unsigned int) __float_as_int (tm) << SH);

      if (LINEAR)
        {
          const float w1 = __fsub_rn (t, __fsub_rn (tm, TILT_MAGIC)), w0 = 1.0f - w1;

          if constexpr (PK)
            {
              /* Packed (half store, two rows): bin k of both stored rows
               * in one half2, bin k + 1 in another, both rows
               * interpolated by two HFMA2 with the weights (w0, w1)
               * broadcast from one half2. */
              const __half2 w = __floats2half2_rn (w0, w1);
              __half2 pk, pk1;

              if constexpr (IL)
                {
                  pk = tilt_lds_pair (ad);
                  pk1 = tilt_lds_pair (ad + B);
                }
              else
                {
                  pk = tilt_lds2 (ad, ad + R);
                  pk1 = tilt_lds2 (ad + B, ad + R + B);
                }

              /* The stage's first projection starts the sums (no zeroing). */
              const __half2 lo = first ? __hmul2 (pk, __low2half2 (w))
                                       : __hfma2 (pk, __low2half2 (w), acc_h[q]);

              acc_h[q] = __hfma2 (pk1, __high2half2 (w), lo);
              continue;
            }
          acc_a[q] = fmaf (w1, tilt_lds<E> (ad + B), fmaf (w0, tilt_lds<E> (ad), acc_a[q]));
          if (TWO)
            acc_b[q] =
              fmaf (w1, tilt_lds<E> (ad + R + B), fmaf (w0, tilt_lds<E> (ad + R), acc_b[q]));
        }
      else
        {
          acc_a[q] += tilt_lds<E> (ad);
          if (TWO)
            acc_b[q] += tilt_lds<E> (ad + R);
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

/* T: the stored type; VEC bins per copy (16 bytes, or 1); G ring
 * projections per stage; TWO: some plane row lies between two stored rows;
 * TX: the hybrid's texture projections per stage (0: none; LATE: the one
 * texture projection added after the stage's last ring projection).
 * Three blocks per SM (four with G = 2 of a half store: 34 KiB of bins,
 * at most 64 registers).  PK: the packed half2 sums; IL (with PK): from
 * interleaved pairs (see tilt_il_build); NB: blocks an SM (0: as above).
 * With IL or NB the ring holds rows_n stored rows per projection in a
 * stage, the rows the plane needs (else TILT_NR). */
template <typename T, int VEC, int G, bool TWO, int LINEAR, int TX = 0, bool LATE = false,
          bool PK = false, bool IL = false, int NB = 0>
__global__ static void __launch_bounds__ (TILT_X, NB ? NB : G == 2 && sizeof (T) == 2 ? 4 : 3)
plane_tilt_kernel (const T      *rows,
                   const float2 *trig,
                   PlaneArgs     a,
                   int           rows_n,
                   float        *out)
{
  static_assert (TX == 0 || (LINEAR && TWO && TX <= G), "hybrid: linear, two rows, TX ≤ G");
  static_assert (!LATE || TX == 1, "late adds: one texture projection a stage");
  static_assert (!PK || (sizeof (T) == 2 && LINEAR && TWO), "packed: half store, linear, two rows");
  static_assert (!IL || (PK && VEC == 8), "interleaved pairs: packed sums, 16-byte copies");
  constexpr int GS = G + TX;                    /* projections per stage */
  constexpr int WP = TILT_WP (VEC);
  constexpr int WV = WP / VEC;
  constexpr int BYTES = VEC * (int) sizeof (T);
  /* Plans kept: the ring's stages and the next; IL one more (its sums
   * run a stage behind the copies' wait). */
  constexpr int NM = TILT_NS + (IL ? 2 : 1);
  const int nrs = IL || NB ? rows_n : TILT_NR;  /* rows per projection in a stage */
  const int STAGE = G * nrs * WP;               /* bins per stage */
  extern __shared__ __align__ (16) unsigned char tilt_smem[];
  /* [TILT_NS][G][nrs][WP]; IL: [TILT_NS][nrs][G][WP], then its pairs. */
  T *ring = (T *) tilt_smem;
  __shared__ TiltMeta meta[NM][G];
  __shared__ TiltRows rs;
  /* The hybrid (TX > 0): per stage TX projections more, fetched through
   * the texture objects of the stored rows (x0, d, e, y of each; the
   * objects of each plane row's two stored rows). */
  __shared__ float4 tmeta[NM][TX > 0 ? TX : 1];
  __shared__ __align__ (16) cudaTextureObject_t thandle[TX > 0 ? TILT_K : 1][2];
  const int tid = threadIdx.x, iA = blockIdx.x * TILT_X, jA = blockIdx.y * TILT_K;
  const int n_stages = (a.P + GS - 1) / GS;
  float acc_a[TILT_K], acc_b[TILT_K];
  __half2 acc_h[PK ? TILT_K : 1];   /* packed: (lower, upper) row's sums of a stage */
  unsigned int rb[TILT_K];

  if (!tilt_begin (a, iA, jA, nrs, TWO, &rs, acc_a, acc_b, out))
    return;
#pragma unroll
  for (int q = 0; q < (PK ? TILT_K : 1); q++)
    acc_h[q] = __float2half2_rn (0.0f);     /* set by each stage's first projection */
  if constexpr (TX > 0)
    if (tid < TILT_K)
      {
        /* Plane rows outside the rows held read row rlo (their sums are
         * not written); the upper row of the last row held is that row
         * again (weight 0). */
        const int r = rs.rlo + rs.ro[tid];

        thandle[tid][0] = a.tex[r];
        thandle[tid][1] = a.tex[min (r + 1, a.n_rows - 1)];
      }

  const unsigned int inside = tilt_inside (a, rs, iA, jA);

  const unsigned int sbase = (unsigned int) __cvta_generic_to_shared (ring);
  /* IL: the interleaved pairs after the ring, two stages of them. */
  const unsigned int pbase = sbase + (unsigned int) tilt_ring_bytes<T, VEC, G> (nrs);
  const unsigned int pstage = (unsigned int) (IL ? tilt_il_stage_bytes<G> (nrs) : 0);

#pragma unroll
  for (int q = 0; q < TILT_K; q++)
    /* Stage 0's address of row q's window less the rounding bits
     * (modulo 2³²; see tilt_project). */
    if constexpr (IL)
      rb[q] = pbase + (unsigned int) (rs.ro[q] * G * WP * 4) - ((unsigned int) TILT_MAGIC_BITS << 2);
    else
      rb[q] = sbase + (unsigned int) (rs.ro[q] * WP * (int) sizeof (T)) -
              ((unsigned int) TILT_MAGIC_BITS << (sizeof (T) == 2 ? 1 : 2));

  const int rlo = rs.rlo, nr = rs.nr;

  /* Windows of a stage: thread g < G takes projection stage·G + g. */
  auto plan = [&] (int stage) {
    const int p = stage * GS + tid;

    if (tid < G && stage < n_stages && p < a.P)
      meta[stage % NM][tid] = tilt_window<VEC> (a, __ldg (trig + p), iA, jA);
    if constexpr (TX > 0)
      if (tid >= G && tid < GS && stage < n_stages && p < a.P)
        tmeta[stage % NM][tid - G] = tilt_tex_meta (a, __ldg (trig + p), iA, jA, p);
  };

  /* The windows of a stage's nr stored rows; zeros off the detector and
   * past the last row held.  Unit u: (row r, projection g, bins v·VEC …). */
  auto issue = [&] (int stage) {
    if (stage < n_stages)
      {
        T *buf = ring + (size_t) (stage % TILT_NS) * STAGE;
        const int p0 = stage * GS;

        /* Slot (projection g, bins v·VEC …) per thread, its nr stored
         * rows one after the other: the slot's window, addresses and
         * detector test once, then a row stride per copy.  (Units numbered
         * over rows too, each with its own divisions and 64-bit address,
         * took about 65 SASS instructions a copy: a third of the kernel's
         * instructions on the oblique plane, ncu 19:45.)  IL: rows
         * [row][projection], so a row's stride is G·WP; else
         * [projection][row], WP. */
        constexpr size_t DSTEP = IL ? (size_t) G * WP : (size_t) WP;

        for (unsigned int u = tid; u < (unsigned int) (G * WV); u += TILT_X)
          {
            const int v = (int) (u % WV), g = (int) (u / WV);
            const TiltMeta &m = meta[stage % NM][g];

            if (p0 + g < a.P && v * VEC < m.nb)
              {
                const int col = m.lo + v * VEC;
                const bool det = col >= 0 && col + VEC <= a.W;
                const int held = min (nr, a.n_rows - rlo);   /* rows copied; zeros past them */
                const T *src = rows + (size_t) rlo * a.row_elems + (size_t) (p0 + g) * a.W +
                               (det ? col : 0);
                T *dst = buf + (IL ? (size_t) g * WP : (size_t) g * nrs * WP) + v * VEC;

                for (int r = 0; r < nr; r++, src += a.row_elems, dst += DSTEP)
                  {
                    const bool on = det && r < held;

                    if constexpr (BYTES == 16 || BYTES == 4)
                      copy_async<BYTES> (dst, on ? src : rows, on ? BYTES : 0);
                    else
                      *dst = on ? *src : (T) 0.0f;
                  }
              }
          }
      }
    asm volatile ("cp.async.commit_group;\n" ::);
  };

  /* Stage s in shared memory: each projection's 8 plane rows. */
  auto sum = [&] (int s) {
    const int ng = min (G, a.P - s * GS);
    const int nt = TX > 0 ? min (TX, a.P - s * GS - G) : 0;   /* texture projections */
    float ta[TILT_K], tb2[TILT_K];

#pragma unroll
    for (int g = 0; g < G; g++)
      {
        /* The hybrid: texture projection h's fetches issued before ALU
         * projection h·G / TX and added after it (LATE, one texture
         * projection: after the stage's last), so the texture units work
         * while the sums from shared memory run. */
        int h = -1;

#pragma unroll
        for (int hh = 0; hh < TX; hh++)
          if (hh * G / (TX > 0 ? TX : 1) == g)
            h = hh;
        if (TX > 0 && h >= 0 && h < nt)
          tilt_tex_fetch (thandle, tmeta[s % NM][h], ta, tb2);
        if (LATE)
          h = g == G - 1 ? 0 : -1;
        if (g < ng)
          {
            const TiltMeta m = meta[s % NM][g];
            const float tb = fmaf ((float) tid, m.d, m.t0);
            /* IL: the pairs' layout is [pair][G][WP] words. */
            const unsigned int goff =
              IL ? (unsigned int) (g * WP * 4) : (unsigned int) (g * nrs * WP * sizeof (T));

            if (m.inner)
              tilt_project<T, WP, TWO, LINEAR, false, PK, IL> (rb, goff, m, tb, acc_a, acc_b,
                                                               acc_h, g == 0);
            else
              tilt_project<T, WP, TWO, LINEAR, true, PK, IL> (rb, goff, m, tb, acc_a, acc_b,
                                                              acc_h, g == 0);
          }
        if (TX > 0 && h >= 0 && h < nt)
#pragma unroll
          for (int q = 0; q < TILT_K; q++)
            {
              acc_a[q] += ta[q];
              acc_b[q] += tb2[q];
            }
      }
    /* Packed: the stage's half2 sums into the float sums. */
    if constexpr (PK)
      {
#pragma unroll
        for (int q = 0; q < TILT_K; q++)
          {
            const float2 f = __half22float2 (acc_h[q]);

            acc_a[q] += f.x;
            acc_b[q] += f.y;
          }
      }
    /* The next stage's windows: the ring's next buffer (IL: the other
     * buffer of pairs). */
    const unsigned int step = IL ? (s % 2 == 1 ? 0u - pstage : pstage)
                              : s % TILT_NS == TILT_NS - 1
                                ? (unsigned int) (-(TILT_NS - 1) * STAGE * (int) sizeof (T))
                                : (unsigned int) (STAGE * (int) sizeof (T));

#pragma unroll
    for (int q = 0; q < TILT_K; q++)
      rb[q] += step;
  };

  if constexpr (IL)
    {
      /* As cp_async_ring, with the pairs of stage s built once its copies
       * are in and summed at the next stage's barrier: one barrier a
       * stage, the build of s beside the sums of s − 1 (two buffers of
       * pairs). */
      for (int s = 0; s < TILT_NS; s++)
        plan (s);
      __syncthreads ();
      for (int s = 0; s < TILT_NS - 1; s++)
        issue (s);
      for (int s = 0; s <= n_stages; s++)
        {
          if (s < n_stages)
            asm volatile ("cp.async.wait_group %0;\n" :: "n" (TILT_NS - 2));
          /* Stage s is in; the pairs of s − 1 are built, the sums of
           * s − 2 done. */
          __syncthreads ();
          if (s < n_stages)
            {
              issue (s + TILT_NS - 1);
              plan (s + TILT_NS);
              tilt_il_build<G, WP> ((const __half *) ring + (size_t) (s % TILT_NS) * STAGE,
                                    (unsigned int *) (tilt_smem + (pbase - sbase)) +
                                      (s % 2) * (pstage / 4),
                                    meta[s % NM], min (G, a.P - s * GS), nr - 1);
            }
          if (s > 0)
            sum (s - 1);
        }
      asm volatile ("cp.async.wait_group 0;\n" ::);
    }
  else
    cp_async_ring<TILT_NS> (n_stages, plan, issue, sum);
  tilt_write (a, rs, iA, jA, inside, TWO, a.inv_scale, acc_a, acc_b, out);
}

/* G: ring projections per stage.  Half, 16-byte units: 4 (3 × 67 KiB of
 * bins, three blocks per SM); float: 2.  On the H100 (half store, 2048²
 * planes) 8 projections per stage, one block per SM, took 1.5 times as
 * long as 4 and 2 (four blocks per SM) no less: the kernel wants warps in
 * flight.  TX, LATE: the hybrid (plane_tilt_kernel; a.tex its texture
 * objects). */
template <typename T, int VEC, int G, int TX = 0, bool LATE = false, bool PK = false,
          bool IL = false, int NB = 0>
static gboolean
launch_tilt (const T *rows, const PlaneArgs &a, const LaunchArgs &l, GError **error)
{
  const int interp = l.interp;
  dim3 grid ((a.w + TILT_X - 1) / TILT_X, (a.h + TILT_K - 1) / TILT_K);
  /* Every plane row on a stored row (integer z, integer step): no blend. */
  const bool two = !(a.z0 == rintf (a.z0) && a.vz == rintf (a.vz));
  /* IL, NB: the packed kernel (interleaved pairs, blocks an SM) with a
   * ring of the rows the plane needs (the other kernels: TILT_NR rows). */
  const bool packed = TX > 0 || (two && interp);
  const bool il = IL && packed;
  const int nrs = (IL || NB) && packed ? tilt_plane_rows (a.vz) : TILT_NR;
  const size_t smem =
    tilt_ring_bytes<T, VEC, G> (nrs) + (il ? 2 * tilt_il_stage_bytes<G> (nrs) : 0);
  /* The hybrid's launchers instantiate the hybrid kernel only. */
  void (*kern) (const T *, const float2 *, PlaneArgs, int, float *);

  if constexpr (TX > 0)
    kern = plane_tilt_kernel<T, VEC, G, true, 1, TX, LATE, PK, IL, NB>;
  else if (two)   /* the packed sums apply to linear interpolation between rows only */
    kern = interp ? plane_tilt_kernel<T, VEC, G, true, 1, 0, false, PK, IL, NB>
                  : plane_tilt_kernel<T, VEC, G, true, 0>;
  else
    kern = interp ? plane_tilt_kernel<T, VEC, G, false, 1> : plane_tilt_kernel<T, VEC, G, false, 0>;

  if (!TOMO_CUDA_CHECK (cudaFuncSetAttribute (kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int) smem), error))
    return FALSE;
  kern<<<grid, TILT_X, smem, l.stream>>> (rows, l.trig, a, nrs, l.out);
  return TOMO_CUDA_CHECK_LAUNCH ("plane tilt kernel", error);
}

/* TOMO_PLANE_TILT_TEX (see tomo-gpu-store-private.h): "G:T" as 10·G + T
 * for the splits built (4:1 … 4:4, 3:1, 2:1, 2:2; 2:1L, 4:1L), 0 for none ("0",
 * anything else).  Unset: none (`auto` runs no texture share). */
int
_tomo_gpu_store_tilt_hybrid_split (void)
{
  const char *v = g_getenv ("TOMO_PLANE_TILT_TEX");
  int g = 0, t = 0;

  if (v == NULL)
    return 0;
  if (sscanf (v, "%d:%d", &g, &t) != 2)
    return 0;
  /* "G:1L": the one texture projection's values added after the stage's
   * last ring projection (100 + 10·G + 1). */
  if ((g == 2 || g == 4) && t == 1 && strchr (v, 'L') != NULL)
    return 100 + 10 * g + t;
  if ((g == 4 && t >= 1 && t <= 4) || (g == 3 && t == 1) || (g == 2 && t >= 1 && t <= 2))
    return 10 * g + t;
  return 0;
}

/* TOMO_PLANE_TILT_PATH=pack: the packed sums (half store, linear, plane
 * rows between stored rows; elsewhere the raw path), with the hybrid
 * where TOMO_PLANE_TILT_TEX is set; unset or auto: TILT_PACK_AUTO.  il:
 * the packed sums from interleaved pairs (see tilt_il_wanted). */
static gboolean
tilt_pack_wanted (void)
{
  const char *path = g_getenv ("TOMO_PLANE_TILT_PATH");

  if (path == NULL || strcmp (path, "auto") == 0)
    return TILT_PACK_AUTO;
  return strcmp (path, "pack") == 0 || strcmp (path, "il") == 0 || strcmp (path, "il4") == 0;
}

/* The packed kernel's variant for a plane (TOMO_PLANE_TILT_PATH): il,
 * from interleaved pairs where the plane's rows need at most
 * TILT_IL_NR_MAX stored rows a tile (else the packed sums as `pack`); il4,
 * the same with four blocks an SM where they need at most 4; auto: il
 * where a tile needs at most TILT_IL_AUTO_NR rows and no texture share
 * runs (hybrid).  *nb: the blocks an SM, 0 for the default.  (The packed
 * sums with four blocks an SM alone, a ring of the rows the plane needs
 * and 3 projections a stage where 4 would not fit, measured slower on the
 * H100 and were removed: docs/PERFORMANCE.md.) */
static void
tilt_packed_variant (const PlaneArgs *a,
                     gboolean         hybrid,
                     gboolean        *il,
                     int             *nb)
{
  const char *path = g_getenv ("TOMO_PLANE_TILT_PATH");
  const int n = tilt_plane_rows (a->vz);

  *il = FALSE;
  *nb = 0;
  if (path == NULL || strcmp (path, "auto") == 0)
    {
      *il = !hybrid && n <= TILT_IL_AUTO_NR;
      *nb = 0;
    }
  else if ((strcmp (path, "il") == 0 || strcmp (path, "il4") == 0) && n <= TILT_IL_NR_MAX)
    {
      *il = TRUE;
      *nb = strcmp (path, "il4") == 0 && n <= 4 ? 4 : 0;
    }
}

gboolean
_tomo_gpu_store_tilt_hybrid_ok (gboolean half, const PlaneArgs *a, int interp)
{
  /* Linear interpolation from a half store of 16-byte rows, plane rows
   * between stored rows (the kernel blends two). */
  return half && interp == 1 && a->W % 8 == 0 && !(a->z0 == rintf (a->z0) && a->vz == rintf (a->vz)) &&
         _tomo_gpu_store_tilt_hybrid_split () != 0;
}

/* As _tomo_gpu_store_tile_launch (tomo-gpu-store-private.h), with the
 * hybrid where a->tex is given and _tomo_gpu_store_tilt_hybrid_ok() (split
 * from TOMO_PLANE_TILT_TEX, see there; TOMO_PLANE_TILT_PATH=raw: the raw
 * path alone, the bench's and the tests' baseline). */
gboolean
_tomo_gpu_store_tilt_launch (const void *rows, gboolean half, const PlaneArgs *a,
                             const LaunchArgs *l, GError **error)
{
  const gboolean wide = a->W % (half ? 8 : 4) == 0;
  const gboolean pack = half && wide && tilt_pack_wanted ();
  const __half *r = (const __half *) rows;
  gboolean il = FALSE;
  int nb = 0;

  /* The hybrid's launchers: linear interpolation (hybrid_ok() asks). */
  if (a->tex != NULL && _tomo_gpu_store_tilt_hybrid_ok (half, a, l->interp))
    {
      if (pack)
        tilt_packed_variant (a, TRUE, &il, &nb);

      switch (_tomo_gpu_store_tilt_hybrid_split ())
        {
        case 41: return launch_tilt<__half, 8, 4, 1> (r, *a, *l, error);
        case 42: return launch_tilt<__half, 8, 4, 2> (r, *a, *l, error);
        case 43: return launch_tilt<__half, 8, 4, 3> (r, *a, *l, error);
        case 44: return launch_tilt<__half, 8, 4, 4> (r, *a, *l, error);
        case 31: return launch_tilt<__half, 8, 3, 1> (r, *a, *l, error);
        case 21: return launch_tilt<__half, 8, 2, 1> (r, *a, *l, error);
        case 22: return launch_tilt<__half, 8, 2, 2> (r, *a, *l, error);
        case 121: return launch_tilt<__half, 8, 2, 1, true> (r, *a, *l, error);
        case 141:
          if (il && nb == 4)
            return launch_tilt<__half, 8, 4, 1, true, true, true, 4> (r, *a, *l, error);
          if (il)
            return launch_tilt<__half, 8, 4, 1, true, true, true> (r, *a, *l, error);
          return pack ? launch_tilt<__half, 8, 4, 1, true, true> (r, *a, *l, error)
                      : launch_tilt<__half, 8, 4, 1, true> (r, *a, *l, error);
        default: break;
        }
    }
  if (pack)
    tilt_packed_variant (a, FALSE, &il, &nb);
  if (il && nb == 4)
    return launch_tilt<__half, 8, 4, 0, false, true, true, 4> (r, *a, *l, error);
  if (il)
    return launch_tilt<__half, 8, 4, 0, false, true, true> (r, *a, *l, error);
  if (pack)
    return launch_tilt<__half, 8, 4, 0, false, true> (r, *a, *l, error);
  if (half)
    return wide ? launch_tilt<__half, 8, 4> (r, *a, *l, error)
                : launch_tilt<__half, 1, 4> (r, *a, *l, error);
  return wide ? launch_tilt<float, 4, 2> ((const float *) rows, *a, *l, error)
              : launch_tilt<float, 1, 2> ((const float *) rows, *a, *l, error);
}
