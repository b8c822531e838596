/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_hostile.c: hostile files and folders, the classes of
 * docs/bad-inputs.md from 118 on ("Hostile files and folders").
 *
 * One row per class, run by a loop test like tests/test_badinput.c's: the
 * row's entries (files, FIFOs, folders, symbolic and hard links) are made
 * in a fresh folder D, the pflref program runs on them under a timeout,
 * and the test asserts
 *
 *   - that it finished: a child still running after HANG_SECONDS is killed
 *     by SIGALRM (an alarm survives exec) and the row fails as a hang; the
 *     Check case has its own timeout on top;
 *   - the exact exit status;
 *   - that standard error names the file, field or option at fault and
 *     says what is wrong with it;
 *   - that standard output is empty, or holds the report line the row
 *     names;
 *   - that D, walked without following links, is what it was: no result,
 *     no RESULT.tmp.*, no input overwritten.
 *
 * test_summary_agrees_with_first_divergence runs check --json on wrong
 * candidates and holds the statistics to the first divergence.
 * test_hostile_catalogue ties the rows to the document.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "suites.h"
#include "testutil.h"

/* Every row is refused or judged in well under a second; a run still going
 * after this long is hung (a FIFO opened for reading, a link loop). */
#define HANG_SECONDS 10

/* ---- texts ---------------------------------------------------------------- */

#define FMT "\"format\": \"pflref-spec/1\""
#define LIN "\"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"}"
#define TWO "\"problem\": {\"clients\": [{\"X\": [[1, 2], [3, 4]], \"y\": [1, 2]}," \
            " {\"X\": [[0.5, 1]], \"y\": [3]}]}"
#define FEDAVG(eta) "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": " eta "}}"
#define GEN "\"schedule\": {\"kind\": \"generate\", \"rounds\": 2, \"local\": {\"epochs\": 1}}"
#define GOOD "{" FMT ", " LIN ", " TWO ", " FEDAVG("0.1") ", " GEN "}"
#define PFILE "{" FMT ", " LIN ", \"problem\": {\"file\": \"p.json\"}, " FEDAVG("0.1") ", " GEN "}"
#define PROBLEM "{\"format\": \"pflref-problem/1\", \"clients\": [{\"X\": [[1, 2]], \"y\": [1]}]}"

/* A golden vector of one FedAvg step on f = ½(w − 4)², η = 1/2, from 0:
 * w = 0 − ½·(0 − 4) = 2 (by hand); the server's w of round 0 is that w. */
#define MINI_SPEC "{" FMT ", \"model\": {\"kind\": \"quadratic\", \"d\": 1}," \
    " \"problem\": {\"clients\": [{\"a\": [1.0], \"c\": [4.0]}]}, " FEDAVG("0.5") "," \
    " \"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[0]]]}]}}"
#define VECTOR(id, exp) "{\"format\": \"pflref-golden/1\", \"id\": \"" id "\"," \
    " \"title\": \"one step\", \"provenance\": {\"kind\": \"hand\"}, \"flags\": [\"local-step-count\"]," \
    " \"spec\": " MINI_SPEC ", \"tolerance\": {\"atol\": 1e-15, \"rtol\": 1e-14, \"basis\": \"exact\"}," \
    " \"expected\": " exp "}"
#define SERVER(v) "{\"event\": \"server\", \"phase\": \"train\", \"round\": 0, \"name\": \"w\"," \
    " \"value\": [" v "]}"
#define MINI VECTOR("hostile/mini", "{\"final\": {\"w\": [2.0]}}")
/* two expected records: the server's w of round 0 and the final w */
#define MINI2 VECTOR("hostile/mini", "{\"trajectory\": [" SERVER("2.0") "], \"final\": {\"w\": [2.0]}}")
#define RES "\"format\": \"pflref-result/1\""
#define CAND(w) "{" RES ", \"id\": \"hostile/mini\", \"final\": {\"w\": [" w "]}}"
#define CAND_REC(rec) "{" RES ", \"trajectory\": [" rec "], \"final\": {\"w\": [2.0]}}"
#define REC(round, step, phase) "{\"event\": \"step\", \"phase\": \"" phase "\", \"round\": " round \
    ", \"client\": 0, \"step\": " step ", \"name\": \"w_local\", \"value\": [2.0]}"

/* ---- the rows ------------------------------------------------------------- */

/* A row's entries, each "KIND NAME" or "KIND NAME=TEXT" or "KIND NAME>TO":
 *   f NAME=TEXT  a file         p NAME     a FIFO (nobody writes to it)
 *   d NAME       a folder       s NAME>TO  a symbolic link to TO
 *   h NAME>TO    a hard link    u NAME     GOOD in UTF-16LE with a BOM
 *   U NAME       GOOD in UTF-16LE without one
 *   S NAME       a Unix socket (bound, then closed: the entry stays)
 * Devices are not among them: no row aims pflref at a device of the
 * machine (a socket and a FIFO are what is not a regular file here). */
typedef struct {
    int no;                /* the class number in docs/bad-inputs.md */
    const char *name;      /* the class, as the document names it     */
    const char *args;      /* split at spaces; $D the row's folder    */
    const char *entries[8];
    int exit;
    const char *where;     /* stderr names this (NULL: no error line) */
    const char *what;      /* and says this                           */
    const char *out;       /* stdout holds this (NULL: empty)         */
} hostile_case;

static const hostile_case CASES[] = {
    /* -- what is not a regular file is never opened for reading -- */
    {118, "FIFO as the spec", "run $D/f.json -o $D/out.json", {"p f.json"}, 2,
     "f.json is not a regular file", "(a FIFO (named pipe)); refused without reading it",
     NULL},
    {119, "FIFO as the problem file", "run $D/in.json -o $D/out.json",
     {"f in.json=" PFILE, "p p.json"}, 2, "problem.file", "a FIFO (named pipe)", NULL},
    {120, "socket as the spec", "run $D/s.json -o $D/out.json", {"S s.json"}, 2,
     "s.json is not a regular file", "(a socket); refused without reading it", NULL},
    {121, "verify: FIFO in a golden folder", "verify $D/g",
     {"d g", "f g/a.json=" MINI, "p g/z.json"}, 2, "g/z.json: not a regular file",
     "a FIFO (named pipe)", "verify: 1 vectors reproduced, 0 failed, 1 malformed"},
    {122, "check: FIFO in a candidate folder", "check $D/g $D/c",
     {"d g", "f g/a.json=" MINI, "d c", "f c/a.json=" CAND("2.0"), "p c/b.json"}, 2,
     "c/b.json: not a regular file", "a FIFO (named pipe)", "1 passed"},
    {123, "check: FIFO as EXPECTED", "check $D/f.json $D/c.json",
     {"p f.json", "f c.json=" CAND("2.0")}, 2, "f.json: not a regular file", "FIFO",
     "0 compared"},
    /* -- folder walks: each real file once -- */
    {124, "check: link loop in a golden folder", "check $D/g $D/c --min-vectors 2",
     {"d g", "f g/a.json=" MINI, "s g/self>.", "d c", "f c/a.json=" CAND("2.0")}, 4,
     "1 vectors compared, fewer than --min-vectors 2", NULL, "check: 1 compared: 1 passed"},
    {125, "verify: link to the parent folder", "verify $D/g",
     {"d g", "f g/a.json=" MINI, "s g/up>..", "s g/self>."}, 0, NULL, NULL,
     "verify: 1 vectors reproduced, 0 failed, 0 malformed"},
    {126, "verify: two vectors with one id", "verify $D/g",
     {"d g", "f g/a.json=" MINI, "f g/b.json=" MINI}, 2,
     "g/b.json: id: duplicate id \"hostile/mini\"", "g/a.json also has it",
     "1 vectors reproduced, 0 failed, 1 malformed"},
    {127, "check: two vectors with one id", "check $D/g $D/c",
     {"d g", "f g/a.json=" MINI, "f g/b.json=" MINI, "d c", "f c/a.json=" CAND("2.0")}, 2,
     "g/b.json: id: duplicate id \"hostile/mini\"", "g/a.json also has it", "1 malformed"},
    {128, "check: two candidates with one id", "check $D/g $D/c",
     {"d g", "f g/a.json=" MINI, "d c", "f c/a.json=" CAND("2.0"), "f c/b.json=" CAND("7.0")},
     2, "c/b.json: id: duplicate id \"hostile/mini\"", "c/a.json also has it",
     "0 compared: 0 passed, 0 numeric mismatches, 0 wrong outcome classes, 1 malformed"},
    /* -- output that is an input -- */
    {129, "-o is the spec", "run $D/in.json -o $D/in.json", {"f in.json=" GOOD}, 2,
     "-o $D/in.json is the spec", "would overwrite an input", NULL},
    {130, "-o a symbolic link to the spec", "run $D/in.json -o $D/l.json",
     {"f in.json=" GOOD, "s l.json>in.json"}, 2, "-o $D/l.json is the spec $D/in.json",
     "would overwrite an input", NULL},
    {131, "-o a hard link to the spec", "run $D/in.json -o $D/h.json",
     {"f in.json=" GOOD, "h h.json>in.json"}, 2, "-o $D/h.json is the spec", "(one file)",
     NULL},
    {132, "-o is the problem file", "run $D/in.json -o $D/p.json",
     {"f in.json=" PFILE, "f p.json=" PROBLEM}, 2, "is the spec's problem file",
     "would overwrite an input", NULL},
    /* -- candidate records -- */
    {133, "check: record with a negative step", "check $D/v.json $D/c.json",
     {"f v.json=" MINI, "f c.json=" CAND_REC(REC("0", "-1", "train"))}, 2,
     "candidate:trajectory[0].step", "step must be an integer >= 0, found -1", "1 malformed"},
    {134, "check: record with a round that is not an integer", "check $D/v.json $D/c.json",
     {"f v.json=" MINI, "f c.json=" CAND_REC(REC("0.5", "1", "train"))}, 2,
     "candidate:trajectory[0].round", "round must be an integer >= 0, found a real number",
     "1 malformed"},
    {135, "check: record of an unknown phase", "check $D/v.json $D/c.json",
     {"f v.json=" MINI, "f c.json=" CAND_REC(REC("0", "1", "warmup"))}, 2,
     "candidate:trajectory[0].phase", "unknown phase \"warmup\"", "1 malformed"},
    {136, "check: candidate id that is not a string", "check $D/v.json $D/c.json",
     {"f v.json=" MINI, "f c.json={" RES ", \"id\": 7, \"final\": {\"w\": [2.0]}}"}, 2,
     "c.json: id", "expected a string (the golden vector's id), found a number",
     "0 compared"},
    /* -- --partial -- */
    {137, "check: --partial below --partial-min", "check $D/v.json $D/c.json --partial --partial-min 1.0",
     {"f v.json=" MINI2, "f c.json=" CAND("2.0")}, 1, NULL, NULL,
     "--partial compared 1 of 2 expected records, fewer than the 2 --partial-min requires"},
    {138, "check: --partial-min out of its range", "check $D/v.json $D/c.json --partial --partial-min 1.5",
     {"f v.json=" MINI, "f c.json=" CAND("2.0")}, 2, "--partial-min takes a count >= 1 or a fraction in (0, 1]",
     "1.5", NULL},
    /* -- numbers and options -- */
    {139, "number that underflows to 0", "run $D/in.json -o $D/out.json",
     {"f in.json={" FMT ", " LIN ", " TWO ", " FEDAVG("1e-400") ", " GEN "}"}, 2,
     "algorithm.hyperparameters.eta", "1e-400 underflows to 0", NULL},
    {140, "count beyond 64 bits", "check $D/v.json $D/c.json --min-vectors 99999999999999999999",
     {"f v.json=" MINI, "f c.json=" CAND("2.0")}, 2, "--min-vectors is out of range",
     "99999999999999999999", NULL},
    {141, "empty --include pattern", "check $D/v.json $D/c.json --include ",
     {"f v.json=" MINI, "f c.json=" CAND("2.0")}, 2, "--include takes a pattern, not an empty string",
     NULL, NULL},
    {142, "--include that matches no vector", "check $D/v.json $D/c.json --include hostlie/*",
     {"f v.json=" MINI, "f c.json=" CAND("2.0")}, 2, "--include hostlie/*",
     "the pattern matched no vector's id, id prefix or flag", "0 compared"},
    {143, "UTF-16 with a byte-order mark", "run $D/in.json -o $D/out.json", {"u in.json"}, 2,
     "in.json is UTF-16 text (byte-order mark FF FE)", "pflref reads UTF-8 JSON", NULL},
    {144, "UTF-16 without a byte-order mark", "run $D/in.json -o $D/out.json", {"U in.json"}, 2,
     "in.json is UTF-16 text (NUL bytes between its characters)", NULL, NULL},
    /* -- the report of a wrong candidate -- */
    {145, "check: value of the wrong sign", "check $D/v.json $D/c.json",
     {"f v.json=" MINI, "f c.json=" CAND("-2.0")}, 1, NULL, NULL,
     "expected 2, got -2 (sign differs)"},
    {146, "check: value off by orders of magnitude", "check $D/v.json $D/c.json",
     {"f v.json=" MINI, "f c.json=" CAND("12345")}, 1, NULL, NULL,
     "expected 2, got 12345 (off by 10^3)"},
    {147, "check: duplicate record that differs", "check $D/v.json $D/c.json",
     {"f v.json=" MINI2, "f c.json={" RES ", \"trajectory\": [" SERVER("2.0") ", " SERVER("5.0")
      "], \"final\": {\"w\": [2.0]}}"}, 1, NULL, NULL,
     "duplicate record: the 2nd record of this quantity)[0]: expected 2, got 5"},
    {148, "verify: one vector under three names", "verify $D/g $D/g/a.json",
     {"d g", "f g/a.json=" MINI, "h g/b.json>g/a.json", "s g/c.json>a.json"}, 0, NULL, NULL,
     "verify: 1 vectors reproduced, 0 failed, 0 malformed"},
    /* -- a *.json that leads nowhere is an error, never skipped; --partial
     * covers every round unless --partial-min says otherwise -- */
    {149, "verify: dangling link in a golden folder", "verify $D/g",
     {"d g", "f g/a.json=" MINI, "s g/z.json>gone.json"}, 2,
     "g/z.json: a dangling symbolic link", "refused, not skipped",
     "verify: 1 vectors reproduced, 0 failed, 1 malformed"},
    {150, "check: dangling link in a candidate folder", "check $D/g $D/c",
     {"d g", "f g/a.json=" MINI, "d c", "f c/a.json=" CAND("2.0"), "s c/b.json>gone.json"}, 2,
     "c/b.json: a dangling symbolic link", "refused, not skipped", "1 passed"},
    {151, "verify: link cycle in a golden folder", "verify $D/g",
     {"d g", "f g/a.json=" MINI, "s g/x.json>y.json", "s g/y.json>x.json"}, 2,
     "g/x.json: a symbolic link in a cycle", "refused, not skipped",
     "verify: 1 vectors reproduced, 0 failed, 2 malformed"},
    {152, "check: link cycle in a golden folder", "check $D/g $D/c",
     {"d g", "f g/a.json=" MINI, "s g/x.json>x.json", "d c", "f c/a.json=" CAND("2.0")}, 2,
     "g/x.json: a symbolic link in a cycle", "refused, not skipped", "1 passed"},
    {153, "check: --partial, a round not covered", "check $D/v.json $D/c.json --partial",
     {"f v.json=" MINI2, "f c.json=" CAND("2.0")}, 1, NULL, NULL,
     "--partial compared records of 0 of the 1 rounds of the expected trajectory"},
    {154, "check: --partial, final state only, explicit --partial-min",
     "check $D/v.json $D/c.json --partial --partial-min 1",
     {"f v.json=" MINI2, "f c.json=" CAND("2.0")}, 0, NULL, NULL, "rounds covered: 0 of 1"},
    {155, "check: --budget without --diagnose", "check $D/v.json $D/c.json --budget 5",
     {"f v.json=" MINI, "f c.json=" CAND("2.0")}, 2, "--budget needs --diagnose", NULL, NULL},
};

#define N_CASES (sizeof CASES / sizeof CASES[0])

/* The last class of tests/test_badinput.c (its C API classes). */
#define LAST_BADINPUT_CLASS 117

/* ---- helpers -------------------------------------------------------------- */

/* A copy of tmpl with every $D replaced by dir. */
static char *expand(const char *tmpl, const char *dir)
{
    size_t n = strlen(tmpl) + 1, k = 0;
    for (const char *p = tmpl; *p != '\0'; p++)
        n += (p[0] == '$' && p[1] == 'D') ? strlen(dir) : 0;
    char *out = malloc(n);
    ck_assert_ptr_nonnull(out);
    for (const char *p = tmpl; *p != '\0'; p++) {
        if (p[0] == '$' && p[1] == 'D') {
            memcpy(out + k, dir, strlen(dir));
            k += strlen(dir);
            p++;
        } else {
            out[k++] = *p;
        }
    }
    out[k] = '\0';
    return out;
}

static void write_bytes(const char *path, const char *bytes, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* GOOD as UTF-16LE, after a byte-order mark when bom. */
static void write_utf16(const char *path, int bom)
{
    const char *text = GOOD;
    size_t n = strlen(text), k = 0;
    char *b = malloc(2 * n + 2);
    ck_assert_ptr_nonnull(b);
    if (bom) {
        b[k++] = (char)0xFF;
        b[k++] = (char)0xFE;
    }
    for (size_t i = 0; i < n; i++) {
        b[k++] = text[i];
        b[k++] = '\0';
    }
    write_bytes(path, b, k);
    free(b);
}

/* A Unix socket's entry at path: bound, then closed (the entry stays). */
static void make_socket(const char *path)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    ck_assert_uint_lt(strlen(path), sizeof a.sun_path);
    memcpy(a.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (const struct sockaddr *)&a, sizeof a), 0);
    close(fd);
}

/* Make one entry ("KIND NAME[=TEXT|>TO]") in dir. */
static void make_entry(const char *dir, const char *entry)
{
    const char kind = entry[0];
    const char *rest = entry + 2;
    size_t name_len = strcspn(rest, "=>");
    char name[256];
    ck_assert_uint_lt(name_len, sizeof name);
    memcpy(name, rest, name_len);
    name[name_len] = '\0';
    const char *arg = rest[name_len] != '\0' ? rest + name_len + 1 : "";
    char *path = tu_join(dir, name);
    char *to = kind == 'h' ? tu_join(dir, arg) : NULL;
    switch (kind) {
    case 'f': {
        /* a hand-written vector gets its content hash; other files as given */
        char *text = tu_vector_hashed(arg, 0);
        ck_assert_ptr_nonnull(text);
        write_bytes(path, text, strlen(text));
        free(text);
        break;
    }
    case 'p': ck_assert_int_eq(mkfifo(path, 0644), 0); break;
    case 'd': ck_assert_int_eq(mkdir(path, 0755), 0); break;
    case 's': ck_assert_int_eq(symlink(arg, path), 0); break;
    case 'h': ck_assert_int_eq(link(to, path), 0); break;
    case 'u': write_utf16(path, 1); break;
    case 'U': write_utf16(path, 0); break;
    case 'S': make_socket(path); break;
    default: ck_abort_msg("unknown entry kind in \"%s\"", entry);
    }
    free(to);
    free(path);
}

typedef struct {
    int signal, status;
    char *out, *err;
} cli_run;

/* Run the CLI with args (split at spaces, $D expanded; an argument left
 * empty by a trailing space is passed as ""), killed by SIGALRM after
 * HANG_SECONDS. */
static void run_cli(const char *args, const char *dir, cli_run *r)
{
    const char *cli = getenv("PFLREF_CLI");
    ck_assert_msg(cli != NULL, "PFLREF_CLI is not set (run through make)");
    char *line = expand(args, dir);
    char *argv[40];
    int argc = 0;
    argv[argc++] = (char *)cli;
    for (char *p = line; p != NULL && argc < 38;) {
        char *sp = strchr(p, ' ');
        if (sp != NULL)
            *sp = '\0';
        argv[argc++] = p;
        p = sp != NULL ? sp + 1 : NULL;
    }
    argv[argc] = NULL;
    char *cap = tu_tmpdir();
    char *outp = tu_join(cap, "out"), *errp = tu_join(cap, "err");
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork failed");
    if (pid == 0) {
        int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
            _exit(127);
        alarm(HANG_SECONDS);   /* kept across exec */
        execv(cli, argv);
        _exit(127);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->out = tu_read(outp);
    r->err = tu_read(errp);
    ck_assert_ptr_nonnull(r->out);
    ck_assert_ptr_nonnull(r->err);
    unlink(outp);
    unlink(errp);
    rmdir(cap);
    free(outp);
    free(errp);
    free(cap);
    free(line);
}

/* ---- the rows ------------------------------------------------------------ */

START_TEST(test_hostile_class)
{
    const hostile_case *c = &CASES[_i];
    ck_assert_msg(c->no == LAST_BADINPUT_CLASS + 1 + _i, "row %d holds class %d",
                  _i, c->no);
    char *dir = tu_tmpdir();
    for (size_t k = 0; k < 8 && c->entries[k] != NULL; k++)
        make_entry(dir, c->entries[k]);
    char *before = NULL, *after = NULL;
    size_t before_len = 0, after_len = 0;
    before = tu_tree(dir, &before_len);

    cli_run r;
    run_cli(c->args, dir, &r);
    char *where = c->where ? expand(c->where, dir) : NULL;
    ck_assert_msg(r.signal == 0, "class %d (%s): %s %d\n%s", c->no, c->name,
                  r.signal == SIGALRM ? "hung: killed after the timeout, signal"
                                      : "killed by signal", r.signal, r.err);
    ck_assert_msg(r.status == c->exit, "class %d (%s): exit %d, expected %d\n"
                  "stderr: %s\nstdout: %s", c->no, c->name, r.status, c->exit,
                  r.err, r.out);
    if (where != NULL)
        ck_assert_msg(strstr(r.err, where) != NULL,
                      "class %d (%s): stderr does not name \"%s\":\n%s", c->no,
                      c->name, where, r.err);
    else
        ck_assert_msg(strstr(r.err, "pflref:") == NULL,
                      "class %d (%s): unexpected error: %s", c->no, c->name,
                      r.err);
    if (c->what != NULL)
        ck_assert_msg(strstr(r.err, c->what) != NULL,
                      "class %d (%s): stderr does not say \"%s\":\n%s", c->no,
                      c->name, c->what, r.err);
    if (c->out == NULL)
        ck_assert_msg(r.out[0] == '\0', "class %d (%s): stdout: %s", c->no,
                      c->name, r.out);
    else
        ck_assert_msg(strstr(r.out, c->out) != NULL,
                      "class %d (%s): stdout lacks \"%s\":\n%s", c->no,
                      c->name, c->out, r.out);
    after = tu_tree(dir, &after_len);
    ck_assert_msg(after_len == before_len &&
                      (before_len == 0 || memcmp(before, after, before_len) == 0),
                  "class %d (%s): the folder changed:\nbefore:\n%.*s\n"
                  "after:\n%.*s", c->no, c->name, (int)before_len,
                  before ? before : "", (int)after_len, after ? after : "");
    free(where);
    free(before);
    free(after);
    free(r.out);
    free(r.err);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* ---- the library: pflref_read_file ------------------------------------- */

/* A FIFO nobody writes to is refused at once, by name, with nothing handed
 * back (the case's timeout fails a hang); UTF-16 text is named. */
START_TEST(test_read_file_refuses_without_blocking)
{
    char *dir = tu_tmpdir();
    char *fifo = tu_join(dir, "f.json"), *utf16 = tu_join(dir, "u.json");
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    char *text = (char *)&text;   /* not NULL */
    size_t len;
    pflref_error err;
    ck_assert_int_eq(pflref_read_file(fifo, &text, &len, &err), PFLREF_EIO);
    ck_assert_str_eq(err.where, fifo);
    ck_assert_msg(strstr(err.message, "a FIFO (named pipe)") != NULL, "%s",
                  err.message);
    ck_assert_ptr_null(text);
    write_utf16(utf16, 1);
    ck_assert_int_eq(pflref_read_file(utf16, &text, &len, &err), PFLREF_EINVAL);
    ck_assert_msg(strstr(err.message, "UTF-16") != NULL, "%s", err.message);
    ck_assert_ptr_null(text);
    /* the identity of what was read is the identity of the path */
    pflref_file_id a, b;
    ck_assert_int_eq(tu_write(utf16, "{}"), 0);
    ck_assert_int_eq(pflref_read_file_id(utf16, &text, &len, &a, &err), PFLREF_OK);
    ck_assert_int_eq(pflref_file_identify(utf16, &b), 1);
    ck_assert(a.dev == b.dev && a.ino == b.ino);
    free(text);
    unlink(fifo);
    unlink(utf16);
    rmdir(dir);
    free(fifo);
    free(utf16);
    free(dir);
}
END_TEST

/* ---- the summary agrees with the first divergence ------------------------ */

/* Correct digits of got against expected, as the report counts them. */
static double digits(double got, double expected)
{
    double e = expected == 0.0 ? fabs(got) : fabs(got - expected) / fabs(expected);
    return e == 0.0 ? 15.95 : (-log10(e) > 0.0 ? -log10(e) : 0.0);
}

/* For wrong candidates of every kind (a wrong sign, orders of magnitude, a
 * tiny error, a wrong duplicate record, a record of another length, NaN):
 * the first divergence's error is within the entry's and its quantity's
 * max abs err, its digits are not fewer than the fewest reported, its
 * quantity reports a mismatch, and no count is negative or -0 digits. */
START_TEST(test_summary_agrees_with_first_divergence)
{
    static const char *const cands[] = {
        CAND("-2.0"), CAND("12345"), CAND("2.0000001"), CAND("0"),
        "{" RES ", \"trajectory\": [" SERVER("2.0") ", " SERVER("-9.5") "], \"final\": {\"w\": [2.0]}}",
        "{" RES ", \"trajectory\": [" SERVER("2.0, 1.0") "], \"final\": {\"w\": [2.0]}}",
        "{" RES ", \"trajectory\": [" SERVER("1e300") "], \"final\": {\"w\": [-1e-300]}}",
    };
    char *dir = tu_tmpdir();
    char *v = tu_join(dir, "v.json"), *cp = tu_join(dir, "c.json");
    char *mini2 = tu_vector_hashed(MINI2, 0);
    ck_assert_int_eq(tu_write(v, mini2), 0);
    free(mini2);
    for (size_t k = 0; k < sizeof cands / sizeof cands[0]; k++) {
        ck_assert_int_eq(tu_write(cp, cands[k]), 0);
        char args[4096], *out = NULL;
        snprintf(args, sizeof args, "check %s %s --json", v, cp);
        ck_assert_int_eq(tu_cli(args, &out, NULL), 1);
        json_error_t je;
        json_t *root = json_loads(out, 0, &je);
        ck_assert_msg(root != NULL, "candidate %zu: not JSON: %s", k, out);
        json_t *e = json_array_get(json_object_get(root, "vectors"), 0);
        json_t *d = json_object_get(e, "first_divergence");
        ck_assert_msg(d != NULL, "candidate %zu: no first divergence", k);
        ck_assert_int_ge(json_integer_value(json_object_get(e, "mismatches")), 1);
        const char *name = json_string_value(json_object_get(d, "name"));
        json_t *q = NULL, *qs = json_object_get(e, "by_quantity");
        for (size_t i = 0; i < json_array_size(qs); i++)
            if (strcmp(json_string_value(json_object_get(json_array_get(qs, i),
                                                         "name")), name) == 0)
                q = json_array_get(qs, i);
        ck_assert_msg(q != NULL, "candidate %zu: no statistics for %s", k, name);
        ck_assert_int_ge(json_integer_value(json_object_get(q, "mismatches")), 1);
        const double min_lre = json_real_value(json_object_get(e, "min_lre"));
        ck_assert_msg(min_lre >= 0.0 && !signbit(min_lre),
                      "candidate %zu: min_lre %g", k, min_lre);
        if (!json_is_true(json_object_get(d, "missing"))) {
            double x = json_real_value(json_object_get(d, "got"));
            double r = json_real_value(json_object_get(d, "expected"));
            double err = fabs(x - r);
            ck_assert_msg(err <= json_real_value(json_object_get(e, "max_abs_err")) &&
                              err <= json_real_value(json_object_get(q, "max_abs_err")),
                          "candidate %zu: the first divergence is off by %g, more "
                          "than the max abs err reported:\n%s", k, err, out);
            ck_assert_msg(min_lre <= digits(x, r) + 1e-9,
                          "candidate %zu: %g correct digits reported, the first "
                          "divergence has %g:\n%s", k, min_lre, digits(x, r), out);
        }
        json_decref(root);
        free(out);
    }
    unlink(v);
    unlink(cp);
    rmdir(dir);
    free(v);
    free(cp);
    free(dir);
}
END_TEST

/* ---- the catalogue -------------------------------------------------------- */

/* docs/bad-inputs.md has a row "| N | class |" for every row here, numbered
 * on from tests/test_badinput.c's last class, and none beyond. */
START_TEST(test_hostile_catalogue)
{
    char *path = tu_repo_path("docs/bad-inputs.md");
    char *doc = tu_read(path);
    ck_assert_msg(doc != NULL, "cannot read %s", path);
    char row[256];
    snprintf(row, sizeof row, "| %d | ", LAST_BADINPUT_CLASS);
    ck_assert_msg(strstr(doc, row) != NULL, "the catalogue lacks class %d",
                  LAST_BADINPUT_CLASS);
    for (size_t i = 0; i < N_CASES; i++) {
        snprintf(row, sizeof row, "| %d | %s |", CASES[i].no, CASES[i].name);
        ck_assert_msg(strstr(doc, row) != NULL, "the catalogue lacks \"%s\"",
                      row);
    }
    snprintf(row, sizeof row, "| %d | ", CASES[N_CASES - 1].no + 1);
    ck_assert_msg(strstr(doc, row) == NULL, "the catalogue has a row %s", row);
    free(doc);
    free(path);
}
END_TEST

Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile");
    TCase *tc = tcase_create("cli");
    /* each row waits at most HANG_SECONDS for the program */
    tcase_set_timeout(tc, 2 * HANG_SECONDS);
    tcase_add_loop_test(tc, test_hostile_class, 0, (int)N_CASES);
    tcase_add_test(tc, test_summary_agrees_with_first_divergence);
    tcase_add_test(tc, test_read_file_refuses_without_blocking);
    tcase_add_test(tc, test_hostile_catalogue);
    suite_add_tcase(s, tc);
    return s;
}
