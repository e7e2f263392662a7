/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Back projection on the GPU after Chilingaryan et al. ("Balancing load of
 * GPU subsystems to accelerate image reconstruction in parallel beam
 * tomography" and the ALU section of the journal version).
 *
 * Geometry (same as the CPU reference, app/tomo-types.h): slice pixel
 * (ix, iy) sits at x = ix − (W−1)/2, y = iy − (W−1)/2 and projects to
 * detector column t = x·cos θ − y·sin θ + center.  Linear interpolation
 * between floor(t) and floor(t)+1, bins outside 0…W−1 count as 0; nearest is
 * floor(t + 0.5).  The texture unit samples at t + 0.5 (texel centres) with
 * border addressing, which gives exactly that.
 *
 * Data: the filtered sinograms arrive planar (n_slices × n_proj × W floats)
 * and are packed once into a pitched buffer of float / float2 / float4 per
 * bin (one component per slice), plus half4 (stored as float2 bits) for the
 * 4-slice texture path, which the texture unit can only fetch as "nearest".
 */
#define G_LOG_DOMAIN "tomo-gpu-bp"

#include "config.h"

#include <cuda_fp16.h>
#include <math.h>
#include <string.h>

#include "tomo-gpu-bp.h"

/* Per-projection cos/sin for the kernels that take them from constant
 * memory (standard, texture); more projections run in chunks. */
#define BP_CONST_PROJ 4096
/* Hybrid: per-SM block counters (indexed by %smid). */
#define BP_MAX_SM 1024
/* Largest pitched-texture height we rely on (H100 allows 65000). */
#define BP_MAX_PROJ 65000

static __constant__ float2 c_cs[BP_CONST_PROJ];
static __device__ unsigned int g_sm_blocks[BP_MAX_SM];

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
};

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */

static gboolean
bp_check (cudaError_t  res,
          const char  *call,
          const char  *file,
          int          line,
          GError     **error)
{
  if (G_LIKELY (res == cudaSuccess))
    return TRUE;
  g_set_error (error, TOMO_GPU_ERROR,
               res == cudaErrorMemoryAllocation ? TOMO_GPU_ERROR_OUT_OF_MEMORY
                                                : TOMO_GPU_ERROR_CUDA,
               "%s failed (%s:%d): %s: %s", call, file, line,
               cudaGetErrorName (res), cudaGetErrorString (res));
  return FALSE;
}

static void
bp_warn (cudaError_t  res,
         const char  *call,
         int          line)
{
  if (res != cudaSuccess)
    g_warning ("%s failed (%s:%d): %s", call, __FILE__, line, cudaGetErrorString (res));
}

#define BP_CHECK(call) bp_check ((call), #call, __FILE__, __LINE__, error)
#define BP_WARN(call) bp_warn ((call), #call, __LINE__)
#define BP_LAUNCHED(what) bp_check (cudaGetLastError (), what, __FILE__, __LINE__, error)

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

/* Texture fetch of all slices of one bin; HALF4: a float2 texture that
 * really holds 4 halves (the texture unit must not filter it). */
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
};

/* ---------------------------------------------------------------------- */
/* Packing                                                                */

/* One thread per bin: gathers the S planar values of bin (p, x) into one
 * float/float2/float4 texel, and for 4 slices also a half4 texel. */
template <int S>
static __global__ void
bp_pack (const float *__restrict__ src, int width, int n_proj,
         char *dst, size_t pitch, char *hdst, size_t hpitch)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const size_t plane = (size_t) width * n_proj;

  if (x >= width)
    return;
  for (int p = blockIdx.y; p < n_proj; p += gridDim.y)
    {
      const size_t i = (size_t) p * width + x;
      float v[S];

#pragma unroll
      for (int s = 0; s < S; s++)
        v[s] = src[s * plane + i];
      if (S == 1)
        ((float *) (dst + p * pitch))[x] = v[0];
      else if (S == 2)
        ((float2 *) (dst + p * pitch))[x] = make_float2 (v[0], v[S > 1 ? 1 : 0]);
      else
        {
          ((float4 *) (dst + p * pitch))[x] = make_float4 (v[0], v[S > 1 ? 1 : 0],
                                                           v[S > 2 ? 2 : 0], v[S > 3 ? 3 : 0]);
          __half2 a = __floats2half2_rn (v[0], v[S > 1 ? 1 : 0]);
          __half2 b = __floats2half2_rn (v[S > 2 ? 2 : 0], v[S > 3 ? 3 : 0]);
          uint2 h = make_uint2 (*(unsigned int *) &a, *(unsigned int *) &b);
          ((uint2 *) (hdst + p * hpitch))[x] = h;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Standard kernel                                                        */

/* One thread per pixel, 16×16 threads per block over the ROI; each thread
 * loops over the projections of the current constant-memory chunk
 * (p0 … p0+np−1 at c_cs[0 … np−1]) and lets the texture unit interpolate.
 * ACC adds to the output (second and later chunks). */
template <int S, bool ACC>
static __global__ void __launch_bounds__ (256)
bp_standard (cudaTextureObject_t tex, BpGeom g, int p0, int np, float *out)
{
  const int ix = blockIdx.x * 16 + threadIdx.x;
  const int iy = blockIdx.y * 16 + threadIdx.y;
  typename Vec<S>::T sum;

  if (ix >= g.roi_w || iy >= g.roi_h)
    return;
  const float x = (float) (g.roi_x + ix) - g.half_w;
  const float y = (float) (g.roi_y + iy) - g.half_w;
  const float c0 = g.center_f + 0.5f;

  vzero (sum);
  for (int p = 0; p < np; p++)
    {
      const float2 cs = c_cs[p];
      const float u = fmaf (x, cs.x, fmaf (-y, cs.y, c0));

      vadd (sum, Fetch<S, false>::get (tex, u, (float) (p0 + p) + 0.5f));
    }
  store_pixel<S> (out, g.plane, (size_t) iy * g.roi_w + ix, sum, ACC);
}

/* ---------------------------------------------------------------------- */
/* Texture kernel                                                         */

/* 256 threads per 16×16-pixel block.  Thread bits 0–1 pick one of 4
 * interleaved projection subsets (p ≡ q mod 4), so the 4 threads summing one
 * pixel sit in neighbouring lanes and are reduced by two shuffles; bits 2–5
 * walk a 4×4-pixel square along a Z-order curve (texture locality); bits 6–7
 * pick one of the 4 squares in a 16×4 strip.  Each thread covers the 4
 * strips (rows +0, +4, +8, +12) so every cos/sin load serves 4 fetches. */
template <int S, bool HALF4, bool ACC>
static __global__ void __launch_bounds__ (256)
bp_texture (cudaTextureObject_t tex, BpGeom g, int p0, int np, float *out)
{
  typedef typename Vec<S>::T T;
  const int tid = threadIdx.x;
  const int q = tid & 3;
  const int z = (tid >> 2) & 15;
  const int sq = tid >> 6;
  const int zx = (z & 1) | ((z >> 1) & 2);
  const int zy = ((z >> 1) & 1) | ((z >> 2) & 2);
  const int ix = blockIdx.x * 16 + sq * 4 + zx;
  const int iy0 = blockIdx.y * 16 + zy;
  const float x = (float) (g.roi_x + ix) - g.half_w;
  const float c0 = g.center_f + 0.5f;
  float y[4];
  T sum[4];

#pragma unroll
  for (int i = 0; i < 4; i++)
    {
      y[i] = (float) (g.roi_y + iy0 + 4 * i) - g.half_w;
      vzero (sum[i]);
    }
  for (int p = q; p < np; p += 4)
    {
      const float2 cs = c_cs[p];
      const float ub = fmaf (x, cs.x, c0);
      const float v = (float) (p0 + p) + 0.5f;

#pragma unroll
      for (int i = 0; i < 4; i++)
        vadd (sum[i], Fetch<S, HALF4>::get (tex, fmaf (-y[i], cs.y, ub), v));
    }
#pragma unroll
  for (int i = 0; i < 4; i++)
    {
      vadd (sum[i], vshfl_xor (sum[i], 1));
      vadd (sum[i], vshfl_xor (sum[i], 2));
    }
  if (q != 0 || ix >= g.roi_w)
    return;
#pragma unroll
  for (int i = 0; i < 4; i++)
    if (iy0 + 4 * i < g.roi_h)
      store_pixel<S> (out, g.plane, (size_t) (iy0 + 4 * i) * g.roi_w + ix, sum[i], ACC);
}

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

template <int S, int TILE, bool LIN, bool HALF>
static __device__ __forceinline__ void
alu_tile (const char *__restrict__ pack, size_t pitch, const double2 *__restrict__ cs,
          const BpGeom &g, int tx0, int ty0, float *out)
{
  typedef Tile<TILE> TL;
  typedef typename Vec<S>::T T;
  typedef Bin<S, LIN, HALF> B;
  typedef typename B::Raw Raw;
  constexpr int CACHE = TL::CACHE;
  typedef AluGroup<TILE, Raw> AG;
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
  /* Two bin buffers: the next pass is stored while the current one is
   * read, so one barrier per pass suffices.  The per-projection constants
   * (offset, cos, sin, h_m) run two passes ahead in three slots, so the
   * loads of the next pass find their h_m already in shared memory. */
  __shared__ float4 s_proj[3][GROUP];
  __shared__ Raw s_cache[2][GROUP][CACHE];
  const int tid = threadIdx.x;
  int lx, ly;
  T acc[TL::PPT];
  T pv[AG::NREG], pd[AG::NREG];
  const int warp = tid >> 5, lane = tid & 31;

  TL::map (tid, lx, ly);
#pragma unroll
  for (int i = 0; i < TL::PPT; i++)
    vzero (acc[i]);
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
  auto fetch_gen = [&] (int slot, int pg) {
    const int ng = min (GROUP, g.n_proj - pg);
#pragma unroll
    for (int l = 0; l < NLOAD; l++)
      {
        const int k = tid + 256 * l;
        const int pr = k / CACHE;
        const int j = k - pr * CACHE;

        vzero (pv[l]);
        vzero (pd[l]);
        if (k < GROUP * CACHE && pr < ng)
          {
            const char *row = pack + (size_t) (pg + pr) * pitch;
            const int b = __float_as_int (s_proj[slot][pr].w) + j;

            pv[l] = load_bin<S> (row, b, g.width);
            if (LIN)
              pd[l] = vsub (load_bin<S> (row, b + 1, g.width), pv[l]);
          }
      }
  };
  auto put_gen = [&] (int buf, int pg) {
    const int ng = min (GROUP, g.n_proj - pg);
#pragma unroll
    for (int l = 0; l < NLOAD; l++)
      {
        const int k = tid + 256 * l;
        const int pr = k / CACHE;
        const int j = k - pr * CACHE;

        if (k < GROUP * CACHE && pr < ng)
          s_cache[buf][pr][j] = B::pack (FMAFORM ? vaxpy (pv[l], (float) (j - M), pd[l]) : pv[l], pd[l]);
      }
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

              B::get (crow[k], v, d);
              if (FMAFORM)
                vinterp (acc[i], v, rel, d);
              else if (LIN)
                vinterp (acc[i], v, rel - (tmp - 8388608.f), d);
              else
                vadd (acc[i], v);
            }
        }
      if (more)
        put (buf ^ 1, pg + GROUP);
      consts (slot2, pg + 2 * GROUP);
      __syncthreads ();
    }

  const int ix = tx0 + lx;
  if (ix >= g.roi_w)
    return;
#pragma unroll
  for (int i = 0; i < TL::PPT; i++)
    {
      const int iy = ty0 + ly + i * TL::STEP;
      if (iy < g.roi_h)
        store_pixel<S> (out, g.plane, (size_t) iy * g.roi_w + ix, acc[i], false);
    }
}

/* One block per TILE×TILE square of the ROI.  Per pass of GROUP projections
 * the block caches the 3/2·TILE bins from h_m on (all threads, consecutive
 * bins per warp) and the per-projection offsets, then every thread
 * interpolates its PPT pixels from the cache on the FP units while the bins
 * of the next pass are already on their way into registers. */
/* Occupancy, measured on the H100 (2048² × 2048): 64×64 tiles run best at
 * 2 blocks per SM when interpolating linearly (more registers to keep
 * independent loads in flight) but at 3 in nearest mode (+8 %).  32×32
 * tiles: 4 blocks, 3 for 4-slice linear, whose float4 value/difference
 * pairs would spill at 64 registers. */
#define BP_MIN_BLOCKS(S, TILE, LIN) \
  ((TILE) == 64 ? ((LIN) ? 2 : 3) : ((S) == 4 && (LIN)) ? 3 : 4)

template <int S, int TILE, bool LIN, bool HALF>
static __global__ void __launch_bounds__ (256, BP_MIN_BLOCKS (S, TILE, LIN))
bp_alu (const char *__restrict__ pack, size_t pitch, const double2 *__restrict__ cs,
        BpGeom g, float *out)
{
  alu_tile<S, TILE, LIN, HALF> (pack, pitch, cs, g, blockIdx.x * TILE, blockIdx.y * TILE, out);
}

/* ---------------------------------------------------------------------- */
/* Hybrid kernel                                                          */

/* Texture path of the hybrid: the same TILE×TILE square and thread mapping
 * as the ALU path (each thread PPT pixels in a loop), per-projection tile
 * bases staged in shared memory, interpolation by the texture unit. */
template <int S, bool HALF4, int TILE>
static __device__ __forceinline__ void
tex_tile (cudaTextureObject_t tex, const double2 *__restrict__ cs,
          const BpGeom &g, int tx0, int ty0, float *out)
{
  typedef Tile<TILE> TL;
  typedef typename Vec<S>::T T;
  constexpr int G = 64;
  __shared__ float4 s_tp[G];
  const int tid = threadIdx.x;
  int lx, ly;
  T acc[TL::PPT];

  TL::map (tid, lx, ly);
#pragma unroll
  for (int i = 0; i < TL::PPT; i++)
    vzero (acc[i]);
  const float xl = (float) lx;
  const float yl0 = (float) ly;
  const double x0 = (double) (g.roi_x + tx0) - g.half_w_d;
  const double y0 = (double) (g.roi_y + ty0) - g.half_w_d;

  for (int pg = 0; pg < g.n_proj; pg += G)
    {
      const int ng = min (G, g.n_proj - pg);

      if (tid < ng)
        {
          const double2 c = cs[pg + tid];
          const double base = fma (x0, c.x, fma (-y0, c.y, g.center)) + 0.5;

          s_tp[tid] = make_float4 ((float) base, (float) c.x, (float) c.y, (float) (pg + tid) + 0.5f);
        }
      __syncthreads ();
#pragma unroll 2
      for (int pr = 0; pr < ng; pr++)
        {
          const float4 pc = s_tp[pr];
          const float u0 = fmaf (-yl0, pc.z, fmaf (xl, pc.y, pc.x));

#pragma unroll
          for (int i = 0; i < TL::PPT; i++)
            vadd (acc[i], Fetch<S, HALF4>::get (tex, fmaf ((float) (-i * TL::STEP), pc.z, u0), pc.w));
        }
      __syncthreads ();
    }

  const int ix = tx0 + lx;
  if (ix >= g.roi_w)
    return;
#pragma unroll
  for (int i = 0; i < TL::PPT; i++)
    {
      const int iy = ty0 + ly + i * TL::STEP;
      if (iy < g.roi_h)
        store_pixel<S> (out, g.plane, (size_t) iy * g.roi_w + ix, acc[i], false);
    }
}

/* One launch, one block per TILE×TILE square.  Thread 0 reads the SM the
 * block landed on and takes a number from that SM's counter; of every 16
 * consecutive numbers, alu16 go down the ALU path (spread evenly) and the
 * rest down the texture path, so each SM keeps both its shared-memory/FP
 * units and its texture units busy at the chosen ratio. */
template <int S, int TILE, bool LIN, bool HALF>
static __global__ void __launch_bounds__ (256, BP_MIN_BLOCKS (S, TILE, LIN))
bp_hybrid (cudaTextureObject_t tex, const char *__restrict__ pack, size_t pitch,
           const double2 *__restrict__ cs, BpGeom g, int alu16, float *out)
{
  __shared__ unsigned int s_number;

  if (threadIdx.x == 0)
    {
      unsigned int smid;

      asm volatile ("mov.u32 %0, %%smid;" : "=r" (smid));
      s_number = atomicAdd (&g_sm_blocks[smid % BP_MAX_SM], 1u);
    }
  __syncthreads ();
  const unsigned int n = s_number % 16u;
  const bool alu = ((n + 1) * alu16) / 16 > (n * alu16) / 16;
  const int tx0 = blockIdx.x * TILE, ty0 = blockIdx.y * TILE;

  if (alu)
    alu_tile<S, TILE, LIN, HALF> (pack, pitch, cs, g, tx0, ty0, out);
  else
    tex_tile<S, S == 4, TILE> (tex, cs, g, tx0, ty0, out);
}

/* ---------------------------------------------------------------------- */
/* Constant memory: one set of cos/sin per device at a time                */

/* Who last wrote c_cs on each device, and an event after the last kernel
 * that read it: a TomoBp that needs other constants waits for that event
 * on its own stream before overwriting them. */
typedef struct
{
  guint serial, generation, chunk;
  cudaEvent_t last;
} BpConstState;

static GMutex bp_const_lock;
static BpConstState bp_const_state[64];
static guint bp_serial_counter;

/* Called with bp_const_lock held. */
static gboolean
bp_const_acquire (TomoBp      *bp,
                  guint        chunk,
                  guint        p0,
                  guint        np,
                  cudaStream_t stream,
                  GError     **error)
{
  BpConstState *st = &bp_const_state[bp->device % 64];

  if (st->last == NULL
      && !BP_CHECK (cudaEventCreateWithFlags (&st->last, cudaEventDisableTiming)))
    return FALSE;
  if (!BP_CHECK (cudaStreamWaitEvent (stream, st->last, 0)))
    return FALSE;
  if (st->serial == bp->serial && st->generation == bp->generation && st->chunk == chunk)
    return TRUE;
  st->serial = 0;
  if (!BP_CHECK (cudaMemcpyToSymbolAsync (c_cs, bp->d_cs_f + p0, np * sizeof (float2), 0,
                                          cudaMemcpyDeviceToDevice, stream)))
    return FALSE;
  st->serial = bp->serial;
  st->generation = bp->generation;
  st->chunk = chunk;
  return TRUE;
}

static gboolean
bp_const_release (TomoBp      *bp,
                  cudaStream_t stream,
                  GError     **error)
{
  return BP_CHECK (cudaEventRecord (bp_const_state[bp->device % 64].last, stream));
}

/* ---------------------------------------------------------------------- */
/* Public API                                                             */

gboolean
tomo_bp_supports (TomoGpuKernel kernel,
                  guint         n_slices,
                  int           interp)
{
  if (n_slices != 1 && n_slices != 2 && n_slices != 4)
    return FALSE;
  if (interp != 0 && interp != 1)
    return FALSE;
  switch (kernel)
    {
    case TOMO_GPU_KERNEL_AUTO:
    case TOMO_GPU_KERNEL_ALU:
      return TRUE;
    case TOMO_GPU_KERNEL_STANDARD:
      return n_slices <= 2;
    case TOMO_GPU_KERNEL_TEXTURE:
    case TOMO_GPU_KERNEL_HYBRID:
      /* 4 slices travel as halves, which the texture unit cannot filter. */
      return n_slices <= 2 || interp == 0;
    default:
      return FALSE;
    }
}

TomoGpuKernel
tomo_bp_default_kernel (guint n_slices,
                        int   interp,
                        guint roi_width,
                        guint roi_height)
{
  /* Small areas: too few 32×32 ALU tiles to fill 132 SMs. */
  if ((guint64) roi_width * roi_height < 256 * 256)
    return tomo_bp_supports (TOMO_GPU_KERNEL_TEXTURE, n_slices, interp)
             ? TOMO_GPU_KERNEL_TEXTURE : TOMO_GPU_KERNEL_ALU;
  /* H100, 2048² × 2048 (GU/s): the hybrid wins with linear 1 and 2 slices
   * (3226 vs 3118 ALU alone, 4040 vs 3652) and 4 slices nearest from halves
   * (7700 vs 6530); nearest 1 and 2 slices run on the ALU path alone
   * (4320 and 7010; the hybrid's +1–4 % is measured at 2048² only), 4
   * slices linear has only the ALU path (3090).  One slice at 1024²: too
   * few 64×64 tiles per SM for the slower texture blocks, the hybrid
   * loses a third (1940 vs 2760), so it takes over only from 2048². */
  if (interp == 1 && n_slices == 1)
    return (guint64) roi_width * roi_height >= 2048 * 2048 ? TOMO_GPU_KERNEL_HYBRID
                                                           : TOMO_GPU_KERNEL_ALU;
  if (interp == 1 ? n_slices == 2 : n_slices == 4)
    return TOMO_GPU_KERNEL_HYBRID;
  return TOMO_GPU_KERNEL_ALU;
}

TomoBp *
tomo_bp_new (int      device,
             GError **error)
{
  TomoBp *bp;
  int n = 0;

  if (cudaGetDeviceCount (&n) != cudaSuccess || device < 0 || device >= n)
    {
      cudaGetLastError ();
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE,
                   "No CUDA device %d (%d found)", device, n);
      return NULL;
    }
  if (!BP_CHECK (cudaSetDevice (device)))
    return NULL;
  bp = g_new0 (TomoBp, 1);
  bp->device = device;
  bp->serial = g_atomic_int_add ((gint *) &bp_serial_counter, 1) + 1;
  return bp;
}

static void
bp_free_data (TomoBp *bp)
{
  if (bp->tex_lin)
    BP_WARN (cudaDestroyTextureObject (bp->tex_lin));
  if (bp->tex_pt)
    BP_WARN (cudaDestroyTextureObject (bp->tex_pt));
  if (bp->tex_half)
    BP_WARN (cudaDestroyTextureObject (bp->tex_half));
  bp->tex_lin = bp->tex_pt = bp->tex_half = 0;
  if (bp->d_pack)
    BP_WARN (cudaFree (bp->d_pack));
  if (bp->d_half)
    BP_WARN (cudaFree (bp->d_half));
  bp->d_pack = bp->d_half = NULL;
  bp->alloc_w = bp->alloc_p = bp->alloc_s = 0;
  bp->n_slices = 0;
}

void
tomo_bp_free (TomoBp *bp)
{
  if (bp == NULL)
    return;
  BP_WARN (cudaSetDevice (bp->device));
  /* Kernels of this TomoBp may still be queued. */
  BP_WARN (cudaDeviceSynchronize ());
  bp_free_data (bp);
  if (bp->d_cs_f)
    BP_WARN (cudaFree (bp->d_cs_f));
  if (bp->d_cs_d)
    BP_WARN (cudaFree (bp->d_cs_d));
  g_free (bp);
}

gboolean
tomo_bp_set_geometry (TomoBp       *bp,
                      guint         width,
                      guint         n_proj,
                      const double *angles,
                      GError      **error)
{
  g_autofree float2 *hf = NULL;
  g_autofree double2 *hd = NULL;

  g_return_val_if_fail (bp != NULL, FALSE);

  if (width == 0 || n_proj == 0 || n_proj > BP_MAX_PROJ || width > (1u << 17) || angles == NULL)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Back projection geometry %u columns × %u projections is not supported "
                   "(1 to 131072 columns, 1 to %u projections, angles given)",
                   width, n_proj, BP_MAX_PROJ);
      return FALSE;
    }
  hf = g_new (float2, n_proj);
  hd = g_new (double2, n_proj);
  for (guint p = 0; p < n_proj; p++)
    {
      if (!isfinite (angles[p]))
        {
          g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                       "Projection angle %u is not finite (%g)", p, angles[p]);
          return FALSE;
        }
      hd[p].x = cos (angles[p]);
      hd[p].y = sin (angles[p]);
      hf[p] = make_float2 ((float) hd[p].x, (float) hd[p].y);
    }
  if (!BP_CHECK (cudaSetDevice (bp->device)))
    return FALSE;
  if (bp->n_proj != n_proj)
    {
      if (bp->d_cs_f && !BP_CHECK (cudaFree (bp->d_cs_f)))
        return FALSE;
      bp->d_cs_f = NULL;
      if (bp->d_cs_d && !BP_CHECK (cudaFree (bp->d_cs_d)))
        return FALSE;
      bp->d_cs_d = NULL;
      bp->n_proj = 0;
      if (!BP_CHECK (cudaMalloc (&bp->d_cs_f, n_proj * sizeof (float2))) ||
          !BP_CHECK (cudaMalloc (&bp->d_cs_d, n_proj * sizeof (double2))))
        return FALSE;
    }
  /* Synchronous copies: kernels queued with the old angles read them first. */
  if (!BP_CHECK (cudaMemcpy (bp->d_cs_f, hf, n_proj * sizeof (float2), cudaMemcpyHostToDevice)) ||
      !BP_CHECK (cudaMemcpy (bp->d_cs_d, hd, n_proj * sizeof (double2), cudaMemcpyHostToDevice)))
    return FALSE;
  if (bp->width != width || bp->n_proj != n_proj)
    bp->n_slices = 0;   /* loaded data no longer matches */
  bp->width = width;
  bp->n_proj = n_proj;
  g_mutex_lock (&bp_const_lock);
  bp->generation++;
  g_mutex_unlock (&bp_const_lock);
  return TRUE;
}

static gboolean
bp_make_texture (void                  *ptr,
                 size_t                 pitch,
                 cudaChannelFormatDesc  desc,
                 guint                  width,
                 guint                  height,
                 cudaTextureFilterMode  filter,
                 cudaTextureObject_t   *tex,
                 GError               **error)
{
  cudaResourceDesc res;
  cudaTextureDesc td;

  memset (&res, 0, sizeof res);
  res.resType = cudaResourceTypePitch2D;
  res.res.pitch2D.devPtr = ptr;
  res.res.pitch2D.desc = desc;
  res.res.pitch2D.width = width;
  res.res.pitch2D.height = height;
  res.res.pitch2D.pitchInBytes = pitch;
  memset (&td, 0, sizeof td);
  td.addressMode[0] = cudaAddressModeBorder;
  td.addressMode[1] = cudaAddressModeBorder;
  td.filterMode = filter;
  td.readMode = cudaReadModeElementType;
  td.normalizedCoords = 0;
  return BP_CHECK (cudaCreateTextureObject (tex, &res, &td, NULL));
}

gboolean
tomo_bp_set_sinograms (TomoBp       *bp,
                       const float  *d_filtered,
                       guint         n_slices,
                       cudaStream_t  stream,
                       GError      **error)
{
  g_return_val_if_fail (bp != NULL, FALSE);

  const guint w = bp->width, p = bp->n_proj;

  if (n_slices != 1 && n_slices != 2 && n_slices != 4)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Back projection of %u slices at once is not supported (1, 2 or 4)", n_slices);
      return FALSE;
    }
  if (w == 0 || d_filtered == NULL)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Back projection: %s", w == 0 ? "no geometry set" : "no sinogram data");
      return FALSE;
    }
  if (!BP_CHECK (cudaSetDevice (bp->device)))
    return FALSE;
  if (bp->alloc_w != w || bp->alloc_p != p || bp->alloc_s != n_slices)
    {
      /* Queued kernels may still read the old buffers. */
      if (!BP_CHECK (cudaStreamSynchronize (stream)) || !BP_CHECK (cudaDeviceSynchronize ()))
        return FALSE;
      bp_free_data (bp);
      if (!BP_CHECK (cudaMallocPitch (&bp->d_pack, &bp->pitch, (size_t) w * 4 * n_slices, p)))
        return FALSE;
      cudaChannelFormatDesc desc = n_slices == 1 ? cudaCreateChannelDesc<float> ()
                                 : n_slices == 2 ? cudaCreateChannelDesc<float2> ()
                                                 : cudaCreateChannelDesc<float4> ();
      if (!bp_make_texture (bp->d_pack, bp->pitch, desc, w, p, cudaFilterModePoint, &bp->tex_pt, error))
        return FALSE;
      if (n_slices <= 2 &&
          !bp_make_texture (bp->d_pack, bp->pitch, desc, w, p, cudaFilterModeLinear, &bp->tex_lin, error))
        return FALSE;
      if (n_slices == 4)
        {
          if (!BP_CHECK (cudaMallocPitch (&bp->d_half, &bp->half_pitch, (size_t) w * 8, p)))
            return FALSE;
          if (!bp_make_texture (bp->d_half, bp->half_pitch, cudaCreateChannelDesc<float2> (), w, p,
                                cudaFilterModePoint, &bp->tex_half, error))
            return FALSE;
        }
      bp->alloc_w = w;
      bp->alloc_p = p;
      bp->alloc_s = n_slices;
    }

  dim3 block (128, 1);
  dim3 grid ((w + 127) / 128, MIN (p, 65535u));
  switch (n_slices)
    {
    case 1:
      bp_pack<1><<<grid, block, 0, stream>>> (d_filtered, w, p, (char *) bp->d_pack, bp->pitch, NULL, 0);
      break;
    case 2:
      bp_pack<2><<<grid, block, 0, stream>>> (d_filtered, w, p, (char *) bp->d_pack, bp->pitch, NULL, 0);
      break;
    default:
      bp_pack<4><<<grid, block, 0, stream>>> (d_filtered, w, p, (char *) bp->d_pack, bp->pitch,
                                              (char *) bp->d_half, bp->half_pitch);
      break;
    }
  if (!BP_LAUNCHED ("bp_pack"))
    {
      bp->n_slices = 0;
      return FALSE;
    }
  bp->n_slices = n_slices;
  return TRUE;
}

/* Kernel launchers, one per kernel family, dispatching on the template
 * parameters. */

template <int S>
static gboolean
run_standard (TomoBp *bp, const BpGeom &g, cudaTextureObject_t tex, float *out,
              cudaStream_t stream, GError **error)
{
  dim3 block (16, 16);
  dim3 grid ((g.roi_w + 15) / 16, (g.roi_h + 15) / 16);
  gboolean ok = TRUE;

  g_mutex_lock (&bp_const_lock);
  for (int p0 = 0, chunk = 0; ok && p0 < g.n_proj; p0 += BP_CONST_PROJ, chunk++)
    {
      const int np = MIN (BP_CONST_PROJ, g.n_proj - p0);

      ok = bp_const_acquire (bp, chunk, p0, np, stream, error);
      if (!ok)
        break;
      if (p0 == 0)
        bp_standard<S, false><<<grid, block, 0, stream>>> (tex, g, p0, np, out);
      else
        bp_standard<S, true><<<grid, block, 0, stream>>> (tex, g, p0, np, out);
      ok = BP_LAUNCHED ("bp_standard") && bp_const_release (bp, stream, error);
    }
  g_mutex_unlock (&bp_const_lock);
  return ok;
}

template <int S, bool HALF4>
static gboolean
run_texture (TomoBp *bp, const BpGeom &g, cudaTextureObject_t tex, float *out,
             cudaStream_t stream, GError **error)
{
  dim3 grid ((g.roi_w + 15) / 16, (g.roi_h + 15) / 16);
  gboolean ok = TRUE;

  g_mutex_lock (&bp_const_lock);
  for (int p0 = 0, chunk = 0; ok && p0 < g.n_proj; p0 += BP_CONST_PROJ, chunk++)
    {
      const int np = MIN (BP_CONST_PROJ, g.n_proj - p0);

      ok = bp_const_acquire (bp, chunk, p0, np, stream, error);
      if (!ok)
        break;
      if (p0 == 0)
        bp_texture<S, HALF4, false><<<grid, 256, 0, stream>>> (tex, g, p0, np, out);
      else
        bp_texture<S, HALF4, true><<<grid, 256, 0, stream>>> (tex, g, p0, np, out);
      ok = BP_LAUNCHED ("bp_texture") && bp_const_release (bp, stream, error);
    }
  g_mutex_unlock (&bp_const_lock);
  return ok;
}

template <int S, int TILE, bool LIN, bool HALF>
static gboolean
run_alu_t (TomoBp *bp, const BpGeom &g, const char *pack, size_t pitch, float *out,
           cudaStream_t stream, GError **error)
{
  dim3 grid ((g.roi_w + TILE - 1) / TILE, (g.roi_h + TILE - 1) / TILE);

  bp_alu<S, TILE, LIN, HALF><<<grid, 256, 0, stream>>> (pack, pitch, bp->d_cs_d, g, out);
  return BP_LAUNCHED ("bp_alu");
}

template <int S, int TILE, bool LIN, bool HALF>
static gboolean
run_hybrid_t (TomoBp *bp, const BpGeom &g, cudaTextureObject_t tex, const char *pack,
              size_t pitch, int alu16, float *out, cudaStream_t stream, GError **error)
{
  dim3 grid ((g.roi_w + TILE - 1) / TILE, (g.roi_h + TILE - 1) / TILE);
  void *counters = NULL;

  if (!BP_CHECK (cudaGetSymbolAddress (&counters, g_sm_blocks)) ||
      !BP_CHECK (cudaMemsetAsync (counters, 0, sizeof g_sm_blocks, stream)))
    return FALSE;
  bp_hybrid<S, TILE, LIN, HALF><<<grid, 256, 0, stream>>> (tex, pack, pitch, bp->d_cs_d, g, alu16, out);
  return BP_LAUNCHED ("bp_hybrid");
}

/* 4 slices always use 32×32 tiles: 16 float4 sums per thread would spill. */
#define BIG(S) ((S) == 4 ? 32 : 64)
#define DISPATCH_SLH(FN, S, ...)                                                   \
  (tile64 ? (lin ? (half ? FN<S, BIG (S), true, true> (__VA_ARGS__) : FN<S, BIG (S), true, false> (__VA_ARGS__)) \
              : (half ? FN<S, BIG (S), false, true> (__VA_ARGS__) : FN<S, BIG (S), false, false> (__VA_ARGS__))) \
          : (lin ? (half ? FN<S, 32, true, true> (__VA_ARGS__) : FN<S, 32, true, false> (__VA_ARGS__))     \
              : (half ? FN<S, 32, false, true> (__VA_ARGS__) : FN<S, 32, false, false> (__VA_ARGS__))))

gboolean
tomo_bp_run (TomoBp                         *bp,
             const TomoGpuBackprojectParams *params,
             float                          *d_out,
             cudaStream_t                    stream,
             TomoGpuKernel                  *used,
             GError                        **error)
{
  TomoGpuKernel kernel;
  BpGeom g;
  TomoGpuRoi roi;
  guint rx, ry, rw, rh;
  gboolean lin, half, tile64;
  const guint S = bp->n_slices;

  g_return_val_if_fail (bp != NULL, FALSE);
  g_return_val_if_fail (params != NULL, FALSE);

  if (S == 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Back projection: no sinograms loaded for the current geometry");
      return FALSE;
    }
  if (d_out == NULL)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID, "Back projection: no output buffer");
      return FALSE;
    }
  if (!tomo_gpu_backproject_params_check (params, bp->width, &roi, error))
    return FALSE;
  rx = roi.x;
  ry = roi.y;
  rw = roi.width;
  rh = roi.height;
  kernel = params->kernel;
  if (kernel == TOMO_GPU_KERNEL_AUTO)
    kernel = tomo_bp_default_kernel (S, params->interp, rw, rh);
  if (!tomo_bp_supports (kernel, S, params->interp))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "The %s kernel has no %u-slice %s mode", tomo_gpu_kernel_to_string (kernel), S,
                   params->interp ? "linear" : "nearest");
      return FALSE;
    }
  if (!BP_CHECK (cudaSetDevice (bp->device)))
    return FALSE;

  g.roi_x = rx;
  g.roi_y = ry;
  g.roi_w = rw;
  g.roi_h = rh;
  g.width = bp->width;
  g.n_proj = bp->n_proj;
  g.half_w_d = (bp->width - 1) / 2.0;
  g.half_w = (float) g.half_w_d;
  g.center = params->center;
  g.center_f = (float) params->center;
  g.plane = (size_t) rw * rh;

  lin = params->interp == 1;
  half = params->half_cache;
  /* Big tiles halve the caching work per pixel, but leave too few blocks
   * for small areas. */
  tile64 = (guint64) rw * rh >= 1024 * 1024;
  const char *pack = (const char *) bp->d_pack;
  const size_t pitch = bp->pitch;
  cudaTextureObject_t ttex = lin ? bp->tex_lin : bp->tex_pt;
  gboolean ok = FALSE;

  switch (kernel)
    {
    case TOMO_GPU_KERNEL_STANDARD:
      ok = S == 1 ? run_standard<1> (bp, g, ttex, d_out, stream, error)
                  : run_standard<2> (bp, g, ttex, d_out, stream, error);
      break;
    case TOMO_GPU_KERNEL_TEXTURE:
      ok = S == 1 ? run_texture<1, false> (bp, g, ttex, d_out, stream, error)
         : S == 2 ? run_texture<2, false> (bp, g, ttex, d_out, stream, error)
                  : run_texture<4, true> (bp, g, bp->tex_half, d_out, stream, error);
      break;
    case TOMO_GPU_KERNEL_ALU:
      ok = S == 1 ? DISPATCH_SLH (run_alu_t, 1, bp, g, pack, pitch, d_out, stream, error)
         : S == 2 ? DISPATCH_SLH (run_alu_t, 2, bp, g, pack, pitch, d_out, stream, error)
                  : DISPATCH_SLH (run_alu_t, 4, bp, g, pack, pitch, d_out, stream, error);
      break;
    case TOMO_GPU_KERNEL_HYBRID:
      {
        /* Share of blocks on the ALU path, in sixteenths; defaults are the
         * best measured on the H100 at 2048² × 2048 (GU/s, linear: 1 slice
         * 13/16 3226 vs 12/16 3129, 2 slices 12/16 4040 vs 8/16 3874;
         * nearest 14/16: 4478 vs 3523 at 12/16, 7087 vs 3863 at 8/16). */
        float r = params->hybrid_ratio > 0.f ? params->hybrid_ratio
                : S == 4 ? 0.625f
                : lin ? (S == 1 ? 0.8125f : 0.75f) : 0.875f;
        int alu16 = (int) lrintf (CLAMP (r, 0.f, 1.f) * 16.f);

        ok = S == 1 ? DISPATCH_SLH (run_hybrid_t, 1, bp, g, ttex, pack, pitch, alu16, d_out, stream, error)
           : S == 2 ? DISPATCH_SLH (run_hybrid_t, 2, bp, g, ttex, pack, pitch, alu16, d_out, stream, error)
                    : DISPATCH_SLH (run_hybrid_t, 4, bp, g, bp->tex_half, pack, pitch, alu16, d_out, stream, error);
      }
      break;
    default:
      g_assert_not_reached ();
    }
  if (ok && used != NULL)
    *used = kernel;
  return ok;
}
