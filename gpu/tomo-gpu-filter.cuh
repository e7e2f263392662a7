/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The padding rule of the ramp filter, shared by the context's filter
 * (tomo-gpu.cu) and the live slice (tomo-gpu-accumulate.cu), which pads
 * while it preprocesses.
 */
#pragma once

/* Column of padded sample j: the data, the edge extension or nothing (−1).
 * Circular edge extension: the tail right after the data continues the last
 * value, the part that wraps round to column 0 the first value. */
__device__ static inline int
tomo_gpu_pad_column (unsigned j,
                     unsigned width,
                     unsigned n_left,
                     int      edge)
{
  if (j < width)
    return (int) j;
  if (!edge)
    return -1;
  return j < width + n_left ? (int) width - 1 : 0;
}
