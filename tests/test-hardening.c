/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Hostile inputs and unsafe outputs, each as a user would meet it: the
 * test writes the bad file itself, runs the loader or `tomolive` on it and
 * asserts the error the user sees — and that no data were lost.  The
 * catalogue in docs/RELIABILITY.md names the test that holds each case.
 */
#include "config.h"

#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <hdf5.h>
#include <tiffio.h>

#include "tomo-error.h"
#include "tomo-memory.h"
#include "tomo-output.h"
#include "tomo-phantom.h"
#include "tomo-scan.h"
#include "tomo-test-util.h"
#include "tomo-tiff-writer.h"

#define RUN TOMO_TEST_RUN

static char *tmp_dir;
static char *small_scan;   /* 64 × 8 × 90 phantom, written once */
static GPtrArray *codec_names;  /* the codec table copies the tests use */

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
  /* A vertical plane is one TIFF written by another path: same. */
  for (guint i = 0; i < 4; i++)
    {
      const char *out = (const char *[]) { copy, hard, sym, dotted }[i];
      g_auto(TomoTestResult) r = { 0 };

      RUN (&r, "reconstruct", copy, "--plane", "xz:10", "--backend", "cpu", "-o", out);
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
    for (guint i = 0; i < G_N_ELEMENTS (outs); i++)
      {
        g_auto(TomoTestResult) r = { 0 };

        RUN (&r, "reconstruct", stack, "--flats", flat, "--angles", angles, "--plane", "xz:3",
             "--backend", "cpu", "-o", outs[i]);
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

  /* The phantom's HDF5 file must be regular (HDF5 reads back): refused,
   * cleanly (libhdf5 used to crash at exit). */
  {
    g_auto(TomoTestResult) p = { 0 };

    RUN (&p, "phantom", "--width", "32", "--height", "2", "--projections", "10", "-o",
         "/dev/null");
    tomo_test_assert_fails_with (&p, "“/dev/null”: it is not a regular file");
    g_assert_cmpint (stat ("/dev/null", &after), ==, 0);
    g_assert_true (S_ISCHR (after.st_mode));
  }

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
  TOMO_TEST_ASSERT_FAILS (tomo_tiff_write_float (path, page, 0, 8, 1, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
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

/* Every file an open scan reads is an input of the process, whatever a
 * writer passes (the live recorder passes none): refused as an output,
 * and its folder as an output folder, while any scan of it is open — two
 * scans of one file count twice — and free again once both are freed. */
static void
test_output_registry (void)
{
  g_autofree char *dir = tmp_path ("registry");
  g_autofree char *path = g_build_filename (dir, "scan.h5", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  TomoScan *a, *b;
  TomoOutput *out;
  gsize len;

  g_assert_true (g_file_get_contents (small_scan, &contents, &len, NULL));
  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, len, NULL));
  g_assert_true (tomo_output_check_inputs (path, NULL, &error));

  a = tomo_scan_open (path, NULL, &error);
  g_assert_no_error (error);
  b = tomo_scan_open (path, NULL, &error);
  g_assert_no_error (error);
  TOMO_TEST_ASSERT_FAILS (tomo_output_check_inputs (path, NULL, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  TOMO_TEST_ASSERT_FAILS (tomo_output_check_inputs (dir, NULL, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  g_assert_null (tomo_output_open (path, NULL, &error));
  g_assert_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  g_assert_nonnull (strstr (error->message, "is the input"));
  g_clear_error (&error);

  g_object_unref (a);
  TOMO_TEST_ASSERT_FAILS (tomo_output_check_inputs (path, NULL, &error),
                          error, TOMO_IO_ERROR, TOMO_IO_ERROR_WRITE);
  g_object_unref (b);
  g_assert_true (tomo_output_check_inputs (path, NULL, &error));
  g_assert_true (tomo_output_check_inputs (dir, NULL, &error));
  out = tomo_output_open (path, NULL, &error);
  g_assert_no_error (error);
  tomo_output_free (out);
  tomo_test_remove_tree (dir);
}

/* The process has a handler of its own for `signum` (its SigCgt mask). */
static gboolean
catches_signal (GPid pid,
                int  signum)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *status = NULL;
  const char *line;
  guint64 mask;

  if (!g_file_get_contents (path, &status, NULL, NULL) ||
      (line = strstr (status, "\nSigCgt:")) == NULL)
    return FALSE;
  mask = g_ascii_strtoull (line + strlen ("\nSigCgt:"), NULL, 16);
  return (mask >> (signum - 1)) & 1;
}

/* Runs `argv`, waits (up to 6 s) until `started` (dir) sees it writing
 * (NULL: until it handles `signum`), sends `signum` and waits for the exit;
 * its stderr, the wait status in *wait_status. */
static char *
run_and_signal (const char **argv,
                const char  *dir,
                gboolean   (*started) (const char *dir),
                int          signum,
                int         *wait_status)
{
  g_autoptr(GError) error = NULL;
  char *err = NULL;
  GPid pid;
  int err_fd;
  gboolean seen = FALSE;

  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &pid, NULL, NULL, &err_fd, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 3000 && !seen; i++)
    {
      seen = started != NULL ? started (dir) : catches_signal (pid, signum);
      if (!seen)
        g_usleep (2000);
    }
  g_assert_true (seen);
  kill (pid, signum);
  g_assert_cmpint (waitpid (pid, wait_status, 0), ==, pid);
  g_spawn_close_pid (pid);
  {
    GIOChannel *ch = g_io_channel_unix_new (err_fd);
    g_io_channel_set_close_on_unref (ch, TRUE);
    g_io_channel_read_to_end (ch, &err, NULL, NULL);
    g_io_channel_unref (ch);
  }
  g_test_message ("stderr: %s", err);
  return err;
}

/* A temporary file in `dir`: the volume is being written. */
static gboolean
part_seen (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  gboolean seen = FALSE;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    seen |= g_str_has_suffix (name, ".part");
  return seen;
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
  /* Every row of the sample, so the volume is still being written when the
   * test sees its temporary file, even on many cores. */
  const char *argv[] = { tomolive, "reconstruct", sample, "--rows", "0:64", "--backend", "cpu",
                         "--progress", "-o", out, NULL };
  int wait_status = 0;

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  write_file (out, "previous result", -1);
  /* Interrupted once the temporary file and the first slices are there. */
  err = run_and_signal (argv, dir, part_seen, SIGINT, &wait_status);
  g_assert_true (WIFEXITED (wait_status));
  g_assert_cmpint (WEXITSTATUS (wait_status), ==, 1);
  g_assert_nonnull (strstr (err, "interrupted; incomplete output removed"));
  assert_no_temporaries (dir);
  after = read_file (out);
  g_assert_cmpstr (after, ==, "previous result");
  g_unlink (out);
  g_rmdir (dir);
}

static gboolean slice_seen (const char *dir);

/* SIGTERM during a volume into "DIR/" that the run made: its slices and
 * the folder itself go, as a failed run's do. */
static void
test_output_made_folder_interrupted (void)
{
  g_autofree char *dir = tmp_path ("made-folder");
  g_autofree char *out = g_strconcat (dir, G_DIR_SEPARATOR_S, NULL);
  const char *argv[] = { g_getenv ("TOMOLIVE"), "reconstruct", g_getenv ("TOMO_SAMPLE_SCAN"),
                         "--rows", "0:64", "--backend", "cpu", "--writers", "1", "--progress",
                         "-o", out, NULL };
  g_autofree char *err = NULL;
  int wait_status = 0;

  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
  err = run_and_signal (argv, dir, slice_seen, SIGTERM, &wait_status);
  g_assert_true (WIFEXITED (wait_status));
  g_assert_cmpint (WEXITSTATUS (wait_status), ==, 1);
  g_assert_nonnull (strstr (err, "terminated; incomplete output removed"));
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
}

/* A command that writes no output (a replay to a receiver that is not
 * there), terminated: exit 1, and its message claims no removal. */
static void
test_signal_without_output (void)
{
  const char *argv[] = { g_getenv ("TOMOLIVE"), "stream", g_getenv ("TOMO_SAMPLE_SCAN"), "--to",
                         "tcp://127.0.0.1:9", NULL };
  g_autofree char *err = NULL;
  int wait_status = 0;

  err = run_and_signal (argv, NULL, NULL, SIGTERM, &wait_status);
  g_assert_true (WIFEXITED (wait_status));
  g_assert_cmpint (WEXITSTATUS (wait_status), ==, 1);
  g_assert_nonnull (strstr (err, "tomolive: terminated"));
  g_assert_null (strstr (err, "removed"));
}

/* ---- the catalogue: hostile inputs ----------------------------------------
 *
 * Each case writes its input into a fresh folder, runs `tomolive` on it and
 * checks what the user sees: exit status 1 and a message with `expect`, or
 * success where the input is good (expect == NULL).  No case may crash,
 * hang, leave an output or a temporary file behind. */

typedef struct
{
  const char *name;
  void      (*make) (const char *dir, GPtrArray *args);
  const char *expect;
} HostileCase;

static char *
in_dir (const char *dir,
        const char *name)
{
  return g_build_filename (dir, name, NULL);
}

static void
push (GPtrArray *args, ...)
{
  va_list ap;
  const char *a;

  va_start (ap, args);
  while ((a = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (args, g_strdup (a));
  va_end (ap);
}

#define CMD(...) push (args, __VA_ARGS__, NULL)

/* HDF5 ------------------------------------------------------------------- */

#define HN 6   /* projections */
#define HR 4   /* rows */
#define HW 8   /* columns */

static hid_t
h5_new (const char *dir, const char *name, char **path)
{
  hid_t file;

  *path = in_dir (dir, name);
  file = H5Fcreate (*path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  g_assert_cmpint (file, >=, 0);
  return file;
}

/* A valid Data Exchange scan; `skip` names a dataset to leave out. */
static void
h5_scan (hid_t file, const char *skip)
{
  hsize_t d[3] = { HN, HR, HW }, df[3] = { 2, HR, HW }, dt[1] = { HN };
  guint16 data[HN * HR * HW], white[2 * HR * HW], dark[2 * HR * HW];
  double theta[HN];

  for (guint i = 0; i < G_N_ELEMENTS (data); i++)
    data[i] = 1000 + i % 97;
  for (guint i = 0; i < G_N_ELEMENTS (white); i++)
    white[i] = 2000, dark[i] = 100;
  for (guint i = 0; i < HN; i++)
    theta[i] = 180.0 * i / HN;
  if (g_strcmp0 (skip, "data") != 0)
    tomo_test_h5_write (file, "/exchange/data", H5T_STD_U16LE, 3, d, NULL, H5T_NATIVE_UINT16, data);
  if (g_strcmp0 (skip, "white") != 0)
    tomo_test_h5_write (file, "/exchange/data_white", H5T_STD_U16LE, 3, df, NULL, H5T_NATIVE_UINT16, white);
  if (g_strcmp0 (skip, "dark") != 0)
    tomo_test_h5_write (file, "/exchange/data_dark", H5T_STD_U16LE, 3, df, NULL, H5T_NATIVE_UINT16, dark);
  if (g_strcmp0 (skip, "theta") != 0)
    tomo_test_h5_write (file, "/exchange/theta", H5T_IEEE_F64LE, 1, dt, NULL, H5T_NATIVE_DOUBLE, theta);
}

static void
h5_finish (hid_t file, const char *path, GPtrArray *args, const char *extra)
{
  H5Fclose (file);
  CMD ("reconstruct", path);
  if (extra != NULL)
    CMD (extra);
}

static void
mk_h5_missing (const char *dir, GPtrArray *args)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "missing.h5", &path);
  hid_t g = H5Gcreate2 (file, "/exchange", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);

  H5Gclose (g);
  h5_finish (file, path, args, NULL);
}

static void
mk_h5_data_of_rank (const char *dir, GPtrArray *args, int rank)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "rank.h5", &path);
  hsize_t d[4] = { 3, 4, 5, 6 };
  g_autofree float *v = g_new0 (float, 3 * 4 * 5 * 6);

  h5_scan (file, "data");
  tomo_test_h5_write (file, "/exchange/data", H5T_IEEE_F32LE, rank, d, NULL, H5T_NATIVE_FLOAT, v);
  h5_finish (file, path, args, NULL);
}

static void mk_h5_rank0 (const char *d, GPtrArray *a) { mk_h5_data_of_rank (d, a, 0); }
static void mk_h5_rank2 (const char *d, GPtrArray *a) { mk_h5_data_of_rank (d, a, 2); }
static void mk_h5_rank4 (const char *d, GPtrArray *a) { mk_h5_data_of_rank (d, a, 4); }

/* /exchange/data with dims `d`, chunked 1×1×1 and never written. */
static void
mk_h5_declared (const char *dir, GPtrArray *args, const hsize_t d[3])
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "declared.h5", &path);
  hsize_t chunk[3] = { 1, 1, 1 };

  tomo_test_h5_write (file, "/exchange/data", H5T_IEEE_F32LE, 3, d,
                      d[0] && d[1] && d[2] ? chunk : NULL, H5T_NATIVE_FLOAT, NULL);
  h5_finish (file, path, args, "--already-sinogram");
}

static void mk_h5_zero_proj (const char *d, GPtrArray *a) { mk_h5_declared (d, a, (hsize_t[]) { 0, 4, 8 }); }
static void mk_h5_zero_width (const char *d, GPtrArray *a) { mk_h5_declared (d, a, (hsize_t[]) { 3, 4, 0 }); }
static void mk_h5_huge_width (const char *d, GPtrArray *a) { mk_h5_declared (d, a, (hsize_t[]) { 1, 1, 2147483647 }); }
static void mk_h5_huge_proj (const char *d, GPtrArray *a) { mk_h5_declared (d, a, (hsize_t[]) { 1000000000, 1, 16 }); }
static void mk_h5_over_4g (const char *d, GPtrArray *a) { mk_h5_declared (d, a, (hsize_t[]) { (hsize_t) 1 << 33, 1, 1 }); }
static void mk_h5_huge_tiny_chunks (const char *d, GPtrArray *a) { mk_h5_declared (d, a, (hsize_t[]) { 100000, 100000, 100000 }); }

static void
mk_h5_typed (const char *dir, GPtrArray *args, hid_t type)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "typed.h5", &path);
  hsize_t d[3] = { HN, HR, HW };

  h5_scan (file, "data");
  tomo_test_h5_write (file, "/exchange/data", type, 3, d, NULL, type, NULL);
  h5_finish (file, path, args, NULL);
}

static void
mk_h5_string (const char *dir, GPtrArray *args)
{
  hid_t t = H5Tcopy (H5T_C_S1);

  H5Tset_size (t, 8);
  mk_h5_typed (dir, args, t);
  H5Tclose (t);
}

static void
mk_h5_compound (const char *dir, GPtrArray *args)
{
  hid_t t = H5Tcreate (H5T_COMPOUND, 8);

  H5Tinsert (t, "a", 0, H5T_NATIVE_FLOAT);
  H5Tinsert (t, "b", 4, H5T_NATIVE_FLOAT);
  mk_h5_typed (dir, args, t);
  H5Tclose (t);
}

static void
mk_h5_wide_int (const char *dir, GPtrArray *args)
{
  hid_t t = H5Tcopy (H5T_STD_U64LE);

  H5Tset_precision (t, 128);
  H5Tset_size (t, 16);
  mk_h5_typed (dir, args, t);
  H5Tclose (t);
}

static void
mk_h5_int8 (const char *dir, GPtrArray *args)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "int8.h5", &path);
  hsize_t d[3] = { HN, HR, HW };
  gint8 v[HN * HR * HW];

  for (guint i = 0; i < G_N_ELEMENTS (v); i++)
    v[i] = (gint8) ((i * 37) % 200 - 100);
  h5_scan (file, "data");
  tomo_test_h5_write (file, "/exchange/data", H5T_STD_I8LE, 3, d, NULL, H5T_NATIVE_INT8, v);
  H5Fclose (file);
  CMD ("reconstruct", path, "--already-sinogram", "--already-linear");
}

static void
mk_h5_external (const char *dir, GPtrArray *args, gboolean target_exists)
{
  g_autofree char *path = NULL, *other = NULL;
  hid_t file, ofile;

  if (target_exists)
    {
      ofile = h5_new (dir, "external-data.h5", &other);
      h5_scan (ofile, NULL);
      H5Fclose (ofile);
    }
  file = h5_new (dir, "links.h5", &path);
  h5_scan (file, "data");
  H5Lcreate_external (target_exists ? "external-data.h5" : "no-such-file.h5", "/exchange/data",
                      file, "/exchange/data", H5P_DEFAULT, H5P_DEFAULT);
  h5_finish (file, path, args, NULL);
}

static void mk_h5_external_ok (const char *d, GPtrArray *a) { mk_h5_external (d, a, TRUE); }
static void mk_h5_external_missing (const char *d, GPtrArray *a) { mk_h5_external (d, a, FALSE); }

static void
mk_h5_soft_loop (const char *dir, GPtrArray *args)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "loop.h5", &path);

  h5_scan (file, "data");
  H5Lcreate_soft ("/exchange/data", file, "/exchange/data", H5P_DEFAULT, H5P_DEFAULT);
  h5_finish (file, path, args, NULL);
}

static void
mk_h5_theta (const char *dir, GPtrArray *args, guint n, double value, int rank)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "theta.h5", &path);
  hsize_t d[2] = { n, 1 };
  g_autofree double *t = g_new (double, n);

  for (guint i = 0; i < n; i++)
    t[i] = isnan (value) && i != 2 ? 10.0 * i : value;
  h5_scan (file, "theta");
  tomo_test_h5_write (file, "/exchange/theta", H5T_IEEE_F64LE, rank, d, NULL, H5T_NATIVE_DOUBLE, t);
  h5_finish (file, path, args, NULL);
}

static void mk_h5_theta_short (const char *d, GPtrArray *a) { mk_h5_theta (d, a, HN - 1, NAN, 1); }
static void mk_h5_theta_equal (const char *d, GPtrArray *a) { mk_h5_theta (d, a, HN, 42.0, 1); }
static void mk_h5_theta_nan (const char *d, GPtrArray *a) { mk_h5_theta (d, a, HN, NAN, 1); }
static void mk_h5_theta_huge (const char *d, GPtrArray *a) { mk_h5_theta (d, a, HN, 1e300, 1); }
static void mk_h5_theta_2d (const char *d, GPtrArray *a) { mk_h5_theta (d, a, HN, NAN, 2); }

static void
mk_h5_theta_string (const char *dir, GPtrArray *args)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "theta-str.h5", &path);
  hid_t t = H5Tcopy (H5T_C_S1);
  hsize_t d[1] = { HN };

  H5Tset_size (t, 4);
  h5_scan (file, "theta");
  tomo_test_h5_write (file, "/exchange/theta", t, 1, d, NULL, t, NULL);
  H5Tclose (t);
  h5_finish (file, path, args, NULL);
}

static void
mk_h5_flats_mismatch (const char *dir, GPtrArray *args)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "flats.h5", &path);
  hsize_t d[3] = { 2, HR, HW + 1 };

  h5_scan (file, "white");
  tomo_test_h5_write (file, "/exchange/data_white", H5T_STD_U16LE, 3, d, NULL, H5T_NATIVE_UINT16, NULL);
  h5_finish (file, path, args, NULL);
}

static void
mk_h5_flats_below_darks (const char *dir, GPtrArray *args)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "flats-dark.h5", &path);
  hsize_t d[3] = { 2, HR, HW };
  guint16 v[2 * HR * HW];

  for (guint i = 0; i < G_N_ELEMENTS (v); i++)
    v[i] = 50;
  h5_scan (file, "white");
  tomo_test_h5_write (file, "/exchange/data_white", H5T_STD_U16LE, 3, d, NULL, H5T_NATIVE_UINT16, v);
  h5_finish (file, path, args, NULL);
}

static void
mk_h5_float_fill (const char *dir, GPtrArray *args, float value)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "float.h5", &path);
  hsize_t d[3] = { HN, HR, HW };
  float v[HN * HR * HW];

  for (guint i = 0; i < G_N_ELEMENTS (v); i++)
    v[i] = value;
  h5_scan (file, "data");
  tomo_test_h5_write (file, "/exchange/data", H5T_IEEE_F32LE, 3, d, NULL, H5T_NATIVE_FLOAT, v);
  H5Fclose (file);
  CMD ("reconstruct", path, "--already-sinogram", "--already-linear");
}

static void mk_h5_all_nan (const char *d, GPtrArray *a) { mk_h5_float_fill (d, a, NAN); }
static void mk_h5_all_inf (const char *d, GPtrArray *a) { mk_h5_float_fill (d, a, INFINITY); }
static void mk_h5_huge_values (const char *d, GPtrArray *a) { mk_h5_float_fill (d, a, 1e30f); }

/* A compressed dataset whose chunk bytes are overwritten. */
static void
mk_h5_corrupt_chunk (const char *dir, GPtrArray *args)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "corrupt.h5", &path);
  hsize_t d[3] = { HN, HR, HW }, chunk[3] = { HN, HR, HW };
  hid_t space = H5Screate_simple (3, d, NULL), dcpl = H5Pcreate (H5P_DATASET_CREATE), dset;
  guint16 v[HN * HR * HW];
  haddr_t addr = 0;
  hsize_t size = 0;
  hsize_t offset[3] = { 0, 0, 0 };
  unsigned mask;
  FILE *fp;

  for (guint i = 0; i < G_N_ELEMENTS (v); i++)
    v[i] = 1000 + (i * 7919) % 1000;
  h5_scan (file, "data");
  H5Pset_chunk (dcpl, 3, chunk);
  H5Pset_deflate (dcpl, 6);
  dset = H5Dcreate2 (file, "/exchange/data", H5T_STD_U16LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Dwrite (dset, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dflush (dset);
  g_assert_cmpint (H5Dget_chunk_info_by_coord (dset, offset, &mask, &addr, &size), >=, 0);
  H5Dclose (dset);
  H5Pclose (dcpl);
  H5Sclose (space);
  H5Fclose (file);
  g_assert_cmpuint (size, >, 8);
  fp = fopen (path, "r+b");
  g_assert_nonnull (fp);
  fseek (fp, (long) addr, SEEK_SET);
  for (hsize_t i = 0; i < size; i++)
    fputc (0xA5 ^ (int) i, fp);
  fclose (fp);
  CMD ("reconstruct", path);
}

static void
mk_h5_truncated (const char *dir, GPtrArray *args)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "cut.h5", &path);
  hsize_t d[3] = { 64, 16, 64 };
  g_autofree guint16 *v = g_new0 (guint16, 64 * 16 * 64);
  GStatBuf st;

  tomo_test_h5_write (file, "/exchange/data", H5T_STD_U16LE, 3, d, NULL, H5T_NATIVE_UINT16, v);
  H5Fclose (file);
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (truncate (path, st.st_size / 2), ==, 0);
  CMD ("reconstruct", path, "--already-sinogram");
}

static void
mk_text (const char *dir, GPtrArray *args, const char *name, const char *contents, gssize len)
{
  g_autofree char *path = in_dir (dir, name);

  write_file (path, contents, len);
  CMD ("reconstruct", path);
}

static void mk_not_hdf5 (const char *d, GPtrArray *a) { mk_text (d, a, "notes.h5", "just some text\n", -1); }
static void mk_empty_file (const char *d, GPtrArray *a) { mk_text (d, a, "empty.h5", "", 0); }
static void mk_bad_superblock (const char *d, GPtrArray *a)
{
  mk_text (d, a, "bad.h5", "\x89HDF\r\n\x1a\n\x07\x07\x07\x07garbage-garbage-garbage-garbage", 40);
}

static void
mk_missing_file (const char *dir, GPtrArray *args)
{
  g_autofree char *path = in_dir (dir, "nowhere.h5");
  CMD ("reconstruct", path);
}

static void
mk_nxtomo (const char *dir, GPtrArray *args, const char *data_path, const int *keys, guint n_keys)
{
  g_autofree char *path = NULL;
  hid_t file = h5_new (dir, "scan.nxs", &path);
  const guint n = 8;
  hsize_t d[3] = { n, HR, HW }, dk[1] = { n_keys };
  g_autofree float *v = g_new (float, n * HR * HW);
  g_autofree char *key_path = NULL;
  double angles[8];

  for (guint i = 0; i < n; i++)
    {
      for (guint k = 0; k < HR * HW; k++)
        v[i * HR * HW + k] = keys[MIN (i, n_keys - 1)] == 1 ? 2000 : keys[MIN (i, n_keys - 1)] == 2 ? 100 : 1000 + k;
      angles[i] = 30.0 * i;
    }
  tomo_test_h5_write (file, data_path, H5T_IEEE_F32LE, 3, d, NULL, H5T_NATIVE_FLOAT, v);
  key_path = g_strdup_printf ("/entry/%s/image_key",
                              g_str_has_prefix (data_path, "/entry/data/") ? "data" : "instrument/detector");
  tomo_test_h5_write (file, key_path, H5T_STD_I32LE, 1, dk, NULL, H5T_NATIVE_INT, keys);
  tomo_test_h5_write (file, "/entry/sample/rotation_angle", H5T_IEEE_F64LE, 1, (hsize_t[]) { n },
                      NULL, H5T_NATIVE_DOUBLE, angles);
  H5Fclose (file);
  CMD ("reconstruct", path);
}

static void
mk_nx_data_data (const char *d, GPtrArray *a)
{
  static const int keys[] = { 2, 1, 0, 0, 1, 0, 0, 0 };   /* interleaved flats */
  mk_nxtomo (d, a, "/entry/data/data", keys, 8);
}

static void
mk_nx_bad_key (const char *d, GPtrArray *a)
{
  static const int keys[] = { 2, 1, 0, 7, 0, 0, 0, 0 };
  mk_nxtomo (d, a, "/entry/instrument/detector/data", keys, 8);
}

static void
mk_nx_key_length (const char *d, GPtrArray *a)
{
  static const int keys[] = { 2, 1, 0, 0, 0 };
  mk_nxtomo (d, a, "/entry/instrument/detector/data", keys, 5);
}

/* TIFF ------------------------------------------------------------------- */

/* One page of width × height values of `bits`/`fmt`, in strips (or tiles). */
static void
tiff_page (TIFF *tif, guint width, guint height, guint bits, guint fmt, guint spp,
           guint compression, gboolean tiled, double base)
{
  gsize row_bytes = ((gsize) width * spp * bits + 7) / 8;
  g_autofree guint8 *row = g_malloc0 (row_bytes * 16);

  TIFFSetField (tif, TIFFTAG_IMAGEWIDTH, width);
  TIFFSetField (tif, TIFFTAG_IMAGELENGTH, height);
  TIFFSetField (tif, TIFFTAG_BITSPERSAMPLE, bits);
  TIFFSetField (tif, TIFFTAG_SAMPLEFORMAT, fmt);
  TIFFSetField (tif, TIFFTAG_SAMPLESPERPIXEL, spp);
  TIFFSetField (tif, TIFFTAG_PHOTOMETRIC, spp == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  TIFFSetField (tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField (tif, TIFFTAG_COMPRESSION, compression);
  if (tiled)
    {
      TIFFSetField (tif, TIFFTAG_TILEWIDTH, 16);
      TIFFSetField (tif, TIFFTAG_TILELENGTH, 16);
      for (guint y = 0; y < height; y += 16)
        for (guint x = 0; x < width; x += 16)
          {
            for (gsize i = 0; i < 16 * 16; i++)
              ((guint16 *) row)[i] = (guint16) (base + x + i % 16);
            g_assert_cmpint (TIFFWriteTile (tif, row, x, y, 0, 0), >=, 0);
          }
    }
  else
    {
      TIFFSetField (tif, TIFFTAG_ROWSPERSTRIP, 2);
      for (guint y = 0; y < height; y++)
        {
          for (guint x = 0; x < width * spp; x++)
            {
              double v = base + y + (x % 13);
              if (bits == 16 && fmt == SAMPLEFORMAT_IEEEFP)
                ((guint16 *) row)[x] = 0x3c00 + (guint16) (x % 13) * 64;   /* 1 … 1.75 */
              else if (bits == 64)
                ((double *) row)[x] = v;
              else if (bits == 32)
                ((float *) row)[x] = v;
              else if (bits == 16)
                ((gint16 *) row)[x] = (gint16) v;
              else if (bits == 8)
                row[x] = (guint8) v;
              else
                row[x / 8] |= (x & 1) << (7 - x % 8);
            }
          if (TIFFWriteScanline (tif, row, y, 0) < 0)
            break;
        }
    }
  TIFFWriteDirectory (tif);
}

static char *
tiff_file (const char *dir, const char *name, guint width, guint height, guint pages,
           guint bits, guint fmt, guint spp, guint compression, gboolean tiled)
{
  char *path = in_dir (dir, name);
  TIFF *tif = TIFFOpen (path, "w");

  g_assert_nonnull (tif);
  for (guint p = 0; p < pages; p++)
    tiff_page (tif, width, height, bits, fmt, spp, compression, tiled, 100 + 10 * p);
  TIFFClose (tif);
  return path;
}

static void
tiff_case (const char *dir, GPtrArray *args, guint bits, guint fmt, guint spp, gboolean tiled)
{
  g_autofree char *path = tiff_file (dir, "stack.tif", 32, 8, 6, bits, fmt, spp, COMPRESSION_NONE, tiled);
  CMD ("reconstruct", path, "--already-sinogram", "--already-linear");
}

static void
mk_tiff_one_page (const char *dir, GPtrArray *args)
{
  g_autofree char *path = tiff_file (dir, "one.tif", 32, 8, 1, 16, SAMPLEFORMAT_UINT, 1,
                                     COMPRESSION_NONE, FALSE);
  CMD ("reconstruct", path, "--already-sinogram");
}

static void mk_tiff_tiled (const char *d, GPtrArray *a) { tiff_case (d, a, 16, SAMPLEFORMAT_UINT, 1, TRUE); }
static void mk_tiff_1bit (const char *d, GPtrArray *a) { tiff_case (d, a, 1, SAMPLEFORMAT_UINT, 1, FALSE); }
static void mk_tiff_rgb (const char *d, GPtrArray *a) { tiff_case (d, a, 8, SAMPLEFORMAT_UINT, 3, FALSE); }
static void mk_tiff_f64 (const char *d, GPtrArray *a) { tiff_case (d, a, 64, SAMPLEFORMAT_IEEEFP, 1, FALSE); }
static void mk_tiff_f16 (const char *d, GPtrArray *a) { tiff_case (d, a, 16, SAMPLEFORMAT_IEEEFP, 1, FALSE); }
static void mk_tiff_i16 (const char *d, GPtrArray *a) { tiff_case (d, a, 16, SAMPLEFORMAT_INT, 1, FALSE); }
static void mk_tiff_i8 (const char *d, GPtrArray *a) { tiff_case (d, a, 8, SAMPLEFORMAT_INT, 1, FALSE); }
static void mk_tiff_complex (const char *d, GPtrArray *a) { tiff_case (d, a, 64, SAMPLEFORMAT_COMPLEXIEEEFP, 1, FALSE); }

static void
mk_tiff_truncated (const char *dir, GPtrArray *args)
{
  g_autofree char *path = tiff_file (dir, "cut.tif", 64, 64, 4, 16, SAMPLEFORMAT_UINT, 1,
                                     COMPRESSION_NONE, FALSE);
  GStatBuf st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (truncate (path, st.st_size * 2 / 3), ==, 0);
  CMD ("reconstruct", path, "--already-sinogram", "--rows", "0:64");
}

static void
mk_tiff_truncated_header (const char *dir, GPtrArray *args)
{
  mk_text (dir, args, "head.tif", "II*\0\x08\0", 6);
  CMD ("--already-sinogram");
}

static void
mk_tiff_mixed_pages (const char *dir, GPtrArray *args)
{
  g_autofree char *path = in_dir (dir, "mixed.tif");
  TIFF *tif = TIFFOpen (path, "w");

  tiff_page (tif, 16, 8, 16, SAMPLEFORMAT_UINT, 1, COMPRESSION_NONE, FALSE, 100);
  tiff_page (tif, 16, 8, 16, SAMPLEFORMAT_UINT, 1, COMPRESSION_NONE, FALSE, 110);
  tiff_page (tif, 12, 8, 16, SAMPLEFORMAT_UINT, 1, COMPRESSION_NONE, FALSE, 120);
  TIFFClose (tif);
  CMD ("reconstruct", path, "--already-sinogram");
}

static void
mk_tiff_mixed_files (const char *dir, GPtrArray *args)
{
  g_autofree char *sub = in_dir (dir, "frames");
  g_autofree char *a = NULL, *b = NULL;

  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  a = tiff_file (sub, "p0.tif", 16, 8, 1, 16, SAMPLEFORMAT_UINT, 1, COMPRESSION_NONE, FALSE);
  b = tiff_file (sub, "p1.tif", 16, 9, 1, 16, SAMPLEFORMAT_UINT, 1, COMPRESSION_NONE, FALSE);
  CMD ("reconstruct", sub, "--already-sinogram");
}

static void
mk_tiff_glob (const char *dir, GPtrArray *args)
{
  g_autofree char *sub = in_dir (dir, "frames");
  g_autofree char *glob = NULL;

  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  for (guint i = 0; i < 6; i++)
    {
      g_autofree char *name = g_strdup_printf ("proj_%04u.tif", i);
      g_autofree char *p = tiff_file (sub, name, 16, 4, 1, 16, SAMPLEFORMAT_UINT, 1, COMPRESSION_NONE, FALSE);
    }
  g_free (tiff_file (sub, "flat_0000.tif", 16, 4, 1, 16, SAMPLEFORMAT_UINT, 1, COMPRESSION_NONE, FALSE));
  glob = g_build_filename (sub, "proj_*.tif", NULL);
  CMD ("reconstruct", glob, "--already-sinogram");
}

static void
mk_tiff_empty_folder (const char *dir, GPtrArray *args)
{
  g_autofree char *sub = in_dir (dir, "nothing");

  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  CMD ("reconstruct", sub, "--already-sinogram");
}

static void mk_tiff_text (const char *d, GPtrArray *a) { mk_text (d, a, "fake.tif", "II*\0 not a tiff at all", 22); }

/* A hand-written header: one strip declared as `bytes` of a width × height
 * 16-bit image, the file holding only a few bytes. */
static void
tiff_header (const char *path, guint32 width, guint32 height, guint32 rows_per_strip, guint32 bytes,
             guint32 compression)
{
  guint8 buf[8 + 2 + 10 * 12 + 4 + 16] = { 'I', 'I', 42, 0, 8, 0, 0, 0 };
  guint8 *p = buf + 8;
  const struct { guint16 tag, type; guint32 count, value; } e[] = {
    { 256, 4, 1, width }, { 257, 4, 1, height }, { 258, 3, 1, 16 }, { 259, 3, 1, compression },
    { 262, 3, 1, 1 }, { 273, 4, 1, 8 + 2 + 10 * 12 + 4 }, { 277, 3, 1, 1 },
    { 278, 4, 1, rows_per_strip }, { 279, 4, 1, bytes }, { 339, 3, 1, 1 },
  };

  p[0] = G_N_ELEMENTS (e);
  p += 2;
  for (guint i = 0; i < G_N_ELEMENTS (e); i++, p += 12)
    {
      memcpy (p, &e[i].tag, 2);
      memcpy (p + 2, &e[i].type, 2);
      memcpy (p + 4, &e[i].count, 4);
      memcpy (p + 8, &e[i].value, 4);
    }
  write_file (path, (const char *) buf, sizeof buf);
}

static void
mk_tiff_huge_width (const char *dir, GPtrArray *args)
{
  g_autofree char *path = in_dir (dir, "wide.tif");

  tiff_header (path, 2147483647, 1, 1, 16, COMPRESSION_NONE);
  CMD ("reconstruct", path, "--already-sinogram");
}

/* raw -------------------------------------------------------------------- */

static void
mk_raw (const char *dir, GPtrArray *args, gsize size, const char *w, const char *h,
        const char *n, const char *offset)
{
  g_autofree char *path = in_dir (dir, "scan.raw");
  g_autofree char *zeros = g_malloc0 (size);

  write_file (path, zeros, size);
  CMD ("reconstruct", path, "--format", "raw", "--raw-dtype", "uint16", "--already-sinogram");
  if (w != NULL)
    CMD ("--raw-width", w, "--raw-height", h, "--raw-projections", n, "--raw-offset", offset);
}

static void mk_raw_offset_past_end (const char *d, GPtrArray *a) { mk_raw (d, a, 100, "2", "2", "2", "1000"); }
static void mk_raw_overflow (const char *d, GPtrArray *a) { mk_raw (d, a, 100, "4294967295", "4294967295", "4294967295", "0"); }
static void mk_raw_size_mismatch (const char *d, GPtrArray *a) { mk_raw (d, a, 100, "4", "4", "4", "0"); }
static void mk_raw_no_dims (const char *d, GPtrArray *a) { mk_raw (d, a, 100, NULL, NULL, NULL, NULL); }

static void
mk_raw_huge (const char *dir, GPtrArray *args)
{
  g_autofree char *path = in_dir (dir, "huge.raw");

  write_file (path, "", 0);
  g_assert_cmpint (truncate (path, (off_t) 4 << 30), ==, 0);   /* sparse: 4 GiB of nothing */
  CMD ("reconstruct", path, "--format", "raw", "--raw-dtype", "uint8", "--already-sinogram",
       "--raw-width", "1073741824", "--raw-height", "1", "--raw-projections", "4",
       "--max-memory", "8G");
}

/* options and angle files ------------------------------------------------- */

static void
mk_opt (GPtrArray *args, const char *opt, const char *value)
{
  CMD ("reconstruct", small_scan, opt, value);
}

#define OPT_CASE(fn, opt, value) \
  static void fn (const char *d, GPtrArray *a) { mk_opt (a, opt, value); }

OPT_CASE (mk_opt_center_nan, "--center", "nan")
OPT_CASE (mk_opt_center_inf, "--center", "-inf")
OPT_CASE (mk_opt_center_overflow, "--center", "1e400")
OPT_CASE (mk_opt_center_garbage, "--center", "12abc")
OPT_CASE (mk_opt_center_outside, "--center", "500")
OPT_CASE (mk_opt_row_negative, "--row", "-3")
OPT_CASE (mk_opt_row_fraction, "--row", "2.5")
OPT_CASE (mk_opt_row_outside, "--row", "8")
OPT_CASE (mk_opt_rows_reversed, "--rows", "6:2")
OPT_CASE (mk_opt_rows_empty, "--rows", "3:3")
OPT_CASE (mk_opt_rows_garbage, "--rows", "1-4")
OPT_CASE (mk_opt_roi_outside, "--roi", "40,40,32,32")
OPT_CASE (mk_opt_roi_zero, "--roi", "0,0,0,5")
OPT_CASE (mk_opt_roi_negative, "--roi", "-1,0,5,5")
OPT_CASE (mk_opt_angle_range_nan, "--angle-range", "nan")
OPT_CASE (mk_opt_angle_range_negative, "--angle-range", "-180")
OPT_CASE (mk_opt_max_memory_garbage, "--max-memory", "lots")
OPT_CASE (mk_opt_max_memory_small, "--max-memory", "1K")
OPT_CASE (mk_opt_filter_unknown, "--filter", "gauss")

static void
mk_angles (const char *dir, GPtrArray *args, const char *text, gssize len)
{
  g_autofree char *path = in_dir (dir, "angles.txt");
  g_autofree char *stack = tiff_file (dir, "stack.tif", 16, 4, 4, 16, SAMPLEFORMAT_UINT, 1,
                                      COMPRESSION_NONE, FALSE);

  if (text != NULL)
    write_file (path, text, len);
  CMD ("reconstruct", stack, "--already-sinogram", "--angles", path);
}

static void mk_angles_nan (const char *d, GPtrArray *a) { mk_angles (d, a, "0\n45\nnan\n135\n", -1); }
static void mk_angles_huge (const char *d, GPtrArray *a) { mk_angles (d, a, "0\n45\n1e300\n135\n", -1); }
static void mk_angles_count (const char *d, GPtrArray *a) { mk_angles (d, a, "0\n45\n90\n", -1); }
static void mk_angles_binary (const char *d, GPtrArray *a) { mk_angles (d, a, "0\n4\0005\n90\n135\n", 13); }
static void mk_angles_equal (const char *d, GPtrArray *a) { mk_angles (d, a, "30\n30\n210\n30\n", -1); }
static void mk_angles_empty (const char *d, GPtrArray *a) { mk_angles (d, a, "# nothing\n\n", -1); }
static void mk_angles_missing (const char *d, GPtrArray *a) { mk_angles (d, a, NULL, 0); }
static void mk_angles_good (const char *d, GPtrArray *a) { mk_angles (d, a, "# degrees\n0\n45 # two\n\n90\n135\n", -1); }

/* Files an angle list cannot be, refused before they are read: a device
 * that never ends, and 1 GiB (sparse) for 4 projections. */
static void
mk_angles_device (const char *dir, GPtrArray *args)
{
  g_autofree char *stack = tiff_file (dir, "stack.tif", 16, 4, 4, 16, SAMPLEFORMAT_UINT, 1,
                                      COMPRESSION_NONE, FALSE);

  CMD ("reconstruct", stack, "--already-sinogram", "--angles", "/dev/zero");
}

static void
mk_angles_huge_file (const char *dir, GPtrArray *args)
{
  g_autofree char *path = in_dir (dir, "angles.txt");

  mk_angles (dir, args, "0\n45\n90\n135\n", -1);
  g_assert_cmpint (truncate (path, (off_t) 1 << 30), ==, 0);
}

static const HostileCase hostile_cases[] = {
  { "hdf5/missing-data", mk_h5_missing, "neither /exchange/data" },
  { "hdf5/scalar-data", mk_h5_rank0, "has 0 dimensions" },
  { "hdf5/rank-2", mk_h5_rank2, "has 2 dimensions" },
  { "hdf5/rank-4", mk_h5_rank4, "has 4 dimensions" },
  { "hdf5/zero-projections", mk_h5_zero_proj, "no projections" },
  { "hdf5/zero-width", mk_h5_zero_width, "empty detector" },
  { "hdf5/huge-declared-width", mk_h5_huge_width, "would need" },
  { "hdf5/huge-declared-projections", mk_h5_huge_proj, "would need" },
  { "hdf5/dims-over-32-bits", mk_h5_over_4g, "too large" },
  { "hdf5/huge-dims-tiny-chunks", mk_h5_huge_tiny_chunks, "would need" },
  { "hdf5/string-type", mk_h5_string, "string" },
  { "hdf5/compound-type", mk_h5_compound, "compound" },
  { "hdf5/16-byte-integers", mk_h5_wide_int, "only 1, 2, 4 and 8" },
  { "hdf5/int8", mk_h5_int8, NULL },
  { "hdf5/external-link", mk_h5_external_ok, NULL },
  { "hdf5/external-link-missing", mk_h5_external_missing, "external link to /exchange/data in no-such-file.h5" },
  { "hdf5/soft-link-loop", mk_h5_soft_loop, "leads nowhere" },
  { "hdf5/theta-wrong-length", mk_h5_theta_short, "angles but" },
  { "hdf5/theta-all-equal", mk_h5_theta_equal, "fewer than two distinct" },
  { "hdf5/theta-nan", mk_h5_theta_nan, "not finite" },
  { "hdf5/theta-huge", mk_h5_theta_huge, "plausible" },
  { "hdf5/theta-2d", mk_h5_theta_2d, "list of numbers" },
  { "hdf5/theta-string", mk_h5_theta_string, "list of numbers" },
  { "hdf5/flats-other-size", mk_h5_flats_mismatch, "frames are" },
  { "hdf5/flats-below-darks", mk_h5_flats_below_darks, "not above the dark" },
  { "hdf5/all-nan", mk_h5_all_nan, "NaN" },
  { "hdf5/all-inf", mk_h5_all_inf, "NaN" },
  { "hdf5/huge-values", mk_h5_huge_values, "absurdly large" },
  { "hdf5/corrupt-chunk", mk_h5_corrupt_chunk, "cannot read row" },
  { "hdf5/truncated", mk_h5_truncated, "cut.h5" },
  { "hdf5/not-hdf5", mk_not_hdf5, "neither HDF5" },
  { "hdf5/empty-file", mk_empty_file, "neither HDF5" },
  { "hdf5/bad-superblock", mk_bad_superblock, "bad.h5" },
  { "hdf5/missing-file", mk_missing_file, "no such file" },
  { "nxtomo/data-data-interleaved", mk_nx_data_data, NULL },
  { "nxtomo/bad-image-key", mk_nx_bad_key, "expected 0" },
  { "nxtomo/image-key-length", mk_nx_key_length, "has 5 values" },
  { "tiff/one-projection", mk_tiff_one_page, "has 1 projection" },
  { "tiff/tiled", mk_tiff_tiled, NULL },
  { "tiff/1-bit", mk_tiff_1bit, "1-bit" },
  { "tiff/rgb", mk_tiff_rgb, "samples per pixel" },
  { "tiff/float64", mk_tiff_f64, NULL },
  { "tiff/float16", mk_tiff_f16, NULL },
  { "tiff/int16", mk_tiff_i16, NULL },
  { "tiff/int8", mk_tiff_i8, NULL },
  { "tiff/complex", mk_tiff_complex, "stack.tif" },
  { "tiff/truncated", mk_tiff_truncated, "truncated" },
  { "tiff/truncated-header", mk_tiff_truncated_header, "head.tif" },
  { "tiff/mixed-page-sizes", mk_tiff_mixed_pages, "page 2" },
  { "tiff/mixed-file-sizes", mk_tiff_mixed_files, "p1.tif" },
  { "tiff/glob-in-folder", mk_tiff_glob, NULL },
  { "tiff/empty-folder", mk_tiff_empty_folder, "no .tif" },
  { "tiff/not-tiff", mk_tiff_text, "fake.tif" },
  { "tiff/huge-header-width", mk_tiff_huge_width, "would need" },
  { "raw/offset-past-end", mk_raw_offset_past_end, "past its end" },
  { "raw/overflowing-dims", mk_raw_overflow, "overflows 64 bits" },
  { "raw/size-mismatch", mk_raw_size_mismatch, "100 bytes but" },
  { "raw/no-dims", mk_raw_no_dims, "must all be given" },
  { "raw/huge-row", mk_raw_huge, "would need" },
  { "options/center-nan", mk_opt_center_nan, "--center “nan” is not a finite number" },
  { "options/center-inf", mk_opt_center_inf, "not a finite number" },
  { "options/center-overflow", mk_opt_center_overflow, "not a finite number" },
  { "options/center-garbage", mk_opt_center_garbage, "not a number" },
  { "options/center-outside", mk_opt_center_outside, "outside the detector" },
  { "options/row-negative", mk_opt_row_negative, "--row -3 is out of range" },
  { "options/row-fraction", mk_opt_row_fraction, "not a whole number" },
  { "options/row-outside", mk_opt_row_outside, "out of range" },
  { "options/rows-reversed", mk_opt_rows_reversed, "reversed" },
  { "options/rows-empty", mk_opt_rows_empty, "reversed" },
  { "options/rows-garbage", mk_opt_rows_garbage, "A:B" },
  { "options/roi-outside", mk_opt_roi_outside, "does not fit" },
  { "options/roi-zero", mk_opt_roi_zero, "--roi" },
  { "options/roi-negative", mk_opt_roi_negative, "--roi" },
  { "options/angle-range-nan", mk_opt_angle_range_nan, "--angle-range" },
  { "options/angle-range-negative", mk_opt_angle_range_negative, "--angle-range" },
  { "options/max-memory-garbage", mk_opt_max_memory_garbage, "not a size" },
  { "options/max-memory-too-small", mk_opt_max_memory_small, "would need" },
  { "options/filter-unknown", mk_opt_filter_unknown, "gauss" },
  { "angles/nan", mk_angles_nan, "line 3" },
  { "angles/huge", mk_angles_huge, "plausible" },
  { "angles/wrong-count", mk_angles_count, "3 angles" },
  { "angles/binary", mk_angles_binary, "not a text file" },
  { "angles/all-equal", mk_angles_equal, "fewer than two distinct" },
  { "angles/missing-file", mk_angles_missing, "angles.txt" },
  { "angles/empty", mk_angles_empty, "holds no angles" },
  { "angles/comments", mk_angles_good, NULL },
  { "angles/device", mk_angles_device, "/dev/zero is not a regular file (a device)" },
  { "angles/huge-file", mk_angles_huge_file, "4 angles, one per line, need at most" },
};

/* A slice's name in the output folder is a symbolic link: to the scan
 * itself, refused (the scan unchanged); to some other file, the link is
 * replaced by the slice and the file it led to is left alone. */
static void
test_output_folder_symlink (void)
{
  g_autofree char *scan = tmp_path ("link-scan.h5");
  g_autofree char *other = tmp_path ("link-other.txt");
  g_autofree char *dir = tmp_path ("link-out");
  g_autofree char *slice = g_build_filename (dir, "slice_00004.tif", NULL);
  g_autofree char *before = NULL, *after = NULL;
  gsize len_before, len_after;
  struct stat st;

  g_assert_true (g_file_get_contents (small_scan, &before, &len_before, NULL));
  g_assert_true (g_file_set_contents (scan, before, len_before, NULL));
  write_file (other, "not a slice", -1);
  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  g_assert_cmpint (symlink ("../link-scan.h5", slice), ==, 0);
  {
    g_auto(TomoTestResult) r = { 0 };

    RUN (&r, "reconstruct", scan, "--rows", ":", "--quiet", "-o", dir);
    tomo_test_assert_fails_with (&r, "is the input");
  }
  g_assert_true (g_file_get_contents (scan, &after, &len_after, NULL));
  g_assert_cmpmem (before, len_before, after, len_after);
  g_assert_cmpuint (tomo_test_count_entries (dir), ==, 1);

  g_assert_cmpint (g_unlink (slice), ==, 0);
  g_assert_cmpint (symlink ("../link-other.txt", slice), ==, 0);
  {
    g_auto(TomoTestResult) r = { 0 };

    RUN (&r, "reconstruct", scan, "--rows", ":", "--quiet", "-o", dir);
    g_assert_cmpint (r.status, ==, 0);
  }
  g_clear_pointer (&after, g_free);
  after = read_file (other);
  g_assert_cmpstr (after, ==, "not a slice");
  g_assert_cmpint (lstat (slice, &st), ==, 0);
  g_assert_true (S_ISREG (st.st_mode));
  g_assert_cmpuint (tomo_test_count_entries (dir), ==, 8);
  tomo_test_remove_tree (dir);
  g_unlink (other);
  g_unlink (scan);
}

/* A slice of the run written into `dir`: under a hidden name, beside its
 * name, or over one of the "previous result" files. */
static gboolean
slice_seen (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  gboolean seen = FALSE;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      struct stat st;

      if (g_str_has_prefix (name, "."))
        seen |= g_file_test (path, G_FILE_TEST_IS_REGULAR) || tomo_test_count_entries (path) > 0;
      else
        seen |= g_str_has_suffix (name, ".part") ||
                (stat (path, &st) == 0 && st.st_size != strlen ("previous result"));
    }
  return seen;
}

/* A slice of the first half (rows 0–31) under its own name. */
static gboolean
new_slice_placed (const char *dir)
{
  for (guint row = 0; row < 32; row++)
    {
      g_autofree char *name = g_strdup_printf ("slice_%05u.tif", row);
      g_autofree char *path = g_build_filename (dir, name, NULL);

      if (g_file_test (path, G_FILE_TEST_EXISTS))
        return TRUE;
    }
  return FALSE;
}

/* SIGTERM while a volume is written into a folder that holds an earlier
 * run's slices (all 64 of them, or the last 32, so that the first rows
 * take new names as they are written): exit 1 with the message, every
 * earlier slice as it was, nothing of the interrupted run left (no hidden
 * file, no new name). */
static void
test_output_folder_interrupted (void)
{
  const char *sample = g_getenv ("TOMO_SAMPLE_SCAN");
  const char *tomolive = g_getenv ("TOMOLIVE");
  const char *argv[] = { tomolive, "reconstruct", sample, "--rows", "0:64", "--backend", "cpu",
                         "--writers", "1", "--progress", "-o", NULL, NULL };

  for (guint earlier = 64; earlier >= 32; earlier -= 32)
    {
      g_autofree char *dir = tmp_path (earlier == 64 ? "interrupt-folder" : "interrupt-half");
      g_autofree char *err = NULL;
      int wait_status = 0;

      argv[11] = dir;
      g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
      for (guint row = 64 - earlier; row < 64; row++)
        {
          g_autofree char *name = g_strdup_printf ("slice_%05u.tif", row);
          g_autofree char *path = g_build_filename (dir, name, NULL);

          write_file (path, "previous result", -1);
        }
      /* Terminated once the first slices of the run are written (in the
       * half folder: once one has taken a new name). */
      err = run_and_signal (argv, dir, earlier == 64 ? slice_seen : new_slice_placed, SIGTERM,
                            &wait_status);
      g_assert_true (WIFEXITED (wait_status));
      g_assert_cmpint (WEXITSTATUS (wait_status), ==, 1);
      g_assert_nonnull (strstr (err, "terminated; incomplete output removed"));
      g_assert_cmpuint (tomo_test_count_entries (dir), ==, earlier);
      for (guint row = 64 - earlier; row < 64; row++)
        {
          g_autofree char *name = g_strdup_printf ("slice_%05u.tif", row);
          g_autofree char *path = g_build_filename (dir, name, NULL);
          g_autofree char *text = read_file (path);

          g_assert_cmpstr (text, ==, "previous result");
        }
      tomo_test_remove_tree (dir);
    }
}

enum { OTHER_LINK, OTHER_VIRTUAL, OTHER_VIRTUAL_BLOCKS, OTHER_VIRTUAL_BLOCK_FOLDERS };

/* A Data Exchange file whose /exchange/data lies in another file, larger
 * than the file that names it: an external link to a contiguous dataset
 * there, or a virtual dataset mapping it, as detectors write their frames
 * apart from the scan's metadata (OTHER_VIRTUAL_BLOCKS: in files of 30
 * frames each, "frames-%b.h5", the extent growing with the files;
 * OTHER_VIRTUAL_BLOCK_FOLDERS: the same in one folder a block,
 * "run-%b/frames.h5").  Read
 * (the storage is checked against the file that holds it), and that other
 * file (for blocks, the middle one) is an input the output may not be. */
static void
test_output_other_file (gconstpointer data_mode)
{
  int mode = GPOINTER_TO_INT (data_mode);
  static const char *names[] = { "elink", "vds", "vds-blocks", "vds-block-folders" };
  gboolean blocks = mode == OTHER_VIRTUAL_BLOCKS || mode == OTHER_VIRTUAL_BLOCK_FOLDERS;
  g_autofree char *dir = tmp_path (names[mode]);
  g_autofree char *master = NULL, *data = NULL;
  g_autofree char *out = NULL;
  g_autofree char *before = NULL, *after = NULL;
  gsize len_before, len_after;
  hsize_t d[3] = { 90, 8, 64 }, df[3] = { 2, 8, 64 }, dt[1] = { 90 };
  g_autofree guint16 *counts = g_new (guint16, 90 * 8 * 64);
  guint16 white[2 * 8 * 64], dark[2 * 8 * 64];
  double theta[90];
  hid_t file;

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  for (guint i = 0; i < 90 * 8 * 64; i++)
    counts[i] = 1000 + (i * 7) % 301;
  for (guint i = 0; i < G_N_ELEMENTS (white); i++)
    white[i] = 2000, dark[i] = 100;
  for (guint i = 0; i < 90; i++)
    theta[i] = 2.0 * i;
  if (blocks)
    for (guint b = 0; b < 3; b++)
      {
        g_autofree char *name = g_strdup_printf (mode == OTHER_VIRTUAL_BLOCKS ? "frames-%u.h5" : "run-%u/frames.h5", b);
        g_autofree char *path = NULL;
        hsize_t db[3] = { 30, 8, 64 };

        if (mode == OTHER_VIRTUAL_BLOCK_FOLDERS)
          {
            g_autofree char *folder = g_strdup_printf ("%s/run-%u", dir, b);

            g_assert_cmpint (g_mkdir (folder, 0755), ==, 0);
          }
        file = h5_new (dir, name, &path);
        tomo_test_h5_write (file, "/data", H5T_STD_U16LE, 3, db, NULL, H5T_NATIVE_UINT16,
                            counts + (gsize) b * 30 * 8 * 64);
        H5Fclose (file);
        if (b == 1)
          data = g_steal_pointer (&path);
      }
  else
    {
      file = h5_new (dir, "elink-data.h5", &data);
      tomo_test_h5_write (file, "/exchange/data", H5T_STD_U16LE, 3, d, NULL, H5T_NATIVE_UINT16,
                          counts);
      H5Fclose (file);
    }
  file = h5_new (dir, "elink-master.h5", &master);
  tomo_test_h5_write (file, "/exchange/data_white", H5T_STD_U16LE, 3, df, NULL,
                      H5T_NATIVE_UINT16, white);
  tomo_test_h5_write (file, "/exchange/data_dark", H5T_STD_U16LE, 3, df, NULL,
                      H5T_NATIVE_UINT16, dark);
  tomo_test_h5_write (file, "/exchange/theta", H5T_IEEE_F64LE, 1, dt, NULL, H5T_NATIVE_DOUBLE,
                      theta);
  if (mode != OTHER_LINK)
    {
      /* Mapped by a name relative to the master's folder, as written beside it. */
      hsize_t max[3] = { H5S_UNLIMITED, 8, 64 }, block[3] = { 30, 8, 64 };
      hsize_t start[3] = { 0 }, count[3] = { H5S_UNLIMITED, 1, 1 };
      hid_t space = H5Screate_simple (3, d, mode == OTHER_VIRTUAL ? NULL : max);
      hid_t dcpl = H5Pcreate (H5P_DATASET_CREATE);
      hid_t dset;

      if (mode == OTHER_VIRTUAL)
        g_assert_cmpint (H5Pset_virtual (dcpl, space, "elink-data.h5", "/exchange/data", space), >=, 0);
      else
        {
          hid_t src = H5Screate_simple (3, block, NULL);

          g_assert_cmpint (H5Sselect_hyperslab (space, H5S_SELECT_SET, start, block, count, block), >=, 0);
          g_assert_cmpint (H5Pset_virtual (dcpl, space,
                                           mode == OTHER_VIRTUAL_BLOCKS ? "frames-%b.h5" : "run-%b/frames.h5",
                                           "/data", src), >=, 0);
          H5Sclose (src);
        }
      dset = H5Dcreate2 (file, "/exchange/data", H5T_STD_U16LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      g_assert_cmpint (dset, >=, 0);
      H5Dclose (dset);
      H5Pclose (dcpl);
      H5Sclose (space);
    }
  else
    g_assert_cmpint (H5Lcreate_external ("elink-data.h5", "/exchange/data", file, "/exchange/data",
                                         H5P_DEFAULT, H5P_DEFAULT), >=, 0);
  H5Fclose (file);
  {
    struct stat ms, ds;

    g_assert_cmpint (stat (master, &ms), ==, 0);
    g_assert_cmpint (stat (data, &ds), ==, 0);
    g_assert_cmpint (ms.st_size, <, ds.st_size);
  }
  out = in_dir (dir, "out.tif");
  {
    g_auto(TomoTestResult) r = { 0 };

    RUN (&r, "reconstruct", master, "--rows", "0:2", "--quiet", "-o", out);
    g_assert_cmpstr (r.err, ==, "");
    g_assert_cmpint (r.status, ==, 0);
    g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
  }
  g_assert_true (g_file_get_contents (data, &before, &len_before, NULL));
  {
    g_auto(TomoTestResult) r = { 0 };

    RUN (&r, "reconstruct", master, "--row", "3", "-o", data);
    tomo_test_assert_fails_with (&r, "is the input");
  }
  {
    g_auto(TomoTestResult) r = { 0 };

    RUN (&r, "reconstruct", master, "--plane", "xz:10", "--backend", "cpu", "-o", data);
    tomo_test_assert_fails_with (&r, "is the input");
  }
  g_assert_true (g_file_get_contents (data, &after, &len_after, NULL));
  g_assert_cmpmem (before, len_before, after, len_after);
  tomo_test_remove_tree (dir);
}

static void
test_hostile (gconstpointer data)
{
  const HostileCase *c = data;
  g_autofree char *name = g_strdelimit (g_strdup (c->name), "/", '-');
  g_autofree char *dir = tmp_path (name);
  g_autofree char *out = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_auto(TomoTestResult) r = { 0 };

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  out = g_build_filename (dir, "out.tif", NULL);
  c->make (dir, args);
  if (g_str_equal (args->pdata[0], "reconstruct"))
    push (args, "-o", out, "--quiet", NULL);
  g_ptr_array_add (args, NULL);
  tomo_test_run_argv (&r, (const char **) args->pdata);
  if (c->expect == NULL)
    {
      if (r.status != 0)
        {
          g_test_fail_printf ("%s should be accepted: %s", c->name, r.err);
          return;
        }
      g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
    }
  else
    {
      g_test_message ("%s → %s", c->name, r.err);
      if (r.status != 1 || strstr (r.err, c->expect) == NULL)
        {
          g_test_fail_printf ("%s: expected exit 1 and “%s”, got %d: %s", c->name, c->expect,
                              r.status, r.err);
          return;
        }
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
  g_assert_null (strstr (r.err, "CRITICAL"));
  g_assert_null (strstr (r.err, "libtiff reported no detail"));
  assert_no_temporaries (dir);
}

/* A strip header may declare gigabytes: compared with the budget, and with
 * the file, before anything is allocated (the loader API: one page is no
 * scan the command line would reconstruct). */
static void
test_tiff_strip_declared (void)
{
  g_autofree char *huge = tmp_path ("huge-strip.tif");
  g_autofree char *past = tmp_path ("strip-past-end.tif");
  g_autoptr(GError) error = NULL;
  TomoOpenOptions options;
  float *row = g_new (float, 4000);

  tomo_open_options_init (&options);
  options.already_sinogram = TRUE;
  /* One compressed strip of 4.8 GB (libtiff splits uncompressed ones). */
  tiff_header (huge, 4000, 600000, 600000, 0xFFFFFFF0u, COMPRESSION_LZW);
  /* 8 KiB declared, none there. */
  tiff_header (past, 64, 64, 64, 64 * 64 * 2, COMPRESSION_LZW);

  tomo_memory_set_limit ((guint64) 1 << 30);
  {
    g_autoptr(TomoScan) scan = tomo_scan_open (huge, &options, &error);

    g_assert_no_error (error);
    g_assert_false (tomo_scan_read_raw_sinogram (scan, 7, row, &error));
    g_test_message ("%s", error->message);
    g_assert_nonnull (strstr (error->message, "one strip of 4800000000 bytes would need"));
    g_clear_error (&error);
  }
  tomo_memory_set_limit (0);
  {
    g_autoptr(TomoScan) scan = tomo_scan_open (past, &options, &error);

    g_assert_no_error (error);
    g_assert_false (tomo_scan_read_raw_sinogram (scan, 7, row, &error));
    g_test_message ("%s", error->message);
    g_assert_nonnull (strstr (error->message, "declares 8192 bytes"));
    g_assert_nonnull (strstr (error->message, "truncated or corrupt"));
  }
  g_free (row);
}

/* Every codec this libtiff has that can hold 16-bit grey data: written,
 * then read back through the loader value for value (lossless codecs) or
 * refused with a message naming the file (codecs it cannot decode). */
static void
test_tiff_codec (gconstpointer data)
{
  const TIFFCodec *codec = data;
  g_autofree char *name = g_strdelimit (g_strdup_printf ("codec-%s", codec->name), "/ ", '-');
  g_autofree char *dir = tmp_path (name);
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  TomoOpenOptions options;
  float row[6 * 32];
  TIFF *tif;

  g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
  path = in_dir (dir, "codec.tif");
  tif = TIFFOpen (path, "w");
  g_assert_nonnull (tif);
  for (guint p = 0; p < 6; p++)
    tiff_page (tif, 32, 8, 16, SAMPLEFORMAT_UINT, 1, codec->scheme, FALSE, 100 + 10 * p);
  TIFFClose (tif);

  tomo_open_options_init (&options);
  options.already_sinogram = TRUE;
  options.already_linear = TRUE;
  scan = tomo_scan_open (path, &options, &error);
  if (scan != NULL)
    tomo_scan_read_raw_sinogram (scan, 3, row, &error);
  if (error != NULL)
    {
      /* This codec cannot write 16-bit grey (JPEG, CCITT…) or read it back:
       * the message must say which file and why. */
      g_test_message ("%s: %s", codec->name, error->message);
      g_assert_nonnull (strstr (error->message, "codec.tif"));
      g_assert_null (strstr (error->message, "no detail"));
      return;
    }
  /* Lossy or special-purpose codecs (PixarLog, SGILog, JPEG, WebP…) may
   * change values: read without a crash is all that is asked of them. */
  if (!g_strv_contains ((const char *[]) { "None", "LZW", "PackBits", "Deflate", "AdobeDeflate",
                                           "LZMA", "ZSTD", NULL }, codec->name))
    {
      g_test_message ("%s: read, values not compared (lossy codec)", codec->name);
      return;
    }
  for (guint p = 0; p < 6; p++)
    for (guint x = 0; x < 32; x++)
      g_assert_cmpfloat (row[p * 32 + x], ==, 100 + 10 * p + 3 + x % 13);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  TomoPhantomParams p;
  int status;

  setlocale (LC_ALL, "");
  g_test_init (&argc, &argv, NULL);
  /* The test writes odd TIFFs on purpose: libtiff's complaints are expected. */
  TIFFSetErrorHandler (NULL);
  TIFFSetWarningHandler (NULL);
  tmp_dir = tomo_test_make_tmp_dir ("tomo-hardening-XXXXXX");

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
  g_test_add_func ("/tomo/hardening/output/signal-without-output", test_signal_without_output);
  g_test_add_func ("/tomo/hardening/output/made-folder-interrupted",
                   test_output_made_folder_interrupted);
  g_test_add_func ("/tomo/hardening/output/registry", test_output_registry);
  g_test_add_func ("/tomo/hardening/output/folder-symlink", test_output_folder_symlink);
  g_test_add_func ("/tomo/hardening/output/folder-interrupted", test_output_folder_interrupted);
  g_test_add_data_func ("/tomo/hardening/output/external-link", GINT_TO_POINTER (OTHER_LINK), test_output_other_file);
  g_test_add_data_func ("/tomo/hardening/output/virtual-dataset", GINT_TO_POINTER (OTHER_VIRTUAL), test_output_other_file);
  g_test_add_data_func ("/tomo/hardening/output/virtual-block-folders",
                        GINT_TO_POINTER (OTHER_VIRTUAL_BLOCK_FOLDERS), test_output_other_file);
  g_test_add_data_func ("/tomo/hardening/output/virtual-blocks", GINT_TO_POINTER (OTHER_VIRTUAL_BLOCKS),
                        test_output_other_file);
  g_test_add_func ("/tomo/hardening/tiff/strip-declared", test_tiff_strip_declared);
  for (guint i = 0; i < G_N_ELEMENTS (hostile_cases); i++)
    {
      g_autofree char *test_path = g_strconcat ("/tomo/hardening/", hostile_cases[i].name, NULL);
      g_test_add_data_func (test_path, &hostile_cases[i], test_hostile);
    }
  codec_names = g_ptr_array_new_with_free_func (g_free);
  {
    TIFFCodec *codecs = TIFFGetConfiguredCODECs ();

    for (TIFFCodec *c = codecs; c != NULL && c->name != NULL; c++)
      {
        g_autofree char *test_path = g_strdup_printf ("/tomo/hardening/tiff/codec/%s", c->name);
        TIFFCodec *copy = g_memdup2 (c, sizeof *c);

        copy->name = g_strdup (c->name);
        g_ptr_array_add (codec_names, copy->name);
        g_ptr_array_add (codec_names, copy);
        g_test_add_data_func (test_path, copy, test_tiff_codec);
      }
    _TIFFfree (codecs);
  }

  status = tomo_test_run_and_remove_tree (tmp_dir);
  g_ptr_array_unref (codec_names);
  g_free (small_scan);
  return status;
}
