/* sofa_fuzz.h: damaged SOFA files for the hostile test's fuzzing of cudamatrixconvolve's
 * sofa-location: bit flips, truncations and overwritten blocks of real and generated sets.
 *
 * The sets damaged: Debian's KEMAR set (/usr/share/libmysofa/default.sofa, libmysofa1's: MIT's
 * measurements at 44.1 kHz, 1.1 MB) where it is installed, and a set of 60 directions x 2 ears x
 * 128 taps at 48 kHz written by make_sofa.py (netCDF4, as the SOFA APIs write them) where meson
 * found a python3 with netCDF4 (CUDAFFT_TEST_PYTHON, CUDAFFT_TEST_MAKE_SOFA). */
#ifndef CUDAFFT_TEST_SOFA_FUZZ_H
#define CUDAFFT_TEST_SOFA_FUZZ_H

#include "test_random.h"

#include <glib.h>

typedef struct {
  const char *name;
  gchar *path;
  guint rate;     /* the set's */
  GBytes *bytes;  /* the file's */
  gboolean owned; /* written here: removed at exit */
} SofaFuzzBase;

/* The sets there are to damage (made once per process; none where neither is at hand, with *why
 * saying so). */
GPtrArray *sofa_fuzz_bases(const char **why);

/* A damaged copy of `base`, the damage drawn from `rng`, written to a new file: its path (to
 * unlink and g_free); *what (to g_free) says what was done to it. */
gchar *sofa_fuzz_mutant(const SofaFuzzBase *base, TestRng *rng, const char *label, gchar **what);

#endif
