/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The 3D pane of the three-view layout: an orthographic ray caster over a
 * 3D texture (half floats, linear filtering) in one fragment shader;
 * maximum intensity projection, grey levels by the window.
 */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <epoxy/gl.h>
#include <math.h>
#include <string.h>

#include "tomo-volume-3d.h"

struct _TomoVolume3d
{
  GtkGLArea parent_instance;

  float *data;              /* waiting for upload */
  guint nx, ny, nz;
  double extent[3];
  double lo, hi;
  double yaw, pitch, drag_yaw, drag_pitch;
  gboolean have_volume;
  guint n_frames;
  double mean;

  GLuint program, vao, texture;
  GLint u_rot, u_box, u_window, u_aspect;
};

G_DEFINE_FINAL_TYPE (TomoVolume3d, tomo_volume_3d, GTK_TYPE_GL_AREA)

static const char vertex_src[] =
  "out vec2 p;\n"
  "void main () {\n"
  "  vec2 v = vec2 (float ((gl_VertexID << 1) & 2), float (gl_VertexID & 2));\n"
  "  p = v * 2.0 - 1.0;\n"
  "  gl_Position = vec4 (p, 0.0, 1.0);\n"
  "}\n";

/* Rays along the view's z through the box [−box, box] turned by rot;
 * 384 steps at most between the faces it crosses. */
static const char fragment_src[] =
  "in vec2 p;\n"
  "out vec4 colour;\n"
  "uniform highp sampler3D volume;\n"
  "uniform mat3 rot;\n"
  "uniform vec3 box;\n"
  "uniform vec2 window;\n"
  "uniform float aspect;\n"
  "void main () {\n"
  "  vec2 q = p * (aspect > 1.0 ? vec2 (aspect, 1.0) : vec2 (1.0, 1.0 / aspect)) * 0.6;\n"
  "  vec3 o = rot * vec3 (q, -2.0), d = rot * vec3 (0.0, 0.0, 1.0);\n"
  "  vec3 inv = 1.0 / (d + vec3 (1e-9));\n"
  "  vec3 t0 = (-box - o) * inv, t1 = (box - o) * inv;\n"
  "  vec3 tmin = min (t0, t1), tmax = max (t0, t1);\n"
  "  float a = max (max (tmin.x, tmin.y), tmin.z), b = min (min (tmax.x, tmax.y), tmax.z);\n"
  "  if (b <= a) { colour = vec4 (0.12, 0.12, 0.13, 1.0); return; }\n"
  "  float m = -1e30;\n"
  "  for (int i = 0; i < 384; i++) {\n"
  "    float t = a + (b - a) * (float (i) + 0.5) / 384.0;\n"
  "    vec3 s = (o + t * d) / (2.0 * box) + 0.5;\n"
  "    m = max (m, texture (volume, s).r);\n"
  "  }\n"
  "  float g = clamp ((m - window.x) / max (window.y - window.x, 1e-30), 0.0, 1.0);\n"
  "  colour = vec4 (g, g, g, 1.0);\n"
  "}\n";

static GLuint
compile (GdkGLContext *context,
         GLenum        type,
         const char   *body,
         GError      **error)
{
  const char *header = gdk_gl_context_get_use_es (context)
    ? "#version 300 es\nprecision highp float;\nprecision highp sampler3D;\n"
    : "#version 330 core\n";
  g_autofree char *source = g_strconcat (header, body, NULL);
  GLuint shader = glCreateShader (type);
  GLint status;

  glShaderSource (shader, 1, (const char **) &source, NULL);
  glCompileShader (shader);
  glGetShaderiv (shader, GL_COMPILE_STATUS, &status);
  if (status == GL_FALSE)
    {
      char log[2048] = "";

      glGetShaderInfoLog (shader, sizeof log, NULL, log);
      g_set_error (error, GDK_GL_ERROR, GDK_GL_ERROR_COMPILATION_FAILED,
                   "Compiling the volume ray caster failed: %s", log);
      glDeleteShader (shader);
      return 0;
    }
  return shader;
}

static void
tomo_volume_3d_realize (GtkWidget *widget)
{
  TomoVolume3d *self = TOMO_VOLUME_3D (widget);
  GdkGLContext *context;
  GError *error = NULL;
  GLuint vs, fs;
  GLint status;

  GTK_WIDGET_CLASS (tomo_volume_3d_parent_class)->realize (widget);
  gtk_gl_area_make_current (GTK_GL_AREA (self));
  if (gtk_gl_area_get_error (GTK_GL_AREA (self)) != NULL)
    return;
  context = gtk_gl_area_get_context (GTK_GL_AREA (self));
  vs = compile (context, GL_VERTEX_SHADER, vertex_src, &error);
  fs = vs != 0 ? compile (context, GL_FRAGMENT_SHADER, fragment_src, &error) : 0;
  if (fs == 0)
    {
      if (vs != 0)
        glDeleteShader (vs);
      gtk_gl_area_set_error (GTK_GL_AREA (self), error);
      g_error_free (error);
      return;
    }
  self->program = glCreateProgram ();
  glAttachShader (self->program, vs);
  glAttachShader (self->program, fs);
  glLinkProgram (self->program);
  glDeleteShader (vs);
  glDeleteShader (fs);
  glGetProgramiv (self->program, GL_LINK_STATUS, &status);
  if (status == GL_FALSE)
    {
      error = g_error_new_literal (GDK_GL_ERROR, GDK_GL_ERROR_LINK_FAILED,
                                   "Linking the volume ray caster failed");
      gtk_gl_area_set_error (GTK_GL_AREA (self), error);
      g_error_free (error);
      return;
    }
  self->u_rot = glGetUniformLocation (self->program, "rot");
  self->u_box = glGetUniformLocation (self->program, "box");
  self->u_window = glGetUniformLocation (self->program, "window");
  self->u_aspect = glGetUniformLocation (self->program, "aspect");
  glGenVertexArrays (1, &self->vao);
  glGenTextures (1, &self->texture);
  glBindTexture (GL_TEXTURE_3D, self->texture);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexParameteri (GL_TEXTURE_3D, GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
}

static void
tomo_volume_3d_unrealize (GtkWidget *widget)
{
  TomoVolume3d *self = TOMO_VOLUME_3D (widget);

  gtk_gl_area_make_current (GTK_GL_AREA (self));
  if (gtk_gl_area_get_error (GTK_GL_AREA (self)) == NULL)
    {
      if (self->texture != 0)
        glDeleteTextures (1, &self->texture);
      if (self->vao != 0)
        glDeleteVertexArrays (1, &self->vao);
      if (self->program != 0)
        glDeleteProgram (self->program);
    }
  self->texture = self->vao = self->program = 0;
  /* A new realize uploads again. */
  self->have_volume = FALSE;
  GTK_WIDGET_CLASS (tomo_volume_3d_parent_class)->unrealize (widget);
}

static gboolean
tomo_volume_3d_render (GtkGLArea    *area,
                       GdkGLContext *context)
{
  TomoVolume3d *self = TOMO_VOLUME_3D (area);
  int w = gtk_widget_get_width (GTK_WIDGET (area)) * gtk_widget_get_scale_factor (GTK_WIDGET (area));
  int h = gtk_widget_get_height (GTK_WIDGET (area)) * gtk_widget_get_scale_factor (GTK_WIDGET (area));
  double cy = cos (self->yaw), sy = sin (self->yaw), cp = cos (self->pitch), sp = sin (self->pitch);
  double big = MAX (MAX (self->extent[0], self->extent[1]), self->extent[2]);
  /* Columns of R = Ry(yaw) · Rx(pitch); z of the volume points up the screen. */
  float rot[9] = { cy, 0, -sy, sy * sp, cp, cy * sp, sy * cp, -sp, cy * cp };
  float box[3];

  glClearColor (0.12f, 0.12f, 0.13f, 1.0f);
  glClear (GL_COLOR_BUFFER_BIT);
  if (self->program == 0)
    return TRUE;
  glBindTexture (GL_TEXTURE_3D, self->texture);
  if (self->data != NULL)
    {
      glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
      glTexImage3D (GL_TEXTURE_3D, 0, GL_R16F, self->nx, self->ny, self->nz, 0, GL_RED, GL_FLOAT,
                    self->data);
      g_clear_pointer (&self->data, g_free);
      self->have_volume = TRUE;
    }
  if (!self->have_volume || big <= 0)
    return TRUE;
  /* Texture s, t, r = x, y, z of the volume; on screen x right, z up, y
   * into the screen before turning. */
  box[0] = 0.5 * self->extent[0] / big;
  box[1] = 0.5 * self->extent[1] / big;
  box[2] = 0.5 * self->extent[2] / big;
  {
    /* Screen (x, up, depth) → volume (x, −z… ): swap y and z so z is up. */
    float swap[9];

    for (int c = 0; c < 3; c++)
      {
        swap[c * 3 + 0] = rot[c * 3 + 0];
        swap[c * 3 + 1] = rot[c * 3 + 2];
        swap[c * 3 + 2] = -rot[c * 3 + 1];
      }
    glUseProgram (self->program);
    glUniformMatrix3fv (self->u_rot, 1, GL_FALSE, swap);
  }
  glUniform3fv (self->u_box, 1, box);
  glUniform2f (self->u_window, self->lo, self->hi);
  glUniform1f (self->u_aspect, h > 0 ? (float) w / h : 1.0f);
  glBindVertexArray (self->vao);
  glDrawArrays (GL_TRIANGLES, 0, 3);
  glBindVertexArray (0);
  glUseProgram (0);
  {
    /* The mean grey level, for the status and the tests: a 64 × 64 grid. */
    guint8 px[4];
    double sum = 0;

    for (int j = 0; j < 64; j++)
      for (int i = 0; i < 64; i++)
        {
          glReadPixels (i * w / 64, j * h / 64, 1, 1, GL_RGBA, GL_UNSIGNED_BYTE, px);
          sum += px[0];
        }
    self->mean = sum / (64 * 64);
  }
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
tomo_volume_3d_finalize (GObject *object)
{
  g_free (TOMO_VOLUME_3D (object)->data);
  G_OBJECT_CLASS (tomo_volume_3d_parent_class)->finalize (object);
}

static void
tomo_volume_3d_class_init (TomoVolume3dClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = tomo_volume_3d_finalize;
  GTK_WIDGET_CLASS (klass)->realize = tomo_volume_3d_realize;
  GTK_WIDGET_CLASS (klass)->unrealize = tomo_volume_3d_unrealize;
  GTK_GL_AREA_CLASS (klass)->render = tomo_volume_3d_render;
}

static void
tomo_volume_3d_init (TomoVolume3d *self)
{
  GtkGesture *drag = gtk_gesture_drag_new ();

  self->yaw = 0.6;
  self->pitch = 0.5;
  self->hi = 1.0;
  gtk_gl_area_set_required_version (GTK_GL_AREA (self), 3, 0);
  gtk_gl_area_set_has_depth_buffer (GTK_GL_AREA (self), FALSE);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
}

GtkWidget *
tomo_volume_3d_new (void)
{
  return g_object_new (TOMO_TYPE_VOLUME_3D, NULL);
}

void
tomo_volume_3d_set_volume (TomoVolume3d *self,
                           const float  *data,
                           guint         nx,
                           guint         ny,
                           guint         nz,
                           double        sx,
                           double        sy,
                           double        sz)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self) && data != NULL && nx > 0 && ny > 0 && nz > 0);

  g_free (self->data);
  self->data = g_memdup2 (data, sizeof (float) * nx * ny * nz);
  self->nx = nx;
  self->ny = ny;
  self->nz = nz;
  self->extent[0] = sx;
  self->extent[1] = sy;
  self->extent[2] = sz;
  gtk_gl_area_queue_render (GTK_GL_AREA (self));
}

void
tomo_volume_3d_set_window (TomoVolume3d *self,
                           double        lo,
                           double        hi)
{
  g_return_if_fail (TOMO_IS_VOLUME_3D (self));
  self->lo = lo;
  self->hi = hi;
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

void
tomo_volume_3d_get_rotation (TomoVolume3d *self,
                             double       *yaw,
                             double       *pitch)
{
  *yaw = self->yaw;
  *pitch = self->pitch;
}

guint
tomo_volume_3d_get_n_frames (TomoVolume3d *self)
{
  return self->n_frames;
}

double
tomo_volume_3d_get_mean (TomoVolume3d *self)
{
  return self->mean;
}
