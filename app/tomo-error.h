/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Reading scans: the message always names the file, and the dataset or value. */
#define TOMO_IO_ERROR (tomo_io_error_quark ())
typedef enum
{
  TOMO_IO_ERROR_NOT_FOUND,       /* file or folder missing */
  TOMO_IO_ERROR_FORMAT,          /* not the format it claims to be / unknown format */
  TOMO_IO_ERROR_MISSING_DATASET, /* HDF5 without the expected datasets */
  TOMO_IO_ERROR_SHAPE,           /* sizes disagree (projections vs flats, angles vs projections…) */
  TOMO_IO_ERROR_VALUE,           /* bad values: flats equal to darks, NaN/Inf where not allowed */
  TOMO_IO_ERROR_READ,            /* truncated or unreadable data */
  TOMO_IO_ERROR_WRITE,
} TomoIoError;

/* Reconstruction parameters and requests. */
#define TOMO_RECON_ERROR (tomo_recon_error_quark ())
typedef enum
{
  TOMO_RECON_ERROR_INVALID_PARAM, /* centre outside the detector, row out of range, bad ROI… */
  TOMO_RECON_ERROR_BACKEND,       /* backend not available */
  TOMO_RECON_ERROR_CANCELLED,
  TOMO_RECON_ERROR_DEVICE_FAULT,  /* the GPU failed (launch failure, lost device): the engine went to the CPU */
} TomoReconError;

GQuark tomo_io_error_quark (void);
GQuark tomo_recon_error_quark (void);

G_END_DECLS
