/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "tomo-scan.h"

/* What a user does with a scan once open: describe it, read the first and
 * last sinogram rows (preprocessed) and their flats and darks. */
void fuzz_exercise_scan (TomoScan *scan);
