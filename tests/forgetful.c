/* forgetful.c - a program that never calls tscope_finalize (test_cli.sh
 * checks that its outputs are written anyway, at exit). */
#include <taskscope/taskscope.h>

int main(void)
{
    tscope_type_t t;
    if (tscope_init(0, 1) || tscope_type_register("forgotten", &t))
        return 1;
    tscope_task_start(1, t);
    tscope_task_end(1);
    return 0;
}
