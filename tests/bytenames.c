/* bytenames.c - task types named with every byte value (test_outputs.sh
 * checks that every JSON output stays valid JSON and reads back): "b"
 * followed by byte v for v = 1..255, one name holding all 255 bytes in
 * order, and names whose bytes a careless escape would confuse (a Latin-1
 * é and UTF-8's; a character cut short; valid UTF-8 of 2, 3 and 4 bytes;
 * bytes that look like UTF-8 but are not). One task of each type, on one
 * thread. */
#include <stdio.h>
#include <string.h>

#include <taskscope/taskscope.h>

static int run(const char *name, uint64_t *id)
{
    tscope_type_t t;
    if (tscope_type_register(name, &t)) {
        fprintf(stderr, "bytenames: cannot register a name of %zu bytes\n", strlen(name));
        return 1;
    }
    ++*id;
    tscope_task_start(*id, t);
    tscope_task_end(*id);
    return 0;
}

int main(void)
{
    if (tscope_init(0, 1))
        return 1;
    uint64_t id = 0;
    char name[256];
    for (int v = 1; v < 256; v++) {
        name[0] = 'b', name[1] = (char)v, name[2] = 0;
        if (run(name, &id))
            return 1;
    }
    for (int v = 1; v < 256; v++)
        name[v - 1] = (char)v;
    name[255] = 0;
    static const char *const others[] = {
        "caf\xe9",               /* Latin-1 */
        "caf\xc3\xa9",           /* UTF-8 */
        "snow\xe2\x98",          /* a 3-byte character cut after 2 */
        "snow\xe2\x98\x83",      /* whole */
        "clef\xf0\x9d\x84\x9e",  /* 4 bytes */
        "overlong\xc0\xaf",      /* '/' in 2 bytes: not UTF-8 */
        "surrogate\xed\xa0\x80", /* U+D800: not UTF-8 */
        "quote\"back\\slash",
    };
    if (run(name, &id))
        return 1;
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        if (run(others[i], &id))
            return 1;
    return tscope_finalize() ? 1 : 0;
}
