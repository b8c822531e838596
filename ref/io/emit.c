/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/emit.c: a streaming JSON emitter into a growing buffer
 * (ref/io/emit.h).
 *
 * Method: every call appends its bytes; before a value or a key, a ","
 * goes first unless the text so far is empty or ends in "{", "[" or ":"
 * (nothing else can precede a value without a separator), so the emitter
 * keeps no stack.  The buffer doubles when full (amortised O(1) per byte).
 *
 * Strings, as jansson 2.14's dump_string writes them without
 * JSON_ENSURE_ASCII or JSON_ESCAPE_SLASH (ref/io/result.c wrote through it
 * before, and the bytes must not change): the UTF-8 is checked as jansson
 * checks it (no byte 0x80-0xC1 or 0xF5-0xFF to start a sequence,
 * continuation bytes 0x80-0xBF, no overlong form, no surrogate
 * U+D800-U+DFFF, nothing above U+10FFFF); '"' and '\\' and the control
 * characters below 0x20 are escaped (\b \f \n \r \t, the others \u00XX in
 * upper-case hex); everything else, DEL and U+2028 included, is copied.
 *
 * Cost: O(bytes written); a double costs one pflref_dtoa.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/dtoa.h"
#include "io/emit.h"

/* The first reservation: small documents need one allocation. */
#define EMIT_FIRST_CAP 4096
/* The longest decimal text of a 64-bit integer, sign included. */
#define EMIT_INT_MAX 21

/* Record the first failure; every later call does nothing. */
static void fail(pflref_emit *e, pflref_status st, const char *message)
{
    e->status = st;
    pflref_error_set(e->err, st, NULL, "%s", message);
}

/* Room for extra more bytes and a NUL; 0 on failure (recorded). */
static int reserve(pflref_emit *e, size_t extra)
{
    if (e->status != PFLREF_OK)
        return 0;
    if (extra < e->cap - e->len)   /* len < cap always, so no wrap */
        return 1;
    if (extra > SIZE_MAX / 2 - e->len) {
        fail(e, PFLREF_ENOMEM, "out of memory writing the result (the text "
             "would exceed SIZE_MAX / 2 bytes)");
        return 0;
    }
    size_t cap = e->cap < EMIT_FIRST_CAP ? EMIT_FIRST_CAP : e->cap;
    while (cap - e->len <= extra)
        cap *= 2;
    char *b = realloc(e->buf, cap);
    if (b == NULL) {
        fail(e, PFLREF_ENOMEM, "out of memory writing the result");
        return 0;
    }
    e->buf = b;
    e->cap = cap;
    return 1;
}

static void put(pflref_emit *e, const char *s, size_t n)
{
    if (reserve(e, n)) {
        memcpy(e->buf + e->len, s, n);
        e->len += n;
    }
}

static void put_char(pflref_emit *e, char c)
{
    if (reserve(e, 1))
        e->buf[e->len++] = c;
}

/* The "," a value or key needs after a value. */
static void separate(pflref_emit *e)
{
    if (e->status != PFLREF_OK || e->len == 0)
        return;
    const char last = e->buf[e->len - 1];
    if (last != '{' && last != '[' && last != ':')
        put_char(e, ',');
}

void pflref_emit_init(pflref_emit *e, size_t size_hint, pflref_error *err)
{
    *e = (pflref_emit){.buf = NULL, .len = 0, .cap = 0,
                       .status = PFLREF_OK, .err = err};
    if (size_hint > 0)
        reserve(e, size_hint);
}

void pflref_emit_free(pflref_emit *e)
{
    free(e->buf);
    e->buf = NULL;
    e->len = e->cap = 0;
}

pflref_status pflref_emit_finish(pflref_emit *e, char **text, size_t *len)
{
    *text = NULL;
    if (len != NULL)
        *len = 0;
    if (reserve(e, 0))
        e->buf[e->len] = '\0';
    if (e->status != PFLREF_OK) {
        pflref_emit_free(e);
        return e->status;
    }
    *text = e->buf;
    if (len != NULL)
        *len = e->len;
    e->buf = NULL;
    e->len = e->cap = 0;
    return PFLREF_OK;
}

void pflref_emit_object_begin(pflref_emit *e)
{
    separate(e);
    put_char(e, '{');
}

void pflref_emit_object_end(pflref_emit *e)
{
    put_char(e, '}');
}

void pflref_emit_array_begin(pflref_emit *e)
{
    separate(e);
    put_char(e, '[');
}

void pflref_emit_array_end(pflref_emit *e)
{
    put_char(e, ']');
}

/* ---- strings ------------------------------------------------------------ */

/* The length of the UTF-8 sequence starting s[0] (at most `left` bytes
 * available), or 0 when it is not valid (jansson's utf8_check_first and
 * utf8_check_full). */
static size_t utf8_length(const unsigned char *s, size_t left)
{
    const unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c < 0xC2)          /* a continuation byte, or an overlong 2-byte */
        return 0;
    if (c < 0xE0) {
        n = 2;
        cp = c & 0x1Fu;
    } else if (c < 0xF0) {
        n = 3;
        cp = c & 0x0Fu;
    } else if (c < 0xF5) {
        n = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (n > left)
        return 0;
    for (size_t k = 1; k < n; k++) {
        if ((s[k] & 0xC0u) != 0x80u)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3Fu);
    }
    if (cp > 0x10FFFFu || (cp >= 0xD800u && cp <= 0xDFFFu) ||
        (n == 3 && cp < 0x800u) || (n == 4 && cp < 0x10000u))
        return 0;
    return n;
}

int pflref_emit_utf8_valid(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    const size_t n = strlen(str);
    for (size_t i = 0, k; i < n; i += k)
        if ((k = utf8_length(s + i, n - i)) == 0)
            return 0;
    return 1;
}

/* "s", escaped as the header says. */
static void put_string(pflref_emit *e, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    const size_t n = strlen(str);
    put_char(e, '"');
    size_t run = 0;   /* start of the bytes not yet copied */
    for (size_t i = 0; i < n && e->status == PFLREF_OK;) {
        const unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            size_t k = utf8_length(s + i, n - i);
            if (k == 0) {
                e->status = PFLREF_EINVAL;
                pflref_error_set(e->err, PFLREF_EINVAL, NULL,
                                 "the string \"%.*s…\" is not valid UTF-8 "
                                 "(byte %zu is 0x%02X); JSON text is UTF-8",
                                 (int)i, str, i, (unsigned)c);
                return;
            }
            i += k;
            continue;
        }
        put(e, str + run, i - run);
        char esc[8];
        switch (c) {
        case '"':  memcpy(esc, "\\\"", 3); break;
        case '\\': memcpy(esc, "\\\\", 3); break;
        case '\b': memcpy(esc, "\\b", 3); break;
        case '\f': memcpy(esc, "\\f", 3); break;
        case '\n': memcpy(esc, "\\n", 3); break;
        case '\r': memcpy(esc, "\\r", 3); break;
        case '\t': memcpy(esc, "\\t", 3); break;
        default:   snprintf(esc, sizeof esc, "\\u%04X", (unsigned)c); break;
        }
        put(e, esc, strlen(esc));
        run = ++i;
    }
    put(e, str + run, n - run);
    put_char(e, '"');
}

void pflref_emit_key(pflref_emit *e, const char *key)
{
    separate(e);
    put_string(e, key);
    put_char(e, ':');
}

void pflref_emit_string(pflref_emit *e, const char *s)
{
    separate(e);
    put_string(e, s);
}

/* ---- numbers and literals ----------------------------------------------- */

void pflref_emit_integer(pflref_emit *e, long long x)
{
    separate(e);
    if (reserve(e, EMIT_INT_MAX))
        e->len += (size_t)snprintf(e->buf + e->len, EMIT_INT_MAX + 1, "%lld",
                                   x);
}

/* x in decimal at the end of the text (room reserved by the caller). */
static void put_size(pflref_emit *e, size_t x)
{
    char digits[EMIT_INT_MAX];
    size_t k = 0;
    do {
        digits[k++] = (char)('0' + x % 10);
        x /= 10;
    } while (x > 0);
    while (k > 0)
        e->buf[e->len++] = digits[--k];
}

void pflref_emit_size(pflref_emit *e, size_t x)
{
    separate(e);
    if (reserve(e, EMIT_INT_MAX))
        put_size(e, x);
}

void pflref_emit_bool(pflref_emit *e, int b)
{
    separate(e);
    if (b)
        put(e, "true", 4);
    else
        put(e, "false", 5);
}

void pflref_emit_null(pflref_emit *e)
{
    separate(e);
    put(e, "null", 4);
}

/* x's text at the end of the text (room for PFLREF_DTOA_MAX reserved by
 * the caller); 0 when x is not finite (recorded). */
static int put_real(pflref_emit *e, double x)
{
    if (!isfinite(x)) {
        fail(e, PFLREF_EINTERNAL, "a non-finite number reached the result "
             "writer (a pflref bug: please report it)");
        return 0;
    }
    e->len += pflref_dtoa(x, e->buf + e->len);
    return 1;
}

void pflref_emit_real(pflref_emit *e, double x)
{
    separate(e);
    if (reserve(e, PFLREF_DTOA_MAX))
        put_real(e, x);
}

/* x[0..n−1] as entries of the array just opened. */
static void put_reals(pflref_emit *e, const double *x, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        if (!reserve(e, PFLREF_DTOA_MAX + 1))
            return;
        if (j > 0)
            e->buf[e->len++] = ',';
        if (!put_real(e, x[j]))
            return;
    }
}

void pflref_emit_reals(pflref_emit *e, const double *x, size_t n)
{
    pflref_emit_array_begin(e);
    put_reals(e, x, n);
    put_char(e, ']');
}

void pflref_emit_matrix(pflref_emit *e, const double *x, size_t rows,
                        size_t cols)
{
    pflref_emit_array_begin(e);
    for (size_t i = 0; i < rows && e->status == PFLREF_OK; i++) {
        put(e, i > 0 ? ",[" : "[", i > 0 ? 2 : 1);
        put_reals(e, x + i * cols, cols);
        put_char(e, ']');
    }
    put_char(e, ']');
}

void pflref_emit_indices(pflref_emit *e, const size_t *x, size_t n)
{
    pflref_emit_array_begin(e);
    for (size_t j = 0; j < n; j++) {
        if (!reserve(e, EMIT_INT_MAX + 1))
            return;
        if (j > 0)
            e->buf[e->len++] = ',';
        put_size(e, x[j]);
    }
    put_char(e, ']');
}
