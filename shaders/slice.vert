/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The #version line is prepended at run time: "330 core" on desktop GL,
 * "300 es" on GLES, so one source serves both. */

/* A unit quad ([0,1]²) placed in image pixels by u_rect (x, y, w, h), then
 * to clip space by u_scale/u_offset (zoom and pan, computed on the CPU). */
in vec2 a_pos;

uniform vec4 u_rect;
uniform vec4 u_tex_rect;
uniform vec2 u_scale;
uniform vec2 u_offset;

out vec2 v_tex;

void
main ()
{
  vec2 image = u_rect.xy + a_pos * u_rect.zw;
  v_tex = u_tex_rect.xy + a_pos * u_tex_rect.zw;
  gl_Position = vec4 (image * u_scale + u_offset, 0.0, 1.0);
}
