/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/canonical.c: the canonical JSON text of a value, and the content hash
 * of a golden vector's inputs (golden/README.md defines both; the Python
 * generators implement the same definition independently in
 * golden/pflref_golden.py).
 *
 * Canonical form: object keys sorted by their bytes; no white space; strings
 * with every character outside ' '..'~' escaped (\" \\ \b \f \n \r \t, else
 * \u00xx or, beyond ASCII, \uxxxx with surrogate pairs above U+FFFF, hex in
 * lower case); integers in decimal; reals as "%.17g", then ".0" appended when
 * the text has neither '.' nor 'e', then a '+' and the leading zeros of the
 * exponent removed; true, false, null.
 * Content hash: "sha256:" followed by the SHA-256 of that text, in hex.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/canonical.h"
#include "io/sha256.h"

typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *b = realloc(t->buf, cap);
        if (b == NULL) {
            t->failed = 1;
            return;
        }
        t->buf = b;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static void puts_(text *t, const char *s)
{
    put(t, s, strlen(s));
}

static void put_u16(text *t, unsigned u)
{
    char e[8];
    snprintf(e, sizeof e, "\\u%04x", u & 0xffffu);
    puts_(t, e);
}

/* A JSON string (jansson guarantees valid UTF-8). */
static void put_string(text *t, const char *s, size_t n)
{
    puts_(t, "\"");
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\') {
            put(t, s + i, 1);
            i++;
            continue;
        }
        if (c < 0x80) {
            switch (c) {
            case '"':  puts_(t, "\\\""); break;
            case '\\': puts_(t, "\\\\"); break;
            case '\b': puts_(t, "\\b"); break;
            case '\f': puts_(t, "\\f"); break;
            case '\n': puts_(t, "\\n"); break;
            case '\r': puts_(t, "\\r"); break;
            case '\t': puts_(t, "\\t"); break;
            default:   put_u16(t, c); break;
            }
            i++;
            continue;
        }
        /* Decode one UTF-8 sequence into a code point. */
        unsigned cp, extra;
        if (c >= 0xf0) {
            cp = c & 0x07u;
            extra = 3;
        } else if (c >= 0xe0) {
            cp = c & 0x0fu;
            extra = 2;
        } else {
            cp = c & 0x1fu;
            extra = 1;
        }
        for (unsigned k = 1; k <= extra && i + k < n; k++)
            cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3fu);
        i += extra + 1;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            put_u16(t, 0xd800u + (cp >> 10));
            put_u16(t, 0xdc00u + (cp & 0x3ffu));
        } else {
            put_u16(t, cp);
        }
    }
    puts_(t, "\"");
}

static void put_real(text *t, double x)
{
    char s[40];
    snprintf(s, sizeof s, "%.17g", x);
    if (strchr(s, '.') == NULL && strchr(s, 'e') == NULL)
        strcat(s, ".0");
    char *e = strchr(s, 'e');
    if (e != NULL) {
        /* e+20 → e20, e-07 → e-7 */
        char *digits = e + 1;
        char *out = digits;
        if (*digits == '+')
            digits++;
        else if (*digits == '-')
            out = ++digits;
        while (*digits == '0' && digits[1] != '\0')
            digits++;
        memmove(out, digits, strlen(digits) + 1);
    }
    puts_(t, s);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void put_value(text *t, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (keys == NULL) {
            t->failed = 1;
            return;
        }
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)v, key, value) {
            (void)value;
            keys[i++] = key;
        }
        qsort(keys, n, sizeof *keys, key_cmp);
        puts_(t, "{");
        for (i = 0; i < n; i++) {
            if (i > 0)
                puts_(t, ",");
            put_string(t, keys[i], strlen(keys[i]));
            puts_(t, ":");
            put_value(t, json_object_get(v, keys[i]));
        }
        puts_(t, "}");
        free(keys);
        break;
    }
    case JSON_ARRAY:
        puts_(t, "[");
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i > 0)
                puts_(t, ",");
            put_value(t, json_array_get(v, i));
        }
        puts_(t, "]");
        break;
    case JSON_STRING:
        put_string(t, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER: {
        char s[32];
        snprintf(s, sizeof s, "%lld", (long long)json_integer_value(v));
        puts_(t, s);
        break;
    }
    case JSON_REAL:
        put_real(t, json_real_value(v));
        break;
    case JSON_TRUE:
        puts_(t, "true");
        break;
    case JSON_FALSE:
        puts_(t, "false");
        break;
    case JSON_NULL:
        puts_(t, "null");
        break;
    }
}

char *pflref_canonical_json(const json_t *v)
{
    text t = {.buf = NULL, .len = 0, .cap = 0, .failed = 0};
    put_value(&t, v);
    if (t.failed) {
        free(t.buf);
        return NULL;
    }
    return t.buf;
}

int pflref_content_hash(const json_t *v, char out[PFLREF_HASH_MAX])
{
    char *c = pflref_canonical_json(v);
    if (c == NULL)
        return 0;
    char hex[65];
    pflref_sha256_hex((const unsigned char *)c, strlen(c), hex);
    snprintf(out, PFLREF_HASH_MAX, "sha256:%s", hex);
    free(c);
    return 1;
}
