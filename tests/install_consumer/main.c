/* main.c - a user's program built against an installed taskscope. */
#include <stdio.h>
#include <taskscope/taskscope.h>

int main(void)
{
    tscope_type_t t;
    if (tscope_init(0, 1) || tscope_type_register("user_task", &t))
        return 1;
    tscope_task_start(tscope_task_id_next(), t);
    tscope_task_end(1);
    tscope_flush();
    tscope_type_stats_t st;
    tscope_query_type(t, &st);
    printf("consumer: %s %llu\n", tscope_version_string(), (unsigned long long)st.created);
    return tscope_finalize() == 0 && st.created == 1 ? 0 : 1;
}
