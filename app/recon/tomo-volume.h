/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-plane.h"
#include "tomo-preview.h"
#include "tomo-scan.h"
#include "tomo-types.h"

G_BEGIN_DECLS

/* Volume-resident reconstruction: the filtered sinograms of rows
 * [row_start, row_end) of a scan are computed once and kept — on the GPU
 * (float, or half when float does not fit) or in host memory for the CPU
 * backend — and any plane (XY at a row, XZ, YZ, oblique) is then pure back
 * projection.  Kept until the filter, the padding or the data change (a new
 * TomoVolume).  When the GPU cannot hold even half, AUTO falls back to the
 * CPU with a note in tomo_volume_describe(); GPU asked explicitly → the
 * error. */
typedef struct _TomoVolume TomoVolume;

/* gpu_memory_limit: bytes the GPU store may take (0: what is free). */
TomoVolume *tomo_volume_new       (TomoScan              *scan,
                                   guint                  row_start,
                                   guint                  row_end,
                                   const TomoReconParams *params,
                                   TomoBackend            backend,
                                   guint64                gpu_memory_limit,
                                   GError               **error);
void        tomo_volume_free      (TomoVolume *volume);

/* Reads and filters every row (progress may be NULL; cancel polled). */
gboolean    tomo_volume_fill      (TomoVolume *volume,
                                   void      (*progress) (guint done, guint total, gpointer data),
                                   gpointer    data,
                                   volatile gint *cancel,
                                   GError    **error);

/* plane->width × plane->height floats into out. */
gboolean    tomo_volume_plane     (TomoVolume       *volume,
                                   const TomoPlane  *plane,
                                   double            center,
                                   TomoInterp        interp,
                                   float            *out,
                                   GError          **error);

/* A preview volume (tomo-preview.h) of the store's rows into
 * request->out; request->ms its time. */
gboolean    tomo_volume_preview   (TomoVolume         *volume,
                                   TomoPreviewRequest *request,
                                   GError            **error);
/* tomo_volume_preview() for a display that takes the volume on the device
 * when it can: with request->keep_on_device, a failure there (the copy it
 * keeps, its statistics, device memory) is not the end: the same preview
 * is made again into host memory, request->out, allocated here when NULL
 * (g_free it), and *device_error (may be NULL) says why the device copy
 * failed.  FALSE only when the preview through host memory fails too. */
gboolean    tomo_volume_preview_or_host (TomoVolume         *volume,
                                         TomoPreviewRequest *request,
                                         GError            **device_error,
                                         GError            **error);

TomoBackend tomo_volume_get_backend (TomoVolume *volume);
/* "GPU store, float, 1.23 GiB" / "CPU store, 0.10 GiB (GPU: …)" */
char       *tomo_volume_describe    (TomoVolume *volume);
/* Milliseconds of the last plane's back projection. */
double      tomo_volume_get_plane_ms (TomoVolume *volume);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoVolume, tomo_volume_free)

G_END_DECLS
