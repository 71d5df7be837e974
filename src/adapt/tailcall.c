/* tailcall.c - tail jumps to the OpenMP runtime, found in the program's
 * code (tailcall.h).
 *
 * x86-64 only: the few instruction forms compilers emit for a call, a tail
 * jump (`jmp rel32`, `jmp *slot(%rip)` under -fno-plt) and a PLT stub
 * (`jmp *slot(%rip)`, after endbr64 and bnd where -fcf-protection puts them)
 * are matched byte by byte.  Every address is checked to lie in a loaded
 * object (dladdr) before it is read, and what a match points to must be a
 * function's start (srcloc.h) or a runtime entry, so bytes inside another
 * instruction are not taken for a jump.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "srcloc.h"
#include "tailcall.h"

#if defined(__x86_64__)

#define MAX_FN (64u * 1024) /* longest function scanned */
#define DEPTH 4             /* tail jumps followed from a function */
#define BACK 64             /* bytes before a call searched for its argument */

/* 1 when [p, p + n) lies in one loaded object. */
static int mapped(uintptr_t p, size_t n)
{
    Dl_info a, b;
    return p && n && dladdr((void *)p, &a) && dladdr((void *)(p + n - 1), &b) &&
           a.dli_fbase == b.dli_fbase;
}

static int32_t rel32(const unsigned char *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uintptr_t slot_value(uintptr_t slot)
{
    if (!mapped(slot, sizeof(void *)))
        return 0;
    uintptr_t v;
    memcpy(&v, (const void *)slot, sizeof v);
    return v;
}

/* Where the PLT stub at t jumps to (its GOT slot's value); 0 if t is none. */
static uintptr_t stub_target(uintptr_t t)
{
    if (!mapped(t, 11))
        return 0;
    const unsigned char *c = (const unsigned char *)t;
    size_t at = 0;
    if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) /* endbr64 */
        at = 4;
    if (c[at] == 0xf2) /* bnd */
        at++;
    if (c[at] != 0xff || c[at + 1] != 0x25)
        return 0;
    return slot_value(t + at + 6 + (uintptr_t)(intptr_t)rel32(c + at + 2));
}

/* 1 when addr is an entry of the OpenMP runtime named with word
 * (GOMP_taskwait, __kmpc_omp_taskwait, ...). */
static int is_entry(uintptr_t addr, const char *word)
{
    Dl_info i;
    return addr && dladdr((void *)addr, &i) && i.dli_sname && (uintptr_t)i.dli_saddr == addr &&
           (strstr(i.dli_sname, "GOMP_") || strstr(i.dli_sname, "__kmpc_")) &&
           strstr(i.dli_sname, word);
}

/* 1 when a call or jump to t reaches the runtime entry, directly or
 * through its PLT stub. */
static int reaches_entry(uintptr_t t, const char *word)
{
    return is_entry(t, word) || is_entry(stub_target(t), word);
}

struct exec_probe {
    uintptr_t addr;
    int found;
};

static int exec_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct exec_probe *p = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *h = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + h->p_vaddr;
        if (h->p_type == PT_LOAD && (h->p_flags & PF_X) && p->addr >= lo &&
            p->addr < lo + h->p_memsz)
            return p->found = 1;
    }
    return 0;
}

/* 1 when addr lies in code (an executable segment of a loaded object). */
static int in_code(uintptr_t addr)
{
    struct exec_probe p = {addr, 0};
    dl_iterate_phdr(exec_segment, &p);
    return p.found;
}

/* The end of the function starting at fn, 0 when fn starts none; its
 * name into name. */
static uintptr_t function_end(uintptr_t fn, char *name, size_t len)
{
    uintptr_t start;
    size_t size;
    if (tscope__srcloc_symbol((const void *)fn, &start, &size, name, len) || start != fn || !size ||
        size > MAX_FN || !mapped(fn, size))
        return 0;
    return fn + size;
}

static const void *site(uintptr_t fn, const char *word, int depth, int outlined)
{
    char name[256];
    uintptr_t end = function_end(fn, name, sizeof name);
    if (!end || (outlined && !strstr(name, "._omp_fn.")))
        return NULL;
    const unsigned char *c = (const unsigned char *)fn;
    size_t n = end - fn;
    for (size_t i = 0; i + 5 <= n; i++) {
        if (c[i] == 0xff && c[i + 1] == 0x25 && i + 6 <= n) { /* jmp *slot(%rip) */
            uintptr_t slot = fn + i + 6 + (uintptr_t)(intptr_t)rel32(c + i + 2);
            if (is_entry(slot_value(slot), word))
                return c + i;
            continue;
        }
        if (c[i] != 0xe9) /* jmp rel32 */
            continue;
        uintptr_t t = fn + i + 5 + (uintptr_t)(intptr_t)rel32(c + i + 1);
        if (t >= fn && t < end) /* a jump inside the function */
            continue;
        if (reaches_entry(t, word))
            return c + i;
        const void *s = depth > 0 && mapped(t, 1) ? site(t, word, depth - 1, 0) : NULL;
        if (s)
            return s;
    }
    return NULL;
}

const void *tscope__tail_outlined(const void *ra)
{
    uintptr_t r = (uintptr_t)ra;
    if (r < BACK || !mapped(r - BACK, BACK))
        return NULL;
    const unsigned char *c = (const unsigned char *)r;
    size_t call = c[-5] == 0xe8 ? 5 : c[-6] == 0xff && c[-5] == 0x15 ? 6 : 0;
    if (!call)
        return NULL;
    for (size_t back = call + 5; back <= BACK; back++) { /* the nearest first */
        const unsigned char *p = c - back;
        uintptr_t f;
        if (back >= call + 7 && p[0] == 0x48 && p[1] == 0x8d && p[2] == 0x3d)
            f = (uintptr_t)p + 7 + (uintptr_t)(intptr_t)rel32(p + 3); /* lea f(%rip),%rdi */
        else if (p[0] == 0xbf)
            f = (uint32_t)rel32(p + 1); /* mov $f,%edi (not position-independent) */
        else
            continue;
        if (in_code(f))
            return (const void *)f;
    }
    return NULL;
}

const void *tscope__tail_site(const void *fn, const char *word)
{
    return fn && word ? site((uintptr_t)fn, word, DEPTH, 1) : NULL;
}

const void *tscope__tail_behind_call(const void *ra, const char *word)
{
    uintptr_t r = (uintptr_t)ra;
    if (!word || r < 5 || !mapped(r - 5, 5))
        return NULL;
    const unsigned char *c = (const unsigned char *)r;
    if (c[-5] != 0xe8)
        return NULL;
    uintptr_t t = r + (uintptr_t)(intptr_t)rel32(c - 4);
    if (reaches_entry(t, word) || !in_code(t))
        return NULL; /* the runtime's entry called as written, or no call */
    return site(t, word, DEPTH, 0);
}

#else

const void *tscope__tail_outlined(const void *ra)
{
    (void)ra;
    return NULL;
}

const void *tscope__tail_site(const void *fn, const char *word)
{
    (void)fn;
    (void)word;
    return NULL;
}

const void *tscope__tail_behind_call(const void *ra, const char *word)
{
    (void)ra;
    (void)word;
    return NULL;
}

#endif
