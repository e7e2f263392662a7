/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Hostile inputs and unsafe outputs, each as a user would meet it: the
 * test writes the bad file itself, runs the loader or `tomolive` on it and
 * asserts the error the user sees — and that no data were lost.  The
 * catalogue in docs/RELIABILITY.md names the test that holds each case.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tomo-error.h"
#include "tomo-output.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"
#include "tomo-test-util.h"
#include "tomo-tiff-writer.h"

#define RUN TOMO_TEST_RUN

static char *tmp_dir;
static char *small_scan;   /* 64 × 8 × 90 phantom, written once */

static char *
tmp_path (const char *name)
{
  return g_build_filename (tmp_dir, name, NULL);
}

static void
write_file (const char *path,
            const char *contents,
            gssize      len)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, len, &error);
  g_assert_no_error (error);
}

static char *
read_file (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  return contents;
}

/* No "*.part" left in `dir`. */
static void
assert_no_temporaries (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    if (g_str_has_suffix (name, ".part"))
      g_error ("temporary file %s/%s left behind", dir, name);
}

/* ---- outputs ------------------------------------------------------------- */

static void
test_output_is_input (void)
{
  g_autofree char *copy = tmp_path ("scan-copy.h5");
  g_autofree char *hard = tmp_path ("scan-hard.h5");
  g_autofree char *sym = tmp_path ("scan-sym.h5");
  g_autofree char *dotted = NULL;
  g_autofree char *before = NULL, *after = NULL;
  gsize len_before, len_after;

  g_assert_true (g_file_get_contents (small_scan, &before, &len_before, NULL));
  g_assert_true (g_file_set_contents (copy, before, len_before, NULL));
  g_assert_cmpint (link (copy, hard), ==, 0);
  g_assert_cmpint (symlink (copy, sym), ==, 0);
  dotted = g_build_filename (tmp_dir, ".", "scan-copy.h5", NULL);

  /* By name, by another name of the same inode, through a link. */
  for (guint i = 0; i < 4; i++)
    {
      const char *out = (const char *[]) { copy, hard, sym, dotted }[i];
      g_auto(TomoTestResult) r = { 0 };

      RUN (&r, "reconstruct", copy, "--row", "3", "-o", out);
      tomo_test_assert_fails_with (&r, "is the input");
    }
  g_assert_true (g_file_get_contents (copy, &after, &len_after, NULL));
  g_assert_cmpmem (before, len_before, after, len_after);
  assert_no_temporaries (tmp_dir);
  g_unlink (sym);
  g_unlink (hard);
  g_unlink (copy);
}

static void
test_output_is_aux_input (void)
{
  g_autofree char *angles = tmp_path ("angles.txt");
  g_autofree char *stack = tmp_path ("aux-stack");
  g_autofree char *flat = tmp_path ("aux-flat.tif");
  g_autofree char *proj = NULL;
  g_autofree char *text = NULL;
  float frame[16 * 4];
  GString *a = g_string_new (NULL);

  g_assert_cmpint (g_mkdir (stack, 0755), ==, 0);
  for (guint p = 0; p < 8; p++)
    {
      g_autofree char *name = g_strdup_printf ("p%02u.tif", p);
      g_autofree char *path = g_build_filename (stack, name, NULL);

      for (guint i = 0; i < G_N_ELEMENTS (frame); i++)
        frame[i] = 500 + p + i % 7;
      g_assert_true (tomo_tiff_write_float (path, frame, 16, 4, 1, NULL));
      g_string_append_printf (a, "%g\n", p * 22.5);
      if (p == 3)
        proj = g_steal_pointer (&path);
    }
  for (guint i = 0; i < G_N_ELEMENTS (frame); i++)
    frame[i] = 1000;
  g_assert_true (tomo_tiff_write_float (flat, frame, 16, 4, 1, NULL));
  write_file (angles, a->str, -1);
  g_string_free (a, TRUE);

  /* The angle file, the flats, one page of the stack, and the stack's folder. */
  {
    const char *outs[] = { angles, flat, proj };
    for (guint i = 0; i < G_N_ELEMENTS (outs); i++)
      {
        g_auto(TomoTestResult) r = { 0 };

        RUN (&r, "reconstruct", stack, "--flats", flat, "--angles", angles, "-o", outs[i]);
        tomo_test_assert_fails_with (&r, "is the input");
      }
  }
  {
    g_auto(TomoTestResult) r = { 0 };

    RUN (&r, "reconstruct", stack, "--flats", flat, "--angles", angles, "--rows", "0:4",
         "-o", stack);
    tomo_test_assert_fails_with (&r, "holds the input");
  }
  text = read_file (angles);
  g_assert_true (g_str_has_prefix (text, "0\n22.5\n"));
  {
    g_auto(TomoTestResult) r = { 0 };
    g_autofree char *ok_out = tmp_path ("aux-ok.tif");

    RUN (&r, "reconstruct", stack, "--flats", flat, "--angles", angles, "-o", ok_out);
    g_assert_cmpint (r.status, ==, 0);
    g_unlink (ok_out);
  }
}

static void
test_output_dev_null (void)
{
  struct stat before, after;
  g_auto(TomoTestResult) r = { 0 };

  g_assert_cmpint (stat ("/dev/null", &before), ==, 0);
  /* An error after the output was opened must not remove what the program did
   * not create. */
  RUN (&r, "reconstruct", small_scan, "--roi", "0,0,1000,5", "-o", "/dev/null");
  tomo_test_assert_fails_with (&r, "does not fit");
  g_assert_cmpint (stat ("/dev/null", &after), ==, 0);
  g_assert_true (S_ISCHR (after.st_mode));
  g_assert_cmpuint (before.st_rdev, ==, after.st_rdev);

  /* The API: a non-regular output is written in place, abort leaves it. */
  {
    g_autoptr(GError) error = NULL;
    TomoOutput *out = tomo_output_open ("/dev/null", NULL, &error);

    g_assert_no_error (error);
    g_assert_cmpstr (tomo_output_get_write_path (out), ==, "/dev/null");
    tomo_output_abort (out);
    tomo_output_free (out);
    g_assert_cmpint (stat ("/dev/null", &after), ==, 0);
    g_assert_true (S_ISCHR (after.st_mode));
  }
}

static void
test_output_error_keeps_existing (void)
{
  g_autofree char *path = tmp_path ("existing.tif");
  g_autoptr(GError) error = NULL;
  float page[8 * 8] = { 0 };
  TomoTiffWriter *writer;
  g_autofree char *after = NULL;

  write_file (path, "precious", -1);
  g_assert_cmpint (g_chmod (path, 0640), ==, 0);

  /* A writer that fails half-way (abort) leaves the old file intact. */
  writer = tomo_tiff_writer_new (path, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (tomo_output_get_n_live (), ==, 1);
  g_assert_true (tomo_tiff_writer_add_page (writer, page, 8, 8, &error));
  tomo_tiff_writer_abort (writer);
  g_assert_cmpuint (tomo_output_get_n_live (), ==, 0);
  after = read_file (path);
  g_assert_cmpstr (after, ==, "precious");
  assert_no_temporaries (tmp_dir);

  /* An empty page is an error inside the one-shot writer: same. */
  g_assert_false (tomo_tiff_write_float (path, page, 0, 8, 1, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  g_clear_error (&error);
  g_clear_pointer (&after, g_free);
  after = read_file (path);
  g_assert_cmpstr (after, ==, "precious");
  assert_no_temporaries (tmp_dir);

  /* Success replaces it, keeping its permissions. */
  g_assert_true (tomo_tiff_write_float (path, page, 8, 8, 1, &error));
  g_assert_no_error (error);
  {
    struct stat st;
    g_assert_cmpint (g_stat (path, &st), ==, 0);
    g_assert_cmpint (st.st_mode & 0777, ==, 0640);
    g_assert_cmpint (st.st_size, >, 8 * 8 * 4);
  }
  g_unlink (path);
}

static void
test_output_read_only (void)
{
  g_autofree char *path = tmp_path ("read-only.tif");
  g_autofree char *dir = tmp_path ("read-only-dir");
  g_autofree char *in_dir = g_build_filename (dir, "out.tif", NULL);
  g_autofree char *after = NULL;

  if (geteuid () == 0)
    {
      g_test_skip ("running as root: permissions do not stop writes");
      return;
    }
  write_file (path, "keep", -1);
  g_assert_cmpint (g_chmod (path, 0444), ==, 0);
  g_assert_cmpint (g_mkdir (dir, 0555), ==, 0);
  {
    g_auto(TomoTestResult) r = { 0 };
    RUN (&r, "reconstruct", small_scan, "-o", path);
    tomo_test_assert_fails_with (&r, "read-only.tif");
  }
  {
    g_auto(TomoTestResult) r = { 0 };
    RUN (&r, "reconstruct", small_scan, "-o", in_dir);
    tomo_test_assert_fails_with (&r, "read-only-dir");
  }
  after = read_file (path);
  g_assert_cmpstr (after, ==, "keep");
  g_chmod (path, 0644);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_output_unwritable_folder (void)
{
  g_auto(TomoTestResult) r = { 0 };

  RUN (&r, "reconstruct", small_scan, "-o", "/proc/tomolive-cannot-write-here.tif");
  tomo_test_assert_fails_with (&r, "/proc");
}

/* Ctrl+C in the middle of a volume: exit 1 with a message, no temporary
 * file, and the file the output would have replaced is intact. */
static void
test_output_interrupted (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  const char *tomolive = g_getenv ("TOMOLIVE");
  g_autofree char *dir = tmp_path ("interrupt");
  g_autofree char *out = g_build_filename (dir, "volume.tif", NULL);
  g_autofree char *err = NULL, *after = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { tomolive, "reconstruct", sample, "--backend", "cpu", "--progress",
                         "-o", out, NULL };
  GPid pid;
  int err_fd, wait_status = 0;
  gboolean seen = FALSE;

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  write_file (out, "previous result", -1);
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &pid, NULL, NULL, &err_fd, &error));
  g_assert_no_error (error);

  /* Wait for the temporary file and the first slices, then interrupt. */
  for (guint i = 0; i < 3000 && !seen; i++)
    {
      g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
      const char *name;

      while (d != NULL && (name = g_dir_read_name (d)) != NULL)
        seen |= g_str_has_suffix (name, ".part");
      if (!seen)
        g_usleep (2000);
    }
  g_assert_true (seen);
  kill (pid, SIGINT);
  g_assert_cmpint (waitpid (pid, &wait_status, 0), ==, pid);
  g_spawn_close_pid (pid);
  {
    GIOChannel *ch = g_io_channel_unix_new (err_fd);
    g_io_channel_set_close_on_unref (ch, TRUE);
    g_io_channel_read_to_end (ch, &err, NULL, NULL);
    g_io_channel_unref (ch);
  }
  g_test_message ("stderr: %s", err);
  g_assert_true (WIFEXITED (wait_status));
  g_assert_cmpint (WEXITSTATUS (wait_status), ==, 1);
  g_assert_nonnull (strstr (err, "interrupted"));
  assert_no_temporaries (dir);
  after = read_file (out);
  g_assert_cmpstr (after, ==, "previous result");
  g_unlink (out);
  g_rmdir (dir);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  TomoPhantomParams p;
  int status;

  g_test_init (&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp ("tomo-hardening-XXXXXX", &error);
  g_assert_no_error (error);

  tomo_phantom_params_init (&p);
  p.width = 64;
  p.height = 8;
  p.n_proj = 90;
  p.center = 33.0;
  p.noise = FALSE;
  small_scan = tmp_path ("small.h5");
  g_assert_true (tomo_phantom_write_dxchange (&p, small_scan, &error));
  g_assert_no_error (error);

  g_test_add_func ("/tomo/hardening/output/is-input", test_output_is_input);
  g_test_add_func ("/tomo/hardening/output/is-aux-input", test_output_is_aux_input);
  g_test_add_func ("/tomo/hardening/output/dev-null", test_output_dev_null);
  g_test_add_func ("/tomo/hardening/output/error-keeps-existing", test_output_error_keeps_existing);
  g_test_add_func ("/tomo/hardening/output/read-only", test_output_read_only);
  g_test_add_func ("/tomo/hardening/output/unwritable-folder", test_output_unwritable_folder);
  g_test_add_func ("/tomo/hardening/output/interrupted", test_output_interrupted);

  status = g_test_run ();

  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmp_dir);
    if (system (cmd) != 0)
      g_test_message ("could not remove %s", tmp_dir);
  }
  g_free (small_scan);
  g_free (tmp_dir);
  return status;
}
