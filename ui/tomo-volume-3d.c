/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The 3D pane of the three-view layout: an orthographic ray caster over a
 * 3D texture (half floats, linear filtering) in one fragment shader;
 * maximum intensity projection or alpha compositing, through the window and
 * the colour map the slice views use; the slice planes drawn inside.
 */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <epoxy/gl.h>
#include <math.h>
#include <string.h>

#include "tomo-backend.h"
#include "tomo-gl.h"
#include "tomo-gpu-gl.h"
#include "tomo-ui-private.h"
#include "tomo-volume-3d.h"

struct _TomoVolume3d
{
  GtkGLArea parent_instance;

  guint16 *half;            /* the volume, kept for a new realize */
  gpointer device;          /* or the volume on the device (device_ops), likewise */
  const TomoDeviceBufferOps *device_ops;
  gboolean upload;          /* half or device not in the texture yet */
  gboolean interop;         /* the GL context runs on a CUDA device */
  int gl_device;            /* that device */
  guint interop_failures;   /* in a row */
  TomoGpuGlVolume *cuda_texture;  /* the texture registered for its current size */
  const char *upload_path;
  guint nx, ny, nz;         /* of the data waiting or uploaded */
  guint tex_nx, tex_ny, tex_nz;
  double extent[3];
  double lo, hi;
  double yaw, pitch, drag_yaw, drag_pitch;
  double planes[3];         /* fractions; outside [0, 1]: not drawn */
  TomoVolume3dMode mode;
  TomoColormap colormap;
  gboolean lut_dirty;
  gboolean have_volume;
  gboolean probe;
  guint n_frames;
  TomoVolume3dStats stats;

  gboolean interactive;     /* turning: rays cast at half resolution, scaled up */
  GLuint fbo, fbo_texture;
  int fbo_w, fbo_h;

  GLuint program, vao, texture, lut_texture;
  GLint u_rot, u_box, u_window, u_aspect, u_pixel, u_radius, u_steps, u_mode, u_planes, u_volume, u_lut;
};

G_DEFINE_FINAL_TYPE (TomoVolume3d, tomo_volume_3d, GTK_TYPE_GL_AREA)

static const char vertex_src[] =
  "out vec2 p;\n"
  "void main () {\n"
  "  vec2 v = vec2 (float ((gl_VertexID << 1) & 2), float (gl_VertexID & 2));\n"
  "  p = v * 2.0 - 1.0;\n"
  "  gl_Position = vec4 (p, 0.0, 1.0);\n"
  "}\n";

/* Rays along the view's z through the box [−box, box] turned by rot,
 * `steps` samples between the faces they cross (two per voxel along the
 * volume's diagonal); the box's diagonal spans the pane's
 * shorter side, whichever way it is turned.  Texture s, t, r = x, y and the
 * detector row (row 0 at the top of the box).  mode 0: the largest value
 * along the ray through the window and the colour map; mode 1: front to
 * back compositing, each step's opacity 1 − exp(−density · g² · dt) for g
 * the value through the window (0 below its minimum: transparent), its
 * colour the colour map's at g.  Met on the way, in depth order: the box's
 * edges (grey) and the three planes' outlines and the lines where they
 * cross (the colours of the slice views' cross-hairs: YZ cyan, XZ yellow,
 * XY magenta). */
static const char fragment_src[] =
  "in vec2 p;\n"
  "out vec4 colour;\n"
  "uniform highp sampler3D volume;\n"
  "uniform highp sampler2D lut;\n"
  "uniform mat3 rot;\n"
  "uniform vec3 box;\n"
  "uniform vec2 window;\n"
  "uniform float aspect;\n"
  "uniform float pixel;\n"
  "uniform float radius;\n"
  "uniform int mode;\n"
  "uniform vec3 planes;\n"
  "uniform int steps;\n"
  "const vec3 bg = vec3 (0.12, 0.12, 0.13);\n"
  "const float density = 10.0;\n"
  "float norm (float v) {\n"
  "  return clamp ((v - window.x) / max (window.y - window.x, 1e-30), 0.0, 1.0);\n"
  "}\n"
  "vec3 cmap (float g) { return texelFetch (lut, ivec2 (int (g * 255.0 + 0.5), 0), 0).rgb; }\n"
  "void blend (inout vec4 acc, vec3 c, float a) {\n"
  "  acc.rgb += (1.0 - acc.a) * a * c;\n"
  "  acc.a += (1.0 - acc.a) * a;\n"
  "}\n"
  "bool on_edge (vec3 h, float w) {\n"
  "  vec3 e = step (box - abs (h), vec3 (w));\n"
  "  return e.x + e.y + e.z >= 2.0;\n"
  "}\n"
  "void main () {\n"
  "  const vec3 pcol[3] = vec3[3] (vec3 (0.0, 0.9, 1.0), vec3 (1.0, 0.85, 0.0),\n"
  "                                vec3 (1.0, 0.0, 1.0));\n"
  "  vec2 q = p * (aspect > 1.0 ? vec2 (aspect, 1.0) : vec2 (1.0, 1.0 / aspect)) * radius;\n"
  "  vec3 o = rot * vec3 (q, -2.0), d = rot * vec3 (0.0, 0.0, 1.0);\n"
  "  vec3 inv = 1.0 / (d + vec3 (1e-9));\n"
  "  vec3 t0 = (-box - o) * inv, t1 = (box - o) * inv;\n"
  "  vec3 tmin = min (t0, t1), tmax = max (t0, t1);\n"
  "  float a = max (max (tmin.x, tmin.y), tmin.z), b = min (min (tmax.x, tmax.y), tmax.z);\n"
  "  if (b <= a) { colour = vec4 (bg, 1.0); return; }\n"
  "  float w = 1.5 * pixel;\n"
  "  vec3 th = vec3 (-1e30), pa = vec3 (0.0);\n"
  "  for (int k = 0; k < 3; k++) {\n"
  "    if (abs (d[k]) < 1e-6 || abs (planes[k]) > box[k]) continue;\n"
  "    float t = (planes[k] - o[k]) / d[k];\n"
  "    if (t < a || t > b) continue;\n"
  "    vec3 h = o + t * d;\n"
  "    int j = (k + 1) % 3, l = (k + 2) % 3;\n"
  "    float e = min (box[j] - abs (h[j]), box[l] - abs (h[l]));\n"
  "    float x = min (abs (planes[j]) <= box[j] ? abs (h[j] - planes[j]) : 1e9,\n"
  "                   abs (planes[l]) <= box[l] ? abs (h[l] - planes[l]) : 1e9);\n"
  "    th[k] = t;\n"
  "    pa[k] = e < w ? 1.0 : x < 0.5 * w ? 0.7 : 0.0;\n"
  "  }\n"
  "  vec4 acc = vec4 (0.0);\n"
  "  if (on_edge (o + a * d, w)) blend (acc, vec3 (0.8), 0.7);\n"
  "  float dt = (b - a) / float (steps), m = -1e30;\n"
  "  for (int i = 0; i < steps; i++) {\n"
  "    float ta = a + dt * float (i);\n"
  "    for (int k = 0; k < 3; k++)\n"
  "      if (pa[k] > 0.0 && th[k] >= ta && th[k] < ta + dt) blend (acc, pcol[k], pa[k]);\n"
  "    vec3 s = (o + (ta + 0.5 * dt) * d) / (2.0 * box) + 0.5;\n"
  "    float v = texture (volume, s).r;\n"
  "    if (mode == 0) { m = max (m, v); continue; }\n"
  "    float g = norm (v);\n"
  "    blend (acc, cmap (g), 1.0 - exp (-density * g * g * dt));\n"
  "    if (acc.a > 0.995) break;\n"
  "  }\n"
  "  if (on_edge (o + b * d, w)) blend (acc, vec3 (0.8), 0.4);\n"
  "  vec3 under = mode == 0 ? cmap (norm (m)) : bg;\n"
  "  colour = vec4 (acc.rgb + (1.0 - acc.a) * under, 1.0);\n"
  "}\n";

static void
tomo_volume_3d_realize (GtkWidget *widget)
{
  TomoVolume3d *self = TOMO_VOLUME_3D (widget);
  GError *error = NULL;

  GTK_WIDGET_CLASS (tomo_volume_3d_parent_class)->realize (widget);
  gtk_gl_area_make_current (GTK_GL_AREA (self));
  if (gtk_gl_area_get_error (GTK_GL_AREA (self)) != NULL)
    return;
  self->program = tomo_gl_program_new (vertex_src, "the volume ray caster",
                                       fragment_src, "the volume ray caster",
                                       NULL, "the volume ray caster", &error);
  if (self->program == 0)
    {
      gtk_gl_area_set_error (GTK_GL_AREA (self), error);
      g_error_free (error);
      return;
    }
  self->u_rot = glGetUniformLocation (self->program, "rot");
  self->u_box = glGetUniformLocation (self->program, "box");
  self->u_window = glGetUniformLocation (self->program, "window");
  self->u_aspect = glGetUniformLocation (self->program, "aspect");
  self->u_pixel = glGetUniformLocation (self->program, "pixel");
  self->u_radius = glGetUniformLocation (self->program, "radius");
  self->u_steps = glGetUniformLocation (self->program, "steps");
  self->u_mode = glGetUniformLocation (self->program, "mode");
  self->u_planes = glGetUniformLocation (self->program, "planes");
  self->u_volume = glGetUniformLocation (self->program, "volume");
  self->u_lut = glGetUniformLocation (self->program, "lut");
  glGenVertexArrays (1, &self->vao);
  self->texture = tomo_gl_texture_new (GL_TEXTURE_3D, GL_LINEAR);
  self->lut_texture = tomo_gl_texture_new (GL_TEXTURE_2D, GL_NEAREST);
  self->lut_dirty = TRUE;
  self->tex_nx = self->tex_ny = self->tex_nz = 0;
  self->gl_device = -1;
  self->interop = tomo_gpu_gl_get_device (&self->gl_device);
}

static void
tomo_volume_3d_unrealize (GtkWidget *widget)
{
  TomoVolume3d *self = TOMO_VOLUME_3D (widget);

  gtk_gl_area_make_current (GTK_GL_AREA (self));
  if (gtk_gl_area_get_error (GTK_GL_AREA (self)) == NULL)
    {
      /* CUDA lets go of the texture before GL deletes it. */
      g_clear_pointer (&self->cuda_texture, tomo_gpu_gl_volume_unregister);
      /* GL passes over names that are 0 (never made). */
      glDeleteTextures (3, (GLuint[]) { self->texture, self->lut_texture, self->fbo_texture });
      glDeleteFramebuffers (1, &self->fbo);
      glDeleteVertexArrays (1, &self->vao);
      glDeleteProgram (self->program);
    }
  self->texture = self->lut_texture = self->vao = self->program = 0;
  self->fbo = self->fbo_texture = 0;
  self->fbo_w = self->fbo_h = 0;
  /* A new realize uploads the volume again. */
  self->have_volume = FALSE;
  self->upload = self->half != NULL || self->device != NULL;
  self->interop = FALSE;
  GTK_WIDGET_CLASS (tomo_volume_3d_parent_class)->unrealize (widget);
}

/* The last frame read back (w × h RGBA, bottom row first). */
static void
probe_frame (TomoVolume3d *self,
             int           w,
             int           h)
{
  static const guint8 outline[3][3] = { { 255, 0, 255 }, { 255, 217, 0 }, { 0, 230, 255 } };
  g_autofree guint8 *px = g_malloc ((gsize) w * h * 4);
  double sum[3] = { 0 }, sq = 0, chroma = 0;
  gsize n = (gsize) w * h;

  memset (&self->stats, 0, sizeof self->stats);
  glPixelStorei (GL_PACK_ALIGNMENT, 4);
  glReadPixels (0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px);
  for (gsize i = 0; i < n; i++)
    {
      const guint8 *c = px + 4 * i;
      double grey = (c[0] + c[1] + c[2]) / 3.0;

      for (guint k = 0; k < 3; k++)
        sum[k] += c[k];
      sq += grey * grey;
      chroma += MAX (MAX (c[0], c[1]), c[2]) - MIN (MIN (c[0], c[1]), c[2]);
      for (guint k = 0; k < 3; k++)
        if (ABS (c[0] - outline[k][0]) <= 30 && ABS (c[1] - outline[k][1]) <= 30
            && ABS (c[2] - outline[k][2]) <= 30)
          {
            self->stats.n_plane_pixels[k]++;
            /* GL's rows are bottom first. */
            self->stats.plane_y[k] += 1.0 - (i / w + 0.5) / h;
          }
    }
  for (guint k = 0; k < 3; k++)
    if (self->stats.n_plane_pixels[k] > 0)
      self->stats.plane_y[k] /= self->stats.n_plane_pixels[k];
  for (guint k = 0; k < 3; k++)
    self->stats.mean[k] = sum[k] / n;
  self->stats.mean_grey = (sum[0] + sum[1] + sum[2]) / (3.0 * n);
  self->stats.stddev_grey = sqrt (MAX (sq / n - self->stats.mean_grey * self->stats.mean_grey, 0));
  self->stats.chroma = chroma / n;
  self->stats.n_pixels = n;
}

static guint signal_upload_path_changed;

/* How the volume reached the texture; the view's title follows it. */
static void
set_upload_path (TomoVolume3d *self,
                 const char   *path)
{
  if (g_strcmp0 (self->upload_path, path) == 0)
    return;
  self->upload_path = path;
  g_signal_emit (self, signal_upload_path_changed, 0);
}

/* The device volume through interop into the bound texture (GL_R16F of its
 * size); FALSE and the reason when that is not possible. */
static gboolean
copy_device (TomoVolume3d *self,
             GError      **error)
{
  const float *data;
  int device = -1;

  if (!self->interop)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "The GL context does not run on a CUDA device");
      return FALSE;
    }
  data = self->device_ops->data (self->device, &device);
  if (device != self->gl_device)
    {
      /* No peer access is set up between devices: never read across. */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "The volume is on CUDA device %d, the GL context on device %d", device,
                   self->gl_device);
      return FALSE;
    }
  if (self->cuda_texture == NULL)
    self->cuda_texture = tomo_gpu_gl_volume_register (self->texture, self->nx, self->ny,
                                                      self->nz, TRUE, error);
  return self->cuda_texture != NULL &&
         tomo_gpu_gl_volume_copy (self->cuda_texture, data, self->nx, self->ny, self->nz, error);
}

/* The waiting volume into the texture: a device volume through CUDA–GL
 * interop, or downloaded when that fails; half floats uploaded. */
static void
upload_volume (TomoVolume3d *self)
{
  gboolean same = self->nx == self->tex_nx && self->ny == self->tex_ny
                  && self->nz == self->tex_nz;

  if (!same)
    {
      /* A new size: new storage, registered anew. */
      g_clear_pointer (&self->cuda_texture, tomo_gpu_gl_volume_unregister);
      glTexImage3D (GL_TEXTURE_3D, 0, GL_R16F, self->nx, self->ny, self->nz, 0, GL_RED,
                    GL_HALF_FLOAT, NULL);
      self->tex_nx = self->nx;
      self->tex_ny = self->ny;
      self->tex_nz = self->nz;
    }
  self->upload = FALSE;
  if (self->device != NULL)
    {
      g_autoptr (GError) error = NULL;
      g_autofree float *host = NULL;

      if (copy_device (self, &error))
        {
          set_upload_path (self, "CUDA–GL interop");
          self->interop_failures = 0;
          self->have_volume = TRUE;
          return;
        }
      /* Not possible here (another device, no CUDA context): uploads from
       * now on, the view asks get_interop().  Another failure (say, out of
       * memory while registering): this volume downloaded, the next one
       * tried again; a second failure in a row ends interop too. */
      g_message ("3D preview: CUDA–GL interop not possible (%s); downloading the volume",
                 error->message);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED) ||
          ++self->interop_failures >= 2)
        self->interop = FALSE;
      g_clear_pointer (&self->cuda_texture, tomo_gpu_gl_volume_unregister);
      host = g_new (float, (gsize) self->nx * self->ny * self->nz);
      if (!self->device_ops->download (self->device, host))
        {
          /* Nothing to show: the texture may just have been re-specified. */
          g_warning ("3D preview: the volume could not be downloaded from the device");
          self->device_ops->free (self->device);
          self->device = NULL;
          self->have_volume = FALSE;
          return;
        }
      g_free (self->half);
      self->half = tomo_volume_3d_pack_half (host, (gsize) self->nx * self->ny * self->nz);
      self->device_ops->free (self->device);
      self->device = NULL;
    }
  glPixelStorei (GL_UNPACK_ALIGNMENT, 2);
  glTexSubImage3D (GL_TEXTURE_3D, 0, 0, 0, 0, self->nx, self->ny, self->nz, GL_RED,
                   GL_HALF_FLOAT, self->half);
  set_upload_path (self, "GL upload");
  self->have_volume = TRUE;
}

static gboolean
tomo_volume_3d_render (GtkGLArea    *area,
                       GdkGLContext *context)
{
  TomoVolume3d *self = TOMO_VOLUME_3D (area);
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (area));
  int w = gtk_widget_get_width (GTK_WIDGET (area)) * scale;
  int h = gtk_widget_get_height (GTK_WIDGET (area)) * scale;
  double cy = cos (self->yaw), sy = sin (self->yaw), cp = cos (self->pitch), sp = sin (self->pitch);
  double big = MAX (MAX (self->extent[0], self->extent[1]), self->extent[2]);
  /* Columns of R = Ry(yaw) · Rx(pitch). */
  float rot[9] = { cy, 0, -sy, sy * sp, cp, cy * sp, sy * cp, -sp, cy * cp };
  float box[3], planes[3], swap[9];
  int rw = w, rh = h;
  GLint target = 0;

  glClearColor (0.12f, 0.12f, 0.13f, 1.0f);
  glClear (GL_COLOR_BUFFER_BIT);
  if (self->program == 0)
    return TRUE;
  glActiveTexture (GL_TEXTURE0);
  glBindTexture (GL_TEXTURE_3D, self->texture);
  if (self->upload && (self->half != NULL || self->device != NULL))
    upload_volume (self);
  glActiveTexture (GL_TEXTURE1);
  glBindTexture (GL_TEXTURE_2D, self->lut_texture);
  if (self->lut_dirty)
    {
      tomo_gl_upload_lut (self->colormap);
      self->lut_dirty = FALSE;
    }
  glActiveTexture (GL_TEXTURE0);
  if (!self->have_volume || big <= 0 || w <= 0 || h <= 0)
    return TRUE;
  /* Texture s, t, r = x, y, row of the volume; on screen x right, rows
   * down (row 0 at the top), y into the screen before turning: the
   * screen's (x, up, depth) are the box's (x, −z, y). */
  for (int c = 0; c < 3; c++)
    {
      box[c] = 0.5 * self->extent[c] / big;
      planes[c] = self->planes[c] >= 0 && self->planes[c] <= 1
                  ? (self->planes[c] - 0.5) * 2 * box[c] : 1e9f;
      swap[c * 3 + 0] = rot[c * 3 + 0];
      swap[c * 3 + 1] = rot[c * 3 + 2];
      swap[c * 3 + 2] = -rot[c * 3 + 1];
    }
  if (self->interactive && w >= 4 && h >= 4)
    {
      /* A quarter of the rays into a texture of our own, then scaled up
       * into the area's framebuffer: 4× fewer rays while the pane turns,
       * where the rays are cast on the CPU (llvmpipe) that counts. */
      rw = w / 2;
      rh = h / 2;
      glGetIntegerv (GL_DRAW_FRAMEBUFFER_BINDING, &target);
      if (self->fbo == 0)
        {
          glGenFramebuffers (1, &self->fbo);
          glGenTextures (1, &self->fbo_texture);
        }
      glBindTexture (GL_TEXTURE_2D, self->fbo_texture);
      if (self->fbo_w != rw || self->fbo_h != rh)
        {
          glTexImage2D (GL_TEXTURE_2D, 0, GL_RGBA8, rw, rh, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
          glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
          glTexParameteri (GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
          self->fbo_w = rw;
          self->fbo_h = rh;
        }
      glBindFramebuffer (GL_FRAMEBUFFER, self->fbo);
      glFramebufferTexture2D (GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D,
                              self->fbo_texture, 0);
      glViewport (0, 0, rw, rh);
    }
  glUseProgram (self->program);
  glUniformMatrix3fv (self->u_rot, 1, GL_FALSE, swap);
  glUniform3fv (self->u_box, 1, box);
  glUniform3fv (self->u_planes, 1, planes);
  glUniform2f (self->u_window, self->lo, self->hi);
  glUniform1f (self->u_aspect, (float) w / h);
  {
    /* The shorter side spans the box's diagonal, whichever way it turns. */
    float radius = 1.03f * sqrtf (box[0] * box[0] + box[1] * box[1] + box[2] * box[2]);

    glUniform1f (self->u_radius, radius);
    glUniform1f (self->u_pixel, 2.0f * radius / MIN (rw, rh));
  }
  glUniform1i (self->u_mode, self->mode);
  {
    /* Two samples per voxel along the volume's diagonal, the longest ray:
     * 384 for 128 × 128 × 64, 887 for 256³. */
    double diag = sqrt ((double) self->tex_nx * self->tex_nx + (double) self->tex_ny * self->tex_ny
                        + (double) self->tex_nz * self->tex_nz);

    glUniform1i (self->u_steps, (int) CLAMP (ceil (2 * diag), 32, 1024));
  }
  glUniform1i (self->u_volume, 0);
  glUniform1i (self->u_lut, 1);
  glBindVertexArray (self->vao);
  glDrawArrays (GL_TRIANGLES, 0, 3);
  glBindVertexArray (0);
  glUseProgram (0);
  if (rw != w)
    {
      glBindFramebuffer (GL_READ_FRAMEBUFFER, self->fbo);
      glBindFramebuffer (GL_DRAW_FRAMEBUFFER, target);
      glBlitFramebuffer (0, 0, rw, rh, 0, 0, w, h, GL_COLOR_BUFFER_BIT, GL_LINEAR);
      glBindFramebuffer (GL_FRAMEBUFFER, target);
      glViewport (0, 0, w, h);
    }
  if (self->probe)
    probe_frame (self, w, h);
  self->n_frames++;
  return TRUE;
}

static void
on_drag_begin (GtkGestureDrag *gesture,
               double          x,
               double          y,
               TomoVolume3d   *self)
{
  self->drag_yaw = self->yaw;
  self->drag_pitch = self->pitch;
  tomo_volume_3d_set_interactive (self, TRUE);
}

static void
on_drag_end (GtkGestureDrag *gesture,
             double          dx,
             double          dy,
             TomoVolume3d   *self)
{
  tomo_volume_3d_set_interactive (self, FALSE);
}

static void
on_drag_update (GtkGestureDrag *gesture,
                double          dx,
                double          dy,
                TomoVolume3d   *self)
{
  tomo_volume_3d_set_rotation (self, self->drag_yaw + dx * 0.01,
                               CLAMP (self->drag_pitch + dy * 0.01, -G_PI / 2, G_PI / 2));
}

static void
drop_device (TomoVolume3d *self)
{
  if (self->device != NULL)
    self->device_ops->free (self->device);
  self->device = NULL;
  self->device_ops = NULL;
}

static void
tomo_volume_3d_finalize (GObject *object)
{
  drop_device (TOMO_VOLUME_3D (object));
  g_free (TOMO_VOLUME_3D (object)->half);
  G_OBJECT_CLASS (tomo_volume_3d_parent_class)->finalize (object);
}

static void
tomo_volume_3d_class_init (TomoVolume3dClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tomo_volume_3d_finalize;
  GTK_WIDGET_CLASS (klass)->realize = tomo_volume_3d_realize;
  GTK_WIDGET_CLASS (klass)->unrealize = tomo_volume_3d_unrealize;
  GTK_GL_AREA_CLASS (klass)->render = tomo_volume_3d_render;

  /* The path the last volume took into the texture changed (see
   * tomo_volume_3d_get_upload_path()). */
  signal_upload_path_changed = g_signal_new ("upload-path-changed", G_TYPE_FROM_CLASS (klass),
                                             G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                             G_TYPE_NONE, 0);
}

static void
tomo_volume_3d_init (TomoVolume3d *self)
{
  self->yaw = 0.6;
  self->pitch = 0.5;
  self->hi = 1.0;
  self->planes[0] = self->planes[1] = self->planes[2] = -1;
  gtk_gl_area_set_required_version (GTK_GL_AREA (self), 3, 0);
  gtk_gl_area_set_has_depth_buffer (GTK_GL_AREA (self), FALSE);
  _tomo_ui_add_drag (GTK_WIDGET (self), G_CALLBACK (on_drag_begin), G_CALLBACK (on_drag_update),
                     G_CALLBACK (on_drag_end), self);
}

GtkWidget *
tomo_volume_3d_new (void)
{
  return g_object_new (TOMO_TYPE_VOLUME_3D, NULL);
}

static guint16
float_to_half (float f)
{
  guint32 x, sign, m, h, rem;
  gint32 e;

  memcpy (&x, &f, sizeof x);
  sign = (x >> 16) & 0x8000;
  m = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff)
    return sign | 0x7c00 | (m != 0 ? 0x200 : 0);      /* inf, NaN */
  e = (gint32) ((x >> 23) & 0xff) - 127 + 15;
  if (e >= 31)
    return sign | 0x7c00;
  if (e <= 0)
    {
      /* Subnormal: the 24-bit significand shifted to units of 2^-24. */
      guint32 shift = 14 - e;

      if (e < -10)
        return sign;
      m |= 0x800000;
      h = m >> shift;
      rem = m & ((1u << shift) - 1);
      if (rem > (1u << (shift - 1)) || (rem == (1u << (shift - 1)) && (h & 1)))
        h++;
      return sign | h;
    }
  h = sign | ((guint32) e << 10) | (m >> 13);
  rem = m & 0x1fff;
  /* A carry into the exponent is the right result (up to inf). */
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    h++;
  return h;
}

guint16 *
tomo_volume_3d_pack_half (const float *data,
                          gsize        n)
{
  guint16 *half = g_new (guint16, MAX (n, 1));

  for (gsize i = 0; i < n; i++)
    half[i] = float_to_half (data[i]);
  return half;
}

void
tomo_volume_3d_take (TomoVolume3d *self,
                     guint16      *half,
                     gpointer      device,
                     gconstpointer ops,
                     guint         nx,
                     guint         ny,
                     guint         nz,
                     double        sx,
                     double        sy,
                     double        sz)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self) && (half != NULL) != (device != NULL) &&
                    (device == NULL || ops != NULL) && nx > 0 && ny > 0 && nz > 0);

  drop_device (self);
  g_free (self->half);
  self->half = half;
  self->device = device;
  self->device_ops = ops;
  self->upload = TRUE;
  self->nx = nx;
  self->ny = ny;
  self->nz = nz;
  self->extent[0] = sx;
  self->extent[1] = sy;
  self->extent[2] = sz;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

gboolean
tomo_volume_3d_get_interop (TomoVolume3d *self)
{
  g_return_val_if_fail (TOMO_IS_VOLUME_3D (self), FALSE);
  return self->interop;
}

const guint16 *
tomo_volume_3d_peek_half (TomoVolume3d *self,
                          guint        *nx,
                          guint        *ny,
                          guint        *nz)
{
  g_return_val_if_fail (TOMO_IS_VOLUME_3D (self), NULL);
  *nx = self->nx;
  *ny = self->ny;
  *nz = self->nz;
  return self->half;
}

const char *
tomo_volume_3d_get_upload_path (TomoVolume3d *self)
{
  g_return_val_if_fail (TOMO_IS_VOLUME_3D (self), NULL);
  return self->upload_path;
}

void
tomo_volume_3d_set_window (TomoVolume3d *self,
                           double        lo,
                           double        hi)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self));
  if (lo == self->lo && hi == self->hi)
    return;
  self->lo = lo;
  self->hi = hi;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
tomo_volume_3d_set_colormap (TomoVolume3d *self,
                             TomoColormap  colormap)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self) && colormap < TOMO_N_COLORMAPS);
  if (colormap == self->colormap)
    return;
  self->colormap = colormap;
  self->lut_dirty = TRUE;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
tomo_volume_3d_set_mode (TomoVolume3d    *self,
                         TomoVolume3dMode mode)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self) && mode <= TOMO_VOLUME_3D_COMPOSITE);
  if (mode == self->mode)
    return;
  self->mode = mode;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

TomoVolume3dMode
tomo_volume_3d_get_mode (TomoVolume3d *self)
{
  g_return_val_if_fail (TOMO_IS_VOLUME_3D (self), TOMO_VOLUME_3D_MIP);
  return self->mode;
}

void
tomo_volume_3d_set_planes (TomoVolume3d *self,
                           double        fx,
                           double        fy,
                           double        fz)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self));
  if (fx == self->planes[0] && fy == self->planes[1] && fz == self->planes[2])
    return;
  self->planes[0] = fx;
  self->planes[1] = fy;
  self->planes[2] = fz;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
tomo_volume_3d_set_rotation (TomoVolume3d *self,
                             double        yaw,
                             double        pitch)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self));
  self->yaw = yaw;
  self->pitch = pitch;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

guint
tomo_volume_3d_get_n_frames (TomoVolume3d *self)
{
  return self->n_frames;
}

void
tomo_volume_3d_set_probe (TomoVolume3d *self,
                          gboolean      probe)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self));
  self->probe = probe;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
tomo_volume_3d_get_stats (TomoVolume3d      *self,
                          TomoVolume3dStats *stats)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self) && stats != NULL);
  *stats = self->stats;
}

void
tomo_volume_3d_set_interactive (TomoVolume3d *self,
                                gboolean      interactive)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self));
  if (self->interactive == interactive)
    return;
  self->interactive = interactive;
  /* The last frame of a turn is drawn in full. */
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}
