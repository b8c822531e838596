/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/json_numeric.c: the clients' numeric arrays read straight from
 * the JSON text, without a jansson node per number (ref/io/json.h).
 *
 * A problem's data is almost all of a spec or problem file: 100 clients of
 * 600 × 784 features are 47 million numbers, and jansson would build a
 * node (a malloc'd json_real) for each.  Before jansson parses the text,
 * pflref_json_lift scans it once and lifts out every array that is the
 * value of a data key, "X", "X_test", "X_val" (an array of rows of
 * numbers) or "y", "y_test", "y_val" (an array of numbers): the numbers go
 * into one malloc'd array of doubles, and the array's text is replaced by
 * a placeholder string "\u0001<i>" (entry i of the table), the text closing
 * up behind it, so jansson reads a short string where the array was.  The
 * data reader (ref/io/spec_data.c) takes the doubles from the table when it
 * meets a placeholder.
 *
 * Nothing changes but the cost:
 *   a) the numbers are the same doubles: an integer literal is converted
 *      as jansson converts it (strtoll, then to double: "-0" is +0.0), any
 *      other literal by strtod, as jansson does;
 *   b) every error reads as before: an array is lifted only when it is
 *      valid JSON with nothing jansson or the underflow scan would refuse
 *      (a malformed, overflowing, too long or underflowing number, a
 *      string, an empty row, a row that is not an array ...); otherwise it
 *      stays in the text and jansson and the readers report it exactly as
 *      they did;
 *   c) jansson's line and column numbers would move, so when the lifted
 *      text fails to parse, the original text is parsed again for the
 *      error (pflref_json_parse_lifted): a lifted array is valid JSON, so
 *      the two texts are valid or invalid together;
 *   d) a placeholder cannot be forged: when the text holds the escape
 *      \u0001 anywhere, nothing is lifted (a raw 0x01 byte in a string is
 *      not JSON).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/json.h"

/* The longest number literal lifted: 17 significant digits, a sign, a
 * point and an exponent need under 30; a longer one stays with jansson. */
#define MAX_TOKEN 63

/* The depth of the array a data key takes: 2 for X, X_test, X_val (rows
 * of numbers), 1 for y, y_test, y_val, 0 for any other key. */
static int key_depth(const char *k, size_t n)
{
    static const struct {
        const char *key;
        int depth;
    } keys[] = {{"X", 2}, {"X_test", 2}, {"X_val", 2},
                {"y", 1}, {"y_test", 1}, {"y_val", 1}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].key) == n && memcmp(keys[i].key, k, n) == 0)
            return keys[i].depth;
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A growing array of doubles (and, for a matrix, of row lengths). */
typedef struct {
    double *v;
    size_t n, cap;
    size_t *rows;
    size_t nrows, rcap;
} lift_buf;

static int push_value(lift_buf *b, double x)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        double *v = cap < ((size_t)-1) / sizeof *v
                        ? realloc(b->v, cap * sizeof *v) : NULL;
        if (v == NULL)
            return 0;
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = x;
    return 1;
}

static int push_row(lift_buf *b, size_t len)
{
    if (b->nrows == b->rcap) {
        size_t cap = b->rcap ? 2 * b->rcap : 64;
        size_t *r = cap < ((size_t)-1) / sizeof *r
                        ? realloc(b->rows, cap * sizeof *r) : NULL;
        if (r == NULL)
            return 0;
        b->rows = r;
        b->rcap = cap;
    }
    b->rows[b->nrows++] = len;
    return 1;
}

/* Clinger's fast path (W. D. Clinger, "How to read floating point numbers
 * accurately", PLDI 1990): a literal "-?I.F" without exponent whose digits
 * form an integer m ≤ 2^53 with k ≤ 22 digits after the point is m / 10^k,
 * both operands exact doubles, so the one correctly rounded IEEE division
 * gives exactly strtod's result.  *x gets it; 0 when the literal is not of
 * that form (strtod then reads it). */
static int fast_decimal(const char *tok, size_t n, double *x)
{
    static const double pow10[23] = {
        1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const int neg = tok[0] == '-';
    unsigned long long m = 0;
    size_t k = 0, digits = 0;
    int point = 0;
    for (size_t j = (size_t)neg; j < n; j++) {
        if (tok[j] == '.') {
            point = 1;
            continue;
        }
        if (tok[j] < '0' || tok[j] > '9' || ++digits > 19)
            return 0;
        m = m * 10 + (unsigned long long)(tok[j] - '0');
        k += (size_t)point;
    }
    if (m > (1ULL << 53) || k > 22)
        return 0;
    const double q = (double)m / pow10[k];
    *x = neg ? -q : q;
    return 1;
}

/* The number literal at text[*i] (JSON's grammar), converted as jansson
 * converts it, into b; *i moves past it.  0 when jansson would refuse it
 * or the underflow scan would name it (json.c): the array is then left
 * alone. */
static int lift_number(const char *text, size_t len, size_t *i, lift_buf *b)
{
    size_t j = *i;
    int integral = 1, nonzero = 0;
    if (j < len && text[j] == '-')
        j++;
    if (j < len && text[j] == '0')
        j++;
    else if (j < len && text[j] >= '1' && text[j] <= '9')
        for (nonzero = 1; j < len && is_digit(text[j]); j++)
            ;
    else
        return 0;
    if (j < len && text[j] == '.') {
        integral = 0;
        if (++j >= len || !is_digit(text[j]))
            return 0;
        for (; j < len && is_digit(text[j]); j++)
            nonzero |= text[j] != '0';
    }
    int exponent = 0;
    if (j < len && (text[j] == 'e' || text[j] == 'E')) {
        integral = 0;
        exponent = 1;
        if (++j < len && (text[j] == '+' || text[j] == '-'))
            j++;
        if (j >= len || !is_digit(text[j]))
            return 0;
        while (j < len && is_digit(text[j]))
            j++;
    }
    if (j - *i > MAX_TOKEN || j >= len)
        return 0;
    char tok[MAX_TOKEN + 1];
    memcpy(tok, text + *i, j - *i);
    tok[j - *i] = '\0';
    double x;
    errno = 0;
    if (integral) {
        /* jansson: an integer literal is a json_int_t (strtoll) */
        const long long v = strtoll(tok, NULL, 10);
        if (errno == ERANGE)
            return 0;
        x = (double)v;
    } else if (!exponent && fast_decimal(tok, j - *i, &x)) {
        /* exactly strtod's double (see fast_decimal) */
    } else {
        x = strtod(tok, NULL);
        if (errno == ERANGE && (x > 1.0 || x < -1.0))
            return 0;          /* jansson: "real number overflow" */
        if (x == 0.0 && nonzero)
            return 0;          /* an underflow, for json.c to name */
    }
    *i = j;
    return push_value(b, x);
}

static size_t skip_ws(const char *text, size_t len, size_t i)
{
    while (i < len && is_space(text[i]))
        i++;
    return i;
}

/* "[n, n, ...]" (at least one number) at text[*i] into b; *i moves past
 * the ']'.  *count gets the numbers read.  0 when not such an array. */
static int lift_row(const char *text, size_t len, size_t *i, lift_buf *b,
                    size_t *count)
{
    size_t j = *i;
    if (j >= len || text[j] != '[')
        return 0;
    *count = 0;
    for (j = skip_ws(text, len, j + 1);; j = skip_ws(text, len, j + 1)) {
        if (!lift_number(text, len, &j, b))
            return 0;
        ++*count;
        j = skip_ws(text, len, j);
        if (j < len && text[j] == ']')
            break;
        if (j >= len || text[j] != ',')
            return 0;
    }
    *i = j + 1;
    return 1;
}

/* An array of `depth` (1: numbers; 2: rows of numbers) at text[start]
 * into b; the index past its ']', or 0 when it is not one. */
static size_t lift_array(const char *text, size_t len, size_t start,
                         int depth, lift_buf *b)
{
    size_t i = start, count;
    if (depth == 1)
        return lift_row(text, len, &i, b, &count) ? i : 0;
    if (text[i] != '[')
        return 0;
    for (i = skip_ws(text, len, i + 1);; i = skip_ws(text, len, i + 1)) {
        if (!lift_row(text, len, &i, b, &count) || !push_row(b, count))
            return 0;
        i = skip_ws(text, len, i);
        if (i < len && text[i] == ']')
            return i + 1;
        if (i >= len || text[i] != ',')
            return 0;
    }
}

/* Append b as a new entry of t (taking its arrays): its index, or
 * (size_t)-1 when memory is short. */
static size_t add_entry(pflref_json_numerics *t, lift_buf *b, int depth)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        pflref_json_numeric *a = realloc(t->a, cap * sizeof *a);
        if (a == NULL)
            return (size_t)-1;
        t->a = a;
        t->cap = cap;
    }
    t->a[t->n] = (pflref_json_numeric){
        .v = b->v, .n = b->n, .depth = depth,
        .rows = depth == 2 ? b->nrows : b->n,
        .row_len = depth == 2 ? b->rows : NULL};
    free(depth == 2 ? NULL : b->rows);
    *b = (lift_buf){.v = NULL};
    return t->n++;
}

/* The text being compacted: text[0, w) is final; text[from, ...) is
 * still to be copied down to w. */
typedef struct {
    char *text;
    size_t w, from;
} compactor;

/* Try to lift the array of `depth` at text[start]; the index to resume
 * the scan at (past the array when lifted, else start).  A lifted array's
 * text becomes its placeholder "\u0001k" (no longer than the array). */
static size_t try_lift(compactor *c, size_t len, size_t start, int depth,
                       pflref_json_numerics *t)
{
    char *text = c->text;
    lift_buf b = {.v = NULL};
    const size_t end = lift_array(text, len, start, depth, &b);
    char ph[48];
    const int n = snprintf(ph, sizeof ph, "\"\\u0001%zu\"", t->n);
    size_t k = (size_t)-1;
    if (end > 0 && end - start >= (size_t)n)
        k = add_entry(t, &b, depth);
    free(b.v);
    free(b.rows);
    if (k == (size_t)-1)
        return start;
    /* text[from, start) moves down to w, then the placeholder */
    memmove(text + c->w, text + c->from, start - c->from);
    c->w += start - c->from;
    memcpy(text + c->w, ph, (size_t)n);
    c->w += (size_t)n;
    c->from = end;
    return end;
}

size_t pflref_json_lift(char *text, size_t *len, pflref_json_numerics *t)
{
    static const char esc[] = "\\u0001";
    const size_t L = *len;
    for (size_t i = 0; i + sizeof esc - 1 <= L; i++)
        if (text[i] == '\\' && memcmp(text + i, esc, sizeof esc - 1) == 0)
            return 0;
    const size_t before = t->n;
    compactor c = {.text = text, .w = 0, .from = 0};
    for (size_t i = 0; i < L; i++) {
        if (text[i] != '"')
            continue;
        /* a string: a key when a ':' follows it */
        size_t end = i + 1;
        while (end < L && text[end] != '"')
            end += text[end] == '\\' ? 2 : 1;
        if (end >= L)
            break;
        const int depth = key_depth(text + i + 1, end - i - 1);
        size_t j = skip_ws(text, L, end + 1);
        if (depth > 0 && j < L && text[j] == ':') {
            j = skip_ws(text, L, j + 1);
            if (j < L && text[j] == '[') {
                const size_t past = try_lift(&c, L, j, depth, t);
                if (past > j) {
                    i = past - 1;
                    continue;
                }
            }
        }
        i = end;
    }
    memmove(text + c.w, text + c.from, L - c.from);
    *len = c.w + (L - c.from);
    return t->n - before;
}

pflref_json_numeric *pflref_json_numeric_of(const json_t *v,
                                            const pflref_json_numerics *t)
{
    if (t == NULL || !json_is_string(v))
        return NULL;
    const char *s = json_string_value(v);
    if (s[0] != '\x01')
        return NULL;
    char *end;
    errno = 0;
    const unsigned long long k = strtoull(s + 1, &end, 10);
    if (errno != 0 || *end != '\0' || k >= t->n)
        return NULL;
    return &t->a[k];
}

void pflref_json_numerics_free(pflref_json_numerics *t)
{
    if (t == NULL)
        return;
    for (size_t k = 0; k < t->n; k++) {
        free(t->a[k].v);
        free(t->a[k].row_len);
    }
    free(t->a);
    *t = (pflref_json_numerics){.a = NULL};
}
