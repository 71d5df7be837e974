/* test_namecache.c - the names of code addresses kept for the next runs of
 * the same build (src/adapt/namecache.c): kept and read back, by the
 * module's build-id and the address's offset; lines that are torn, damaged
 * or repeated are skipped; nothing is kept without a cache folder.  (This
 * program is linked with --build-id: the cache knows modules by it.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adapt/namecache.h"
#include "test.h"

static char dir[] = "/tmp/tscope-test-namecache-XXXXXX";
static char file[4200];

static void code_a(void) {}

static uintptr_t pc_a(void)
{
    return (uintptr_t)&code_a;
}

/* The one file the cache made in its folder, and its content. */
static char *cache_file(void)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "ls %s/taskscope/names-2-* 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    ASSERT(p != NULL);
    if (!fgets(file, sizeof file, p))
        file[0] = 0;
    pclose(p);
    file[strcspn(file, "\n")] = 0;
    ASSERT(file[0] != 0);
    static char text[8192];
    FILE *f = fopen(file, "r");
    ASSERT(f != NULL);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    return text;
}

static void append(const char *text)
{
    FILE *f = fopen(file, "a");
    ASSERT(f != NULL);
    fputs(text, f);
    fclose(f);
}

static void kept_and_read_back(void)
{
    char buf[256];
    ASSERT_EQ(tscope__namecache_get(pc_a(), buf, sizeof buf), 0);
    tscope__namecache_put(pc_a(), "code_a (test_namecache.c:19)");
    ASSERT_EQ(tscope__namecache_get(pc_a(), buf, sizeof buf), 1); /* this process's */
    ASSERT_STR_EQ(buf, "code_a (test_namecache.c:19)");
    /* the file: its header and one line, "offset name checksum" */
    char *text = cache_file();
    unsigned long long off;
    unsigned sum;
    char name[200];
    ASSERT_EQ(sscanf(text, "taskscope-names 2\n%llx %[^\n]", &off, name), 2);
    char *last = strrchr(name, ' ');
    ASSERT(last != NULL);
    *last = 0;
    ASSERT_EQ(sscanf(last + 1, "%x", &sum), 1);
    ASSERT_STR_EQ(name, "code_a (test_namecache.c:19)");
    ASSERT_EQ(sum, tscope__namecache_sum(off, name));
    ASSERT(off <= pc_a()); /* an offset from the module's load address */
    /* a later run (what it read is forgotten): from the file */
    tscope__namecache_forget();
    ASSERT_EQ(tscope__namecache_get(pc_a(), buf, sizeof buf), 1);
    ASSERT_STR_EQ(buf, "code_a (test_namecache.c:19)");

    /* lines that must not be taken: a wrong checksum, a torn one (no end),
     * a second name for the same offset (the first wins), one without a
     * checksum; and a good one for another offset */
    char lines[1024];
    snprintf(lines, sizeof lines,
             "%llx damaged (x.c:1) %x\n"
             "%llx second (x.c:2) %x\n"
             "%llx nosum\n"
             "%llx other (x.c:4) %x\n"
             "%llx torn (x.c:5) %x",
             off + 1, tscope__namecache_sum(off + 1, "damaged (x.c:1)") ^ 1u, off,
             tscope__namecache_sum(off, "second (x.c:2)"), off + 3, off + 4,
             tscope__namecache_sum(off + 4, "other (x.c:4)"), off + 5,
             tscope__namecache_sum(off + 5, "torn (x.c:5)"));
    append(lines);
    tscope__namecache_forget();
    ASSERT_EQ(tscope__namecache_get(pc_a(), buf, sizeof buf), 1);
    ASSERT_STR_EQ(buf, "code_a (test_namecache.c:19)");
    ASSERT_EQ(tscope__namecache_get(pc_a() + 1, buf, sizeof buf), 0);
    ASSERT_EQ(tscope__namecache_get(pc_a() + 3, buf, sizeof buf), 0);
    ASSERT_EQ(tscope__namecache_get(pc_a() + 5, buf, sizeof buf), 0);
    ASSERT_EQ(tscope__namecache_get(pc_a() + 4, buf, sizeof buf), 1);
    ASSERT_STR_EQ(buf, "other (x.c:4)");
}

static void header_damaged(void)
{
    char buf[256];
    FILE *f = fopen(file, "r+");
    ASSERT(f != NULL);
    fputc('T', f); /* "Taskscope-names 2": not a file this build wrote */
    fclose(f);
    tscope__namecache_forget();
    ASSERT_EQ(tscope__namecache_get(pc_a(), buf, sizeof buf), 0);
    ASSERT(unlink(file) == 0);
}

static void no_folder(void)
{
    char buf[256];
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    tscope__namecache_forget();
    tscope__namecache_put(pc_a(), "code_a (test_namecache.c:19)");
    tscope__namecache_forget();
    ASSERT_EQ(tscope__namecache_get(pc_a(), buf, sizeof buf), 0); /* nothing kept */
    /* a relative XDG_CACHE_HOME is ignored, as the XDG rules say */
    setenv("XDG_CACHE_HOME", "relative", 1);
    tscope__namecache_put(pc_a(), "code_a (test_namecache.c:19)");
    struct stat st;
    ASSERT(stat("relative", &st) != 0);
}

int main(void)
{
    ASSERT(mkdtemp(dir) != NULL);
    setenv("XDG_CACHE_HOME", dir, 1);
    RUN(kept_and_read_back);
    RUN(header_damaged);
    RUN(no_folder);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ASSERT_EQ(system(cmd), 0);
    printf("test_namecache: ok\n");
    return 0;
}
