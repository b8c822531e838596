/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_output.c: the one writer (ref/io/write.c) and every command
 * that writes a file; docs/bad-inputs.md, "Output files" (W1-W8).
 *
 * The writer, called directly: a new file and a replaced one get their
 * bytes and the permissions of a new file (0666 less the umask); what is
 * not a regular file (a FIFO, a folder), a dangling link, a read-only
 * file and a missing folder are refused with PFLREF_EIO, err.where the
 * path, and stay as they were (the same kind and inode); a link to a
 * regular file has the file replaced and the link kept; a step that fails
 * midway leaves the old file and no NAME.tmp.*; an entry that appears at
 * the target, or replaces it, while the content is written is left as it
 * is (a step plays the concurrent writer).
 *
 * Every command that writes a file (run, freeze, plot clients, sweep,
 * curves, check), run as a program, for each kind of target: the exit
 * status, the path named on standard error, nothing on standard output,
 * and the target's folder walked without following links before and
 * after (kinds, inodes, link targets, bytes).  `-o -` and `-o /dev/stdout`
 * put the output on standard output, which is the test's own capture file:
 * "/dev/stdout" is a name pflref recognises and never opens.
 *
 * No test here aims pflref at a device of the machine: every FIFO, folder,
 * link and file is made in the test's own temporary folder, and each
 * command runs under timeout(1), so a writer that opened a FIFO would fail
 * the test instead of hanging it.
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "suites.h"
#include "testutil.h"

/* A command still running after this long opened what it must not. */
#define HANG_SECONDS "20"

/* A small spec with its data inline (freeze needs a spec, not a vector). */
#define SPEC "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"linear\", \"d\": 2," \
    " \"loss\": \"squared\"}, \"problem\": {\"clients\": [{\"X\": [[1, 2], [3, 4]]," \
    " \"y\": [1, 2]}, {\"X\": [[0.5, 1]], \"y\": [3]}]}, \"algorithm\": {\"name\":" \
    " \"fedavg\", \"hyperparameters\": {\"eta\": 0.125}}, \"schedule\": {\"kind\":" \
    " \"generate\", \"rounds\": 2, \"local\": {\"epochs\": 1}}}"

/* ---- helpers ------------------------------------------------------------ */

static ino_t inode_of(const char *path)
{
    struct stat sb;
    ck_assert_int_eq(lstat(path, &sb), 0);
    return sb.st_ino;
}

static int is_fifo(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && S_ISFIFO(sb.st_mode);
}

/* ---- the writer, called directly ---------------------------------------- */

/* A new file and a replaced one: their bytes, a new inode for the
 * replaced one (renamed over, never written in place), the permissions
 * of a new file under the umask, and nothing else in the folder. */
START_TEST(test_writer_new_and_replaced)
{
    const mode_t old_mask = umask(027);
    char *dir = tu_tmpdir(), *path = tu_join(dir, "a.json");
    pflref_error err;
    ck_assert_int_eq(pflref_write_file_atomic(path, "{\"w\": [2.385]}\n", &err),
                     PFLREF_OK);
    char *back = tu_read(path);
    ck_assert_str_eq(back, "{\"w\": [2.385]}\n");
    free(back);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_msg((sb.st_mode & 0777) == 0640,
                  "a new file has mode %o, not 0666 & ~027 = 0640",
                  (unsigned)(sb.st_mode & 0777));
    const ino_t first = sb.st_ino;
    ck_assert_int_eq(pflref_write_file_atomic(path, "{\"w\": [-7.5]}\n", &err),
                     PFLREF_OK);
    back = tu_read(path);
    ck_assert_str_eq(back, "{\"w\": [-7.5]}\n");
    free(back);
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_msg(sb.st_ino != first, "the file was written in place");
    ck_assert_uint_eq(sb.st_mode & 0777, 0640);
    ck_assert_int_eq(tu_entries(dir), 1);
    /* bytes with NULs in them (a PNG), whole */
    char *bin = tu_join(dir, "b.png");
    const char png[] = {'\x89', 'P', 'N', 'G', '\0', '\r', '\n', '\0'};
    ck_assert_int_eq(pflref_write_file_bytes(bin, png, sizeof png, &err),
                     PFLREF_OK);
    ck_assert_int_eq(stat(bin, &sb), 0);
    ck_assert_int_eq(sb.st_size, (off_t)sizeof png);
    FILE *f = fopen(bin, "rb");
    char got[sizeof png];
    ck_assert_uint_eq(fread(got, 1, sizeof got, f), sizeof png);
    fclose(f);
    ck_assert_int_eq(memcmp(got, png, sizeof png), 0);
    ck_assert_int_eq(tu_entries(dir), 2);
    umask(old_mask);
    free(bin);
    free(path);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A name of 255 bytes: its temporary name is cut to fit, and the file is
 * written. */
START_TEST(test_writer_long_name)
{
    char *dir = tu_tmpdir(), name[256];
    memset(name, 'a', 250);
    memcpy(name + 250, ".json", 6);
    char *path = tu_join(dir, name);
    pflref_error err;
    ck_assert_int_eq(pflref_write_file_atomic(path, "[1.5]\n", &err), PFLREF_OK);
    char *back = tu_read(path);
    ck_assert_str_eq(back, "[1.5]\n");
    free(back);
    ck_assert_int_eq(tu_entries(dir), 1);
    free(path);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* One refusal: status, where = path, the phrase, and dir unchanged; the
 * early check (pflref_write_file_check) gives the same refusal. */
static void assert_refused(const char *dir, const char *path,
                           pflref_status status, const char *phrase)
{
    char *before = tu_tree(dir, NULL);
    pflref_error early, err;
    pflref_error_clear(&early);
    ck_assert_int_eq(pflref_write_file_check(path, &early), status);
    pflref_error_clear(&err);
    pflref_status st = pflref_write_file_atomic(path, "written\n", &err);
    ck_assert_str_eq(early.message, err.message);
    ck_assert_msg(st == status, "%s: status %d, expected %d (%s)", path,
                  (int)st, (int)status, err.message);
    ck_assert_str_eq(err.where, status == PFLREF_EINVAL ? "path" : path);
    ck_assert_msg(strstr(err.message, phrase) != NULL,
                  "%s: the message does not say \"%s\": %s", path, phrase,
                  err.message);
    char *after = tu_tree(dir, NULL);
    ck_assert_msg(strcmp(before, after) == 0, "%s: the folder changed:\n"
                  "before:\n%s\nafter:\n%s", path, before, after);
    free(before);
    free(after);
}

/* What is not a regular file or absent is refused and left as it was. */
START_TEST(test_writer_refuses)
{
    char *dir = tu_tmpdir();
    char *fifo = tu_join(dir, "fifo.json"), *sub = tu_join(dir, "sub.json");
    char *dang = tu_join(dir, "dangling.json"), *ro = tu_join(dir, "ro.json");
    char *tofifo = tu_join(dir, "to-fifo.json"), *reg = tu_join(dir, "reg.json");
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(symlink("gone.json", dang), 0);
    ck_assert_int_eq(tu_write(ro, "kept\n"), 0);
    ck_assert_int_eq(chmod(ro, 0444), 0);
    ck_assert_int_eq(symlink("fifo.json", tofifo), 0);
    ck_assert_int_eq(tu_write(reg, "a regular file\n"), 0);
    assert_refused(dir, fifo, PFLREF_EIO,
                   "exists and is not a regular file (a FIFO (named pipe))");
    assert_refused(dir, sub, PFLREF_EIO,
                   "exists and is not a regular file (a folder)");
    assert_refused(dir, dang, PFLREF_EIO,
                   "is a symbolic link to gone.json, which does not exist");
    assert_refused(dir, ro, PFLREF_EIO, "the file is read-only (mode 0444");
    assert_refused(dir, tofifo, PFLREF_EIO,
                   "which is not a regular file (a FIFO (named pipe))");
    char *missing = tu_join(dir, "no/r.json"), *below = tu_join(dir, "reg.json/r.json");
    char *slash = tu_join(dir, "new/");
    assert_refused(dir, missing, PFLREF_EIO, "No such file or directory");
    assert_refused(dir, below, PFLREF_EIO, "Not a directory");
    assert_refused(dir, slash, PFLREF_EIO, "names a folder, not a file");
    assert_refused(dir, "", PFLREF_EINVAL, "empty");
    ck_assert_msg(is_fifo(fifo), "the FIFO is not a FIFO any more");
    /* what may be written passes the early check, which creates nothing */
    char *fresh = tu_join(dir, "fresh.json"), *before = tu_tree(dir, NULL);
    pflref_error err;
    ck_assert_int_eq(pflref_write_file_check(fresh, &err), PFLREF_OK);
    ck_assert_int_eq(pflref_write_file_check(reg, &err), PFLREF_OK);
    char *after = tu_tree(dir, NULL);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    free(fresh);
    free(missing);
    free(below);
    free(slash);
    free(fifo);
    free(sub);
    free(dang);
    free(ro);
    free(tofifo);
    free(reg);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Through links (one, and a chain of two, relative): the file at the end
 * is replaced, every link kept, no temporary file left beside either. */
START_TEST(test_writer_link_followed)
{
    char *dir = tu_tmpdir(), *sub = tu_join(dir, "sub");
    char *file = tu_join(dir, "sub/t.json"), *l1 = tu_join(dir, "l1.json");
    char *l2 = tu_join(dir, "l2.json");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(tu_write(file, "old\n"), 0);
    ck_assert_int_eq(symlink("sub/t.json", l1), 0);
    ck_assert_int_eq(symlink("l1.json", l2), 0);
    pflref_error err;
    ck_assert_int_eq(pflref_write_file_atomic(l1, "first\n", &err), PFLREF_OK);
    ck_assert_int_eq(pflref_write_file_atomic(l2, "second\n", &err), PFLREF_OK);
    char *back = tu_read(file), target[64];
    ck_assert_str_eq(back, "second\n");
    free(back);
    ssize_t n = readlink(l1, target, sizeof target - 1);
    ck_assert_int_gt(n, 0);
    target[n] = '\0';
    ck_assert_str_eq(target, "sub/t.json");
    n = readlink(l2, target, sizeof target - 1);
    ck_assert_int_gt(n, 0);
    target[n] = '\0';
    ck_assert_str_eq(target, "l1.json");
    ck_assert_int_eq(tu_entries(sub), 1);
    ck_assert_int_eq(tu_entries(dir), 3);
    free(sub);
    free(file);
    free(l1);
    free(l2);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A step that writes part of its content, then fails. */
static pflref_status failing_step(void *ctx, int fd, const char *name,
                                  pflref_error *err)
{
    (void)name;
    const pflref_status *status = ctx;
    ck_assert_int_eq(write(fd, "{\"half\": ", 9), 9);
    return pflref_error_set(err, *status, NULL, "the disk filled after 9 bytes");
}

/* A failure midway: the step's status and message, the target named, the
 * old file as it was (same inode and bytes), an absent one still absent,
 * and no temporary file. */
START_TEST(test_writer_fails_midway)
{
    char *dir = tu_tmpdir(), *old = tu_join(dir, "old.json");
    char *absent = tu_join(dir, "absent.json");
    ck_assert_int_eq(tu_write(old, "the previous result\n"), 0);
    const ino_t ino = inode_of(old);
    const pflref_status statuses[] = {PFLREF_EIO, PFLREF_EINTERNAL};
    for (size_t k = 0; k < 2; k++) {
        pflref_status want = statuses[k];
        pflref_error err;
        ck_assert_int_eq(pflref_write_file_with(old, failing_step, &want, &err),
                         want);
        ck_assert_str_eq(err.where, old);
        ck_assert_str_eq(err.message, "the disk filled after 9 bytes");
        ck_assert_int_eq(pflref_write_file_with(absent, failing_step, &want,
                                                &err), want);
        ck_assert_str_eq(err.where, absent);
    }
    char *back = tu_read(old);
    ck_assert_str_eq(back, "the previous result\n");
    free(back);
    ck_assert_msg(inode_of(old) == ino, "the old file was replaced");
    ck_assert_msg(!tu_exists(absent), "a failed write created its target");
    ck_assert_msg(tu_entries(dir) == 1, "a temporary file was left behind");
    free(old);
    free(absent);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The concurrent writer, played by the step while the content is written. */
typedef enum {
    RACE_FIFO_APPEARS,    /* a FIFO made at the absent target          */
    RACE_FILE_APPEARS,    /* a regular file made at the absent target  */
    RACE_FIFO_REPLACES,   /* the regular target swapped for a FIFO     */
    RACE_FILE_REPLACES,   /* the regular target swapped for another    */
    RACE_TARGET_REMOVED   /* the regular target unlinked               */
} race;

typedef struct {
    race what;
    const char *path, *other;
} race_ctx;

static pflref_status racing_step(void *ctx, int fd, const char *name,
                                 pflref_error *err)
{
    const race_ctx *r = ctx;
    pflref_write_buffer b = {"{\"w\": [2.385]}\n", 15};
    pflref_status st = pflref_write_buffer_step(&b, fd, name, err);
    switch (r->what) {
    case RACE_FIFO_APPEARS: ck_assert_int_eq(mkfifo(r->path, 0644), 0); break;
    case RACE_FILE_APPEARS: ck_assert_int_eq(tu_write(r->path, "theirs\n"), 0); break;
    case RACE_FIFO_REPLACES:
        ck_assert_int_eq(unlink(r->path), 0);
        ck_assert_int_eq(mkfifo(r->path, 0644), 0);
        break;
    case RACE_FILE_REPLACES:
        ck_assert_int_eq(tu_write(r->other, "theirs\n"), 0);
        ck_assert_int_eq(rename(r->other, r->path), 0);
        break;
    case RACE_TARGET_REMOVED: ck_assert_int_eq(unlink(r->path), 0); break;
    }
    return st;
}

/* An entry that appears at the target, or replaces it, while the content
 * is written is left as it is (same kind, inode, bytes), and nothing of
 * pflref's stays; a target removed meanwhile is written as a new one. */
START_TEST(test_writer_races)
{
    static const struct {
        race what;
        int existing;
        const char *phrase;   /* NULL: written */
    } CASES[] = {
        {RACE_FIFO_APPEARS, 0, "appeared while pflref wrote it"},
        {RACE_FILE_APPEARS, 0, "appeared while pflref wrote it"},
        {RACE_FIFO_REPLACES, 1, "was replaced by an entry that is not a regular file"},
        {RACE_FILE_REPLACES, 1, "was replaced by another file"},
        {RACE_TARGET_REMOVED, 1, NULL},
    };
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        char *dir = tu_tmpdir(), *path = tu_join(dir, "r.json");
        char *other = tu_join(dir, "other.json");
        if (CASES[k].existing)
            ck_assert_int_eq(tu_write(path, "the previous result\n"), 0);
        race_ctx r = {CASES[k].what, path, other};
        pflref_error err;
        pflref_error_clear(&err);
        pflref_status st = pflref_write_file_with(path, racing_step, &r, &err);
        char *back = is_fifo(path) ? NULL : tu_read(path);
        if (CASES[k].phrase == NULL) {
            ck_assert_msg(st == PFLREF_OK, "race %zu: %s", k, err.message);
            ck_assert_str_eq(back, "{\"w\": [2.385]}\n");
        } else {
            ck_assert_msg(st == PFLREF_EIO, "race %zu: status %d", k, (int)st);
            ck_assert_str_eq(err.where, path);
            ck_assert_msg(strstr(err.message, CASES[k].phrase) != NULL,
                          "race %zu: %s", k, err.message);
            /* theirs, untouched: the FIFO a FIFO, the file its bytes */
            ck_assert_msg(back == NULL ? is_fifo(path)
                                       : strcmp(back, "theirs\n") == 0,
                          "race %zu: the entry that appeared was replaced", k);
        }
        ck_assert_msg(tu_entries(dir) == 1, "race %zu: %d entries left", k,
                      tu_entries(dir));
        free(back);
        free(path);
        free(other);
        tu_remove_tree(dir);
        free(dir);
    }
}
END_TEST

static pflref_status quiet_step(void *ctx, int fd, const char *name,
                                pflref_error *err)
{
    (void)ctx;
    (void)fd;
    (void)name;
    (void)err;
    return PFLREF_OK;
}

/* NULL arguments are named; an empty content makes an empty file. */
START_TEST(test_writer_arguments)
{
    pflref_error err;
    ck_assert_int_eq(pflref_write_file_with(NULL, quiet_step, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "path");
    ck_assert_int_eq(pflref_write_file_with("x.json", NULL, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "step");
    ck_assert_int_eq(pflref_write_file_atomic("x.json", NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "text");
    ck_assert_int_eq(pflref_write_file_bytes("x.json", NULL, 3, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "bytes");
    char *dir = tu_tmpdir(), *path = tu_join(dir, "empty.json");
    ck_assert_int_eq(pflref_write_file_with(path, quiet_step, NULL, NULL),
                     PFLREF_OK);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_size, 0);
    free(path);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The words for each kind of entry, devices included, from the mode bits
 * alone (no device is touched). */
START_TEST(test_file_kind)
{
    ck_assert_str_eq(pflref_file_kind(S_IFCHR | 0666), "a character device");
    ck_assert_str_eq(pflref_file_kind(S_IFBLK | 0660), "a block device");
    ck_assert_str_eq(pflref_file_kind(S_IFSOCK | 0755), "a socket");
    ck_assert_str_eq(pflref_file_kind(S_IFIFO | 0644), "a FIFO (named pipe)");
    ck_assert_str_eq(pflref_file_kind(S_IFDIR | 0755), "a folder");
    ck_assert_str_eq(pflref_file_kind(S_IFLNK | 0777), "a symbolic link");
}
END_TEST

/* ---- every command that writes a file ----------------------------------- */

/* A command: what it writes ($O), from inputs made in $I by `setup` (and
 * `report`, whose standard output becomes $I/rep.json); $R the
 * repository.  Its output starts with `head`. */
typedef struct {
    const char *name, *ext, *setup, *report, *args, *head;
} command;

static const command COMMANDS[] = {
    {"run", ".json", NULL, NULL, "run $R/golden/fedavg/worked-samples.json -o $O",
     "{\"format\":\"pflref-result/1\""},
    {"freeze", ".json", NULL, NULL, "freeze $I/spec.json -o $O",
     "{\"format\": \"pflref-golden/1\""},
    {"plot clients", ".svg", "run $R/golden/fedavg/worked-samples.json -o $I/r.json", NULL,
     "plot clients --metric train_loss -o $O $I/r.json", "<?xml"},
    {"plot sweep", ".svg", "run $R/golden/seed000/interp-sweep.json -o $I/sw.json", NULL,
     "plot sweep -o $O $I/sw.json", "<?xml"},
    {"plot curves", ".svg", NULL, NULL,
     "plot curves -o $O fedavg=$R/golden/seed000/fedavg-ft.json", "<?xml"},
    {"plot check", ".svg", "run $R/golden/pfedme/worked-linear-paper-beta.json -o $I/c.json",
     "check --json $R/golden/pfedme/worked-linear-paper-beta.json $I/c.json",
     "plot check -o $O $I/rep.json", "<?xml"},
};
#define N_COMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

/* tmpl with $R, $I, $O replaced (malloc'd). */
static char *expand(const char *tmpl, const char *in, const char *out)
{
    char *root = tu_repo_path("");
    size_t n = strlen(tmpl) + 1, k = 0;
    for (const char *p = tmpl; *p != '\0'; p++)
        n += p[0] == '$' ? strlen(root) + strlen(in) + strlen(out) : 0;
    char *s = malloc(n);
    ck_assert_ptr_nonnull(s);
    for (const char *p = tmpl; *p != '\0'; p++) {
        const char *v = p[0] != '$' ? NULL : p[1] == 'R' ? root
                      : p[1] == 'I' ? in : p[1] == 'O' ? out : NULL;
        if (v == NULL) {
            s[k++] = *p;
            continue;
        }
        size_t vl = strlen(v);
        if (p[1] == 'R' && vl > 0 && v[vl - 1] == '/')
            vl--;   /* tu_repo_path("") ends in '/' */
        memcpy(s + k, v, vl);
        k += vl;
        p++;
    }
    s[k] = '\0';
    free(root);
    return s;
}

typedef struct {
    int status;
    char *out, *err;
} cli_run;

/* Run pflref with args (shell words) in folder cwd, under timeout(1);
 * standard output and error into files of a folder of their own. */
static void run_in(const char *cwd, const char *args, cli_run *r)
{
    const char *cli = getenv("PFLREF_CLI");
    ck_assert_msg(cli != NULL, "PFLREF_CLI is not set (run through make)");
    char *cap = tu_tmpdir(), *outp = tu_join(cap, "out"), *errp = tu_join(cap, "err");
    size_t n = strlen(cwd) + strlen(cli) + strlen(args) + 2 * strlen(cap) + 96;
    char *cmd = malloc(n);
    ck_assert_ptr_nonnull(cmd);
    snprintf(cmd, n, "cd '%s' && timeout -s KILL " HANG_SECONDS " '%s' %s >'%s' 2>'%s'",
             cwd, cli, args, outp, errp);
    int rc = system(cmd);
    ck_assert_msg(rc != -1 && WIFEXITED(rc), "could not run: %s", cmd);
    r->status = WEXITSTATUS(rc);
    ck_assert_msg(r->status != 137, "hung (killed after " HANG_SECONDS
                  " s): %s", cmd);
    r->out = tu_read(outp);
    r->err = tu_read(errp);
    ck_assert_ptr_nonnull(r->out);
    ck_assert_ptr_nonnull(r->err);
    free(cmd);
    free(outp);
    free(errp);
    tu_remove_tree(cap);
    free(cap);
}

static void free_run(cli_run *r)
{
    free(r->out);
    free(r->err);
}

/* The inputs of command c, made in folder in. */
static void make_inputs(const command *c, const char *in)
{
    char *spec = tu_join(in, "spec.json");
    ck_assert_int_eq(tu_write(spec, SPEC), 0);
    free(spec);
    cli_run r;
    if (c->setup != NULL) {
        char *args = expand(c->setup, in, "");
        run_in(in, args, &r);
        ck_assert_msg(r.status == 0, "%s: setup failed: %s", c->name, r.err);
        free(args);
        free(r.out);
        free(r.err);
    }
    if (c->report != NULL) {
        char *args = expand(c->report, in, ""), *rep = tu_join(in, "rep.json");
        run_in(in, args, &r);
        ck_assert_msg(r.status == 0, "%s: report failed: %s", c->name, r.err);
        ck_assert_int_eq(tu_write(rep, r.out), 0);
        free(args);
        free(rep);
        free(r.out);
        free(r.err);
    }
}

/* The kinds of target, made in the folder D as out.EXT (its "-o"). */
typedef enum {
    T_FIFO, T_FOLDER, T_DANGLING, T_LINK, T_READONLY, T_MISSING
} target_kind;

/* What standard error says for each refused kind (T_LINK is written). */
static const char *const REFUSAL[] = {
    [T_FIFO] = "exists and is not a regular file (a FIFO (named pipe))",
    [T_FOLDER] = "exists and is not a regular file (a folder)",
    [T_DANGLING] = "which does not exist (a dangling link)",
    [T_LINK] = NULL,
    [T_READONLY] = "the file is read-only (mode 0444",
    [T_MISSING] = "No such file or directory",
};

/* Make the target of kind k for extension ext in dir; its path, malloc'd. */
static char *make_target(const char *dir, target_kind k, const char *ext)
{
    char name[32], aside[32];
    snprintf(name, sizeof name, k == T_MISSING ? "no/out%s" : "out%s", ext);
    char *path = tu_join(dir, name);
    switch (k) {
    case T_FIFO: ck_assert_int_eq(mkfifo(path, 0644), 0); break;
    case T_FOLDER: ck_assert_int_eq(mkdir(path, 0755), 0); break;
    case T_DANGLING:
        snprintf(aside, sizeof aside, "gone%s", ext);
        ck_assert_int_eq(symlink(aside, path), 0);
        break;
    case T_LINK: {
        snprintf(aside, sizeof aside, "real%s", ext);
        char *real = tu_join(dir, aside);
        ck_assert_int_eq(tu_write(real, "the previous output\n"), 0);
        ck_assert_int_eq(symlink(aside, path), 0);
        free(real);
        break;
    }
    case T_READONLY:
        ck_assert_int_eq(tu_write(path, "the previous output\n"), 0);
        ck_assert_int_eq(chmod(path, 0444), 0);
        break;
    case T_MISSING: break;
    }
    return path;
}

/* Command cmd with -o a target of kind k: refused (exit 2, the path
 * named, nothing on standard output, the folder as it was), or for a link
 * to a regular file, the file replaced by the output and the link kept. */
static void check_target(size_t cmd, target_kind k)
{
    const command *c = &COMMANDS[cmd];
    char *in = tu_tmpdir(), *dir = tu_tmpdir();
    make_inputs(c, in);
    char *target = make_target(dir, k, c->ext);
    char real_name[32];
    snprintf(real_name, sizeof real_name, "real%s", c->ext);
    char *real = tu_join(dir, real_name);
    const ino_t real_ino = k == T_LINK ? inode_of(real) : 0;
    char *before = tu_tree(dir, NULL), *args = expand(c->args, in, target);
    cli_run r;
    run_in(dir, args, &r);
    if (REFUSAL[k] != NULL) {
        ck_assert_msg(r.status == 2, "%s -o %s: exit %d, expected 2\n%s",
                      c->name, target, r.status, r.err);
        ck_assert_msg(strstr(r.err, target) != NULL,
                      "%s: stderr does not name %s:\n%s", c->name, target, r.err);
        ck_assert_msg(strstr(r.err, REFUSAL[k]) != NULL,
                      "%s: stderr does not say \"%s\":\n%s", c->name,
                      REFUSAL[k], r.err);
        ck_assert_msg(r.out[0] == '\0', "%s: stdout: %s", c->name, r.out);
        char *after = tu_tree(dir, NULL);
        ck_assert_msg(strcmp(before, after) == 0, "%s -o %s: the folder "
                      "changed:\nbefore:\n%s\nafter:\n%s", c->name, target,
                      before, after);
        free(after);
    } else {
        ck_assert_msg(r.status == 0, "%s -o %s: exit %d\n%s", c->name, target,
                      r.status, r.err);
        char link_to[64];
        ssize_t n = readlink(target, link_to, sizeof link_to - 1);
        ck_assert_msg(n > 0, "%s: the link was replaced", c->name);
        link_to[n] = '\0';
        ck_assert_str_eq(link_to, real_name);
        char *back = tu_read(real);
        ck_assert_msg(strncmp(back, c->head, strlen(c->head)) == 0,
                      "%s: the file the link names holds: %.80s", c->name, back);
        ck_assert_msg(inode_of(real) != real_ino,
                      "%s: written in place, not replaced", c->name);
        ck_assert_msg(tu_entries(dir) == 2, "%s: a temporary file was left", c->name);
        free(back);
    }
    free(before);
    free(args);
    free(r.out);
    free(r.err);
    free(real);
    free(target);
    tu_remove_tree(dir);
    tu_remove_tree(in);
    free(dir);
    free(in);
}

START_TEST(test_output_fifo) { check_target((size_t)_i, T_FIFO); }
END_TEST
START_TEST(test_output_folder) { check_target((size_t)_i, T_FOLDER); }
END_TEST
START_TEST(test_output_dangling) { check_target((size_t)_i, T_DANGLING); }
END_TEST
START_TEST(test_output_link) { check_target((size_t)_i, T_LINK); }
END_TEST
START_TEST(test_output_readonly) { check_target((size_t)_i, T_READONLY); }
END_TEST
START_TEST(test_output_missing_folder) { check_target((size_t)_i, T_MISSING); }
END_TEST

/* -o - and -o /dev/stdout: the output on standard output, run in an
 * empty folder that stays empty (no file "-", nothing renamed). */
START_TEST(test_output_stdout)
{
    const command *c = &COMMANDS[_i];
    char *in = tu_tmpdir(), *dir = tu_tmpdir();
    make_inputs(c, in);
    const char *const names[] = {"-", "/dev/stdout"};
    for (size_t k = 0; k < 2; k++) {
        char *args = expand(c->args, in, names[k]);
        cli_run r;
        run_in(dir, args, &r);
        ck_assert_msg(r.status == 0, "%s -o %s: exit %d\n%s", c->name,
                      names[k], r.status, r.err);
        ck_assert_msg(strncmp(r.out, c->head, strlen(c->head)) == 0,
                      "%s -o %s: stdout: %.80s", c->name, names[k], r.out);
        ck_assert_msg(tu_entries(dir) == 0, "%s -o %s: a file appeared in the "
                      "current folder", c->name, names[k]);
        free(args);
        free(r.out);
        free(r.err);
    }
    tu_remove_tree(dir);
    tu_remove_tree(in);
    free(dir);
    free(in);
}
END_TEST

/* Standard output holds what the file would: run's line (as without -o,
 * the result and a newline), freeze's vector byte for byte, plot's PNG
 * with --format png; --format's mistakes are usage errors. */
START_TEST(test_output_stdout_bytes)
{
    char *in = tu_tmpdir(), *dir = tu_tmpdir();
    make_inputs(&COMMANDS[1], in);
    cli_run a, b, f;
    char *spec = tu_join(in, "spec.json"), *vec = tu_join(dir, "v.json"), args[1024];
    snprintf(args, sizeof args, "run %s", spec);
    run_in(dir, args, &a);
    snprintf(args, sizeof args, "run %s -o -", spec);
    run_in(dir, args, &b);
    ck_assert_int_eq(a.status, 0);
    ck_assert_str_eq(a.out, b.out);
    snprintf(args, sizeof args, "run %s -o %s", spec, vec);
    run_in(dir, args, &f);
    char *file = tu_read(vec);
    ck_assert_uint_eq(strlen(b.out), strlen(file) + 1);
    ck_assert_int_eq(strncmp(b.out, file, strlen(file)), 0);
    ck_assert_int_eq(b.out[strlen(file)], '\n');
    free(file);
    free_run(&a);
    free_run(&b);
    free_run(&f);
    snprintf(args, sizeof args, "freeze %s -o %s", spec, vec);
    run_in(dir, args, &a);
    snprintf(args, sizeof args, "freeze %s -o -", spec);
    run_in(dir, args, &b);
    file = tu_read(vec);
    ck_assert_int_eq(a.status, 0);
    ck_assert_int_eq(b.status, 0);
    ck_assert_str_eq(b.out, file);
    ck_assert_msg(strstr(b.err, "into standard output") != NULL, "%s", b.err);
    free(file);
    free_run(&a);
    free_run(&b);
    make_inputs(&COMMANDS[2], in);
    snprintf(args, sizeof args, "plot clients --metric train_loss --format png "
             "-o - %s/r.json", in);
    run_in(dir, args, &a);
    ck_assert_msg(a.status == 0 && memcmp(a.out, "\x89PNG", 4) == 0,
                  "exit %d: %s", a.status, a.err);
    free_run(&a);
    snprintf(args, sizeof args, "plot clients --format pdf -o - %s/r.json", in);
    run_in(dir, args, &a);
    ck_assert_int_eq(a.status, 2);
    ck_assert_msg(strstr(a.err, "--format is svg or png: pdf") != NULL, "%s", a.err);
    free_run(&a);
    snprintf(args, sizeof args, "plot clients --format png -o %s/f.svg %s/r.json",
             dir, in);
    run_in(dir, args, &a);
    ck_assert_int_eq(a.status, 2);
    ck_assert_msg(strstr(a.err, "--format disagrees with the figure's name") != NULL,
                  "%s", a.err);
    free_run(&a);
    free(spec);
    free(vec);
    tu_remove_tree(dir);
    tu_remove_tree(in);
    free(dir);
    free(in);
}
END_TEST

/* The target is looked at before the work that makes the output: a spec
 * that would diverge (exit 3) is not run when -o names a FIFO (exit 2),
 * for run and for freeze. */
START_TEST(test_output_refused_before_the_run)
{
    char *dir = tu_tmpdir(), *spec = tu_join(dir, "diverges.json");
    char *fifo = tu_join(dir, "out.json"), args[1024];
    /* f = ½ a (w − c)² with a = c = 1e300: ∇f(0) = a (0 − c) overflows
     * to −Inf, so v is not finite at local step 1 (exit 3) */
    ck_assert_int_eq(tu_write(spec, "{\"format\": \"pflref-spec/1\", \"model\": "
        "{\"kind\": \"quadratic\", \"d\": 1}, \"problem\": {\"clients\": "
        "[{\"a\": [1e300], \"c\": [1e300]}]}, \"algorithm\": {\"name\": \"local\", "
        "\"hyperparameters\": {\"eta\": 1e300}}, \"schedule\": {\"kind\": "
        "\"generate\", \"rounds\": 1, \"local\": {\"steps\": 2}}}"), 0);
    ck_assert_int_eq(mkfifo(fifo, 0644), 0);
    const char *const cmds[] = {"run", "freeze"};
    for (size_t k = 0; k < 2; k++) {
        cli_run r;
        snprintf(args, sizeof args, "%s %s -o %s", cmds[k], spec, fifo);
        run_in(dir, args, &r);
        ck_assert_msg(r.status == 2 && strstr(r.err, "is not finite") == NULL &&
                          strstr(r.err, "(a FIFO (named pipe))") != NULL,
                      "%s: exit %d: %s", cmds[k], r.status, r.err);
        snprintf(args, sizeof args, "%s %s -o -", cmds[k], spec);
        free_run(&r);
        run_in(dir, args, &r);
        ck_assert_msg(r.status == 3, "%s -o -: exit %d, the spec does not "
                      "diverge: %s", cmds[k], r.status, r.err);
        free_run(&r);
    }
    ck_assert_msg(is_fifo(fifo), "the FIFO was replaced");
    free(spec);
    free(fifo);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Every row W1-W8 of docs/bad-inputs.md is a test here. */
START_TEST(test_output_catalogue)
{
    static const tu_catalogue_row CLASSES[] = {
        {"W1", "-o a FIFO", "test_output_fifo"},
        {"W2", "-o a folder", "test_output_folder"},
        {"W3", "-o a dangling symbolic link", "test_output_dangling"},
        {"W4", "-o a symbolic link to a regular file", "test_output_link"},
        {"W5", "-o a read-only file", "test_output_readonly"},
        {"W6", "-o into a missing folder", "test_output_missing_folder"},
        {"W7", "writer: the target changes while it is written", "test_writer_races"},
        {"W8", "writer: a write that fails midway", "test_writer_fails_midway"},
    };
    tu_assert_catalogue(CLASSES, sizeof CLASSES / sizeof CLASSES[0], 'W');
}
END_TEST

Suite *output_suite(void)
{
    Suite *s = suite_create("output");
    TCase *w = tcase_create("writer");
    tcase_add_test(w, test_writer_new_and_replaced);
    tcase_add_test(w, test_writer_long_name);
    tcase_add_test(w, test_writer_refuses);
    tcase_add_test(w, test_writer_link_followed);
    tcase_add_test(w, test_writer_fails_midway);
    tcase_add_test(w, test_writer_races);
    tcase_add_test(w, test_writer_arguments);
    tcase_add_test(w, test_file_kind);
    suite_add_tcase(s, w);
    TCase *tc = tcase_create("commands");
    tcase_set_timeout(tc, 120);
    const int n = (int)N_COMMANDS;
    tcase_add_loop_test(tc, test_output_fifo, 0, n);
    tcase_add_loop_test(tc, test_output_folder, 0, n);
    tcase_add_loop_test(tc, test_output_dangling, 0, n);
    tcase_add_loop_test(tc, test_output_link, 0, n);
    tcase_add_loop_test(tc, test_output_readonly, 0, n);
    tcase_add_loop_test(tc, test_output_missing_folder, 0, n);
    tcase_add_loop_test(tc, test_output_stdout, 0, n);
    tcase_add_test(tc, test_output_stdout_bytes);
    tcase_add_test(tc, test_output_refused_before_the_run);
    tcase_add_test(tc, test_output_catalogue);
    suite_add_tcase(s, tc);
    return s;
}
