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
#include <string.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cuda_gl_interop.h>

#include "tomo-gpu.h"
#include "tomo-gpu-gl.h"
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

/* The CUDA device of the current GL context, made current for CUDA. */
static gboolean
interop_device (int     *device,
                GError **error)
{
  if (!tomo_gpu_gl_get_device (device))
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                           "The current OpenGL context does not run on a CUDA device");
      return FALSE;
    }
  return TOMO_CUDA_CHECK (cudaSetDevice (*device), error);
}

/* The CUDA side of a registered GL texture: the texture and the volume
 * handles begin with one, so that either is made and freed as one block. */
typedef struct
{
  int device;
  cudaGraphicsResource_t resource;
  cudaStream_t stream;
} Registration;

/* Lets go of what `reg` holds on its device and frees the handle that it
 * begins (NULL: nothing). */
static void
unregister (Registration *reg)
{
  if (reg == NULL)
    return;
  TOMO_CUDA_WARN (cudaSetDevice (reg->device));
  TOMO_CUDA_STREAM_DESTROY (reg->stream);
  if (reg->resource)
    TOMO_CUDA_WARN (cudaGraphicsUnregisterResource (reg->resource));
  g_free (reg);
}

/* A zeroed handle of `size` bytes that begins with `gl_texture` (of
 * `target`) registered with `flags` on the CUDA device of the current GL
 * context, and a stream.  A failed registration is TOMO_GPU_ERROR_INTEROP
 * unless the device ran out of memory. */
static gpointer
register_texture (gsize         size,
                  unsigned int  gl_texture,
                  GLenum        target,
                  unsigned int  flags,
                  GError      **error)
{
  Registration *reg;
  int device = -1;

  if (!interop_device (&device, error))
    return NULL;
  reg = (Registration *) g_malloc0 (size);
  reg->device = device;
  if (TOMO_CUDA_CHECK (cudaGraphicsGLRegisterImage (&reg->resource, gl_texture, target, flags), error) &&
      TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&reg->stream, cudaStreamNonBlocking), error))
    return reg;
  /* A plain refusal is the interop's; out of memory, a device fault or no
   * device keep their codes (the engine leaves a faulted GPU for the CPU). */
  if (error != NULL && *error != NULL && (*error)->code == TOMO_GPU_ERROR_CUDA)
    {
      if (target == GL_TEXTURE_3D)
        g_prefix_error (error, "GL texture %u is no 3D texture CUDA can register: ", gl_texture);
      (*error)->code = TOMO_GPU_ERROR_INTEROP;
    }
  unregister (reg);
  return NULL;
}

/* The array of a registered texture, mapped on its stream. */
static gboolean
map_array (Registration *reg,
           cudaArray_t  *array,
           GError      **error)
{
  return TOMO_CUDA_CHECK (cudaSetDevice (reg->device), error) &&
         TOMO_CUDA_CHECK (cudaGraphicsMapResources (1, &reg->resource, reg->stream), error) &&
         (TOMO_CUDA_CHECK (cudaGraphicsSubResourceGetMappedArray (array, reg->resource, 0, 0), error) ||
          (cudaGraphicsUnmapResources (1, &reg->resource, reg->stream), FALSE));
}

/* After the writes on the stream (`ok`: they were queued): unmapping
 * orders them before any later GL use of the texture; then waits. */
static gboolean
unmap_and_wait (Registration *reg,
                gboolean      ok,
                GError      **error)
{
  if (!TOMO_CUDA_CHECK (cudaGraphicsUnmapResources (1, &reg->resource, reg->stream), ok ? error : NULL))
    ok = FALSE;
  if (ok)
    return TOMO_CUDA_CHECK (cudaStreamSynchronize (reg->stream), error);
  cudaStreamSynchronize (reg->stream);
  return FALSE;
}

struct _TomoGpuGlTexture
{
  Registration reg;
  guint width, height;
};

TomoGpuGlTexture *
tomo_gpu_gl_texture_register (unsigned int gl_texture,
                              guint        width,
                              guint        height,
                              GError     **error)
{
  TomoGpuGlTexture *texture;

  if (gl_texture == 0 || width == 0 || height == 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid GL texture %u of %u×%u for interop", gl_texture, width, height);
      return NULL;
    }
  /* WriteDiscard: CUDA overwrites the region; GL never needs the old content
   * read back into CUDA. */
  texture = (TomoGpuGlTexture *) register_texture (sizeof *texture, gl_texture, GL_TEXTURE_2D,
                                                   cudaGraphicsRegisterFlagsWriteDiscard, error);
  if (texture != NULL)
    {
      texture->width = width;
      texture->height = height;
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
  if (!map_array (&texture->reg, &array, error))
    return FALSE;
  ok = TOMO_CUDA_CHECK (cudaMemcpy2DToArrayAsync (array, dst_x * sizeof (float), dst_y,
                                                  device_src, width * sizeof (float),
                                                  width * sizeof (float), height,
                                                  cudaMemcpyDeviceToDevice, texture->reg.stream),
                        error);
  return unmap_and_wait (&texture->reg, ok, error);
}

void
tomo_gpu_gl_texture_unregister (TomoGpuGlTexture *texture)
{
  unregister ((Registration *) texture);
}

/* --- 3D textures: the preview volume ---------------------------------------
 *
 * The 3D pane's texture is GL_R16F (or GL_R32F), nx × ny × nz texels, x
 * fastest.  Registration maps the texture once to check that its CUDA array
 * has the size and the texel format asked for: a texture of another size or
 * format, or a name that is no 3D texture, is refused there with an error
 * instead of being written out of bounds later.  Float textures take a
 * cudaMemcpy3D from the device volume; half textures a kernel that rounds
 * each value to the nearest half (as __float2half_rn, ties to even) and
 * writes it through a surface. */

struct _TomoGpuGlVolume
{
  Registration reg;
  guint nx, ny, nz;
  gboolean half;
};

__global__ static void
volume_to_half_kernel (const float         *src,
                       cudaSurfaceObject_t  surface,
                       int                  nx,
                       int                  ny,
                       int                  nz)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z;

  if (x >= nx || y >= ny || z >= nz)
    return;
  surf3Dwrite (__half_as_ushort (__float2half_rn (src[((size_t) z * ny + y) * nx + x])), surface,
               x * (int) sizeof (unsigned short), y, z);
}

TomoGpuGlVolume *
tomo_gpu_gl_volume_register (unsigned int gl_texture,
                             guint        nx,
                             guint        ny,
                             guint        nz,
                             gboolean     half,
                             GError     **error)
{
  TomoGpuGlVolume *volume;
  cudaChannelFormatDesc desc;
  cudaExtent extent;
  cudaArray_t array = NULL;
  unsigned int flags = 0;
  gboolean ok;

  if (gl_texture == 0 || nx == 0 || ny == 0 || nz == 0)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid GL 3D texture %u of %u × %u × %u for interop", gl_texture, nx, ny, nz);
      return NULL;
    }
  volume = (TomoGpuGlVolume *) register_texture (sizeof *volume, gl_texture, GL_TEXTURE_3D,
                                                 half ? cudaGraphicsRegisterFlagsSurfaceLoadStore
                                                      : cudaGraphicsRegisterFlagsWriteDiscard,
                                                 error);
  if (volume == NULL)
    return NULL;
  volume->nx = nx;
  volume->ny = ny;
  volume->nz = nz;
  volume->half = half;

  /* What GL made of the texture, against what the caller will copy. */
  if (!map_array (&volume->reg, &array, error))
    {
      tomo_gpu_gl_volume_unregister (volume);
      return NULL;
    }
  ok = TOMO_CUDA_CHECK (cudaArrayGetInfo (&desc, &extent, &flags, array), error);
  TOMO_CUDA_WARN (cudaGraphicsUnmapResources (1, &volume->reg.resource, volume->reg.stream));
  if (ok && (extent.width != nx || extent.height != ny || extent.depth != nz ||
             desc.f != cudaChannelFormatKindFloat || desc.x != (half ? 16 : 32) ||
             desc.y != 0 || desc.z != 0 || desc.w != 0))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "GL texture %u is %zu × %zu × %zu texels of %d-bit %s, not %u × %u × %u of "
                   "one %u-bit float", gl_texture, extent.width, extent.height, extent.depth,
                   desc.x + desc.y + desc.z + desc.w,
                   desc.f == cudaChannelFormatKindFloat ? "float" : "integers", nx, ny, nz,
                   half ? 16 : 32);
      ok = FALSE;
    }
  if (!ok)
    {
      tomo_gpu_gl_volume_unregister (volume);
      return NULL;
    }
  return volume;
}

gboolean
tomo_gpu_gl_volume_copy (TomoGpuGlVolume *volume,
                         const float     *device_src,
                         guint            nx,
                         guint            ny,
                         guint            nz,
                         GError         **error)
{
  cudaArray_t array = NULL;
  cudaSurfaceObject_t surface = 0;
  gboolean ok;

  g_return_val_if_fail (volume != NULL, FALSE);

  if (device_src == NULL || nx != volume->nx || ny != volume->ny || nz != volume->nz)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Cannot copy a %u × %u × %u volume%s into a %u × %u × %u texture", nx, ny, nz,
                   device_src == NULL ? " (no data)" : "", volume->nx, volume->ny, volume->nz);
      return FALSE;
    }
  if (!map_array (&volume->reg, &array, error))
    return FALSE;
  if (volume->half)
    {
      cudaResourceDesc res;

      memset (&res, 0, sizeof res);
      res.resType = cudaResourceTypeArray;
      res.res.array.array = array;
      ok = TOMO_CUDA_CHECK (cudaCreateSurfaceObject (&surface, &res), error);
      if (ok)
        {
          dim3 block (32, 8), grid ((nx + 31) / 32, (ny + 7) / 8, nz);

          volume_to_half_kernel<<<grid, block, 0, volume->reg.stream>>> (device_src, surface, nx, ny, nz);
          ok = TOMO_CUDA_CHECK_LAUNCH ("volume to half texture kernel", error);
        }
    }
  else
    {
      cudaMemcpy3DParms p;

      memset (&p, 0, sizeof p);
      p.srcPtr = make_cudaPitchedPtr ((void *) device_src, (size_t) nx * sizeof (float), nx, ny);
      p.dstArray = array;
      p.extent = make_cudaExtent (nx, ny, nz);
      p.kind = cudaMemcpyDeviceToDevice;
      ok = TOMO_CUDA_CHECK (cudaMemcpy3DAsync (&p, volume->reg.stream), error);
    }
  ok = unmap_and_wait (&volume->reg, ok, error);
  if (surface != 0)
    TOMO_CUDA_WARN (cudaDestroySurfaceObject (surface));
  return ok;
}

void
tomo_gpu_gl_volume_unregister (TomoGpuGlVolume *volume)
{
  unregister ((Registration *) volume);
}

/* --- headless context for measurements ------------------------------------
 *
 * `tomolive bench --interop` times the viewer's display path without a
 * window.  libEGL (and, when present, libOpenGL) are opened at run time
 * rather than linked: a build without them, or a machine where they are
 * missing, still runs every other part of tomolive, and the bench reports
 * the missing library instead of failing to start.  Core EGL entry points
 * come from dlsym; extensions and GL from eglGetProcAddress, which the
 * GLVND libEGL answers for core GL functions too. */

#include <dlfcn.h>
#include <string.h>

/* Types and constants only: every call goes through a pointer from dlsym. */
#include <EGL/egl.h>
#include <EGL/eglext.h>

typedef void         (*GlGenTexturesFunc)    (GLsizei n, GLuint *textures);
typedef void         (*GlDeleteTexturesFunc) (GLsizei n, const GLuint *textures);
typedef void         (*GlBindTextureFunc)    (GLenum target, GLuint texture);
typedef void         (*GlTexImage2DFunc)     (GLenum target, GLint level, GLint internal_format,
                                              GLsizei width, GLsizei height, GLint border,
                                              GLenum format, GLenum type, const void *pixels);
typedef void         (*GlTexImage3DFunc)     (GLenum target, GLint level, GLint internal_format,
                                              GLsizei width, GLsizei height, GLsizei depth,
                                              GLint border, GLenum format, GLenum type,
                                              const void *pixels);
typedef void         (*GlTexSubImage3DFunc)  (GLenum target, GLint level, GLint x, GLint y, GLint z,
                                              GLsizei width, GLsizei height, GLsizei depth,
                                              GLenum format, GLenum type, const void *pixels);
typedef void         (*GlTexParameteriFunc)  (GLenum target, GLenum pname, GLint param);
typedef void         (*GlPixelStoreiFunc)    (GLenum pname, GLint param);
typedef void         (*GlGetTexImageFunc)    (GLenum target, GLint level, GLenum format,
                                              GLenum type, void *pixels);
typedef void         (*GlFinishFunc)         (void);
typedef GLenum       (*GlGetErrorFunc)       (void);
typedef const GLubyte *(*GlGetStringFunc)    (GLenum name);

struct _TomoGpuGlHeadless
{
  void *egl_lib;
  void *gl_lib;
  PFNEGLGETPROCADDRESSPROC get_proc_address;
  PFNEGLTERMINATEPROC terminate;
  PFNEGLMAKECURRENTPROC make_current;
  PFNEGLDESTROYCONTEXTPROC destroy_context;
  EGLDisplay display;
  EGLContext context;

  GlGenTexturesFunc gen_textures;
  GlDeleteTexturesFunc delete_textures;
  GlBindTextureFunc bind_texture;
  GlTexImage2DFunc tex_image_2d;
  GlTexImage3DFunc tex_image_3d;
  GlTexSubImage3DFunc tex_sub_image_3d;
  GlTexParameteriFunc tex_parameteri;
  GlPixelStoreiFunc pixel_storei;
  GlGetTexImageFunc get_tex_image;
  GlFinishFunc finish;
  GlGetErrorFunc get_error;
  GlGetStringFunc get_string;

  int device;
  char *renderer;
  GLuint texture;
  guint width, height;
  TomoGpuGlTexture *registered;
};

static gboolean
egl_has_extension (const char *list,
                   const char *name)
{
  gsize len = strlen (name);

  for (const char *p = list; p != NULL && (p = strstr (p, name)) != NULL; p += len)
    if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
      return TRUE;
  return FALSE;
}

static void *
gl_symbol (TomoGpuGlHeadless *gl,
           const char        *name)
{
  void *sym = gl->gl_lib != NULL ? dlsym (gl->gl_lib, name) : NULL;

  return sym != NULL ? sym : (void *) gl->get_proc_address (name);
}

static gboolean
load_gl_functions (TomoGpuGlHeadless  *gl,
                   GError            **error)
{
  static const struct { const char *name; gsize offset; } table[] = {
#define GL_FN(field, name) { name, G_STRUCT_OFFSET (TomoGpuGlHeadless, field) }
    GL_FN (gen_textures, "glGenTextures"),
    GL_FN (delete_textures, "glDeleteTextures"),
    GL_FN (bind_texture, "glBindTexture"),
    GL_FN (tex_image_2d, "glTexImage2D"),
    GL_FN (tex_image_3d, "glTexImage3D"),
    GL_FN (tex_sub_image_3d, "glTexSubImage3D"),
    GL_FN (tex_parameteri, "glTexParameteri"),
    GL_FN (pixel_storei, "glPixelStorei"),
    GL_FN (get_tex_image, "glGetTexImage"),
    GL_FN (finish, "glFinish"),
    GL_FN (get_error, "glGetError"),
    GL_FN (get_string, "glGetString"),
#undef GL_FN
  };

  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    {
      void *sym = gl_symbol (gl, table[i].name);

      if (sym == NULL)
        {
          g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                       "OpenGL function %s not found (libOpenGL.so.0 / eglGetProcAddress)",
                       table[i].name);
          return FALSE;
        }
      memcpy ((char *) gl + table[i].offset, &sym, sizeof sym);
    }
  return TRUE;
}

#define EGL_SYM(gl, type, name) ((type) dlsym ((gl)->egl_lib, name))

/* Walks the EGL devices and keeps the first whose OpenGL context CUDA can
 * reach: on a machine with a Mesa device besides the NVIDIA one, only the
 * latter can share the texture. */
static gboolean
open_egl_context (TomoGpuGlHeadless  *gl,
                  GError            **error)
{
  PFNEGLQUERYDEVICESEXTPROC query_devices;
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display;
  PFNEGLINITIALIZEPROC initialize = EGL_SYM (gl, PFNEGLINITIALIZEPROC, "eglInitialize");
  PFNEGLQUERYSTRINGPROC query_string = EGL_SYM (gl, PFNEGLQUERYSTRINGPROC, "eglQueryString");
  PFNEGLBINDAPIPROC bind_api = EGL_SYM (gl, PFNEGLBINDAPIPROC, "eglBindAPI");
  PFNEGLCHOOSECONFIGPROC choose_config = EGL_SYM (gl, PFNEGLCHOOSECONFIGPROC, "eglChooseConfig");
  PFNEGLCREATECONTEXTPROC create_context = EGL_SYM (gl, PFNEGLCREATECONTEXTPROC, "eglCreateContext");
  EGLDeviceEXT devices[16];
  EGLint n = 0;
  guint tried = 0;

  gl->get_proc_address = EGL_SYM (gl, PFNEGLGETPROCADDRESSPROC, "eglGetProcAddress");
  gl->terminate = EGL_SYM (gl, PFNEGLTERMINATEPROC, "eglTerminate");
  gl->make_current = EGL_SYM (gl, PFNEGLMAKECURRENTPROC, "eglMakeCurrent");
  gl->destroy_context = EGL_SYM (gl, PFNEGLDESTROYCONTEXTPROC, "eglDestroyContext");
  if (gl->get_proc_address == NULL || gl->terminate == NULL || gl->make_current == NULL ||
      gl->destroy_context == NULL || initialize == NULL || query_string == NULL ||
      bind_api == NULL || choose_config == NULL || create_context == NULL)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                           "libEGL.so.1 lacks core EGL 1.4 functions");
      return FALSE;
    }
  query_devices = (PFNEGLQUERYDEVICESEXTPROC) gl->get_proc_address ("eglQueryDevicesEXT");
  get_platform_display = (PFNEGLGETPLATFORMDISPLAYEXTPROC) gl->get_proc_address ("eglGetPlatformDisplayEXT");
  if (query_devices == NULL || get_platform_display == NULL)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                           "EGL has no device enumeration (EGL_EXT_device_enumeration, "
                           "EGL_EXT_platform_device)");
      return FALSE;
    }
  if (!query_devices (G_N_ELEMENTS (devices), devices, &n) || n == 0)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                           "EGL lists no devices (is an EGL vendor library for the GPU installed?)");
      return FALSE;
    }

  for (EGLint i = 0; i < n; i++)
    {
      static const EGLint config_attribs[] = {
        EGL_SURFACE_TYPE, EGL_PBUFFER_BIT,
        EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
        EGL_NONE,
      };
      static const EGLint context_attribs[] = {
        EGL_CONTEXT_MAJOR_VERSION, 3,
        EGL_CONTEXT_MINOR_VERSION, 3,
        EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
        EGL_NONE,
      };
      EGLDisplay dpy = get_platform_display (EGL_PLATFORM_DEVICE_EXT, devices[i], NULL);
      EGLConfig config = NULL;
      EGLint n_configs = 0;
      EGLContext ctx;
      int dev = -1;

      if (dpy == EGL_NO_DISPLAY || !initialize (dpy, NULL, NULL))
        continue;
      tried++;
      if (!egl_has_extension (query_string (dpy, EGL_EXTENSIONS), "EGL_KHR_surfaceless_context") ||
          !bind_api (EGL_OPENGL_API) ||
          !choose_config (dpy, config_attribs, &config, 1, &n_configs) || n_configs == 0)
        {
          gl->terminate (dpy);
          continue;
        }
      ctx = create_context (dpy, config, EGL_NO_CONTEXT, context_attribs);
      if (ctx == EGL_NO_CONTEXT || !gl->make_current (dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx))
        {
          if (ctx != EGL_NO_CONTEXT)
            gl->destroy_context (dpy, ctx);
          gl->terminate (dpy);
          continue;
        }
      if (tomo_gpu_gl_get_device (&dev))
        {
          gl->display = dpy;
          gl->context = ctx;
          gl->device = dev;
          return TRUE;
        }
      gl->make_current (dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      gl->destroy_context (dpy, ctx);
      gl->terminate (dpy);
    }
  g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
               "None of the %d EGL devices (%u initialised) gives a surfaceless OpenGL 3.3 "
               "core context on a CUDA device", (int) n, tried);
  return FALSE;
}

TomoGpuGlHeadless *
tomo_gpu_gl_headless_open (guint    width,
                           guint    height,
                           GError **error)
{
  TomoGpuGlHeadless *gl;
  int n_devices = 0;
  GLenum err;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (width == 0 || height == 0 || width > 16384 || height > 16384)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid headless texture size %u×%u (1…16384 per side)", width, height);
      return NULL;
    }
  if (cudaGetDeviceCount (&n_devices) != cudaSuccess || n_devices <= 0)
    {
      cudaGetLastError ();
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE,
                           "No CUDA device: interop needs one");
      return NULL;
    }

  gl = g_new0 (TomoGpuGlHeadless, 1);
  gl->display = EGL_NO_DISPLAY;
  gl->context = EGL_NO_CONTEXT;
  gl->device = -1;
  gl->width = width;
  gl->height = height;
  gl->egl_lib = dlopen ("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (gl->egl_lib == NULL)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                   "Cannot load libEGL.so.1: %s", dlerror ());
      tomo_gpu_gl_headless_close (gl);
      return NULL;
    }
  /* Optional: GLVND's libEGL resolves core GL through eglGetProcAddress. */
  gl->gl_lib = dlopen ("libOpenGL.so.0", RTLD_NOW | RTLD_LOCAL);

  if (!open_egl_context (gl, error) || !load_gl_functions (gl, error))
    {
      tomo_gpu_gl_headless_close (gl);
      return NULL;
    }
  gl->renderer = g_strdup_printf ("%s, OpenGL %s",
                                  (const char *) gl->get_string (GL_RENDERER),
                                  (const char *) gl->get_string (GL_VERSION));

  gl->gen_textures (1, &gl->texture);
  gl->bind_texture (GL_TEXTURE_2D, gl->texture);
  gl->tex_image_2d (GL_TEXTURE_2D, 0, GL_R32F, width, height, 0, GL_RED, GL_FLOAT, NULL);
  gl->tex_parameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  gl->tex_parameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  err = gl->get_error ();
  if (err != GL_NO_ERROR)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                   "Cannot create a %u×%u GL_R32F texture: GL error 0x%04x", width, height, err);
      tomo_gpu_gl_headless_close (gl);
      return NULL;
    }
  gl->registered = tomo_gpu_gl_texture_register (gl->texture, width, height, error);
  if (gl->registered == NULL)
    {
      tomo_gpu_gl_headless_close (gl);
      return NULL;
    }
  return gl;
}

int
tomo_gpu_gl_headless_get_device (TomoGpuGlHeadless *gl)
{
  g_return_val_if_fail (gl != NULL, -1);
  return gl->device;
}

const char *
tomo_gpu_gl_headless_get_renderer (TomoGpuGlHeadless *gl)
{
  g_return_val_if_fail (gl != NULL, NULL);
  return gl->renderer;
}

gboolean
tomo_gpu_gl_headless_show (TomoGpuGlHeadless  *gl,
                           const float        *device_src,
                           guint               width,
                           guint               height,
                           GError            **error)
{
  g_return_val_if_fail (gl != NULL, FALSE);

  if (!tomo_gpu_gl_texture_copy (gl->registered, device_src, width, height, 0, 0, error))
    return FALSE;
  /* The moment a draw could sample the texture: GL has seen the unmap and
   * finished everything before it. */
  gl->finish ();
  return TRUE;
}

gboolean
tomo_gpu_gl_headless_read (TomoGpuGlHeadless  *gl,
                           float              *host,
                           GError            **error)
{
  GLenum err;

  g_return_val_if_fail (gl != NULL, FALSE);
  g_return_val_if_fail (host != NULL, FALSE);

  gl->bind_texture (GL_TEXTURE_2D, gl->texture);
  gl->pixel_storei (GL_PACK_ALIGNMENT, 4);
  gl->get_tex_image (GL_TEXTURE_2D, 0, GL_RED, GL_FLOAT, host);
  err = gl->get_error ();
  if (err != GL_NO_ERROR)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                   "Cannot read back the %u×%u texture: GL error 0x%04x",
                   gl->width, gl->height, err);
      return FALSE;
    }
  return TRUE;
}

unsigned int
tomo_gpu_gl_headless_texture_3d_new (TomoGpuGlHeadless  *gl,
                                     guint               nx,
                                     guint               ny,
                                     guint               nz,
                                     gboolean            half,
                                     GError            **error)
{
  GLuint tex = 0;
  GLenum err;

  g_return_val_if_fail (gl != NULL, 0);

  gl->gen_textures (1, &tex);
  gl->bind_texture (GL_TEXTURE_3D, tex);
  gl->tex_image_3d (GL_TEXTURE_3D, 0, half ? GL_R16F : GL_R32F, nx, ny, nz, 0, GL_RED, GL_FLOAT,
                    NULL);
  gl->tex_parameteri (GL_TEXTURE_3D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  gl->tex_parameteri (GL_TEXTURE_3D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  err = gl->get_error ();
  if (err != GL_NO_ERROR)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                   "Cannot create a %u × %u × %u %s 3D texture: GL error 0x%04x", nx, ny, nz,
                   half ? "GL_R16F" : "GL_R32F", err);
      gl->delete_textures (1, &tex);
      return 0;
    }
  return tex;
}

gboolean
tomo_gpu_gl_headless_texture_3d_upload (TomoGpuGlHeadless  *gl,
                                        unsigned int        texture,
                                        guint               nx,
                                        guint               ny,
                                        guint               nz,
                                        const float        *host,
                                        GError            **error)
{
  GLenum err;

  g_return_val_if_fail (gl != NULL && host != NULL, FALSE);

  gl->bind_texture (GL_TEXTURE_3D, texture);
  gl->pixel_storei (GL_UNPACK_ALIGNMENT, 4);
  gl->tex_sub_image_3d (GL_TEXTURE_3D, 0, 0, 0, 0, nx, ny, nz, GL_RED, GL_FLOAT, host);
  gl->finish ();
  err = gl->get_error ();
  if (err != GL_NO_ERROR)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INTEROP,
                   "Cannot upload a %u × %u × %u volume into texture %u: GL error 0x%04x",
                   nx, ny, nz, texture, err);
      return FALSE;
    }
  return TRUE;
}

void
tomo_gpu_gl_headless_finish (TomoGpuGlHeadless *gl)
{
  g_return_if_fail (gl != NULL);
  gl->finish ();
}

void
tomo_gpu_gl_headless_texture_delete (TomoGpuGlHeadless *gl,
                                     unsigned int       texture)
{
  g_return_if_fail (gl != NULL);
  if (texture != 0)
    gl->delete_textures (1, &texture);
}

void
tomo_gpu_gl_headless_close (TomoGpuGlHeadless *gl)
{
  if (gl == NULL)
    return;
  /* Interop resources go before the GL objects they wrap. */
  g_clear_pointer (&gl->registered, tomo_gpu_gl_texture_unregister);
  if (gl->texture != 0 && gl->delete_textures != NULL)
    gl->delete_textures (1, &gl->texture);
  if (gl->context != EGL_NO_CONTEXT)
    {
      gl->make_current (gl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      gl->destroy_context (gl->display, gl->context);
    }
  if (gl->display != EGL_NO_DISPLAY)
    gl->terminate (gl->display);
  /* libEGL stays loaded: vendor libraries register atexit handlers that
   * must still find their code. */
  g_free (gl->renderer);
  g_free (gl);
}
