/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Injected device faults and a cap on device memory (TOMO_GPU_FAIL,
 * TOMO_GPU_MEMORY_LIMIT): how a run behaves when the GPU runs out of
 * memory, a launch fails or the device is lost can be tested on a healthy
 * device.  The CUDA side (tomo-gpu.cu) asks _tomo_gpu_fault_hit() at each
 * allocation, launch and checked call.
 */
#define G_LOG_DOMAIN "tomo-gpu"
#include "config.h"

#include <string.h>

#include "tomo-gpu.h"
#include "tomo-gpu-fault.h"

#define MAX_DEVICES 64

static GMutex fault_lock;
static gboolean fault_loaded;
static TomoGpuFaultPoint fault_point;
static gboolean fault_enabled;
static guint64 fault_at = 1;
static guint64 fault_count;
static gboolean fault_lost;
static guint64 fault_limit;
static guint64 fault_baseline[MAX_DEVICES];
static gboolean fault_has_baseline[MAX_DEVICES];

static gboolean
parse_spec (const char        *spec,
            gboolean          *enabled,
            TomoGpuFaultPoint *point,
            guint64           *at,
            GError           **error)
{
  static const struct { const char *name; TomoGpuFaultPoint point; } kinds[] = {
    { "alloc", TOMO_GPU_FAULT_POINT_ALLOC },
    { "launch", TOMO_GPU_FAULT_POINT_LAUNCH },
    { "lost", TOMO_GPU_FAULT_POINT_CALL },
    { "keep", TOMO_GPU_FAULT_POINT_KEEP },
  };
  const char *colon;
  gsize len;

  *enabled = FALSE;
  *at = 1;
  if (spec == NULL || *spec == '\0')
    return TRUE;
  colon = strchr (spec, ':');
  len = colon != NULL ? (gsize) (colon - spec) : strlen (spec);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (len == strlen (kinds[i].name) && strncmp (spec, kinds[i].name, len) == 0)
      {
        *point = kinds[i].point;
        *enabled = TRUE;
      }
  if (!*enabled)
    {
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "TOMO_GPU_FAIL=“%s”: expected alloc, launch, lost or keep, optionally followed by :N",
                   spec);
      return FALSE;
    }
  if (colon != NULL
      && !g_ascii_string_to_unsigned (colon + 1, 10, 1, G_MAXUINT32, at, NULL))
    {
      *enabled = FALSE;
      g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
                   "TOMO_GPU_FAIL=“%s”: N must be a whole number from 1 to %u",
                   spec, G_MAXUINT32);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_limit (const char *text,
             guint64    *limit,
             GError    **error)
{
  static const struct { const char *suffix; guint64 scale; } units[] = {
    { "", 1 }, { "K", 1 << 10 }, { "KiB", 1 << 10 }, { "M", 1 << 20 }, { "MiB", 1 << 20 },
    { "G", 1 << 30 }, { "GiB", 1 << 30 },
  };
  guint64 value;
  char *end = NULL;

  *limit = 0;
  if (text == NULL || *text == '\0')
    return TRUE;
  if (g_ascii_isdigit (*text))
    {
      value = g_ascii_strtoull (text, &end, 10);
      for (guint i = 0; i < G_N_ELEMENTS (units); i++)
        if (strcmp (end, units[i].suffix) == 0 && value > 0
            && value <= G_MAXUINT64 / units[i].scale)
          {
            *limit = value * units[i].scale;
            return TRUE;
          }
    }
  g_set_error (error, TOMO_GPU_ERROR, TOMO_GPU_ERROR_INVALID,
               "TOMO_GPU_MEMORY_LIMIT=“%s”: expected a positive number of bytes, "
               "optionally with K, M or G (binary units)", text);
  return FALSE;
}

static void
apply_locked (gboolean          enabled,
              TomoGpuFaultPoint point,
              guint64           at,
              guint64           limit)
{
  fault_loaded = TRUE;
  fault_enabled = enabled;
  fault_point = point;
  fault_at = at;
  fault_count = 0;
  fault_lost = FALSE;
  fault_limit = limit;
  memset (fault_has_baseline, 0, sizeof fault_has_baseline);
}

gboolean
tomo_gpu_fault_configure (const char *spec,
                          guint64     memory_limit,
                          GError    **error)
{
  gboolean enabled;
  TomoGpuFaultPoint point = TOMO_GPU_FAULT_POINT_ALLOC;
  guint64 at;

  if (!parse_spec (spec, &enabled, &point, &at, error))
    return FALSE;
  g_mutex_lock (&fault_lock);
  apply_locked (enabled, point, at, memory_limit);
  g_mutex_unlock (&fault_lock);
  return TRUE;
}

/* The environment, once, unless tomo_gpu_fault_configure() came first.
 * A bad value is reported and ignored: it must not make a healthy run
 * fail somewhere else. */
static void
load_locked (void)
{
  g_autoptr(GError) error = NULL;
  gboolean enabled;
  TomoGpuFaultPoint point = TOMO_GPU_FAULT_POINT_ALLOC;
  guint64 at, limit;

  if (fault_loaded)
    return;
  if (!parse_spec (g_getenv ("TOMO_GPU_FAIL"), &enabled, &point, &at, &error))
    g_warning ("%s; no fault injected", error->message);
  g_clear_error (&error);
  if (!parse_limit (g_getenv ("TOMO_GPU_MEMORY_LIMIT"), &limit, &error))
    g_warning ("%s; device memory not capped", error->message);
  apply_locked (enabled, point, at, limit);
}

gboolean
_tomo_gpu_fault_hit (TomoGpuFaultPoint point)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&fault_lock);

  load_locked ();
  if (fault_lost)
    return TRUE;
  if (!fault_enabled || fault_point != point || ++fault_count != fault_at)
    return FALSE;
  fault_lost = point == TOMO_GPU_FAULT_POINT_CALL;
  return TRUE;
}

gboolean
_tomo_gpu_fault_is_lost (void)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&fault_lock);

  load_locked ();
  return fault_lost;
}

guint64
_tomo_gpu_fault_memory_limit (void)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&fault_lock);

  load_locked ();
  return fault_limit;
}

guint64
_tomo_gpu_fault_baseline (int     device,
                          guint64 used_now)
{
  guint64 base;

  if (device < 0 || device >= MAX_DEVICES)
    return 0;
  g_mutex_lock (&fault_lock);
  if (!fault_has_baseline[device])
    {
      fault_has_baseline[device] = TRUE;
      fault_baseline[device] = used_now;
    }
  base = fault_baseline[device];
  g_mutex_unlock (&fault_lock);
  return base;
}
