/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "fuzz-common.h"
#include "tomo-memory.h"

static char *scratch_dir;

static void
remove_scratch (void)
{
  g_autoptr(GDir) dir = scratch_dir ? g_dir_open (scratch_dir, 0, NULL) : NULL;
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (scratch_dir, name, NULL);
      g_unlink (path);
    }
  if (scratch_dir != NULL)
    g_rmdir (scratch_dir);
}

void
fuzz_init (void)
{
  static gboolean done;

  if (done)
    return;
  done = TRUE;
  tomo_memory_set_limit ((guint64) 256 << 20);
  scratch_dir = g_dir_make_tmp ("tomo-fuzz-XXXXXX", NULL);
  g_assert (scratch_dir != NULL);
  atexit (remove_scratch);
}

const char *
fuzz_scratch_file (const char    *suffix,
                   const uint8_t *data,
                   size_t         size)
{
  static GHashTable *paths;
  char *path;

  fuzz_init ();
  if (paths == NULL)
    paths = g_hash_table_new (g_str_hash, g_str_equal);
  path = g_hash_table_lookup (paths, suffix);
  if (path == NULL)
    {
      path = g_strdup_printf ("%s/input%s", scratch_dir, suffix);
      g_hash_table_insert (paths, g_strdup (suffix), path);
    }
  if (!g_file_set_contents (path, (const char *) data, size, NULL))
    abort ();
  return path;
}

#include "fuzz-scan-common.h"

void
fuzz_exercise_scan (TomoScan *scan)
{
  guint w = tomo_scan_get_width (scan);
  guint h = tomo_scan_get_height (scan);
  guint n = tomo_scan_get_n_projections (scan);
  g_autofree char *text = tomo_scan_describe (scan);
  g_autofree float *row = g_try_new (float, (gsize) n * w);
  g_autofree float *flat = g_try_new (float, w);
  g_autofree float *dark = g_try_new (float, w);
  guint rows[2] = { 0, h - 1 };

  if (row == NULL || flat == NULL || dark == NULL)
    abort ();   /* the memory budget should have refused the scan */
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GError) error = NULL;
      TomoPreprocessStats stats = { 0 };

      if (tomo_scan_read_sinogram (scan, rows[i], row, &stats, &error))
        for (gsize k = 0; k < (gsize) n * w; k++)
          if (!isfinite (row[k]))
            abort ();   /* documented: never NaN or Inf */
      g_clear_error (&error);
      tomo_scan_read_flat_dark (scan, rows[i], flat, dark, &error);
    }
}
