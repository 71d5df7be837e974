/* filtered_other.c - a task type in a file of its own, for the filter
 * file's file rules (tests/omp/filtered.c). */
void other_task(long n);
void spin(long n);

void other_task(long n)
{
#pragma omp task if (0)
    spin(n);
}
