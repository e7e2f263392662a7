/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "tomo-memory"

#include "config.h"

#include <math.h>
#include <unistd.h>

#include "tomo-error.h"
#include "tomo-memory.h"

static guint64 limit_bytes;   /* 0 = default */

static guint64
tomo_memory_get_physical (void)
{
  long pages = sysconf (_SC_PHYS_PAGES);
  long page_size = sysconf (_SC_PAGESIZE);

  if (pages <= 0 || page_size <= 0)
    return (guint64) 4 << 30;   /* unknown: assume a small machine */
  return (guint64) pages * (guint64) page_size;
}

guint64
tomo_memory_get_limit (void)
{
  guint64 limit = limit_bytes;

  return limit ? limit : tomo_memory_get_physical () / 2;
}

void
tomo_memory_set_limit (guint64 bytes)
{
  limit_bytes = bytes;
}

gboolean
tomo_size_mul3 (guint64  a,
                guint64  b,
                guint64  c,
                guint64 *out)
{
  guint64 ab;

  if (!g_uint64_checked_mul (&ab, a, b) || !g_uint64_checked_mul (out, ab, c))
    {
      *out = G_MAXUINT64;
      return FALSE;
    }
  return TRUE;
}

char *
tomo_memory_format (guint64 bytes)
{
  if (bytes == G_MAXUINT64)
    return g_strdup ("more than 16 EiB");
  return g_format_size_full (bytes, G_FORMAT_SIZE_IEC_UNITS);
}

gboolean
tomo_memory_check (guint64     bytes,
                   const char *what,
                   GError    **error)
{
  guint64 limit = tomo_memory_get_limit ();
  g_autofree char *need = NULL, *have = NULL, *phys = NULL;

  if (bytes <= limit)
    return TRUE;
  need = tomo_memory_format (bytes);
  have = tomo_memory_format (limit);
  phys = tomo_memory_format (tomo_memory_get_physical ());
  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_SHAPE,
               "%s would need %s of memory, but the limit is %s (this machine has %s; "
               "raise it with --max-memory if that is intended)",
               what, need, have, phys);
  return FALSE;
}

gboolean
tomo_memory_parse_size (const char *option,
                        const char *text,
                        guint64    *bytes,
                        GError    **error)
{
  char *end = NULL;
  double value, scale = 1;

  g_return_val_if_fail (text != NULL, FALSE);

  value = g_ascii_strtod (text, &end);
  if (end == text || !isfinite (value) || value <= 0)
    goto bad;
  switch (*end)
    {
    case '\0': break;
    case 'k': case 'K': scale = 1024.0; end++; break;
    case 'm': case 'M': scale = 1024.0 * 1024; end++; break;
    case 'g': case 'G': scale = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': scale = 1024.0 * 1024 * 1024 * 1024; end++; break;
    case '%':
      if (value > 100)
        goto bad;
      scale = tomo_memory_get_physical () / 100.0;
      end++;
      break;
    default: goto bad;
    }
  if (*end == 'i' && scale > 1)
    end++;
  if ((*end == 'B' || *end == 'b') && scale > 1)
    end++;
  if (*end != '\0' || value * scale >= 1.8e19 || value * scale < 1)
    goto bad;
  *bytes = (guint64) (value * scale);
  return TRUE;

bad:
  g_set_error (error, TOMO_IO_ERROR, TOMO_IO_ERROR_VALUE,
               "%s “%s” is not a size: use bytes or a number with K, M, G or T, or a %% of memory",
               option, text);
  return FALSE;
}
