/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Shared by the fuzz targets.  Each target defines LLVMFuzzerTestOneInput;
 * built with -Dfuzzing=true it links libFuzzer, otherwise fuzz-replay.c
 * provides main() and feeds it every file of the seed corpus (a unit test).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

/* Writes `data` to this process's scratch file (created on first use,
 * removed at exit) and returns its path. */
const char *fuzz_scratch_file (const char    *suffix,
                               const uint8_t *data,
                               size_t         size);

/* A small memory budget, so that a header declaring gigabytes is refused
 * as it would be on a small machine. */
void        fuzz_init          (void);
