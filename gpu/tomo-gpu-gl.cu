/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * CUDA–OpenGL interop: the only unit of gpu/ that sees GL types.  A slice in
 * device memory goes into a GL_R32F texture without touching host memory:
 * map the registered texture, take its CUDA array, copy into it on a stream,
 * unmap.  When the GL context does not run on a CUDA device (Mesa, llvmpipe,
 * another vendor) tomo_gpu_gl_get_device() says so and the caller uploads
 * through glTexSubImage2D instead.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <GL/gl.h>
#include <cuda_runtime.h>
#include <cuda_gl_interop.h>

#include "tomo-gpu.h"
#include "tomo-gpu-private.h"

gboolean
tomo_gpu_gl_get_device (int *device)
{
  unsigned int count = 0;
  int devices[8];
  int n = 0;

  /* Without any CUDA device, cudaGLGetDevices would only report an error;
   * skip it so no driver is even initialised for nothing. */
  if (cudaGetDeviceCount (&n) != cudaSuccess || n <= 0)
    {
      cudaGetLastError ();
      return FALSE;
    }
  if (cudaGLGetDevices (&count, devices, G_N_ELEMENTS (devices), cudaGLDeviceListAll) != cudaSuccess ||
      count == 0)
    {
      cudaGetLastError ();
      return FALSE;
    }
  if (device != NULL)
    *device = devices[0];
  return TRUE;
}

struct _TomoGpuGlTexture
{
  int device;
  cudaGraphicsResource_t resource;
  cudaStream_t stream;
  guint width, height;
};

TomoGpuGlTexture *
tomo_gpu_gl_texture_register (unsigned int gl_texture,
                              guint        width,
                              guint        height,
                              GError     **error)
{
  TomoGpuGlTexture *texture;
  int device = -1;

  if (gl_texture == 0 || width == 0 || height == 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid GL texture %u of %u×%u for interop", gl_texture, width, height);
      return NULL;
    }
  if (!tomo_gpu_gl_get_device (&device))
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                           "The current OpenGL context does not run on a CUDA device");
      return NULL;
    }
  if (!TOMO_CUDA_CHECK (cudaSetDevice (device), error))
    return NULL;

  texture = g_new0 (TomoGpuGlTexture, 1);
  texture->device = device;
  texture->width = width;
  texture->height = height;
  /* WriteDiscard: CUDA overwrites the region; GL never needs the old content
   * read back into CUDA. */
  if (!TOMO_CUDA_CHECK (cudaGraphicsGLRegisterImage (&texture->resource, gl_texture,
                                                     GL_TEXTURE_2D,
                                                     cudaGraphicsRegisterFlagsWriteDiscard),
                        error) ||
      !TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&texture->stream, cudaStreamNonBlocking), error))
    {
      if (error != NULL && *error != NULL && (*error)->code != TOMO_GPU_ERROR_OUT_OF_MEMORY)
        (*error)->code = TOMO_GPU_ERROR_INTEROP;
      tomo_gpu_gl_texture_unregister (texture);
      return NULL;
    }
  return texture;
}

gboolean
tomo_gpu_gl_texture_copy (TomoGpuGlTexture *texture,
                          const float      *device_src,
                          guint             width,
                          guint             height,
                          guint             dst_x,
                          guint             dst_y,
                          GError          **error)
{
  cudaArray_t array = NULL;
  gboolean ok;

  g_return_val_if_fail (texture != NULL, FALSE);

  if (device_src == NULL || width == 0 || height == 0 ||
      dst_x >= texture->width || width > texture->width - dst_x ||
      dst_y >= texture->height || height > texture->height - dst_y)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Cannot copy a %u×%u plane to (%u, %u) of a %u×%u texture",
                   width, height, dst_x, dst_y, texture->width, texture->height);
      return FALSE;
    }
  if (!TOMO_CUDA_CHECK (cudaSetDevice (texture->device), error) ||
      !TOMO_CUDA_CHECK (cudaGraphicsMapResources (1, &texture->resource, texture->stream), error))
    return FALSE;
  ok = TOMO_CUDA_CHECK (cudaGraphicsSubResourceGetMappedArray (&array, texture->resource, 0, 0),
                        error) &&
       TOMO_CUDA_CHECK (cudaMemcpy2DToArrayAsync (array, dst_x * sizeof (float), dst_y,
                                                  device_src, width * sizeof (float),
                                                  width * sizeof (float), height,
                                                  cudaMemcpyDeviceToDevice, texture->stream),
                        error);
  /* Unmapping orders the copy before any later GL use of the texture. */
  if (!TOMO_CUDA_CHECK (cudaGraphicsUnmapResources (1, &texture->resource, texture->stream),
                        ok ? error : NULL))
    ok = FALSE;
  if (ok)
    ok = TOMO_CUDA_CHECK (cudaStreamSynchronize (texture->stream), error);
  return ok;
}

void
tomo_gpu_gl_texture_unregister (TomoGpuGlTexture *texture)
{
  if (texture == NULL)
    return;
  TOMO_CUDA_WARN (cudaSetDevice (texture->device));
  if (texture->resource)
    TOMO_CUDA_WARN (cudaGraphicsUnregisterResource (texture->resource));
  if (texture->stream)
    TOMO_CUDA_WARN (cudaStreamDestroy (texture->stream));
  g_free (texture);
}
