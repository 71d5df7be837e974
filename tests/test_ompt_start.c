/* test_ompt_start.c - the OMPT tool's answer to the runtime's offer, driven
 * directly (dlopen, as libomp does): an OMPT version older than OpenMP 5.0's
 * is refused with one line and a NULL result (the program then runs
 * unprofiled); a current one gets the tool's initialize/finalize pair. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

typedef struct {
    void *initialize, *finalize;
    unsigned long long tool_data;
} start_result_t;
typedef start_result_t *(*start_tool_fn)(unsigned int, const char *);

int main(void)
{
    const char *build = getenv("TSCOPE_BUILD_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/libtaskscope-ompt.so", build ? build : ".");
    if (access(path, R_OK) != 0) {
        printf("test_ompt_start: SKIP: %s not built (no omp-tools.h at build time)\n", path);
        return 0;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ASSERT(h != NULL);
    start_tool_fn start = (start_tool_fn)dlsym(h, "ompt_start_tool");
    ASSERT(start != NULL);

    /* an old interface: refused, said on stderr */
    fflush(stderr);
    FILE *log = tmpfile();
    ASSERT(log != NULL);
    int saved = dup(2);
    ASSERT(dup2(fileno(log), 2) == 2);
    start_result_t *old = start(201500, "an old runtime");
    fflush(stderr);
    ASSERT(dup2(saved, 2) == 2);
    ASSERT(old == NULL);
    char line[512] = "";
    rewind(log);
    ASSERT(fgets(line, sizeof line, log) != NULL);
    ASSERT(strstr(line, "an old runtime") && strstr(line, "201500") && strstr(line, "unprofiled"));
    fclose(log);

    /* a current one: the tool offers its pair */
    start_result_t *cur = start(201611, "LLVM OMP 14");
    ASSERT(cur != NULL && cur->initialize != NULL && cur->finalize != NULL);
    printf("test_ompt_start: ok\n");
    return 0;
}
