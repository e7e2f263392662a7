/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * CUDA–OpenGL interop: device planes into GL textures without touching
 * host memory (the slice view, `tomolive bench --interop`).  Errors are in
 * the TOMO_GPU_ERROR domain of tomo-gpu.h.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* CUDA–OpenGL interop (gpu/tomo-gpu-gl.cu; GL types stay there).  Every call
 * needs the GL context current, on the thread that renders. */
/* TRUE and *device set when the current GL context runs on a CUDA device. */
gboolean tomo_gpu_gl_get_device (int *device);

typedef struct _TomoGpuGlTexture TomoGpuGlTexture;
/* Registers a GL_TEXTURE_2D of internal format GL_R32F (once per size). */
TomoGpuGlTexture *tomo_gpu_gl_texture_register   (unsigned int gl_texture,
                                                  guint        width,
                                                  guint        height,
                                                  GError     **error);
/* Map, copy a width × height float plane from device memory to (dst_x, dst_y)
 * of the texture, unmap — no host memory touched. */
gboolean          tomo_gpu_gl_texture_copy       (TomoGpuGlTexture *texture,
                                                  const float      *device_src,
                                                  guint             width,
                                                  guint             height,
                                                  guint             dst_x,
                                                  guint             dst_y,
                                                  GError          **error);
void              tomo_gpu_gl_texture_unregister (TomoGpuGlTexture *texture);

/* The preview volume into a GL_TEXTURE_3D of nx × ny × nz texels (x
 * fastest), internal format GL_R16F (half) or GL_R32F.  Registration checks
 * the texture's size and format: another size or format gives
 * TOMO_GPU_ERROR_INVALID, a name that is not a 3D texture
 * TOMO_GPU_ERROR_INTEROP.  Redefining the texture (glTexImage3D) needs a new
 * registration. */
typedef struct _TomoGpuGlVolume TomoGpuGlVolume;
TomoGpuGlVolume  *tomo_gpu_gl_volume_register   (unsigned int gl_texture,
                                                 guint        nx,
                                                 guint        ny,
                                                 guint        nz,
                                                 gboolean     half,
                                                 GError     **error);
/* Map, write nx × ny × nz floats from device memory (z slowest) into the
 * whole texture (rounded to the nearest half for GL_R16F), unmap: no host
 * memory touched.  A size other than the registered one:
 * TOMO_GPU_ERROR_INVALID, nothing written. */
gboolean          tomo_gpu_gl_volume_copy       (TomoGpuGlVolume *volume,
                                                 const float     *device_src,
                                                 guint            nx,
                                                 guint            ny,
                                                 guint            nz,
                                                 GError         **error);
void              tomo_gpu_gl_volume_unregister (TomoGpuGlVolume *volume);

/* A headless OpenGL context for measuring the display path without a window
 * (`tomolive bench --interop`): EGL on the first EGL device whose surfaceless
 * OpenGL 3.3 core context runs on a CUDA device, made current on the calling
 * thread, with one GL_R32F texture of width × height registered for interop.
 * libEGL is loaded at run time; without it, without EGL device enumeration or
 * without a CUDA device, NULL and TOMO_GPU_ERROR_INTEROP / _NO_DEVICE.  Every
 * call below on the thread that opened it. */
typedef struct _TomoGpuGlHeadless TomoGpuGlHeadless;
TomoGpuGlHeadless *tomo_gpu_gl_headless_open         (guint    width,
                                                      guint    height,
                                                      GError **error);
/* The CUDA device the GL context runs on. */
int                tomo_gpu_gl_headless_get_device   (TomoGpuGlHeadless *gl);
/* "NVIDIA H100 …/PCIe/SSE2, OpenGL 3.3.0 NVIDIA 580…" */
const char        *tomo_gpu_gl_headless_get_renderer (TomoGpuGlHeadless *gl);
/* tomo_gpu_gl_texture_copy() of a width × height device plane to (0, 0) of
 * the texture, then glFinish(): on return a draw could sample it. */
gboolean           tomo_gpu_gl_headless_show         (TomoGpuGlHeadless *gl,
                                                      const float       *device_src,
                                                      guint              width,
                                                      guint              height,
                                                      GError           **error);
/* The whole texture back to host memory through GL (width × height floats). */
gboolean           tomo_gpu_gl_headless_read         (TomoGpuGlHeadless *gl,
                                                      float             *host,
                                                      GError           **error);
/* A GL_TEXTURE_3D of nx × ny × nz texels, GL_R16F (half) or GL_R32F,
 * undefined content, linear filtering (as the 3D pane's): its name, or 0
 * and an error. */
unsigned int       tomo_gpu_gl_headless_texture_3d_new    (TomoGpuGlHeadless *gl,
                                                           guint              nx,
                                                           guint              ny,
                                                           guint              nz,
                                                           gboolean           half,
                                                           GError           **error);
/* The upload path: nx × ny × nz host floats into the whole texture
 * (glTexSubImage3D), then glFinish(). */
gboolean           tomo_gpu_gl_headless_texture_3d_upload (TomoGpuGlHeadless *gl,
                                                           unsigned int       texture,
                                                           guint              nx,
                                                           guint              ny,
                                                           guint              nz,
                                                           const float       *host,
                                                           GError           **error);
void               tomo_gpu_gl_headless_finish            (TomoGpuGlHeadless *gl);
void               tomo_gpu_gl_headless_texture_delete    (TomoGpuGlHeadless *gl,
                                                           unsigned int       texture);
void               tomo_gpu_gl_headless_close        (TomoGpuGlHeadless *gl);

G_END_DECLS
