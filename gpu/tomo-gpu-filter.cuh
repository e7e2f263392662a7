/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The padding rule of the ramp filter and the pad and crop kernels around
 * its transforms (C2C row pairs, R2C rows), shared by the context's filter
 * (tomo-gpu.cu) and the live slice (tomo-gpu-accumulate.cu), which pads
 * while it preprocesses.
 */
#pragma once

#include <cufft.h>

#include "tomo-gpu-preprocess.cuh"

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

/* The padded rows around the transforms: Out float, one padded row per
 * row (R2C); Out cufftComplex, rows 2p and 2p + 1 as the real and imaginary
 * parts of complex row p (C2C pair: two real rows per transform). */
template <typename Out> struct PaddedRows;
template <> struct PaddedRows<float>
{
  static constexpr unsigned N = 1;
  __device__ static float make (const float *v) { return v[0]; }
  __device__ static void split (float o, float *v) { v[0] = o; }
};
template <> struct PaddedRows<cufftComplex>
{
  static constexpr unsigned N = 2;
  __device__ static cufftComplex make (const float *v) { return make_cuComplex (v[0], v[1]); }
  __device__ static void split (cufftComplex o, float *v) { v[0] = o.x; v[1] = o.y; }
};

/* n_rows rows of width floats, padded to `padded` samples.  PRE: each
 * sample first preprocessed with the flat and dark rows (the live slice's
 * raw counts), else taken as it is.  One thread per padded sample;
 * blockIdx.y walks the output rows with a grid stride, so any number of
 * projections fits the 65535 limit of grid.y. */
template <typename Out, bool PRE>
__global__ static void
pad_rows_kernel (const float *__restrict__ in,
                 const float *__restrict__ flat,
                 const float *__restrict__ dark,
                 int                       normalise,
                 int                       apply_log,
                 Out         *__restrict__ out,
                 unsigned                  width,
                 unsigned                  padded,
                 unsigned                  n_rows,
                 unsigned                  n_left,
                 int                       edge)
{
  constexpr unsigned N = PaddedRows<Out>::N;
  unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
  int col, flags;
  float fl = 1.0f, dk = 0.0f;

  if (j >= padded)
    return;
  col = tomo_gpu_pad_column (j, width, n_left, edge);
  if (PRE && normalise && col >= 0)
    {
      fl = flat[col];
      dk = dark[col];
    }
  for (unsigned p = blockIdx.y; p < (n_rows + N - 1) / N; p += gridDim.y)
    {
      float v[N] = {};

#pragma unroll
      for (unsigned m = 0; m < N; m++)
        if (col >= 0 && N * p + m < n_rows)
          {
            v[m] = in[(size_t) (N * p + m) * width + col];
            if (PRE)
              v[m] = tomo_gpu_preprocess_value (v[m], fl, dk, normalise, apply_log, &flags);
          }
      out[(size_t) p * padded + j] = PaddedRows<Out>::make (v);
    }
}

/* The inverse: the first width samples of each padded row back into row r
 * at out + idx[r] · width (idx NULL: out + r · width). */
template <typename Out>
__global__ static void
extract_rows_kernel (const Out   *__restrict__ in,
                     float       *__restrict__ out,
                     const int   *__restrict__ idx,
                     unsigned                  width,
                     unsigned                  padded,
                     unsigned                  n_rows)
{
  constexpr unsigned N = PaddedRows<Out>::N;
  unsigned j = blockIdx.x * blockDim.x + threadIdx.x;

  if (j >= width)
    return;
  for (unsigned p = blockIdx.y; p < (n_rows + N - 1) / N; p += gridDim.y)
    {
      float v[N];

      PaddedRows<Out>::split (in[(size_t) p * padded + j], v);
#pragma unroll
      for (unsigned m = 0; m < N; m++)
        if (N * p + m < n_rows)
          out[(size_t) (idx != NULL ? idx[N * p + m] : N * p + m) * width + j] = v[m];
    }
}
