/* pictures.c - the pictures' file format (pictures.h). */
#include <stdatomic.h>

#include "pictures.h"

static _Atomic int format = TSCOPE__PICTURES_SVG;

void tscope__pictures_use(int f)
{
    atomic_store_explicit(&format, f == TSCOPE__PICTURES_PNG ? f : TSCOPE__PICTURES_SVG,
                          memory_order_relaxed);
}

const char *tscope__pictures_ext(void)
{
    return atomic_load_explicit(&format, memory_order_relaxed) == TSCOPE__PICTURES_PNG ? "png"
                                                                                       : "svg";
}

void tscope__pictures_terminal(FILE *f, const char *name, unsigned width, unsigned height)
{
    /* svg: a fixed size (not `dynamic`), so the picture is as large as the
     * PNG would be and the legend's bound holds the same */
    int png = atomic_load_explicit(&format, memory_order_relaxed) == TSCOPE__PICTURES_PNG;
    fprintf(f, "set terminal %s size %u,%u noenhanced%s\nset output '%s.%s'\n",
            png ? "pngcairo" : "svg", width, height, png ? "" : " fixed background '#ffffff'", name,
            png ? "png" : "svg");
}
