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
 * bin (one component per slice), plus half4 for the 4-slice texture path:
 * bound once as float2 (the paper's forged type, fetched "nearest") and once
 * as a half-float texture, which the texture unit interpolates itself.
 *
 * This unit: packing, textures, the TomoBp API and the dispatch to the
 * kernel families (tomo-gpu-bp-{standard,texture,alu,hybrid}.cu).
 */
#define G_LOG_DOMAIN "tomo-gpu-bp"

#include "config.h"

#include "tomo-gpu-bp-device.cuh"

static guint bp_serial_counter;

/* Variant of the 4-slice half-precision kernels (BP_V_* bits): the default
 * below, TOMO_BP_VARIANT in the environment, or tomo_bp_set_variant().
 * H100, 4 × 2048² × 2048 linear hybrid at each variant's best share of ALU
 * blocks (test-gpu-bp --timing4, 2026-11-23 09:53): 0 (float4 fill) 5.994 ms
 * at 12/16; 1 (half fill) 4.786 ms at 9/16; the removed variants 2 and 3
 * (24 projections per pass) 6.367 and 5.318 ms; 4, 5, 6, 7 (texture results
 * as packed halves) 6.096, 4.993, 6.612, 5.456 ms — the texture unit's
 * filtering, not its 16-byte results, bounds the texture blocks (all
 * texture: 8.86 ms float, 8.82 ms packed halves). */
#define BP_DEFAULT_VARIANT BP_V_HSRC
static gint bp_variant = -1;

int
tomo_bp_get_variant (void)
{
  int v = g_atomic_int_get (&bp_variant);

  if (v < 0)
    {
      const char *env = g_getenv ("TOMO_BP_VARIANT");
      guint64 n;

      v = BP_DEFAULT_VARIANT;
      if (env != NULL && g_ascii_string_to_unsigned (env, 10, 0, BP_N_VARIANTS - 1, &n, NULL))
        v = (int) n;
      else if (env != NULL)
        g_warning ("TOMO_BP_VARIANT=%s is not a variant (0 to %d), using %d", env, BP_N_VARIANTS - 1, v);
      g_atomic_int_set (&bp_variant, v);
    }
  return v;
}

void
tomo_bp_set_variant (int variant)
{
  g_atomic_int_set (&bp_variant, variant < 0 ? -1 : MIN (variant, BP_N_VARIANTS - 1));
}

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
      /* 4 slices travel as halves (linear: a half4 texture). */
      return TRUE;
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
   * (7700 vs 6530) and linear from the half4 texture, which the texture
   * unit interpolates (5805 vs 5459 ALU with half cache, 3748 texture;
   * with the half-bin fill 7180 vs 5875 ALU alone, 3897 texture);
   * nearest 1 and 2 slices run on the ALU path alone (4320 and 7010; the
   * hybrid's +1–4 % is measured at 2048² only).  One slice at 1024²: too
   * few 64×64 tiles per SM for the slower texture blocks, the hybrid
   * loses a third (1940 vs 2760), so it takes over only from 2048². */
  if (interp == 1 && n_slices == 1)
    return (guint64) roi_width * roi_height >= 2048 * 2048 ? TOMO_GPU_KERNEL_HYBRID
                                                           : TOMO_GPU_KERNEL_ALU;
  if (n_slices == 4 || (interp == 1 && n_slices == 2))
    return TOMO_GPU_KERNEL_HYBRID;
  return TOMO_GPU_KERNEL_ALU;
}

TomoBp *
tomo_bp_new (int      device,
             GError **error)
{
  TomoBp *bp;

  if (!_tomo_gpu_set_device (device, error))
    return NULL;
  bp = g_new0 (TomoBp, 1);
  bp->device = device;
  bp->serial = g_atomic_int_add ((gint *) &bp_serial_counter, 1) + 1;
  return bp;
}

static void
bp_free_data (TomoBp *bp)
{
  TOMO_CUDA_TEXTURE_DESTROY (bp->tex_lin, bp->tex_pt, bp->tex_half, bp->tex_h4_lin);
  TOMO_CUDA_FREE (bp->d_pack, bp->d_half);
  bp->alloc_w = bp->alloc_p = bp->alloc_s = 0;
  bp->n_slices = 0;
}

void
tomo_bp_free (TomoBp *bp)
{
  if (bp == NULL)
    return;
  TOMO_CUDA_WARN (cudaSetDevice (bp->device));
  /* Kernels of this TomoBp may still be queued. */
  TOMO_CUDA_WARN (cudaDeviceSynchronize ());
  bp_free_data (bp);
  TOMO_CUDA_FREE (bp->d_cs_f, bp->d_cs_d);
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
  if (!TOMO_CUDA_CHECK (cudaSetDevice (bp->device), error))
    return FALSE;
  if (bp->n_proj != n_proj)
    {
      if (bp->d_cs_f && !TOMO_CUDA_CHECK (cudaFree (bp->d_cs_f), error))
        return FALSE;
      bp->d_cs_f = NULL;
      if (bp->d_cs_d && !TOMO_CUDA_CHECK (cudaFree (bp->d_cs_d), error))
        return FALSE;
      bp->d_cs_d = NULL;
      bp->n_proj = 0;
      if (!TOMO_CUDA_CHECK (cudaMalloc (&bp->d_cs_f, n_proj * sizeof (float2)), error) ||
          !TOMO_CUDA_CHECK (cudaMalloc (&bp->d_cs_d, n_proj * sizeof (double2)), error))
        return FALSE;
    }
  /* Synchronous copies: kernels queued with the old angles read them first. */
  if (!TOMO_CUDA_CHECK (cudaMemcpy (bp->d_cs_f, hf, n_proj * sizeof (float2), cudaMemcpyHostToDevice), error) ||
      !TOMO_CUDA_CHECK (cudaMemcpy (bp->d_cs_d, hd, n_proj * sizeof (double2), cudaMemcpyHostToDevice), error))
    return FALSE;
  if (bp->width != width || bp->n_proj != n_proj)
    bp->n_slices = 0;   /* loaded data no longer matches */
  bp->width = width;
  bp->n_proj = n_proj;
  /* The constant-memory caches (one per kernel unit) see new angles. */
  g_atomic_int_inc ((gint *) &bp->generation);
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
  return TOMO_CUDA_CHECK (cudaCreateTextureObject (tex, &res, &td, NULL), error);
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
  if (!TOMO_CUDA_CHECK (cudaSetDevice (bp->device), error))
    return FALSE;
  if (bp->alloc_w != w || bp->alloc_p != p || bp->alloc_s != n_slices)
    {
      /* Queued kernels may still read the old buffers. */
      if (!TOMO_CUDA_CHECK (cudaStreamSynchronize (stream), error) || !TOMO_CUDA_CHECK (cudaDeviceSynchronize (), error))
        return FALSE;
      bp_free_data (bp);
      if (!TOMO_CUDA_CHECK (cudaMallocPitch (&bp->d_pack, &bp->pitch, (size_t) w * 4 * n_slices, p), error))
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
          if (!TOMO_CUDA_CHECK (cudaMallocPitch (&bp->d_half, &bp->half_pitch, (size_t) w * 8, p), error))
            return FALSE;
          if (!bp_make_texture (bp->d_half, bp->half_pitch, cudaCreateChannelDesc<float2> (), w, p,
                                cudaFilterModePoint, &bp->tex_half, error) ||
              !bp_make_texture (bp->d_half, bp->half_pitch, cudaCreateChannelDescHalf4 (), w, p,
                                cudaFilterModeLinear, &bp->tex_h4_lin, error))
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
  if (!TOMO_CUDA_CHECK_LAUNCH ("bp_pack", error))
    {
      bp->n_slices = 0;
      return FALSE;
    }
  bp->n_slices = n_slices;
  return TRUE;
}

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
  if (!TOMO_CUDA_CHECK (cudaSetDevice (bp->device), error))
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
  g.variant = tomo_bp_get_variant ();

  lin = params->interp == 1;
  /* 4 slices linear on the hybrid: its texture blocks read halves, so its
   * ALU blocks cache halves too (half2 arithmetic, 4 blocks per SM: 5805
   * GU/s on the H100; 5040 with the float cache), filled from the half4
   * bins by default (7180; see BP_DEFAULT_VARIANT). */
  half = params->half_cache || (kernel == TOMO_GPU_KERNEL_HYBRID && S == 4 && lin);
  /* Big tiles halve the caching work per pixel, but leave too few blocks
   * for small areas. */
  tile64 = (guint64) rw * rh >= 1024 * 1024;
  cudaTextureObject_t ttex = S == 4 ? (lin ? bp->tex_h4_lin : bp->tex_half)
                          : lin ? bp->tex_lin : bp->tex_pt;
  gboolean ok = FALSE;

  switch (kernel)
    {
    case TOMO_GPU_KERNEL_STANDARD:
      ok = _tomo_bp_run_standard (bp, g, ttex, d_out, stream, error);
      break;
    case TOMO_GPU_KERNEL_TEXTURE:
      ok = _tomo_bp_run_texture (bp, g, ttex, d_out, stream, error);
      break;
    case TOMO_GPU_KERNEL_ALU:
      ok = _tomo_bp_run_alu (bp, g, tile64, lin, half, d_out, stream, error);
      break;
    case TOMO_GPU_KERNEL_HYBRID:
      {
        /* Share of blocks on the ALU path, in sixteenths; defaults are the
         * best measured on the H100 at 2048² × 2048 (GU/s, linear: 1 slice
         * 13/16 3226 vs 12/16 3129, 2 slices 12/16 4040 vs 8/16 3874,
         * 4 slices (half4 texture, half cache) 12/16 5805 vs 10/16 5726,
         * 13/16 5718 and 6/16 5382 — with the ALU cache filled from the
         * half bins (variant 1) 9/16 7180 vs 8/16 6987, 10/16 7011 and
         * 12/16 6606 (run of 2026-11-23 09:53); nearest 14/16: 4478 vs 3523 at 12/16, 7087 vs 3863 at
         * 8/16). */
        float r = params->hybrid_ratio > 0.f ? params->hybrid_ratio
                : S == 4 ? (lin ? ((g.variant & BP_V_HSRC) ? 0.5625f : 0.75f) : 0.625f)
                : lin ? (S == 1 ? 0.8125f : 0.75f) : 0.875f;
        int alu16 = (int) lrintf (CLAMP (r, 0.f, 1.f) * 16.f);

        ok = _tomo_bp_run_hybrid (bp, g, S == 4 && !lin ? bp->tex_half : ttex, tile64, lin, half, alu16,
                                  d_out, stream, error);
      }
      break;
    default:
      g_assert_not_reached ();
    }
  if (ok && used != NULL)
    *used = kernel;
  return ok;
}

