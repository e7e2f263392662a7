/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Whole-volume reconstruction: rows are cut into groups of `pack` slices
 * (4, 2 or 1: as many as one back projection reconstructs at once), and the
 * groups are dealt round-robin to one worker thread per device.  Each worker
 * keeps N_SLOTS slots and three streams, so that while the compute stream
 * filters and back projects group k, the host reads group k+1 and the upload
 * stream carries it, and the download stream brings back group k−1:
 *
 *   host read k+1 ─ upload k+1 ─┐
 *                 filter+bp k ──┼── download k−1 ─ deliver k−1
 *
 * Events order the streams per slot: an upload into a slot waits for the
 * compute that last read it; a download waits for its compute.  Finished
 * groups go to the calling thread through a queue; it hands slices to
 * `write` strictly in row order and then frees the slot for the worker.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <string.h>

#include <cuda_runtime.h>

#include "tomo-gpu.h"
#include "tomo-gpu-bp.h"
#include "tomo-gpu-private.h"
#include "tomo-gpu-rows.h"

/* Four slots, at most N_SLOTS − 1 groups queued on the GPU.  The worker
 * reads group k+1 on the host only after it has waited for the download of
 * the oldest queued group; with three slots that is group k−1, whose
 * download ends after the compute of k has started, so the read of k+1
 * (as long as a back projection for uint16 rows in memory) began a
 * download later than the GPU needed it, every group (H100, 2048³: +22 %
 * wall over the kernels).  With four, the wait is for group k−2, done
 * while k−1 computes: the read of k+1 overlaps the compute of k−1 and k,
 * and the calling thread has one group of slack to write a slot out. */
#define N_SLOTS 4

typedef struct _Pipeline Pipeline;
typedef struct _Worker Worker;

typedef struct
{
  Worker *worker;   /* NULL: the worker's exit notice */
  guint group;
  guint slot;
  GError *error;    /* exit notice of a failed worker */
} Item;

struct _Worker
{
  Pipeline *pl;
  int device;
  guint index;      /* first group; then every n_workers-th */
  GThread *thread;

  TomoGpuContext *ctx;
  cudaStream_t up, comp, down;
  cudaEvent_t ev_up[N_SLOTS], ev_comp[N_SLOTS], ev_down[N_SLOTS];
  /* Start of each stage's work on its stream (the ends are the above). */
  cudaEvent_t t_up[N_SLOTS], t_comp[N_SLOTS], t_down[N_SLOTS];
  double read_ms, upload_ms, compute_ms, download_ms;
  double stall_ms;  /* waiting for a free slot or a download */
  float *h_in[N_SLOTS], *h_out[N_SLOTS];
  float *d_in[N_SLOTS], *d_out[N_SLOTS];
  /* Raw jobs: d_in holds the raw values, flats and darks; the kernel
   * writes line integrals into d_sino and counts into d_counts. */
  float *d_sino;
  /* Jobs with row_taps: the resampled line integrals the filter reads. */
  float *d_shift;
  unsigned long long *d_counts[N_SLOTS], *h_counts[N_SLOTS];

  GMutex lock;
  GCond cond;
  gboolean slot_busy[N_SLOTS];  /* slices of the slot not yet written */
};

struct _Pipeline
{
  const TomoGpuVolumeJob *job;
  TomoGpuBackprojectParams bp;
  guint pack;
  guint n_rows, n_groups;
  guint roi_w, roi_h;
  size_t in_floats, out_floats;   /* per slot */
  size_t in_bytes;                /* per slot: in_floats floats, or the raw layout */
  size_t raw_bytes;               /* raw jobs: offset of the flats in a slot */
  gboolean raw;
  gboolean shift;                 /* the job resamples rows (row_taps) */
  Worker *workers;
  guint n_workers;
  GAsyncQueue *queue;
  GMutex read_lock;   /* `read` is called by one worker at a time */
  TomoGpuRowPool *readers; /* read_concurrent jobs: a group's rows in parallel */
  gint stop;
};

static void
worker_release (Worker *w)
{
  if (w->device < 0)
    return;
  TOMO_CUDA_WARN (cudaSetDevice (w->device));
  for (int s = 0; s < N_SLOTS; s++)
    {
      TOMO_CUDA_FREE_HOST (w->h_in[s], w->h_out[s], w->h_counts[s]);
      TOMO_CUDA_FREE (w->d_in[s], w->d_out[s], w->d_counts[s]);
      TOMO_CUDA_EVENT_DESTROY (w->ev_up[s], w->ev_comp[s], w->ev_down[s], w->t_up[s], w->t_comp[s], w->t_down[s]);
    }
  TOMO_CUDA_FREE (w->d_sino, w->d_shift);
  TOMO_CUDA_STREAM_DESTROY (w->up, w->comp, w->down);
  g_clear_pointer (&w->ctx, tomo_gpu_context_free);
}

/* The line integrals of slot s as they come: the upload itself, or the
 * preprocessed raw rows. */
static const float *
worker_line_integrals (Worker *w,
                       guint   s)
{
  return w->pl->raw ? w->d_sino : w->d_in[s];
}

/* What the filter reads from slot s: those, or them resampled. */
static const float *
worker_sinograms (Worker *w,
                  guint   s)
{
  return w->pl->shift ? w->d_shift : worker_line_integrals (w, s);
}

/* Jobs with row_taps, on the compute stream: the rows of `group` in slot s
 * resampled into d_shift (rows past row_end copied as they are). */
static gboolean
worker_shift (Worker  *w,
              guint    s,
              guint    group,
              GError **error)
{
  Pipeline *pl = w->pl;
  const TomoGpuVolumeJob *job = pl->job;
  TomoGpuRowTaps taps[4];

  if (!pl->shift)
    return TRUE;
  g_assert (pl->pack <= G_N_ELEMENTS (taps));
  for (guint i = 0; i < pl->pack; i++)
    {
      guint row = job->row_start + group * pl->pack + i;

      /* The identity: in[u − 1 + 1]. */
      taps[i] = (TomoGpuRowTaps) { -1, { 0.0f, 1.0f, 0.0f, 0.0f } };
      if (row < job->row_end)
        job->row_taps (row, &taps[i].offset, taps[i].weights, job->user_data);
    }
  return _tomo_gpu_row_taps_launch (worker_line_integrals (w, s), w->d_shift, pl->pack,
                                    (size_t) job->n_proj * job->width, job->width, taps, w->comp,
                                    error);
}

/* Raw jobs, on the compute stream: the raw rows of slot s → d_sino, their
 * counts → d_counts[s]. */
static gboolean
worker_preprocess (Worker  *w,
                   guint    s,
                   GError **error)
{
  Pipeline *pl = w->pl;
  const TomoGpuVolumeJob *job = pl->job;
  const char *base = (const char *) w->d_in[s];
  const float *flat = (const float *) (base + pl->raw_bytes);
  TomoGpuPreprocessJob pre = { job->raw_type, base, flat, flat + (size_t) pl->pack * job->width, job->normalise,
                               job->apply_log, pl->pack, (size_t) job->n_proj * job->width, job->width,
                               w->d_sino, w->d_counts[s] };

  if (!pl->raw)
    return TRUE;
  return TOMO_CUDA_CHECK (cudaMemsetAsync (w->d_counts[s], 0,
                                           2 * (size_t) pl->pack * sizeof (unsigned long long),
                                           w->comp), error) &&
         _tomo_gpu_preprocess_launch (&pre, w->comp, error);
}

/* One filter and back projection of zeros in slot 0: creates the plans and
 * whatever the kernels allocate on first use, and checks the job's
 * parameters before any row is read. */
static gboolean
worker_dry_run (Worker  *w,
                GError **error)
{
  Pipeline *pl = w->pl;

  return TOMO_CUDA_CHECK (cudaMemsetAsync (w->d_in[0], 0, pl->in_bytes, w->comp), error) &&
         worker_preprocess (w, 0, error) &&
         worker_shift (w, 0, 0, error) &&
         _tomo_gpu_context_filter_device (w->ctx, pl->pack, worker_sinograms (w, 0), w->comp, error) &&
         _tomo_gpu_context_backproject_to (w->ctx, &pl->bp, w->d_out[0], w->comp, error) &&
         TOMO_CUDA_CHECK (cudaStreamSynchronize (w->comp), error);
}

/* Everything a worker needs, allocated up front (and one dry run of the
 * filter and back projection, which creates the cuFFT plans), so that an
 * out-of-memory shows here and the pipeline can retry with smaller groups. */
static gboolean
worker_prepare (Worker  *w,
                GError **error)
{
  Pipeline *pl = w->pl;
  const TomoGpuVolumeJob *job = pl->job;
  size_t in_bytes = pl->in_bytes;
  size_t out_bytes = pl->out_floats * sizeof (float);
  size_t counts_bytes = 2 * (size_t) pl->pack * sizeof (unsigned long long);

  w->ctx = tomo_gpu_context_new (w->device, error);
  if (w->ctx == NULL ||
      !tomo_gpu_context_set_geometry (w->ctx, job->width, job->n_proj, job->angles, error) ||
      !tomo_gpu_context_set_filter (w->ctx, job->padded_width, job->response, job->pad_mode, error))
    return FALSE;
  if (!TOMO_CUDA_CHECK (cudaSetDevice (w->device), error) ||
      !TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&w->up, cudaStreamNonBlocking), error) ||
      !TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&w->comp, cudaStreamNonBlocking), error) ||
      !TOMO_CUDA_CHECK (cudaStreamCreateWithFlags (&w->down, cudaStreamNonBlocking), error))
    return FALSE;
  for (int s = 0; s < N_SLOTS; s++)
    {
      if (!TOMO_CUDA_CHECK (cudaEventCreate (&w->ev_up[s]), error) ||
          !TOMO_CUDA_CHECK (cudaEventCreate (&w->ev_comp[s]), error) ||
          !TOMO_CUDA_CHECK (cudaEventCreate (&w->ev_down[s]), error) ||
          !TOMO_CUDA_CHECK (cudaEventCreate (&w->t_up[s]), error) ||
          !TOMO_CUDA_CHECK (cudaEventCreate (&w->t_comp[s]), error) ||
          !TOMO_CUDA_CHECK (cudaEventCreate (&w->t_down[s]), error) ||
          !TOMO_CUDA_CHECK (cudaHostAlloc ((void **) &w->h_in[s], in_bytes, cudaHostAllocPortable), error) ||
          !TOMO_CUDA_CHECK (cudaHostAlloc ((void **) &w->h_out[s], out_bytes, cudaHostAllocPortable), error) ||
          !TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_in[s], in_bytes), error) ||
          !TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_out[s], out_bytes), error))
        return FALSE;
      if (pl->raw &&
          (!TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_counts[s], counts_bytes), error) ||
           !TOMO_CUDA_CHECK (cudaHostAlloc ((void **) &w->h_counts[s], counts_bytes,
                                            cudaHostAllocPortable), error)))
        return FALSE;
      /* Recorded once so the first waits on them pass at once. */
      if (!TOMO_CUDA_CHECK (cudaEventRecord (w->ev_comp[s], w->comp), error))
        return FALSE;
    }
  if (pl->raw &&
      !TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_sino, pl->in_floats * sizeof (float)), error))
    return FALSE;
  if (pl->shift &&
      !TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_shift, pl->in_floats * sizeof (float)), error))
    return FALSE;
  return worker_dry_run (w, error);
}

/* A kept worker for a new job: its geometry, filter and dry run. */
static gboolean
worker_adopt (Worker   *w,
              Pipeline *pl,
              GError  **error)
{
  const TomoGpuVolumeJob *job = pl->job;

  w->pl = pl;
  w->thread = NULL;
  w->read_ms = w->upload_ms = w->compute_ms = w->download_ms = w->stall_ms = 0;
  memset (w->slot_busy, 0, sizeof w->slot_busy);
  return tomo_gpu_context_set_geometry (w->ctx, job->width, job->n_proj, job->angles, error) &&
         tomo_gpu_context_set_filter (w->ctx, job->padded_width, job->response, job->pad_mode, error) &&
         TOMO_CUDA_CHECK (cudaSetDevice (w->device), error) &&
         (!pl->shift || w->d_shift != NULL ||
          TOMO_CUDA_CHECK (cudaMalloc ((void **) &w->d_shift, pl->in_floats * sizeof (float)), error)) &&
         worker_dry_run (w, error);
}

static gboolean
stopped (Pipeline *pl)
{
  return g_atomic_int_get (&pl->stop) ||
         (pl->job->cancel != NULL && g_atomic_int_get (pl->job->cancel));
}

static void
push_done (Worker *w,
           guint   group,
           guint   slot)
{
  Item *item = g_new0 (Item, 1);

  item->worker = w;
  item->group = group;
  item->slot = slot;
  g_async_queue_push (w->pl->queue, item);
}

typedef struct
{
  Worker *w;
  guint first;   /* row of item 0 */
  float *dst;    /* the slot's pinned input */
} GroupRead;

/* Row first + i of a group into its place in the slot. */
static gboolean
read_one_row (guint     i,
              gpointer  data,
              GError  **error)
{
  GroupRead *gr = (GroupRead *) data;
  Pipeline *pl = gr->w->pl;
  const TomoGpuVolumeJob *job = pl->job;
  size_t plane = (size_t) job->n_proj * job->width;
  guint row = gr->first + i;
  gboolean ok = TRUE;

  if (pl->raw)
    {
      gsize elt = tomo_gpu_raw_type_size (job->raw_type);
      char *raw = (char *) gr->dst + i * plane * elt;
      float *flat = (float *) ((char *) gr->dst + pl->raw_bytes) + (size_t) i * job->width;
      float *dark = flat + (size_t) pl->pack * job->width;

      if (row < job->row_end)
        ok = job->read_raw (row, raw, flat, dark, job->user_data, error);
      else
        {
          /* Rows past the end: counted by nobody, reconstructed and dropped. */
          memset (raw, 0, plane * elt);
          for (guint x = 0; x < job->width; x++)
            {
              flat[x] = 1.0f;
              dark[x] = 0.0f;
            }
        }
    }
  else if (row < job->row_end)
    ok = job->read (row, gr->dst + i * plane, job->user_data, error);
  else
    memset (gr->dst + i * plane, 0, plane * sizeof (float));
  if (!ok && error != NULL && *error == NULL)
    g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                 "Reading sinogram row %u failed (no reason given)", row);
  return ok;
}

/* A group's rows into `dst`: one call at a time under the pipeline's lock,
 * or, when the job allows it, spread over the reader threads. */
static gboolean
worker_read (Worker  *w,
             guint    group,
             float   *dst,
             GError **error)
{
  Pipeline *pl = w->pl;
  GroupRead gr = { w, pl->job->row_start + group * pl->pack, dst };
  gboolean ok;
  gint64 t0;

  if (pl->readers != NULL)
    {
      t0 = g_get_monotonic_time ();
      ok = _tomo_gpu_row_pool_run (pl->readers, pl->pack, read_one_row, &gr, &pl->stop, error);
      w->read_ms += (g_get_monotonic_time () - t0) / 1e3;
      return ok;
    }
  g_mutex_lock (&pl->read_lock);
  t0 = g_get_monotonic_time ();
  ok = _tomo_gpu_row_pool_run (NULL, pl->pack, read_one_row, &gr, NULL, error);
  w->read_ms += (g_get_monotonic_time () - t0) / 1e3;
  g_mutex_unlock (&pl->read_lock);
  return ok;
}

static double
elapsed_ms (cudaEvent_t from,
            cudaEvent_t to)
{
  float ms = 0.0f;

  return cudaEventElapsedTime (&ms, from, to) == cudaSuccess ? ms : 0.0;
}

/* The group in `s` is downloaded: add its stage times. */
static void
worker_add_times (Worker *w,
                  guint   s)
{
  w->upload_ms += elapsed_ms (w->t_up[s], w->ev_up[s]);
  w->compute_ms += elapsed_ms (w->t_comp[s], w->ev_comp[s]);
  w->download_ms += elapsed_ms (w->t_down[s], w->ev_down[s]);
}

static gpointer
worker_run (gpointer data)
{
  Worker *w = (Worker *) data;
  Pipeline *pl = w->pl;
  GError *error = NULL;
  size_t in_bytes = pl->in_bytes;
  size_t out_bytes = pl->out_floats * sizeof (float);
  /* Groups queued on the GPU and not yet handed over, oldest first. */
  guint pend_group[N_SLOTS], pend_slot[N_SLOTS];
  guint n_pend = 0;
  guint k = 0;

  if (!TOMO_CUDA_CHECK (cudaSetDevice (w->device), &error))
    goto out;

  for (guint g = w->index; g < pl->n_groups; g += pl->n_workers, k++)
    {
      guint s = k % N_SLOTS;

      gint64 t_stall = g_get_monotonic_time ();

      g_mutex_lock (&w->lock);
      while (w->slot_busy[s] && !stopped (pl))
        g_cond_wait (&w->cond, &w->lock);
      g_mutex_unlock (&w->lock);
      if (stopped (pl))
        break;

      /* The pinned input of this slot may still be on its way up. */
      if (!TOMO_CUDA_CHECK (cudaEventSynchronize (w->ev_up[s]), &error))
        break;
      w->stall_ms += (g_get_monotonic_time () - t_stall) / 1e3;
      if (!worker_read (w, g, w->h_in[s], &error))
        break;

      if (!TOMO_CUDA_CHECK (cudaStreamWaitEvent (w->up, w->ev_comp[s], 0), &error) ||
          !TOMO_CUDA_CHECK (cudaEventRecord (w->t_up[s], w->up), &error) ||
          !TOMO_CUDA_CHECK (cudaMemcpyAsync (w->d_in[s], w->h_in[s], in_bytes,
                                             cudaMemcpyHostToDevice, w->up), &error) ||
          !TOMO_CUDA_CHECK (cudaEventRecord (w->ev_up[s], w->up), &error) ||
          !TOMO_CUDA_CHECK (cudaStreamWaitEvent (w->comp, w->ev_up[s], 0), &error) ||
          !TOMO_CUDA_CHECK (cudaEventRecord (w->t_comp[s], w->comp), &error) ||
          /* d_out of this slot is free: its last download was waited for
           * before the slot was delivered. */
          !worker_preprocess (w, s, &error) ||
          !worker_shift (w, s, g, &error) ||
          !_tomo_gpu_context_filter_device (w->ctx, pl->pack, worker_sinograms (w, s), w->comp,
                                            &error) ||
          !_tomo_gpu_context_backproject_to (w->ctx, &pl->bp, w->d_out[s], w->comp, &error) ||
          !TOMO_CUDA_CHECK (cudaEventRecord (w->ev_comp[s], w->comp), &error) ||
          !TOMO_CUDA_CHECK (cudaStreamWaitEvent (w->down, w->ev_comp[s], 0), &error) ||
          !TOMO_CUDA_CHECK (cudaEventRecord (w->t_down[s], w->down), &error) ||
          !TOMO_CUDA_CHECK (cudaMemcpyAsync (w->h_out[s], w->d_out[s], out_bytes,
                                             cudaMemcpyDeviceToHost, w->down), &error) ||
          (pl->raw &&
           !TOMO_CUDA_CHECK (cudaMemcpyAsync (w->h_counts[s], w->d_counts[s],
                                              2 * (size_t) pl->pack * sizeof (unsigned long long),
                                              cudaMemcpyDeviceToHost, w->down), &error)) ||
          !TOMO_CUDA_CHECK (cudaEventRecord (w->ev_down[s], w->down), &error))
        break;

      g_mutex_lock (&w->lock);
      w->slot_busy[s] = TRUE;
      g_mutex_unlock (&w->lock);

      pend_group[n_pend] = g;
      pend_slot[n_pend] = s;
      n_pend++;
      /* Keep the GPU fed: only the oldest group is waited for, the newer
       * ones stay queued behind it. */
      if (n_pend == N_SLOTS - 1)
        {
          t_stall = g_get_monotonic_time ();
          if (!TOMO_CUDA_CHECK (cudaEventSynchronize (w->ev_down[pend_slot[0]]), &error))
            break;
          w->stall_ms += (g_get_monotonic_time () - t_stall) / 1e3;
          worker_add_times (w, pend_slot[0]);
          push_done (w, pend_group[0], pend_slot[0]);
          memmove (pend_group, pend_group + 1, (n_pend - 1) * sizeof (guint));
          memmove (pend_slot, pend_slot + 1, (n_pend - 1) * sizeof (guint));
          n_pend--;
        }
    }

  for (guint i = 0; i < n_pend && error == NULL && !stopped (pl); i++)
    if (TOMO_CUDA_CHECK (cudaEventSynchronize (w->ev_down[pend_slot[i]]), &error))
      {
        worker_add_times (w, pend_slot[i]);
        push_done (w, pend_group[i], pend_slot[i]);
      }

out:
  /* Nothing of ours may still run when the calling thread frees the buffers. */
  if (w->up)
    TOMO_CUDA_WARN (cudaStreamSynchronize (w->up));
  if (w->comp)
    TOMO_CUDA_WARN (cudaStreamSynchronize (w->comp));
  if (w->down)
    TOMO_CUDA_WARN (cudaStreamSynchronize (w->down));
  {
    Item *item = g_new0 (Item, 1);
    item->error = error;
    g_async_queue_push (pl->queue, item);
  }
  return NULL;
}

static void
pipeline_release (Pipeline *pl)
{
  for (guint i = 0; i < pl->n_workers; i++)
    {
      worker_release (&pl->workers[i]);
      g_mutex_clear (&pl->workers[i].lock);
      g_cond_clear (&pl->workers[i].cond);
    }
  g_clear_pointer (&pl->workers, g_free);
  pl->n_workers = 0;
}

/* keep_resources: the workers of the last such job that succeeded, with
 * the layout they were allocated for (buffers, streams, contexts). */
typedef struct
{
  Worker *workers;
  guint n_workers, pack;
  size_t in_floats, out_floats, in_bytes, raw_bytes;
  gboolean raw;   /* a resampling buffer (d_shift) is not part of it: a job
                   * that resamples allocates one if the workers lack it,
                   * one that does not leaves it be, so alternating axis
                   * tilts and none keeps the rest */
} Kept;

static GMutex kept_lock;
static Kept kept;

static void
kept_free (Kept *k)
{
  Pipeline tmp;

  if (k->workers == NULL)
    return;
  memset (&tmp, 0, sizeof tmp);
  tmp.workers = k->workers;
  tmp.n_workers = k->n_workers;
  pipeline_release (&tmp);
  memset (k, 0, sizeof *k);
}

void
tomo_gpu_volume_release_kept (void)
{
  Kept k;

  g_mutex_lock (&kept_lock);
  k = kept;
  memset (&kept, 0, sizeof kept);
  g_mutex_unlock (&kept_lock);
  kept_free (&k);
}

static void
pipeline_layout (Pipeline *pl,
                 guint     n_devices)
{
  const TomoGpuVolumeJob *job = pl->job;

  pl->n_groups = (pl->n_rows + pl->pack - 1) / pl->pack;
  pl->n_workers = MIN (n_devices, pl->n_groups);
  pl->in_floats = (size_t) pl->pack * job->n_proj * job->width;
  pl->out_floats = (size_t) pl->pack * pl->roi_w * pl->roi_h;
  pl->in_bytes = pl->in_floats * sizeof (float);
  if (pl->raw)
    {
      /* Raw values, then the pack's flats, then its darks (aligned). */
      pl->raw_bytes = (pl->in_floats * tomo_gpu_raw_type_size (job->raw_type) + 255) & ~(size_t) 255;
      pl->in_bytes = pl->raw_bytes + 2 * (size_t) pl->pack * job->width * sizeof (float);
    }
}

/* The workers of `k` if they were allocated for pl's layout: taken over
 * (k emptied), TRUE.  FALSE with no error: they do not fit, nothing taken. */
static gboolean
pipeline_adopt (Pipeline *pl,
                Kept     *k,
                GError  **error)
{
  if (k->workers == NULL || k->n_workers != pl->n_workers || k->pack != pl->pack ||
      k->in_floats != pl->in_floats || k->out_floats != pl->out_floats ||
      k->in_bytes != pl->in_bytes || k->raw_bytes != pl->raw_bytes || k->raw != pl->raw)
    return FALSE;
  pl->workers = k->workers;
  memset (k, 0, sizeof *k);
  for (guint i = 0; i < pl->n_workers; i++)
    if (!worker_adopt (&pl->workers[i], pl, error))
      return FALSE;
  return TRUE;
}

static gboolean
pipeline_prepare (Pipeline *pl,
                  guint     n_devices,
                  Kept     *k,
                  gboolean *adopted,
                  GError  **error)
{
  GError *local = NULL;

  pipeline_layout (pl, n_devices);
  *adopted = pipeline_adopt (pl, k, &local);
  if (local != NULL)
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  if (*adopted)
    return TRUE;
  /* Kept buffers of another layout: their memory back before allocating. */
  kept_free (k);
  pl->workers = g_new0 (Worker, pl->n_workers);
  for (guint i = 0; i < pl->n_workers; i++)
    {
      Worker *w = &pl->workers[i];

      w->pl = pl;
      w->device = (int) i;
      w->index = i;
      g_mutex_init (&w->lock);
      g_cond_init (&w->cond);
    }
  for (guint i = 0; i < pl->n_workers; i++)
    if (!worker_prepare (&pl->workers[i], error))
      return FALSE;
  return TRUE;
}

static gboolean
check_job (const TomoGpuVolumeJob *job,
           GError                **error)
{
  if (job->width == 0 || job->n_proj == 0 || job->angles == NULL)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid volume geometry: width %u, %u projections%s",
                   job->width, job->n_proj, job->angles ? "" : ", no angles");
      return FALSE;
    }
  if (job->row_end <= job->row_start)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Empty row range [%u, %u)", job->row_start, job->row_end);
      return FALSE;
    }
  if ((job->read == NULL && job->read_raw == NULL) || job->write == NULL || job->response == NULL)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                           "Volume job needs read and write callbacks and a filter response");
      return FALSE;
    }
  if (job->read_raw != NULL && (job->raw_type < TOMO_GPU_RAW_FLOAT32 || job->raw_type > TOMO_GPU_RAW_UINT16))
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid raw input type %d", (int) job->raw_type);
      return FALSE;
    }
  if (job->bp.interp != 0 && job->bp.interp != 1)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid interpolation %d (0 nearest, 1 linear)", job->bp.interp);
      return FALSE;
    }
  if ((int) job->bp.kernel < 0 || job->bp.kernel >= TOMO_GPU_N_KERNELS)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "Invalid back-projection kernel %d", (int) job->bp.kernel);
      return FALSE;
    }
  return TRUE;
}

/* The counts of a delivered raw group, added to `total`: a row mostly NaN
 * or infinite is corrupt (the check of the CPU path's preprocessing). */
static gboolean
deliver_counts (Pipeline                *pl,
                Worker                  *w,
                guint                    slot,
                guint                    first,
                TomoGpuPreprocessCounts *total,
                GError                 **error)
{
  const TomoGpuVolumeJob *job = pl->job;
  guint64 n_values = (guint64) job->n_proj * job->width;

  for (guint i = 0; i < pl->pack && first + i < job->row_end; i++)
    {
      guint64 n_clamped = w->h_counts[slot][2 * i], n_replaced = w->h_counts[slot][2 * i + 1];

      if (n_replaced * 2 > n_values)
        {
          g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                       "%" G_GUINT64_FORMAT " of the %" G_GUINT64_FORMAT " values of row %u are "
                       "NaN, infinite or absurdly large: the data are corrupt",
                       n_replaced, n_values, first + i);
          return FALSE;
        }
      total->n_values += n_values;
      total->n_nonpositive += n_clamped;
      total->n_nonfinite += n_replaced;
    }
  return TRUE;
}

gboolean
tomo_gpu_reconstruct_volume (const TomoGpuVolumeJob *job,
                             GError                **error)
{
  Pipeline pl;
  int n_devices;
  TomoGpuRoi roi;
  /* Slices per back projection, best first: four, in halves, for both
   * interpolations (H100, 2048²: linear 1.68 ms per slice vs 2.12 with
   * two; docs/PERFORMANCE.md). */
  static const guint packs_linear[] = { 4, 2, 1 };
  static const guint packs_nearest[] = { 4, 2, 1 };
  const guint *packs = job->bp.interp ? packs_linear : packs_nearest;
  GError *local = NULL;
  GError *first_error = NULL;
  Kept mine;
  gboolean adopted = FALSE;
  Item **ready = NULL;
  guint next = 0, exited = 0;
  gint64 t_start = g_get_monotonic_time ();
  double write_ms = 0, wait_ms = 0, setup_ms = 0;
  TomoGpuPreprocessCounts counts = { 0, 0, 0 };

  g_return_val_if_fail (job != NULL, FALSE);

  if (job->stats != NULL)
    memset (job->stats, 0, sizeof *job->stats);

  if (!check_job (job, error))
    return FALSE;
  n_devices = tomo_gpu_get_n_devices ();
  if (n_devices <= 0)
    {
      g_set_error_literal (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_NO_DEVICE,
                           "No CUDA device available for the volume reconstruction");
      return FALSE;
    }

  memset (&pl, 0, sizeof pl);
  pl.job = job;
  pl.bp = job->bp;
  pl.n_rows = job->row_end - job->row_start;
  pl.raw = job->read_raw != NULL;
  pl.shift = job->row_taps != NULL;
  if (!tomo_gpu_backproject_params_check (&job->bp, job->width, &roi, error))
    return FALSE;
  pl.roi_w = roi.width;
  pl.roi_h = roi.height;
  g_mutex_init (&pl.read_lock);

  /* Whatever a keep_resources job left: ours to reuse or free. */
  g_mutex_lock (&kept_lock);
  mine = kept;
  memset (&kept, 0, sizeof kept);
  g_mutex_unlock (&kept_lock);

  /* Out of memory → the next smaller group the kernel supports. */
  for (guint i = 0, too_big = G_MAXUINT; i < G_N_ELEMENTS (packs_linear); i++)
    {
      if (packs[i] >= too_big || !tomo_bp_supports (job->bp.kernel, packs[i], job->bp.interp))
        continue;
      pl.pack = packs[i];
      g_clear_error (&local);
      if (pipeline_prepare (&pl, (guint) n_devices, &mine, &adopted, &local))
        break;
      pipeline_release (&pl);
      too_big = pl.pack;
      pl.pack = 0;
      if (!g_error_matches (local, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY))
        break;
    }
  kept_free (&mine);
  if (pl.pack == 0)
    {
      if (local == NULL)
        g_set_error (&local, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                     "The %s kernel supports no slice packing for this interpolation",
                     tomo_gpu_kernel_to_string (job->bp.kernel));
      else if (g_error_matches (local, TOMO_GPU_ERROR, TOMO_GPU_ERROR_OUT_OF_MEMORY))
        g_prefix_error (&local, "Volume of %u rows does not fit the GPU even one slice at a time: ",
                        pl.n_rows);
      g_mutex_clear (&pl.read_lock);
      g_propagate_error (error, local);
      return FALSE;
    }
  g_clear_error (&local);
  setup_ms = (g_get_monotonic_time () - t_start) / 1e3;

  /* The calling worker reads one row of its group, helpers the others. */
  if (job->read_concurrent && pl.pack > 1)
    pl.readers = _tomo_gpu_row_pool_new ((pl.pack - 1) * pl.n_workers);
  pl.queue = g_async_queue_new ();
  ready = g_new0 (Item *, pl.n_groups);
  for (guint i = 0; i < pl.n_workers; i++)
    pl.workers[i].thread = g_thread_new ("tomo-gpu-volume", worker_run, &pl.workers[i]);

  while (exited < pl.n_workers)
    {
      gint64 t_pop = g_get_monotonic_time ();
      Item *item = (Item *) g_async_queue_timeout_pop (pl.queue, 50 * G_TIME_SPAN_MILLISECOND);

      wait_ms += (g_get_monotonic_time () - t_pop) / 1e3;

      if (item == NULL)
        {
          /* Wake workers waiting for a slot so they see a cancel. */
          if (stopped (&pl))
            for (guint i = 0; i < pl.n_workers; i++)
              {
                g_mutex_lock (&pl.workers[i].lock);
                g_cond_broadcast (&pl.workers[i].cond);
                g_mutex_unlock (&pl.workers[i].lock);
              }
          continue;
        }
      if (item->worker == NULL)
        {
          exited++;
          if (item->error != NULL)
            {
              if (first_error == NULL)
                first_error = item->error;
              else
                g_error_free (item->error);
              g_atomic_int_set (&pl.stop, 1);
            }
          g_free (item);
          continue;
        }
      ready[item->group] = item;

      /* Deliver every group that is next in row order. */
      while (next < pl.n_groups && ready[next] != NULL && first_error == NULL && !stopped (&pl))
        {
          Item *it = ready[next];
          Worker *w = it->worker;
          guint first = job->row_start + next * pl.pack;
          size_t plane = (size_t) pl.roi_w * pl.roi_h;
          gint64 t_write = g_get_monotonic_time ();

          if (pl.raw && !deliver_counts (&pl, w, it->slot, first, &counts, &local))
            {
              first_error = local;
              local = NULL;
              g_atomic_int_set (&pl.stop, 1);
            }
          for (guint i = 0; i < pl.pack && first + i < job->row_end; i++)
            {
              if (first_error != NULL || stopped (&pl))
                break;
              if (!job->write (first + i, w->h_out[it->slot] + i * plane, job->user_data, &local))
                {
                  if (local == NULL)
                    g_set_error (&local, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                                 "Writing slice %u failed (no reason given)", first + i);
                  first_error = local;
                  local = NULL;
                  g_atomic_int_set (&pl.stop, 1);
                }
            }
          write_ms += (g_get_monotonic_time () - t_write) / 1e3;
          g_mutex_lock (&w->lock);
          w->slot_busy[it->slot] = FALSE;
          g_cond_broadcast (&w->cond);
          g_mutex_unlock (&w->lock);
          ready[next] = NULL;
          g_free (it);
          next++;
          if (job->progress && first_error == NULL)
            job->progress (MIN (next * pl.pack, pl.n_rows), pl.n_rows, job->user_data);
        }
      if (first_error != NULL || stopped (&pl))
        {
          g_atomic_int_set (&pl.stop, 1);
          for (guint i = 0; i < pl.n_workers; i++)
            {
              g_mutex_lock (&pl.workers[i].lock);
              g_cond_broadcast (&pl.workers[i].cond);
              g_mutex_unlock (&pl.workers[i].lock);
            }
        }
    }

  for (guint i = 0; i < pl.n_workers; i++)
    g_thread_join (pl.workers[i].thread);
  g_clear_pointer (&pl.readers, _tomo_gpu_row_pool_free);
  if (job->stats != NULL)
    {
      TomoGpuVolumeStats *st = job->stats;

      for (guint i = 0; i < pl.n_workers; i++)
        {
          st->read_ms += pl.workers[i].read_ms;
          st->upload_ms += pl.workers[i].upload_ms;
          st->compute_ms += pl.workers[i].compute_ms;
          st->download_ms += pl.workers[i].download_ms;
          st->stall_ms += pl.workers[i].stall_ms;
        }
      st->setup_ms = setup_ms;
      st->write_ms = write_ms;
      st->wait_ms = wait_ms;
      st->preprocess = counts;
      st->pack = pl.pack;
      st->n_devices = pl.n_workers;
      st->kept = adopted;
      st->wall_ms = (g_get_monotonic_time () - t_start) / 1e3;
    }
  for (guint i = 0; i < pl.n_groups; i++)
    g_free (ready[i]);
  g_free (ready);
  g_async_queue_unref (pl.queue);
  if (job->keep_resources && first_error == NULL && next == pl.n_groups)
    {
      /* Every group delivered: all streams idle, every slot free. */
      Kept k = { pl.workers, pl.n_workers, pl.pack, pl.in_floats, pl.out_floats, pl.in_bytes,
                 pl.raw_bytes, pl.raw };

      g_mutex_lock (&kept_lock);
      mine = kept;
      kept = k;
      g_mutex_unlock (&kept_lock);
      kept_free (&mine);
      pl.workers = NULL;
      pl.n_workers = 0;
    }
  else
    pipeline_release (&pl);
  g_mutex_clear (&pl.read_lock);

  if (first_error == NULL && next < pl.n_groups)
    {
      if (job->cancel != NULL && g_atomic_int_get (job->cancel))
        g_set_error (&first_error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                     "Volume reconstruction cancelled after %u of %u rows",
                     MIN (next * pl.pack, pl.n_rows), pl.n_rows);
      else
        g_set_error (&first_error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_CUDA,
                     "Volume reconstruction stopped after %u of %u rows",
                     MIN (next * pl.pack, pl.n_rows), pl.n_rows);
    }
  if (first_error != NULL)
    {
      g_propagate_error (error, first_error);
      return FALSE;
    }
  return TRUE;
}
