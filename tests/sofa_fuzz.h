/* sofa_fuzz.h: damaged SOFA files for the hostile test's fuzzing of cudamatrixconvolve's
 * sofa-location (bit flips, truncations and overwritten blocks of real and generated sets), and
 * their runs through the element.
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

/* Case `index` of the damaged files of `seed`, through cudamatrixconvolve (eu_backend) in a
 * gst-check test: even cases at the start (the stream's caps read the file: EOS, where the damage
 * left a set libmysofa reads, or the element's ERROR naming the file, and no other element's
 * ERROR), odd ones while playing (the undamaged set filtering, then the damaged one set: every
 * push OK and EOS, after WARNINGs naming the file or none); now and then at a rate that resamples;
 * most on the generated set, every fourth on the KEMAR set where both are there. The case must end
 * within 90 s (the element kills a read at 10 s and 1 s a MiB): fails the test otherwise, keeping
 * the damaged file and naming it. Prints a line: what was damaged, the time, the outcome. */
void sofa_fuzz_run(guint64 seed, guint index);

#endif
