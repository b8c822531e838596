/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/walk.c: the files `verify` and `check` read: a file named on the
 * command line, or every *.json below a folder (docs/cli.md, "pflref
 * verify").
 *
 * A folder walk visits each real folder and file once, by device and
 * inode: a symbolic link to a folder already walked (`g/self -> .`), to a
 * folder that holds a folder given on the command line (`g/up -> ..`), or
 * a second name of a file already found (a symbolic or hard link) is
 * passed over, so a link loop neither hangs the walk nor counts one vector
 * twice.  A *.json entry that is not a regular file (a FIFO, a device, a
 * socket) is an error named as such, never opened: reading it could block.
 * A *.json name that leads nowhere -- a dangling symbolic link, or a link
 * in a cycle -- is an error named as such, never skipped: skipping could
 * hide a vector (docs/cli.md).
 * Folders are read in sorted order, names starting with '.' skipped, so
 * reports are stable.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"

int cli_list_add(cli_list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->items, cap * sizeof *p);
        if (p == NULL)
            return -1;
        l->items = p;
        l->cap = cap;
    }
    size_t len = strlen(s) + 1;
    l->items[l->n] = malloc(len);
    if (l->items[l->n] == NULL)
        return -1;
    memcpy(l->items[l->n++], s, len);
    return 0;
}

void cli_list_free(cli_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
}

/* ---- sets of file identities ------------------------------------------- */

static int id_seen(const cli_id_set *s, const struct stat *sb)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->ids[i].dev == (unsigned long long)sb->st_dev &&
            s->ids[i].ino == (unsigned long long)sb->st_ino)
            return 1;
    return 0;
}

static int id_add(cli_id_set *s, const struct stat *sb)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        pflref_file_id *p = realloc(s->ids, cap * sizeof *p);
        if (p == NULL)
            return -1;
        s->ids = p;
        s->cap = cap;
    }
    s->ids[s->n].dev = (unsigned long long)sb->st_dev;
    s->ids[s->n++].ino = (unsigned long long)sb->st_ino;
    return 0;
}

/* The folders holding `dir`, up to the root: a link back to one of them
 * would walk the given folder again, or the tree around it. */
static void add_ancestors(cli_walk *w, const char *dir)
{
    size_t n = strlen(dir);
    char *p = malloc(n + 4 * 256 + 1);
    if (p == NULL)
        return;
    memcpy(p, dir, n + 1);
    struct stat prev = {0};
    for (int depth = 0; depth < 256; depth++) {
        strcat(p, "/..");
        struct stat sb;
        if (stat(p, &sb) != 0 ||
            (depth > 0 && sb.st_dev == prev.st_dev && sb.st_ino == prev.st_ino))
            break;   /* the root is its own parent */
        if (!id_seen(&w->ancestors, &sb))
            id_add(&w->ancestors, &sb);
        prev = sb;
    }
    free(p);
}

/* ---- the walk ------------------------------------------------------------ */

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A file found (or named): added once; one that is not a regular file is
 * named and counted, never opened.  Returns the number of problems. */
static size_t walk_file(cli_walk *w, const char *path, const struct stat *sb)
{
    if (!S_ISREG(sb->st_mode)) {
        fprintf(stderr, "pflref: %s: not a regular file (%s); refused "
                        "without reading it\n", path,
                pflref_file_kind((unsigned long)sb->st_mode));
        return 1;
    }
    if (id_seen(&w->files, sb))
        return 0;   /* a second name of a file already found */
    return id_add(&w->files, sb) == 0 && cli_list_add(&w->paths, path) == 0
               ? 0 : 1;
}

/* A *.json name stat() cannot follow: a dangling symbolic link, a link
 * in a cycle (ELOOP), or one that cannot be read; named, counted as one
 * problem (the command exits 2). */
static size_t broken_json(const char *path)
{
    const int e = errno;
    struct stat lb;
    const int link = lstat(path, &lb) == 0 && S_ISLNK(lb.st_mode);
    if (e == ELOOP)
        fprintf(stderr, "pflref: %s: a symbolic link in a cycle (it never "
                        "reaches a file); refused, not skipped\n", path);
    else if (link && e == ENOENT)
        fprintf(stderr, "pflref: %s: a dangling symbolic link (its target "
                        "does not exist); refused, not skipped\n", path);
    else
        fprintf(stderr, "pflref: %s: cannot be read (%s); refused, not "
                        "skipped\n", path, strerror(e));
    return 1;
}

static size_t walk_folder(cli_walk *w, const char *path)
{
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "pflref: %s: cannot read the folder\n", path);
        return 1;
    }
    size_t problems = 0;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(path) + strlen(name) + 2;
        char *child = name[0] != '.' ? malloc(len) : NULL;
        struct stat cb;
        if (child != NULL) {
            snprintf(child, len, "%s/%s", path, name);
            /* links are followed; a *.json one that leads nowhere is an
             * error (skipping it could hide a vector), other names pass */
            if (stat(child, &cb) != 0)
                problems += has_suffix(name, ".json") ? broken_json(child) : 0;
            else if (S_ISDIR(cb.st_mode)) {
                if (!id_seen(&w->folders, &cb) &&
                    !id_seen(&w->ancestors, &cb) && id_add(&w->folders, &cb) == 0)
                    problems += walk_folder(w, child);
            } else if (has_suffix(name, ".json")) {
                problems += walk_file(w, child, &cb);
            }
        } else if (name[0] != '.') {
            problems++;
        }
        free(child);
        free(names[i]);
    }
    free(names);
    return problems;
}

size_t cli_walk_add(cli_walk *w, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        struct stat lb;
        if (errno == ELOOP || (lstat(path, &lb) == 0 && S_ISLNK(lb.st_mode)))
            return broken_json(path);
        fprintf(stderr, "pflref: %s: no such file or folder\n", path);
        return 1;
    }
    if (!S_ISDIR(sb.st_mode))
        return walk_file(w, path, &sb);
    if (id_seen(&w->folders, &sb))
        return 0;   /* given twice, or inside a folder already walked */
    add_ancestors(w, path);
    if (id_add(&w->folders, &sb) != 0)
        return 1;
    return walk_folder(w, path);
}

void cli_walk_free(cli_walk *w)
{
    cli_list_free(&w->paths);
    free(w->folders.ids);
    free(w->files.ids);
    free(w->ancestors.ids);
    memset(w, 0, sizeof *w);
}

int cli_is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* ---- ids ----------------------------------------------------------------- */

const char *cli_ids_add(cli_ids *t, const char *id, const char *path)
{
    for (size_t k = 0; k < t->ids.n; k++)
        if (strcmp(t->ids.items[k], id) == 0)
            return t->paths.items[k];
    /* out of memory: the id stays unrecorded (both lists keep one length) */
    if (cli_list_add(&t->ids, id) == 0 && cli_list_add(&t->paths, path) != 0)
        free(t->ids.items[--t->ids.n]);
    return NULL;
}

void cli_ids_free(cli_ids *t)
{
    cli_list_free(&t->ids);
    cli_list_free(&t->paths);
}
