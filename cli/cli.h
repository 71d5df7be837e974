/* cli.h - subcommands of the taskscope command-line tool. */
#ifndef TSCOPE_CLI_CLI_H
#define TSCOPE_CLI_CLI_H

#include "profile/profile.h"

/* Each returns the process exit status. */
int tscope_cli_run(int argc, char **argv);
int tscope_cli_report(int argc, char **argv);
int tscope_cli_model(int argc, char **argv);

/* Reads a JSON profile (a profile.json file, or a folder holding one).
 * On error returns NULL and writes a one-line message naming the file (and
 * line, for syntax errors) into err. */
struct tscope__profile *tscope_cli_profile_read(const char *path, char *err, size_t errlen);
/* Turns a checkpoint a killed program left into the outputs in outdir,
 * marked as ended by sig (recover.c); *as_of_s: when it was taken (-1 if
 * unknown).  0, or -1 with a message. */
int tscope_cli_recover(const char *outdir, const char *checkpoint, int sig, double *as_of_s);

#endif
