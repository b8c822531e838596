/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_badinput.c: the bad-input catalogue, docs/bad-inputs.md.
 *
 * One check per class of bad input.  The command-line classes are rows of
 * one table (CLI_CASES), run by a loop test, so each row is reported on its
 * own; row i is class i + 1 of the catalogue.  Each row runs the pflref
 * program on files written into a fresh folder D and asserts
 *
 *   - the exact exit status;
 *   - that standard error names the field, path or argument at fault (and
 *     a second phrase saying what is wrong with it);
 *   - that standard output is empty, or for verify and check holds only
 *     the report line the row names;
 *   - that D is byte for byte what it was before the run: no result, no
 *     RESULT.tmp.* left behind, an existing RESULT untouched.
 *
 * The classes about sizes (a spec asking for 10^12 parameters and the
 * like) also run under a 1 GiB address-space limit and must finish within
 * FAST_SECONDS with a small peak resident set: refused up front, never
 * killed by the operating system.  The C API classes call the library
 * directly and assert the status, err.where and that no output was handed
 * back.  test_catalogue_lists_every_class ties this file to the document.
 */
/* wait4 (4.3BSD, in glibc under _DEFAULT_SOURCE) reports the resources of
 * exactly the child it waits for. */
#define _DEFAULT_SOURCE
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "suites.h"
#include "testutil.h"

/* ---- the specs the rows are built from ---------------------------------- */

#define FMT "\"format\": \"pflref-spec/1\""
#define LIN "\"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"}"
#define QUAD1 "\"model\": {\"kind\": \"quadratic\", \"d\": 1}"
#define SOFTMAX3 "\"model\": {\"kind\": \"softmax\", \"d\": 2, \"k\": 3}"
#define TWO "\"problem\": {\"clients\": [{\"X\": [[1, 2], [3, 4]], \"y\": [1, 2]}," \
            " {\"X\": [[0.5, 1]], \"y\": [3]}]}"
#define CLIENTS(c) "\"problem\": {\"clients\": [" c "]}"
#define FEDAVG "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.1}}"
#define HYP(alg, h) "\"algorithm\": {\"name\": \"" alg "\", \"hyperparameters\": {" h "}}"
#define GEN "\"schedule\": {\"kind\": \"generate\", \"rounds\": 2, \"local\": {\"epochs\": 1}}"
#define GIVEN(r) "\"schedule\": {\"kind\": \"given\", \"rounds\": [" r "]}"
#define SPEC(m, p, a, s) "{" FMT ", " m ", " p ", " a ", " s "}"
#define SPECX(x) "{" FMT ", " LIN ", " TWO ", " FEDAVG ", " GEN ", " x "}"
#define GOOD SPEC(LIN, TWO, FEDAVG, GEN)

/* A golden vector of one FedAvg step on f = ½(w − 4)², η = 1/2, from 0:
 * w = 0 − ½·(0 − 4) = 2 (by hand). */
#define MINI_SPEC(model) "{" FMT ", " model ", \"problem\": {\"clients\": [{\"a\": [1.0], \"c\": [4.0]}]}," \
    " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.5}}," \
    " \"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[0]]]}]}}"
#define TOL "{\"atol\": 1e-15, \"rtol\": 1e-14, \"basis\": \"one exact step\"}"
#define VECTOR(extra, spec, tol, exp) "{\"format\": \"pflref-golden/1\", \"id\": \"badinput/mini\", " extra \
    "\"title\": \"one step\", \"provenance\": {\"kind\": \"hand\"}, \"flags\": [\"local-step-count\"]," \
    " \"spec\": " spec ", \"tolerance\": " tol ", \"expected\": " exp "}"
#define MINI VECTOR("", MINI_SPEC(QUAD1), TOL, "{\"final\": {\"w\": [2.0]}}")
/* A digest that no content has. */
#define Z64 "sha256:0000000000000000000000000000000000000000000000000000000000000000"

/* Results for `table`: test_mse of 3 (or 2) clients. */
#define SUMMARY "{\"mean\": 1.5, \"sd\": 0.5, \"worst\": 2.0, \"best\": 1.0, \"p10\": 1.1," \
                " \"p90\": 1.9, \"worst_decile_mean\": 2.0, \"weighted_mean\": 1.5}"
#define RESULT(per) "{\"format\": \"pflref-result/1\", \"metrics\": {\"global\": {\"per_client\":" \
                    " {\"test_mse\": " per "}, \"summary\": {\"test_mse\": " SUMMARY "}}}}"
#define RESULT3 RESULT("[1.0, 2.0, 1.5]")
#define RESULT2 RESULT("[1.0, 2.0]")

#define RUN "run $D/in.json -o $D/out.json"
#define COL " c=$D/in.json:global"
#define COL4 COL COL COL COL

/* ---- one command-line class --------------------------------------------- */

enum {
    F_DEEP = 1,        /* in.json is 3000 nested arrays (the text is unused) */
    F_STDOUT_RDONLY = 2, /* standard output is open for reading only          */
    F_LIMITS = 4,      /* a size class: address-space limit, time, memory     */
    F_BROKEN = 8,      /* the folder aux_name holds x.json, not valid JSON     */
    F_AUX_FIFO = 16    /* aux_name is a FIFO: what is not a regular file, made
                          in D (no test aims pflref at a device of the machine) */
};

typedef struct {
    int no;               /* the class number in docs/bad-inputs.md */
    const char *name;     /* the class, as the document names it     */
    const char *args;     /* arguments, split at spaces; $D the case's folder */
    const char *in;       /* D/in.json, or NULL                      */
    size_t in_len;        /* its length (0: strlen; for a NUL inside) */
    const char *aux_name; /* a second entry of D, or NULL             */
    const char *aux;      /* its text; NULL: aux_name is a folder     */
    int exit;             /* the exit status                          */
    const char *where;    /* stderr names this field, path or argument */
    const char *what;     /* and says this about it (may be NULL)     */
    const char *out;      /* stdout holds this (NULL: stdout empty)   */
    int flags;
} cli_case;

static const cli_case CLI_CASES[] = {
    /* -- the command line -- */
    {1, "no command", "", NULL, 0, NULL, NULL, 2, "no command", "usage:", NULL, 0},
    {2, "unknown command", "frobnicate", NULL, 0, NULL, NULL, 2,
     "unknown command: frobnicate", "usage:", NULL, 0},
    {3, "unknown option", "run $D/in.json --fast", GOOD, 0, NULL, NULL, 2,
     "unknown option: --fast", "usage:", NULL, 0},
    {4, "option without its value", "run $D/in.json -o", GOOD, 0, NULL, NULL, 2,
     "-o needs a file name", NULL, NULL, 0},
    {5, "one operand too many", "run $D/in.json $D/in.json", GOOD, 0, NULL, NULL, 2,
     "run takes one spec", NULL, NULL, 0},
    {6, "option value out of its set", "check $D/v.json $D/in.json --candidate-precision fp16",
     "{}", 0, "v.json", MINI, 2, "--candidate-precision is fp64, fp32, bf16 or tf32: fp16", NULL, NULL, 0},
    {7, "count that is not a count", "check $D/v.json $D/in.json --min-vectors -1", "{}", 0,
     "v.json", MINI, 2, "--min-vectors takes a count: -1", NULL, NULL, 0},
    {8, "table column without RESULT:LABEL", "table nonsense", NULL, 0, NULL, NULL, 2,
     "expected COLUMN=RESULT:LABEL: nonsense", NULL, NULL, 0},
    {9, "more than 16 table columns", "table" COL4 COL4 COL4 COL4 COL, RESULT3, 0, NULL, NULL, 2,
     "too many columns (at most 16)", NULL, NULL, 0},
    {10, "arguments to a command that takes none", "list all", NULL, 0, NULL, NULL, 2,
     "list takes no arguments", NULL, NULL, 0},
    /* -- input and output files -- */
    {11, "input file missing", "run $D/nope.json -o $D/out.json", NULL, 0, NULL, NULL, 2,
     "nope.json", "cannot open", NULL, 0},
    {12, "input is a folder", "run $D/sub -o $D/out.json", NULL, 0, "sub", NULL, 2,
     "sub is not a regular file", NULL, NULL, 0},
    {13, "problem file missing", RUN, SPEC(LIN, "\"problem\": {\"file\": \"p.json\"}", FEDAVG, GEN),
     0, NULL, NULL, 2, "problem.file", "cannot open", NULL, 0},
    {14, "problem file of another format", RUN,
     SPEC(LIN, "\"problem\": {\"file\": \"p.json\"}", FEDAVG, GEN), 0, "p.json",
     "{\"format\": \"pflref-spec/1\", \"clients\": []}", 2, "p.json:format",
     "expected \"pflref-problem/1\"", NULL, 0},
    {15, "bad value inside a problem file", RUN,
     SPEC(LIN, "\"problem\": {\"file\": \"p.json\"}", FEDAVG, GEN), 0, "p.json",
     "{\"format\": \"pflref-problem/1\", \"clients\": [{\"X\": [[1, 2]], \"y\": [\"a\"]}]}", 2,
     "p.json:clients[0].y[0]", "expected a number, found a string", NULL, 0},
    {16, "-o into a missing folder", "run $D/in.json -o $D/no/r.json", GOOD, 0, NULL, NULL, 2,
     "no/r.json", "No such file or directory", NULL, 0},
    {17, "-o below a regular file", "run $D/in.json -o $D/in.json/r.json", GOOD, 0, NULL, NULL, 2,
     "in.json/r.json", "Not a directory", NULL, 0},
    {18, "-o naming what is not a regular file", "run $D/in.json -o $D/dev", GOOD, 0, "dev",
     NULL, 2, "dev exists and is not a regular file", "(a FIFO (named pipe))", NULL, F_AUX_FIFO},
    {19, "standard output not writable", "run $D/in.json", GOOD, 0, NULL, NULL, 2,
     "stdout", "cannot write stdout", NULL, F_STDOUT_RDONLY},
    {20, "failed run with an existing RESULT", RUN,
     SPEC("\"model\": {\"kind\": \"linear\", \"d\": 0, \"loss\": \"squared\"}", TWO, FEDAVG, GEN), 0,
     "out.json", "the previous result\n", 2, "model.d", "out of range", NULL, 0},
    {21, "divergence with an existing RESULT", RUN,
     SPEC(QUAD1, CLIENTS("{\"a\": [1e300], \"c\": [1e300]}"), HYP("local", "\"eta\": 1e300"),
          "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"steps\": 2}}"), 0,
     "out.json", "the previous result\n", 3, "v: v is not finite",
     "round 0, client 0, local step 1", NULL, 0},
    /* -- JSON syntax -- */
    {22, "empty file", RUN, "", 0, NULL, NULL, 2, "not valid JSON: line 1, column 0", NULL, NULL, 0},
    {23, "truncated document", RUN, "{" FMT ", \"model\": {\"kind\": ", 0, NULL, NULL, 2,
     "not valid JSON: line 1, column 46", "unexpected token near end of file", NULL, 0},
    {24, "trailing garbage", RUN, GOOD " x", 0, NULL, NULL, 2, "not valid JSON: line 1",
     "end of file expected near 'x'", NULL, 0},
    {25, "invalid escape", RUN, "{\"format\": \"pflref-spec/1\\q\"}", 0, NULL, NULL, 2,
     "not valid JSON: line 1, column 27", "invalid escape", NULL, 0},
    {26, "invalid UTF-8", RUN, "{" FMT ", \"name\": \"\xff\"}", 0, NULL, NULL, 2,
     "not valid JSON: line 1, column 37", "unable to decode byte 0xff", NULL, 0},
    {27, "byte-order mark", RUN, "\xef\xbb\xbf" GOOD, 0, NULL, NULL, 2,
     "not valid JSON: line 1, column 1", "'[' or '{' expected", NULL, 0},
    {28, "NUL byte", RUN, "{\"format\": \"pflref\0-spec/1\"}",
     sizeof "{\"format\": \"pflref\0-spec/1\"}" - 1, NULL, NULL, 2,
     "not valid JSON: line 1, column 18", "control character 0x0", NULL, 0},
    {29, "NaN or Infinity in data", RUN,
     SPEC(LIN, CLIENTS("{\"X\": [[1, NaN]], \"y\": [Infinity]}"), FEDAVG, GEN), 0, NULL, NULL, 2,
     "not valid JSON: line 1", "invalid token near 'NaN'", NULL, 0},
    {30, "number overflowing a double", RUN,
     SPEC(LIN, TWO, HYP("fedavg", "\"eta\": 1e999"), GEN), 0, NULL, NULL, 2,
     "not valid JSON: line 1", "real number overflow near '1e999'", NULL, 0},
    {31, "integer beyond 64 bits", RUN,
     SPEC(LIN, TWO, FEDAVG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": "
          "123456789012345678901234567890, \"local\": {\"epochs\": 1}}"), 0, NULL, NULL, 2,
     "not valid JSON: line 1", "too big integer", NULL, 0},
    {32, "duplicate key", RUN, "{" FMT ", " LIN ", " LIN "}", 0, NULL, NULL, 2,
     "not valid JSON: line 1", "duplicate object key near '\"model\"'", NULL, 0},
    {33, "nesting too deep", RUN, "", 0, NULL, NULL, 2, "not valid JSON: line 1, column 2049",
     "maximum parsing depth reached", NULL, F_DEEP},
    {34, "document that is not an object", RUN, "[1, 2]", 0, NULL, NULL, 2,
     "expected an object, found an array", NULL, NULL, 0},
    /* -- spec fields -- */
    {35, "wrong format tag", RUN,
     "{\"format\": \"pflref-spec/2\", " LIN ", " TWO ", " FEDAVG ", " GEN "}", 0, NULL, NULL, 2,
     "format: format is \"pflref-spec/2\"", "expected \"pflref-spec/1\"", NULL, 0},
    {36, "unknown field", RUN,
     SPEC("\"model\": {\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\", \"width\": 3}", TWO,
          FEDAVG, GEN), 0, NULL, NULL, 2, "model.width", "unknown field \"width\"", NULL, 0},
    {37, "missing required field", RUN, "{" FMT ", " LIN ", " TWO ", " GEN "}", 0, NULL, NULL, 2,
     "algorithm", "required field \"algorithm\" is missing", NULL, 0},
    {38, "value of the wrong type", RUN,
     SPEC("\"model\": {\"kind\": \"linear\", \"d\": \"2\", \"loss\": \"squared\"}", TWO, FEDAVG, GEN),
     0, NULL, NULL, 2, "model.d", "expected an integer, found a string", NULL, 0},
    {39, "real number where an integer is required", RUN,
     SPEC("\"model\": {\"kind\": \"linear\", \"d\": 2.0, \"loss\": \"squared\"}", TWO, FEDAVG, GEN),
     0, NULL, NULL, 2, "model.d", "expected an integer, found a real number", NULL, 0},
    {40, "unknown model", RUN, SPEC("\"model\": {\"kind\": \"cubic\", \"d\": 2}", TWO, FEDAVG, GEN),
     0, NULL, NULL, 2, "model.kind", "unknown model \"cubic\"", NULL, 0},
    {41, "unknown algorithm", RUN, SPEC(LIN, TWO, HYP("fedunknown", "\"eta\": 0.1"), GEN), 0, NULL,
     NULL, 2, "algorithm.name", "unknown algorithm \"fedunknown\"", NULL, 0},
    {42, "unknown preset", RUN,
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"fedavg\", \"preset\": \"official\","
          " \"hyperparameters\": {\"eta\": 0.1}}", GEN), 0, NULL, NULL, 2, "algorithm.preset",
     "unknown preset \"official\" for fedavg", NULL, 0},
    {43, "unknown hyperparameter", RUN, SPEC(LIN, TWO, HYP("fedavg", "\"lr\": 0.1"), GEN), 0, NULL,
     NULL, 2, "algorithm.hyperparameters.lr", "unknown hyperparameter \"lr\"", NULL, 0},
    {44, "hyperparameter of another algorithm", RUN,
     SPEC(LIN, TWO, HYP("fedavg", "\"eta\": 0.1, \"lambda\": 1"), GEN), 0, NULL, NULL, 2,
     "algorithm.hyperparameters.lambda", "lambda does not apply to fedavg", NULL, 0},
    {45, "unknown switch", RUN,
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.1},"
          " \"switches\": {\"fedavg.weighting\": \"uniform\"}}", GEN), 0, NULL, NULL, 2,
     "algorithm.switches.fedavg.weighting", "unknown switch \"fedavg.weighting\"", NULL, 0},
    {46, "unknown switch value", RUN,
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.1},"
          " \"switches\": {\"fedavg.weights\": \"median\"}}", GEN), 0, NULL, NULL, 2,
     "algorithm.switches.fedavg.weights", "unknown value \"median\"", NULL, 0},
    {47, "zero size", RUN,
     SPEC("\"model\": {\"kind\": \"linear\", \"d\": 0, \"loss\": \"squared\"}", TWO, FEDAVG, GEN), 0,
     NULL, NULL, 2, "model.d", "0 is out of range", NULL, 0},
    {48, "negative size", RUN,
     SPEC(LIN, "\"problem\": {\"generator\": {\"kind\": \"tilt\", \"K\": -1}}", FEDAVG, GEN), 0,
     NULL, NULL, 2, "problem.generator.K", "-1 is out of range", NULL, 0},
    {49, "10^12 parameters", RUN,
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 1000000, \"h\": 1000000, \"k\": 2}", TWO, FEDAVG,
          GEN), 0, NULL, NULL, 2, "model.P", "one parameter vector needs 8000024000016 bytes", NULL, F_LIMITS},
    {50, "generated data beyond the limit", RUN,
     SPEC(LIN, "\"problem\": {\"generator\": {\"kind\": \"tilt\", \"K\": 1000000, \"n_train\": "
          "1000000}}", FEDAVG, GEN), 0, NULL, NULL, 2, "problem.generator.K",
     "exceed this machine's memory", NULL, F_LIMITS},
    {51, "10^9 rounds", RUN,
     SPEC(LIN, TWO, FEDAVG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1000000000,"
          " \"local\": {\"epochs\": 1}}"), 0, NULL, NULL, 2, "schedule.rounds",
     "exceed the limit", NULL, F_LIMITS},
    {52, "10^9 local steps", RUN,
     SPEC(LIN, TWO, FEDAVG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
          " \"local\": {\"steps\": 1000000000}}"), 0, NULL, NULL, 2, "schedule.local.steps",
     "the limit of a schedule", NULL, F_LIMITS},
    {53, "personal models beyond the memory", RUN,
     SPEC("\"model\": {\"kind\": \"softmax\", \"d\": 1, \"k\": 16777216}",
          CLIENTS("{\"X\": [[1]], \"y\": [0]}, {\"X\": [[1]], \"y\": [0]}, {\"X\": [[1]], \"y\": [0]},"
                  " {\"X\": [[1]], \"y\": [0]}, {\"X\": [[1]], \"y\": [0]}"),
          HYP("local", "\"eta\": 0.1"),
          "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"steps\": 1}}"), 0,
     NULL, NULL, 2, "clients: 5 clients × 16777216 parameters",
     "more than the 512.0 MiB of memory available (PFLREF_MEMORY_LIMIT)", NULL, F_LIMITS},
    {54, "initial parameters of the wrong length", RUN,
     SPECX("\"init\": {\"kind\": \"given\", \"w\": [1]}"), 0, NULL, NULL, 2, "init.w",
     "expected 2 numbers, found 1", NULL, 0},
    {55, "invalid spec inside a golden vector", RUN,
     VECTOR("", MINI_SPEC("\"model\": {\"kind\": \"cubic\", \"d\": 1}"), TOL,
            "{\"final\": {\"w\": [2.0]}}"), 0, NULL, NULL, 2, "spec.model.kind",
     "unknown model \"cubic\"", NULL, 0},
    /* -- data -- */
    {56, "wrong type in X", RUN, SPEC(LIN, CLIENTS("{\"X\": [[1, 2], [\"3\", 4]], \"y\": [1, 2]}"),
                                      FEDAVG, GEN), 0, NULL, NULL, 2,
     "problem.clients[0].X[1][0]", "expected a number, found a string", NULL, 0},
    {57, "ragged X", RUN, SPEC(LIN, CLIENTS("{\"X\": [[1, 2], [1, 2, 3]], \"y\": [1, 2]}"), FEDAVG,
                               GEN), 0, NULL, NULL, 2, "problem.clients[0].X[1]",
     "expected 2 numbers, found 3", NULL, 0},
    {58, "y and X of different lengths", RUN,
     SPEC(LIN, CLIENTS("{\"X\": [[1, 2], [3, 4]], \"y\": [1]}"), FEDAVG, GEN), 0, NULL, NULL, 2,
     "problem.clients[0].y", "X has 2 rows but y has 1 entries", NULL, 0},
    {59, "label out of range", RUN,
     SPEC(SOFTMAX3, CLIENTS("{\"X\": [[1, 2], [3, 4]], \"y\": [0, 3]}"), FEDAVG, GEN), 0, NULL,
     NULL, 2, "problem.clients[0].y[1]", "label 3 is not an integer class in [0, 3)", NULL, 0},
    {60, "label that is not a class", RUN,
     SPEC(SOFTMAX3, CLIENTS("{\"X\": [[1, 2]], \"y\": [1.5]}"), FEDAVG, GEN), 0, NULL, NULL, 2,
     "problem.clients[0].y[0]", "label 1.5 is not an integer class", NULL, 0},
    {61, "empty client", RUN, SPEC(LIN, CLIENTS("{\"X\": [[1, 2]], \"y\": [1]}, {\"X\": [], \"y\": []}"),
                                   FEDAVG, GEN), 0, NULL, NULL, 2, "problem.clients[1].X",
     "the array has 0 entries, at least 1 needed", NULL, 0},
    {62, "client without data", RUN, SPEC(LIN, CLIENTS("{\"X\": [[1, 2]], \"y\": [1]}, {}"), FEDAVG,
                                          GEN), 0, NULL, NULL, 2, "problem.clients[1].X",
     "required field \"X\" is missing", NULL, 0},
    {63, "no clients", RUN, SPEC(LIN, CLIENTS(""), FEDAVG, GEN), 0, NULL, NULL, 2,
     "problem.clients", "the array has 0 entries", NULL, 0},
    {64, "curvature not positive", RUN,
     SPEC("\"model\": {\"kind\": \"quadratic\", \"d\": 2}", CLIENTS("{\"a\": [1, 0], \"c\": [1, 2]}"),
          FEDAVG, GEN), 0, NULL, NULL, 2, "problem.clients[0].a[1]",
     "must be finite and > 0", NULL, 0},
    {65, "test data on some clients only", RUN,
     SPEC(LIN, CLIENTS("{\"X\": [[1, 2]], \"y\": [1], \"X_test\": [[1, 2]], \"y_test\": [1]},"
                       " {\"X\": [[1, 2]], \"y\": [1]}"), FEDAVG, GEN), 0, NULL, NULL, 2,
     "problem.clients[1]", "client 1 has no test data but client 0 has", NULL, 0},
    /* -- hyperparameters -- */
    {66, "negative step size", RUN, SPEC(LIN, TWO, HYP("fedavg", "\"eta\": -0.5"), GEN), 0, NULL,
     NULL, 2, "algorithm.hyperparameters.eta", "eta = -0.5 must be > 0", NULL, 0},
    {67, "zero step size", RUN, SPEC(LIN, TWO, HYP("fedavg", "\"eta\": 0"), GEN), 0, NULL, NULL, 2,
     "algorithm.hyperparameters.eta", "eta = 0 must be > 0", NULL, 0},
    {68, "negative lambda", RUN,
     SPEC(LIN, TWO, HYP("pfedme", "\"eta\": 0.1, \"lambda\": -1, \"eta_p\": 0.1, \"K\": 1"), GEN), 0,
     NULL, NULL, 2, "algorithm.hyperparameters.lambda", "lambda = -1 must be >= 0", NULL, 0},
    {69, "hyperparameter given as a string", RUN, SPEC(LIN, TWO, HYP("fedavg", "\"eta\": \"0.1\""), GEN),
     0, NULL, NULL, 2, "algorithm.hyperparameters.eta", "expected a number, found a string", NULL, 0},
    {70, "required hyperparameter missing", RUN,
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"fedavg\"}", GEN), 0, NULL, NULL, 2,
     "algorithm.hyperparameters.eta", "fedavg needs hyperparameter eta", NULL, 0},
    {71, "zero inner steps", RUN,
     SPEC(LIN, TWO, HYP("pfedme", "\"eta\": 0.1, \"lambda\": 1, \"eta_p\": 0.1, \"K\": 0"), GEN), 0,
     NULL, NULL, 2, "algorithm.hyperparameters.K", "K = 0 must be >= 1", NULL, 0},
    {72, "mixing weight outside [0, 1]", RUN,
     SPEC(LIN, TWO, HYP("apfl", "\"eta\": 0.1, \"alpha\": 1.5"), GEN), 0, NULL, NULL, 2,
     "algorithm.hyperparameters.alpha", "must lie in [0, 1]", NULL, 0},
    {73, "more clusters than clients", RUN,
     SPEC(LIN, TWO, HYP("ifca", "\"gamma\": 0.1, \"ifca.k\": 5"), GEN), 0, NULL, NULL, 2,
     "algorithm.hyperparameters.ifca.k", "ifca.k = 5 exceeds the 2 clients", NULL, 0},
    {74, "m > N", RUN,
     SPEC(LIN, TWO, FEDAVG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
          " \"clients_per_round\": 3, \"local\": {\"epochs\": 1}}"), 0, NULL, NULL, 2,
     "schedule.clients_per_round", "3 is out of range [1, 2]", NULL, 0},
    /* -- schedules -- */
    {75, "client id >= N", RUN, SPEC(LIN, TWO, FEDAVG, GIVEN("{\"clients\": [2], \"batches\": [[[0]]]}")),
     0, NULL, NULL, 2, "schedule.rounds[0].clients[0]", "2 is out of range [0, 1]", NULL, 0},
    {76, "duplicate client id in a round", RUN,
     SPEC(LIN, TWO, FEDAVG, GIVEN("{\"clients\": [0, 0], \"batches\": [[[0]], [[0]]]}")), 0, NULL,
     NULL, 2, "schedule.rounds[0].clients[1]", "strictly ascending: 0 follows 0", NULL, 0},
    {77, "sample index out of range", RUN,
     SPEC(LIN, TWO, FEDAVG, GIVEN("{\"clients\": [0, 1], \"batches\": [[[0]], [[5]]]}")), 0, NULL,
     NULL, 2, "schedule.rounds[0].batches[1][0][0]",
     "sample index 5 is out of range for client 1 with n = 1 samples", NULL, 0},
    {78, "negative sample index", RUN,
     SPEC(LIN, TWO, FEDAVG, GIVEN("{\"clients\": [0], \"batches\": [[[-1]]]}")), 0, NULL, NULL, 2,
     "schedule.rounds[0].batches[0][0][0]", "-1 is out of range", NULL, 0},
    {79, "batch lists and participants differ", RUN,
     SPEC(LIN, TWO, FEDAVG, GIVEN("{\"clients\": [0, 1], \"batches\": [[[0]]]}")), 0, NULL, NULL, 2,
     "schedule.rounds[0].batches", "1 batch lists for 2 clients", NULL, 0},
    {80, "empty minibatch", RUN, SPEC(LIN, TWO, FEDAVG, GIVEN("{\"clients\": [0], \"batches\": [[[]]]}")),
     0, NULL, NULL, 2, "schedule.rounds[0].batches[0][0]", "the array has 0 entries", NULL, 0},
    {81, "post-training phase missing", RUN,
     SPEC(LIN, TWO, HYP("finetune", "\"eta\": 0.1, \"eta_ft\": 0.1"), GEN), 0, NULL, NULL, 2,
     "schedule.post", "finetune needs the post-training phase", NULL, 0},
    {82, "post-training phase the algorithm lacks", RUN,
     SPEC(LIN, TWO, FEDAVG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
          " \"local\": {\"epochs\": 1}, \"post\": {\"steps\": 1}}"), 0, NULL, NULL, 2,
     "schedule.post", "fedavg has no post-training phase", NULL, 0},
    {83, "seeds beyond 2^32 - 1", RUN,
     SPEC(LIN, TWO, FEDAVG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 2,"
          " \"clients_per_round\": 1, \"client_seed\": 4294967295, \"local\": {\"epochs\": 1}}"), 0,
     NULL, NULL, 2, "schedule.client_seed", "client_seed + T - 1 > 2^32 - 1", NULL, 0},
    {84, "both epochs and steps", RUN,
     SPEC(LIN, TWO, FEDAVG, "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1,"
          " \"local\": {\"epochs\": 1, \"steps\": 2}}"), 0, NULL, NULL, 2, "schedule.local",
     "give exactly one of \"epochs\" and \"steps\"", NULL, 0},
    /* -- golden vectors, candidates and results -- */
    {85, "verify: path missing", "verify $D/nope", NULL, 0, NULL, NULL, 2, "nope",
     "no such file or folder", "1 malformed or not run", 0},
    {86, "verify: nothing to verify", "verify $D/sub", NULL, 0, "sub", NULL, 4,
     "no golden vector found", NULL, "0 vectors reproduced", 0},
    {87, "verify: unknown format version", "verify $D/in.json",
     "{\"format\": \"pflref-golden/2\", \"id\": \"badinput/mini\"}", 0, NULL, NULL, 2, "in.json",
     "not a golden vector (pflref-golden/1)", "1 malformed or not run", 0},
    {88, "verify: vector not valid JSON", "verify $D/sub", NULL, 0, "sub", NULL, 2,
     "sub/x.json", "not valid JSON: line 1, column 2", "1 malformed or not run", F_BROKEN},
    {89, "verify: content does not match its hash", "verify $D/in.json",
     VECTOR("\"hash\": {\"vector\": \"" Z64 "\", \"spec\": \"" Z64 "\", \"expected\": \"" Z64
            "\", \"tolerance\": \"" Z64 "\", \"flags\": \"" Z64 "\", \"provenance\": \"" Z64 "\"}, ",
            MINI_SPEC(QUAD1), TOL, "{\"final\": {\"w\": [2.0]}}"), 0, NULL, NULL, 2, "spec",
     "the vector's spec changed since it was written", "1 malformed or not run", 0},
    {90, "verify: negative tolerance", "verify $D/in.json",
     VECTOR("", MINI_SPEC(QUAD1), "{\"atol\": -1, \"rtol\": 0, \"basis\": \"b\"}",
            "{\"final\": {\"w\": [2.0]}}"), 0, NULL, NULL, 2, "tolerance",
     "atol and rtol must be >= 0", "1 malformed or not run", 0},
    {91, "verify: vector expects nothing", "verify $D/in.json",
     VECTOR("", MINI_SPEC(QUAD1), TOL, "{}"), 0, NULL, NULL, 2, "expected",
     "the vector expects nothing", "1 malformed or not run", 0},
    {92, "verify: expected value of the wrong length", "verify $D/in.json",
     VECTOR("", MINI_SPEC(QUAD1), TOL, "{\"final\": {\"w\": [2.0, 1.0]}}"), 0, NULL, NULL, 1, NULL,
     NULL, "w (final): the reference's record has 1 numbers, the vector expects 2", 0},
    {93, "check: candidate of another format", "check $D/v.json $D/in.json",
     "{\"format\": \"pflref-result/2\", \"final\": {\"w\": [2.0]}}", 0, "v.json", MINI, 2,
     "candidate:format", "a candidate result has \"format\": \"pflref-result/1\"", "1 malformed", 0},
    {94, "check: candidate value of the wrong type", "check $D/v.json $D/in.json",
     "{\"format\": \"pflref-result/1\", \"final\": {\"w\": true}}", 0, "v.json", MINI, 2,
     "candidate:final.w", "expected an array, found a boolean", "1 malformed", 0},
    {95, "check: candidate value of the wrong length", "check $D/v.json $D/in.json",
     "{\"format\": \"pflref-result/1\", \"final\": {\"w\": [2.0, 1.0]}}", 0, "v.json", MINI, 1,
     NULL, NULL, "w (final): the candidate's record has 2 numbers, the vector expects 1", 0},
    {96, "check: candidate for another vector", "check $D/v.json $D/in.json",
     "{\"format\": \"pflref-result/1\", \"id\": \"other/vector\", \"final\": {\"w\": [2.0]}}", 0,
     "v.json", MINI, 2, "candidate:id", "the candidate is for vector \"other/vector\"",
     "1 malformed", 0},
    {97, "check: unknown outcome class", "check $D/v.json $D/in.json",
     "{\"format\": \"pflref-result/1\", \"outcome\": {\"class\": \"crashed\"}}", 0, "v.json", MINI, 2,
     "candidate:outcome.class", "unknown class \"crashed\" (known: ok, diverged, invalid)",
     "1 malformed", 0},
    {98, "check: candidate not valid JSON", "check $D/v.json $D/in.json",
     "{\"format\": \"pflref-result/1\", \"final\": {\"w\": [NaN]}}", 0, "v.json", MINI, 2, "in.json",
     "not valid JSON: line 1, column 49: invalid token near 'NaN'", "1 malformed", 0},
    {99, "check: EXPECTED not a vector", "check $D/in.json $D/v.json", GOOD, 0, "v.json",
     "{\"format\": \"pflref-result/1\", \"final\": {\"w\": [2.0]}}", 2, "in.json",
     "not a golden vector (pflref-golden/1)", "1 malformed", 0},
    {100, "table: metric the result lacks", "table --metric test_accuracy c=$D/in.json:global",
     RESULT3, 0, NULL, NULL, 2, "metrics.global", "no metric \"test_accuracy\" for \"global\"", NULL,
     0},
    {101, "table: not a result", "table c=$D/in.json:global", GOOD, 0, NULL, NULL, 2, "format",
     "not a pflref-result/1 document", NULL, 0},
    {102, "table: columns with different clients", "table a=$D/in.json:global b=$D/r2.json:global",
     RESULT3, 0, "r2.json", RESULT2, 2, "r2.json", "2 clients, the first column has 3", NULL, 0},
};

#define N_CLI_CASES (sizeof CLI_CASES / sizeof CLI_CASES[0])

/* ---- helpers -------------------------------------------------------------- */

static void write_bytes(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* A copy of tmpl with every $D replaced by dir. */
static char *expand(const char *tmpl, const char *dir)
{
    size_t n = strlen(tmpl) + 1, k = 0;
    for (const char *p = tmpl; *p != '\0'; p++)
        if (p[0] == '$' && p[1] == 'D')
            n += strlen(dir);
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

#define MAX_ARGS 40

/* The address space a size class runs in: 1 GiB, far below what the specs
 * ask for (10^12 parameters are 8 TB) and far above what refusing them
 * needs. */
#define AS_LIMIT ((rlim_t)1 << 30)
/* Refusing a spec is a parse: seconds at most, even on a loaded machine. */
#define FAST_SECONDS 10.0
/* ... and it touches little memory (the CLI alone is a few MiB). */
#define SMALL_RSS_KB (64L * 1024)

typedef struct {
    int signal;        /* the signal that ended it, or 0 */
    int status;        /* the exit status (when signal = 0) */
    char *out, *err;   /* standard output and error (malloc'd) */
    double seconds;
    long maxrss_kb;    /* the child's peak resident set */
    long base_kb;      /* the test's own resident set when it forked: the
                          child starts with it (its pages are shared until
                          exec), so the peak counts it; large under
                          valgrind */
} cli_run;

/* This process's resident set in KiB (/proc/self/statm), or 0. */
static long resident_kb(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Run the CLI with the arguments in args (split at spaces, $D
 * expanded), standard output open for reading only when stdout_rdonly (a
 * write to it fails, as one to a full disk or a closed pipe would), under the
 * address-space limit when limit_as.  The caller judges r->signal. */
static void run_cli(const char *args, const char *dir, int stdout_rdonly,
                    int limit_as, cli_run *r)
{
    const char *cli = getenv("PFLREF_CLI");
    ck_assert_msg(cli != NULL, "PFLREF_CLI is not set (run through make)");
    char *line = expand(args, dir);
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)cli;
    for (char *tok = strtok(line, " "); tok != NULL; tok = strtok(NULL, " ")) {
        ck_assert_int_lt(argc, MAX_ARGS);
        argv[argc++] = tok;
    }
    argv[argc] = NULL;

    char *cap = tu_tmpdir();
    char *outp = tu_join(cap, "out"), *errp = tu_join(cap, "err");
    struct timespec t0, t1;
    r->base_kb = resident_kb();
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork failed");
    if (pid == 0) {
        int fo = open(outp, (stdout_rdonly ? O_RDONLY : O_WRONLY) | O_CREAT |
                                O_TRUNC, 0644);
        int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
            _exit(127);
        struct rlimit rl = {AS_LIMIT, AS_LIMIT};
        if (limit_as && setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(127);
        execv(cli, argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->seconds = (double)(t1.tv_sec - t0.tv_sec) +
                 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    r->maxrss_kb = ru.ru_maxrss;
    r->out = tu_read(outp);
    if (r->out == NULL) {
        r->out = malloc(1);
        ck_assert_ptr_nonnull(r->out);
        r->out[0] = '\0';
    }
    r->err = tu_read(errp);
    ck_assert_ptr_nonnull(r->err);
    unlink(outp);
    unlink(errp);
    rmdir(cap);
    free(outp);
    free(errp);
    free(cap);
    free(line);
}

/* 1 when the CLI starts under AS_LIMIT (a sanitizer build reserves
 * terabytes of shadow memory and cannot; its size classes then run
 * unlimited, still held to FAST_SECONDS and SMALL_RSS_KB). */
static int limit_usable(void)
{
    cli_run r;
    char *dir = tu_tmpdir();
    run_cli("--version", dir, 0, 1, &r);
    int ok = r.signal == 0 && r.status == 0;
    free(r.out);
    free(r.err);
    rmdir(dir);
    free(dir);
    return ok;
}

/* ---- the command-line classes ------------------------------------------- */

/* Run one command-line case and assert everything the catalogue promises
 * (the exit status, the field and the problem on stderr, stdout, nothing
 * written). */
static void check_cli_case(const cli_case *c)
{
    char *dir = tu_tmpdir();
    if (c->flags & F_DEEP) {
        /* 3000 nested arrays; jansson stops at depth 2048 */
        enum { DEPTH = 3000 };
        char *text = malloc(2 * DEPTH);
        ck_assert_ptr_nonnull(text);
        memset(text, '[', DEPTH);
        memset(text + DEPTH, ']', DEPTH);
        char *p = tu_join(dir, "in.json");
        write_bytes(p, text, 2 * DEPTH);
        free(p);
        free(text);
    } else if (c->in != NULL) {
        /* a vector written here gets its content hash (tests/testutil.c) */
        char *p = tu_join(dir, "in.json");
        char *in = c->in_len ? NULL : tu_vector_hashed(c->in, 0);
        write_bytes(p, in ? in : c->in, in ? strlen(in) : c->in_len);
        free(in);
        free(p);
    }
    if (c->aux_name != NULL) {
        char *p = tu_join(dir, c->aux_name);
        if (c->aux != NULL) {
            char *aux = tu_vector_hashed(c->aux, 0);
            write_bytes(p, aux, strlen(aux));
            free(aux);
        } else if (c->flags & F_AUX_FIFO) {
            ck_assert_int_eq(mkfifo(p, 0644), 0);
        } else {
            ck_assert_int_eq(mkdir(p, 0755), 0);
            if (c->flags & F_BROKEN) {
                char *x = tu_join(p, "x.json");
                write_bytes(x, "[[", 2);
                free(x);
            }
        }
        free(p);
    }
    size_t before_len, after_len;
    char *before = tu_tree(dir, &before_len);

    const int limited = (c->flags & F_LIMITS) && limit_usable();
    cli_run r;
    /* a size class meets the same memory on every machine: 512 MiB
     * (pflref_memory_available; the address-space limit caps it too) */
    if (c->flags & F_LIMITS)
        ck_assert_int_eq(setenv("PFLREF_MEMORY_LIMIT", "536870912", 1), 0);
    run_cli(c->args, dir, (c->flags & F_STDOUT_RDONLY) != 0, limited, &r);
    unsetenv("PFLREF_MEMORY_LIMIT");

    ck_assert_msg(r.signal == 0, "class %d (%s): killed by signal %d\n%s",
                  c->no, c->name, r.signal, r.err);
    ck_assert_msg(r.status == c->exit,
                  "class %d (%s): exit %d, expected %d\nstderr: %s", c->no,
                  c->name, r.status, c->exit, r.err);
    if (c->where != NULL)
        ck_assert_msg(strstr(r.err, c->where) != NULL,
                      "class %d (%s): stderr does not name \"%s\":\n%s",
                      c->no, c->name, c->where, r.err);
    if (c->what != NULL)
        ck_assert_msg(strstr(r.err, c->what) != NULL,
                      "class %d (%s): stderr does not say \"%s\":\n%s", c->no,
                      c->name, c->what, r.err);
    if (c->where == NULL)   /* a mismatch: the report, no error line */
        ck_assert_msg(strstr(r.err, "pflref:") == NULL,
                      "class %d (%s): unexpected error: %s", c->no, c->name,
                      r.err);
    if (c->out == NULL)
        ck_assert_msg(r.out[0] == '\0',
                      "class %d (%s): something was written to stdout: %s",
                      c->no, c->name, r.out);
    else
        ck_assert_msg(strstr(r.out, c->out) != NULL,
                      "class %d (%s): stdout lacks \"%s\":\n%s", c->no,
                      c->name, c->out, r.out);
    if (c->flags & F_LIMITS) {
        ck_assert_msg(r.seconds < FAST_SECONDS,
                      "class %d (%s): took %.1f s to refuse", c->no, c->name,
                      r.seconds);
        ck_assert_msg(r.maxrss_kb < r.base_kb + SMALL_RSS_KB,
                      "class %d (%s): peak resident set %ld KiB (%ld KiB "
                      "when forked)", c->no, c->name, r.maxrss_kb,
                      r.base_kb);
    }

    /* Nothing written, nothing left behind, nothing replaced. */
    char *after = tu_tree(dir, &after_len);
    ck_assert_msg(after_len == before_len &&
                      memcmp(before, after, before_len) == 0,
                  "class %d (%s): the folder changed:\nbefore:\n%.*s\n"
                  "after:\n%.*s", c->no, c->name, (int)before_len, before,
                  (int)after_len, after);
    free(before);
    free(after);
    free(r.out);
    free(r.err);
    tu_remove_tree(dir);
    free(dir);
}

START_TEST(test_cli_class)
{
    const cli_case *c = &CLI_CASES[_i];
    /* row i is class i + 1: the table and the document stay in step */
    ck_assert_msg(c->no == _i + 1, "row %d holds class %d", _i, c->no);
    check_cli_case(c);
}
END_TEST

/* ---- layer lists, client optimizers, low-rank adapters -------------------
 *
 * The rows L1.., S1.. and A1.. of docs/bad-inputs.md ("Layer lists",
 * "Client optimizers", "Low-rank adapters"): `pflref run SPEC -o OUT`
 * exits 2, names the field and the problem, writes nothing.  Each spec is
 * valid but for the one defect. */

/* A layer list on the input `in` with the layers `ls` and the loss. */
#define LAYERS(in, loss, ls) "\"model\": {\"kind\": \"layers\", \"input\": " in \
    ", \"loss\": \"" loss "\", \"layers\": [" ls "]}"
#define DENSE1 "{\"type\": \"dense\", \"out\": 1}"
/* One client of two samples with 16 features (a 1 × 4 × 4 image). */
#define ROW16 "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]"
#define IMG2 CLIENTS("{\"X\": [" ROW16 ", " ROW16 "], \"y\": [1, 0]}")
#define ONE_ROUND GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]]}")
#define ONE_ROUND_TWO GIVEN("{\"clients\": [0, 1], \"batches\": [[[0]], [[0]]]}")
/* One Per-FedAvg round of one local step (D, D′, D″) per client, and one
 * personalisation batch each. */
#define PERFEDAVG_ROUND                                                      \
    "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0, 1], "      \
    "\"batches\": [[[0], [1], [0]], [[0], [0], [0]]]}], \"post\": [[[1]], [[0]]]}"
/* fedavg with the given extra hyperparameters and switches. */
#define FEDAVG_OPT(h, sw) "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {" \
    "\"eta\": 0.1" h "}, \"switches\": {" sw "}}"
#define LIN_SPEC(alg) SPEC(LIN, TWO, alg, ONE_ROUND_TWO)
/* A CNN on 1 × 4 × 4: conv (2 × 9), relu, flatten, dense fc (1 × 8). */
#define CNN LAYERS("[1, 4, 4]", "squared", "{\"type\": \"conv2d\", \"name\": \"conv\", " \
    "\"out_channels\": 2, \"kernel\": 3}, {\"type\": \"relu\"}, {\"type\": \"flatten\"}, " \
    "{\"type\": \"dense\", \"name\": \"fc\", \"out\": 1}")
#define CNN_W "[" "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, " \
    "0, 0, 0, 0, 0, 0, 0, 0, 0" "]"
/* lora on the CNN with init.lora given as q (and more init keys). */
#define LORA_CNN(init, hyp) SPEC(CNN, IMG2, "\"init\": {\"kind\": \"given\", \"w\": " CNN_W \
    ", " init "}, \"algorithm\": {\"name\": \"lora\", \"hyperparameters\": {\"eta\": 0.1, " \
    hyp "}}", ONE_ROUND)
#define Q11 "\"lora\": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"
/* MOON: an mlp 2-2-2 on one client of two labelled samples. */
#define MOON_MLP "\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 2}"
#define MOON_DATA CLIENTS("{\"X\": [[1, 2], [3, 4]], \"y\": [1, 0]}")
#define MOON_HYP(h) "\"algorithm\": {\"name\": \"moon\", \"hyperparameters\": {\"eta\": 0.1, " h "}}"

/* fedprox with "fedprox.mu" given as mu (PROX_MU) or left out (""). */
#define PROX_MU(mu) ", \"fedprox.mu\": " mu
#define PROX_ALG(mu) HYP("fedprox", "\"eta\": 0.1" mu)
/* A round of both clients, one step each, with the given draws. */
#define PROX_ROUND(d) "{\"clients\": [0, 1], \"batches\": [[[0]], [[0]]], \"draws\": " d "}"

/* FedRecon (rows Q1..): ŷ = g·x + l (split: l = b), two clients, the
 * support sets `sup`, η_s = `etas`, fedrecon.eval = kept plus the switches
 * `sw`, one round with the reconstruction lists `pers` and the update
 * lists `upd`; FR_SPEC_EVAL: fedrecon.eval = `ev`, schedule extra `post`. */
#define FR_HEAD "\"model\": {\"kind\": \"linear\", \"d\": 1, \"loss\": \"half_squared\", " \
    "\"bias\": true}, \"split\": {\"personal\": [\"b\"]}"
#define FR_TWO CLIENTS("{\"X\": [[1], [2]], \"y\": [2, 3]}, {\"X\": [[2], [1], [1]], " \
    "\"y\": [1, 0, 4]}")
#define FR_ALG(etas, eval, sw) "\"algorithm\": {\"name\": \"fedrecon\", \"hyperparameters\": " \
    "{\"fedrecon.eta_r\": 0.5, \"fedrecon.eta_u\": 0.25, \"fedrecon.eta_s\": " etas "}, " \
    "\"switches\": {\"fedrecon.eval\": \"" eval "\"" sw "}}"
#define FR_SPEC(sup, etas, sw, pers, upd) "{" FMT ", " FR_HEAD ", " FR_TWO ", \"init\": " \
    "{\"kind\": \"zeros\"" sup "}, " FR_ALG(etas, "kept", sw) ", " \
    GIVEN("{\"clients\": [0, 1], " pers "\"batches\": " upd "}") "}"
#define FR_SPEC_EVAL(sup, ev, post) "{" FMT ", " FR_HEAD ", " FR_TWO ", \"init\": " \
    "{\"kind\": \"zeros\"" sup "}, " FR_ALG("0.5", ev, "") ", \"schedule\": {\"kind\": " \
    "\"given\", \"rounds\": [{\"clients\": [0, 1], " FR_PERS "\"batches\": " FR_UPD "}]" \
    post "}}"
#define FR_SUP ", \"support\": [[0], [0]]"
#define FR_PERS "\"personal\": [[[0]], [[0]]], "
#define FR_UPD "[[[1]], [[1, 2]]]"
/* FedProto on MOON's mlp 2-2-2 and data, with hyperparameters h (λ and the
 * switches); PROTO_SW adds switches. */
#define PROTO_HYP(h) "\"algorithm\": {\"name\": \"fedproto\", \"hyperparameters\": " \
    "{\"eta\": 0.1" h "}}"
#define PROTO_SW(h, sw) "\"algorithm\": {\"name\": \"fedproto\", \"hyperparameters\": " \
    "{\"eta\": 0.1" h "}, \"switches\": {" sw "}}"

/* FedAMP (rows M1..): fedamp with η = 0.1 and the hyperparameters h
 * (AMP_H: α_k, λ, σ as given) plus the switches sw. */
#define AMP_H(a, l, s) "\"fedamp.alpha_k\": " a ", \"fedamp.lambda\": " l s
#define AMP_ALG(h, sw) "\"algorithm\": {\"name\": \"fedamp\", \"hyperparameters\": " \
    "{\"eta\": 0.1, " h "}, \"switches\": {" sw "}}"
#define AMP_S(s) ", \"fedamp.sigma\": " s

/* FedALA (rows H1..): fedala with α = 0.1, η = 0.5 and the hyperparameters
 * h, on LIN and TWO, two rounds, round 1's sample given by the clause ps
 * (ALA_PS: D_0^s = {0}, one of client 0's two samples at s = 50). */
#define ALA_ALG(h) "\"algorithm\": {\"name\": \"fedala\", \"hyperparameters\": " \
    "{\"eta\": 0.1, \"fedala.eta\": 0.5, " h "}}"
#define ALA_ROUNDS(ps) GIVEN("{\"clients\": [0, 1], \"batches\": [[[0]], [[0]]]}, " \
    "{\"clients\": [0], " ps "\"batches\": [[[1]]]}")
#define ALA_PS "\"personal\": [[[0]]], "
#define ALA_SPEC(h, ps) SPEC(LIN, TWO, ALA_ALG(h), ALA_ROUNDS(ps))

/* Per-FedAvg and PFLEGO with batch normalisation (rows I11..): an mlp
 * with bn (d = 2, h = 2, one output), two clients of two samples, and one
 * full-batch round of client 0. */
#define BN_MLP "\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 1, " \
    "\"loss\": \"squared\", \"bn\": true}"
#define BN_TWO CLIENTS("{\"X\": [[1, 2], [3, 4]], \"y\": [1, 2]}, " \
    "{\"X\": [[1, 0], [0, 1]], \"y\": [0, 1]}")
#define BN_FULL_ROUND GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]]}")

typedef struct {
    const char *no;       /* "L1", "S3", "A2"                        */
    const char *name;     /* the class, as the document names it     */
    const char *in;       /* the spec                                */
    const char *where;    /* stderr names this field                 */
    const char *what;     /* and says this about it                  */
} lettered_case;

static const lettered_case LETTERED[] = {
    /* -- layer lists -- */
    {"L1", "layer list: shapes that do not chain",
     SPEC(LAYERS("[1, 4, 4]", "squared", DENSE1), IMG2, FEDAVG, ONE_ROUND),
     "model.layers[0]", "dense needs a vector input, got the image [1, 4, 4]"},
    {"L2", "layer list: an image layer on a vector",
     SPEC(LAYERS("[16]", "squared", "{\"type\": \"maxpool2d\", \"kernel\": 2}, " DENSE1), IMG2,
          FEDAVG, ONE_ROUND),
     "model.layers[0]", "maxpool2d needs an image input [C, H, W], got the vector [16]"},
    {"L3", "layer list: kernel larger than its padded input",
     SPEC(LAYERS("[1, 4, 4]", "squared", "{\"type\": \"conv2d\", \"out_channels\": 1, "
                 "\"kernel\": 7, \"padding\": 1}, {\"type\": \"flatten\"}, " DENSE1),
          IMG2, FEDAVG, ONE_ROUND),
     "model.layers[0].kernel", "kernel 7 × 7 is larger than the padded input [1, 4, 4] (6 × 6)"},
    {"L4", "layer list: pooling window that does not tile",
     SPEC(LAYERS("[1, 4, 4]", "squared", "{\"type\": \"avgpool2d\", \"kernel\": 3}, "
                 "{\"type\": \"flatten\"}, " DENSE1), IMG2, FEDAVG, ONE_ROUND),
     "model.layers[0].kernel", "the 3 × 3 window with stride 3 does not tile the input"},
    {"L5", "layer list: batchnorm1d of the wrong width after flatten",
     SPEC(LAYERS("[1, 4, 4]", "squared", "{\"type\": \"flatten\"}, {\"type\": \"batchnorm1d\", "
                 "\"num_features\": 4}, " DENSE1), IMG2, FEDAVG, ONE_ROUND),
     "model.layers[1].num_features", "num_features = 4 does not match the input [16] (16 features)"},
    {"L6", "layer list: dropout without its masks",
     SPEC(LAYERS("[16]", "squared", "{\"type\": \"dropout\"}, " DENSE1), IMG2, FEDAVG, ONE_ROUND),
     "schedule.rounds[0].dropout",
     "round 0, client 0, training pass 1 (of 2 samples): no dropout mask given for layer \"0\""},
    {"L7", "layer list: unknown layer type",
     SPEC(LAYERS("[16]", "squared", "{\"type\": \"lstm\"}, " DENSE1), IMG2, FEDAVG, ONE_ROUND),
     "model.layers[0].type", "unknown layer type \"lstm\""},
    {"L8", "layer list: unknown key of a layer",
     SPEC(LAYERS("[16]", "squared", "{\"type\": \"dense\", \"out\": 1, \"units\": 3}"), IMG2,
          FEDAVG, ONE_ROUND),
     "model.layers[0].units", "unknown field \"units\" (known: type, name, out, bias)"},
    {"L9", "layer list: a layer named like a split group",
     SPEC(LAYERS("[16]", "squared", "{\"type\": \"dense\", \"name\": \"head\", \"out\": 1}"),
          IMG2, FEDAVG, ONE_ROUND),
     "model.layers[0].name", "\"head\" names a group of the split (input, head, bn)"},
    {"L10", "layer list: duplicate layer names",
     SPEC(LAYERS("[16]", "squared", "{\"type\": \"dense\", \"name\": \"fc\", \"out\": 2}, "
                 "{\"type\": \"dense\", \"name\": \"fc\", \"out\": 1}"), IMG2, FEDAVG, ONE_ROUND),
     "model.layers[1].name", "the name \"fc\" is taken by layers[0]"},
    {"L11", "layer list: last layer that does not fit the loss",
     SPEC(LAYERS("[16]", "squared", "{\"type\": \"dense\", \"out\": 2}"), IMG2, FEDAVG, ONE_ROUND),
     "model.layers[0]", "the squared loss needs one output, the last layer gives [2]"},
    {"L12", "layer list: both layers and preset",
     SPEC("\"model\": {\"kind\": \"layers\", \"input\": [16], \"loss\": \"squared\", "
          "\"preset\": \"mlp\", \"layers\": [" DENSE1 "]}", IMG2, FEDAVG, ONE_ROUND),
     "model.layers", "a layer list gives either \"layers\" or \"preset\" (both given)"},
    /* -- schedule.rounds[t].first_upload (ref/io/spec_schedule.c): the
     * client whose running statistics the new global takes under
     * bn.aggregate = parameters_only (PFLlib's uploaded_models[0]) -- */
#define FU_BN LAYERS("[16]", "squared", "{\"type\": \"dense\", \"out\": 2, " \
    "\"bias\": false}, {\"type\": \"batchnorm1d\"}, " DENSE1)
#define FU_TWO CLIENTS("{\"X\": [" ROW16 ", " ROW16 "], \"y\": [1, 0]}, " \
    "{\"X\": [" ROW16 ", " ROW16 "], \"y\": [0, 2]}")
#define FU_FEDAVG(sw) "\"algorithm\": {\"name\": \"fedavg\", " \
    "\"hyperparameters\": {\"eta\": 0.1}, \"switches\": {" sw "}}"
#define FU_KEEP FU_FEDAVG("\"bn.aggregate\": \"parameters_only\"")
    {"L13", "first_upload: not an uploader of the round",
     SPEC(FU_BN, FU_TWO, FU_KEEP,
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]], \"first_upload\": 1}")),
     "schedule.rounds[0].first_upload",
     "client 1 does not upload in this round (its uploaders are the round's clients)"},
    {"L14", "first_upload: without bn.aggregate = parameters_only",
     SPEC(FU_BN, FU_TWO, FU_FEDAVG("\"bn.aggregate\": \"average\""),
          GIVEN("{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1]]], "
                "\"first_upload\": 1}")),
     "schedule.rounds[0].first_upload",
     "which only bn.aggregate = parameters_only on a model with batch "
     "normalisation reads (bn.aggregate is average): drop it"},
    {"L15", "first_upload: a model without batch normalisation",
     SPEC(LIN, TWO, FEDAVG,
          GIVEN("{\"clients\": [0, 1], \"batches\": [[[0]], [[0]]], "
                "\"first_upload\": 1}")),
     "schedule.rounds[0].first_upload",
     "reads (this model has none): drop it"},
#undef FU_KEEP
#undef FU_FEDAVG
#undef FU_TWO
#undef FU_BN
    /* -- client optimizers (ref/engine/optim.c, pflref_optim_check) -- */
    {"S1", "optimizer: beta1 not below 1",
     LIN_SPEC(FEDAVG_OPT(", \"opt.beta1\": 1", "\"opt.method\": \"adam\"")),
     "algorithm.hyperparameters.opt.beta1", "opt.beta1 = 1 must be < 1"},
    {"S2", "optimizer: beta2 not below 1",
     LIN_SPEC(FEDAVG_OPT(", \"opt.beta2\": 1.5", "\"opt.method\": \"adam\"")),
     "algorithm.hyperparameters.opt.beta2", "opt.beta2 = 1.5 must be < 1"},
    {"S3", "optimizer: clipping without its bound",
     LIN_SPEC(FEDAVG_OPT("", "\"opt.clip\": \"norm\"")),
     "algorithm.switches.opt.clip", "opt.clip = norm needs opt.clip_norm"},
    {"S4", "optimizer: a clipping bound without clipping",
     LIN_SPEC(FEDAVG_OPT(", \"opt.clip_norm\": 1", "")),
     "algorithm.hyperparameters.opt.clip_norm", "opt.clip_norm is read only with opt.clip = norm"},
    {"S5", "optimizer: SGD's momentum settings with Adam",
     LIN_SPEC(FEDAVG_OPT(", \"opt.momentum\": 0.9", "\"opt.method\": \"adamw\"")),
     "algorithm.hyperparameters.opt.momentum", "opt.momentum is SGD's (opt.method = sgd)"},
    {"S6", "optimizer: Nesterov without momentum",
     LIN_SPEC(FEDAVG_OPT("", "\"opt.nesterov\": \"on\"")),
     "algorithm.switches.opt.nesterov", "opt.nesterov = on requires a momentum and zero dampening"},
    {"S7", "optimizer: Nesterov with the classical form",
     LIN_SPEC(FEDAVG_OPT(", \"opt.momentum\": 0.5",
                         "\"opt.nesterov\": \"on\", \"opt.momentum_form\": \"classical\"")),
     "algorithm.switches.opt.nesterov", "it takes opt.momentum_form = pytorch"},
    {"S8", "optimizer: dampening with the classical form",
     LIN_SPEC(FEDAVG_OPT(", \"opt.momentum\": 0.5, \"opt.dampening\": 0.25",
                         "\"opt.momentum_form\": \"classical\"")),
     "algorithm.hyperparameters.opt.dampening", "the classical form v ← μ v − η d has none"},
    {"S9", "optimizer: a negative momentum or weight decay",
     LIN_SPEC(FEDAVG_OPT(", \"opt.weight_decay\": -0.5", "")),
     "algorithm.hyperparameters.opt.weight_decay", "must be >= 0"},
    {"S10", "prox: batch of one under the unbiased r_v",
     SPEC(LAYERS("[16]", "cross_entropy", "{\"type\": \"dense\", \"out\": 2}, "
                 "{\"type\": \"batchnorm1d\"}"), IMG2,
          "\"algorithm\": {\"name\": \"prox\", \"hyperparameters\": {\"lambda\": 1, "
          "\"eta_p\": 0.1, \"K\": 2}}", GIVEN("{\"clients\": [0], \"batches\": [[[1]]]}")),
     "schedule", "running statistics at round 0, client 0, step 1: layer 1 normalises over one entry"},
    {"S11", "optimizer: pfedme's clipping without its norm",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"pfedme\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"lambda\": 1, \"eta_p\": 0.1, \"K\": 2}, \"switches\": {\"opt.clip\": \"norm\"}}",
          ONE_ROUND_TWO),
     "algorithm.switches.opt.clip", "opt.clip = norm needs opt.clip_norm"},
    {"S12", "optimizer: perfedavg's momentum with Adam",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"perfedavg\", \"hyperparameters\": {\"alpha\": "
          "0.1, \"beta\": 0.1, \"opt.momentum\": 0.9}, \"switches\": {\"opt.method\": "
          "\"adam\"}}", PERFEDAVG_ROUND),
     "algorithm.hyperparameters.opt.momentum",
     "opt.momentum is SGD's (opt.method = sgd); adam's moments are opt.beta1, opt.beta2"},
    {"S13", "optimizer: pflego's Nesterov without momentum",
     SPEC(SOFTMAX3, CLIENTS("{\"X\": [[1, 2]], \"y\": [1]}, {\"X\": [[0.5, 1]], \"y\": [2]}"),
          "\"algorithm\": {\"name\": \"pflego\", \"hyperparameters\": {\"pflego.beta\": "
          "0.1, \"rho\": 0.1}, \"switches\": {\"opt.nesterov\": \"on\"}}", ONE_ROUND_TWO),
     "algorithm.switches.opt.nesterov",
     "opt.nesterov = on requires a momentum and zero dampening"},
    {"S14", "batch norm: pfedme's batch of one under the unbiased r_v",
     SPEC(LAYERS("[16]", "cross_entropy", "{\"type\": \"dense\", \"out\": 2}, "
                 "{\"type\": \"batchnorm1d\"}"), IMG2,
          "\"algorithm\": {\"name\": \"pfedme\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"lambda\": 1, \"eta_p\": 0.1, \"K\": 2}}", GIVEN("{\"clients\": [0], \"batches\": [[[0]]]}")),
     "schedule", "running statistics at round 0, client 0, step 1: layer 1 normalises over one entry"},
    /* -- pFedMe's and prox's inner solver with the client optimizer -- */
    {"I1", "pfedme: weight decay scoped by a split",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"pfedme\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"lambda\": 1, \"eta_p\": 0.1, \"K\": 2, \"opt.weight_decay\": 0.25}, \"switches\": "
          "{\"opt.decay_scope\": \"personal\"}}", ONE_ROUND_TWO),
     "algorithm.switches.opt.decay_scope",
     "pfedme's inner solver steps θ, the whole model, which has no split"},
    {"I2", "prox: weight decay scoped by a split",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"prox\", \"hyperparameters\": {\"lambda\": 1, "
          "\"eta_p\": 0.1, \"K\": 2, \"opt.weight_decay\": 0.25}, \"switches\": "
          "{\"opt.decay_scope\": \"shared\"}}", ONE_ROUND_TWO),
     "algorithm.switches.opt.decay_scope",
     "prox's inner solver steps θ, the whole model, which has no split"},
    {"S15", "optimizer: lora's decay scoped by a split",
     LORA_CNN(Q11 ", \"lora_targets\": [\"conv\"]",
              "\"lora.r\": 1, \"lora.alpha\": 1, \"opt.weight_decay\": 0.1}, \"switches\": "
              "{\"opt.decay_scope\": \"personal\""),
     "algorithm.switches.opt.decay_scope", "lora's optimizer moves the adapter, which has no split"},
    /* -- low-rank adapters (ref/models/adapter.c) -- */
    {"A1", "lora: target name unknown",
     LORA_CNN(Q11 ", \"lora_targets\": [\"fc2\"]", "\"lora.r\": 1, \"lora.alpha\": 1"),
     "init.lora_targets[0]", "\"fc2\" is neither a block nor a layer of the model"},
    {"A2", "lora: target that is not a weight matrix",
     LORA_CNN(Q11 ", \"lora_targets\": [\"conv.bias\"]", "\"lora.r\": 1, \"lora.alpha\": 1"),
     "init.lora_targets[0]", "block conv.bias is not a weight matrix"},
    {"A3", "lora: target layer without a weight",
     LORA_CNN(Q11 ", \"lora_targets\": [\"1\"]", "\"lora.r\": 1, \"lora.alpha\": 1"),
     "init.lora_targets[0]", "layer \"1\" (layers[1], relu) has no weight to adapt"},
    {"A4", "lora: target named twice",
     LORA_CNN(Q11 ", \"lora_targets\": [\"conv\", \"conv.weight\"]",
              "\"lora.r\": 1, \"lora.alpha\": 1"),
     "init.lora_targets[1]", "already named by init.lora_targets[0]"},
    {"A5", "lora: targets named and chosen by lora.targets",
     LORA_CNN(Q11 ", \"lora_targets\": [\"conv\"]",
              "\"lora.r\": 1, \"lora.alpha\": 1}, \"switches\": {\"lora.targets\": \"head\""),
     "init.lora_targets", "not both"},
    {"A6", "lora: rank above a conv target's min(k, d)",
     LORA_CNN(Q11 ", \"lora_targets\": [\"conv\"]", "\"lora.r\": 3, \"lora.alpha\": 1"),
     "lora.r", "rank r = 3 exceeds min(k, d) = 2 of block conv.weight (2 × 9)"},
    {"A7", "lora: adapter of the wrong length for the named targets",
     LORA_CNN("\"lora\": [0, 0, 0], \"lora_targets\": [\"fc\"]", "\"lora.r\": 1, \"lora.alpha\": 1"),
     "init.lora", "expected 9 numbers (rank 1 on 1 target blocks), found 3"},
    {"A8", "lora: head of a layer list without a weight",
     SPEC(LAYERS("[16]", "cross_entropy", "{\"type\": \"dense\", \"out\": 2}, "
                 "{\"type\": \"batchnorm1d\"}"), IMG2,
          "\"init\": {\"kind\": \"zeros\", \"lora\": [0]}, \"algorithm\": {\"name\": \"lora\", "
          "\"hyperparameters\": {\"eta\": 0.1, \"lora.r\": 1, \"lora.alpha\": 1}, \"switches\": "
          "{\"lora.targets\": \"head\", \"bn.running\": \"frozen\"}}", ONE_ROUND),
     "lora.targets", "the model's last parametrised layer has no weight matrix"},
    {"A9", "lora: target names for another algorithm",
     SPECX("\"init\": {\"kind\": \"zeros\", \"lora_targets\": [\"w\"]}"),
     "init.lora_targets", "only lora takes lora_targets (the algorithm is fedavg)"},
    /* -- bn.aggregate (ref/algorithms/fedavg_keep.c): FedAvg's buffers at
     * the server; only a model with batch normalisation has any -- */
#define BN16 LAYERS("[16]", "squared", "{\"type\": \"dense\", \"out\": 2, " \
    "\"bias\": false}, {\"type\": \"batchnorm1d\"}, " DENSE1)
#define BN_ALG(alg, h, sw) "\"algorithm\": {\"name\": \"" alg "\", " \
    "\"hyperparameters\": {" h "}, \"switches\": {" sw "}}"
    {"Z1", "bn.aggregate: parameters_only on a model without batch normalisation",
     SPEC(LIN, TWO, BN_ALG("fedavg", "\"eta\": 0.1",
                           "\"bn.aggregate\": \"parameters_only\""), ONE_ROUND_TWO),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only keeps each client's batch-norm running "
     "statistics, but this model has no batch normalisation (no running_mean or "
     "running_var): drop the switch"},
    {"Z2", "bn.aggregate: an algorithm without FedAvg's server",
     SPEC(BN16, IMG2, BN_ALG("local", "\"eta\": 0.1",
                             "\"bn.aggregate\": \"parameters_only\""), ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate does not apply to local (it applies to: fedavg ditto fedalt fedsim fedprox scaffold pfedme apfl"},
    {"Z3", "bn.aggregate: FedBN, which keeps the whole BN layer local",
     SPEC(BN16, IMG2, BN_ALG("fedbn", "\"eta\": 0.1",
                             "\"bn.aggregate\": \"average\""), ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate does not apply to fedbn (it applies to: fedavg ditto fedalt fedsim fedprox scaffold pfedme apfl"},
    {"Z4", "bn.aggregate: unknown value",
     SPEC(BN16, IMG2, BN_ALG("fedavg", "\"eta\": 0.1",
                             "\"bn.aggregate\": \"buffers\""), ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "unknown value \"buffers\" for bn.aggregate (known: average|parameters_only)"},
#undef BN_ALG
#undef BN16
    /* -- FedDyn (ref/algorithms/feddyn.c): α > 0, finite; l. 11 divides by it -- */
    {"Y1", "feddyn: alpha zero",
     SPEC(LIN, TWO, HYP("feddyn", "\"eta\": 0.1, \"feddyn.alpha\": 0"), ONE_ROUND_TWO),
     "algorithm.hyperparameters.feddyn.alpha", "feddyn.alpha = 0 must be > 0"},
    {"Y2", "feddyn: alpha negative",
     SPEC(LIN, TWO, HYP("feddyn", "\"eta\": 0.1, \"feddyn.alpha\": -0.5"), ONE_ROUND_TWO),
     "algorithm.hyperparameters.feddyn.alpha", "feddyn.alpha = -0.5 must be > 0"},
    {"Y3", "feddyn: alpha missing",
     SPEC(LIN, TWO, HYP("feddyn", "\"eta\": 0.1"), ONE_ROUND_TWO),
     "algorithm.hyperparameters.feddyn.alpha", "feddyn needs hyperparameter feddyn.alpha (α)"},
    {"Y4", "feddyn: unknown switch value",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"feddyn\", \"hyperparameters\": {\"eta\": "
          "0.1, \"feddyn.alpha\": 0.5}, \"switches\": {\"feddyn.prox\": \"norm\"}}",
          ONE_ROUND_TWO),
     "algorithm.switches.feddyn.prox",
     "unknown value \"norm\" for feddyn.prox (known: squared|norm_half)"},
    {"Y5", "feddyn: alpha for another algorithm",
     SPEC(LIN, TWO, HYP("fedavg", "\"eta\": 0.1, \"feddyn.alpha\": 0.5"), ONE_ROUND_TWO),
     "algorithm.hyperparameters.feddyn.alpha",
     "feddyn.alpha does not apply to fedavg (it applies to: feddyn)"},
    /* -- SCAFFOLD -- */
    {"C1", "scaffold: zero global step size",
     SPEC(LIN, TWO, HYP("scaffold", "\"eta\": 0.1, \"scaffold.eta_g\": 0"), GEN),
     "algorithm.hyperparameters.scaffold.eta_g", "scaffold.eta_g = 0 must be > 0"},
    {"C2", "scaffold: negative global step size",
     SPEC(LIN, TWO, HYP("scaffold", "\"eta\": 0.1, \"scaffold.eta_g\": -1.5"), GEN),
     "algorithm.hyperparameters.scaffold.eta_g", "scaffold.eta_g = -1.5 must be > 0"},
    {"C3", "scaffold: option II with a client of no local steps",
     SPEC(LIN, TWO, HYP("scaffold", "\"eta\": 0.1"),
          GIVEN("{\"clients\": [0, 1], \"batches\": [[[0]], []]}")),
     "schedule.rounds[0].batches[1]", "client 1 takes K = 0 local steps in round 0"},
    {"C4", "scaffold: unknown option",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"scaffold\", \"hyperparameters\": "
          "{\"eta\": 0.1}, \"switches\": {\"scaffold.option\": \"III\"}}", GEN),
     "algorithm.switches.scaffold.option", "unknown value \"III\" for scaffold.option"},
    {"C5", "scaffold: global step size for another algorithm",
     SPEC(LIN, TWO, HYP("fedavg", "\"eta\": 0.1, \"scaffold.eta_g\": 0.5"), GEN),
     "algorithm.hyperparameters.scaffold.eta_g", "scaffold.eta_g does not apply to fedavg"},
    {"C6", "scaffold: local step size missing",
     SPEC(LIN, TWO, HYP("scaffold", "\"scaffold.eta_g\": 0.5"), GEN),
     "algorithm.hyperparameters.eta", "scaffold needs hyperparameter eta"},
    {"C7", "scaffold: preset official",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"scaffold\", \"preset\": \"official\", "
          "\"hyperparameters\": {\"eta\": 0.1}}", GEN),
     "algorithm.preset", "unknown preset \"official\" for scaffold"},
    {"C8", "scaffold: initial c of the wrong size",
     SPEC(LIN, TWO, "\"init\": {\"kind\": \"zeros\", \"c\": [0.5]}, "
          HYP("scaffold", "\"eta\": 0.1"), GEN),
     "init.c", "expected 2 numbers, found 1"},
    {"C9", "scaffold: client control variates and clients differ",
     SPEC(LIN, TWO, "\"init\": {\"kind\": \"zeros\", \"c_i\": [[0.5, 0.25]]}, "
          HYP("scaffold", "\"eta\": 0.1"), GEN),
     "init.c_i", "expected one control variate per client, N = 2, found 1"},
    {"C10", "scaffold: a client control variate of the wrong size",
     SPEC(LIN, TWO, "\"init\": {\"kind\": \"zeros\", \"c_i\": [[0.5, 0.25], [0.75]]}, "
          HYP("scaffold", "\"eta\": 0.1"), GEN),
     "init.c_i[1]", "expected 2 numbers, found 1"},
    {"C11", "scaffold: control variates for another algorithm",
     SPEC(LIN, TWO, "\"init\": {\"kind\": \"zeros\", \"c\": [0.5, 0.25]}, "
          HYP("fedavg", "\"eta\": 0.1"), GEN),
     "init.c", "only scaffold takes initial control variates (the algorithm is fedavg)"},
    /* MOON (ref/algorithms/moon.c) */
    {"A10", "moon: a negative contrastive weight μ",
     SPEC(MOON_MLP, MOON_DATA, MOON_HYP("\"moon.mu\": -0.5, \"moon.tau\": 0.5"), ONE_ROUND),
     "algorithm.hyperparameters.moon.mu", "moon.mu = -0.5 must be >= 0"},
    {"A11", "moon: a temperature τ ≤ 0",
     SPEC(MOON_MLP, MOON_DATA, MOON_HYP("\"moon.mu\": 0.5, \"moon.tau\": 0"), ONE_ROUND),
     "algorithm.hyperparameters.moon.tau", "moon.tau = 0 must be > 0"},
    {"A12", "moon: μ or τ not given",
     SPEC(MOON_MLP, MOON_DATA, MOON_HYP("\"moon.mu\": 0.5"), ONE_ROUND),
     "algorithm.hyperparameters.moon.tau", "moon needs hyperparameter moon.tau"},
    {"A13", "moon: a model without a representation",
     SPEC(LIN, MOON_DATA, MOON_HYP("\"moon.mu\": 0.5, \"moon.tau\": 0.5"), ONE_ROUND),
     "model.kind", "moon needs a representation R_w(x)"},
    {"A14", "moon: a layer list whose last layer is not dense",
     SPEC(LAYERS("[2]", "cross_entropy", "{\"type\": \"dense\", \"out\": 2}, {\"type\": \"relu\"}"),
          MOON_DATA, MOON_HYP("\"moon.mu\": 0.5, \"moon.tau\": 0.5"), ONE_ROUND),
     "model.layers", "the layer list's last layer must be dense"},
    {"A15", "moon: batch normalisation in an mlp",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 2, \"bn\": true}",
          MOON_DATA, MOON_HYP("\"moon.mu\": 0.5, \"moon.tau\": 0.5"), ONE_ROUND),
     "model.bn", "moon takes batch normalisation in a layer list's body"},
    {"A16", "moon: a batch longer than the largest training set",
     SPEC(MOON_MLP, MOON_DATA, MOON_HYP("\"moon.mu\": 0.5, \"moon.tau\": 0.5"),
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1], [0, 0, 1]]]}")),
     "schedule.rounds[0].batches[0][1]", "moon takes batches of at most 2 samples"},
    /* -- FedProx (X: fedproX) -- */
    {"X1", "fedprox: a negative proximal weight",
     SPEC(LIN, TWO, PROX_ALG(PROX_MU("-0.5")), GIVEN(PROX_ROUND("[0, 1]"))),
     "algorithm.hyperparameters.fedprox.mu", "fedprox.mu = -0.5 must be >= 0"},
    {"X2", "fedprox: no proximal weight",
     SPEC(LIN, TWO, PROX_ALG(""), GIVEN(PROX_ROUND("[0, 1]"))),
     "algorithm.hyperparameters.fedprox.mu", "fedprox needs hyperparameter fedprox.mu"},
    {"X3", "fedprox: draws of the wrong length",
     SPEC(LIN, TWO, PROX_ALG(PROX_MU("0.5")), GIVEN(PROX_ROUND("[0, 1, 1]") ", {\"clients\": [0], \"batches\": [[[0]]], \"draws\": [0, 0]}")),
     "schedule.rounds[1].draws", "2 draws where round 0 has K = 3"},
    {"X4", "fedprox: no draws in the list",
     SPEC(LIN, TWO, PROX_ALG(PROX_MU("0.5")), GIVEN(PROX_ROUND("[]"))),
     "schedule.rounds[0].draws", "the array has 0 entries, at least 1 needed"},
    {"X5", "fedprox: a drawn id out of range",
     SPEC(LIN, TWO, PROX_ALG(PROX_MU("0.5")), GIVEN(PROX_ROUND("[0, 2]"))),
     "schedule.rounds[0].draws[1]", "2 is out of range [0, 1]"},
    {"X6", "fedprox: a participant not drawn",
     SPEC(LIN, TWO, PROX_ALG(PROX_MU("0.5")), GIVEN(PROX_ROUND("[0, 0]"))),
     "schedule.rounds[0].clients[1]", "participant 1 is not among the round's draws"},
    {"X7", "fedprox: a drawn id not a participant",
     SPEC(LIN, TWO, PROX_ALG(PROX_MU("0.5")), GIVEN("{\"clients\": [0], \"batches\": [[[0]]], \"draws\": [0, 1]}")),
     "schedule.rounds[0].draws[1]", "drawn client 1 is not a participant of the round (clients)"},
    {"X8", "fedprox: paper sampling without draws",
     SPEC(LIN, TWO, PROX_ALG(PROX_MU("0.5")), GIVEN("{\"clients\": [0, 1], \"batches\": [[[0]], [[0]]]}")),
     "schedule.rounds[0].draws", "fedprox.sampling = paper needs the round's K draws"},
    {"X9", "fedprox: draws for another algorithm",
     SPEC(LIN, TWO, FEDAVG, GIVEN(PROX_ROUND("[0, 1]"))),
     "schedule.rounds[0].draws", "only fedprox takes draws (fedavg does not)"},
    /* -- FedRecon (rows Q1..; FR_SPEC below) -- */
    {"Q1", "fedrecon: step size not positive",
     FR_SPEC(FR_SUP, "0", "", FR_PERS, FR_UPD), "algorithm.hyperparameters.fedrecon.eta_s",
     "fedrecon.eta_s = 0 must be > 0"},
    {"Q2", "fedrecon: no support under query = complement",
     FR_SPEC("", "0.5", "", FR_PERS, FR_UPD), "init.support",
     "fedrecon.query = complement needs each client's support set"},
    {"Q3", "fedrecon: a support under query = whole",
     FR_SPEC(FR_SUP, "0.5", ", \"fedrecon.query\": \"whole\"", FR_PERS, FR_UPD),
     "init.support", "reconstructs and updates on all of D_i; give no support set"},
    {"Q4", "fedrecon: support sets and clients differ",
     FR_SPEC(", \"support\": [[0]]", "0.5", "", FR_PERS, FR_UPD), "init.support",
     "1 support sets for 2 clients"},
    {"Q5", "fedrecon: support index out of range",
     FR_SPEC(", \"support\": [[2], [0]]", "0.5", "", FR_PERS, FR_UPD), "init.support[0][0]",
     "2 is out of range [0, 1]"},
    {"Q6", "fedrecon: support index repeated",
     FR_SPEC(", \"support\": [[0], [0, 0]]", "0.5", "", FR_PERS, FR_UPD),
     "init.support[1][1]", "0 is a repeat or out of order"},
    {"Q7", "fedrecon: empty support",
     FR_SPEC(", \"support\": [[], [0]]", "0.5", "", FR_PERS, FR_UPD), "init.support[0]",
     "client 0's support set is empty"},
    {"Q8", "fedrecon: empty query set",
     FR_SPEC(", \"support\": [[0, 1], [0]]", "0.5", "", FR_PERS, FR_UPD), "init.support[0]",
     "its query set D_{i,q} is empty"},
    {"Q9", "fedrecon: no reconstruction lists",
     FR_SPEC(FR_SUP, "0.5", "", "", FR_UPD), "schedule.rounds[0].personal",
     "round 0 has none"},
    {"Q10", "fedrecon: reconstruction batch outside the support",
     FR_SPEC(FR_SUP, "0.5", "", "\"personal\": [[[1]], [[0]]], ", FR_UPD),
     "schedule.rounds[0].personal[0][0]", "sample 1 of client 0 is in its query set"},
    {"Q11", "fedrecon: update batch outside the query set",
     FR_SPEC(FR_SUP, "0.5", "", FR_PERS, "[[[1]], [[0]]]"), "schedule.rounds[0].batches[1][0]",
     "sample 0 of client 1 is in its support set"},
    {"Q12", "fedrecon: examples weights without update batches",
     FR_SPEC(FR_SUP, "0.5", ", \"fedrecon.weights\": \"examples\"", FR_PERS, "[[[1]], []]"),
     "schedule.rounds[0].batches[1]", "it has no update batch"},
    {"Q13", "fedrecon: evaluation with reconstruction without a post phase",
     FR_SPEC_EVAL(FR_SUP, "reconstruct", ""), "schedule.post",
     "takes the evaluation's reconstruction batches from schedule.post"},
    {"Q14", "fedrecon: support for another algorithm",
     SPECX("\"init\": {\"kind\": \"zeros\", \"support\": [[0], [0]]}"),
     "init.support", "only fedrecon takes support sets (the algorithm is fedavg)"},
    /* -- FedAMP (M: fedaMp) -- */
    {"M1", "fedamp: σ = 0",
     SPEC(LIN, TWO, AMP_ALG(AMP_H("0.3", "0.2", AMP_S("0")), ""), ONE_ROUND_TWO),
     "algorithm.hyperparameters.fedamp.sigma", "fedamp.sigma = 0 must be > 0"},
    {"M2", "fedamp: a negative σ",
     SPEC(LIN, TWO, AMP_ALG(AMP_H("0.3", "0.2", AMP_S("-1")), ""), ONE_ROUND_TWO),
     "algorithm.hyperparameters.fedamp.sigma", "fedamp.sigma = -1 must be > 0"},
    {"M3", "fedamp: α_k = 0",
     SPEC(LIN, TWO, AMP_ALG(AMP_H("0", "0.2", AMP_S("0.5")), ""), ONE_ROUND_TWO),
     "algorithm.hyperparameters.fedamp.alpha_k", "fedamp.alpha_k = 0 must be > 0"},
    {"M4", "fedamp: a negative λ",
     SPEC(LIN, TWO, AMP_ALG(AMP_H("0.3", "-0.5", AMP_S("0.5")), ""), ONE_ROUND_TWO),
     "algorithm.hyperparameters.fedamp.lambda", "fedamp.lambda = -0.5 must be >= 0"},
    {"M5", "fedamp: no σ",
     SPEC(LIN, TWO, AMP_ALG(AMP_H("0.3", "0.2", ""), ""), ONE_ROUND_TWO),
     "algorithm.hyperparameters.fedamp.sigma", "fedamp needs hyperparameter fedamp.sigma"},
    {"M6", "fedamp: an unknown switch value",
     SPEC(LIN, TWO, AMP_ALG(AMP_H("0.3", "0.2", AMP_S("0.5")),
                            "\"fedamp.peers\": \"sampled\""), ONE_ROUND_TWO),
     "algorithm.switches.fedamp.peers", "unknown value \"sampled\" for fedamp.peers"},
    {"M7", "fedamp: batch normalisation in the model",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 2, \"bn\": true}",
          MOON_DATA, AMP_ALG(AMP_H("0.3", "0.2", AMP_S("0.5")), ""), ONE_ROUND),
     "model", "fedamp: a model with batch normalisation needs bn.aggregate = "
     "parameters_only"},
    /* -- FedProto (rows J1..) -- */
    {"J1", "fedproto: a negative prototype weight λ",
     SPEC(MOON_MLP, MOON_DATA, PROTO_HYP(", \"fedproto.lambda\": -0.5"), ONE_ROUND),
     "algorithm.hyperparameters.fedproto.lambda", "fedproto.lambda = -0.5 must be >= 0"},
    {"J2", "fedproto: λ not given",
     SPEC(MOON_MLP, MOON_DATA, PROTO_HYP(""), ONE_ROUND),
     "algorithm.hyperparameters.fedproto.lambda", "fedproto needs hyperparameter fedproto.lambda"},
    {"J3", "fedproto: a model without an embedding",
     SPEC(LIN, MOON_DATA, PROTO_HYP(", \"fedproto.lambda\": 0.5"), ONE_ROUND),
     "model.kind", "fedproto needs an embedding f_i(x) and a decision layer"},
    {"J4", "fedproto: a regression model",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 1, "
          "\"loss\": \"squared\"}", MOON_DATA, PROTO_HYP(", \"fedproto.lambda\": 0.5"),
          ONE_ROUND),
     "model.loss", "fedproto needs a classifier"},
    {"J5", "fedproto: no global prototype after the last round",
     SPEC(MOON_MLP, MOON_DATA,
          PROTO_SW(", \"fedproto.lambda\": 0.5",
                   "\"fedproto.client_protos\": \"during_training\""),
          GIVEN("{\"clients\": [0], \"batches\": [[]]}")),
     "schedule.rounds[0]", "needs C̄ after the last round, and its last round gives no prototype"},
    {"J6", "fedproto: a batch longer than the largest training set",
     SPEC(MOON_MLP, MOON_DATA, PROTO_HYP(", \"fedproto.lambda\": 0.5"),
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1], [0, 0, 1]]]}")),
     "schedule.rounds[0].batches[0][1]", "fedproto takes batches of at most 2 samples"},
    {"J7", "fedproto: a switch value unknown",
     SPEC(MOON_MLP, MOON_DATA,
          PROTO_SW(", \"fedproto.lambda\": 0.5", "\"fedproto.distance\": \"l1\""),
          ONE_ROUND),
     "algorithm.switches.fedproto.distance", "l1"},
    /* -- FedFomo's equality up to rounding (fedfomo.equal_rtol) -- */
    {"E1", "fedfomo: equality tolerance above 1e-6",
     SPEC(QUAD1, CLIENTS("{\"a\": [2], \"c\": [1]}, {\"a\": [3], \"c\": [2]}"),
          HYP("fedfomo", "\"eta\": 0.25, \"fedfomo.equal_rtol\": 0.001"),
          GIVEN("{\"clients\": [0, 1], \"batches\": [[[0]], [[0]]]}")),
     "algorithm.hyperparameters.fedfomo.equal_rtol",
     "equality up to rounding takes a relative tolerance 0 ≤ τ ≤ 1e-6"},
    {"E2", "fedfomo: negative equality tolerance",
     SPEC(QUAD1, CLIENTS("{\"a\": [2], \"c\": [1]}, {\"a\": [3], \"c\": [2]}"),
          HYP("fedfomo", "\"eta\": 0.25, \"fedfomo.equal_rtol\": -1e-16"),
          GIVEN("{\"clients\": [0, 1], \"batches\": [[[0]], [[0]]]}")),
     "algorithm.hyperparameters.fedfomo.equal_rtol", "must be >= 0"},
    /* -- FedRoD (rows B1..): MOON's mlp 2-2-2 and data -- */
    {"B1", "fedrod: η not given",
     SPEC(MOON_MLP, MOON_DATA, HYP("fedrod", ""), ONE_ROUND),
     "algorithm.hyperparameters.eta", "fedrod needs hyperparameter eta"},
    {"B2", "fedrod: η = 0",
     SPEC(MOON_MLP, MOON_DATA, HYP("fedrod", "\"eta\": 0"), ONE_ROUND),
     "algorithm.hyperparameters.eta", "eta = 0 must be > 0"},
    {"B3", "fedrod: a model without a body and a linear head",
     SPEC(LIN, MOON_DATA, HYP("fedrod", "\"eta\": 0.1"), ONE_ROUND),
     "model.kind", "fedrod needs a body f_θ and a linear head φ_G"},
    {"B4", "fedrod: a regression model",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 1, "
          "\"loss\": \"squared\"}", MOON_DATA, HYP("fedrod", "\"eta\": 0.1"),
          ONE_ROUND),
     "model.loss", "fedrod needs a classifier"},
    {"B5", "fedrod: a batch longer than the largest training set",
     SPEC(MOON_MLP, MOON_DATA, HYP("fedrod", "\"eta\": 0.1"),
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1], [0, 0, 1]]]}")),
     "schedule.rounds[0].batches[0][1]", "fedrod takes batches of at most 2 samples"},
    {"B6", "fedrod: a switch value unknown",
     SPEC(MOON_MLP, MOON_DATA,
          "\"algorithm\": {\"name\": \"fedrod\", \"hyperparameters\": "
          "{\"eta\": 0.1}, \"switches\": {\"fedrod.features\": \"during\"}}",
          ONE_ROUND),
     "algorithm.switches.fedrod.features", "unknown value \"during\" for fedrod.features"},
    /* -- APPLE (rows G1..): apple with η = 0.1 and the hyperparameters h -- */
#define APL_ALG(h, sw) "\"algorithm\": {\"name\": \"apple\", \"hyperparameters\": " \
    "{\"eta\": 0.1, " h "}, \"switches\": {" sw "}}"
#define APL_H(ep, mu, L) "\"eta_p\": " ep ", \"apple.mu\": " mu L
    {"G1", "apple: η_p = 0",
     SPEC(LIN, TWO, APL_ALG(APL_H("0", "0.3", ", \"apple.L\": 2"), ""), ONE_ROUND_TWO),
     "algorithm.hyperparameters.eta_p", "eta_p = 0 must be > 0"},
    {"G2", "apple: a negative μ",
     SPEC(LIN, TWO, APL_ALG(APL_H("0.05", "-0.5", ", \"apple.L\": 2"), ""), ONE_ROUND_TWO),
     "algorithm.hyperparameters.apple.mu", "apple.mu = -0.5 must be >= 0"},
    {"G3", "apple: L = 0",
     SPEC(LIN, TWO, APL_ALG(APL_H("0.05", "0.3", ", \"apple.L\": 0"), ""), ONE_ROUND_TWO),
     "algorithm.hyperparameters.apple.L", "apple.L"},
    {"G4", "apple: no L",
     SPEC(LIN, TWO, APL_ALG(APL_H("0.05", "0.3", ""), ""), ONE_ROUND_TWO),
     "algorithm.hyperparameters.apple.L", "apple needs hyperparameter apple.L"},
    {"G5", "apple: an unknown switch value",
     SPEC(LIN, TWO, APL_ALG(APL_H("0.05", "0.3", ", \"apple.L\": 2"),
                            "\"apple.scheduler\": \"linear\""), ONE_ROUND_TWO),
     "algorithm.switches.apple.scheduler", "unknown value \"linear\" for apple.scheduler"},
    {"G6", "apple: batch normalisation in the model",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 2, \"bn\": true}",
          MOON_DATA, APL_ALG(APL_H("0.05", "0.3", ", \"apple.L\": 2"), ""), ONE_ROUND),
     "model", "apple: a model with batch normalisation needs bn.aggregate = "
     "parameters_only"},
#undef APL_ALG
#undef APL_H
    /* -- FedALA (K) -- */
    {"H1", "fedala: s% selects no sample",
     ALA_SPEC("\"fedala.s\": 40, \"fedala.p\": 1", ALA_PS),
     "algorithm.hyperparameters.fedala.s",
     "fedala.s = 40% of client 0's 2 samples selects none"},
    {"H2", "fedala: s above 100",
     ALA_SPEC("\"fedala.s\": 150, \"fedala.p\": 1", ALA_PS),
     "algorithm.hyperparameters.fedala.s", "fedala.s = 150 must be <= 100"},
    {"H3", "fedala: s = 0",
     ALA_SPEC("\"fedala.s\": 0, \"fedala.p\": 1", ALA_PS),
     "algorithm.hyperparameters.fedala.s", "fedala.s = 0 must be > 0"},
    {"H4", "fedala: p larger than the model's layers",
     ALA_SPEC("\"fedala.s\": 50, \"fedala.p\": 2", ALA_PS),
     "algorithm.hyperparameters.fedala.p",
     "fedala.p = 2 must be in [1, 1], the model's layers"},
    {"H5", "fedala: threshold 0",
     ALA_SPEC("\"fedala.s\": 50, \"fedala.p\": 1, \"fedala.threshold\": 0",
              ALA_PS),
     "algorithm.hyperparameters.fedala.threshold",
     "fedala.threshold = 0 must be > 0"},
    {"H6", "fedala: a sample list of the wrong size",
     ALA_SPEC("\"fedala.s\": 50, \"fedala.p\": 1", "\"personal\": [[[0, 1]]], "),
     "schedule.rounds[1].personal[0]",
     "one pass over D_i^s holds ⌊s n_i/100⌋ = 1 samples of client 0"},
    {"H7", "fedala: no sample lists in a round after the first",
     ALA_SPEC("\"fedala.s\": 50, \"fedala.p\": 1", ""),
     "schedule.rounds[1].personal",
     "fedala takes each participant's sample D_i^s from the round's personal lists"},
    {"H8", "fedala: p not given",
     ALA_SPEC("\"fedala.s\": 50", ALA_PS),
     "algorithm.hyperparameters.fedala.p", "fedala needs hyperparameter fedala.p"},
    {"H9", "fedala: a window of k = 0 losses",
     ALA_SPEC("\"fedala.s\": 50, \"fedala.p\": 1, \"fedala.k\": 0", ALA_PS),
     "algorithm.hyperparameters.fedala.k", "fedala.k = 0 must be >= 1"},
    /* -- FedALA under fedala.ala_clients = all (Z5..): s = 100, round 1
     * with client 0 alone, so client 1's D_1^s follows client 0's -- */
#define ALA_ALL_ALG "\"algorithm\": {\"name\": \"fedala\", \"hyperparameters\": " \
    "{\"eta\": 0.1, \"fedala.eta\": 0.5, \"fedala.s\": 100, \"fedala.p\": 1}, " \
    "\"switches\": {\"fedala.ala_clients\": \"all\"}}"
#define ALA_ALL_SPEC(ps) SPEC(LIN, TWO, ALA_ALL_ALG, ALA_ROUNDS(ps))
    {"Z5", "fedala.ala_clients = all: sample lists of the participants only",
     ALA_ALL_SPEC("\"personal\": [[[0, 1]]], "),
     "schedule.rounds[1].personal",
     "fedala.ala_clients = all: 1 personal batch lists for 2 clients"},
    {"Z6", "fedala.ala_clients = all: a client outside the round's sample "
            "of the wrong size",
     ALA_ALL_SPEC("\"personal\": [[[0, 1]], [[0], [0]]], "),
     "schedule.rounds[1].personal[1]",
     "one pass over D_i^s holds ⌊s n_i/100⌋ = 1 samples of client 1"},
    {"Z7", "fedala.ala_clients = all: a client outside the round's sample "
            "index out of range",
     ALA_ALL_SPEC("\"personal\": [[[0, 1]], [[1]]], "),
     "schedule.rounds[1].personal[1]",
     "sample index 1 is out of range for client 1 with n = 1 samples"},
    /* -- FedRoD's init.class_counts (Z8..): one client of 2 samples,
     * classes 1 and 0, k = 2 -- */
#define ROD_CC(alg, cc) "{" FMT ", " MOON_MLP ", " MOON_DATA ", " \
    HYP(alg, "\"eta\": 0.1") ", \"init\": {\"kind\": \"zeros\", " \
    "\"class_counts\": " cc "}, " ONE_ROUND "}"
    {"Z8", "fedrod: class counts for another number of clients",
     ROD_CC("fedrod", "[[1, 1], [1, 1]]"), "init.class_counts",
     "expected one list of class counts per client, N = 1, found 2"},
    {"Z9", "fedrod: class counts of the wrong length",
     ROD_CC("fedrod", "[[1, 1, 1]]"), "init.class_counts[0]",
     "expected k = 2 class counts, found 3"},
    {"Z10", "fedrod: a negative class count",
     ROD_CC("fedrod", "[[-1, 2]]"), "init.class_counts[0][0]",
     "a class count must be an integer literal >= 0"},
    {"Z11", "fedrod: a class count that is not an integer",
     ROD_CC("fedrod", "[[1.5, 1]]"), "init.class_counts[0][0]",
     "a class count must be an integer literal >= 0"},
    {"Z12", "fedrod: a zero count for a class the client holds",
     ROD_CC("fedrod", "[[0, 1]]"), "init.class_counts[0][0]",
     "class 0 has count 0 but 1 training samples of client 0"},
    {"Z13", "class counts for another algorithm",
     ROD_CC("moon", "[[1, 1]]"), "init.class_counts",
     "only fedrod takes class counts (the algorithm is moon)"},
    /* -- FedPAC (V) -- */
#define PAC_H(h) HYP("fedpac", "\"eta\": 0.1, " h)
#define PAC_OK "\"fedpac.lambda\": 0.5, \"fedpac.eta_phi\": 0.2"
    {"V1", "fedpac: λ not given",
     SPEC(MOON_MLP, MOON_DATA,
          PAC_H("\"fedpac.eta_phi\": 0.2, \"fedpac.tau_phi\": 1"), ONE_ROUND),
     "algorithm.hyperparameters.fedpac.lambda",
     "fedpac needs hyperparameter fedpac.lambda"},
    {"V2", "fedpac: η_φ = 0",
     SPEC(MOON_MLP, MOON_DATA,
          PAC_H("\"fedpac.lambda\": 0.5, \"fedpac.eta_phi\": 0, "
                "\"fedpac.tau_phi\": 1"), ONE_ROUND),
     "algorithm.hyperparameters.fedpac.eta_phi", "fedpac.eta_phi = 0 must be > 0"},
    {"V3", "fedpac: τ_φ = 0",
     SPEC(MOON_MLP, MOON_DATA, PAC_H(PAC_OK ", \"fedpac.tau_phi\": 0"),
          ONE_ROUND),
     "algorithm.hyperparameters.fedpac.tau_phi", "fedpac.tau_phi = 0 must be >= 1"},
    {"V4", "fedpac: λ negative",
     SPEC(MOON_MLP, MOON_DATA,
          PAC_H("\"fedpac.lambda\": -0.5, \"fedpac.eta_phi\": 0.2, "
                "\"fedpac.tau_phi\": 1"), ONE_ROUND),
     "algorithm.hyperparameters.fedpac.lambda", "fedpac.lambda = -0.5 must be >= 0"},
    {"V5", "fedpac: a model without a feature extractor",
     SPEC(LIN, MOON_DATA, PAC_H(PAC_OK ", \"fedpac.tau_phi\": 1"), ONE_ROUND),
     "model.kind", "fedpac needs a feature extractor f_θ and a linear classifier φ"},
    {"V6", "fedpac: a regression model",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 1, "
          "\"loss\": \"squared\"}", MOON_DATA,
          PAC_H(PAC_OK ", \"fedpac.tau_phi\": 1"), ONE_ROUND),
     "model.loss", "fedpac needs a classifier"},
    {"V7", "fedpac: fewer batches than τ_φ",
     SPEC(MOON_MLP, MOON_DATA, PAC_H(PAC_OK ", \"fedpac.tau_phi\": 2"),
          ONE_ROUND),
     "schedule.rounds[0].batches[0]",
     "fedpac takes its fedpac.tau_phi = 2 classifier steps from the first batches"},
    {"V8", "fedpac: a switch value unknown",
     SPEC(MOON_MLP, MOON_DATA,
          "\"algorithm\": {\"name\": \"fedpac\", \"hyperparameters\": {"
          "\"eta\": 0.1, " PAC_OK ", \"fedpac.tau_phi\": 1}, \"switches\": "
          "{\"fedpac.distance\": \"l1\"}}", ONE_ROUND),
     "algorithm.switches.fedpac.distance",
     "unknown value \"l1\" for fedpac.distance"},
    {"V9", "fedpac: a batch longer than the largest training set",
     SPEC(MOON_MLP, MOON_DATA, PAC_H(PAC_OK ", \"fedpac.tau_phi\": 1"),
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 0, 1]]]}")),
     "schedule.rounds[0].batches[0][0]", "fedpac takes batches of at most 2 samples"},
    {"V10", "fedpac: ε of renormalised small weights not below 1/m",
     SPEC(MOON_MLP,
          CLIENTS("{\"X\": [[1, 2], [3, 4]], \"y\": [1, 0]}, "
                  "{\"X\": [[1, 0], [0, 1]], \"y\": [0, 1]}"),
          "\"algorithm\": {\"name\": \"fedpac\", \"hyperparameters\": {"
          "\"eta\": 0.1, " PAC_OK ", \"fedpac.tau_phi\": 1, "
          "\"fedpac.alpha_eps\": 0.5}, \"switches\": "
          "{\"fedpac.alpha_small\": \"renormalised\"}}",
          GIVEN("{\"clients\": [0, 1], \"batches\": [[[0, 1]], [[0, 1]]]}")),
     "algorithm.hyperparameters.fedpac.alpha_eps",
     "fedpac.alpha_eps = 0.5 must be below 1/m = 1/2"},
#undef PAC_OK
#undef PAC_H
    /* -- the client optimizer and batch normalisation of APPLE, FedRecon,
     * LoRA and APFL (rows Z14..Z17) -- */
#define APL_OPT(sw) "\"algorithm\": {\"name\": \"apple\", \"hyperparameters\": " \
    "{\"eta\": 0.1, \"eta_p\": 0.05, \"apple.mu\": 0.3, \"apple.L\": 2, " \
    "\"opt.momentum\": 0.9}, \"switches\": {" sw "}}"
    {"Z14", "apple: a client optimizer with the core-first order",
     SPEC(LIN, TWO, APL_OPT("\"apple.order\": \"core_first\""), ONE_ROUND_TWO),
     "algorithm.switches.apple.order",
     "apple.order = core_first forms ∂ℒ/∂p_ii from the new w_i"},
    {"Z15", "apple: a weight-decay scope of a split",
     SPEC(LIN, TWO, APL_OPT("\"opt.decay_scope\": \"personal\""), ONE_ROUND_TWO),
     "algorithm.switches.opt.decay_scope",
     "apple has no split of shared and personal blocks"},
#undef APL_OPT
#define APFL_BN(sw) SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, " \
    "\"k\": 2, \"bn\": true}", MOON_DATA, "\"algorithm\": {\"name\": " \
    "\"apfl\", \"hyperparameters\": {\"eta\": 0.1, \"alpha\": 0.25}, " \
    "\"switches\": {" sw "}}", ONE_ROUND)
    {"Z16", "apfl: the paper's parameter mixture with moving running statistics",
     APFL_BN(""), "algorithm.switches.bn.running",
     "a third model whose training pass has batch statistics that belong to "
     "the buffers of neither v nor w_i"},
    {"Z17", "apfl: output mixing with moving running statistics",
     APFL_BN("\"apfl.mix\": \"output\""), "algorithm.switches.bn.running",
     "apfl.mix = output takes v's and w_i's outputs in evaluation-mode passes "
     "here"},
#undef APFL_BN
    /* -- FedPAC's client optimizers and APPLE's limited downloads (F) -- */
#define PAC_OPT(sw) "\"algorithm\": {\"name\": \"fedpac\", " \
    "\"hyperparameters\": {\"eta\": 0.1, \"fedpac.lambda\": 0.5, " \
    "\"fedpac.eta_phi\": 0.2, \"fedpac.tau_phi\": 1, " \
    "\"opt.momentum\": 0.5, \"opt.weight_decay\": 0.001}, " \
    "\"switches\": {" sw "}}"
    {"Z18", "fedpac: a weight-decay scope of a split",
     SPEC(MOON_MLP, MOON_DATA, PAC_OPT("\"opt.decay_scope\": \"shared\""),
          ONE_ROUND),
     "algorithm.switches.opt.decay_scope",
     "fedpac has no split of shared and personal blocks"},
#undef PAC_OPT
/* APPLE's limited downloads: three clients, apple.M = m, one round of
 * clients 0 and 1 with the given peers */
#define APL_THREE CLIENTS("{\"X\": [[1, 2]], \"y\": [1]}, " \
    "{\"X\": [[0.5, 1]], \"y\": [3]}, {\"X\": [[2, 0]], \"y\": [2]}")
#define APL_DL(m) "\"algorithm\": {\"name\": \"apple\", " \
    "\"hyperparameters\": {\"eta\": 0.1, \"eta_p\": 0.05, " \
    "\"apple.mu\": 0.3, \"apple.L\": 2" m "}}"
#define APL_PEERS(pe) GIVEN("{\"clients\": [0, 1], \"batches\": " \
    "[[[0]], [[0]]], \"peers\": " pe "}")
    {"Z19", "apple: downloaded cores without apple.M",
     SPEC(LIN, APL_THREE, APL_DL(""), APL_PEERS("[[1], [2]]")),
     "schedule.rounds[0].peers", "give apple.M, the number each list holds"},
    {"Z20", "apple: a download list of the wrong count",
     SPEC(LIN, APL_THREE, APL_DL(", \"apple.M\": 2"),
          APL_PEERS("[[1, 2], [2]]")),
     "schedule.rounds[0].peers[1]", "client 1 downloads 1 cores; apple.M = 2"},
    {"Z21", "apple: a downloaded core out of range",
     SPEC(LIN, APL_THREE, APL_DL(", \"apple.M\": 1"),
          APL_PEERS("[[1], [5]]")),
     "schedule.rounds[0].peers[1][0]", "5 is out of range [0, 2]"},
    {"Z22", "apple: a client among its own downloads",
     SPEC(LIN, APL_THREE, APL_DL(", \"apple.M\": 1"),
          APL_PEERS("[[0], [2]]")),
     "schedule.rounds[0].peers[0][0]",
     "client 0 is listed among its own downloads"},
    {"Z23", "apple: a core downloaded twice",
     SPEC(LIN, APL_THREE, APL_DL(", \"apple.M\": 2"),
          APL_PEERS("[[1, 2], [2, 2]]")),
     "schedule.rounds[0].peers[1][1]", "core 2 is listed twice"},
    {"Z24", "apple: download lists not one per participant",
     SPEC(LIN, APL_THREE, APL_DL(", \"apple.M\": 1"), APL_PEERS("[[1]]")),
     "schedule.rounds[0].peers", "1 peer lists for 2 clients"},
    {"Z25", "apple: apple.M not below N",
     SPEC(LIN, APL_THREE, APL_DL(", \"apple.M\": 3"),
          APL_PEERS("[[1, 2], [0, 2]]")),
     "algorithm.hyperparameters.apple.M",
     "apple.M = 3 cores downloaded per round must be below N = 3"},
#undef APL_PEERS
#undef APL_DL
#undef APL_THREE
/* dropout (docs/models.md, "Dropout"): dense 2 → 3, dropout "d" (p = 1/4),
 * dense 3 → 1 on TWO; one round of client 0 on its two samples */
#define DROP_MLP(p) LAYERS("[2]", "squared", "{\"type\": \"dense\", \"out\": 3}, " \
    "{\"type\": \"dropout\", \"name\": \"d\", \"p\": " p "}, " DENSE1)
#define DROP_ROUND(b, passes) GIVEN("{\"clients\": [0], \"batches\": [" b "], " \
    "\"dropout\": [[" passes "]]}")
#define DROP_OK "{\"d\": [[1, 0, 1], [0, 1, 1]]}"
    {"U1", "dropout: a mask row of the wrong width",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG, DROP_ROUND("[[0, 1]]", "{\"d\": [[1, 0], [0, 1]]}")),
     "schedule.rounds[0].dropout[0][0].d[0]",
     "a row of layer \"d\"'s mask has 2 entries: its input has 3 per sample"},
    {"U2", "dropout: a mask of another batch size than its pass",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG, DROP_ROUND("[[0, 1]]", "{\"d\": [[1, 0, 1]]}")),
     "schedule.rounds[0].dropout[0]",
     "round 0, client 0, training pass 1: the masks have 1 rows, the pass's batch 2 samples"},
    {"U3", "dropout: a mask entry other than 0 or 1",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG,
          DROP_ROUND("[[0, 1]]", "{\"d\": [[1, 0, 2], [0, 1, 1]]}")),
     "schedule.rounds[0].dropout[0][0].d[0][2]",
     "a mask entry is 0 (dropped) or 1 (kept), not 2"},
    {"U4", "dropout: a fractional mask entry",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG,
          DROP_ROUND("[[0, 1]]", "{\"d\": [[1, 0, 1], [0.5, 1, 1]]}")),
     "schedule.rounds[0].dropout[0][0].d[1][0]",
     "a mask entry is 0 (dropped) or 1 (kept), not 0.5"},
    {"U5", "dropout: p = 1",
     SPEC(DROP_MLP("1"), TWO, FEDAVG, DROP_ROUND("[[0, 1]]", DROP_OK)),
     "model.layers[1].p", "the drop probability p = 1 must lie in [0, 1)"},
    {"U6", "dropout: negative p",
     SPEC(DROP_MLP("-0.25"), TWO, FEDAVG, DROP_ROUND("[[0, 1]]", DROP_OK)),
     "model.layers[1].p", "the drop probability p = -0.25 must lie in [0, 1)"},
    {"U7", "dropout: a round without masks",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG, ONE_ROUND),
     "schedule.rounds[0].dropout",
     "round 0, client 0, training pass 1 (of 2 samples): no dropout mask given for layer \"d\""},
    {"U8", "dropout: fewer passes given than the steps make",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG, DROP_ROUND("[[0], [1]]", "{\"d\": [[1, 0, 1]]}")),
     "schedule.rounds[0].dropout[0]",
     "round 0, client 0, training pass 2 (of 1 samples): no dropout mask given for layer "
     "\"d\" (1 passes given) [gradient failed at round 0, client 0, step 2"},
    {"U9", "dropout: passes left unused",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG, DROP_ROUND("[[0, 1]]", DROP_OK ", " DROP_OK)),
     "schedule.rounds[0].dropout[0]",
     "round 0, client 0 made 1 training passes, 2 given: every pass's masks must be used"},
    {"U10", "dropout: masks for a model without dropout",
     SPEC(LIN, TWO, FEDAVG, DROP_ROUND("[[0, 1]]", DROP_OK)),
     "schedule.rounds[0].dropout", "the model has no dropout layer: no masks to give"},
    {"U11", "dropout: an algorithm that does not map its passes to masks",
     SPEC(DROP_MLP("0.25"), TWO, HYP("fedprox", "\"eta\": 0.1"),
          DROP_ROUND("[[0, 1]]", DROP_OK)),
     "model.layers[1]",
     "fedprox does not map its training passes to dropout masks: it cannot take dropout "
     "layer \"d\""},
    {"U12", "dropout: a generated schedule",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG, GEN),
     "schedule.kind",
     "dropout layer \"d\" takes its masks from a given schedule (rounds[t].dropout): a "
     "generated schedule has none"},
    {"U13", "dropout: a mask for a layer that is not a dropout layer",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG,
          DROP_ROUND("[[0, 1]]", "{\"d\": [[1, 0, 1], [0, 1, 1]], \"1\": [[1]]}")),
     "schedule.rounds[0].dropout[0][0].1", "no dropout layer is named \"1\""},
    {"U14", "dropout: a pass without a layer's mask",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG, DROP_ROUND("[[0, 1]]", "{}")),
     "schedule.rounds[0].dropout[0][0]", "no mask for dropout layer \"d\""},
    {"U15", "dropout: mask lists not one per participant",
     SPEC(DROP_MLP("0.25"), TWO, FEDAVG,
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]], \"dropout\": [[" DROP_OK "], []]}")),
     "schedule.rounds[0].dropout", "2 mask lists for 1 clients"},
    {"U16", "dropout: an unknown key of the layer",
     SPEC(LAYERS("[2]", "squared", "{\"type\": \"dropout\", \"rate\": 0.5}, " DENSE1), TWO,
          FEDAVG, DROP_ROUND("[[0, 1]]", DROP_OK)),
     "model.layers[0].rate", "unknown field \"rate\""},
#undef DROP_MLP
#undef DROP_ROUND
#undef DROP_OK
    /* -- Per-FedAvg and PFLEGO: the client optimizer and batch norm -- */
    {"I3", "pflego: an mlp with batch normalisation (bn.running frozen)",
     SPEC(BN_MLP, BN_TWO,
          "\"algorithm\": {\"name\": \"pflego\", \"hyperparameters\": {\"pflego.beta\": "
          "0.1, \"rho\": 0.1}, \"switches\": {\"bn.running\": \"frozen\"}}",
          BN_FULL_ROUND),
     "model.bn", "pflego caches the body's features φ(X_i; θ_t) once per round"},
    {"I4", "pflego: an mlp with batch normalisation (bn.running update)",
     SPEC(BN_MLP, BN_TWO,
          "\"algorithm\": {\"name\": \"pflego\", \"hyperparameters\": {\"pflego.beta\": "
          "0.1, \"rho\": 0.1}}", BN_FULL_ROUND),
     "model.bn", "give \"bn\": false, whatever bn.running says"},
    {"I5", "perfedavg: a one-sample batch under the unbiased running variance",
     SPEC(BN_MLP, BN_TWO,
          "\"algorithm\": {\"name\": \"perfedavg\", \"hyperparameters\": {\"alpha\": "
          "0.1, \"beta\": 0.1}}",
          "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "
          "\"batches\": [[[0, 1], [1], [0, 1]]]}], \"post\": [[[0, 1]], [[0, 1]]]}"),
     "schedule", "running statistics at round 0, client 0, step 1"},
    /* -- FedRoD with batch normalisation and the client optimizers (rows
     * I6–I9): MOON's mlp 2-2-2 and data -- */
#define ROD_SW(h, sw) "\"algorithm\": {\"name\": \"fedrod\", " \
    "\"hyperparameters\": {\"eta\": 0.1" h "}, \"switches\": {" sw "}}"
    {"I6", "fedrod: batch normalisation, a one-sample batch under the unbiased running variance",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 2, "
          "\"bn\": true}", MOON_DATA, ROD_SW("", ""),
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1], [1]]]}")),
     "schedule", "running statistics at round 0, client 0, step 2"},
    {"I7", "fedrod: Nesterov momentum without a momentum",
     SPEC(MOON_MLP, MOON_DATA, ROD_SW("", "\"opt.nesterov\": \"on\""),
          ONE_ROUND),
     "algorithm.switches.opt.nesterov", "requires a momentum and zero dampening"},
    {"I8", "fedrod: Adam's β₁ = 1",
     SPEC(MOON_MLP, MOON_DATA,
          ROD_SW(", \"opt.beta1\": 1", "\"opt.method\": \"adam\""),
          ONE_ROUND),
     "algorithm.hyperparameters.opt.beta1", "opt.beta1 = 1 must be < 1"},
    {"I9", "fedrod: gradient clipping without its norm",
     SPEC(MOON_MLP, MOON_DATA, ROD_SW("", "\"opt.clip\": \"norm\""),
          ONE_ROUND),
     "algorithm.switches.opt.clip", "opt.clip = norm needs opt.clip_norm"},
#undef ROD_SW
    /* -- bn.aggregate under Ditto (ref/algorithms/ditto.c,
     * ditto_round_keep): only a model with batch normalisation has
     * running statistics to keep (row I10) -- */
    {"I10", "ditto: bn.aggregate = parameters_only on a model without batch normalisation",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"ditto\", \"hyperparameters\": "
          "{\"eta\": 0.1, \"lambda\": 0.5}, \"switches\": "
          "{\"bn.aggregate\": \"parameters_only\"}}", ONE_ROUND_TWO),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only keeps each client's batch-norm running "
     "statistics, but this model has no batch normalisation (no running_mean or "
     "running_var): drop the switch"},
    /* -- bn.aggregate under FedAlt/FedSim (ref/algorithms/fedalt.c,
     * pfl_round_keep): the devices' own statistics live in their models,
     * which the stateless reading discards (row I11) -- */
#define I_BN LAYERS("[16]", "squared", "{\"type\": \"dense\", \"out\": 2, " \
    "\"bias\": false}, {\"type\": \"batchnorm1d\"}, " DENSE1)
    {"I11", "fedalt: bn.aggregate = parameters_only under pfl.state = stateless",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"fedalt\", \"preset\": "
          "\"fedrep\", \"hyperparameters\": {\"gamma_u\": 0.1, \"gamma_v\": 0.1, "
          "\"tau_v\": 1}, \"switches\": {\"pfl.state\": \"stateless\", "
          "\"bn.aggregate\": \"parameters_only\"}}",
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1], [0, 1]]]}")),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only keeps each device's batch-norm running "
     "statistics in its own model across rounds, which pfl.state = "
     "stateless discards"},
    /* -- scaffold.bn_global = previous (ref/algorithms/scaffold.c; PFLlib
     * serverscaffold.py:124-129): it needs bn.aggregate = parameters_only
     * (row I12) and a model with batch normalisation (row I13) -- */
    {"I12", "scaffold: scaffold.bn_global = previous under bn.aggregate = average",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"scaffold\", "
          "\"hyperparameters\": {\"eta\": 0.1}, \"switches\": "
          "{\"scaffold.bn_global\": \"previous\"}}", ONE_ROUND),
     "algorithm.switches.scaffold.bn_global",
     "scaffold.bn_global = previous (the global's running statistics never "
     "move, PFLlib serverscaffold.py:124-129) needs bn.aggregate = "
     "parameters_only"},
    {"I13", "scaffold: scaffold.bn_global = previous on a model without batch normalisation",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"scaffold\", \"preset\": "
          "\"pfllib\", \"hyperparameters\": {\"eta\": 0.1}, \"switches\": "
          "{\"scaffold.bn_global\": \"previous\"}}", ONE_ROUND_TWO),
     "algorithm.switches.scaffold.bn_global",
     "scaffold.bn_global = previous keeps the global's batch-norm running "
     "statistics, but this model has no batch normalisation (no running_mean "
     "or running_var): drop the switch"},
    /* -- bn.aggregate under APFL (ref/algorithms/apfl.c, apfl_round_keep):
     * PFLlib's exchange, read for apfl.variant = pfllib only (row I14) -- */
    {"I14", "apfl: bn.aggregate = parameters_only under apfl.variant = paper",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"apfl\", "
          "\"hyperparameters\": {\"eta\": 0.1, \"alpha\": 0.5}, \"switches\": "
          "{\"bn.running\": \"frozen\", \"bn.aggregate\": \"parameters_only\"}}",
          ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only is PFLlib's exchange of APFL's w_i "
     "(clientapfl.py with serverbase.py), read under apfl.variant = pfllib "
     "only"},
    /* -- bn.aggregate under FedRoD (ref/algorithms/fedrod.c): the preset
     * pfllib sets parameters_only, harmless on a model without batch
     * normalisation; given explicitly there it is refused (row I15) -- */
    {"I15", "fedrod: bn.aggregate = parameters_only on a model without batch normalisation",
     SPEC(MOON_MLP, MOON_DATA, "\"algorithm\": {\"name\": \"fedrod\", "
          "\"preset\": \"pfllib\", \"hyperparameters\": {\"eta\": 0.1}, "
          "\"switches\": {\"bn.aggregate\": \"parameters_only\"}}", ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only keeps each client's batch-norm running "
     "statistics, but this model has no batch normalisation (no running_mean or "
     "running_var): drop the switch"},
    /* -- bn.aggregate under Per-FedAvg (ref/algorithms/perfedavg.c,
     * perfedavg_round_keep): the same refusal on a model without batch
     * normalisation, the preset pfllib's setting being harmless there
     * (row I16) -- */
    {"I16", "perfedavg: bn.aggregate = parameters_only on a model without batch normalisation",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"perfedavg\", "
          "\"hyperparameters\": {\"alpha\": 0.1, \"beta\": 0.2}, "
          "\"switches\": {\"bn.aggregate\": \"parameters_only\"}}",
          ONE_ROUND_TWO),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only keeps each client's batch-norm running "
     "statistics, but this model has no batch normalisation"},
    /* -- bn.aggregate under FedALA (ref/algorithms/fedala.c): the presets
     * set parameters_only, harmless on a model without batch
     * normalisation, given explicitly there it is refused (row I17); a
     * model with batch normalisation needs it (I24); p counts parameter
     * tensors, not the running statistics (I25) -- */
    {"I17", "fedala: bn.aggregate = parameters_only on a model without batch normalisation",
     SPEC(MOON_MLP, MOON_DATA, "\"algorithm\": {\"name\": \"fedala\", "
          "\"preset\": \"pfllib\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"fedala.eta\": 0.5, \"fedala.s\": 100, \"fedala.p\": 1}, "
          "\"switches\": {\"bn.aggregate\": \"parameters_only\"}}",
          ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only keeps each client's batch-norm running "
     "statistics, but this model has no batch normalisation"},
    {"I18", "fedpac: bn.aggregate = parameters_only on a model without batch normalisation",
     SPEC(MOON_MLP, MOON_DATA, "\"algorithm\": {\"name\": \"fedpac\", "
          "\"hyperparameters\": {\"eta\": 0.1, \"fedpac.lambda\": 0.5, "
          "\"fedpac.eta_phi\": 0.2, \"fedpac.tau_phi\": 1}, "
          "\"switches\": {\"bn.aggregate\": \"parameters_only\"}}",
          ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only keeps each client's batch-norm running "
     "statistics, but this model has no batch normalisation (no running_mean "
     "or running_var): drop the switch"},
    /* -- bn.aggregate on a model without batch normalisation under MOON
     * (I19) and FedDyn (I20) -- */
    {"I19", "moon: bn.aggregate = parameters_only on a model without batch normalisation",
     SPEC(MOON_MLP, MOON_DATA, MOON_HYP("\"moon.mu\": 0.5, \"moon.tau\": "
          "0.5}, \"switches\": {\"bn.aggregate\": \"parameters_only\""),
          ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only keeps each client's batch-norm running "
     "statistics, but this model has no batch normalisation (no running_mean "
     "or running_var): drop the switch"},
    {"I20", "feddyn: bn.aggregate = parameters_only on a model without batch normalisation",
     SPEC(LIN, TWO, "\"algorithm\": {\"name\": \"feddyn\", "
          "\"hyperparameters\": {\"eta\": 0.1, \"feddyn.alpha\": 0.5}, "
          "\"switches\": {\"bn.aggregate\": \"parameters_only\"}}",
          ONE_ROUND_TWO),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate = parameters_only keeps each client's batch-norm running "
     "statistics, but this model has no batch normalisation (no running_mean "
     "or running_var): drop the switch"},
    {"I21", "fedamp: batch normalisation under an explicit bn.aggregate = average",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"fedamp\", \"preset\": "
          "\"pfllib\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"fedamp.alpha_k\": 0.3, \"fedamp.lambda\": 0.2, "
          "\"fedamp.sigma\": 0.5}, \"switches\": {\"bn.aggregate\": "
          "\"average\"}}", ONE_ROUND),
     "model",
     "fedamp: a model with batch normalisation needs bn.aggregate = "
     "parameters_only (PFLlib's reading: distances, messages and the "
     "proximal term over parameters(), each client's running statistics "
     "its own)"},
    {"I22", "apple: batch normalisation under an explicit bn.aggregate = average",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"apple\", \"preset\": "
          "\"pfllib\", \"hyperparameters\": {\"eta\": 0.1, \"eta_p\": 0.1, "
          "\"apple.mu\": 0.1, \"apple.L\": 2}, \"switches\": "
          "{\"bn.aggregate\": \"average\"}}", ONE_ROUND),
     "model",
     "apple: a model with batch normalisation needs bn.aggregate = "
     "parameters_only (PFLlib's reading: w_p = Σ_j p_ij w_j over "
     "parameters(), each client's running statistics its own)"},
    {"I23", "fedproto: bn.aggregate, which has nothing to act on under FedProto",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"fedproto\", "
          "\"hyperparameters\": {\"eta\": 0.1, \"fedproto.lambda\": 0.5}, "
          "\"switches\": {\"bn.aggregate\": \"average\"}}", ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate does not apply to fedproto: fedproto's clients exchange "
     "prototypes, never a model, so every client keeps its own running "
     "statistics whatever the switch would say"},
    /* -- FedALA with batch normalisation (ref/algorithms/fedala.c): only
     * under bn.aggregate = parameters_only (I24); under fedala.p_unit =
     * tensors p counts I_BN's 5 parameter tensors, not its 7 blocks (I25);
     * every ALA batch a training-mode pass over two samples or more (I26)
     * -- */
    {"I24", "fedala: batch normalisation under an explicit bn.aggregate = average",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"fedala\", \"preset\": "
          "\"pfllib\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"fedala.eta\": 0.5, \"fedala.s\": 100, \"fedala.p\": 1}, "
          "\"switches\": {\"bn.aggregate\": \"average\"}}", ONE_ROUND),
     "model",
     "fedala: a model with batch normalisation needs bn.aggregate = "
     "parameters_only (the authors' and PFLlib's reading: ALA weighs "
     "parameters() only, each client's running statistics its own)"},
    {"I25", "fedala: p counting the running statistics as tensors",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"fedala\", \"preset\": "
          "\"pfllib\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"fedala.eta\": 0.5, \"fedala.s\": 100, \"fedala.p\": 6}}",
          ONE_ROUND),
     "algorithm.hyperparameters.fedala.p",
     "fedala.p = 6 must be in [0, 5], the model's parameter tensors (0: "
     "all)"},
    {"I26", "fedala: a one-sample batch in D_i^s with batch normalisation",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"fedala\", \"preset\": "
          "\"pfllib\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"fedala.eta\": 0.5, \"fedala.s\": 100, \"fedala.p\": 1}}",
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]]}, "
                "{\"clients\": [0], \"batches\": [[[0, 1]]], "
                "\"personal\": [[[0], [1]]]}")),
     "schedule.rounds[1].personal[0]",
     "ALA batch 1 of client 0 holds one sample: with batch normalisation "
     "ALA's training-mode pass normalises over one entry per channel "
     "(PyTorch's train() refuses it)"},
    /* -- FedPAC with batch normalisation (ref/algorithms/fedpac.c,
     * check_model and the steps' training passes): what it still refuses
     * -- */
#define PAC_HYP "\"algorithm\": {\"name\": \"fedpac\", \"hyperparameters\": " \
    "{\"eta\": 0.1, \"fedpac.lambda\": 0.5, \"fedpac.eta_phi\": 0.2, " \
    "\"fedpac.tau_phi\": 1}}"
#define PAC_BN LAYERS("[16]", "cross_entropy", "{\"type\": \"dense\", " \
    "\"out\": 2}, {\"type\": \"batchnorm1d\"}, {\"type\": \"dense\", " \
    "\"out\": 2}")
    {"I27", "fedpac: the mlp's bn option",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 16, \"h\": 2, \"k\": 2, "
          "\"bn\": true}", IMG2, PAC_HYP, ONE_ROUND),
     "model.bn",
     "fedpac takes batch normalisation as batchnorm1d/batchnorm2d layers of "
     "a layer list, not as the mlp's bn option"},
    {"I28", "fedpac: a training pass of one sample under the unbiased running variance",
     SPEC(PAC_BN, IMG2, PAC_HYP,
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1], [1]]]}")),
     "schedule",
     "running statistics at round 0, client 0, step 2"},
#undef PAC_BN
#undef PAC_HYP
    {"I29", "moon: batch normalisation, a one-sample batch under the unbiased running variance",
     SPEC(I_BN, IMG2, MOON_HYP("\"moon.mu\": 0, \"moon.tau\": 0.5"),
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1], [1]]]}")),
     "schedule",
     "running statistics at round 0, client 0, step 2: layer 1 normalises "
     "over one entry: no unbiased variance"},
    {"I30", "moon: moon.passes = train on a model without batch normalisation",
     SPEC(MOON_MLP, MOON_DATA, MOON_HYP("\"moon.mu\": 0.5, \"moon.tau\": "
          "0.5}, \"switches\": {\"moon.passes\": \"train\""),
          ONE_ROUND),
     "algorithm.switches.moon.passes",
     "moon.passes = train runs z_glob's and z_prev's batch normalisation on "
     "the batch's statistics, but this model has no batch normalisation"},
    {"I31", "fedproto: batch normalisation in an mlp",
     SPEC("\"model\": {\"kind\": \"mlp\", \"d\": 2, \"h\": 2, \"k\": 2, "
          "\"bn\": true}", MOON_DATA, "\"algorithm\": {\"name\": "
          "\"fedproto\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"fedproto.lambda\": 0.5}}", ONE_ROUND),
     "model.bn", "fedproto takes batch normalisation in a layer list's body"},
    /* -- schedule.rounds[t].first_upload under an algorithm that keeps no
     * global model (ref/engine/bn_own.c, pflref_bn_no_first_upload; one
     * check, called by fedamp_check and apple_check: I32, by
     * fedfomo_check: I33) -- */
    {"I32", "fedamp, apple: first_upload, with no global model to take it",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"fedamp\", \"preset\": "
          "\"pfllib\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"fedamp.alpha_k\": 0.3, \"fedamp.lambda\": 0.2, "
          "\"fedamp.sigma\": 0.5}}",
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]]}, "
                "{\"clients\": [0], \"batches\": [[[0, 1]]], "
                "\"first_upload\": 0}")),
     "schedule.rounds[1].first_upload",
     "first_upload picks the client whose running statistics the new global "
     "takes, but fedamp keeps no global model (each message u_i^k takes "
     "client i's own running statistics"},
    {"I33", "fedfomo: first_upload, with no global model to take it",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"fedfomo\", \"preset\": "
          "\"pfllib\", \"hyperparameters\": {\"eta\": 0.1}}",
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]], "
                "\"first_upload\": 0}")),
     "schedule.rounds[0].first_upload",
     "first_upload picks the client whose running statistics the new global "
     "takes, but fedfomo keeps no global model (φ_i^t takes client i's own "
     "running statistics"},
    /* -- bn.aggregate under the algorithms no library runs with a
     * parameters()-only exchange (ref/io/spec_bn.c's refusals) -- */
    {"I34", "ifca: bn.aggregate, which no library's IFCA reads",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"ifca\", "
          "\"hyperparameters\": {\"gamma\": 0.1, \"ifca.k\": 2}, "
          "\"switches\": {\"ifca.mode\": \"model\", \"bn.aggregate\": "
          "\"parameters_only\"}}", ONE_ROUND),
     "algorithm.switches.bn.aggregate",
     "bn.aggregate does not apply to ifca: no library code exchanges "
     "parameters() only for ifca (PFLlib ships no ifca server), so its "
     "running statistics stay entries of the models it moves "
     "(docs/models.md), and the authors' code sends tf.trainable_variables() "
     "where its moving statistics never move"},
    /* -- schedule.rounds[t].first_upload under scaffold.bn_global =
     * previous, where x keeps the previous x's running statistics
     * (scaffold_check, ref/algorithms/scaffold.c) -- */
    {"I35", "scaffold: first_upload under scaffold.bn_global = previous",
     SPEC(I_BN, IMG2, "\"algorithm\": {\"name\": \"scaffold\", \"preset\": "
          "\"pfllib\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"scaffold.eta_g\": 0.75}, \"switches\": "
          "{\"scaffold.bn_global\": \"previous\"}}",
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]], "
                "\"first_upload\": 0}")),
     "schedule.rounds[0].first_upload",
     "first_upload picks the client whose running statistics the new global "
     "takes, but scaffold under scaffold.bn_global = previous takes no "
     "uploader's (x keeps the previous x's running statistics"},
#undef I_BN
/* dropout in the phase after training (docs/models.md, "Dropout"): the MLP
 * of the U rows under finetune, one round of client 0 with its mask, then
 * the post phase: client 0 one step on both samples, client 1 one step on
 * its sample; the masks in schedule.post_dropout */
#define K_MLP LAYERS("[2]", "squared", "{\"type\": \"dense\", \"out\": 3}, " \
    "{\"type\": \"dropout\", \"name\": \"d\", \"p\": 0.25}, " DENSE1)
#define K_FT HYP("finetune", "\"eta\": 0.1, \"eta_ft\": 0.2")
#define K_OK "{\"d\": [[1, 0, 1], [0, 1, 1]]}"
#define K_OK1 "{\"d\": [[1, 1, 0]]}"
#define K_ROUND "{\"clients\": [0], \"batches\": [[[0, 1]]], \"dropout\": [[" K_OK "]]}"
#define K_SCHED(pd) "\"schedule\": {\"kind\": \"given\", \"rounds\": [" K_ROUND "], " \
    "\"post\": [[[0, 1]], [[0]]]" pd "}"
#define K_PD(lists) ", \"post_dropout\": [" lists "]"
#define K_IFCA(mode) "\"algorithm\": {\"name\": \"ifca\", \"hyperparameters\": " \
    "{\"gamma\": 0.1, \"ifca.k\": 2}, \"switches\": {\"ifca.mode\": \"model\", " \
    "\"ifca.estimate_mode\": \"" mode "\"}}"
#define K_IFCA_ROUND(list) "{\"clients\": [0], \"batches\": [[[0, 1], [0, 1]]], " \
    "\"dropout\": [" list "]}"
    {"K6", "post dropout: a post phase without masks",
     SPEC(K_MLP, TWO, K_FT, K_SCHED("")), "schedule.post_dropout",
     "post phase, client 0, training pass 1 (of 2 samples): no dropout mask given for layer "
     "\"d\" (0 passes given)"},
    {"K7", "post dropout: a client given fewer passes than its steps make",
     SPEC(K_MLP, TWO, K_FT, K_SCHED(K_PD("[" K_OK "], []"))), "schedule.post_dropout[1]",
     "post phase, client 1, training pass 1 (of 1 samples): no dropout mask given for layer "
     "\"d\" (0 passes given)"},
    {"K8", "post dropout: passes left unused",
     SPEC(K_MLP, TWO, K_FT, K_SCHED(K_PD("[" K_OK ", " K_OK "], [" K_OK1 "]"))),
     "schedule.post_dropout[0]",
     "post phase, client 0 made 1 training passes, 2 given: every pass's masks must be used"},
    {"K9", "post dropout: a mask of another batch size than its pass",
     SPEC(K_MLP, TWO, K_FT, K_SCHED(K_PD("[" K_OK "], [" K_OK "]"))),
     "schedule.post_dropout[1]",
     "post phase, client 1, training pass 1: the masks have 2 rows, the pass's batch 1 "
     "samples"},
    {"K10", "post dropout: a mask row of the wrong width",
     SPEC(K_MLP, TWO, K_FT, K_SCHED(K_PD("[{\"d\": [[1, 0], [0, 1]]}], [" K_OK1 "]"))),
     "schedule.post_dropout[0][0].d[0]",
     "a row of layer \"d\"'s mask has 2 entries: its input has 3 per sample"},
    {"K11", "post dropout: a mask entry other than 0 or 1",
     SPEC(K_MLP, TWO, K_FT, K_SCHED(K_PD("[{\"d\": [[1, 0, 1], [0, 1, 3]]}], [" K_OK1 "]"))),
     "schedule.post_dropout[0][0].d[1][2]", "a mask entry is 0 (dropped) or 1 (kept), not 3"},
    {"K12", "post dropout: a mask for a layer that is not a dropout layer",
     SPEC(K_MLP, TWO, K_FT,
          K_SCHED(K_PD("[{\"d\": [[1, 0, 1], [0, 1, 1]], \"e\": [[1]]}], [" K_OK1 "]"))),
     "schedule.post_dropout[0][0].e", "no dropout layer is named \"e\""},
    {"K13", "post dropout: mask lists not one per client",
     SPEC(K_MLP, TWO, K_FT, K_SCHED(K_PD("[" K_OK "]"))), "schedule.post_dropout",
     "1 mask lists for 2 clients"},
    {"K14", "post dropout: masks without a post phase",
     SPEC(K_MLP, TWO, FEDAVG,
          "\"schedule\": {\"kind\": \"given\", \"rounds\": [" K_ROUND "]" K_PD("[], []") "}"),
     "schedule.post_dropout",
     "the schedule has no post phase (schedule.post): no training passes to give masks to"},
    {"K15", "post dropout: masks for a model without dropout",
     SPEC(LIN, TWO, K_FT,
          "\"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], "
          "\"batches\": [[[0, 1]]]}], \"post\": [[[0, 1]], [[0]]]" K_PD("[], []") "}"),
     "schedule.post_dropout", "the model has no dropout layer: no masks to give"},
    {"K16", "post dropout: a client's list that is not an array",
     SPEC(K_MLP, TWO, K_FT, K_SCHED(K_PD(K_OK ", [" K_OK1 "]"))), "schedule.post_dropout[0]",
     "expected an array, found an object"},
    {"K17", "dropout: apfl with output mixing (evaluation-mode passes)",
     SPEC(K_MLP, TWO,
          "\"algorithm\": {\"name\": \"apfl\", \"hyperparameters\": {\"eta\": 0.1, "
          "\"alpha\": 0.5}, \"switches\": {\"apfl.mix\": \"output\"}}",
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]], \"dropout\": [[" K_OK ", "
                K_OK "]]}")),
     "algorithm.switches.apfl.mix",
     "apfl.mix = output takes v's and w_i's outputs in evaluation-mode passes, which skip "
     "dropout layer \"d\" and take no mask"},
    /* IFCA under ifca.estimate_mode = eval: its estimates are evaluation
     * passes (no mask) and a participant's list holds one mask per local
     * step of LocalUpdate (ifca.mode = model).
     * K18 (until the switch, IFCA's refusal of any dropout; K20 then
     * refused dropout under train until the estimate lists): two local
     * steps, one mask */
    {"K18", "dropout: ifca (estimate_mode = eval) given fewer masks than its local steps",
     SPEC(K_MLP, TWO, K_IFCA("eval"), GIVEN(K_IFCA_ROUND("[" K_OK "]"))),
     "schedule.rounds[0].dropout[0]",
     "round 0, client 0, training pass 2 (of 2 samples): no dropout mask given for layer "
     "\"d\" (1 passes given)"},
    {"K19", "dropout: fedfomo given a mask for its local step only (its validation-loss pass "
     "takes the first)",
     SPEC(K_MLP, TWO,
          HYP("fedfomo", "\"eta\": 0.1, \"fedfomo.epsilon0\": 0.5, \"fedfomo.delta\": 0.125"),
          GIVEN(K_ROUND)),
     "schedule.rounds[0].dropout[0]",
     "round 0, client 0, training pass 2 (of 2 samples): no dropout mask given for layer "
     "\"d\" (1 passes given)"},
    /* K20 (until the estimate lists, IFCA's refusal of dropout under
     * estimate_mode = train): the local steps' masks alone, none for the
     * estimates; the first estimate passes are every client's before
     * round 0 */
    {"K20", "dropout: ifca under estimate_mode = train without its estimate passes' masks",
     SPEC(K_MLP, TWO, K_IFCA("train"), GIVEN(K_IFCA_ROUND("[" K_OK ", " K_OK "]"))),
     "schedule.init_partition_dropout",
     "before round 0: ifca.estimate_mode = train takes every client's reported assignment "
     "at the initial models θ_j^(0) in k = 2 training passes on the client's whole "
     "training set, one per cluster model (θ_0 first), which take dropout masks: give one "
     "list of k passes per client 0 .. N−1"},
    {"K21", "dropout: ifca (estimate_mode = eval) given masks for its k estimate passes too",
     SPEC(K_MLP, TWO, K_IFCA("eval"),
          GIVEN(K_IFCA_ROUND("[" K_OK ", " K_OK ", " K_OK ", " K_OK "]"))),
     "schedule.rounds[0].dropout[0]",
     "round 0, client 0 made 2 training passes, 4 given: every pass's masks must be used"},
    /* IFCA under estimate_mode = train: the estimate passes' masks, k = 2
     * passes a client of its n_i rows (client 0: 2, client 1: 1), from
     * init_partition_dropout (every client, before round 0), the round's
     * estimate_dropout (its participant, client 0) and partition_dropout
     * (every client); checked when the spec is read */
#define K_EST0 "[" K_OK ", " K_OK "]"
#define K_EST1 "[" K_OK1 ", " K_OK1 "]"
#define K_INIT ", \"init_partition_dropout\": [" K_EST0 ", " K_EST1 "]"
#define K_ESTL(x) ", \"estimate_dropout\": [" x "]"
#define K_PARTL(x) ", \"partition_dropout\": [" x "]"
#define K_TR(lists) "{\"clients\": [0], \"batches\": [[[0, 1], [0, 1]]], " \
    "\"dropout\": [[" K_OK ", " K_OK "]]" lists "}"
#define K_TRAIN(r, init) "\"schedule\": {\"kind\": \"given\", \"rounds\": [" r "]" \
    init "}"
    {"K22", "dropout: ifca (estimate_mode = train) without the masks of a round's estimates",
     SPEC(K_MLP, TWO, K_IFCA("train"),
          K_TRAIN(K_TR(K_PARTL(K_EST0 ", " K_EST1)), K_INIT)),
     "schedule.rounds[0].estimate_dropout",
     "round 0: ifca.estimate_mode = train takes each participant's estimate ĵ = argmin_j "
     "F_i(θ_j) at the round's start in k = 2 training passes on the client's whole "
     "training set, one per cluster model (θ_0 first), which take dropout masks: give one "
     "list of k passes per participant (clients[j])"},
    {"K23", "dropout: ifca (estimate_mode = train) given fewer estimate passes than ifca.k",
     SPEC(K_MLP, TWO, K_IFCA("train"),
          K_TRAIN(K_TR(K_ESTL("[" K_OK "]") K_PARTL(K_EST0 ", " K_EST1)), K_INIT)),
     "schedule.rounds[0].estimate_dropout[0]",
     "round 0, client 0: 1 estimate passes given for ifca.k = 2 cluster models (one pass "
     "per θ_j, θ_0 first)"},
    {"K24", "dropout: ifca (estimate_mode = train) given more estimate passes than ifca.k",
     SPEC(K_MLP, TWO, K_IFCA("train"),
          K_TRAIN(K_TR(K_ESTL(K_EST0)
                       K_PARTL(K_EST0 ", [" K_OK1 ", " K_OK1 ", " K_OK1 "]")), K_INIT)),
     "schedule.rounds[0].partition_dropout[1]",
     "round 0, client 1: 3 estimate passes given for ifca.k = 2 cluster models (one pass "
     "per θ_j, θ_0 first)"},
    {"K25", "dropout: ifca (estimate_mode = train) an estimate mask whose rows are not the "
     "training set's size",
     SPEC(K_MLP, TWO, K_IFCA("train"),
          K_TRAIN(K_TR(K_ESTL(K_EST0) K_PARTL(K_EST0 ", " K_EST1)),
                  ", \"init_partition_dropout\": [" K_EST0 ", [" K_OK1 ", " K_OK "]]")),
     "schedule.init_partition_dropout[1][1].d",
     "before round 0, client 1, estimate pass 2 (cluster model θ_1): 2 mask rows, but the "
     "estimate scores the client's whole training set of 1 samples"},
    {"K26", "dropout: ifca (estimate_mode = eval) given masks for its estimates",
     SPEC(K_MLP, TWO, K_IFCA("eval"), K_TRAIN(K_TR(K_ESTL(K_EST0)), "")),
     "schedule.rounds[0].estimate_dropout",
     "ifca.estimate_mode = eval takes its estimates ĵ = argmin_j F_i(θ_j) in evaluation "
     "passes, which take no mask: give none (or ifca.estimate_mode = train)"},
    {"K27", "dropout: ifca (estimate_mode = train) without the masks of a round's reported "
     "assignment",
     SPEC(K_MLP, TWO, K_IFCA("train"), K_TRAIN(K_TR(K_ESTL(K_EST0)), K_INIT)),
     "schedule.rounds[0].partition_dropout",
     "round 0: ifca.estimate_mode = train takes every client's reported assignment after "
     "the server update (record partition) in k = 2 training passes on the client's whole "
     "training set, one per cluster model (θ_0 first), which take dropout masks: give one "
     "list of k passes per client 0 .. N−1"},
    {"K28", "dropout: estimate masks for an algorithm that makes no estimate passes",
     SPEC(K_MLP, TWO, FEDAVG,
          GIVEN("{\"clients\": [0], \"batches\": [[[0, 1]]], \"dropout\": [[" K_OK "]]"
                K_ESTL(K_EST0) "}")),
     "schedule.rounds[0].estimate_dropout",
     "fedavg makes no estimate passes: only ifca under ifca.estimate_mode = train takes "
     "these masks"},
    {"K29", "dropout: ifca (estimate_mode = train) estimate lists not one per participant",
     SPEC(K_MLP, TWO, K_IFCA("train"),
          K_TRAIN(K_TR(K_ESTL(K_EST0 ", " K_EST1) K_PARTL(K_EST0 ", " K_EST1)), K_INIT)),
     "schedule.rounds[0].estimate_dropout", "2 mask lists for 1 clients"},
#undef K_EST0
#undef K_EST1
#undef K_INIT
#undef K_ESTL
#undef K_PARTL
#undef K_TR
#undef K_TRAIN
#undef K_IFCA
#undef K_IFCA_ROUND
#undef K_MLP
#undef K_FT
#undef K_OK
#undef K_OK1
#undef K_ROUND
#undef K_SCHED
#undef K_PD
};

#define N_LETTERED (sizeof LETTERED / sizeof LETTERED[0])

START_TEST(test_lettered_class)
{
    const lettered_case *l = &LETTERED[_i];
    const cli_case c = {.no = 0, .name = l->name, .args = RUN, .in = l->in,
                        .exit = 2, .where = l->where, .what = l->what};
    check_cli_case(&c);
}
END_TEST

/* Every lettered row is in docs/bad-inputs.md with its class and test,
 * and each letter's rows run 1 .. n without a gap. */
/* Letter K's rows K1..K5 are the Monte Carlo options' (tests/test_cli.c,
 * test_mca_options_refused); the dropout rows continue the sequence. */
static const tu_catalogue_row K_BEFORE[] = {
    {"K1", "check: Monte Carlo run count out of 1 .. 64", "test_mca_options_refused"},
    {"K2", "check: Monte Carlo run count not a count", "test_mca_options_refused"},
    {"K3", "check: Monte Carlo factor C out of 1 .. 1e6", "test_mca_options_refused"},
    {"K4", "check: Monte Carlo factor C not a number", "test_mca_options_refused"},
    {"K5", "check: Monte Carlo seed not a count", "test_mca_options_refused"},
};
#define N_K_BEFORE (sizeof K_BEFORE / sizeof K_BEFORE[0])

START_TEST(test_lettered_catalogue)
{
    static const char letters[] = "LSAYCXQMJEBGHVIUZK";
    for (const char *ltr = letters; *ltr != '\0'; ltr++) {
        tu_catalogue_row rows[N_LETTERED + N_K_BEFORE];
        size_t n = 0;
        for (size_t i = 0; *ltr == 'K' && i < N_K_BEFORE; i++)
            rows[n++] = K_BEFORE[i];
        for (size_t i = 0; i < N_LETTERED; i++)
            if (LETTERED[i].no[0] == *ltr) {
                ck_assert_int_eq(atoi(LETTERED[i].no + 1), (int)n + 1);
                rows[n++] = (tu_catalogue_row){LETTERED[i].no, LETTERED[i].name,
                                               "test_lettered_class"};
            }
        tu_assert_catalogue(rows, n, *ltr);
    }
}
END_TEST

/* ---- the C API classes -------------------------------------------------- */

/* The C API classes, numbered after the command-line ones. */
typedef struct {
    int no;
    const char *name;
    const char *test;
} api_class;

static const api_class API_CLASSES[] = {
    {103, "sampler: m > N or m = 0", "test_api_sampler_m"},
    {104, "sampler: NULL sampler or output, N > N_max", "test_api_sampler_args"},
    {105, "sampler: seed outside 1 .. 2^32 - 1", "test_api_sampler_seed"},
    {106, "random draws: NULL array, negative scale", "test_api_draws"},
    {107, "model: zero size, P beyond the limit", "test_api_model_sizes"},
    {108, "data: NaN or Inf in X or y", "test_api_data_not_finite"},
    {109, "data: no samples, label not a class", "test_api_data_shape"},
    {110, "run: NULL argument", "test_api_run_null"},
    {111, "schedule: duplicate or out-of-range client ids", "test_api_schedule_ids"},
    {112, "schedule generation: m > N", "test_api_schedule_m"},
    {113, "summary: no clients, NaN value, negative weight", "test_api_metrics"},
    {114, "files: missing file, folder", "test_api_read_file"},
    {115, "hyperparameter: NaN or below its bound", "test_api_hyper"},
    {116, "check: malformed candidate or vector", "test_api_golden_check"},
    {117, "result metric: label or metric missing", "test_api_read_metric"},
};

#define N_API_CLASSES (sizeof API_CLASSES / sizeof API_CLASSES[0])

/* 103 */
START_TEST(test_api_sampler_m)
{
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_GSL, 5);
    ck_assert_ptr_nonnull(s);
    size_t chosen[6];
    pflref_error err;
    pflref_error_clear(&err);
    ck_assert_int_eq(pflref_sampler_choose(s, 7, 5, 6, chosen, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
    ck_assert_msg(strstr(err.message, "m = 6 exceeds N = 5") != NULL, "%s",
                  err.message);
    pflref_error_clear(&err);
    ck_assert_int_eq(pflref_sampler_choose(s, 7, 5, 0, chosen, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "m");
    pflref_sampler_free(s);
}
END_TEST

/* 104 */
START_TEST(test_api_sampler_args)
{
    size_t chosen[4];
    pflref_error err;
    ck_assert_int_eq(pflref_sampler_choose(NULL, 7, 4, 2, chosen, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "s");
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_NUMPY_LEGACY, 3);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(pflref_sampler_choose(s, 7, 3, 2, NULL, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "chosen");
    ck_assert_int_eq(pflref_sampler_choose(s, 7, 4, 2, chosen, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "N");
    pflref_sampler_free(s);
}
END_TEST

/* 105 */
START_TEST(test_api_sampler_seed)
{
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_NUMPY_LEGACY, 4);
    ck_assert_ptr_nonnull(s);
    size_t chosen[2];
    pflref_error err;
    ck_assert_int_eq(pflref_sampler_choose(s, 0, 4, 2, chosen, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "seed");
    ck_assert_int_eq(pflref_sampler_choose(s, PFLREF_SEED_MAX + 1UL, 4, 2,
                                           chosen, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "seed");
    pflref_sampler_free(s);
}
END_TEST

/* 106 */
START_TEST(test_api_draws)
{
    pflref_error err;
    ck_assert_int_eq(pflref_shuffle(3, NULL, 4, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "perm");
    double x[3] = {2.385, 2.385, 2.385};
    ck_assert_int_eq(pflref_draw_gaussian(3, -0.5, x, 3, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "sd");
    ck_assert_int_eq(pflref_draw_uniform(3, NAN, x, 3, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "scale");
    /* refused before anything was drawn */
    for (size_t i = 0; i < 3; i++)
        ck_assert_double_eq(x[i], 2.385);
}
END_TEST

/* 107 */
START_TEST(test_api_model_sizes)
{
    pflref_model m;
    pflref_error err;
    ck_assert_int_eq(pflref_model_init(&m, PFLREF_MODEL_LINEAR,
                                       PFLREF_LOSS_SQUARED, 0, 1, 0, 0, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "d");
    /* 10^6 × 10^6 hidden weights: refused by arithmetic, not by malloc */
    ck_assert_int_eq(pflref_model_init_mlp(&m, PFLREF_LOSS_CROSS_ENTROPY,
                                           1000000, 2, 1000000,
                                           PFLREF_ACT_RELU, 1, 1, &err),
                     PFLREF_ENOMEM);
    ck_assert_str_eq(err.where, "P");
    /* d·k overflows size_t */
    ck_assert_int_eq(pflref_model_init(&m, PFLREF_MODEL_SOFTMAX,
                                       PFLREF_LOSS_CROSS_ENTROPY,
                                       (size_t)1 << 40, (size_t)1 << 40, 0, 0,
                                       &err),
                     PFLREF_ENOMEM);
    ck_assert_str_eq(err.where, "P");
}
END_TEST

/* 108 */
START_TEST(test_api_data_not_finite)
{
    pflref_model m;
    pflref_error err;
    ck_assert_int_eq(pflref_model_init(&m, PFLREF_MODEL_LINEAR,
                                       PFLREF_LOSS_SQUARED, 2, 1, 0, 0, &err),
                     PFLREF_OK);
    double X[4] = {1.0, NAN, 3.0, 4.0}, y[2] = {1.0, 2.0};
    pflref_data D = {2, X, y, NULL, NULL};
    ck_assert_int_eq(pflref_data_validate(&m, &D, "clients[0].train", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[0].train.X[0][1]");
    X[1] = 2.0;
    y[1] = -INFINITY;
    ck_assert_int_eq(pflref_data_validate(&m, &D, "clients[0].train", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[0].train.y[1]");
    /* the quadratic model: a curvature that is Inf */
    pflref_model q;
    ck_assert_int_eq(pflref_model_init(&q, PFLREF_MODEL_QUADRATIC,
                                       PFLREF_LOSS_QUADRATIC, 2, 1, 0, 0,
                                       &err),
                     PFLREF_OK);
    double a[2] = {1.5, INFINITY}, c[2] = {0.0, 0.0};
    pflref_data Q = {1, NULL, NULL, a, c};
    ck_assert_int_eq(pflref_data_validate(&q, &Q, "clients[3].train", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[3].train.a[1]");
}
END_TEST

/* 109 */
START_TEST(test_api_data_shape)
{
    pflref_model m;
    pflref_error err;
    ck_assert_int_eq(pflref_model_init(&m, PFLREF_MODEL_SOFTMAX,
                                       PFLREF_LOSS_CROSS_ENTROPY, 2, 3, 0, 1,
                                       &err),
                     PFLREF_OK);
    double X[2] = {1.0, 2.0}, y[1] = {3.0};
    pflref_data empty = {0, X, y, NULL, NULL};
    ck_assert_int_eq(pflref_data_validate(&m, &empty, "clients[1].test", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[1].test.n");
    pflref_data D = {1, X, y, NULL, NULL};
    ck_assert_int_eq(pflref_data_validate(&m, &D, "clients[1].train", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[1].train.y[0]");
    ck_assert_int_eq(pflref_data_validate(&m, NULL, "clients[1].train", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "clients[1].train");
}
END_TEST

static const char RUN_SPEC[] =
    "{" FMT ", " QUAD1 ", \"problem\": {\"clients\": [{\"a\": [1.5], \"c\": [2.385]}]},"
    " \"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.5}},"
    " \"schedule\": {\"kind\": \"generate\", \"rounds\": 1, \"local\": {\"steps\": 1}}}";

/* 110 */
START_TEST(test_api_run_null)
{
    pflref_spec *spec = tu_spec(RUN_SPEC);
    pflref_run_result *res = (pflref_run_result *)&res;   /* not NULL */
    pflref_error err;
    ck_assert_int_eq(pflref_run(NULL, spec->algorithm, &spec->hyper,
                                spec->schedule, spec->w0, NULL, &res, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "problem");
    ck_assert_ptr_null(res);
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                NULL, spec->w0, NULL, &res, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule");
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                spec->schedule, NULL, NULL, &res, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "w0");
    ck_assert_ptr_null(res);
    /* initial parameters that are not finite (checked after the memory
     * estimate, engine/run.c run_prepare) */
    spec->w0[0] = NAN;
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                spec->schedule, spec->w0, NULL, &res, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "init");
    ck_assert_ptr_null(res);
    spec->w0[0] = 0.0;
    ck_assert_int_eq(pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                spec->schedule, spec->w0, NULL, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "out");
    pflref_spec_free(spec);
}
END_TEST

/* 111 */
START_TEST(test_api_schedule_ids)
{
    pflref_schedule *s = pflref_schedule_alloc(1, 3, 0);
    ck_assert_ptr_nonnull(s);
    pflref_error err;
    pflref_round_plan *r = &s->rounds[0];
    ck_assert_int_eq(pflref_round_plan_alloc(r, 2, &err), PFLREF_OK);
    for (size_t j = 0; j < 2; j++) {
        ck_assert_int_eq(pflref_batches_alloc(&r->batches[j], 1, 1, &err),
                         PFLREF_OK);
        r->batches[j].step_off[1] = 1;
        r->batches[j].idx[0] = 0;
    }
    const size_t n[3] = {2, 2, 2};
    /* a duplicate id */
    r->clients[0] = r->clients[1] = 1;
    memcpy(r->selected, r->clients, 2 * sizeof *r->clients);
    memcpy(r->drawn, r->clients, 2 * sizeof *r->clients);
    ck_assert_int_eq(pflref_schedule_validate(s, n, 3, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule.rounds[0].clients[1]");
    /* an id >= N */
    r->clients[0] = 0;
    r->clients[1] = 3;
    memcpy(r->selected, r->clients, 2 * sizeof *r->clients);
    memcpy(r->drawn, r->clients, 2 * sizeof *r->clients);
    ck_assert_int_eq(pflref_schedule_validate(s, n, 3, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule.rounds[0].clients[1]");
    /* valid ids, a sample index >= n */
    r->clients[1] = r->selected[1] = r->drawn[1] = 2;
    r->batches[1].idx[0] = 2;
    ck_assert_int_eq(pflref_schedule_validate(s, n, 3, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule.rounds[0].batches[1][0][0]");
    r->batches[1].idx[0] = 1;
    ck_assert_int_eq(pflref_schedule_validate(s, n, 3, &err), PFLREF_OK);
    pflref_schedule_free(s);
}
END_TEST

/* 112 */
START_TEST(test_api_schedule_m)
{
    pflref_schedule_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.T = 2;
    cfg.m = 4;
    cfg.client_seed = 5;
    cfg.batch_seed = 1;
    cfg.train.epochs = 1;
    const size_t n[3] = {2, 3, 4};
    pflref_schedule *s = (pflref_schedule *)&s;   /* not NULL */
    pflref_error err;
    ck_assert_int_eq(pflref_schedule_generate(&cfg, n, 3, &s, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "schedule.clients_per_round");
    ck_assert_ptr_null(s);
}
END_TEST

/* 113 */
START_TEST(test_api_metrics)
{
    double a[3] = {0.25, NAN, 2.385}, w[3] = {-1.0, 2.0, 3.0}, work[3];
    pflref_summary sum;
    pflref_error err;
    ck_assert_int_eq(pflref_metrics_summarize(a, NULL, 0,
                                              PFLREF_LOWER_IS_BETTER, work,
                                              &sum, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "N");
    ck_assert_int_eq(pflref_metrics_summarize(a, NULL, 3,
                                              PFLREF_LOWER_IS_BETTER, work,
                                              &sum, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "a[1]");
    a[1] = 1.5;
    ck_assert_int_eq(pflref_metrics_summarize(a, w, 3, PFLREF_LOWER_IS_BETTER,
                                              work, &sum, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "weights[0]");
}
END_TEST

/* 114 */
START_TEST(test_api_read_file)
{
    char *dir = tu_tmpdir();
    char *missing = tu_join(dir, "missing.json");
    char *text = (char *)&text;   /* not NULL */
    size_t len;
    pflref_error err;
    ck_assert_int_eq(pflref_read_file(missing, &text, &len, &err), PFLREF_EIO);
    ck_assert_str_eq(err.where, missing);
    ck_assert_ptr_null(text);
    ck_assert_int_eq(pflref_read_file(dir, &text, &len, &err), PFLREF_EIO);
    ck_assert_str_eq(err.where, dir);
    ck_assert_msg(strstr(err.message, "not a regular file") != NULL, "%s",
                  err.message);
    ck_assert_ptr_null(text);
    free(missing);
    rmdir(dir);
    free(dir);
}
END_TEST

/* 115 */
START_TEST(test_api_hyper)
{
    pflref_hyper h;
    pflref_hyper_defaults(&h);
    const pflref_param *eta = pflref_param_find("eta");
    const pflref_param *lambda = pflref_param_find("lambda");
    ck_assert_ptr_nonnull(eta);
    ck_assert_ptr_nonnull(lambda);
    pflref_error err;
    ck_assert_int_eq(pflref_hyper_set_real(&h, eta, NAN, "x.eta", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "x.eta");
    ck_assert_int_eq(pflref_hyper_set_real(&h, eta, 0.0, "x.eta", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "x.eta");
    ck_assert_int_eq(pflref_hyper_set_real(&h, lambda, -0.25, "x.lambda", &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "x.lambda");
    /* refused values leave the defaults (unset: NaN) */
    ck_assert(isnan(h.eta));
    ck_assert(isnan(h.lambda));
}
END_TEST

static const char MINI_VECTOR[] = MINI;

/* 116 */
START_TEST(test_api_golden_check)
{
    static const char *const bad[][2] = {
        {"{\"format\": \"pflref-result/1\", \"final\": {\"w\": [true]}}",
         "candidate:final.w[0]"},
        {"{\"format\": \"pflref-result/1\", \"final\": {\"w\": [2.0]}, \"extra\": 1}",
         "candidate:extra"},
        {"{\"format\": \"pflref-result/1\", \"outcome\": {\"class\": \"crashed\"}}",
         "candidate:outcome.class"},
    };
    pflref_check_options opt;
    memset(&opt, 0, sizeof opt);
    opt.same_id = 1;
    pflref_golden_report rep;
    pflref_error err;
    char *mini = tu_vector_hashed(MINI_VECTOR, 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(pflref_golden_check(mini, strlen(mini),
                                             NULL, bad[i][0],
                                             strlen(bad[i][0]), &opt, &rep,
                                             &err),
                         PFLREF_EINVAL);
        ck_assert_str_eq(err.where, bad[i][1]);
    }
    free(mini);
    /* a malformed vector: its paths start "expected:" */
    char *vec = tu_vector_hashed(VECTOR("", MINI_SPEC(QUAD1), TOL,
                                        "{\"final\": {\"w\": [2.0]},"
                                        " \"bogus\": 1}"), 0);
    const char *cand = "{\"format\": \"pflref-result/1\", \"final\": {\"w\": [2.0]}}";
    ck_assert_int_eq(pflref_golden_check(vec, strlen(vec), NULL, cand,
                                         strlen(cand), &opt, &rep, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "expected:expected.bogus");
    free(vec);
}
END_TEST

/* 117 */
START_TEST(test_api_read_metric)
{
    const char *text = RESULT3;
    double *values = (double *)&values;   /* not NULL */
    size_t N;
    pflref_summary sum;
    pflref_error err;
    ck_assert_int_eq(pflref_result_read_metric(text, strlen(text), "local",
                                               "test_mse", &values, &N, &sum,
                                               &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "metrics.local");
    ck_assert_ptr_null(values);
    ck_assert_int_eq(pflref_result_read_metric(text, strlen(text), "global",
                                               "test_accuracy", &values, &N,
                                               &sum, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "metrics.global");
    ck_assert_ptr_null(values);
    /* the same document, well asked */
    ck_assert_int_eq(pflref_result_read_metric(text, strlen(text), "global",
                                               "test_mse", &values, &N, &sum,
                                               &err),
                     PFLREF_OK);
    ck_assert_uint_eq(N, 3);
    ck_assert_double_eq(values[2], 1.5);
    free(values);
}
END_TEST

/* ---- the catalogue ------------------------------------------------------ */

/* docs/bad-inputs.md has a row "| N | class |" for every class here, and
 * the C API rows name their test; numbers run 1 .. N without a gap (the
 * hostile files and folders of tests/test_hostile.c follow from N + 1). */
START_TEST(test_catalogue_lists_every_class)
{
    char *path = tu_repo_path("docs/bad-inputs.md");
    char *doc = tu_read(path);
    ck_assert_msg(doc != NULL, "cannot read %s", path);
    char row[256];
    for (size_t i = 0; i < N_CLI_CASES; i++) {
        snprintf(row, sizeof row, "| %d | %s |", CLI_CASES[i].no,
                 CLI_CASES[i].name);
        ck_assert_msg(strstr(doc, row) != NULL, "the catalogue lacks \"%s\"",
                      row);
    }
    for (size_t i = 0; i < N_API_CLASSES; i++) {
        ck_assert_int_eq(API_CLASSES[i].no, (int)(N_CLI_CASES + i + 1));
        snprintf(row, sizeof row, "| %d | %s |", API_CLASSES[i].no,
                 API_CLASSES[i].name);
        ck_assert_msg(strstr(doc, row) != NULL, "the catalogue lacks \"%s\"",
                      row);
        ck_assert_msg(strstr(doc, API_CLASSES[i].test) != NULL,
                      "the catalogue does not name %s", API_CLASSES[i].test);
    }
    /* the rows after the last class here are tests/test_hostile.c's
     * (its test_hostile_catalogue checks them, and that none follows) */
    free(doc);
    free(path);
}
END_TEST

Suite *badinput_suite(void)
{
    Suite *s = suite_create("badinput");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_cli_class, 0, (int)N_CLI_CASES);
    suite_add_tcase(s, tc);
    tc = tcase_create("models");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_lettered_class, 0, (int)N_LETTERED);
    tcase_add_test(tc, test_lettered_catalogue);
    suite_add_tcase(s, tc);
    tc = tcase_create("api");
    tcase_add_test(tc, test_api_sampler_m);
    tcase_add_test(tc, test_api_sampler_args);
    tcase_add_test(tc, test_api_sampler_seed);
    tcase_add_test(tc, test_api_draws);
    tcase_add_test(tc, test_api_model_sizes);
    tcase_add_test(tc, test_api_data_not_finite);
    tcase_add_test(tc, test_api_data_shape);
    tcase_add_test(tc, test_api_run_null);
    tcase_add_test(tc, test_api_schedule_ids);
    tcase_add_test(tc, test_api_schedule_m);
    tcase_add_test(tc, test_api_metrics);
    tcase_add_test(tc, test_api_read_file);
    tcase_add_test(tc, test_api_hyper);
    tcase_add_test(tc, test_api_golden_check);
    tcase_add_test(tc, test_api_read_metric);
    tcase_add_test(tc, test_catalogue_lists_every_class);
    suite_add_tcase(s, tc);
    return s;
}
