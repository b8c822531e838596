/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/testutil.c: helpers shared by the test files. */
/* S_IFMT, S_ISLNK and readlink (tu_tree) are X/Open. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "io/canonical.h"
#include "testutil.h"

char *tu_repo_path(const char *rel)
{
    const char *root = getenv("PFLREF_ROOT");
    if (root == NULL)
        root = ".";
    size_t n = strlen(root) + strlen(rel) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", root, rel);
    return p;
}

char *tu_read(const char *path)
{
    char *text = NULL;
    size_t len;
    if (pflref_read_file(path, &text, &len, NULL) != PFLREF_OK)
        return NULL;
    return text;
}

int tu_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    int ok = fputs(text, f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

int tu_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

char *tu_tmpdir(void)
{
    char tmpl[] = "/tmp/pflref-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    ck_assert_msg(d != NULL, "mkdtemp failed");
    char *out = malloc(sizeof tmpl);
    ck_assert_ptr_nonnull(out);
    memcpy(out, tmpl, sizeof tmpl);
    return out;
}

/* args with each "$R" replaced by the repository (PFLREF_ROOT), malloc'd. */
static char *expand_repo(const char *args)
{
    char *root = tu_repo_path("");
    size_t uses = 0;
    for (const char *a = strstr(args, "$R"); a != NULL; a = strstr(a + 2, "$R"))
        uses++;
    const size_t n = strlen(args) + uses * strlen(root) + 1;
    char *out = malloc(n), *o = out;
    ck_assert_ptr_nonnull(out);
    for (const char *a = args; *a != '\0';) {
        if (a[0] == '$' && a[1] == 'R') {
            o += snprintf(o, n - (size_t)(o - out), "%s", root);
            a += 2;
        } else {
            *o++ = *a++;
        }
    }
    *o = '\0';
    free(root);
    return out;
}

int tu_cli_with(const tu_cli_options *opt, const char *args, char **out,
                char **errout)
{
    static const tu_cli_options PLAIN = {.cwd = NULL, .prefix = NULL,
                                         .hang_seconds = 0, .repo = 0};
    const tu_cli_options *o = opt != NULL ? opt : &PLAIN;
    const char *cli = getenv("PFLREF_CLI");
    ck_assert_msg(cli != NULL, "PFLREF_CLI is not set (run through make)");
    char *dir = tu_tmpdir();
    char *words = o->repo ? expand_repo(args) : strdup(args);
    ck_assert_ptr_nonnull(words);
    char cd[64 + PFLREF_PATH_MAX] = "", timeout[64] = "";
    if (o->cwd != NULL)
        snprintf(cd, sizeof cd, "cd '%s' && ", o->cwd);
    if (o->hang_seconds > 0)
        snprintf(timeout, sizeof timeout, "timeout -s KILL %d ",
                 o->hang_seconds);
    const char *prefix = o->prefix != NULL ? o->prefix : "";
    size_t n = strlen(cd) + strlen(prefix) + strlen(timeout) + strlen(cli) +
               strlen(words) + 2 * strlen(dir) + 64;
    char *cmd = malloc(n);
    ck_assert_ptr_nonnull(cmd);
    snprintf(cmd, n, "%s%s%s%s%s %s >%s/out 2>%s/err", cd,
             prefix, o->prefix != NULL ? " " : "", timeout, cli, words, dir,
             dir);
    int rc = system(cmd);
    ck_assert_msg(rc != -1 && WIFEXITED(rc), "could not run: %s", cmd);
    char path[256];
    snprintf(path, sizeof path, "%s/out", dir);
    char *so = tu_read(path);
    unlink(path);
    snprintf(path, sizeof path, "%s/err", dir);
    char *se = tu_read(path);
    unlink(path);
    rmdir(dir);
    ck_assert_msg(so != NULL && se != NULL, "no output captured: %s", cmd);
    if (out != NULL)
        *out = so;
    else
        free(so);
    if (errout != NULL)
        *errout = se;
    else
        free(se);
    free(cmd);
    free(words);
    free(dir);
    return WEXITSTATUS(rc);
}

int tu_cli(const char *args, char **out, char **errout)
{
    return tu_cli_with(NULL, args, out, errout);
}

pflref_status tu_parse(const char *text, pflref_spec **spec, pflref_error *err)
{
    pflref_error_clear(err);
    char *root = tu_repo_path("");
    pflref_status st = pflref_spec_parse(text, strlen(text), root, spec, err);
    free(root);
    return st;
}

void tu_golden(const char *rel, pflref_golden_report *rep)
{
    char *path = tu_repo_path(rel);
    char *text = tu_read(path);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    char *dir = tu_repo_path(rel);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    pflref_error err;
    pflref_error_clear(&err);
    pflref_status st = pflref_golden_verify(text, strlen(text), dir, rep, &err);
    ck_assert_msg(st == PFLREF_OK, "%s: %s: %s", rel, err.where, err.message);
    free(text);
    free(dir);
    free(path);
}

pflref_spec *tu_spec(const char *text)
{
    pflref_spec *spec = NULL;
    pflref_error err;
    pflref_status st = tu_parse(text, &spec, &err);
    ck_assert_msg(st == PFLREF_OK, "spec rejected: %s (at %s)", err.message,
                  err.where);
    return spec;
}

pflref_run_result *tu_run(const pflref_spec *spec, const pflref_trace *trace)
{
    pflref_run_result *res = NULL;
    pflref_error err;
    pflref_status st = pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                  spec->schedule, spec->w0, trace, &res, &err);
    ck_assert_msg(st == PFLREF_OK, "run failed: %s", err.message);
    return res;
}

void tu_cli_refuses(const char *dir, size_t q, const char *spec,
                    const char *where)
{
    char path[512], args[1200];
    snprintf(path, sizeof path, "%s/s%zu.json", dir, q);
    ck_assert_int_eq(tu_write(path, spec), 0);
    snprintf(args, sizeof args, "run %s -o %s/r%zu.json", path, dir, q);
    char *out = NULL, *errout = NULL;
    const int rc = tu_cli(args, &out, &errout);
    ck_assert_msg(rc == 2, "case %zu: exit %d, expected 2 (%s)", q, rc,
                  errout != NULL ? errout : "");
    ck_assert_msg(errout != NULL && strstr(errout, where),
                  "case %zu: stderr does not name %s: %s", q, where,
                  errout != NULL ? errout : "");
    snprintf(path, sizeof path, "%s/r%zu.json", dir, q);
    ck_assert_msg(!tu_exists(path), "case %zu: a result was written", q);
    free(out);
    free(errout);
}

void tu_run_error(const pflref_spec *spec, pflref_status expected,
                  pflref_error *err)
{
    pflref_run_result *res = NULL;
    pflref_status st = pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                  spec->schedule, spec->w0, NULL, &res, err);
    ck_assert_msg(st == expected, "run returned %s, expected %s (%s)",
                  pflref_status_name(st), pflref_status_name(expected),
                  err->message);
    ck_assert_msg(res == NULL, "a failed run handed back a result");
}

void tu_assert_relabelled(const pflref_run_result *fwd,
                          const pflref_run_result *rev, double w_rtol,
                          double v_atol)
{
    ck_assert_uint_eq(fwd->N, rev->N);
    ck_assert_uint_eq(fwd->P, rev->P);
    const size_t N = fwd->N, P = fwd->P;
    for (size_t p = 0; p < P; p++)
        ck_assert_msg(fabs(fwd->w[p] - rev->w[p]) <= w_rtol * fabs(fwd->w[p]),
                      "w[%zu] = %.17g vs %.17g with the clients reversed", p,
                      fwd->w[p], rev->w[p]);
    for (size_t i = 0; i < N; i++)
        for (size_t p = 0; p < P; p++) {
            const double a = fwd->v[i * P + p];
            const double b = rev->v[(N - 1 - i) * P + p];
            ck_assert_msg(fabs(a - b) <= v_atol,
                          "client %zu, v[%zu] = %.17g vs %.17g with the "
                          "clients reversed", i, p, a, b);
        }
}

void tu_assert_golden(const char *rel)
{
    pflref_golden_report rep;
    tu_golden(rel, &rep);
    ck_assert_msg(rep.quantities > 0 && rep.numbers > 0,
                  "%s compared nothing", rel);
    ck_assert_msg(rep.mismatches == 0,
                  "%s: %zu mismatches; first %s %s round %ld client %ld step "
                  "%ld [%zu]: expected %.17g got %.17g", rel, rep.mismatches,
                  rep.first.event, rep.first.name, rep.first.round,
                  rep.first.client, rep.first.step, rep.first.index,
                  rep.first.expected, rep.first.got);
}

int tu_cli_in(const char *dir, const char *fmt, char **out, char **errout)
{
    char args[4096], *o = args;
    for (const char *f = fmt; *f != '\0' && o < args + sizeof args - 512;) {
        if (f[0] == '$' && f[1] == 'D') {
            o += snprintf(o, 512, "'%s'", dir);
            f += 2;
        } else {
            *o++ = *f++;
        }
    }
    *o = '\0';
    return tu_cli(args, out, errout);
}

json_t *tu_json_load_in(const char *dir, const char *name)
{
    char *p = tu_join(dir, name);
    json_error_t je;
    json_t *v = json_load_file(p, 0, &je);
    ck_assert_msg(v != NULL, "%s: %s", p, je.text);
    free(p);
    return v;
}

void tu_json_save_in(const char *dir, const char *name, const json_t *v)
{
    char *p = tu_join(dir, name);
    ck_assert_int_eq(json_dump_file(v, p, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                              JSON_REAL_PRECISION(17)), 0);
    free(p);
}

void tu_result_perturb(const char *dir, const char *name)
{
    json_t *root = tu_json_load_in(dir, name);
    json_t *fin = json_object_get(root, "final");
    json_t *v = json_object_get(fin, "v");
    json_t *row = v != NULL ? json_array_get(v, 0) : json_object_get(fin, "w");
    const double x0 = json_number_value(json_array_get(row, 0));
    json_array_set_new(row, 0, json_real(x0 + 0.5));
    json_t *rec = json_array_get(json_object_get(root, "trajectory"), 0);
    json_t *val = json_object_get(rec, "value");
    const double t0 = json_number_value(json_array_get(val, 0));
    json_array_set_new(val, 0, json_real(t0 * (1.0 + ldexp(1.0, -20))));
    tu_json_save_in(dir, name, root);
    json_decref(root);
}

char *tu_report_without_paths(const char *text)
{
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    ck_assert_msg(root != NULL, "not JSON (%s): %s", je.text, text);
    json_t *vs = json_object_get(root, "vectors");
    for (size_t i = 0; i < json_array_size(vs); i++) {
        json_object_del(json_array_get(vs, i), "expected");
        json_object_del(json_array_get(vs, i), "candidate");
        json_object_del(json_array_get(vs, i), "replay");
    }
    char *s = json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                   JSON_REAL_PRECISION(17));
    json_decref(root);
    return s;
}

char *tu_vector_hashed(const char *text, int replace)
{
    /* the last two only in the files form, when the vector has them */
    static const char *const parts[] = {"spec", "expected", "tolerance",
                                        "flags", "provenance",
                                        "trajectory_values", "array_files",
                                        NULL};
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    const char *fmt = json_string_value(json_object_get(root, "format"));
    if (root == NULL || fmt == NULL || strcmp(fmt, "pflref-golden/1") != 0 ||
        (!replace && json_object_get(root, "hash") != NULL)) {
        json_decref(root);
        char *copy = strdup(text);
        ck_assert_ptr_nonnull(copy);
        return copy;
    }
    json_object_del(root, "hash");
    json_t *hash = json_object();
    char h[PFLREF_HASH_MAX];
    ck_assert(pflref_content_hash(root, h));
    json_object_set_new(hash, "vector", json_string(h));
    for (size_t i = 0; parts[i] != NULL; i++) {
        const json_t *part = json_object_get(root, parts[i]);
        /* a vector missing a part is left for the reader to refuse */
        if (part != NULL && pflref_content_hash(part, h))
            json_object_set_new(hash, parts[i], json_string(h));
    }
    json_object_set_new(root, "hash", hash);
    char *out = json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(1) |
                                     JSON_REAL_PRECISION(17));
    json_decref(root);
    ck_assert_ptr_nonnull(out);
    return out;
}

void tu_remove_tree(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
            size_t len = strlen(dir) + strlen(name) + 2;
            char *path = malloc(len);
            ck_assert_ptr_nonnull(path);
            snprintf(path, len, "%s/%s", dir, name);
            struct stat sb;
            if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
                tu_remove_tree(path);   /* a link to a folder is unlinked */
            else
                unlink(path);
            free(path);
        }
        free(names[i]);
    }
    if (n >= 0)
        free(names);
    rmdir(dir);
}

char *tu_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int tu_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot list %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* Append the entries below dir (named rel/...) to *buf (*len used). */
static void tree_walk(const char *dir, const char *rel, char **buf,
                      size_t *len)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    ck_assert_msg(n >= 0, "cannot list %s", dir);
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        if (strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0) {
            char *path = tu_join(dir, nm), *r = tu_join(rel, nm);
            struct stat sb;
            ck_assert_int_eq(lstat(path, &sb), 0);
            char head[1200], target[512] = "";
            if (S_ISLNK(sb.st_mode)) {
                ssize_t t = readlink(path, target, sizeof target - 1);
                target[t > 0 ? t : 0] = '\0';
            }
            int h = snprintf(head, sizeof head, "%s %o %llu %o %s\n", r,
                             (unsigned)(sb.st_mode & S_IFMT),
                             (unsigned long long)sb.st_ino,
                             (unsigned)(sb.st_mode & 07777), target);
            ck_assert(h > 0 && (size_t)h < sizeof head);
            size_t size = S_ISREG(sb.st_mode) ? (size_t)sb.st_size : 0;
            *buf = realloc(*buf, *len + (size_t)h + size + 1);
            ck_assert_ptr_nonnull(*buf);
            memcpy(*buf + *len, head, (size_t)h);
            *len += (size_t)h;
            if (S_ISREG(sb.st_mode)) {
                FILE *f = fopen(path, "rb");
                ck_assert_msg(f != NULL, "cannot read %s", path);
                *len += fread(*buf + *len, 1, size, f);
                fclose(f);
            } else if (S_ISDIR(sb.st_mode)) {
                tree_walk(path, r, buf, len);
            }
            free(path);
            free(r);
        }
        free(names[i]);
    }
    free(names);
}

char *tu_tree(const char *dir, size_t *len)
{
    char *buf = NULL;
    size_t used = 0;
    tree_walk(dir, ".", &buf, &used);
    buf = realloc(buf, used + 1);
    ck_assert_ptr_nonnull(buf);
    buf[used] = '\0';
    if (len != NULL)
        *len = used;
    return buf;
}

void tu_assert_catalogue(const tu_catalogue_row *rows, size_t n, char letter)
{
    tu_assert_catalogue_to(rows, n, letter, n);
}

void tu_assert_catalogue_to(const tu_catalogue_row *rows, size_t n,
                            char letter, size_t last)
{
    char *path = tu_repo_path("docs/bad-inputs.md");
    char *doc = tu_read(path);
    ck_assert_msg(doc != NULL, "cannot read %s", path);
    char row[256];
    for (size_t i = 0; i < n; i++) {
        snprintf(row, sizeof row, "| %s | %s |", rows[i].no, rows[i].name);
        const char *at = strstr(doc, row);
        ck_assert_msg(at != NULL, "the catalogue lacks \"%s\"", row);
        const char *eol = strchr(at, '\n');
        snprintf(row, sizeof row, "`%s`", rows[i].test);
        const char *t = strstr(at, row);
        ck_assert_msg(t != NULL && (eol == NULL || t < eol),
                      "the catalogue's row %s does not name %s", rows[i].no,
                      rows[i].test);
    }
    snprintf(row, sizeof row, "| %c%zu | ", letter, last + 1);
    ck_assert_msg(strstr(doc, row) == NULL, "the catalogue has a row %s",
                  row);
    free(doc);
    free(path);
}
