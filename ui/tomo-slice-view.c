/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include <math.h>

#include <epoxy/gl.h>

#include "tomo-colormap.h"
#include "tomo-gl.h"
#include "tomo-gpu-gl.h"
#include "tomo-slice-view.h"
#include "tomo-ui-private.h"

#define ZOOM_MIN 0.05
#define ZOOM_MAX 64.0

struct _TomoSliceView
{
  GtkGLArea parent_instance;

  TomoSlice *slice;
  guint full_width;
  gboolean tight;           /* the image is the slice, not the W × W frame around it */
  gboolean needs_upload;
  gint64 set_time_us;
  double display_ms;
  guint shown_idle_id;

  /* GL objects, valid between realize and unrealize. */
  GLuint program;
  GLuint vao;
  GLuint vbo;
  GLuint texture;
  GLuint lut_texture;
  GLint u_rect, u_tex_rect, u_scale, u_offset, u_slice, u_lut, u_min, u_max, u_nan_color;
  guint tex_width, tex_height;
  gboolean lut_dirty;

  /* CUDA–GL interop: the texture registered with CUDA for its current size. */
  TomoGpuGlTexture *cuda_texture;
  gboolean interop_checked;
  gboolean interop_available;
  const char *upload_path;

  TomoColormap colormap;
  double window_min, window_max;
  double pixel_size;

  /* View transform: zoom in screen pixels per image pixel, and the image
   * point at the middle of the widget. */
  double zoom;
  double center_x, center_y;
  gboolean fit;

  /* Pointer and drags. */
  gboolean roi_mode;
  gboolean dragging_roi;
  double drag_start_cx, drag_start_cy;
  double roi_x0, roi_y0, roi_x1, roi_y1;
};

G_DEFINE_FINAL_TYPE (TomoSliceView, tomo_slice_view, GTK_TYPE_GL_AREA)

enum {
  PROP_0,
  PROP_COLORMAP,
  PROP_WINDOW_MIN,
  PROP_WINDOW_MAX,
  PROP_ZOOM,
  PROP_UPLOAD_PATH,
  PROP_ROI_MODE,
  N_PROPS
};

enum {
  SLICE_SHOWN,
  HOVER,
  ROI_SELECTED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* Size of the laid-out image: planes side by side, each full_width wide. */
static void
get_image_size (TomoSliceView *self,
                double        *width,
                double        *height)
{
  if (self->slice == NULL)
    {
      *width = *height = 1.0;
      return;
    }

  *width = (double) self->full_width * self->slice->n_slices;
  *height = self->tight ? self->slice->roi.y + self->slice->height
    : MAX (self->full_width, self->slice->roi.y + self->slice->height);
}

static void
apply_fit (TomoSliceView *self)
{
  double iw, ih;
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  int h = gtk_widget_get_height (GTK_WIDGET (self));

  get_image_size (self, &iw, &ih);
  self->center_x = iw / 2.0;
  self->center_y = ih / 2.0;
  if (w > 0 && h > 0)
    self->zoom = CLAMP (MIN (w / iw, h / ih) * 0.98, ZOOM_MIN, ZOOM_MAX);
}

static void
widget_to_image (TomoSliceView *self,
                 double         wx,
                 double         wy,
                 double        *ix,
                 double        *iy)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  int h = gtk_widget_get_height (GTK_WIDGET (self));

  *ix = (wx - w / 2.0) / self->zoom + self->center_x;
  *iy = (wy - h / 2.0) / self->zoom + self->center_y;
}

/* ---- GL ------------------------------------------------------------------ */

static gboolean
init_gl (TomoSliceView *self,
         GError       **error)
{
  static const float quad[] = { 0, 0, 1, 0, 0, 1, 1, 1 };
  static const char vert[] = "/org/tomolive/Tomolive/shaders/slice.vert";
  static const char frag[] = "/org/tomolive/Tomolive/shaders/slice.frag";
  g_autoptr(GBytes) vs = g_resources_lookup_data (vert, 0, error);
  g_autoptr(GBytes) fs = vs != NULL ? g_resources_lookup_data (frag, 0, error) : NULL;

  if (fs == NULL)
    return FALSE;
  self->program = tomo_gl_program_new (g_bytes_get_data (vs, NULL), vert,
                                       g_bytes_get_data (fs, NULL), frag,
                                       "a_pos", "the slice shader", error);
  if (self->program == 0)
    return FALSE;

  self->u_rect = glGetUniformLocation (self->program, "u_rect");
  self->u_tex_rect = glGetUniformLocation (self->program, "u_tex_rect");
  self->u_scale = glGetUniformLocation (self->program, "u_scale");
  self->u_offset = glGetUniformLocation (self->program, "u_offset");
  self->u_slice = glGetUniformLocation (self->program, "u_slice");
  self->u_lut = glGetUniformLocation (self->program, "u_lut");
  self->u_min = glGetUniformLocation (self->program, "u_min");
  self->u_max = glGetUniformLocation (self->program, "u_max");
  self->u_nan_color = glGetUniformLocation (self->program, "u_nan_color");

  glGenVertexArrays (1, &self->vao);
  glBindVertexArray (self->vao);
  glGenBuffers (1, &self->vbo);
  glBindBuffer (GL_ARRAY_BUFFER, self->vbo);
  glBufferData (GL_ARRAY_BUFFER, sizeof quad, quad, GL_STATIC_DRAW);
  glEnableVertexAttribArray (0);
  glVertexAttribPointer (0, 2, GL_FLOAT, GL_FALSE, 0, NULL);
  glBindVertexArray (0);

  self->texture = tomo_gl_texture_new (GL_TEXTURE_2D, GL_NEAREST);
  self->lut_texture = tomo_gl_texture_new (GL_TEXTURE_2D, GL_NEAREST);
  glBindTexture (GL_TEXTURE_2D, 0);

  self->tex_width = self->tex_height = 0;
  self->lut_dirty = TRUE;
  self->needs_upload = self->slice != NULL;

  return TRUE;
}

static void
tomo_slice_view_realize (GtkWidget *widget)
{
  TomoSliceView *self = TOMO_SLICE_VIEW (widget);
  g_autoptr(GError) error = NULL;

  GTK_WIDGET_CLASS (tomo_slice_view_parent_class)->realize (widget);

  gtk_gl_area_make_current (GTK_GL_AREA (self));
  if (gtk_gl_area_get_error (GTK_GL_AREA (self)) != NULL)
    return;

  if (!init_gl (self, &error))
    gtk_gl_area_set_error (GTK_GL_AREA (self), error);
}

static void
tomo_slice_view_unrealize (GtkWidget *widget)
{
  TomoSliceView *self = TOMO_SLICE_VIEW (widget);

  gtk_gl_area_make_current (GTK_GL_AREA (self));
  if (gtk_gl_area_get_error (GTK_GL_AREA (self)) == NULL)
    {
      /* CUDA must let go of the texture before GL deletes it. */
      g_clear_pointer (&self->cuda_texture, tomo_gpu_gl_texture_unregister);
      /* GL passes over names that are 0 (never made). */
      glDeleteTextures (2, (GLuint[]) { self->texture, self->lut_texture });
      glDeleteBuffers (1, &self->vbo);
      glDeleteVertexArrays (1, &self->vao);
      glDeleteProgram (self->program);
    }
  self->texture = self->lut_texture = self->vbo = self->vao = self->program = 0;
  self->tex_width = self->tex_height = 0;
  self->interop_checked = FALSE;

  GTK_WIDGET_CLASS (tomo_slice_view_parent_class)->unrealize (widget);
}

/* Brings the texture up to date with self->slice; the GL context must be
 * current.  Device-resident slices go through CUDA–GL interop when the GL
 * context runs on the CUDA device that holds them. */
static gboolean
update_texture (TomoSliceView *self,
                GError       **error)
{
  TomoSlice *slice = self->slice;
  guint n, w, h;
  int gl_device = -1;

  if (self->lut_dirty)
    {
      glBindTexture (GL_TEXTURE_2D, self->lut_texture);
      tomo_gl_upload_lut (self->colormap);
      self->lut_dirty = FALSE;
    }

  if (!self->needs_upload || slice == NULL)
    return TRUE;
  self->needs_upload = FALSE;

  n = slice->n_slices;
  w = slice->width;
  h = slice->height;

  glBindTexture (GL_TEXTURE_2D, self->texture);
  if (self->tex_width != w * n || self->tex_height != h)
    {
      g_clear_pointer (&self->cuda_texture, tomo_gpu_gl_texture_unregister);
      glTexImage2D (GL_TEXTURE_2D, 0, GL_R32F, w * n, h, 0, GL_RED, GL_FLOAT, NULL);
      self->tex_width = w * n;
      self->tex_height = h;
    }

  if (!self->interop_checked)
    {
      self->interop_available = tomo_gpu_gl_get_device (&gl_device);
      self->interop_checked = TRUE;
    }

  if (slice->device_buffer != NULL && self->interop_available)
    {
      const float *device_data = tomo_slice_get_device_data (slice, NULL);
      g_autoptr(GError) local_error = NULL;
      gboolean ok = TRUE;

      if (self->cuda_texture == NULL)
        self->cuda_texture = tomo_gpu_gl_texture_register (self->texture, w * n, h, &local_error);
      ok = self->cuda_texture != NULL;
      for (guint i = 0; ok && i < n; i++)
        ok = tomo_gpu_gl_texture_copy (self->cuda_texture,
                                       device_data + (gsize) i * w * h,
                                       w, h, i * w, 0, &local_error);
      if (ok)
        {
          self->upload_path = "CUDA–GL interop";
          return TRUE;
        }

      /* Interop failed once: use plain uploads from now on (the window
       * asks for host copies again once the path is no longer interop).
       * The slices that came without one, this and those already on their
       * way, are downloaded here: a synchronous copy, which may wait for
       * kernels running on the device, only until host copies arrive. */
      g_warning ("CUDA–GL interop failed, falling back to uploads: %s", local_error->message);
      self->interop_available = FALSE;
      self->upload_path = "GL upload";
      g_clear_pointer (&self->cuda_texture, tomo_gpu_gl_texture_unregister);
    }

  if (!tomo_slice_ensure_data (slice, error))
    return FALSE;

  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  for (guint i = 0; i < n; i++)
    glTexSubImage2D (GL_TEXTURE_2D, 0, i * w, 0, w, h, GL_RED, GL_FLOAT,
                     slice->data + (gsize) i * w * h);
  self->upload_path = "GL upload";

  return TRUE;
}

/* Draws every plane with image pixels mapped by scale/offset to clip space. */
static void
draw_planes (TomoSliceView *self,
             float          scale_x,
             float          scale_y,
             float          offset_x,
             float          offset_y)
{
  TomoSlice *slice = self->slice;
  guint n = slice->n_slices;

  glUseProgram (self->program);
  glBindVertexArray (self->vao);

  glActiveTexture (GL_TEXTURE0);
  glBindTexture (GL_TEXTURE_2D, self->texture);
  glActiveTexture (GL_TEXTURE1);
  glBindTexture (GL_TEXTURE_2D, self->lut_texture);
  glUniform1i (self->u_slice, 0);
  glUniform1i (self->u_lut, 1);
  glUniform1f (self->u_min, self->window_min);
  glUniform1f (self->u_max, self->window_max);
  glUniform4f (self->u_nan_color, 1.0f, 0.0f, 1.0f, 1.0f);
  glUniform2f (self->u_scale, scale_x, scale_y);
  glUniform2f (self->u_offset, offset_x, offset_y);

  for (guint i = 0; i < n; i++)
    {
      glUniform4f (self->u_rect,
                   (float) (i * self->full_width + slice->roi.x), (float) slice->roi.y,
                   (float) slice->width, (float) slice->height);
      glUniform4f (self->u_tex_rect, (float) i / n, 0.0f, 1.0f / n, 1.0f);
      glDrawArrays (GL_TRIANGLE_STRIP, 0, 4);
    }

  glBindVertexArray (0);
  glActiveTexture (GL_TEXTURE0);
  glUseProgram (0);
}

static gboolean
emit_slice_shown (gpointer data)
{
  TomoSliceView *self = data;

  self->shown_idle_id = 0;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_UPLOAD_PATH]);
  g_signal_emit (self, signals[SLICE_SHOWN], 0);
  return G_SOURCE_REMOVE;
}

static gboolean
tomo_slice_view_render (GtkGLArea    *area,
                        GdkGLContext *context)
{
  TomoSliceView *self = TOMO_SLICE_VIEW (area);
  g_autoptr(GError) error = NULL;
  gboolean uploaded = self->needs_upload && self->slice != NULL;
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  int h = gtk_widget_get_height (GTK_WIDGET (self));

  glClearColor (0.11f, 0.11f, 0.12f, 1.0f);
  glClear (GL_COLOR_BUFFER_BIT);

  if (self->program == 0 || self->slice == NULL || w <= 0 || h <= 0)
    return TRUE;

  if (!update_texture (self, &error))
    {
      gtk_gl_area_set_error (area, error);
      return TRUE;
    }

  if (self->fit)
    apply_fit (self);

  draw_planes (self,
               2.0 * self->zoom / w, -2.0 * self->zoom / h,
               -2.0 * self->zoom * self->center_x / w,
               2.0 * self->zoom * self->center_y / h);

  if (uploaded)
    {
      self->display_ms = (g_get_monotonic_time () - self->set_time_us) / 1000.0;
      /* Handlers update labels, which must not be resized in the middle of
       * this frame's snapshot: tell them once the frame is done. */
      if (self->shown_idle_id == 0)
        self->shown_idle_id = g_idle_add_full (G_PRIORITY_HIGH_IDLE + 30, emit_slice_shown,
                                               self, NULL);
    }

  return TRUE;
}

guint8 *
tomo_slice_view_read_pixels (TomoSliceView *self,
                             guint         *width,
                             guint         *height,
                             GError       **error)
{
  g_autofree guint8 *pixels = NULL;
  GLuint fbo = 0, target = 0;
  double iw, ih;
  GLint old_fbo = 0;
  GLint old_viewport[4];
  guint w, h;

  g_return_val_if_fail (TOMO_IS_SLICE_VIEW (self), NULL);

  if (self->slice == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED, "No slice is shown");
      return NULL;
    }
  if (!gtk_widget_get_realized (GTK_WIDGET (self)))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                           "The slice view is not realized");
      return NULL;
    }

  gtk_gl_area_make_current (GTK_GL_AREA (self));
  if (gtk_gl_area_get_error (GTK_GL_AREA (self)) != NULL)
    {
      g_propagate_error (error, g_error_copy (gtk_gl_area_get_error (GTK_GL_AREA (self))));
      return NULL;
    }
  if (self->program == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                           "The slice shader is not ready");
      return NULL;
    }

  if (!update_texture (self, error))
    return NULL;

  get_image_size (self, &iw, &ih);
  w = (guint) iw;
  h = (guint) ih;

  glGetIntegerv (GL_FRAMEBUFFER_BINDING, &old_fbo);
  glGetIntegerv (GL_VIEWPORT, old_viewport);

  glGenTextures (1, &target);
  glBindTexture (GL_TEXTURE_2D, target);
  glTexImage2D (GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
  glGenFramebuffers (1, &fbo);
  glBindFramebuffer (GL_FRAMEBUFFER, fbo);
  glFramebufferTexture2D (GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, target, 0);

  if (glCheckFramebufferStatus (GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE)
    {
      glViewport (0, 0, w, h);
      glClearColor (0, 0, 0, 1);
      glClear (GL_COLOR_BUFFER_BIT);
      /* Image row 0 at the bottom of clip space = the first row glReadPixels returns. */
      draw_planes (self, 2.0 / w, 2.0 / h, -1.0, -1.0);
      pixels = g_malloc ((gsize) w * h * 4);
      glPixelStorei (GL_PACK_ALIGNMENT, 4);
      glReadPixels (0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
    }
  else
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                         "The offscreen framebuffer for reading back the slice is incomplete");

  glBindFramebuffer (GL_FRAMEBUFFER, old_fbo);
  glViewport (old_viewport[0], old_viewport[1], old_viewport[2], old_viewport[3]);
  glDeleteFramebuffers (1, &fbo);
  glDeleteTextures (1, &target);

  if (pixels != NULL)
    {
      *width = w;
      *height = h;
    }

  return g_steal_pointer (&pixels);
}

GdkTexture *
tomo_slice_view_render_texture (TomoSliceView *self,
                                GError       **error)
{
  g_autoptr(GBytes) bytes = NULL;
  guint8 *pixels;
  guint w, h;

  pixels = tomo_slice_view_read_pixels (self, &w, &h, error);
  if (pixels == NULL)
    return NULL;

  bytes = g_bytes_new_take (pixels, (gsize) w * h * 4);
  return gdk_memory_texture_new (w, h, GDK_MEMORY_R8G8B8A8, bytes, (gsize) w * 4);
}

/* ---- overlays: ROI rubber band and scale bar ----------------------------- */

static void
append_scale_bar (TomoSliceView *self,
                  GtkSnapshot   *snapshot)
{
  static const double steps[] = { 1, 2, 5 };
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  int h = gtk_widget_get_height (GTK_WIDGET (self));
  double metres_per_screen_px, target, length = 0, bar_px;
  g_autofree char *text = NULL;
  PangoLayout *layout;
  GdkRGBA white = { 1, 1, 1, 0.95 }, shadow = { 0, 0, 0, 0.6 };
  int tw, th;

  if (self->pixel_size <= 0 || self->slice == NULL)
    return;

  metres_per_screen_px = self->pixel_size / self->zoom;
  target = metres_per_screen_px * MIN (160, w / 4);
  /* Largest 1/2/5 × 10^k not longer than the target length. */
  for (int e = -9; e <= 3; e++)
    for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
      {
        double v = steps[i] * pow (10, e);
        if (v <= target)
          length = v;
      }
  if (length <= 0)
    return;

  bar_px = length / metres_per_screen_px;
  if (length >= 1e-3)
    text = g_strdup_printf ("%g mm", length * 1e3);
  else if (length >= 1e-6)
    text = g_strdup_printf ("%g µm", length * 1e6);
  else
    text = g_strdup_printf ("%g nm", length * 1e9);

  gtk_snapshot_append_color (snapshot, &shadow,
                             &GRAPHENE_RECT_INIT (w - 20 - bar_px - 1, h - 24 - 1, bar_px + 2, 6));
  gtk_snapshot_append_color (snapshot, &white,
                             &GRAPHENE_RECT_INIT (w - 20 - bar_px, h - 24, bar_px, 4));

  layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  pango_layout_get_pixel_size (layout, &tw, &th);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (w - 20 - bar_px / 2 - tw / 2.0, h - 28 - th));
  gtk_snapshot_append_layout (snapshot, layout, &white);
  gtk_snapshot_restore (snapshot);
  g_object_unref (layout);
}

static void
tomo_slice_view_snapshot (GtkWidget   *widget,
                          GtkSnapshot *snapshot)
{
  TomoSliceView *self = TOMO_SLICE_VIEW (widget);

  GTK_WIDGET_CLASS (tomo_slice_view_parent_class)->snapshot (widget, snapshot);

  if (self->dragging_roi)
    {
      GdkRGBA yellow = { 1.0, 0.85, 0.1, 1.0 };
      GdkRGBA colors[4] = { yellow, yellow, yellow, yellow };
      float widths[4] = { 1.5, 1.5, 1.5, 1.5 };
      double x0, y0, x1, y1;
      GskRoundedRect rect;

      tomo_slice_view_image_to_widget (self, MIN (self->roi_x0, self->roi_x1),
                                       MIN (self->roi_y0, self->roi_y1), &x0, &y0);
      tomo_slice_view_image_to_widget (self, MAX (self->roi_x0, self->roi_x1),
                                       MAX (self->roi_y0, self->roi_y1), &x1, &y1);
      gsk_rounded_rect_init_from_rect (&rect, &GRAPHENE_RECT_INIT (x0, y0, x1 - x0, y1 - y0), 0);
      gtk_snapshot_append_border (snapshot, &rect, widths, colors);
    }

  append_scale_bar (self, snapshot);
}

/* ---- input ---------------------------------------------------------------- */

gboolean
tomo_slice_view_get_value_at (TomoSliceView *self,
                              double         image_x,
                              double         image_y,
                              guint         *plane,
                              guint         *slice_x,
                              guint         *slice_y,
                              float         *value)
{
  TomoSlice *slice = self->slice;
  double px, py;
  guint p, x, y;

  if (slice == NULL || slice->data == NULL || image_x < 0 || image_y < 0)
    return FALSE;

  p = (guint) (image_x / self->full_width);
  if (p >= slice->n_slices)
    return FALSE;
  px = image_x - (double) p * self->full_width;
  py = image_y;
  if (px < slice->roi.x || py < slice->roi.y)
    return FALSE;
  x = (guint) (px - slice->roi.x);
  y = (guint) (py - slice->roi.y);
  if (x >= slice->width || y >= slice->height)
    return FALSE;

  if (plane)
    *plane = p;
  if (slice_x)
    *slice_x = x + slice->roi.x;
  if (slice_y)
    *slice_y = y + slice->roi.y;
  if (value)
    *value = slice->data[((gsize) p * slice->height + y) * slice->width + x];
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *controller,
           double                    x,
           double                    y,
           TomoSliceView            *self)
{
  double ix, iy;
  float value = 0;
  gboolean inside;

  widget_to_image (self, x, y, &ix, &iy);
  inside = tomo_slice_view_get_value_at (self, ix, iy, NULL, NULL, NULL, &value);
  g_signal_emit (self, signals[HOVER], 0, ix, iy, (double) value, inside);
}

static void
on_leave (GtkEventControllerMotion *controller,
          TomoSliceView            *self)
{
  g_signal_emit (self, signals[HOVER], 0, -1.0, -1.0, 0.0, FALSE);
}

static gboolean
on_scroll (GtkEventControllerScroll *controller,
           double                    dx,
           double                    dy,
           TomoSliceView            *self)
{
  GtkEventController *ec = GTK_EVENT_CONTROLLER (controller);
  double px = 0, py = 0, ix, iy, zoom;
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  int h = gtk_widget_get_height (GTK_WIDGET (self));
  GdkEvent *event = gtk_event_controller_get_current_event (ec);

  if (event != NULL && !gdk_event_get_position (event, &px, &py))
    px = w / 2.0, py = h / 2.0;

  /* Keep the image point under the pointer fixed while zooming. */
  widget_to_image (self, px, py, &ix, &iy);
  zoom = CLAMP (self->zoom * pow (1.15, -dy), ZOOM_MIN, ZOOM_MAX);
  self->center_x = ix - (px - w / 2.0) / zoom;
  self->center_y = iy - (py - h / 2.0) / zoom;
  self->fit = FALSE;
  if (zoom != self->zoom)
    {
      self->zoom = zoom;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));

  return TRUE;
}

static void
on_drag_begin (GtkGestureDrag *gesture,
               double          x,
               double          y,
               TomoSliceView  *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));

  self->dragging_roi = self->roi_mode || (state & GDK_SHIFT_MASK) != 0;
  if (self->dragging_roi)
    {
      widget_to_image (self, x, y, &self->roi_x0, &self->roi_y0);
      self->roi_x1 = self->roi_x0;
      self->roi_y1 = self->roi_y0;
    }
  else
    {
      self->drag_start_cx = self->center_x;
      self->drag_start_cy = self->center_y;
      gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
    }
}

static void
on_drag_update (GtkGestureDrag *gesture,
                double          dx,
                double          dy,
                TomoSliceView  *self)
{
  if (self->dragging_roi)
    {
      double sx, sy;

      gtk_gesture_drag_get_start_point (gesture, &sx, &sy);
      widget_to_image (self, sx + dx, sy + dy, &self->roi_x1, &self->roi_y1);
    }
  else
    {
      self->fit = FALSE;
      self->center_x = self->drag_start_cx - dx / self->zoom;
      self->center_y = self->drag_start_cy - dy / self->zoom;
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_drag_end (GtkGestureDrag *gesture,
             double          dx,
             double          dy,
             TomoSliceView  *self)
{
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), self->roi_mode ? "crosshair" : NULL);

  if (self->dragging_roi && self->slice != NULL)
    {
      double W = self->full_width;
      /* The ROI is in slice pixels of the first plane it started in. */
      double plane = floor (self->roi_x0 / W);
      double x0 = CLAMP (MIN (self->roi_x0, self->roi_x1) - plane * W, 0, W);
      double x1 = CLAMP (MAX (self->roi_x0, self->roi_x1) - plane * W, 0, W);
      double y0 = CLAMP (MIN (self->roi_y0, self->roi_y1), 0, W);
      double y1 = CLAMP (MAX (self->roi_y0, self->roi_y1), 0, W);
      guint rx = (guint) floor (x0), ry = (guint) floor (y0);
      guint rw = (guint) ceil (x1) - rx, rh = (guint) ceil (y1) - ry;

      self->dragging_roi = FALSE;
      if (rw >= 4 && rh >= 4)
        g_signal_emit (self, signals[ROI_SELECTED], 0, rx, ry, rw, rh);
    }
  self->dragging_roi = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* ---- public API ----------------------------------------------------------- */

void
tomo_slice_view_set_slice (TomoSliceView *self,
                           TomoSlice     *slice,
                           guint          full_width)
{
  gboolean size_changed;

  g_return_if_fail (TOMO_IS_SLICE_VIEW (self));

  size_changed = self->slice == NULL || slice == NULL
    || self->slice->n_slices != slice->n_slices
    || self->full_width != full_width;

  if (slice != NULL)
    tomo_slice_ref (slice);
  g_clear_pointer (&self->slice, tomo_slice_unref);
  self->slice = slice;
  self->full_width = full_width;
  self->needs_upload = slice != NULL;
  self->set_time_us = g_get_monotonic_time ();

  if (size_changed)
    self->fit = TRUE;

  gtk_widget_queue_draw (GTK_WIDGET (self));
}

TomoSlice *
tomo_slice_view_get_slice (TomoSliceView *self)
{
  g_return_val_if_fail (TOMO_IS_SLICE_VIEW (self), NULL);
  return self->slice;
}

const char *
tomo_slice_view_get_colormap (TomoSliceView *self)
{
  g_return_val_if_fail (TOMO_IS_SLICE_VIEW (self), NULL);
  return tomo_colormap_to_string (self->colormap);
}

void
tomo_slice_view_set_colormap (TomoSliceView *self,
                              const char    *name)
{
  TomoColormap colormap;

  g_return_if_fail (TOMO_IS_SLICE_VIEW (self));

  if (!tomo_colormap_from_string (name, &colormap))
    {
      g_warning ("Unknown colour map “%s”", name ? name : "(null)");
      return;
    }
  if (colormap == self->colormap)
    return;

  self->colormap = colormap;
  self->lut_dirty = TRUE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLORMAP]);
}

void
tomo_slice_view_set_window (TomoSliceView *self,
                            double         min,
                            double         max)
{
  g_return_if_fail (TOMO_IS_SLICE_VIEW (self));

  if (!isfinite (min) || !isfinite (max))
    return;

  g_object_freeze_notify (G_OBJECT (self));
  if (min != self->window_min)
    {
      self->window_min = min;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WINDOW_MIN]);
    }
  if (max != self->window_max)
    {
      self->window_max = max;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WINDOW_MAX]);
    }
  g_object_thaw_notify (G_OBJECT (self));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

double
tomo_slice_view_get_window_min (TomoSliceView *self)
{
  return self->window_min;
}

double
tomo_slice_view_get_window_max (TomoSliceView *self)
{
  return self->window_max;
}

void
tomo_slice_view_set_pixel_size (TomoSliceView *self,
                                double         pixel_size)
{
  g_return_if_fail (TOMO_IS_SLICE_VIEW (self));
  self->pixel_size = isfinite (pixel_size) ? pixel_size : 0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tomo_slice_view_zoom_fit (TomoSliceView *self)
{
  g_return_if_fail (TOMO_IS_SLICE_VIEW (self));
  self->fit = TRUE;
  apply_fit (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Screen pixels per slice pixel. */
static void
tomo_slice_view_set_zoom (TomoSliceView *self,
                          double         zoom)
{
  g_return_if_fail (TOMO_IS_SLICE_VIEW (self));

  zoom = CLAMP (zoom, ZOOM_MIN, ZOOM_MAX);
  self->fit = FALSE;
  if (zoom == self->zoom)
    return;
  self->zoom = zoom;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
tomo_slice_view_zoom_one (TomoSliceView *self)
{
  tomo_slice_view_set_zoom (self, 1.0);
}

const char *
tomo_slice_view_get_upload_path (TomoSliceView *self)
{
  g_return_val_if_fail (TOMO_IS_SLICE_VIEW (self), NULL);
  return self->upload_path;
}

double
tomo_slice_view_get_display_ms (TomoSliceView *self)
{
  g_return_val_if_fail (TOMO_IS_SLICE_VIEW (self), 0);
  return self->display_ms;
}

static void
tomo_slice_view_set_roi_mode (TomoSliceView *self,
                              gboolean       roi_mode)
{
  g_return_if_fail (TOMO_IS_SLICE_VIEW (self));

  roi_mode = !!roi_mode;
  if (roi_mode == self->roi_mode)
    return;
  self->roi_mode = roi_mode;
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), roi_mode ? "crosshair" : NULL);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ROI_MODE]);
}

/* ---- GObject -------------------------------------------------------------- */

static void
tomo_slice_view_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  TomoSliceView *self = TOMO_SLICE_VIEW (object);

  switch (prop_id)
    {
    case PROP_COLORMAP:
      g_value_set_string (value, tomo_colormap_to_string (self->colormap));
      break;
    case PROP_WINDOW_MIN:
      g_value_set_double (value, self->window_min);
      break;
    case PROP_WINDOW_MAX:
      g_value_set_double (value, self->window_max);
      break;
    case PROP_ZOOM:
      g_value_set_double (value, self->zoom);
      break;
    case PROP_UPLOAD_PATH:
      g_value_set_string (value, self->upload_path);
      break;
    case PROP_ROI_MODE:
      g_value_set_boolean (value, self->roi_mode);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tomo_slice_view_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  TomoSliceView *self = TOMO_SLICE_VIEW (object);

  switch (prop_id)
    {
    case PROP_COLORMAP:
      tomo_slice_view_set_colormap (self, g_value_get_string (value));
      break;
    case PROP_WINDOW_MIN:
      tomo_slice_view_set_window (self, g_value_get_double (value), self->window_max);
      break;
    case PROP_WINDOW_MAX:
      tomo_slice_view_set_window (self, self->window_min, g_value_get_double (value));
      break;
    case PROP_ZOOM:
      tomo_slice_view_set_zoom (self, g_value_get_double (value));
      break;
    case PROP_ROI_MODE:
      tomo_slice_view_set_roi_mode (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tomo_slice_view_dispose (GObject *object)
{
  TomoSliceView *self = TOMO_SLICE_VIEW (object);

  g_clear_handle_id (&self->shown_idle_id, g_source_remove);
  g_clear_pointer (&self->slice, tomo_slice_unref);

  G_OBJECT_CLASS (tomo_slice_view_parent_class)->dispose (object);
}

static void
tomo_slice_view_class_init (TomoSliceViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkGLAreaClass *gl_area_class = GTK_GL_AREA_CLASS (klass);

  object_class->get_property = tomo_slice_view_get_property;
  object_class->set_property = tomo_slice_view_set_property;
  object_class->dispose = tomo_slice_view_dispose;

  widget_class->realize = tomo_slice_view_realize;
  widget_class->unrealize = tomo_slice_view_unrealize;
  widget_class->snapshot = tomo_slice_view_snapshot;

  gl_area_class->render = tomo_slice_view_render;

  properties[PROP_COLORMAP] =
    g_param_spec_string ("colormap", NULL, NULL, "gray",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_WINDOW_MIN] =
    g_param_spec_double ("window-min", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_WINDOW_MAX] =
    g_param_spec_double ("window-max", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 1,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ZOOM] =
    g_param_spec_double ("zoom", NULL, NULL, ZOOM_MIN, ZOOM_MAX, 1,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_UPLOAD_PATH] =
    g_param_spec_string ("upload-path", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ROI_MODE] =
    g_param_spec_boolean ("roi-mode", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* After the frame that first shows a new slice has been drawn. */
  signals[SLICE_SHOWN] =
    g_signal_new ("slice-shown", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* Pointer over the image: image coordinates, value, whether on a slice pixel. */
  signals[HOVER] =
    g_signal_new ("hover", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 4,
                  G_TYPE_DOUBLE, G_TYPE_DOUBLE, G_TYPE_DOUBLE, G_TYPE_BOOLEAN);
  /* A rectangle drawn with Shift+drag or in ROI mode, in slice pixels. */
  signals[ROI_SELECTED] =
    g_signal_new ("roi-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 4,
                  G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT, G_TYPE_UINT);

  gtk_widget_class_set_css_name (widget_class, "sliceview");
}

static void
tomo_slice_view_init (TomoSliceView *self)
{
  GtkEventController *controller;
  GtkGesture *drag;

  self->colormap = TOMO_COLORMAP_GRAY;
  self->window_min = 0;
  self->window_max = 1;
  self->zoom = 1;
  self->fit = TRUE;
  self->upload_path = "GL upload";

  gtk_gl_area_set_required_version (GTK_GL_AREA (self), 3, 0);
  gtk_gl_area_set_has_depth_buffer (GTK_GL_AREA (self), FALSE);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);

  controller = gtk_event_controller_motion_new ();
  g_signal_connect (controller, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (controller, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), controller);

  controller = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect (controller, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), controller);

  drag = _tomo_ui_add_drag (GTK_WIDGET (self), G_CALLBACK (on_drag_begin),
                            G_CALLBACK (on_drag_update), G_CALLBACK (on_drag_end), self);
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
}

GtkWidget *
tomo_slice_view_new (void)
{
  return g_object_new (TOMO_TYPE_SLICE_VIEW, NULL);
}

/* Where image point (ix, iy) is drawn, in widget coordinates (overlays such
 * as the three-view cross-hairs). */
void
tomo_slice_view_image_to_widget (TomoSliceView *self,
                                 double         ix,
                                 double         iy,
                                 double        *wx,
                                 double        *wy)
{
  int w, h;

  g_return_if_fail (TOMO_IS_SLICE_VIEW (self));
  w = gtk_widget_get_width (GTK_WIDGET (self));
  h = gtk_widget_get_height (GTK_WIDGET (self));
  *wx = (ix - self->center_x) * self->zoom + w / 2.0;
  *wy = (iy - self->center_y) * self->zoom + h / 2.0;
}

void
tomo_slice_view_set_tight (TomoSliceView *self,
                           gboolean       tight)
{
  g_return_if_fail (TOMO_IS_SLICE_VIEW (self));

  self->tight = tight;
  self->fit = TRUE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}
