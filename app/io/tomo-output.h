/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Safe output files.  Every writer (TIFF, HDF5, PNG, …) goes through this,
 * so that:
 *
 *  - an output is never one of the inputs: the check compares device and
 *    inode (st_dev, st_ino), so hard links, symlinks, "./a" vs "a" are all
 *    caught; when the output is a folder, no input may live directly in it.
 *    The inputs are those a caller passes and, always, every file an open
 *    TomoScan reads (the input registry below): no caller can forget one;
 *  - a regular output is written to a temporary file in the same folder
 *    ("NAME.XXXXXX.part") and renamed over the final name only when it is
 *    complete, so an error, Ctrl+C or SIGTERM never leaves a half-written
 *    file and never destroys an existing one;
 *  - a folder of files (one TIFF per slice) is written under hidden names;
 *    a file takes a name no file has as soon as it is complete, and
 *    replaces an earlier one only when all are complete (TomoOutputFolder):
 *    a failed run leaves the folder as it was;
 *  - nothing the program did not create is ever unlinked: an output that
 *    exists and is not a regular file (/dev/null, a FIFO, a character
 *    device) is written in place and left alone on failure;
 *  - on SIGINT/SIGTERM (after tomo_output_install_signal_handlers()) every
 *    live temporary file (and every file of a folder's run) is removed, a line is printed and the
 *    process exits with status 1.
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

/* The input registry: every file this process reads, by device and inode
 * as it was when registered (a later rename or a second name changes
 * nothing).  TomoScan registers each file it reads (the scan, TIFF pages,
 * flats, darks, angle files, HDF5 files reached through external links)
 * when it opens them and releases them when it is freed.  Counted: a file
 * registered twice (two scans of it) stays an input until released twice.
 * Thread-safe. */
typedef struct
{
  guint64 dev, ino;
} TomoInputId;

/* Registers `path` (followed through symbolic links) and fills `id`;
 * FALSE, registering nothing, when `path` cannot be stat()ed. */
gboolean    tomo_output_register_input (const char  *path,
                                        TomoInputId *id);
void        tomo_output_release_input  (const TomoInputId *id);
/* Inputs registered now, counting each file once (for tests). */
guint       tomo_output_get_n_inputs   (void);

/* Fails with TOMO_IO_ERROR_WRITE when `path` (a file, or a folder that
 * will receive files) is, or holds, one of `inputs` (NULL-terminated paths;
 * missing inputs are ignored) or a registered input.  `inputs` may be NULL:
 * the registry is checked all the same. */
gboolean    tomo_output_check_inputs   (const char         *path,
                                        const char * const *inputs,
                                        GError            **error);

/* Checks `path` as tomo_output_check_inputs() does and creates the temporary
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
/* TRUE when `path` exists and is not a regular file (a device, a FIFO):
 * written in place, with no temporary file.  Writers that must read back
 * what they wrote (HDF5) refuse such outputs. */
gboolean    tomo_output_is_in_place    (TomoOutput *output);
/* Renames the temporary file over the final path.  On failure the
 * temporary file is removed and the final path left as it was. */
gboolean    tomo_output_commit         (TomoOutput *output,
                                        GError    **error);
/* Removes the temporary file (never a file it did not create). */
void        tomo_output_abort          (TomoOutput *output);
/* Aborts unless committed, then frees. NULL is allowed. */
void        tomo_output_free           (TomoOutput *output);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoOutput, tomo_output_free)

/* A folder of files named PREFIX + row (at least five digits, "%05u") +
 * SUFFIX, rows [first, first + n): each written first under a hidden name
 * beside its own ("DIR/.NAME.tomolive-XXXXXX", one suffix per run), moved
 * to its name as soon as it is complete where no file has that name
 * (tomo_output_folder_place), and by commit where one has.  No file of DIR
 * is replaced before commit: an error, an abort or a signal removes the
 * hidden files and the names the run took, and leaves the files of an
 * earlier run as they were; a completed run replaces them. */
typedef struct _TomoOutputFolder TomoOutputFolder;

/* Checks, before any work, that `dir` is an existing folder, is no input
 * and holds none (tomo_output_check_inputs()), and that every final name
 * can be replaced: not a folder or another non-regular file, not a
 * read-only file, not an input (through a symbolic link either: an
 * existing link is replaced by the file, never written through). */
TomoOutputFolder *tomo_output_folder_open   (const char         *dir,
                                             const char         *prefix,
                                             const char         *suffix,
                                             guint               first,
                                             guint               n,
                                             const char * const *inputs,
                                             GError            **error);
/* The caller made `dir` for this run: a signal removes it too, when the
 * rows are gone and it is empty. */
void              tomo_output_folder_set_made       (TomoOutputFolder *folder);
/* The name of row `row` (PREFIX + digits + SUFFIX), newly allocated. */
char             *tomo_output_folder_get_name       (TomoOutputFolder *folder,
                                                     guint             row);
/* Where row `row` is written: its hidden name (create it with O_EXCL; it
 * does not exist yet), newly allocated. */
char             *tomo_output_folder_get_write_path (TomoOutputFolder *folder,
                                                     guint             row);
/* Row `row`'s file is complete: when no file has its final name yet, it
 * goes there now (atomically, never replacing one), so that a run into a
 * new folder needs no renames at the end; a name taken waits for commit.
 * An error, an abort or a signal removes such a file again, so the folder
 * is as it was before the run.  Thread-safe for distinct rows. */
void              tomo_output_folder_place  (TomoOutputFolder *folder,
                                             guint             row);
/* Renames every row's file not yet placed into `dir` (each keeps the mode of the file it
 * replaces).  A missing row is an error
 * before anything is renamed.  A signal that arrives meanwhile waits until
 * the renames are done. */
gboolean          tomo_output_folder_commit (TomoOutputFolder *folder,
                                             GError          **error);
/* Removes the hidden files and the names the run took; returns the number
 * of files removed. */
guint             tomo_output_folder_abort  (TomoOutputFolder *folder);
/* Aborts unless committed, then frees. NULL is allowed. */
void              tomo_output_folder_free   (TomoOutputFolder *folder);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TomoOutputFolder, tomo_output_folder_free)

/* SIGINT and SIGTERM remove every live temporary file and folder, print
 * "tomolive: interrupted…" and exit with status 1.  For the command line;
 * the viewer keeps its own handling.  Idempotent. */
void        tomo_output_install_signal_handlers (void);

/* Number of temporary files and folders alive now (for tests). */
guint       tomo_output_get_n_live     (void);

G_END_DECLS
