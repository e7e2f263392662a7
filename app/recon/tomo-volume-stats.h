/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Where the time of a whole-volume reconstruction went.  Each stage's busy
 * time is summed over rows (and devices); the stages overlap, so their sum
 * exceeds the wall time when the pipeline works.  GPU stages are measured
 * with CUDA events; on the CPU backend upload and download are 0 and
 * compute is filter + back projection. */
typedef struct
{
  double wall_ms;
  double read_ms;       /* file, conversion, preprocessing (GPU: waiting for the readers;
                         * with gpu_preprocess, the file read only) */
  double reader_ms;     /* GPU: reader threads' busy time, summed */
  double upload_ms;
  double compute_ms;    /* filter + back projection */
  double download_ms;
  double write_ms;      /* handing slices to the sink (an export: its writer threads' busy time) */
  double sink_ms;       /* an export: the delivering thread inside the sink */
  double wait_ms;       /* the delivering thread idle, waiting for results */
  double setup_ms;      /* GPU: buffers, streams, plans and a dry run before the first row */
  double stall_ms;      /* GPU: issuing threads waiting for a free slot or a download */
  guint pack;           /* slices per back projection */
  guint n_devices;      /* GPUs used; 0 for the CPU backend */
  guint n_rows;
  gboolean gpu_preprocess;  /* raw counts uploaded, preprocessed on the device */
  /* Values preprocessed, clamped and replaced (as TomoPreprocessStats);
   * filled where the backend counts them (the GPU path). */
  guint64 n_values, n_nonpositive, n_nonfinite;
} TomoVolumeStats;

G_END_DECLS
