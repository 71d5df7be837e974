/* model_main.c - a user's program built against the installed modeling library. */
#include <stdio.h>
#include <taskscope/model.h>

int main(void)
{
    const char *p = "n";
    tscope_model_t m;
    char err[256];
    if (tscope_model_parse("2.0 + 0.5 * n^(1)", 1, &p, &m, err, sizeof err))
        return 1;
    double at = 4;
    printf("model_consumer: %g\n", tscope_model_eval(&m, &at));
    return 0;
}
