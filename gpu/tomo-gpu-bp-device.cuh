/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Shared by the back projector's CUDA units (tomo-gpu-bp*.cu): the TomoBp
 * state, the geometry every kernel receives, the per-slice vector helpers,
 * the ALU path's shared-memory bins and tile loop (the ALU and hybrid
 * kernels both run it) and the launchers of the four kernel families.
 *
 * Kernel families, one unit each: tomo-gpu-bp-standard.cu (baseline),
 * tomo-gpu-bp-texture.cu, tomo-gpu-bp-alu.cu, tomo-gpu-bp-hybrid.cu;
 * tomo-gpu-bp.cu packs the sinograms, owns the textures and dispatches.
 */
#pragma once

#include <cuda_fp16.h>
#include <math.h>
#include <string.h>

#include "tomo-gpu-bp.h"
#include "tomo-gpu-private.h"


/* Per-projection cos/sin for the kernels that take them from constant
 * memory (standard, texture); more projections run in chunks. */
#define BP_CONST_PROJ 4096
/* Hybrid: per-SM block counters (indexed by %smid). */
#define BP_MAX_SM 1024
/* Largest pitched-texture height we rely on (H100 allows 65000). */
#define BP_MAX_PROJ 65000

struct _TomoBp
{
  int device;
  guint serial;
  guint generation;

  guint width, n_proj;
  float2 *d_cs_f;   /* float cos/sin, source of the constant-memory chunks */
  double2 *d_cs_d;  /* double cos/sin: exact tile bases for the ALU path */

  guint n_slices;   /* loaded, 0 = none */
  guint alloc_w, alloc_p, alloc_s;
  void *d_pack;     /* float / float2 / float4 per bin */
  size_t pitch;
  void *d_half;     /* 4 slices: half4 per bin */
  size_t half_pitch;
  cudaTextureObject_t tex_lin, tex_pt, tex_half;
  /* The same half4 bins seen as a half-float texture, which the texture
   * unit converts and interpolates itself (linear; for nearest the forged
   * tex_half is as fast: 3935 vs 3944 GU/s, H100). */
  cudaTextureObject_t tex_h4_lin;
};

/* ---------------------------------------------------------------------- */
/* Vector helpers: one component per slice                               */

template <int S> struct Vec;
template <> struct Vec<1> { typedef float T; };
template <> struct Vec<2> { typedef float2 T; };
template <> struct Vec<4> { typedef float4 T; };

static __device__ __forceinline__ void vzero (float &a) { a = 0.f; }
static __device__ __forceinline__ void vzero (float2 &a) { a = make_float2 (0.f, 0.f); }
static __device__ __forceinline__ void vzero (float4 &a) { a = make_float4 (0.f, 0.f, 0.f, 0.f); }

static __device__ __forceinline__ void vadd (float &a, float b) { a += b; }
static __device__ __forceinline__ void vadd (float2 &a, float2 b) { a.x += b.x; a.y += b.y; }
static __device__ __forceinline__ void
vadd (float4 &a, float4 b)
{
  a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
}

static __device__ __forceinline__ float vsub (float a, float b) { return a - b; }
static __device__ __forceinline__ float2 vsub (float2 a, float2 b) { return make_float2 (a.x - b.x, a.y - b.y); }
static __device__ __forceinline__ float4
vsub (float4 a, float4 b)
{
  return make_float4 (a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w);
}

/* a += v + f·d */
static __device__ __forceinline__ void vinterp (float &a, float v, float f, float d) { a += fmaf (f, d, v); }
static __device__ __forceinline__ void
vinterp (float2 &a, float2 v, float f, float2 d)
{
  a.x += fmaf (f, d.x, v.x); a.y += fmaf (f, d.y, v.y);
}
static __device__ __forceinline__ void
vinterp (float4 &a, float4 v, float f, float4 d)
{
  a.x += fmaf (f, d.x, v.x); a.y += fmaf (f, d.y, v.y);
  a.z += fmaf (f, d.z, v.z); a.w += fmaf (f, d.w, v.w);
}

/* v − m·d (the "a" of the FMA form, see alu_tile) */
static __device__ __forceinline__ float vaxpy (float v, float m, float d) { return fmaf (-m, d, v); }
static __device__ __forceinline__ float2
vaxpy (float2 v, float m, float2 d)
{
  return make_float2 (fmaf (-m, d.x, v.x), fmaf (-m, d.y, v.y));
}
static __device__ __forceinline__ float4
vaxpy (float4 v, float m, float4 d)
{
  return make_float4 (fmaf (-m, d.x, v.x), fmaf (-m, d.y, v.y), fmaf (-m, d.z, v.z), fmaf (-m, d.w, v.w));
}

static __device__ __forceinline__ float
vshfl_xor (float a, int m)
{
  return __shfl_xor_sync (0xffffffffu, a, m);
}
static __device__ __forceinline__ float2
vshfl_xor (float2 a, int m)
{
  return make_float2 (vshfl_xor (a.x, m), vshfl_xor (a.y, m));
}
static __device__ __forceinline__ float4
vshfl_xor (float4 a, int m)
{
  return make_float4 (vshfl_xor (a.x, m), vshfl_xor (a.y, m), vshfl_xor (a.z, m), vshfl_xor (a.w, m));
}

static __device__ __forceinline__ float vget (float a, int) { return a; }
static __device__ __forceinline__ float vget (float2 a, int i) { return i == 0 ? a.x : a.y; }
static __device__ __forceinline__ float
vget (float4 a, int i)
{
  return i == 0 ? a.x : i == 1 ? a.y : i == 2 ? a.z : a.w;
}

template <int S>
static __device__ __forceinline__ void
store_pixel (float *out, size_t plane, size_t idx, typename Vec<S>::T v, bool acc)
{
#pragma unroll
  for (int s = 0; s < S; s++)
    {
      float x = vget (v, s);
      if (acc)
        x += out[s * plane + idx];
      out[s * plane + idx] = x;
    }
}

static __device__ __forceinline__ float4
unpack_half4 (float2 raw)
{
  __half2 a = __halves2half2 (__ushort_as_half ((unsigned short) (__float_as_uint (raw.x) & 0xffffu)),
                              __ushort_as_half ((unsigned short) (__float_as_uint (raw.x) >> 16)));
  __half2 b = __halves2half2 (__ushort_as_half ((unsigned short) (__float_as_uint (raw.y) & 0xffffu)),
                              __ushort_as_half ((unsigned short) (__float_as_uint (raw.y) >> 16)));
  float2 fa = __half22float2 (a), fb = __half22float2 (b);
  return make_float4 (fa.x, fa.y, fb.x, fb.y);
}

/* Texture fetch of all slices of one bin.  4 slices: HALF4, a float2
 * texture that really holds 4 halves (the paper's forged type: the texture
 * unit returns the bits, nearest only); !HALF4, a half4 texture whose texels
 * the texture unit converts and, in linear mode, interpolates — 4 slices
 * per fetch with the same 8-bit weights as the float textures. */
template <int S, bool HALF4> struct Fetch;
template <> struct Fetch<1, false>
{
  static __device__ __forceinline__ float
  get (cudaTextureObject_t t, float u, float v) { return tex2D<float> (t, u, v); }
};
template <> struct Fetch<2, false>
{
  static __device__ __forceinline__ float2
  get (cudaTextureObject_t t, float u, float v) { return tex2D<float2> (t, u, v); }
};
template <> struct Fetch<4, false>
{
  static __device__ __forceinline__ float4
  get (cudaTextureObject_t t, float u, float v) { return tex2D<float4> (t, u, v); }
};
template <> struct Fetch<4, true>
{
  static __device__ __forceinline__ float4
  get (cudaTextureObject_t t, float u, float v) { return unpack_half4 (tex2D<float2> (t, u, v)); }
};

/* Kernel arguments shared by all kernels. */
struct BpGeom
{
  int roi_x, roi_y, roi_w, roi_h;
  int width, n_proj;
  float half_w;   /* (W − 1)/2 */
  float center_f;
  double half_w_d;
  double center;
  size_t plane;   /* roi_w × roi_h */
  int variant;    /* 4 slices from halves: BP_V_* bits (host side only) */
};

/* Variants of the 4-slice half-precision paths (0 = the original, HSRC the
 * default: tomo-gpu-bp.cu has the measurements).
 * HSRC: the ALU blocks fill their cache from the half4 bins (8 bytes per bin
 * and load, differences in half2) instead of the float4 ones: half the
 * global-load traffic through L1TEX, which the texture blocks share, and no
 * spills (64 registers).  24 projections per caching pass and the texture
 * unit's result as packed halves (bits 2 and 4) were slower and removed. */
#define BP_V_HSRC 1
#define BP_N_VARIANTS 2

/* ---------------------------------------------------------------------- */
/* ALU kernel                                                             */

/* Shared-memory bin formats.  Linear ("advanced caching"): value and the
 * difference to the next bin side by side, so one load and one FMA per
 * slice interpolate.  Nearest: the value only.  HALF: the same in halves. */
struct __align__ (16) F8 { float4 v, d; };

template <int S, bool LIN, bool HALF> struct Bin;

#define BIN_FLOAT(S_, T_, RAW_, PACK_, UNPACK_)                                       \
  template <> struct Bin<S_, true, false>                                            \
  {                                                                                  \
    typedef RAW_ Raw;                                                                \
    static __device__ __forceinline__ Raw pack (T_ v, T_ d) { PACK_ }                \
    static __device__ __forceinline__ void get (const Raw &r, T_ &v, T_ &d) { UNPACK_ } \
  };

BIN_FLOAT (1, float, float2, return make_float2 (v, d);, v = r.x; d = r.y;)
BIN_FLOAT (2, float2, float4, return make_float4 (v.x, v.y, d.x, d.y);,
           v = make_float2 (r.x, r.y); d = make_float2 (r.z, r.w);)
BIN_FLOAT (4, float4, F8, F8 r; r.v = v; r.d = d; return r;, v = r.v; d = r.d;)

template <int S> struct Bin<S, false, false>
{
  typedef typename Vec<S>::T Raw;
  static __device__ __forceinline__ Raw pack (Raw v, Raw) { return v; }
  static __device__ __forceinline__ void get (const Raw &r, Raw &v, Raw &) { v = r; }
};

static __device__ __forceinline__ unsigned int
h2u (__half2 h)
{
  return *(unsigned int *) &h;
}
static __device__ __forceinline__ float2
u2f (unsigned int u)
{
  return __half22float2 (*(__half2 *) &u);
}

template <> struct Bin<1, true, true>
{
  typedef unsigned int Raw;
  static __device__ __forceinline__ Raw pack (float v, float d) { return h2u (__floats2half2_rn (v, d)); }
  static __device__ __forceinline__ void get (const Raw &r, float &v, float &d) { float2 f = u2f (r); v = f.x; d = f.y; }
};
template <> struct Bin<2, true, true>
{
  typedef uint2 Raw;
  static __device__ __forceinline__ Raw
  pack (float2 v, float2 d)
  {
    return make_uint2 (h2u (__floats2half2_rn (v.x, v.y)), h2u (__floats2half2_rn (d.x, d.y)));
  }
  static __device__ __forceinline__ void get (const Raw &r, float2 &v, float2 &d) { v = u2f (r.x); d = u2f (r.y); }
};
template <> struct Bin<4, true, true>
{
  typedef uint4 Raw;
  static __device__ __forceinline__ Raw
  pack (float4 v, float4 d)
  {
    return make_uint4 (h2u (__floats2half2_rn (v.x, v.y)), h2u (__floats2half2_rn (v.z, v.w)),
                       h2u (__floats2half2_rn (d.x, d.y)), h2u (__floats2half2_rn (d.z, d.w)));
  }
  static __device__ __forceinline__ void
  get (const Raw &r, float4 &v, float4 &d)
  {
    float2 a = u2f (r.x), b = u2f (r.y), c = u2f (r.z), e = u2f (r.w);
    v = make_float4 (a.x, a.y, b.x, b.y);
    d = make_float4 (c.x, c.y, e.x, e.y);
  }
};
template <> struct Bin<1, false, true>
{
  typedef __half Raw;
  static __device__ __forceinline__ Raw pack (float v, float) { return __float2half_rn (v); }
  static __device__ __forceinline__ void get (const Raw &r, float &v, float &) { v = __half2float (r); }
};
template <> struct Bin<2, false, true>
{
  typedef unsigned int Raw;
  static __device__ __forceinline__ Raw pack (float2 v, float2) { return h2u (__floats2half2_rn (v.x, v.y)); }
  static __device__ __forceinline__ void get (const Raw &r, float2 &v, float2 &) { v = u2f (r); }
};
template <> struct Bin<4, false, true>
{
  typedef uint2 Raw;
  static __device__ __forceinline__ Raw
  pack (float4 v, float4)
  {
    return make_uint2 (h2u (__floats2half2_rn (v.x, v.y)), h2u (__floats2half2_rn (v.z, v.w)));
  }
  static __device__ __forceinline__ void
  get (const Raw &r, float4 &v, float4 &)
  {
    float2 a = u2f (r.x), b = u2f (r.y);
    v = make_float4 (a.x, a.y, b.x, b.y);
  }
};

/* Global load of one packed bin, 0 outside the detector. */
template <int S>
static __device__ __forceinline__ typename Vec<S>::T
load_bin (const char *__restrict__ row, int b, int width)
{
  typename Vec<S>::T v;

  vzero (v);
  if (b >= 0 && b < width)
    v = __ldg ((const typename Vec<S>::T *) row + b);
  return v;
}

/* Tile geometry shared by the ALU and hybrid kernels: 256 threads on a
 * TILE×TILE square.  Half-warps cover 4×4 squares along a Z-order curve;
 * the 16 squares of a block lie in a row along x (TILE = 64: 64×4 pixels per
 * step, 16 steps down) or in two rows (TILE = 32: 32×8 pixels, 4 steps). */
template <int TILE> struct Tile
{
  static constexpr int PPT = TILE * TILE / 256;      /* pixels per thread */
  static constexpr int STEP = 256 / TILE;            /* rows per step */
  static constexpr int CACHE = TILE * 3 / 2;         /* bins per projection */

  static __device__ __forceinline__ void
  map (int tid, int &lx, int &ly)
  {
    const int z = tid & 15;
    const int zx = (z & 1) | ((z >> 1) & 2);
    const int zy = ((z >> 1) & 1) | ((z >> 2) & 2);
    const int sq = tid >> 4;
    const int per_row = TILE / 4;

    lx = (sq % per_row) * 4 + zx;
    ly = (sq / per_row) * 4 + zy;
  }
};

/* The sums of thread (lx, ly), pixels (ix, iy0 + i·STEP), into the output
 * within the ROI. */
template <int S, int TILE>
static __device__ __forceinline__ void
store_tile (float *out, const BpGeom &g, int ix, int iy0, const typename Vec<S>::T (&acc)[Tile<TILE>::PPT])
{
  if (ix >= g.roi_w)
    return;
#pragma unroll
  for (int i = 0; i < Tile<TILE>::PPT; i++)
    {
      const int iy = iy0 + i * Tile<TILE>::STEP;
      if (iy < g.roi_h)
        store_pixel<S> (out, g.plane, (size_t) iy * g.roi_w + ix, acc[i], false);
    }
}

/* 4 slices summed in half2 (two a pixel) over a run of projections, then
 * added to the float sums. */
template <int N>
static __device__ __forceinline__ void
half_sums_zero (__half2 (&h)[N][2])
{
#pragma unroll
  for (int i = 0; i < N; i++)
    h[i][0] = h[i][1] = __float2half2_rn (0.f);
}
template <typename T, int N>
static __device__ __forceinline__ void
half_sums_add (T (&acc)[N], const __half2 (&h)[N][2])
{
#pragma unroll
  for (int i = 0; i < N; i++)
    {
      const float2 a = __half22float2 (h[i][0]), b = __half22float2 (h[i][1]);

      vadd (acc[i], make_float4 (a.x, a.y, b.x, b.y));
    }
}

/* Exact (double) position of the tile's first pixel for one projection and
 * the first cached bin h_m = floor(t_min − 1/4): t_min is the smallest t
 * over the tile, reached at the corner given by the signs of cos and sin
 * (the paper's c_m).  The quarter bin keeps float rounding from ever
 * reaching below bin 0 of the cache; (TILE−1)·√2 + 1.25 + 1 < 3/2·TILE
 * bins then always suffice. */
template <int TILE>
static __device__ __forceinline__ float4
tile_constants (const double2 cs, double x0, double y0, double center, double shift)
{
  const double base = fma (x0, cs.x, fma (-y0, cs.y, center));
  const double tmin = base + fmin (0.0, (TILE - 1) * cs.x) + fmin (0.0, -(TILE - 1) * cs.y);
  const double hm = floor (tmin - 0.25);

  return make_float4 ((float) (base - hm - shift), (float) cs.x, (float) cs.y, __int_as_float ((int) hm));
}

/* Projections per caching pass.  32×32 tiles: 16, or 8 where the
 * double-buffered cache of big bins would not leave room for two blocks per
 * SM.  64×64 tiles: as many as 40 KiB of double-buffered cache hold (32 or
 * 24), which halves the barriers and per-pass work (1-slice linear hybrid
 * +3 %, nearest alu +1–2 % on the H100); float4 bins (2-slice linear) stay
 * at 8. */
template <int TILE, typename Raw>
struct AluGroup
{
  static constexpr int CACHE = Tile<TILE>::CACHE;
  static constexpr int BYTES = CACHE * (int) sizeof (Raw) * 2;   /* per projection, both buffers */
  static constexpr int GROUP0 = CACHE * (int) sizeof (Raw) * 16 <= 12288 ? 16 : 8;
  static constexpr int GROUP = TILE != 64 ? GROUP0
                             : BYTES * 32 <= 40960 ? 32 : BYTES * 24 <= 40960 ? 24 : GROUP0;
  static constexpr int NLOAD = (GROUP * CACHE + 255) / 256;  /* bins per thread and pass */
  /* Warp fill (64×64 tiles): each warp caches whole projections, lane l
   * bins l, l+32, l+64 — projection, row address and bounds test are
   * per warp, not per bin. */
  static constexpr bool WARP_FILL = CACHE % 32 == 0 && GROUP % 8 == 0;
  static constexpr int CW = CACHE / 32;   /* loads per projection and lane */
  static constexpr int QW = GROUP / 8;    /* projections per warp and pass */
  static constexpr int NREG = WARP_FILL ? QW * CW : NLOAD;
};

/* HSRC fill: one half4 bin (uint2), 0 outside the detector. */
static __device__ __forceinline__ uint2
load_hbin (const char *__restrict__ row, int b, int width)
{
  uint2 v = make_uint2 (0u, 0u);

  if (b >= 0 && b < width)
    v = __ldg ((const uint2 *) row + b);
  return v;
}

static __device__ __forceinline__ unsigned int
hsub_u (unsigned int a, unsigned int b)
{
  return h2u (__hsub2 (*(const __half2 *) &a, *(const __half2 *) &b));
}

/* V: BP_V_* bits, used only for 4 slices from the half cache. */
template <int S, int TILE, bool LIN, bool HALF, int V = 0>
static __device__ __forceinline__ void
alu_tile (const char *__restrict__ pack, size_t pitch, const double2 *__restrict__ cs,
          const BpGeom &g, int tx0, int ty0, float *out)
{
  typedef Tile<TILE> TL;
  typedef typename Vec<S>::T T;
  typedef Bin<S, LIN, HALF> B;
  typedef typename B::Raw Raw;
  constexpr int CACHE = TL::CACHE;
  constexpr bool HSRC = (V & BP_V_HSRC) && S == 4 && HALF;
  typedef AluGroup<TILE, Raw> AG;
  static_assert (!(HSRC && AG::WARP_FILL), "the half-source fill is the generic one");
  constexpr int GROUP = AG::GROUP;
  constexpr int NLOAD = AG::NLOAD;
  /* Float linear uses the FMA form: bin k holds a = s[k] − (k − M)·d[k]
   * and d[k] = s[k+1] − s[k], so with r = t − h_m − M the value is
   * a + r·d — one FMA, no fraction to compute.  M = CACHE/2 keeps |r| and
   * the cancellation in a small.  floor(r + M) = k comes from one add
   * rounding down against 2^23 + M.  Nearest folds the +½ into the offset;
   * the half cache keeps s[k] and d[k] (a would lose too much in half). */
  constexpr bool FMAFORM = LIN && !HALF;
  constexpr int M = FMAFORM ? CACHE / 2 : 0;
  constexpr double SHIFT = FMAFORM ? (double) M : LIN ? 0.0 : -0.5;
  constexpr float MAGIC = 8388608.f + (float) M;
  /* 4 slices, linear, half cache: interpolate and sum one pass in half2
   * arithmetic (2 HFMA2 + 2 HADD2 per pixel instead of 8 conversions and
   * 8 float operations) and add each pass's partial sums to the float sums;
   * at most GROUP terms are ever summed in half. */
  constexpr bool H2 = S == 4 && LIN && HALF;
  /* Two bin buffers: the next pass is stored while the current one is
   * read, so one barrier per pass suffices.  The per-projection constants
   * (offset, cos, sin, h_m) run two passes ahead in three slots, so the
   * loads of the next pass find their h_m already in shared memory. */
  __shared__ float4 s_proj[3][GROUP];
  __shared__ Raw s_cache[2][GROUP][CACHE];
  const int tid = threadIdx.x;
  int lx, ly;
  T acc[TL::PPT] = {};
  T pv[AG::NREG], pd[AG::NREG];
  uint2 hv[HSRC ? AG::NLOAD : 1], hn[HSRC ? AG::NLOAD : 1];   /* HSRC: bin and next bin */
  const int warp = tid >> 5, lane = tid & 31;

  TL::map (tid, lx, ly);
  const float xl = (float) lx;
  const float yl0 = (float) ly;
  const double x0 = (double) (g.roi_x + tx0) - g.half_w_d;
  const double y0 = (double) (g.roi_y + ty0) - g.half_w_d;

  auto consts = [&] (int slot, int pg) {
    if (pg < g.n_proj && tid < min (GROUP, g.n_proj - pg))
      s_proj[slot][tid] = tile_constants<TILE> (cs[pg + tid], x0, y0, g.center, SHIFT);
  };
  /* Global loads of a pass into registers: consecutive threads take
   * consecutive bins of a row (coalesced).  The warp fill cut the
   * instructions per update from 8.55 to 8.03 (ncu, 1-slice linear, the
   * generic fill spent ~50 PTX instructions per bin on index arithmetic and
   * bounds tests). */
  auto fetch_warp = [&] (int slot, int pg) {
    const int ng = min (GROUP, g.n_proj - pg);
#pragma unroll
    for (int q = 0; q < AG::QW; q++)
      {
        const int pr = warp + 8 * q;

#pragma unroll
        for (int m = 0; m < AG::CW; m++)
          {
            vzero (pv[q * AG::CW + m]);
            vzero (pd[q * AG::CW + m]);
          }
        if (pr < ng)
          {
            const T *row = (const T *) (pack + (size_t) (pg + pr) * pitch);
            const int hm = __float_as_int (s_proj[slot][pr].w);
            const int b0 = hm + lane;

            /* whole run of bins on the detector: no per-load tests */
            if (hm >= 0 && hm + CACHE < g.width)
              {
#pragma unroll
                for (int m = 0; m < AG::CW; m++)
                  {
                    pv[q * AG::CW + m] = __ldg (row + b0 + 32 * m);
                    if (LIN)
                      pd[q * AG::CW + m] = vsub (__ldg (row + b0 + 32 * m + 1), pv[q * AG::CW + m]);
                  }
              }
            else
              {
#pragma unroll
                for (int m = 0; m < AG::CW; m++)
                  {
                    pv[q * AG::CW + m] = load_bin<S> ((const char *) row, b0 + 32 * m, g.width);
                    if (LIN)
                      pd[q * AG::CW + m] = vsub (load_bin<S> ((const char *) row, b0 + 32 * m + 1, g.width),
                                                 pv[q * AG::CW + m]);
                  }
              }
          }
      }
  };
  auto put_warp = [&] (int buf, int pg) {
    const int ng = min (GROUP, g.n_proj - pg);
    const float jf = (float) (lane - M);
#pragma unroll
    for (int q = 0; q < AG::QW; q++)
      {
        const int pr = warp + 8 * q;

        if (pr < ng)
#pragma unroll
          for (int m = 0; m < AG::CW; m++)
            {
              const int l = q * AG::CW + m;

              s_cache[buf][pr][lane + 32 * m] =
                B::pack (FMAFORM ? vaxpy (pv[l], jf + (float) (32 * m), pd[l]) : pv[l], pd[l]);
            }
      }
  };
  /* The generic fill: the thread's load l is bin j of projection pr of the
   * pass (k = tid + 256·l); each that is one of the pass's is handed to
   * `load`, after `clear` (l) for every load. */
  auto gen_loads = [&] (int pg, auto &&clear, auto &&load) {
    const int ng = min (GROUP, g.n_proj - pg);
#pragma unroll
    for (int l = 0; l < NLOAD; l++)
      {
        const int k = tid + 256 * l;
        const int pr = k / CACHE;
        const int j = k - pr * CACHE;

        clear (l);
        if (k < GROUP * CACHE && pr < ng)
          load (l, pr, j);
      }
  };
  auto fetch_gen = [&] (int slot, int pg) {
    gen_loads (pg, [&] (int l) {
      if constexpr (HSRC)
        hv[l] = hn[l] = make_uint2 (0u, 0u);
      else
        {
          vzero (pv[l]);
          vzero (pd[l]);
        }
    }, [&] (int l, int pr, int j) {
      const char *row = pack + (size_t) (pg + pr) * pitch;
      const int b = __float_as_int (s_proj[slot][pr].w) + j;

      if constexpr (HSRC)
        {
          hv[l] = load_hbin (row, b, g.width);
          if (LIN)
            hn[l] = load_hbin (row, b + 1, g.width);
        }
      else
        {
          pv[l] = load_bin<S> (row, b, g.width);
          if (LIN)
            pd[l] = vsub (load_bin<S> (row, b + 1, g.width), pv[l]);
        }
    });
  };
  auto put_gen = [&] (int buf, int pg) {
    gen_loads (pg, [] (int) {}, [&] (int l, int pr, int j) {
      if constexpr (HSRC && LIN)
        s_cache[buf][pr][j] = make_uint4 (hv[l].x, hv[l].y, hsub_u (hn[l].x, hv[l].x),
                                          hsub_u (hn[l].y, hv[l].y));
      else if constexpr (HSRC)
        s_cache[buf][pr][j] = hv[l];
      else
        s_cache[buf][pr][j] = B::pack (FMAFORM ? vaxpy (pv[l], (float) (j - M), pd[l]) : pv[l], pd[l]);
    });
  };
  auto fetch = [&] (int slot, int pg) {
    if constexpr (AG::WARP_FILL)
      fetch_warp (slot, pg);
    else
      fetch_gen (slot, pg);
  };
  auto put = [&] (int buf, int pg) {
    if constexpr (AG::WARP_FILL)
      put_warp (buf, pg);
    else
      put_gen (buf, pg);
  };

  consts (0, 0);
  consts (1, GROUP);
  __syncthreads ();
  fetch (0, 0);
  put (0, 0);
  __syncthreads ();
  for (int pg = 0, buf = 0, slot = 0; pg < g.n_proj; pg += GROUP, buf ^= 1, slot = slot == 2 ? 0 : slot + 1)
    {
      const int ng = min (GROUP, g.n_proj - pg);
      const bool more = pg + GROUP < g.n_proj;
      const int slot1 = slot == 2 ? 0 : slot + 1;
      const int slot2 = slot1 == 2 ? 0 : slot1 + 1;

      if (more)
        fetch (slot1, pg + GROUP);

      __half2 hacc[TL::PPT][2];

      if constexpr (H2)
        half_sums_zero (hacc);
#pragma unroll 2
      for (int pr = 0; pr < ng; pr++)
        {
          const float4 pc = s_proj[slot][pr];
          const float r0 = fmaf (-yl0, pc.z, fmaf (xl, pc.y, pc.x));
          const Raw *crow = s_cache[buf][pr];

#pragma unroll
          for (int i = 0; i < TL::PPT; i++)
            {
              /* rows i·STEP below the thread's first: a compile-time factor */
              const float rel = fmaf ((float) (-i * TL::STEP), pc.z, r0);
              T v, d;

              /* floor() on the FP units: adding 2^23 (+ M) rounding down
               * leaves the bin index in the mantissa. */
              const float tmp = __fadd_rd (rel, MAGIC);
              const int k = __float_as_int (tmp) - 0x4B000000;

              if constexpr (H2)
                {
                  const uint4 raw = *(const uint4 *) &crow[k];
                  const __half2 f = __float2half2_rn (rel - (tmp - 8388608.f));
                  __half2 v01 = *(const __half2 *) &raw.x, v23 = *(const __half2 *) &raw.y;
                  __half2 d01 = *(const __half2 *) &raw.z, d23 = *(const __half2 *) &raw.w;

                  hacc[i][0] = __hadd2 (hacc[i][0], __hfma2 (f, d01, v01));
                  hacc[i][1] = __hadd2 (hacc[i][1], __hfma2 (f, d23, v23));
                  continue;
                }
              B::get (crow[k], v, d);
              if (FMAFORM)
                vinterp (acc[i], v, rel, d);
              else if (LIN)
                vinterp (acc[i], v, rel - (tmp - 8388608.f), d);
              else
                vadd (acc[i], v);
            }
        }
      if constexpr (H2)
        half_sums_add (acc, hacc);
      if (more)
        put (buf ^ 1, pg + GROUP);
      consts (slot2, pg + 2 * GROUP);
      __syncthreads ();
    }

  store_tile<S, TILE> (out, g, tx0 + lx, ty0 + ly, acc);
}

/* Occupancy, measured on the H100 (2048² × 2048): 64×64 tiles run best at
 * 2 blocks per SM when interpolating linearly (more registers to keep
 * independent loads in flight) but at 3 in nearest mode (+8 %).  32×32
 * tiles: 4 blocks, 3 for 4-slice linear from the float cache, whose float4
 * value/difference pairs would spill at 64 registers; from the half cache
 * (half2 arithmetic) 4 blocks fit: ALU alone 5459 GU/s, was 3765 at 3. */
#define BP_MIN_BLOCKS(S, TILE, LIN, HALF) \
  ((TILE) == 64 ? ((LIN) ? 2 : 3) : ((S) == 4 && (LIN) && !(HALF)) ? 3 : 4)


/* 4 slices always use 32×32 tiles: 16 float4 sums per thread would spill. */
#define BIG(S) ((S) == 4 ? 32 : 64)
#define DISPATCH_SLH(FN, S, ...)                                                   \
  (tile64 ? (lin ? (half ? FN<S, BIG (S), true, true> (__VA_ARGS__) : FN<S, BIG (S), true, false> (__VA_ARGS__)) \
              : (half ? FN<S, BIG (S), false, true> (__VA_ARGS__) : FN<S, BIG (S), false, false> (__VA_ARGS__))) \
          : (lin ? (half ? FN<S, 32, true, true> (__VA_ARGS__) : FN<S, 32, true, false> (__VA_ARGS__))     \
              : (half ? FN<S, 32, false, true> (__VA_ARGS__) : FN<S, 32, false, false> (__VA_ARGS__))))
/* The same over the loaded slices (1, 2 or 4), with bp and g in scope; 4
 * slices from the half cache take the variant chosen at run time. */
#define DISPATCH_S_SLH(FN, ...)                                                   \
  (bp->n_slices == 4 && half && g.variant != 0                                    \
     ? (lin ? FN<4, 32, true, true, BP_V_HSRC> (__VA_ARGS__)                      \
            : FN<4, 32, false, true, BP_V_HSRC> (__VA_ARGS__))                    \
   : bp->n_slices == 1 ? DISPATCH_SLH (FN, 1, __VA_ARGS__)                        \
   : bp->n_slices == 2 ? DISPATCH_SLH (FN, 2, __VA_ARGS__)                        \
                       : DISPATCH_SLH (FN, 4, __VA_ARGS__))


/* Launchers, one per kernel family; S is bp->n_slices.  texture: the
 * texture kernel's own (tex_half for 4 slices). */
gboolean _tomo_bp_run_standard (TomoBp *bp, const BpGeom &g, cudaTextureObject_t tex, float *out,
                                cudaStream_t stream, GError **error);
gboolean _tomo_bp_run_texture (TomoBp *bp, const BpGeom &g, cudaTextureObject_t tex, float *out,
                               cudaStream_t stream, GError **error);
gboolean _tomo_bp_run_alu (TomoBp *bp, const BpGeom &g, bool tile64, bool lin, bool half,
                           float *out, cudaStream_t stream, GError **error);
gboolean _tomo_bp_run_hybrid (TomoBp *bp, const BpGeom &g, cudaTextureObject_t tex, bool tile64,
                              bool lin, bool half, int alu16, float *out, cudaStream_t stream,
                              GError **error);
