/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Safe output files.  Every writer (TIFF, HDF5, PNG, …) goes through this,
 * so that:
 *
 *  - an output is never one of the inputs: the check compares device and
 *    inode (st_dev, st_ino), so hard links, symlinks, "./a" vs "a" are all
 *    caught; when the output is a folder, no input may live directly in it;
 *  - a regular output is written to a temporary file in the same folder
 *    ("NAME.XXXXXX.part") and renamed over the final name only when it is
 *    complete, so an error, Ctrl+C or SIGTERM never leaves a half-written
 *    file and never destroys an existing one;
 *  - nothing the program did not create is ever unlinked: an output that
 *    exists and is not a regular file (/dev/null, a FIFO, a character
 *    device) is written in place and left alone on failure;
 *  - on SIGINT/SIGTERM (after tomo_output_install_signal_handlers()) every
 *    live temporary file is removed, a line is printed and the process
 *    exits with status 1.
 *
 * Use:
 *
 *   g_autoptr(TomoOutput) out = tomo_output_open (path, inputs, error);
 *   if (out == NULL) return FALSE;
 *   write to tomo_output_get_write_path (out) with any library …
 *   if (!ok) { tomo_output_abort (out); return FALSE; }   // temp removed
 *   return tomo_output_commit (out, error);               // renamed into place
 *
 * Freeing a TomoOutput that was neither committed nor aborted aborts it.
 * The functions are thread-safe: several outputs may be open at once, from
 * several threads (a writer pool). */
typedef struct _TomoOutput TomoOutput;

/* Fails with TOMO_IO_ERROR_WRITE when `path` (a file, or a folder that
 * will receive files) is, or holds, one of `inputs` (NULL-terminated paths;
 * missing inputs are ignored).  `inputs` may be NULL. */
gboolean    tomo_output_check_inputs   (const char         *path,
                                        const char * const *inputs,
                                        GError            **error);

/* Checks `path` against `inputs` (may be NULL) and creates the temporary
 * file (mode 0666 less the umask; at commit, the mode of the file it
 * replaces).  A read-only existing file is refused, not replaced.  The temporary file exists and is empty; libraries that
 * want to create it themselves (HDF5 H5F_ACC_TRUNC, libtiff "w") may
 * truncate it. */
TomoOutput *tomo_output_open           (const char         *path,
                                        const char * const *inputs,
                                        GError            **error);
/* Where the writer writes: the temporary file, or `path` itself when it is
 * not a regular file. */
const char *tomo_output_get_write_path (TomoOutput *output);
/* Renames the temporary file over the final path.  On failure the
 * temporary file is removed and the final path left as it was. */
gboolean    tomo_output_commit         (TomoOutput *output,
                                        GError    **error);
/* Removes the temporary file (never a file it did not create). */
void        tomo_output_abort          (TomoOutput *output);
/* Aborts unless committed, then frees. NULL is allowed. */
void        tomo_output_free           (TomoOutput *output);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoOutput, tomo_output_free)

/* SIGINT and SIGTERM remove every live temporary file, print
 * "tomolive: interrupted…" and exit with status 1.  For the command line;
 * the viewer keeps its own handling.  Idempotent. */
void        tomo_output_install_signal_handlers (void);

/* Number of temporary files alive now (for tests). */
guint       tomo_output_get_n_live     (void);

G_END_DECLS
