/* dashboard_main.c - entry point of taskscope-dashboard, the executable that
 * `taskscope dashboard` runs (taskscope.c): a program of its own so that
 * only it loads libmicrohttpd and the TLS libraries behind it.  Its
 * arguments are those after `taskscope dashboard`. */
#include "cli.h"

int main(int argc, char **argv)
{
    return tscope_cli_dashboard(argc, argv);
}
