/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Window/level and colour map of a float slice.
 *
 * u_slice holds raw reconstructed values (R32F, nearest: GLES 3.0 cannot
 * filter float textures linearly, and scientists want to see real pixels).
 * u_lut is a 256 × 1 RGBA8 colour map; values are mapped so that u_min lands
 * on the centre of texel 0 and u_max on the centre of texel 255, which makes
 * the end points exact (gray: min → 0, max → 255). */
in vec2 v_tex;

uniform sampler2D u_slice;
uniform sampler2D u_lut;
uniform float u_min;
uniform float u_max;
uniform vec4 u_nan_color;

out vec4 frag_color;

void
main ()
{
  float value = texture (u_slice, v_tex).r;

  /* NaN compares unequal to itself; ±Inf would poison the division below. */
  if (value != value || abs (value) > 3.0e38)
    {
      frag_color = u_nan_color;
      return;
    }

  float range = u_max - u_min;
  float t = range > 0.0 ? (value - u_min) / range : (value >= u_max ? 1.0 : 0.0);
  t = clamp (t, 0.0, 1.0);
  frag_color = vec4 (texture (u_lut, vec2 ((t * 255.0 + 0.5) / 256.0, 0.5)).rgb, 1.0);
}
