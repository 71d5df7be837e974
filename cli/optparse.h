/* optparse.h - one parser for the options of every subcommand (optparse.c):
 * each subcommand describes its options in a table, saying what each
 * value may be, and the parser refuses a bad value, a missing one, an
 * unknown option, with one line each and the same words everywhere. */
#ifndef TSCOPE_CLI_OPTPARSE_H
#define TSCOPE_CLI_OPTPARSE_H

#include <stddef.h>

/* What a value may be: 0 when value is one, else -1; either way, what is
 * accepted, as a message says it ("a number >= 0"), into expected. */
typedef int (*tscope_cli_check_fn)(const char *value, char *expected, size_t len);

enum { TSCOPE_CLI_FLAG, TSCOPE_CLI_VALUE, TSCOPE_CLI_OPTIONAL };

struct tscope_cli_option {
    const char *name;          /* --NAME; NULL: only -KEY */
    int key;                   /* what the parser returns for it; a letter with letter set */
    int letter;                /* 1: -KEY names it too */
    int arg;                   /* TSCOPE_CLI_FLAG, _VALUE or _OPTIONAL (given as --NAME=V) */
    const char *value;         /* the value's name (N, KEY, DIR) */
    tscope_cli_check_fn check; /* what the value may be; NULL with var NULL: anything */
    const char *var;           /* or: what this TASKSCOPE_* variable takes (core/config.c) */
    int secret;                /* a bad value is not repeated in the message */
};
/* The table ends with an entry whose name and key are 0. */

/* What tscope_cli_getopt returns after it said why on stderr (one line):
 * the subcommand exits with status 2; after --list-options (the table,
 * for tests and completion, on stdout): with status 0. */
#define TSCOPE_CLI_BAD '?'
#define TSCOPE_CLI_LISTED (-2)
#define TSCOPE_CLI_STATUS(c) ((c) == TSCOPE_CLI_LISTED ? 0 : 2)

/* Stop at the first operand (run's PROGRAM, model's pairs). */
#define TSCOPE_CLI_STOP_AT_OPERAND 1

/* The next option of argv (getopt_long underneath: optind, optarg as it
 * sets them; the caller sets optind to 1 before the first call) for the
 * subcommand cmd ("run", "model compose"): its key with optarg checked, -1
 * after the last option, TSCOPE_CLI_BAD or TSCOPE_CLI_LISTED (above).
 * flags: 0 or TSCOPE_CLI_STOP_AT_OPERAND. */
int tscope_cli_getopt(const char *cmd, int argc, char **argv, const struct tscope_cli_option *opts,
                      int flags);

/* The checks several subcommands share (optparse.c). */
int tscope_cli_count(const char *v, char *expected, size_t len); /* a number >= 0 */

#endif
