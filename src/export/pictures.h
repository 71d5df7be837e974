/* pictures.h - the file format of the pictures taskscope draws with gnuplot
 * (a run's concurrency, heatmap and scatter; an MPI job's messages and
 * ranks; convert's timeline): the terminal and output lines of every
 * script come from here.
 *
 * SVG by default: gnuplot draws one in a few ms, where pngcairo takes
 * 30-60 ms (zlib, libpng, pixman), and three PNGs were most of what the
 * default outputs cost.  TASKSCOPE_PICTURES=png draws PNGs instead.  One
 * setting per process: the library sets it from its configuration at
 * tscope_init, the command-line tool from the environment. */
#ifndef TSCOPE_EXPORT_PICTURES_H
#define TSCOPE_EXPORT_PICTURES_H

#include <stdio.h>

enum tscope__pictures { TSCOPE__PICTURES_SVG = 0, TSCOPE__PICTURES_PNG = 1 };

/* The format of the pictures of the scripts written from now on. */
void tscope__pictures_use(int format);

/* "svg" or "png": the pictures' file name extension. */
const char *tscope__pictures_ext(void);

/* Writes a script's terminal and output lines: NAME.EXT at width x height
 * pixels, text not enhanced (type names are shown as they are). */
void tscope__pictures_terminal(FILE *f, const char *name, unsigned width, unsigned height);

#endif
