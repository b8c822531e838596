/* cli/cli.h: what the files of the pflref command line share.
 *
 *   cli/common.c  usage text, exit codes, error printing
 *   cli/check.c   pflref verify and pflref check
 *   cli/pflref.c  main, run, table, list
 */
#ifndef PFLREF_CLI_H
#define PFLREF_CLI_H

#include <stddef.h>
#include "pflref.h"

/* Exit codes (docs/cli.md). */
enum {
    EXIT_OK = 0,
    EXIT_MISMATCH = 1,
    EXIT_USAGE = 2,
    EXIT_DIVERGED = 3,
    EXIT_NOTHING = 4,
    EXIT_INTERNAL = 5
};

extern const char CLI_USAGE[];

/* The exit code of a library status. */
int cli_exit_code(pflref_status st);
/* Print "pflref: CONTEXT: WHERE: MESSAGE" and return the exit code. */
int cli_fail(const pflref_error *err, const char *context);
/* Print a usage error and the usage; return EXIT_USAGE. */
int cli_usage_error(const char *msg, const char *arg);

/* pflref verify PATH... and pflref check EXPECTED CANDIDATE [options]
 * (cli/check.c). */
int cli_verify(int argc, char **argv);
int cli_check(int argc, char **argv);

#endif
