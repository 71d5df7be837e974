/* elfdeps.c - the libraries a dynamically linked program loads at start,
 * found as glibc's dynamic loader finds them, without running anything:
 * what `taskscope run` would otherwise ask the loader for in a child
 * process (LD_TRACE_LOADED_OBJECTS, a fork and an exec: ~2-5 ms).
 *
 * The algorithm is the loader's (glibc 2.36, elf/dl-load.c, dl-deps.c,
 * dl-cache.c), breadth first from the program: each DT_NEEDED name that no
 * loaded object already answers to (by the names it was loaded under, its
 * DT_SONAME, or the same file) is searched in the DT_RPATH of the object
 * that needs it and of the objects that loaded that one, up to the program
 * (only while none of them has a DT_RUNPATH), then LD_LIBRARY_PATH, then
 * the object's DT_RUNPATH, then /etc/ld.so.cache.  Whatever would need
 * more of the loader than this - /etc/ld.so.preload, LD_AUDIT, filters,
 * DF_1_NODEFLIB, $LIB or $PLATFORM, glibc-hwcaps or legacy hwcap
 * subfolders in a searched folder, cache entries by hwcap, a file of
 * another class or machine, a library found only in the default folders
 * or not at all - makes the answer -1, and the caller asks the loader
 * itself: the answer given is the loader's or none.
 *
 * `taskscope run` asks this before every program it starts, so it reads
 * little: each object's program headers, its dynamic section in small
 * batches and only the strings those entries name (not the whole string
 * table: libc's is 32 KiB, eight fresh pages at ~10 us a fault on a VM),
 * and checks each searched folder's hwcap subfolders once.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "elfdeps.h"

#define MAX_OBJECTS 256
#define MAX_NEEDED 64
#define MAX_DIRS 16 /* folders whose hwcap subfolders were looked for */

struct object {
    char *path; /* as opened (the loader's l_name); allocated, as every string here */
    char *origin;
    char *soname, *rpath, *runpath; /* NULL if absent */
    char **needed;
    const char *names[8]; /* the DT_NEEDED names it was found under */
    int nneeded, nnames;
    int loader; /* index of the object whose DT_NEEDED loaded it; -1 */
    dev_t dev;
    ino_t ino;
};

struct search {
    struct object obj[MAX_OBJECTS];
    int n;
    uint16_t machine;
    const uint8_t *cache; /* /etc/ld.so.cache's new-format part, mapped */
    size_t cache_len;     /* bytes from cache to the end of the file */
    void *map;
    size_t map_len;
    char *dirs[MAX_DIRS];    /* folders checked for hwcap subfolders, */
    int dir_hwcap[MAX_DIRS]; /* and whether they have any */
    int ndirs;
};

static void object_free(struct object *o)
{
    free(o->path);
    free(o->origin);
    free(o->soname);
    free(o->rpath);
    free(o->runpath);
    for (int i = 0; i < o->nneeded; i++)
        free(o->needed[i]);
    free(o->needed);
    memset(o, 0, sizeof *o);
}

/* The NUL-terminated string at file offset off, at most max bytes
 * (allocated); NULL when it cannot be read or is not terminated. */
static char *read_string(int fd, off_t off, size_t max)
{
    size_t len = 256;
    for (;;) {
        if (len > max)
            len = max;
        char *b = malloc(len + 1);
        if (!b)
            return NULL;
        ssize_t got = pread(fd, b, len, off);
        if (got < 0) {
            free(b);
            return NULL;
        }
        if (memchr(b, 0, (size_t)got))
            return b;
        free(b);
        if ((size_t)got < len || len == max)
            return NULL; /* the file or `max` ended first */
        len *= 16;
    }
}

/* String v of the string table at file offset stroff (allocated): from
 * window (wlen bytes read from table offset lo) when it lies whole in it,
 * else read alone; NULL when it cannot be read. */
static char *string_at(int fd, off_t stroff, uint64_t strsz, uint64_t v, const char *window,
                       uint64_t lo, ssize_t wlen)
{
    if (v >= strsz)
        return NULL;
    if (wlen > 0 && v >= lo && v - lo < (uint64_t)wlen) {
        const char *p = window + (v - lo);
        const char *nul = memchr(p, 0, (size_t)wlen - (v - lo));
        if (nul)
            return strndup(p, (size_t)(nul - p));
    }
    return read_string(fd, stroff + (off_t)v, strsz - v);
}

/* What read_dynamic found of the program itself. */
struct elfinfo {
    uint16_t machine;
    char interp[PATH_MAX]; /* PT_INTERP, "" without */
};

/* Reads object o's dynamic section from path: 0, or -1 when it is not an
 * ELF object of our class and machine or has what we do not follow.  For
 * the program (main), info gets its machine and interpreter. */
static int read_dynamic(struct search *s, struct object *o, const char *path, int main,
                        struct elfinfo *info)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = -1;
    Elf64_Ehdr eh;
    Elf64_Phdr ph[64];
    struct stat st;
    if (fstat(fd, &st) || pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 64 ||
        (!main && (eh.e_type != ET_DYN || eh.e_machine != s->machine)))
        goto out;
    size_t phlen = (size_t)eh.e_phnum * sizeof *ph;
    if (pread(fd, ph, phlen, (off_t)eh.e_phoff) != (ssize_t)phlen)
        goto out;
    const Elf64_Phdr *dynamic = NULL;
    for (int i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type == PT_DYNAMIC)
            dynamic = &ph[i];
        if (info && ph[i].p_type == PT_INTERP && ph[i].p_filesz > 0 &&
            ph[i].p_filesz < sizeof info->interp &&
            pread(fd, info->interp, ph[i].p_filesz, (off_t)ph[i].p_offset) ==
                (ssize_t)ph[i].p_filesz)
            info->interp[ph[i].p_filesz] = 0;
    }
    if (info)
        info->machine = eh.e_machine;
    o->dev = st.st_dev;
    o->ino = st.st_ino;
    if (!dynamic) { /* nothing needed (a static library, say) */
        rc = 0;
        goto out;
    }
    /* the entries, 32 at a time: the string table's address and size, and
     * where the strings we want are in it */
    uint64_t strtab = 0, strsz = 0, soname = UINT64_MAX, rpath = UINT64_MAX, runpath = UINT64_MAX,
             needed[MAX_NEEDED];
    int nneeded = 0;
    size_t ndyn = dynamic->p_filesz / sizeof(Elf64_Dyn);
    if (ndyn > 4096)
        goto out;
    int done = 0;
    for (size_t at = 0; at < ndyn && !done; at += 32) {
        Elf64_Dyn dyn[32];
        size_t k = ndyn - at < 32 ? ndyn - at : 32;
        if (pread(fd, dyn, k * sizeof *dyn, (off_t)(dynamic->p_offset + at * sizeof *dyn)) !=
            (ssize_t)(k * sizeof *dyn))
            goto out;
        for (size_t i = 0; i < k && !done; i++) {
            uint64_t v = dyn[i].d_un.d_val;
            switch (dyn[i].d_tag) {
            case DT_NULL:
                done = 1;
                break;
            case DT_STRTAB:
                strtab = v;
                break;
            case DT_STRSZ:
                strsz = v;
                break;
            case DT_AUXILIARY:
            case DT_FILTER:
            case DT_AUDIT:
            case DT_DEPAUDIT:
                goto out;
            case DT_FLAGS_1:
                if (v & DF_1_NODEFLIB)
                    goto out;
                break;
            case DT_NEEDED:
                if (nneeded == MAX_NEEDED)
                    goto out;
                needed[nneeded++] = v;
                break;
            case DT_SONAME:
                soname = v;
                break;
            case DT_RPATH:
                rpath = v;
                break;
            case DT_RUNPATH:
                runpath = v;
                break;
            }
        }
    }
    /* the string table's file offset, from the load segment holding it */
    off_t stroff = -1;
    for (int i = 0; i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && strtab >= ph[i].p_vaddr &&
            strtab + strsz <= ph[i].p_vaddr + ph[i].p_filesz)
            stroff = (off_t)(strtab - ph[i].p_vaddr + ph[i].p_offset);
    if (stroff < 0 || strsz == 0 || strsz > (1u << 24))
        goto out;
    /* the strings: usually near each other, read at once */
    uint64_t lo = UINT64_MAX, hi = 0, want[MAX_NEEDED + 3];
    int nwant = 0;
    for (int i = 0; i < nneeded; i++)
        want[nwant++] = needed[i];
    want[nwant++] = soname;
    want[nwant++] = runpath != UINT64_MAX ? runpath : rpath;
    for (int i = 0; i < nwant; i++)
        if (want[i] < strsz) {
            lo = want[i] < lo ? want[i] : lo;
            hi = want[i] > hi ? want[i] : hi;
        }
    char window[4096];
    ssize_t wlen = -1;
    if (lo < strsz && hi - lo < sizeof window / 2) {
        size_t n = strsz - lo < sizeof window - 1 ? strsz - lo : sizeof window - 1;
        wlen = pread(fd, window, n, stroff + (off_t)lo);
    }
#define STRING(v) string_at(fd, stroff, strsz, v, window, lo, wlen)
    if (nneeded && !(o->needed = calloc((size_t)nneeded, sizeof *o->needed)))
        goto out;
    for (int i = 0; i < nneeded; i++)
        if (!(o->needed[o->nneeded++] = STRING(needed[i])))
            goto out;
    if (soname != UINT64_MAX)
        o->soname = STRING(soname);
    /* the loader ignores an object's RPATH when it has a RUNPATH */
    if (runpath != UINT64_MAX)
        o->runpath = STRING(runpath);
    else if (rpath != UINT64_MAX)
        o->rpath = STRING(rpath);
#undef STRING
    rc = 0;
out:
    close(fd);
    return rc;
}

/* glibc's _dl_cache_libcmp: digits compare as numbers. */
static int cache_cmp(const char *p1, const char *p2)
{
    while (*p1) {
        if (*p1 >= '0' && *p1 <= '9') {
            if (*p2 < '0' || *p2 > '9')
                return 1;
            long v1 = 0, v2 = 0;
            while (*p1 >= '0' && *p1 <= '9')
                v1 = v1 * 10 + *p1++ - '0';
            while (*p2 >= '0' && *p2 <= '9')
                v2 = v2 * 10 + *p2++ - '0';
            if (v1 != v2)
                return v1 < v2 ? -1 : 1;
        } else if (*p2 >= '0' && *p2 <= '9') {
            return -1;
        } else if (*p1 != *p2) {
            return (unsigned char)*p1 - (unsigned char)*p2;
        } else {
            p1++;
            p2++;
        }
    }
    return -(unsigned char)*p2;
}

#define CACHE_NEW_MAGIC "glibc-ld.so.cache1.1"
#define CACHE_OLD_MAGIC "ld.so-1.7.0"
#define CACHE_HEADER 48 /* struct cache_file_new */
#define CACHE_ENTRY 24  /* struct file_entry_new */
#define CACHE_ID 0x0303 /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */

/* Maps /etc/ld.so.cache; 0, or -1 when its format is not one we read. */
static int cache_open(struct search *s)
{
#if !defined(__x86_64__)
    (void)s;
    return -1; /* CACHE_ID is x86-64's */
#else
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) || st.st_size < CACHE_HEADER) {
        close(fd);
        return -1;
    }
    s->map_len = (size_t)st.st_size;
    s->map = mmap(NULL, s->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (s->map == MAP_FAILED) {
        s->map = NULL;
        return -1;
    }
    size_t off = 0;
    if (memcmp(s->map, CACHE_OLD_MAGIC, sizeof CACHE_OLD_MAGIC - 1) == 0) {
        uint32_t nold;
        memcpy(&nold, (char *)s->map + 12, 4);
        off = ((16 + (size_t)nold * 12) + 7) & ~(size_t)7;
    }
    if (off + CACHE_HEADER > s->map_len ||
        memcmp((char *)s->map + off, CACHE_NEW_MAGIC, sizeof CACHE_NEW_MAGIC - 1))
        return -1;
    s->cache = (const uint8_t *)s->map + off;
    s->cache_len = s->map_len - off;
    uint32_t nlibs;
    memcpy(&nlibs, s->cache + 20, 4);
    if ((s->cache_len - CACHE_HEADER) / CACHE_ENTRY < nlibs)
        return -1;
    return 0;
#endif
}

struct cache_entry {
    int32_t flags;
    uint32_t key, value, osversion;
    uint64_t hwcap;
};

static const char *cache_str(const struct search *s, uint32_t off)
{
    return off < s->cache_len && memchr(s->cache + off, 0, s->cache_len - off)
               ? (const char *)s->cache + off
               : NULL;
}

/* The path the cache gives for name: 1 and out, 0 when it has none, -1
 * when the loader's choice depends on the CPU (hwcap entries). */
static int cache_lookup(const struct search *s, const char *name, char *out, size_t len)
{
    uint32_t nlibs;
    memcpy(&nlibs, s->cache + 20, 4);
    struct cache_entry e;
#define ENTRY(i) memcpy(&e, s->cache + CACHE_HEADER + (size_t)(i)*CACHE_ENTRY, sizeof e)
    long left = 0, right = (long)nlibs - 1, found = -1;
    while (left <= right) { /* the entries are sorted in decreasing order */
        long mid = (left + right) / 2;
        ENTRY(mid);
        const char *key = cache_str(s, e.key);
        int cmp = key ? cache_cmp(name, key) : 1;
        if (cmp == 0) {
            found = mid;
            break;
        }
        if (cmp < 0)
            left = mid + 1;
        else
            right = mid - 1;
    }
    if (found < 0)
        return 0;
    while (found > 0) {
        ENTRY(found - 1);
        const char *key = cache_str(s, e.key);
        if (!key || cache_cmp(name, key))
            break;
        found--;
    }
    const char *best = NULL;
    for (long i = found; i < (long)nlibs; i++) {
        ENTRY(i);
        const char *key = cache_str(s, e.key);
        if (!key || cache_cmp(name, key))
            break;
        if (e.hwcap)
            return -1;
        if (!best && e.flags == CACHE_ID)
            best = cache_str(s, e.value);
    }
#undef ENTRY
    if (!best)
        return 0;
    snprintf(out, len, "%s", best);
    return 1;
}

/* 1 when folder dir has subfolders the loader searches first (hwcaps);
 * each folder looked at once. */
static int has_hwcap_dirs(struct search *s, const char *dir)
{
    for (int i = 0; i < s->ndirs; i++)
        if (strcmp(s->dirs[i], dir) == 0)
            return s->dir_hwcap[i];
    static const char *const sub[] = {"glibc-hwcaps", "tls", "x86_64", "haswell", "avx512_1"};
    char p[PATH_MAX + 32];
    struct stat st;
    int has = 0;
    for (size_t i = 0; i < sizeof sub / sizeof *sub && !has; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, sub[i]);
        has = stat(p, &st) == 0;
    }
    if (s->ndirs < MAX_DIRS && (s->dirs[s->ndirs] = strdup(dir)) != NULL)
        s->dir_hwcap[s->ndirs++] = has;
    return has;
}

/* Searches the colon-separated folders of list for name ($ORIGIN is
 * origin; NULL: not allowed, as in LD_LIBRARY_PATH): 1 and out when found,
 * 0 when not, -1 when the search is one we do not follow. */
static int search_list(struct search *s, const char *list, const char *origin, const char *name,
                       char *out, size_t len)
{
    for (const char *p = list; p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char dir[PATH_MAX];
        if (n == 0 || n >= sizeof dir || memchr(p, ';', n))
            return -1; /* the current folder, or separators we do not follow */
        if (origin && n >= 7 && strncmp(p, "$ORIGIN", 7) == 0 && (n == 7 || p[7] == '/'))
            snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(n - 7), p + 7);
        else if (origin && n >= 9 && strncmp(p, "${ORIGIN}", 9) == 0 && (n == 9 || p[9] == '/'))
            snprintf(dir, sizeof dir, "%s%.*s", origin, (int)(n - 9), p + 9);
        else
            snprintf(dir, sizeof dir, "%.*s", (int)n, p);
        if (dir[0] != '/' || strchr(dir, '$'))
            return -1;
        struct stat st;
        if (stat(dir, &st) == 0) {
            if (has_hwcap_dirs(s, dir))
                return -1;
            if ((size_t)snprintf(out, len, "%s/%s", dir, name) < len && access(out, F_OK) == 0)
                return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* The index of the loaded object that answers to name, or -1. */
static int loaded(const struct search *s, const char *name)
{
    for (int i = 0; i < s->n; i++) {
        const struct object *o = &s->obj[i];
        if (strcmp(o->path, name) == 0 || (o->soname && strcmp(o->soname, name) == 0))
            return i;
        for (int k = 0; k < o->nnames; k++)
            if (strcmp(o->names[k], name) == 0)
                return i;
    }
    return -1;
}

/* Finds where object `by` loads name from: 1 and out, -1 when we cannot
 * say as the loader would. */
static int locate(struct search *s, int by, const char *name, char *out, size_t len)
{
    if (strchr(name, '$'))
        return -1;
    if (strchr(name, '/')) {
        if (name[0] != '/')
            return -1;
        snprintf(out, len, "%s", name);
        return access(out, F_OK) == 0 ? 1 : -1;
    }
    const struct object *o = &s->obj[by];
    int r = 0;
    if (!o->runpath) {
        int did_main = 0;
        for (int l = by; l >= 0 && r == 0; l = s->obj[l].loader) {
            if (s->obj[l].rpath)
                r = search_list(s, s->obj[l].rpath, s->obj[l].origin, name, out, len);
            did_main |= l == 0;
        }
        if (r == 0 && !did_main && s->obj[0].rpath)
            r = search_list(s, s->obj[0].rpath, s->obj[0].origin, name, out, len);
    }
    const char *ld_path = getenv("LD_LIBRARY_PATH");
    if (r == 0 && ld_path && *ld_path)
        r = search_list(s, ld_path, NULL, name, out, len);
    if (r == 0 && o->runpath)
        r = search_list(s, o->runpath, o->origin, name, out, len);
    if (r == 0)
        r = cache_lookup(s, name, out, len);
    return r == 1 && access(out, F_OK) == 0 ? 1 : -1;
}

/* The object's path as opened and the folder it is in ($ORIGIN); 0, or -1
 * without memory. */
static int set_paths(struct object *o, const char *path, const char *real)
{
    o->path = strdup(path);
    o->origin = strdup(real);
    if (!o->path || !o->origin)
        return -1;
    char *slash = strrchr(o->origin, '/');
    if (slash)
        *(slash == o->origin ? slash + 1 : slash) = 0;
    return 0;
}

/* 1 when a and b are the same file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static int resolve(struct search *s, const char *prog,
                   void (*found)(const char *name, const char *path, void *arg), void *arg)
{
    struct stat st;
    const char *env = getenv("LD_AUDIT");
    if ((env && *env) || stat("/etc/ld.so.preload", &st) == 0 || stat(prog, &st) ||
        (st.st_mode & (S_ISUID | S_ISGID)) || getxattr(prog, "security.capability", NULL, 0) >= 0 ||
        cache_open(s))
        return -1; /* preloads, audit modules, or a program the loader runs in secure mode */
    /* the program, with $ORIGIN from its real path (/proc/self/exe) */
    struct object *m = &s->obj[s->n++];
    char real[PATH_MAX];
    struct elfinfo info = {0, ""};
    if (!realpath(prog, real) || read_dynamic(s, m, prog, 1, &info) || !info.interp[0] ||
        set_paths(m, prog, real))
        return -1;
    /* only glibc's own loader searches as below (musl's, or another glibc's
     * with its own cache, may not) */
    if (!same_file("/lib64/ld-linux-x86-64.so.2", info.interp))
        return -1;
    m->loader = -1;
    s->machine = info.machine;
    if (s->machine != EM_X86_64)
        return -1; /* the cache's flags we look for are x86-64's */
    /* the loader itself, loaded already and answering to its SONAME */
    struct object *rtld = &s->obj[s->n++];
    if (read_dynamic(s, rtld, info.interp, 0, NULL) || set_paths(rtld, info.interp, info.interp))
        return -1;
    rtld->loader = -1;
    for (int i = 0; i < rtld->nneeded; i++)
        free(rtld->needed[i]);
    rtld->nneeded = 0;
    for (int i = 0; i < s->n; i++) {
        for (int k = 0; k < s->obj[i].nneeded; k++) {
            const char *name = s->obj[i].needed[k];
            if (loaded(s, name) >= 0)
                continue;
            char path[PATH_MAX];
            if (locate(s, i, name, path, sizeof path) != 1 || s->n == MAX_OBJECTS)
                return -1;
            struct object *o = &s->obj[s->n];
            if (read_dynamic(s, o, path, 0, NULL)) {
                object_free(o);
                return -1;
            }
            int same = -1; /* the same file under another name */
            for (int j = 0; j < s->n && same < 0; j++)
                if (s->obj[j].dev == o->dev && s->obj[j].ino == o->ino)
                    same = j;
            if (same >= 0) {
                object_free(o);
                struct object *p = &s->obj[same];
                if (p->nnames == (int)(sizeof p->names / sizeof *p->names))
                    return -1;
                p->names[p->nnames++] = name;
                continue;
            }
            s->n++;
            if (set_paths(o, path, path))
                return -1;
            o->names[o->nnames++] = name;
            o->loader = i;
        }
    }
    for (int i = 2; i < s->n; i++)
        found(s->obj[i].names[0], s->obj[i].path, arg);
    return 0;
}

int tscope_cli_elf_libraries(const char *prog,
                             void (*found)(const char *name, const char *path, void *arg),
                             void *arg)
{
    struct search *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    int rc = resolve(s, prog, found, arg);
    for (int i = 0; i < s->n; i++)
        object_free(&s->obj[i]);
    for (int i = 0; i < s->ndirs; i++)
        free(s->dirs[i]);
    if (s->map)
        munmap(s->map, s->map_len);
    free(s);
    return rc;
}
