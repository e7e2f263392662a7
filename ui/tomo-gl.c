/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-ui"

#include "config.h"

#include "tomo-gl.h"

GLuint
tomo_gl_texture_new (GLenum target,
                     GLint  filter)
{
  GLuint texture = 0;

  glGenTextures (1, &texture);
  glBindTexture (target, texture);
  glTexParameteri (target, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri (target, GL_TEXTURE_MAG_FILTER, filter);
  glTexParameteri (target, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri (target, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  if (target == GL_TEXTURE_3D)
    glTexParameteri (target, GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
  return texture;
}

void
tomo_gl_upload_lut (TomoColormap colormap)
{
  guint8 lut[TOMO_COLORMAP_LUT_SIZE * 4];

  tomo_colormap_fill_lut (colormap, lut);
  glPixelStorei (GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D (GL_TEXTURE_2D, 0, GL_RGBA8, TOMO_COLORMAP_LUT_SIZE, 1, 0, GL_RGBA,
                GL_UNSIGNED_BYTE, lut);
}

/* TRUE when the shader `object` compiled or, `program` TRUE, the program
 * `object` linked; else FALSE with `error` set to "Compiling `name` failed: "
 * (or "Linking") and the driver's log. */
static gboolean
check_status (GLuint        object,
              gboolean      program,
              const char   *name,
              GError      **error)
{
  PFNGLGETSHADERIVPROC get_iv = program ? glGetProgramiv : glGetShaderiv;
  PFNGLGETSHADERINFOLOGPROC get_log = program ? glGetProgramInfoLog : glGetShaderInfoLog;
  GLint ok = GL_FALSE, len = 0;
  g_autofree char *log = NULL;

  get_iv (object, program ? GL_LINK_STATUS : GL_COMPILE_STATUS, &ok);
  if (ok != GL_FALSE)
    return TRUE;
  get_iv (object, GL_INFO_LOG_LENGTH, &len);
  log = g_malloc0 (len + 1);
  get_log (object, len, NULL, log);
  g_set_error (error, GDK_GL_ERROR,
               program ? GDK_GL_ERROR_LINK_FAILED : GDK_GL_ERROR_COMPILATION_FAILED,
               "%s %s failed: %s", program ? "Linking" : "Compiling", name, log);
  return FALSE;
}

/* `body` after the #version line of the current context's GL or GLES. */
static GLuint
compile_shader (GLenum        type,
                const char   *body,
                const char   *name,
                GError      **error)
{
  const char *header = gdk_gl_context_get_use_es (gdk_gl_context_get_current ())
    ? "#version 300 es\nprecision highp float;\nprecision highp sampler3D;\n"
    : "#version 330 core\n";
  g_autofree char *source = g_strconcat (header, body, NULL);
  GLuint shader = glCreateShader (type);

  glShaderSource (shader, 1, (const char **) &source, NULL);
  glCompileShader (shader);
  if (check_status (shader, FALSE, name, error))
    return shader;
  glDeleteShader (shader);
  return 0;
}

GLuint
tomo_gl_program_new (const char  *vertex_source,
                     const char  *vertex_name,
                     const char  *fragment_source,
                     const char  *fragment_name,
                     const char  *attrib0,
                     const char  *program_name,
                     GError     **error)
{
  GLuint vs, fs, program;

  vs = compile_shader (GL_VERTEX_SHADER, vertex_source, vertex_name, error);
  if (vs == 0)
    return 0;
  fs = compile_shader (GL_FRAGMENT_SHADER, fragment_source, fragment_name, error);
  if (fs == 0)
    {
      glDeleteShader (vs);
      return 0;
    }

  program = glCreateProgram ();
  glAttachShader (program, vs);
  glAttachShader (program, fs);
  if (attrib0 != NULL)
    glBindAttribLocation (program, 0, attrib0);
  glLinkProgram (program);
  glDetachShader (program, vs);
  glDetachShader (program, fs);
  glDeleteShader (vs);
  glDeleteShader (fs);
  if (check_status (program, TRUE, program_name, error))
    return program;
  glDeleteProgram (program);
  return 0;
}
