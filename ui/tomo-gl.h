/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Small GL pieces the GL views share (the context must be current).
 */
#pragma once

#include <epoxy/gl.h>
#include <glib.h>

G_BEGIN_DECLS

/* A new texture of `target` (GL_TEXTURE_2D or GL_TEXTURE_3D), left bound,
 * sampled with `filter` (GL_NEAREST, GL_LINEAR) and clamped at every edge. */
GLuint tomo_gl_texture_new (GLenum target,
                            GLint  filter);

G_END_DECLS
