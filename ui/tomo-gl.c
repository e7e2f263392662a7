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
