/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The store's preview volume: nx × ny × nz voxels over the W × W slice and
 * the rows held, back projected from a reduced copy of the filtered
 * sinograms.  What it approximates: the full reconstruction averaged over
 * each voxel — the rows of a slab (n_rows / nz of them) are averaged, each
 * projection's detector is averaged over `bin` columns (a box of the voxel's
 * width along the detector: a smooth low-pass of the slice), and every
 * `step`-th projection is used, weighted by P / Pb (enough projections for
 * the binned detector: Pb ≥ 2 · max (nx, ny) where the scan has them).
 * The CPU computes it with tomo_preview_backproject(), the GPU with one
 * kernel from a copy made once per fill (gpu/tomo-gpu-store-preview.cu);
 * both follow the formulas here.
 */
#pragma once

#include "tomo-plane.h"

G_BEGIN_DECLS

typedef struct
{
  guint nx, ny, nz;      /* voxels; z is the detector row */
  guint bin, step;       /* detector columns per bin; projection step */
} TomoPreviewGeometry;

/* A preview asked of a volume store: nx × ny × nz voxels at `center` with
 * `interp` into out (nz × ny × nx floats, z slowest); ms: the time it took
 * (on the GPU the kernel's, CUDA events, without the download).
 * keep_on_device: a store on a device leaves the volume there instead of
 * writing out (which may then be NULL) — device_buffer and device_ops (the
 * TomoDeviceBufferOps of tomo-backend.h; the caller frees the buffer with
 * them), for CUDA–GL interop; a store without a device writes out.  min,
 * max: of the finite values (0 when none), computed where the volume is. */
typedef struct
{
  guint nx, ny, nz;
  double center;
  TomoInterp interp;
  float *out;
  double ms;
  gboolean keep_on_device;
  gpointer device_buffer;
  gconstpointer device_ops;
  float min, max;
} TomoPreviewRequest;

/* bin = max (1, W / max (nx, ny)), step = max (1, P / (2 · max (nx, ny))). */
void     tomo_preview_geometry_init (TomoPreviewGeometry *geometry,
                                     guint                width,
                                     guint                n_proj,
                                     guint                nx,
                                     guint                ny,
                                     guint                nz);
/* Sides 1 … 4096; FALSE with TOMO_RECON_ERROR_INVALID_PARAM naming them. */
gboolean tomo_preview_geometry_check (const TomoPreviewGeometry *geometry,
                                      GError                   **error);

/* The preview of `source` into out (nz × ny × nx floats, z slowest):
 * voxel (ix, iy, k) centred at ((ix + ½)·W/nx − ½, (iy + ½)·W/ny − ½) in
 * slice pixels, slab k of rows [⌊k·R/nz⌋, max (that + 1, ⌊(k+1)·R/nz⌋));
 * value (P/Pb) Σ_pb interp (binned row, (t − (bin − 1)/2) / bin) with
 * t = x cos θ − y sin θ + centre, zero off the binned detector.
 * n_threads 0 = all cores. */
void     tomo_preview_backproject (const TomoPlaneSource     *source,
                                   const TomoPreviewGeometry *geometry,
                                   double                     center,
                                   TomoInterp                 interp,
                                   guint                      n_threads,
                                   float                     *out);

G_END_DECLS
