/* namecache.c - source locations resolved by earlier runs, by build-id.
 *
 * Naming a code address by its source line takes libdw: loading it (with
 * libelf and three compression libraries) and reading the module's symbols
 * and line table, ~3 ms for a small program and far more for a large one,
 * paid again by every run of the same binary.  What srcloc.c finds with a
 * line is kept in $XDG_CACHE_HOME/taskscope (~/.cache/taskscope), one file
 * per module, named by the module's GNU build-id (read from its note in
 * memory: no file is opened to know it) and keyed by the address's offset
 * from the module's load address; a later run of the same build finds its
 * names there without loading libdw.  A module without a build-id is not
 * cached.
 *
 * A file is "taskscope-names 2" and then one line per name: the offset in
 * hex, the name, and a checksum of both.  Lines are appended with one
 * write each (O_APPEND), so processes of a job that name the same code at
 * once add duplicates, not torn lines; a line that does not parse or
 * whose checksum is wrong (a disk or a network file system that mixed two
 * writers) is skipped and the address resolved again.  Nothing here is an
 * error: a cache that cannot be read or written is a cache miss.
 */
#include "namecache.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAX (1u << 20)         /* bytes of one module's file read or grown to */
#define HEADER "taskscope-names 2\n" /* 2: gcc's outlined code named as clang's */
#define MODULES 64

struct entry {
    uint64_t off;
    char *name;
};

/* A module met so far: its build-id and the names its file held. */
static struct module {
    char id[2 * 64 + 1]; /* hex */
    struct entry *e;
    size_t n, cap;
} modules[MODULES];
static size_t nmodules;

uint32_t tscope__namecache_sum(uint64_t off, const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a over the offset's bytes and the name */
    for (int i = 0; i < 8; i++)
        h = (h ^ (uint8_t)(off >> (8 * i))) * 16777619u;
    for (const char *c = name; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    return h;
}

/* dl_iterate_phdr: the object holding pc, its load address and build-id. */
struct find {
    uintptr_t pc, base;
    char id[2 * 64 + 1];
    int found;
};

static void build_id(struct dl_phdr_info *info, struct find *f)
{
    f->id[0] = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_NOTE)
            continue;
        const char *at = (const char *)(info->dlpi_addr + p->p_vaddr), *end = at + p->p_memsz;
        while (at + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)at;
            const char *name = at + sizeof *nh;
            const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
            if ((const char *)desc + nh->n_descsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                nh->n_descsz >= 8 && nh->n_descsz <= 64) {
                for (unsigned k = 0; k < nh->n_descsz; k++)
                    snprintf(f->id + 2 * k, 3, "%02x", desc[k]);
                return;
            }
            at = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
}

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct find *f = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + p->p_vaddr;
        if (p->p_type == PT_LOAD && f->pc >= lo && f->pc - lo < p->p_memsz) {
            f->base = info->dlpi_addr;
            build_id(info, f);
            f->found = 1;
            return 1;
        }
    }
    return 0;
}

/* The cache folder's path in buf; 0, or -1 when there is none (no HOME). */
static int folder(char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = xdg && xdg[0] == '/' ? snprintf(buf, len, "%s/taskscope", xdg)
            : home && home[0]    ? snprintf(buf, len, "%s/.cache/taskscope", home)
                                 : -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static int file_of(const char *id, char *buf, size_t len)
{
    char dir[4096];
    if (folder(dir, sizeof dir))
        return -1;
    int n = snprintf(buf, len, "%s/names-2-%s", dir, id);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Module m's name for offset off, or NULL. */
static const char *find(const struct module *m, uint64_t off)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->e[i].off == off)
            return m->e[i].name;
    return NULL;
}

static void add(struct module *m, uint64_t off, const char *name)
{
    if (find(m, off))
        return; /* the first line wins */
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        struct entry *e = realloc(m->e, cap * sizeof *e);
        if (!e)
            return;
        m->e = e;
        m->cap = cap;
    }
    char *copy = strdup(name);
    if (copy)
        m->e[m->n++] = (struct entry){off, copy};
}

/* Reads module m's file (its lines that parse and check). */
static void load(struct module *m)
{
    char path[4200];
    if (file_of(m->id, path, sizeof path))
        return;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char line[1200];
    size_t read = 0;
    if (!fgets(line, sizeof line, f) || strcmp(line, HEADER) != 0) {
        fclose(f);
        return;
    }
    while (read < CACHE_MAX && fgets(line, sizeof line, f)) {
        read += strlen(line);
        char *nl = strchr(line, '\n'), *sp = strchr(line, ' '), *last = strrchr(line, ' ');
        if (!nl || !sp || last == sp)
            continue;
        *nl = 0;
        *last = 0;
        char *end;
        errno = 0;
        unsigned long long off = strtoull(line, &end, 16);
        unsigned long sum = strtoul(last + 1, &nl, 16);
        if (errno || end != sp || *nl || sp[1] == 0 || sum != tscope__namecache_sum(off, sp + 1))
            continue; /* torn or damaged: resolved again */
        add(m, off, sp + 1);
    }
    fclose(f);
}

/* The module of pc (loaded from its file at first sight); NULL when pc is
 * in no object with a build-id or the table is full.  *off: pc's offset. */
static struct module *module_of(uintptr_t pc, uint64_t *off)
{
    struct find f = {.pc = pc};
    dl_iterate_phdr(find_object, &f);
    if (!f.found || !f.id[0])
        return NULL;
    *off = pc - f.base;
    for (size_t i = 0; i < nmodules; i++)
        if (strcmp(modules[i].id, f.id) == 0)
            return &modules[i];
    if (nmodules == MODULES)
        return NULL;
    struct module *m = &modules[nmodules++];
    memcpy(m->id, f.id, sizeof m->id);
    load(m);
    return m;
}

int tscope__namecache_get(uintptr_t pc, char *buf, size_t len)
{
    uint64_t off;
    struct module *m = module_of(pc, &off);
    const char *name = m ? find(m, off) : NULL;
    if (name)
        snprintf(buf, len, "%s", name);
    return name != NULL;
}

void tscope__namecache_put(uintptr_t pc, const char *name)
{
    uint64_t off;
    struct module *m = module_of(pc, &off);
    if (!m || !name[0] || strchr(name, '\n') || strlen(name) > 1000)
        return;
    add(m, off, name);
    char path[4200], line[1100];
    if (file_of(m->id, path, sizeof path))
        return;
    /* its folder and the folders above (~/.cache may not exist yet), private */
    char *name_at = strrchr(path, '/');
    *name_at = 0;
    for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
        if (s)
            *s = 0;
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return;
        if (!s)
            break;
        *s = '/';
    }
    *name_at = '/';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && st.st_size < CACHE_MAX) {
        int n = snprintf(line, sizeof line, "%s%llx %s %x\n", st.st_size == 0 ? HEADER : "",
                         (unsigned long long)off, name, (unsigned)tscope__namecache_sum(off, name));
        if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) != n) {
            /* a full disk: the next run resolves it again */
        }
    }
    close(fd);
}

void tscope__namecache_forget(void)
{
    for (size_t i = 0; i < nmodules; i++) {
        for (size_t k = 0; k < modules[i].n; k++)
            free(modules[i].e[k].name);
        free(modules[i].e);
        memset(&modules[i], 0, sizeof modules[i]);
    }
    nmodules = 0;
}
