/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * CUDA–OpenGL interop without a display: a headless EGL context on the
 * NVIDIA device (EGL_EXT_platform_device), a GL_R32F texture written by
 * CUDA through tomo_gpu_gl_texture_copy(), read back by GL and compared bit
 * for bit with the slice downloaded from the device; the preview volume of
 * a GPU store into GL 3D textures (GL_R32F bit for bit, GL_R16F within half
 * rounding) through tomo_gpu_gl_volume_copy(), the backend's preview kept on
 * the device, and the refusals of wrong textures and sizes.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <epoxy/gl.h>

#include "tomo-backend.h"
#include "tomo-filter.h"
#include "tomo-gpu.h"
#include "tomo-gpu-gl.h"
#include "tomo-gpu-store.h"
#include "tomo-volume.h"

static int n_devices;
static TomoGpuGlHeadless *headless;
static int gl_cuda_device = -1;
static char *skip_reason;

/* The headless EGL context of tomo-gpu-gl.cu (the first EGL device whose GL
 * context CUDA can reach), current on this thread for every test. */
static void
setup_egl (void)
{
  g_autoptr(GError) error = NULL;

  if (n_devices == 0)
    {
      skip_reason = g_strdup ("no CUDA device: tomo_gpu_get_n_devices() returned 0");
      return;
    }
  headless = tomo_gpu_gl_headless_open (1, 1, &error);
  if (headless == NULL)
    {
      skip_reason = g_strdup_printf ("no headless GL context on a CUDA device: %s",
                                     error->message);
      return;
    }
  gl_cuda_device = tomo_gpu_gl_headless_get_device (headless);
  g_test_message ("%s on CUDA device %d", tomo_gpu_gl_headless_get_renderer (headless),
                  gl_cuda_device);
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

/* The n texels of `tex`, a texture of `target`, as floats. */
static float *
read_texture (GLenum target,
              GLuint tex,
              gsize  n)
{
  float *out = g_new (float, n);

  glBindTexture (target, tex);
  glPixelStorei (GL_PACK_ALIGNMENT, 4);
  glGetTexImage (target, 0, GL_RED, GL_FLOAT, out);
  g_assert_cmpint (glGetError (), ==, GL_NO_ERROR);
  return out;
}

static gpointer
get_device_thread (gpointer data)
{
  int dev = -1;

  return GINT_TO_POINTER (tomo_gpu_gl_get_device (&dev));
}

static void
test_no_context (void)
{
  /* Must never crash: without a current GL context (a thread of its own:
   * the headless context is current on this one only), or without CUDA,
   * there is no interop device. */
  g_assert_false (GPOINTER_TO_INT (g_thread_join (g_thread_new ("no-context",
                                                                get_device_thread, NULL))));
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

  back = read_texture (GL_TEXTURE_2D, tex, (gsize) TW * TH);
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

/* --- the preview volume into 3D textures --------------------------------- */

#define STORE_W 192
#define STORE_P 180
#define STORE_R 40

static gboolean
read_random_row (guint    row,
                 float   *sino,
                 gpointer user_data,
                 GError **error)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (1000 + row);

  for (guint i = 0; i < STORE_W * STORE_P; i++)
    sino[i] = (float) g_rand_double_range (rand, 0.0, 1.0);
  return TRUE;
}

/* A filled GPU store of random rows: its previews are device volumes of
 * any size with values that are not round numbers. */
static TomoGpuStore *
random_store (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree double *angles = g_new (double, STORE_P);
  g_autofree double *response = NULL;
  TomoGpuStore *store;
  guint padded;

  for (guint i = 0; i < STORE_P; i++)
    angles[i] = G_PI * i / STORE_P;
  store = tomo_gpu_store_new (gl_cuda_device, STORE_W, STORE_P, angles, 0, STORE_R,
                              TOMO_GPU_STORE_FLOAT, 0, &error);
  g_assert_no_error (error);
  response = tomo_filter_fbp_response (TOMO_FILTER_RAMLAK, STORE_W, STORE_P, &padded);
  g_assert_true (tomo_gpu_store_set_filter (store, padded, response, 1, &error));
  g_assert_true (tomo_gpu_store_fill (store, read_random_row, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  return store;
}

static GLuint
make_texture_3d (guint  nx,
                 guint  ny,
                 guint  nz,
                 GLenum format)
{
  GLuint tex = 0;

  glGenTextures (1, &tex);
  glBindTexture (GL_TEXTURE_3D, tex);
  glTexImage3D (GL_TEXTURE_3D, 0, format, nx, ny, nz, 0, GL_RED, GL_FLOAT, NULL);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  g_assert_cmpint (glGetError (), ==, GL_NO_ERROR);
  return tex;
}

/* Texels that are not `want` as the texture's format holds it: bit for bit
 * for float; for half the nearest half, so within half a unit in the last
 * place (2^-11 relative for normal halves, 2^-25 absolute below them). */
static guint
count_mismatches (const float *got,
                  const float *want,
                  gsize        n,
                  gboolean     half,
                  guint       *n_rounded)
{
  guint bad = 0;

  *n_rounded = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (!half)
        {
          bad += memcmp (&got[i], &want[i], sizeof (float)) != 0;
          continue;
        }
      double err = fabs ((double) got[i] - want[i]);
      /* Half a unit in the last place of the half binade of want[i]. */
      double bound = fabs (want[i]) >= 6.103515625e-05 ? ldexp (1.0, ilogb (want[i]) - 11) : 0x1p-25;

      *n_rounded += got[i] != want[i];
      bad += !(err <= bound);
    }
  return bad;
}

typedef struct
{
  guint nx, ny, nz;
  gboolean half;
} VolumeCase;

static void
test_copy_volume (gconstpointer data)
{
  const VolumeCase *c = data;
  g_autoptr(GError) error = NULL;
  gsize n = (gsize) c->nx * c->ny * c->nz;
  g_autofree float *want = g_new (float, n);
  g_autofree float *got = NULL;
  TomoGpuPreview pv = { c->nx, c->ny, c->nz, 2, 1 };
  TomoGpuStore *store;
  TomoGpuGlVolume *reg;
  GLuint tex;
  guint bad, rounded;
  gint64 t0;

  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  store = random_store ();
  g_assert_true (tomo_gpu_store_preview (store, &pv, (STORE_W - 1) / 2.0 + 0.7, 1, &error));
  g_assert_no_error (error);
  g_assert_true (tomo_gpu_store_download (store, want, &error));
  g_assert_no_error (error);

  tex = make_texture_3d (c->nx, c->ny, c->nz, c->half ? GL_R16F : GL_R32F);
  reg = tomo_gpu_gl_volume_register (tex, c->nx, c->ny, c->nz, c->half, &error);
  g_assert_no_error (error);
  g_assert_nonnull (reg);
  t0 = g_get_monotonic_time ();
  g_assert_true (tomo_gpu_gl_volume_copy (reg, tomo_gpu_store_get_output (store), c->nx, c->ny,
                                          c->nz, &error));
  g_assert_no_error (error);
  glFinish ();
  g_test_message ("copy of %u × %u × %u into GL_R%uF and glFinish: %.3f ms (first copy)",
                  c->nx, c->ny, c->nz, c->half ? 16 : 32, (g_get_monotonic_time () - t0) / 1e3);

  /* Another size than registered: refused, nothing written. */
  g_assert_false (tomo_gpu_gl_volume_copy (reg, tomo_gpu_store_get_output (store), c->nx,
                                           c->ny, c->nz + 1, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (tomo_gpu_gl_volume_copy (reg, NULL, c->nx, c->ny, c->nz, &error));
  g_assert_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID);
  g_clear_error (&error);

  got = read_texture (GL_TEXTURE_3D, tex, n);
  bad = count_mismatches (got, want, n, c->half, &rounded);
  g_test_message ("%u mismatches of %zu texels (%u rounded to half)", bad, n, rounded);
  g_assert_cmpuint (bad, ==, 0);
  /* Half really is half: random values do not all survive the rounding. */
  if (c->half)
    g_assert_cmpuint (rounded, >, n / 2);

  tomo_gpu_gl_volume_unregister (reg);
  glDeleteTextures (1, &tex);
  tomo_gpu_store_free (store);
}

/* Registering `tex` as an nx × ny × nz volume is refused: an error of the
 * GPU domain (of `code`, unless it is -1), logged after `what`. */
static void
assert_register_refused (GLuint      tex,
                         guint       nx,
                         guint       ny,
                         guint       nz,
                         gboolean    half,
                         int         code,
                         const char *what)
{
  g_autoptr(GError) error = NULL;

  g_assert_null (tomo_gpu_gl_volume_register (tex, nx, ny, nz, half, &error));
  g_assert_nonnull (error);
  g_assert_true (error->domain == TOMO_GPU_ERROR);
  if (code != -1)
    g_assert_error (error, TOMO_GPU_ERROR, code);
  g_test_message ("%s: %s", what, error->message);
}

static void
test_volume_errors (void)
{
  GLuint tex3d, tex2d, unused = 0;

  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  assert_register_refused (0, 8, 8, 8, TRUE, TOMO_GPU_ERROR_INVALID, "no texture");
  /* A name GL never made, and one made but never given storage. */
  assert_register_refused (987654, 8, 8, 8, TRUE, -1, "unknown texture");
  glGenTextures (1, &unused);
  assert_register_refused (unused, 8, 8, 8, TRUE, -1, "texture without storage");
  glGetError ();

  /* A 2D texture is no volume of 4 slices (the driver registers it as one
   * of depth 1: seen on the H100, and a copy of 16 × 16 × 1 stays inside). */
  tex2d = make_texture (16, 16, 0.0f);
  assert_register_refused (tex2d, 16, 16, 4, FALSE, -1, "2D texture as 16 × 16 × 4");
  glGetError ();

  /* The size or the format GL has is not the one asked for. */
  tex3d = make_texture_3d (67, 45, 30, GL_R16F);
  assert_register_refused (tex3d, 67, 45, 31, TRUE, TOMO_GPU_ERROR_INVALID, "size mismatch");
  assert_register_refused (tex3d, 67, 45, 30, FALSE, TOMO_GPU_ERROR_INVALID, "format mismatch");

  glDeleteTextures (1, &tex3d);
  glDeleteTextures (1, &tex2d);
  glDeleteTextures (1, &unused);
  g_assert_cmpint (glGetError (), ==, GL_NO_ERROR);
}

/* The backend's preview left on the device (keep_on_device) is the volume
 * it would download, and reaches the 3D pane's texture format; the range
 * computed on the device is that of the downloaded values. */
static void
test_backend_preview_kept (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  g_autoptr(TomoVolume) vol = NULL;
  g_autofree float *want = NULL, *got = NULL;
  const TomoDeviceBufferOps *ops;
  TomoReconParams params;
  TomoPreviewRequest keep, host;
  TomoGpuGlVolume *reg;
  float lo = G_MAXFLOAT, hi = -G_MAXFLOAT;
  guint bad, rounded, nx, ny, nz;
  GLuint tex;
  gsize n;
  int device = -1;

  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  g_assert_nonnull (sample);   /* set by meson and tests/run-on-gpu.sh */
  scan = tomo_scan_open (sample, NULL, &error);
  g_assert_no_error (error);
  tomo_recon_params_init (&params, tomo_scan_get_width (scan));
  vol = tomo_volume_new (scan, 0, tomo_scan_get_height (scan), &params, TOMO_BACKEND_GPU, 0,
                         &error);
  g_assert_no_error (error);
  g_assert_true (tomo_volume_fill (vol, NULL, NULL, NULL, &error));
  g_assert_no_error (error);

  nx = ny = MIN (tomo_scan_get_width (scan), 128);
  nz = MIN (tomo_scan_get_height (scan), 128);
  n = (gsize) nx * ny * nz;
  keep = (TomoPreviewRequest) { nx, ny, nz, params.center, TOMO_INTERP_LINEAR };
  keep.keep_on_device = TRUE;
  g_assert_true (tomo_volume_preview (vol, &keep, &error));
  g_assert_no_error (error);
  g_assert_nonnull (keep.device_buffer);
  ops = keep.device_ops;
  want = g_new (float, n);
  host = (TomoPreviewRequest) { nx, ny, nz, params.center, TOMO_INTERP_LINEAR, want };
  g_assert_true (tomo_volume_preview (vol, &host, &error));
  g_assert_no_error (error);
  g_assert_null (host.device_buffer);
  for (gsize i = 0; i < n; i++)
    {
      lo = MIN (lo, want[i]);
      hi = MAX (hi, want[i]);
    }
  g_test_message ("preview %u × %u × %u: range on the device %g … %g, of the download %g … %g",
                  nx, ny, nz, keep.min, keep.max, lo, hi);
  g_assert_cmpfloat (keep.min, ==, lo);
  g_assert_cmpfloat (keep.max, ==, hi);
  g_assert_cmpfloat (host.min, ==, lo);
  g_assert_cmpfloat (host.max, ==, hi);

  for (guint half = 0; half < 2; half++)
    {
      tex = make_texture_3d (nx, ny, nz, half ? GL_R16F : GL_R32F);
      reg = tomo_gpu_gl_volume_register (tex, nx, ny, nz, half, &error);
      g_assert_no_error (error);
      g_assert_true (tomo_gpu_gl_volume_copy (reg, ops->data (keep.device_buffer, &device), nx,
                                              ny, nz, &error));
      g_assert_no_error (error);
      g_assert_cmpint (device, ==, gl_cuda_device);
      got = read_texture (GL_TEXTURE_3D, tex, n);
      bad = count_mismatches (got, want, n, half, &rounded);
      g_test_message ("kept preview into GL_R%uF: %u mismatches of %zu texels", half ? 16 : 32,
                      bad, n);
      g_assert_cmpuint (bad, ==, 0);
      g_clear_pointer (&got, g_free);
      tomo_gpu_gl_volume_unregister (reg);
      glDeleteTextures (1, &tex);
    }
  ops->free (keep.device_buffer);
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
  {
    static const VolumeCase cases[] = {
      { 67, 45, 31, FALSE }, { 67, 45, 31, TRUE }, { 256, 256, 256, FALSE }, { 256, 256, 256, TRUE },
    };

    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        g_autofree char *name = g_strdup_printf ("/tomo/gpu/gl/copy-volume/%ux%ux%u-%s",
                                                 cases[i].nx, cases[i].ny, cases[i].nz,
                                                 cases[i].half ? "r16f" : "r32f");

        g_test_add_data_func (name, &cases[i], test_copy_volume);
      }
  }
  g_test_add_func ("/tomo/gpu/gl/volume-errors", test_volume_errors);
  g_test_add_func ("/tomo/gpu/gl/backend-preview-kept", test_backend_preview_kept);
  ret = g_test_run ();

  tomo_gpu_gl_headless_close (headless);
  g_free (skip_reason);
  return ret;
}
