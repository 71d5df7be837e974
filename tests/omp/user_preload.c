/* user_preload.c - stands for a library the user preloads: it says that it
 * was loaded, so a test can check that `taskscope run` kept it. */
#include <errno.h>
#include <stdio.h>

__attribute__((constructor)) static void hello(void)
{
    fprintf(stderr, "user preload loaded into %s\n", program_invocation_short_name);
}
