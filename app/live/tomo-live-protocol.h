/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-scan.h"

G_BEGIN_DECLS

/* Wire formats of live input (docs/PROTOCOLS.md describes them byte for
 * byte).  The parsers are pure functions over a byte buffer: they check
 * every declared size against the buffer and the current geometry before
 * anything is copied, and say why a message is dropped. */

#define TOMO_LIVE_ERROR (tomo_live_error_quark ())
typedef enum
{
  TOMO_LIVE_ERROR_URL,        /* bad endpoint or protocol name */
  TOMO_LIVE_ERROR_SOCKET,     /* ZeroMQ refused (bind, connect, send) */
  TOMO_LIVE_ERROR_TIMEOUT,
  TOMO_LIVE_ERROR_MEMORY,     /* --max-memory reached */
  TOMO_LIVE_ERROR_INCOMPLETE, /* a scan lacks what it needs to be reconstructed */
} TomoLiveError;

GQuark tomo_live_error_quark (void);

typedef enum
{
  TOMO_LIVE_PROTOCOL_TOMOP = 0, /* RECAST3D / SliceRecon TomoPackets */
  TOMO_LIVE_PROTOCOL_JSON,      /* JSON header + raw frame multipart */
} TomoLiveProtocol;

gboolean    tomo_live_protocol_from_string (const char        *name,
                                            TomoLiveProtocol  *protocol,
                                            GError           **error);
const char *tomo_live_protocol_to_string   (TomoLiveProtocol   protocol);

/* TomoPackets descriptors. */
enum
{
  TOMOP_GEOMETRY_SPECIFICATION = 0x301,
  TOMOP_SCAN_SETTINGS          = 0x302,
  TOMOP_PARALLEL_BEAM_GEOMETRY = 0x303,
  TOMOP_PROJECTION             = 0x309,
};

/* Why a message was dropped: one counter per kind. */
typedef enum
{
  TOMO_LIVE_DROP_SHORT = 0,     /* fewer bytes than its fields declare */
  TOMO_LIVE_DROP_LONG,          /* more bytes than its fields declare */
  TOMO_LIVE_DROP_UNKNOWN,       /* descriptor nobody knows */
  TOMO_LIVE_DROP_IGNORED,       /* known RECAST3D traffic tomolive does not use */
  TOMO_LIVE_DROP_NEGATIVE,      /* negative or zero count or size */
  TOMO_LIVE_DROP_SHAPE,         /* shape differs from the geometry, or data size from shape */
  TOMO_LIVE_DROP_TOO_LARGE,     /* declared size overflows or exceeds the memory limit */
  TOMO_LIVE_DROP_ANGLE,         /* NaN or infinite angle */
  TOMO_LIVE_DROP_ID,            /* id or frame type out of range */
  TOMO_LIVE_DROP_NO_GEOMETRY,   /* a projection before any geometry */
  TOMO_LIVE_DROP_JSON,          /* header is not the JSON object described */
  TOMO_LIVE_DROP_DTYPE,         /* unknown dtype */
  TOMO_LIVE_DROP_PARTS,         /* missing or extra multipart frame */
  TOMO_LIVE_DROP_MEMORY,        /* would pass --max-memory */
  TOMO_LIVE_N_DROPS
} TomoLiveDrop;

const char *tomo_live_drop_to_string (TomoLiveDrop drop);

typedef enum
{
  TOMO_LIVE_MSG_GEOMETRY_SPEC,
  TOMO_LIVE_MSG_SCAN_SETTINGS,
  TOMO_LIVE_MSG_PARALLEL_GEOMETRY,
  TOMO_LIVE_MSG_FRAME,
  TOMO_LIVE_MSG_END,
} TomoLiveMessageType;

/* What the receiver knows when a message arrives: the parser checks
 * frames against it. */
typedef struct
{
  gboolean have_geometry;
  guint    rows;
  guint    cols;
  guint    n_projections;  /* 0: not known (JSON without --projections) */
  gsize    max_frame_bytes; /* the memory limit: no frame may claim more */
} TomoLiveContext;

#define TOMO_LIVE_MAX_ID (1 << 24)
/* Darks and flats: ids are slots below this, and no scan announces more
 * (each slot is read for every row; far more than any beamline takes). */
#define TOMO_LIVE_MAX_CALIBRATION 4096

/* A parsed message.  Pointers point into the parsed buffer: copy what
 * outlives it. */
typedef struct
{
  TomoLiveMessageType type;
  gint32       scene_id;
  /* scan settings */
  guint        n_darks;
  guint        n_flats;
  gboolean     already_linear;
  gboolean     has_linear_flag;  /* the 17-byte form */
  /* geometry */
  guint        rows;
  guint        cols;
  guint        n_projections;
  const guint8 *angles_rad;  /* n_projections little-endian float32, unaligned */
  float        volume_min[3];
  float        volume_max[3];
  /* frame */
  int          kind;         /* TomoFrameKind */
  guint        id;           /* projection id (may pass n_projections) or dark/flat slot */
  TomoDType    dtype;
  const guint8 *pixels;      /* rows × cols × dtype, little-endian, unaligned */
  gsize        n_bytes;
  gboolean     has_angle;
  double       angle_deg;
} TomoLiveMessage;

/* One TomoPackets message.  FALSE with *drop set when it must be dropped;
 * *detail (may be NULL) then says what was wrong, for the log. */
gboolean tomo_live_parse_tomop (const guint8          *data,
                                gsize                  size,
                                const TomoLiveContext *context,
                                TomoLiveMessage       *message,
                                TomoLiveDrop          *drop,
                                char                 **detail);

/* One JSON multipart message: `parts` are its frames (header first). */
gboolean tomo_live_parse_json  (const guint8 * const  *parts,
                                const gsize           *sizes,
                                guint                  n_parts,
                                const TomoLiveContext *context,
                                TomoLiveMessage       *message,
                                TomoLiveDrop          *drop,
                                char                 **detail);

/* Encoders, for the sender and the tests.  Return the packet as bytes. */
GBytes *tomo_live_encode_geometry_spec (gint32       scene_id,
                                        const float  vmin[3],
                                        const float  vmax[3]);
GBytes *tomo_live_encode_scan_settings (gint32       scene_id,
                                        gint32       n_darks,
                                        gint32       n_flats,
                                        int          already_linear); /* < 0: 16-byte form */
GBytes *tomo_live_encode_parallel_beam (gint32       scene_id,
                                        gint32       rows,
                                        gint32       cols,
                                        gint32       n_projections,
                                        const float *angles_rad,
                                        gint32       n_angles);
GBytes *tomo_live_encode_projection    (gint32       type,
                                        gint32       id,
                                        gint32       rows,
                                        gint32       cols,
                                        const float *data,
                                        gint32       n_values);
char   *tomo_live_encode_json_header   (int          kind,
                                        guint        frame,
                                        guint        rows,
                                        guint        cols,
                                        TomoDType    dtype,
                                        gboolean     has_angle,
                                        double       angle_deg);

G_END_DECLS
