/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Small GL pieces the GL views share (the context must be current).
 */
#pragma once

#include <epoxy/gl.h>
#include <gdk/gdk.h>

#include "tomo-colormap.h"

G_BEGIN_DECLS

/* A new texture of `target` (GL_TEXTURE_2D or GL_TEXTURE_3D), left bound,
 * sampled with `filter` (GL_NEAREST, GL_LINEAR) and clamped at every edge. */
GLuint tomo_gl_texture_new (GLenum target,
                            GLint  filter);

/* The colour map's lookup table into the bound GL_TEXTURE_2D (RGBA8,
 * TOMO_COLORMAP_LUT_SIZE × 1). */
void   tomo_gl_upload_lut  (TomoColormap colormap);

/* A program linked from two GLSL bodies written without a #version line:
 * "330 core" or, on GLES, "300 es" with high precision is put in front of
 * each. `attrib0`, when not NULL, is bound to attribute location 0. The
 * names say in errors which shader failed to compile (`vertex_name`,
 * `fragment_name`) or which program failed to link (`program_name`), with
 * the driver's log. 0 and `error` set on failure. */
GLuint tomo_gl_program_new (const char  *vertex_source,
                            const char  *vertex_name,
                            const char  *fragment_source,
                            const char  *fragment_name,
                            const char  *attrib0,
                            const char  *program_name,
                            GError     **error);

G_END_DECLS
