/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Without libFuzzer: runs a fuzz target on every file of the folders (or
 * files) given, so the seed corpus and every past crash are replayed by the
 * unit suite in a normal build.  Prints TAP, one line per input.
 */
#include "config.h"

#include <stdio.h>

#include "fuzz-common.h"

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return g_strcmp0 (*(const char * const *) a, *(const char * const *) b);
}

static void
run_one (const char *path,
         guint      *n)
{
  g_autofree char *data = NULL;
  gsize size = 0;

  if (!g_file_get_contents (path, &data, &size, NULL))
    {
      printf ("not ok %u %s # cannot read\n", ++*n, path);
      return;
    }
  LLVMFuzzerTestOneInput ((const uint8_t *) data, size);
  printf ("ok %u %s\n", ++*n, path);
  fflush (stdout);
}

int
main (int    argc,
      char **argv)
{
  guint n = 0;

  for (int i = 1; i < argc; i++)
    {
      g_autoptr(GDir) dir = NULL;
      g_autoptr(GPtrArray) names = NULL;
      const char *name;

      if (g_str_has_prefix (argv[i], "--"))
        continue;   /* --tap from meson */
      if (!g_file_test (argv[i], G_FILE_TEST_IS_DIR))
        {
          run_one (argv[i], &n);
          continue;
        }
      dir = g_dir_open (argv[i], 0, NULL);
      names = g_ptr_array_new_with_free_func (g_free);
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        g_ptr_array_add (names, g_build_filename (argv[i], name, NULL));
      g_ptr_array_sort (names, compare_names);
      for (guint k = 0; k < names->len; k++)
        run_one (names->pdata[k], &n);
    }
  printf ("1..%u\n", n);
  return 0;
}
