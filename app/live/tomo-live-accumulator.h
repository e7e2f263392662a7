/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-engine.h"
#include "tomo-preprocess.h"
#include "tomo-types.h"

G_BEGIN_DECLS

/* One slice under a live scan, built incrementally: back projection is a sum
 * over projections, so projections that arrive are filtered and added on
 * their own (weight +1), and those leaving a sliding window subtracted
 * (weight −1).  The result equals a reconstruction from the projections
 * added so far, scaled as one of `n_scan` projections (the FBP factor
 * π/(2·n_scan)).  Filtering runs on the CPU (FFTW); the sum is kept and
 * added to by the engine's backend (tomo-backend.h: accumulate) — on the
 * device with the GPU backend when asked for and present, else on the CPU. */
typedef struct _TomoLiveAccumulator TomoLiveAccumulator;

TomoLiveAccumulator *tomo_live_accumulator_new   (guint                  width,
                                                  guint                  n_scan,
                                                  const TomoReconParams *params,
                                                  TomoBackend            backend,
                                                  GError               **error);
void          tomo_live_accumulator_free         (TomoLiveAccumulator *self);
TomoBackend   tomo_live_accumulator_get_backend  (TomoLiveAccumulator *self);
void          tomo_live_accumulator_clear        (TomoLiveAccumulator *self);
/* `sino` holds n preprocessed detector rows (n × width), `angles` radians. */
gboolean      tomo_live_accumulator_add          (TomoLiveAccumulator *self,
                                                  const float         *sino,
                                                  const double        *angles,
                                                  guint                n,
                                                  float                weight,
                                                  GError             **error);
/* n rows of raw counts (n × width) with their flat field (flat and dark
 * rows of width, or NULL when not normalised), for `slots` at `angles`
 * (radians). */
typedef struct
{
  const float *raw;
  TomoFlatField ff;
  const guint *slots;
  const double *angles;
  guint n;
} TomoLiveRows;

/* Puts `rows` into their slots: a slot already in the slice leaves it
 * first.  With a backend that computes live slices itself (the GPU) the
 * rows are preprocessed, filtered, kept and summed there; else they are
 * preprocessed and filtered here and kept on the host. */
gboolean      tomo_live_accumulator_put          (TomoLiveAccumulator *self,
                                                  const TomoLiveRows  *rows,
                                                  GError             **error);
/* Projections in the slice (distinct slots put since the last clear). */
guint         tomo_live_accumulator_get_n        (TomoLiveAccumulator *self);
/* The slice now as the engine's slices (row `row`, statistics in
 * slice->values, a device copy with the GPU); slice->data stays NULL when
 * `device_only` and the sum is on a device. */
TomoSlice    *tomo_live_accumulator_dup_slice    (TomoLiveAccumulator *self,
                                                  guint                row,
                                                  gboolean             device_only,
                                                  GError             **error);
/* The slice now (width × width floats; owned by the accumulator). */
const float  *tomo_live_accumulator_get_image    (TomoLiveAccumulator *self,
                                                  GError             **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoLiveAccumulator, tomo_live_accumulator_free)

G_END_DECLS
