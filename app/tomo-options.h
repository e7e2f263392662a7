/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "tomo-types.h"

G_BEGIN_DECLS

/* Command-line values, parsed in one place: every number is checked for
 * NaN, Inf, garbage and its range, and a failure names the option and the
 * value ("--center “nan” is not a finite number").
 *
 * Numeric GOption entries use G_OPTION_ARG_CALLBACK with
 * tomo_number_option_cb and a group whose user_data is a table of
 * TomoNumberOption ending with a NULL long_name. */
typedef struct
{
  const char *long_name;   /* without "--" */
  char        short_name;  /* 0 = none */
  double      min, max;    /* inclusive */
  gboolean    integer;
  double     *value;       /* written when the option is given */
  gboolean    given;
} TomoNumberOption;

gboolean tomo_parse_number     (const char *option,
                                const char *text,
                                double      min,
                                double      max,
                                gboolean    integer,
                                double     *value,
                                GError    **error);
gboolean tomo_number_option_cb (const char *option_name,
                                const char *value,
                                gpointer    data,
                                GError    **error);
/* A group of `entries` whose numeric entries (G_OPTION_ARG_CALLBACK with
 * tomo_number_option_cb) fill `numbers`. */
GOptionGroup *tomo_number_option_group (const char         *name,
                                        const char         *description,
                                        const GOptionEntry *entries,
                                        TomoNumberOption   *numbers);

/* "A:B" (either may be empty: 0 and `height`), rows A to B−1. */
gboolean tomo_parse_rows       (const char *text,
                                guint       height,
                                guint      *start,
                                guint      *end,
                                GError    **error);
/* "x,y,width,height" with positive width and height, inside a
 * `slice_size` × `slice_size` slice when slice_size > 0. */
gboolean tomo_parse_roi        (const char *text,
                                guint       slice_size,
                                TomoRoi    *roi,
                                GError    **error);

G_END_DECLS
