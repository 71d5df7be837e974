/* srcloc.c - resolving code addresses to source locations (srcloc.h).
 *
 * With elfutils' libdwfl (TSCOPE_HAVE_LIBDW) the process's own modules are
 * reported once from /proc/self/maps and again when an address falls in
 * none of them (a library loaded later); symbol names come from the full
 * symbol table and lines from DWARF, so unexported functions of a program
 * built with -g are named too.  Without libdw, dladdr() gives exported
 * symbols only.  Resolution happens under one lock: the adapters call this
 * once per distinct address and cache the task type they make of it.
 * libdw (with libelf and its compression libraries, ~1 ms of loading) is
 * opened with dlopen at the first resolution, by the SONAME found at build
 * time, so a program starts without it; what it finds with a line is kept
 * for the next runs of the same build (namecache.c), which then need not
 * load it at all.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "namecache.h"
#include "srcloc.h"

#ifdef TSCOPE_HAVE_LIBDW
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "lazylib.h"

/* The libdw functions used here, called through pointers filled by dlsym. */
#define DW_FUNCS(X)                                                                                \
    X(dwfl_begin)                                                                                  \
    X(dwfl_report_begin)                                                                           \
    X(dwfl_linux_proc_report)                                                                      \
    X(dwfl_report_end)                                                                             \
    X(dwfl_addrmodule)                                                                             \
    X(dwfl_module_addrname)                                                                        \
    X(dwfl_module_addrinfo)                                                                        \
    X(dwfl_module_getsrc)                                                                          \
    X(dwfl_lineinfo)                                                                               \
    X(dwfl_module_getdwarf)                                                                        \
    X(dwfl_linux_proc_find_elf)                                                                    \
    X(dwfl_standard_find_debuginfo)                                                                \
    X(dwarf_nextcu)                                                                                \
    X(dwarf_offdie)                                                                                \
    X(dwarf_haspc)                                                                                 \
    X(dwarf_getsrc_die)                                                                            \
    X(dwarf_lineno)                                                                                \
    X(dwarf_linesrc)

DW_FUNCS(TSCOPE__LAZY_DECLARE)
static const struct tscope__lazy_sym dw_syms[] = {DW_FUNCS(TSCOPE__LAZY_SYM)};

/* Opens libdw once (lock held); 0, or -1 (then dladdr names symbols). */
static int dw_load(void)
{
    static int state;
    return tscope__lazy_load(&state, TSCOPE_LIBDW_SONAME, dw_syms, sizeof dw_syms / sizeof *dw_syms,
                             NULL, 0);
}
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

#ifdef TSCOPE_HAVE_LIBDW
#define dwfl_begin p_dwfl_begin
#define dwfl_report_begin p_dwfl_report_begin
#define dwfl_linux_proc_report p_dwfl_linux_proc_report
#define dwfl_report_end p_dwfl_report_end
#define dwfl_addrmodule p_dwfl_addrmodule
#define dwfl_module_addrname p_dwfl_module_addrname
#define dwfl_module_addrinfo p_dwfl_module_addrinfo
#define dwfl_module_getsrc p_dwfl_module_getsrc
#define dwfl_lineinfo p_dwfl_lineinfo
#define dwfl_module_getdwarf p_dwfl_module_getdwarf
#define dwarf_nextcu p_dwarf_nextcu
#define dwarf_offdie p_dwarf_offdie
#define dwarf_haspc p_dwarf_haspc
#define dwarf_getsrc_die p_dwarf_getsrc_die
#define dwarf_lineno p_dwarf_lineno
#define dwarf_linesrc p_dwarf_linesrc

static Dwfl *dwfl;
static Dwfl_Callbacks callbacks;

/* (Re)reports the process's modules; 0 on success. */
static int report_modules(void)
{
    if (!dwfl) {
        callbacks.find_elf = p_dwfl_linux_proc_find_elf;
        callbacks.find_debuginfo = p_dwfl_standard_find_debuginfo;
        dwfl = dwfl_begin(&callbacks);
    }
    if (!dwfl)
        return -1;
    dwfl_report_begin(dwfl);
    int rc = dwfl_linux_proc_report(dwfl, getpid());
    dwfl_report_end(dwfl, NULL, NULL);
    return rc;
}

/* The line of pc found by walking the compile units: clang writes no
 * .debug_aranges, which dwfl_module_getsrc needs in elfutils 0.188. */
static const char *line_by_units(Dwfl_Module *mod, uintptr_t pc, int *lineno)
{
    Dwarf_Addr bias;
    Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
    Dwarf_Off off = 0, next;
    size_t header;
    while (dw && dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(dw, off + header, &cu) && dwarf_haspc(&cu, pc - bias) > 0) {
            Dwarf_Line *line = dwarf_getsrc_die(&cu, pc - bias);
            if (line && dwarf_lineno(line, lineno) == 0)
                return dwarf_linesrc(line, NULL, NULL);
            return NULL;
        }
        off = next;
    }
    return NULL;
}

/* The function symbol around pc from libdwfl's full symbol table: 0, or
 * -1 when there is none. */
static int symbol_dw(uintptr_t pc, uintptr_t *start, size_t *size, char *name, size_t len)
{
    Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
    if (!mod && (report_modules() || !(mod = dwfl_addrmodule(dwfl, pc))))
        return -1;
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *s = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
    if (!s || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
        return -1;
    *start = pc - off;
    *size = sym.st_size;
    snprintf(name, len, "%s", s);
    return 0;
}

/* Symbol and line from libdwfl: 1 with the line, 0 the symbol alone, -1
 * nothing. */
static int resolve_dw(uintptr_t pc, char *buf, size_t len)
{
    Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
    if (!mod) {
        if (report_modules())
            return -1;
        mod = dwfl_addrmodule(dwfl, pc);
        if (!mod)
            return -1;
    }
    const char *sym = dwfl_module_addrname(mod, pc);
    if (!sym)
        return -1;
    /* compiler-outlined code, clang's .omp_outlined..N and gcc's FN._omp_fn.N
     * (._omp_cpyfn.N its copy functions): the line says more, and both
     * compilers' tasks get one name, "task (x.c:9)" */
    if (sym[0] == '.' || strstr(sym, "._omp_fn.") || strstr(sym, "._omp_cpyfn."))
        sym = "";
    Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
    int lineno = 0;
    const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL)
                            : line_by_units(mod, pc, &lineno);
    if (file && lineno > 0) {
        snprintf(buf, len, "%s%s(%s:%d)", sym, *sym ? " " : "", base_name(file), lineno);
        return 1;
    }
    if (!*sym)
        return -1;
    snprintf(buf, len, "%s", sym);
    return 0;
}
#endif

void tscope__srcloc(const void *addr, int ret, char *buf, size_t len)
{
    if (!len)
        return;
    uintptr_t pc = (uintptr_t)addr;
    if (!pc) {
        snprintf(buf, len, "(unknown location)");
        return;
    }
    if (ret)
        pc -= 1; /* inside the call instruction, not after it */
    pthread_mutex_lock(&lock);
    int done = tscope__namecache_get(pc, buf, len); /* an earlier run's libdw answer */
#ifdef TSCOPE_HAVE_LIBDW
    int found = done || dw_load() ? -1 : resolve_dw(pc, buf, len);
    if (found == 1) /* with its line: what the next run need not look up */
        tscope__namecache_put(pc, buf);
    done = done || found >= 0;
#endif
    pthread_mutex_unlock(&lock);
    if (done)
        return;
    Dl_info info;
    if (dladdr((void *)pc, &info) && info.dli_sname)
        snprintf(buf, len, "%s", info.dli_sname);
    else if (dladdr((void *)pc, &info) && info.dli_fname)
        snprintf(buf, len, "%s+0x%lx", base_name(info.dli_fname),
                 (unsigned long)(pc - (uintptr_t)info.dli_fbase));
    else
        snprintf(buf, len, "0x%lx", (unsigned long)pc);
}

int tscope__srcloc_symbol(const void *addr, uintptr_t *start, size_t *size, char *name, size_t len)
{
    uintptr_t pc = (uintptr_t)addr;
    if (!pc || !len)
        return -1;
#ifdef TSCOPE_HAVE_LIBDW
    pthread_mutex_lock(&lock);
    int rc = dw_load() ? -1 : symbol_dw(pc, start, size, name, len);
    pthread_mutex_unlock(&lock);
    if (rc == 0)
        return 0;
#endif
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1((void *)pc, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !info.dli_saddr ||
        ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
        return -1;
    *start = (uintptr_t)info.dli_saddr;
    *size = sym->st_size;
    snprintf(name, len, "%s", info.dli_sname ? info.dli_sname : "");
    return 0;
}

int tscope__srcloc_same_object(const void *addr, const void *in)
{
    Dl_info a, b;
    if (!addr || !in || !dladdr(addr, &a) || !dladdr(in, &b))
        return 0;
    return a.dli_fbase == b.dli_fbase;
}
