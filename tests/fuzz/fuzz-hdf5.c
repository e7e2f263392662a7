/* SPDX-License-Identifier: GPL-3.0-or-later
 *
 * HDF5 Data Exchange and NXtomo loaders on an in-memory file image (the
 * core driver): the first byte picks the options (bit 0: already a
 * sinogram; bits 1–2: auto, Data Exchange or NXtomo), the rest is the file.
 */
#include "config.h"

#include "fuzz-common.h"
#include "fuzz-scan-common.h"
#include "tomo-scan-private.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  static const TomoScanFormat formats[] = {
    TOMO_SCAN_FORMAT_AUTO, TOMO_SCAN_FORMAT_DXCHANGE, TOMO_SCAN_FORMAT_NXTOMO, TOMO_SCAN_FORMAT_AUTO,
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(TomoScan) scan = NULL;
  TomoScanLoader *loader;
  TomoOpenOptions options;

  fuzz_init ();
  if (size < 2)
    return 0;
  tomo_open_options_init (&options);
  options.already_sinogram = data[0] & 1;
  loader = _tomo_io_hdf5_open_image (data + 1, size - 1, "fuzz.h5", formats[(data[0] >> 1) & 3],
                                     &options, &error);
  if (loader == NULL)
    return 0;
  scan = _tomo_scan_new_from_loader (loader, &options, &error);
  if (scan != NULL)
    fuzz_exercise_scan (scan);
  return 0;
}
