/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-live"

#include "config.h"

#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "tomo-live-protocol.h"
#include "tomo-types.h"
#include "tomo-scan-private.h"

G_DEFINE_QUARK (tomo-live-error-quark, tomo_live_error)

static const char *const drop_names[TOMO_LIVE_N_DROPS] = {
  [TOMO_LIVE_DROP_SHORT] = "short",
  [TOMO_LIVE_DROP_LONG] = "long",
  [TOMO_LIVE_DROP_UNKNOWN] = "unknown descriptor",
  [TOMO_LIVE_DROP_IGNORED] = "ignored descriptor",
  [TOMO_LIVE_DROP_NEGATIVE] = "negative count",
  [TOMO_LIVE_DROP_SHAPE] = "shape mismatch",
  [TOMO_LIVE_DROP_TOO_LARGE] = "too large",
  [TOMO_LIVE_DROP_ANGLE] = "bad angle",
  [TOMO_LIVE_DROP_ID] = "id out of range",
  [TOMO_LIVE_DROP_NO_GEOMETRY] = "no geometry",
  [TOMO_LIVE_DROP_JSON] = "bad JSON",
  [TOMO_LIVE_DROP_DTYPE] = "unknown dtype",
  [TOMO_LIVE_DROP_PARTS] = "wrong frame count",
  [TOMO_LIVE_DROP_MEMORY] = "memory limit",
};

const char *
tomo_live_drop_to_string (TomoLiveDrop drop)
{
  g_return_val_if_fail (drop < TOMO_LIVE_N_DROPS, NULL);
  return drop_names[drop];
}

static const TomoNameTable protocol_table = {
  "live protocol", (const char *const[]) { "tomop", "json" }, 2,
  (const char *const[]) { "tomopackets", "tomop", NULL }, "tomop or json",
  tomo_live_error_quark, TOMO_LIVE_ERROR_URL,
};

TOMO_DEFINE_FROM_STRING (tomo_live_protocol_from_string, TomoLiveProtocol, protocol_table)

const char *
tomo_live_protocol_to_string (TomoLiveProtocol protocol)
{
  return protocol == TOMO_LIVE_PROTOCOL_JSON ? "json" : "tomop";
}

/* --- reading little-endian fields, bounds-checked ------------------------ */

typedef struct
{
  const guint8 *p;
  gsize         left;
} Cursor;

static gboolean
take_i32 (Cursor *c,
          gint32 *out)
{
  guint32 v;

  if (c->left < 4)
    return FALSE;
  memcpy (&v, c->p, 4);
  *out = (gint32) GUINT32_FROM_LE (v);
  c->p += 4;
  c->left -= 4;
  return TRUE;
}

static gboolean
take_f32 (Cursor *c,
          float  *out)
{
  gint32 v;

  if (!take_i32 (c, &v))
    return FALSE;
  memcpy (out, &v, 4);
  return TRUE;
}

static float
f32_at (const guint8 *p,
        gsize         i)
{
  guint32 v;
  float f;

  memcpy (&v, p + 4 * i, 4);
  v = GUINT32_FROM_LE (v);
  memcpy (&f, &v, 4);
  return f;
}

static gboolean
drop_with (TomoLiveDrop *drop,
           char        **detail,
           TomoLiveDrop  why,
           const char   *format,
           ...) G_GNUC_PRINTF (4, 5);

static gboolean
drop_with (TomoLiveDrop *drop,
           char        **detail,
           TomoLiveDrop  why,
           const char   *format,
           ...)
{
  *drop = why;
  if (detail != NULL)
    {
      va_list args;

      va_start (args, format);
      *detail = g_strdup_vprintf (format, args);
      va_end (args);
    }
  return FALSE;
}

/* rows × cols × elem, or 0 when it overflows or passes `limit`. */
static gsize
frame_bytes (guint64 rows,
             guint64 cols,
             gsize   elem,
             gsize   limit)
{
  guint64 n;

  if (rows == 0 || cols == 0 || rows > G_MAXUINT32 || cols > G_MAXUINT32)
    return 0;
  n = rows * cols;   /* < 2^64: both below 2^32 */
  if (n > G_MAXSIZE / elem || n * elem > limit)
    return 0;
  return (gsize) (n * elem);
}

static gboolean
is_known_recast3d (gint32 desc)
{
  switch (desc)
    {
    case 0x101: case 0x102:
    case 0x201: case 0x202: case 0x203: case 0x204: case 0x205: case 0x206: case 0x207:
    case 0x304: case 0x305: case 0x306: case 0x307: case 0x308:
    case 0x401:
      return TRUE;
    default:
      return FALSE;
    }
}

/* --- TomoPackets --------------------------------------------------------- */

#define EXACT(c, what) \
  G_STMT_START { \
    if ((c).left != 0) \
      return drop_with (drop, detail, TOMO_LIVE_DROP_LONG, \
                        "%s has %" G_GSIZE_FORMAT " bytes after its last field", what, (c).left); \
  } G_STMT_END

#define SHORT(what) \
  drop_with (drop, detail, TOMO_LIVE_DROP_SHORT, "%s of %" G_GSIZE_FORMAT " bytes is truncated", what, size)

/* A message's last field is an array of `n` 4-byte values: exactly what is left. */
static gboolean
check_rest (const Cursor *c, gint32 n, const char *message, const char *values,
            TomoLiveDrop *drop, char **detail)
{
  if ((guint64) n * 4 != c->left)
    return drop_with (drop, detail, (guint64) n * 4 > c->left ? TOMO_LIVE_DROP_SHORT : TOMO_LIVE_DROP_LONG,
                      "%s declares %d %s but has %" G_GSIZE_FORMAT " bytes left",
                      message, n, values, c->left);
  return TRUE;
}

static gboolean
parse_geometry_spec (Cursor *c, gsize size, TomoLiveMessage *m, TomoLiveDrop *drop, char **detail)
{
  m->type = TOMO_LIVE_MSG_GEOMETRY_SPEC;
  if (!take_i32 (c, &m->scene_id))
    return SHORT ("GeometrySpecification");
  for (guint i = 0; i < 3; i++)
    if (!take_f32 (c, &m->volume_min[i]))
      return SHORT ("GeometrySpecification");
  for (guint i = 0; i < 3; i++)
    if (!take_f32 (c, &m->volume_max[i]))
      return SHORT ("GeometrySpecification");
  EXACT (*c, "GeometrySpecification");
  return TRUE;
}

static gboolean
parse_scan_settings (Cursor *c, gsize size, TomoLiveMessage *m, TomoLiveDrop *drop, char **detail)
{
  gint32 darks, flats;

  m->type = TOMO_LIVE_MSG_SCAN_SETTINGS;
  if (!take_i32 (c, &m->scene_id) || !take_i32 (c, &darks) || !take_i32 (c, &flats))
    return SHORT ("ScanSettings");
  /* Both forms are in use: 16 bytes, or 17 with `already_linear`. */
  if (c->left == 1)
    {
      if (c->p[0] > 1)
        return drop_with (drop, detail, TOMO_LIVE_DROP_LONG,
                          "ScanSettings: already_linear byte is %u, not 0 or 1", c->p[0]);
      m->already_linear = c->p[0] == 1;
      m->has_linear_flag = TRUE;
      c->left = 0;
    }
  EXACT (*c, "ScanSettings");
  if (darks < 0 || flats < 0)
    return drop_with (drop, detail, TOMO_LIVE_DROP_NEGATIVE,
                      "ScanSettings: %d darks, %d flats", darks, flats);
  if (darks > TOMO_LIVE_MAX_CALIBRATION || flats > TOMO_LIVE_MAX_CALIBRATION)
    return drop_with (drop, detail, TOMO_LIVE_DROP_TOO_LARGE,
                      "ScanSettings: %d darks, %d flats (at most %d of each)", darks, flats,
                      TOMO_LIVE_MAX_CALIBRATION);
  m->n_darks = darks;
  m->n_flats = flats;
  return TRUE;
}

static gboolean
parse_parallel_beam (Cursor *c, gsize size, const TomoLiveContext *ctx, TomoLiveMessage *m,
                     TomoLiveDrop *drop, char **detail)
{
  gint32 rows, cols, n_proj, n_angles;

  m->type = TOMO_LIVE_MSG_PARALLEL_GEOMETRY;
  if (!take_i32 (c, &m->scene_id) || !take_i32 (c, &rows) || !take_i32 (c, &cols) ||
      !take_i32 (c, &n_proj) || !take_i32 (c, &n_angles))
    return SHORT ("ParallelBeamGeometry");
  if (rows <= 0 || cols <= 0 || n_proj <= 0 || n_angles < 0)
    return drop_with (drop, detail, TOMO_LIVE_DROP_NEGATIVE,
                      "ParallelBeamGeometry: %d rows, %d cols, %d projections, %d angles",
                      rows, cols, n_proj, n_angles);
  if (!check_rest (c, n_angles, "ParallelBeamGeometry", "angles", drop, detail))
    return FALSE;
  if (n_angles != n_proj)
    return drop_with (drop, detail, TOMO_LIVE_DROP_SHAPE,
                      "ParallelBeamGeometry: proj_count %d but %d angles", n_proj, n_angles);
  if (n_proj > TOMO_LIVE_MAX_ID || frame_bytes (rows, cols, 4, ctx->max_frame_bytes) == 0)
    return drop_with (drop, detail, TOMO_LIVE_DROP_TOO_LARGE,
                      "ParallelBeamGeometry: %d × %d pixels, %d projections", rows, cols, n_proj);
  for (gint32 i = 0; i < n_angles; i++)
    if (!isfinite (f32_at (c->p, i)))
      return drop_with (drop, detail, TOMO_LIVE_DROP_ANGLE,
                        "ParallelBeamGeometry: angle %d is %g", i, f32_at (c->p, i));
  m->rows = rows;
  m->cols = cols;
  m->n_projections = n_proj;
  m->angles_rad = c->p;
  return TRUE;
}

/* Frame kinds by their number on the wire: 0 dark, 1 flat, 2 projection. */
static const int wire_kinds[3] = { TOMO_FRAME_DARK, TOMO_FRAME_FLAT, TOMO_FRAME_PROJECTION };

static gboolean
check_frame_shape (const TomoLiveContext *ctx, guint64 rows, guint64 cols, const char *what,
                   TomoLiveDrop *drop, char **detail)
{
  if (!ctx->have_geometry)
    return drop_with (drop, detail, TOMO_LIVE_DROP_NO_GEOMETRY,
                      "%s arrived before any geometry", what);
  if (rows != ctx->rows || cols != ctx->cols)
    return drop_with (drop, detail, TOMO_LIVE_DROP_SHAPE,
                      "%s of %" G_GUINT64_FORMAT " × %" G_GUINT64_FORMAT
                      " pixels, the geometry says %u × %u",
                      what, rows, cols, ctx->rows, ctx->cols);
  return TRUE;
}

static gboolean
parse_projection (Cursor *c, gsize size, const TomoLiveContext *ctx, TomoLiveMessage *m,
                  TomoLiveDrop *drop, char **detail)
{
  gint32 type, id, rows, cols, n;
  gsize bytes;

  m->type = TOMO_LIVE_MSG_FRAME;
  if (!take_i32 (c, &type) || !take_i32 (c, &id) || !take_i32 (c, &rows) ||
      !take_i32 (c, &cols) || !take_i32 (c, &n))
    return SHORT ("Projection");
  if (rows <= 0 || cols <= 0 || n < 0)
    return drop_with (drop, detail, TOMO_LIVE_DROP_NEGATIVE,
                      "Projection: shape %d × %d, %d values", rows, cols, n);
  if (!check_rest (c, n, "Projection", "values", drop, detail))
    return FALSE;
  bytes = frame_bytes (rows, cols, 4, ctx->max_frame_bytes);
  if (bytes == 0)
    return drop_with (drop, detail, TOMO_LIVE_DROP_TOO_LARGE,
                      "Projection of %d × %d float32 pixels is over the memory limit of %" G_GSIZE_FORMAT
                      " bytes", rows, cols, ctx->max_frame_bytes);
  if ((guint64) n * 4 != bytes)
    return drop_with (drop, detail, TOMO_LIVE_DROP_SHAPE,
                      "Projection of %d × %d pixels carries %d values", rows, cols, n);
  if (type < 0 || type > 2)
    return drop_with (drop, detail, TOMO_LIVE_DROP_ID, "Projection of type %d (0 dark, 1 flat, 2 projection)", type);
  if (id < 0 || id >= (type == 2 ? TOMO_LIVE_MAX_ID : TOMO_LIVE_MAX_CALIBRATION))
    return drop_with (drop, detail, TOMO_LIVE_DROP_ID, "Projection id %d of type %d (a dark's or flat's is below %d)",
                      id, type, TOMO_LIVE_MAX_CALIBRATION);
  if (!check_frame_shape (ctx, rows, cols, "Projection", drop, detail))
    return FALSE;
  m->kind = wire_kinds[type];
  m->id = id;
  m->rows = rows;
  m->cols = cols;
  m->dtype = TOMO_DTYPE_FLOAT32;
  m->pixels = c->p;
  m->n_bytes = bytes;
  return TRUE;
}

gboolean
tomo_live_parse_tomop (const guint8          *data,
                       gsize                  size,
                       const TomoLiveContext *context,
                       TomoLiveMessage       *message,
                       TomoLiveDrop          *drop,
                       char                 **detail)
{
  Cursor c = { data, size };
  gint32 desc;

  g_return_val_if_fail (data != NULL || size == 0, FALSE);
  g_return_val_if_fail (context != NULL && message != NULL && drop != NULL, FALSE);

  memset (message, 0, sizeof *message);
  if (detail != NULL)
    *detail = NULL;
  if (!take_i32 (&c, &desc))
    return drop_with (drop, detail, TOMO_LIVE_DROP_SHORT,
                      "message of %" G_GSIZE_FORMAT " bytes has no descriptor", size);

  switch (desc)
    {
    case TOMOP_GEOMETRY_SPECIFICATION:
      return parse_geometry_spec (&c, size, message, drop, detail);
    case TOMOP_SCAN_SETTINGS:
      return parse_scan_settings (&c, size, message, drop, detail);
    case TOMOP_PARALLEL_BEAM_GEOMETRY:
      return parse_parallel_beam (&c, size, context, message, drop, detail);
    case TOMOP_PROJECTION:
      return parse_projection (&c, size, context, message, drop, detail);
    default:
      if (is_known_recast3d (desc))
        return drop_with (drop, detail, TOMO_LIVE_DROP_IGNORED, "descriptor 0x%x is not used here", desc);
      return drop_with (drop, detail, TOMO_LIVE_DROP_UNKNOWN, "descriptor 0x%x", (guint32) desc);
    }
}

/* --- JSON header + raw frame --------------------------------------------- */

static gboolean
json_uint (JsonNode *node,
           gint64    max,
           gint64   *out)
{
  double d;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    *out = json_node_get_int (node);
  else if (json_node_get_value_type (node) == G_TYPE_DOUBLE)
    {
      d = json_node_get_double (node);
      if (!(d >= 0 && d <= max) || d != floor (d))
        return FALSE;
      *out = (gint64) d;
    }
  else
    return FALSE;
  return *out >= 0 && *out <= max;
}

static gboolean
parse_json_dtype (const char *name,
                  TomoDType  *dtype)
{
  static const struct { const char *name; TomoDType dtype; } names[] = {
    { "uint8", TOMO_DTYPE_UINT8 }, { "u1", TOMO_DTYPE_UINT8 },
    { "uint16", TOMO_DTYPE_UINT16 }, { "u2", TOMO_DTYPE_UINT16 }, { "<u2", TOMO_DTYPE_UINT16 },
    { "uint32", TOMO_DTYPE_UINT32 }, { "u4", TOMO_DTYPE_UINT32 }, { "<u4", TOMO_DTYPE_UINT32 },
    { "float32", TOMO_DTYPE_FLOAT32 }, { "f4", TOMO_DTYPE_FLOAT32 }, { "<f4", TOMO_DTYPE_FLOAT32 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_str_equal (name, names[i].name))
      {
        *dtype = names[i].dtype;
        return TRUE;
      }
  return FALSE;
}

gboolean
tomo_live_parse_json (const guint8 * const  *parts,
                      const gsize           *sizes,
                      guint                  n_parts,
                      const TomoLiveContext *context,
                      TomoLiveMessage       *message,
                      TomoLiveDrop          *drop,
                      char                 **detail)
{
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GError) error = NULL;
  JsonObject *obj, *attrs;
  JsonNode *root, *node;
  JsonArray *shape;
  gint64 frame, scan_index = 2, rows, cols;
  const char *dtype_name;
  gsize bytes;

  g_return_val_if_fail (context != NULL && message != NULL && drop != NULL, FALSE);

  memset (message, 0, sizeof *message);
  if (detail != NULL)
    *detail = NULL;
  if (n_parts == 0 || sizes[0] == 0)
    return drop_with (drop, detail, TOMO_LIVE_DROP_JSON, "empty header frame");
  if (sizes[0] > 65536)
    return drop_with (drop, detail, TOMO_LIVE_DROP_TOO_LARGE,
                      "JSON header of %" G_GSIZE_FORMAT " bytes", sizes[0]);

  parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, (const char *) parts[0], sizes[0], &error))
    return drop_with (drop, detail, TOMO_LIVE_DROP_JSON, "JSON header: %s", error->message);
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return drop_with (drop, detail, TOMO_LIVE_DROP_JSON, "JSON header is not an object");
  obj = json_node_get_object (root);

  node = json_object_get_member (obj, "end");
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
      json_node_get_value_type (node) == G_TYPE_BOOLEAN && json_node_get_boolean (node))
    {
      if (n_parts != 1)
        return drop_with (drop, detail, TOMO_LIVE_DROP_PARTS, "end message with %u frames", n_parts);
      message->type = TOMO_LIVE_MSG_END;
      return TRUE;
    }

  message->type = TOMO_LIVE_MSG_FRAME;
  if (!json_uint (json_object_get_member (obj, "frame"), G_MAXINT64, &frame))
    return drop_with (drop, detail, TOMO_LIVE_DROP_JSON, "JSON header has no non-negative integer “frame”");
  attrs = NULL;
  node = json_object_get_member (obj, "image_attributes");
  if (node != NULL)
    {
      if (!JSON_NODE_HOLDS_OBJECT (node))
        return drop_with (drop, detail, TOMO_LIVE_DROP_JSON, "“image_attributes” is not an object");
      attrs = json_node_get_object (node);
      node = json_object_get_member (attrs, "scan_index");
      if (node != NULL && !json_uint (node, G_MAXINT64, &scan_index))
        return drop_with (drop, detail, TOMO_LIVE_DROP_JSON, "“scan_index” is not a non-negative integer");
    }
  node = json_object_get_member (obj, "shape");
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node) ||
      json_array_get_length (shape = json_node_get_array (node)) != 2)
    return drop_with (drop, detail, TOMO_LIVE_DROP_JSON, "“shape” is not [rows, cols]");
  {
    JsonNode *r = json_array_get_element (shape, 0), *col = json_array_get_element (shape, 1);

    if (!JSON_NODE_HOLDS_VALUE (r) || !JSON_NODE_HOLDS_VALUE (col) ||
        json_node_get_value_type (r) != G_TYPE_INT64 || json_node_get_value_type (col) != G_TYPE_INT64)
      return drop_with (drop, detail, TOMO_LIVE_DROP_JSON, "“shape” is not two integers");
    rows = json_node_get_int (r);
    cols = json_node_get_int (col);
  }
  if (rows <= 0 || cols <= 0)
    return drop_with (drop, detail, TOMO_LIVE_DROP_NEGATIVE,
                      "shape [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", rows, cols);

  node = json_object_get_member (obj, "dtype");
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return drop_with (drop, detail, TOMO_LIVE_DROP_DTYPE, "JSON header has no “dtype” string");
  dtype_name = json_node_get_string (node);
  if (!parse_json_dtype (dtype_name, &message->dtype))
    return drop_with (drop, detail, TOMO_LIVE_DROP_DTYPE,
                      "dtype “%s” (uint8, uint16, uint32 or float32)", dtype_name);

  node = json_object_get_member (obj, "angle");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    {
      GType t = JSON_NODE_HOLDS_VALUE (node) ? json_node_get_value_type (node) : G_TYPE_NONE;

      if (t != G_TYPE_DOUBLE && t != G_TYPE_INT64)
        return drop_with (drop, detail, TOMO_LIVE_DROP_ANGLE, "“angle” is not a number");
      message->angle_deg = json_node_get_double (node);
      if (!isfinite (message->angle_deg))
        return drop_with (drop, detail, TOMO_LIVE_DROP_ANGLE, "angle %g", message->angle_deg);
      message->has_angle = TRUE;
    }

  if (scan_index > 2)
    return drop_with (drop, detail, TOMO_LIVE_DROP_ID,
                      "scan_index %" G_GINT64_FORMAT " (0 dark, 1 flat, 2 projection)", scan_index);
  /* As in TomoPackets, projection ids may run past the count (next rotation). */
  if (frame >= (scan_index == 2 ? TOMO_LIVE_MAX_ID : TOMO_LIVE_MAX_CALIBRATION))
    return drop_with (drop, detail, TOMO_LIVE_DROP_ID,
                      "frame %" G_GINT64_FORMAT " of scan_index %" G_GINT64_FORMAT " (a dark's or flat's is below %d)",
                      frame, scan_index, TOMO_LIVE_MAX_CALIBRATION);

  bytes = frame_bytes (rows, cols, _tomo_dtype_size (message->dtype), context->max_frame_bytes);
  if (bytes == 0)
    return drop_with (drop, detail, TOMO_LIVE_DROP_TOO_LARGE,
                      "frame of [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] %s is over the memory limit "
                      "of %" G_GSIZE_FORMAT " bytes", rows, cols, dtype_name, context->max_frame_bytes);
  if (n_parts != 2)
    return drop_with (drop, detail, TOMO_LIVE_DROP_PARTS,
                      "frame %" G_GINT64_FORMAT " came in %u parts, not header + pixels", frame, n_parts);
  if (sizes[1] != bytes)
    return drop_with (drop, detail, TOMO_LIVE_DROP_SHAPE,
                      "frame %" G_GINT64_FORMAT ": %" G_GSIZE_FORMAT " bytes of pixels, shape × %s needs %"
                      G_GSIZE_FORMAT, frame, sizes[1], dtype_name, bytes);
  if (context->have_geometry && !check_frame_shape (context, rows, cols, "frame", drop, detail))
    return FALSE;

  message->kind = wire_kinds[scan_index];
  message->id = (guint) frame;
  message->rows = rows;
  message->cols = cols;
  message->pixels = parts[1];
  message->n_bytes = bytes;
  return TRUE;
}

/* --- encoders ------------------------------------------------------------ */

static void
put_i32 (GByteArray *b,
         gint32      v)
{
  guint32 le = GUINT32_TO_LE ((guint32) v);

  g_byte_array_append (b, (const guint8 *) &le, 4);
}

static void
put_f32s (GByteArray  *b,
          const float *v,
          gsize        n)
{
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  g_byte_array_append (b, (const guint8 *) v, n * 4);
#else
  for (gsize i = 0; i < n; i++)
    {
      gint32 x;
      memcpy (&x, v + i, 4);
      put_i32 (b, x);
    }
#endif
}

/* A TomoPackets message: the descriptor, `n_ints` int32 fields, `n_floats`
 * float32 values; callers may append more. */
static GByteArray *
encode_packet (gint32        desc,
               const gint32 *ints,
               guint         n_ints,
               const float  *floats,
               gsize         n_floats)
{
  GByteArray *b = g_byte_array_sized_new (4 * (1 + n_ints + n_floats) + 1);

  put_i32 (b, desc);
  for (guint i = 0; i < n_ints; i++)
    put_i32 (b, ints[i]);
  put_f32s (b, floats, n_floats);
  return b;
}

GBytes *
tomo_live_encode_geometry_spec (gint32      scene_id,
                                const float vmin[3],
                                const float vmax[3])
{
  GByteArray *b = encode_packet (TOMOP_GEOMETRY_SPECIFICATION, &scene_id, 1, vmin, 3);

  put_f32s (b, vmax, 3);
  return g_byte_array_free_to_bytes (b);
}

GBytes *
tomo_live_encode_scan_settings (gint32 scene_id,
                                gint32 n_darks,
                                gint32 n_flats,
                                int    already_linear)
{
  const gint32 fields[] = { scene_id, n_darks, n_flats };
  GByteArray *b = encode_packet (TOMOP_SCAN_SETTINGS, fields, G_N_ELEMENTS (fields), NULL, 0);

  if (already_linear >= 0)
    {
      guint8 flag = already_linear ? 1 : 0;
      g_byte_array_append (b, &flag, 1);
    }
  return g_byte_array_free_to_bytes (b);
}

GBytes *
tomo_live_encode_parallel_beam (gint32       scene_id,
                                gint32       rows,
                                gint32       cols,
                                gint32       n_projections,
                                const float *angles_rad,
                                gint32       n_angles)
{
  const gint32 fields[] = { scene_id, rows, cols, n_projections, n_angles };

  return g_byte_array_free_to_bytes (encode_packet (TOMOP_PARALLEL_BEAM_GEOMETRY, fields, G_N_ELEMENTS (fields),
                                                    angles_rad, MAX (n_angles, 0)));
}

GBytes *
tomo_live_encode_projection (gint32       type,
                             gint32       id,
                             gint32       rows,
                             gint32       cols,
                             const float *data,
                             gint32       n_values)
{
  const gint32 fields[] = { type, id, rows, cols, n_values };

  return g_byte_array_free_to_bytes (encode_packet (TOMOP_PROJECTION, fields, G_N_ELEMENTS (fields),
                                                    data, MAX (n_values, 0)));
}

char *
tomo_live_encode_json_header (int       kind,
                              guint     frame,
                              guint     rows,
                              guint     cols,
                              TomoDType dtype,
                              gboolean  has_angle,
                              double    angle_deg)
{
  int scan_index = kind == TOMO_FRAME_DARK ? 0 : kind == TOMO_FRAME_FLAT ? 1 : 2;
  char angle[G_ASCII_DTOSTR_BUF_SIZE];

  if (has_angle)
    g_ascii_dtostr (angle, sizeof angle, angle_deg);
  return g_strdup_printf ("{\"frame\": %u, \"image_attributes\": {\"scan_index\": %d}, "
                          "\"shape\": [%u, %u], \"dtype\": \"%s\"%s%s}",
                          frame, scan_index, rows, cols, tomo_dtype_to_string (dtype),
                          has_angle ? ", \"angle\": " : "", has_angle ? angle : "");
}
