/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * CUDA–OpenGL interop without a display: a headless EGL context on the
 * NVIDIA device (EGL_EXT_platform_device), a GL_R32F texture written by
 * CUDA through tomo_gpu_gl_texture_copy(), read back by GL and compared bit
 * for bit with the slice downloaded from the device.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <epoxy/gl.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>

#include "tomo-filter.h"
#include "tomo-gpu.h"
#include "tomo-gpu-gl.h"

static int n_devices;
static EGLDisplay egl_display = EGL_NO_DISPLAY;
static EGLContext egl_context = EGL_NO_CONTEXT;
static int gl_cuda_device = -1;
static const char *skip_reason;

static gboolean
has_extension (const char *list,
               const char *name)
{
  gsize len = strlen (name);

  for (const char *p = list; p && (p = strstr (p, name)); p += len)
    if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
      return TRUE;
  return FALSE;
}

/* Walks the EGL devices and keeps the first whose GL context CUDA can reach. */
static void
setup_egl (void)
{
  PFNEGLQUERYDEVICESEXTPROC query_devices;
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display;
  EGLDeviceEXT devices[16];
  EGLint n = 0;

  if (n_devices == 0)
    {
      skip_reason = "no CUDA device: tomo_gpu_get_n_devices() returned 0";
      return;
    }
  query_devices = (PFNEGLQUERYDEVICESEXTPROC) eglGetProcAddress ("eglQueryDevicesEXT");
  get_platform_display = (PFNEGLGETPLATFORMDISPLAYEXTPROC) eglGetProcAddress ("eglGetPlatformDisplayEXT");
  if (query_devices == NULL || get_platform_display == NULL ||
      !query_devices (G_N_ELEMENTS (devices), devices, &n) || n == 0)
    {
      skip_reason = "no EGL device (EGL_EXT_device_enumeration missing or no devices)";
      return;
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

      if (dpy == EGL_NO_DISPLAY || !eglInitialize (dpy, NULL, NULL))
        continue;
      if (!has_extension (eglQueryString (dpy, EGL_EXTENSIONS), "EGL_KHR_surfaceless_context") ||
          !eglBindAPI (EGL_OPENGL_API) ||
          !eglChooseConfig (dpy, config_attribs, &config, 1, &n_configs) || n_configs == 0)
        {
          eglTerminate (dpy);
          continue;
        }
      ctx = eglCreateContext (dpy, config, EGL_NO_CONTEXT, context_attribs);
      if (ctx == EGL_NO_CONTEXT ||
          !eglMakeCurrent (dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx))
        {
          if (ctx != EGL_NO_CONTEXT)
            eglDestroyContext (dpy, ctx);
          eglTerminate (dpy);
          continue;
        }
      if (tomo_gpu_gl_get_device (&dev))
        {
          egl_display = dpy;
          egl_context = ctx;
          gl_cuda_device = dev;
          g_test_message ("EGL device %d: %s, GL %s on CUDA device %d", i,
                          (const char *) glGetString (GL_RENDERER),
                          (const char *) glGetString (GL_VERSION), dev);
          return;
        }
      eglMakeCurrent (dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext (dpy, ctx);
      eglTerminate (dpy);
    }
  skip_reason = "no EGL device whose OpenGL context runs on a CUDA device";
}

static GLuint
make_texture (guint width,
              guint height,
              float fill)
{
  GLuint tex = 0;
  g_autofree float *init = g_new (float, (gsize) width * height);

  for (gsize i = 0; i < (gsize) width * height; i++)
    init[i] = fill;
  glGenTextures (1, &tex);
  glBindTexture (GL_TEXTURE_2D, tex);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D (GL_TEXTURE_2D, 0, GL_R32F, width, height, 0, GL_RED, GL_FLOAT, init);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  g_assert_cmpint (glGetError (), ==, GL_NO_ERROR);
  return tex;
}

static float *
read_texture (GLuint tex,
              guint  width,
              guint  height)
{
  float *out = g_new (float, (gsize) width * height);

  glBindTexture (GL_TEXTURE_2D, tex);
  glPixelStorei (GL_PACK_ALIGNMENT, 4);
  glGetTexImage (GL_TEXTURE_2D, 0, GL_RED, GL_FLOAT, out);
  g_assert_cmpint (glGetError (), ==, GL_NO_ERROR);
  return out;
}

static void
test_no_context (void)
{
  int dev = -1;

  /* Must never crash: without a current GL context (or without CUDA) there
   * is no interop device. */
  if (egl_context != EGL_NO_CONTEXT)
    eglMakeCurrent (egl_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  g_assert_false (tomo_gpu_gl_get_device (&dev));
  if (egl_context != EGL_NO_CONTEXT)
    g_assert_true (eglMakeCurrent (egl_display, EGL_NO_SURFACE, EGL_NO_SURFACE, egl_context));
}

static void
test_copy_slice (void)
{
  g_autoptr(GError) error = NULL;
  const guint W = 300, N = 120, TW = 512, TH = 400;
  const guint dst_x = 37, dst_y = 61;
  guint padded = tomo_filter_padded_width (W);
  g_autofree double *angles = g_new (double, N);
  g_autofree double *resp = g_new (double, padded / 2 + 1);
  g_autofree float *sinos = g_new (float, (gsize) N * W);
  g_autofree float *slice = g_new (float, (gsize) W * W);
  g_autofree float *back = NULL;
  g_autoptr(GRand) rand = g_rand_new_with_seed (11);
  TomoGpuBackprojectParams params;
  TomoGpuContext *ctx;
  TomoGpuGlTexture *reg;
  GLuint tex;
  guint mismatches = 0;

  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  for (guint i = 0; i < N; i++)
    angles[i] = G_PI * i / N;
  for (gsize i = 0; i < (gsize) N * W; i++)
    sinos[i] = (float) g_rand_double_range (rand, 0.0, 1.0);
  tomo_filter_response (TOMO_FILTER_RAMLAK, padded, tomo_fbp_scale (N) / padded, resp);

  ctx = tomo_gpu_context_new (gl_cuda_device, &error);
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_context_set_geometry (ctx, W, N, angles, &error));
  g_assert_true (tomo_gpu_context_set_filter (ctx, padded, resp, 0, &error));
  g_assert_true (tomo_gpu_context_load_sinograms (ctx, 1, sinos, &error));
  tomo_gpu_backproject_params_init (&params);
  params.center = (W - 1) / 2.0 + 1.25;
  g_assert_true (tomo_gpu_context_backproject (ctx, &params, &error));
  g_assert_true (tomo_gpu_context_download (ctx, slice, &error));
  g_assert_no_error (error);

  /* A texture larger than the slice, with a sentinel, so that an offset or
   * pitch mistake shows as well as a wrong value. */
  tex = make_texture (TW, TH, -7.0f);
  reg = tomo_gpu_gl_texture_register (tex, TW, TH, &error);
  g_assert_no_error (error);
  g_assert_nonnull (reg);
  g_assert_true (tomo_gpu_gl_texture_copy (reg, tomo_gpu_context_get_output (ctx), W, W,
                                           dst_x, dst_y, &error));
  g_assert_no_error (error);
  /* Out of the texture: refused, nothing written. */
  g_assert_false (tomo_gpu_gl_texture_copy (reg, tomo_gpu_context_get_output (ctx), W, W,
                                            TW - 10, 0, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_clear_error (&error);

  back = read_texture (tex, TW, TH);
  for (guint y = 0; y < TH; y++)
    for (guint x = 0; x < TW; x++)
      {
        float got = back[(gsize) y * TW + x];
        gboolean inside = x >= dst_x && x < dst_x + W && y >= dst_y && y < dst_y + W;
        float want = inside ? slice[(gsize) (y - dst_y) * W + (x - dst_x)] : -7.0f;

        if (memcmp (&got, &want, sizeof (float)) != 0)
          mismatches++;
      }
  g_test_message ("%u mismatches of %u texels", mismatches, TW * TH);
  g_assert_cmpuint (mismatches, ==, 0);

  tomo_gpu_gl_texture_unregister (reg);
  glDeleteTextures (1, &tex);
  tomo_gpu_context_free (ctx);
}

int
main (int    argc,
      char **argv)
{
  int ret;

  g_test_init (&argc, &argv, NULL);
  n_devices = tomo_gpu_get_n_devices ();
  setup_egl ();

  g_test_add_func ("/tomo/gpu/gl/no-context", test_no_context);
  g_test_add_func ("/tomo/gpu/gl/copy-slice", test_copy_slice);
  ret = g_test_run ();

  if (egl_context != EGL_NO_CONTEXT)
    {
      eglMakeCurrent (egl_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      eglDestroyContext (egl_display, egl_context);
      eglTerminate (egl_display);
    }
  return ret;
}
