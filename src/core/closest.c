/* closest.c - the name a mistyped one was meant to be: the CLI's hint for
 * an unrecognized option or command (cli/optparse.c) and the warning for a
 * TASKSCOPE_* variable nobody reads (config.c) both ask it, so that a typo
 * is answered the same way everywhere.
 *
 * The distance is the optimal string alignment distance (Levenshtein with
 * the swap of two neighbours counted as one edit: "trcae" is 1 from
 * "trace"), case-insensitive; a candidate is close enough when at most a
 * third of the word's letters (at least one, at most three) differ, so a
 * short word is not "corrected" into an unrelated one. */
#include <ctype.h>
#include <string.h>

#include "config.h"

#define WORD_MAX 64

unsigned tscope__edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    if (na > WORD_MAX || nb > WORD_MAX)
        return (unsigned)(na > nb ? na : nb); /* never close */
    /* three rows of the dynamic programme: i-2, i-1, i */
    unsigned rows[3][WORD_MAX + 1];
    for (size_t j = 0; j <= nb; j++)
        rows[0][j] = (unsigned)j;
    unsigned *prev2 = rows[2], *prev = rows[0], *cur = rows[1];
    for (size_t i = 1; i <= na; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= nb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            unsigned best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        unsigned *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[nb];
}

int tscope__close_enough(unsigned distance, size_t len)
{
    size_t limit = len / 3;
    limit = limit < 1 ? 1 : limit > 3 ? 3 : limit;
    return distance <= limit;
}

const char *tscope__closest(const char *word, size_t n, const char *const *names, size_t count)
{
    const char *best = NULL;
    unsigned best_d = ~0u;
    for (size_t i = 0; i < count; i++) {
        if (!names[i])
            continue;
        unsigned d = tscope__edit_distance(word, n, names[i], strlen(names[i]));
        if (d < best_d) {
            best_d = d;
            best = names[i];
        }
    }
    return best && tscope__close_enough(best_d, n) ? best : NULL;
}
