/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/vector_flags.c: the flag registry a golden vector's flags are
 * checked against (DESIGN.md, "Golden vectors" 8; golden/README.md,
 * "Flags").
 *
 * Rule: the registry of a vector is the nearest file named flags.json in
 * the vector's folder or in a folder above it whose "format" is
 * pflref-flags/1 (the shipped vectors find golden/flags.json); where there
 * is none (a vector copied into a folder of its own, a caller that gives
 * no folder), the registry compiled into pflref from golden/flags.json
 * (ref/io/flags_builtin.h, kept in step by golden/lint.py).  A user with
 * flags of their own puts a flags.json beside their vectors.
 *
 * Only regular files are read, so a FIFO or a device named flags.json is
 * passed over, never opened.  A flags.json that is not JSON, or a
 * pflref-flags/1 document without a "flags" object, is an error (naming
 * the file); JSON of another format is passed over.
 */
/* realpath() is an X/Open extension in glibc. */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "io/flags_builtin.h"
#include "io/json.h"
#include "io/vector.h"

#define FLAGS_FORMAT "pflref-flags/1"

/* Read dir/flags.json when it is a regular file: *reg gets its "flags"
 * object (a new reference to the document in reg->root), or stays empty
 * when the file is absent or of another format. */
static pflref_status try_registry(const char *dir, pflref_flag_registry *reg,
                                  pflref_error *err)
{
    char path[PFLREF_PATH_MAX];
    int n = snprintf(path, sizeof path, "%s%sflags.json", dir,
                     strcmp(dir, "/") == 0 ? "" : "/");
    struct stat sb;
    if (n < 0 || (size_t)n >= sizeof path || stat(path, &sb) != 0 ||
        !S_ISREG(sb.st_mode))
        return PFLREF_OK;
    char *text;
    size_t len;
    json_t *root;
    pflref_status st = pflref_read_file(path, &text, &len, err);
    if (st != PFLREF_OK)
        return st;
    st = pflref_json_parse(text, len, path, &root, err);
    free(text);
    if (st != PFLREF_OK) {
        if (err != NULL)
            snprintf(err->where, sizeof err->where, "%s", path);
        return st;
    }
    const json_t *fmt = json_object_get(root, "format");
    if (!json_is_string(fmt) ||
        strcmp(json_string_value(fmt), FLAGS_FORMAT) != 0) {
        json_decref(root);
        return PFLREF_OK;
    }
    if (!json_is_object(json_object_get(root, "flags"))) {
        json_decref(root);
        return pflref_error_set(err, PFLREF_EINVAL, path,
                                "a " FLAGS_FORMAT " registry needs a "
                                "\"flags\" object");
    }
    reg->root = root;
    snprintf(reg->path, sizeof reg->path, "%s", path);
    return PFLREF_OK;
}

pflref_status pflref_flag_registry_find(const char *base_dir,
                                        pflref_flag_registry *reg,
                                        pflref_error *err)
{
    memset(reg, 0, sizeof *reg);
    char dir[PATH_MAX];
    if (base_dir == NULL || realpath(base_dir, dir) == NULL)
        return PFLREF_OK;   /* no folder: the built-in registry */
    for (;;) {
        pflref_status st = try_registry(dir, reg, err);
        if (st != PFLREF_OK || reg->root != NULL || strcmp(dir, "/") == 0)
            return st;
        char *slash = strrchr(dir, '/');
        if (slash == dir)
            slash[1] = '\0';   /* the root folder itself */
        else
            *slash = '\0';
    }
}

int pflref_flag_registered(const pflref_flag_registry *reg, const char *flag)
{
    if (reg->root != NULL)
        return json_object_get(json_object_get(reg->root, "flags"), flag) !=
               NULL;
    for (size_t i = 0; PFLREF_FLAGS_BUILTIN[i] != NULL; i++)
        if (strcmp(PFLREF_FLAGS_BUILTIN[i], flag) == 0)
            return 1;
    return 0;
}

const char *pflref_flag_registry_name(const pflref_flag_registry *reg)
{
    return reg->root != NULL
               ? reg->path
               : "pflref's built-in registry (golden/flags.json; no "
                 "flags.json in the vector's folder or above it)";
}

void pflref_flag_registry_free(pflref_flag_registry *reg)
{
    json_decref(reg->root);
    reg->root = NULL;
}
