/* calib_kernel.c - a tiny kernel for `taskscope model calibrate`
 * (tests/test_model_calibrate.sh, docs/modeling.md): streams over an array
 * of SIZE integers, 16 million integers in all (at least 4 passes), prints
 * their sum on stdout (which calibrate sends to /dev/null).  With a second
 * argument LIMIT, a SIZE above LIMIT fails (exit status 3) after a line on
 * stderr: the calibration's failing kernel.
 *   usage: calib_kernel SIZE [LIMIT]
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 0;
    if (n < 1) {
        fprintf(stderr, "usage: calib_kernel SIZE [LIMIT]\n");
        return 2;
    }
    if (argc > 2 && n > atol(argv[2])) {
        fprintf(stderr, "calib_kernel: size %ld above %s\n", n, argv[2]);
        return 3;
    }
    int *a = malloc((size_t)n * sizeof *a);
    if (!a)
        return 1;
    for (long i = 0; i < n; i++)
        a[i] = (int)(i & 1023);
    long passes = (16l << 20) / n > 4 ? (16l << 20) / n : 4;
    long long sum = 0;
    for (long p = 0; p < passes; p++)
        for (long i = 0; i < n; i++) {
            a[i]++;
            sum += a[i];
        }
    printf("sum %lld\n", sum);
    free(a);
    return 0;
}
