/* sofa_fuzz.c: see the header. */
#include "sofa_fuzz.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define KEMAR "/usr/share/libmysofa/default.sofa"

static pid_t owner; /* the process that wrote the generated set: it removes it */
static GPtrArray *bases;

static void
remove_bases(void)
{
  if (getpid() != owner) /* a forked test's exit */
    return;
  for (guint k = 0; k < bases->len; k++) {
    const SofaFuzzBase *base = g_ptr_array_index(bases, k);
    if (base->owned)
      g_unlink(base->path);
  }
}

/* 60 directions x 2 ears x 128 taps at 48 kHz, fixed random taps, delays of 3 and 5 samples,
 * through make_sofa.py; NULL where it is not at hand or fails (*why says so). */
static gchar *
generated_set(const char **why)
{
  const char *python = g_getenv("CUDAFFT_TEST_PYTHON");
  const char *script = g_getenv("CUDAFFT_TEST_MAKE_SOFA");
  if (!python || !script) {
    *why = "no python3 with netCDF4 (CUDAFFT_TEST_PYTHON, CUDAFFT_TEST_MAKE_SOFA unset)";
    return NULL;
  }
  enum { M = 60, R = 2, N = 128, SET_RATE = 48000 };
  gchar *data = g_strdup_printf("%s/cudafft-sofa-fuzz-%d.bin", g_get_tmp_dir(), (int)getpid());
  gchar *path = g_strdup_printf("%s/cudafft-sofa-fuzz-%d.sofa", g_get_tmp_dir(), (int)getpid());
  FILE *f = fopen(data, "wb");
  gboolean ok = f != NULL;
  const gint32 header[4] = {M, R, N, SET_RATE};
  ok = ok && fwrite(header, sizeof header, 1, f) == 1;
  for (guint m = 0; ok && m < M; m++) { /* azimuths every 30 degrees at 5 elevations */
    const double position[3] = {(double)(m % 12) * 30.0, (double)(m / 12) * 30.0 - 60.0, 1.5};
    ok = fwrite(position, sizeof position, 1, f) == 1;
  }
  TestRng rng = {0x5eedf00dull};
  for (guint k = 0; ok && k < M * R * N; k++) {
    const double tap = test_rng_uniform53(&rng) * 0.5;
    ok = fwrite(&tap, sizeof tap, 1, f) == 1;
  }
  const double delays[R] = {3.0, 5.0};
  ok = ok && fwrite(delays, sizeof delays, 1, f) == 1;
  if (f)
    ok = fclose(f) == 0 && ok;
  gchar *err = NULL;
  gint status = 0;
  const gchar *argv[] = {python, script, path, data, NULL};
  ok = ok &&
       g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                    &status, NULL) &&
       g_spawn_check_wait_status(status, NULL);
  if (!ok) {
    g_printerr("%s did not write a set: %s\n", script, err ? err : "");
    *why = "make_sofa.py failed";
    g_free(path);
    path = NULL;
  }
  g_free(err);
  g_unlink(data);
  g_free(data);
  return path;
}

static void
add_base(const char *name, gchar *path, guint rate, gboolean owned)
{
  gchar *contents = NULL;
  gsize size = 0;
  if (!g_file_get_contents(path, &contents, &size, NULL) || size < 64) {
    g_free(contents);
    g_free(path);
    return;
  }
  SofaFuzzBase *base = g_new0(SofaFuzzBase, 1);
  base->name = name;
  base->path = path;
  base->rate = rate;
  base->bytes = g_bytes_new_take(contents, size);
  base->owned = owned;
  g_ptr_array_add(bases, base);
}

GPtrArray *
sofa_fuzz_bases(const char **why)
{
  *why = NULL;
  if (bases)
    return bases;
  owner = getpid();
  bases = g_ptr_array_new();
  const char *no_generated = NULL;
  gchar *generated = generated_set(&no_generated);
  if (generated)
    add_base("generated", generated, 48000, TRUE);
  if (g_file_test(KEMAR, G_FILE_TEST_IS_REGULAR))
    add_base("KEMAR", g_strdup(KEMAR), 44100, FALSE);
  if (bases->len == 0)
    *why = no_generated ? no_generated : "no set to damage";
  atexit(remove_bases);
  return bases;
}

gchar *
sofa_fuzz_mutant(const SofaFuzzBase *base, TestRng *rng, const char *label, gchar **what)
{
  gsize size = 0;
  const guint8 *original = g_bytes_get_data(base->bytes, &size);
  guint8 *data = g_memdup2(original, size);
  switch (test_rng_range(rng, 0, 2)) {
  case 0: { /* bit flips */
    const guint flips = (guint)test_rng_range(rng, 1, 16);
    for (guint k = 0; k < flips; k++)
      data[test_rng_range(rng, 0, size - 1)] ^= (guint8)(1u << test_rng_range(rng, 0, 7));
    *what = g_strdup_printf("%s, %u bits flipped", base->name, flips);
    break;
  }
  case 1: { /* truncated */
    const gsize keep = test_rng_range(rng, 0, size - 1);
    *what = g_strdup_printf("%s, cut to %zu of %zu bytes", base->name, keep, size);
    size = keep;
    break;
  }
  default: { /* a block overwritten: zeros, ones, random bytes, or another part of the file */
    const gsize at = test_rng_range(rng, 0, size - 1);
    const gsize length = MIN(test_rng_range(rng, 1, 4096), size - at);
    const guint fill = (guint)test_rng_range(rng, 0, 3);
    const gsize from = test_rng_range(rng, 0, size - length);
    for (gsize k = 0; k < length; k++)
      data[at + k] = fill == 0   ? 0x00
                     : fill == 1 ? 0xff
                     : fill == 2 ? (guint8)test_rng_u64(rng)
                                 : original[from + k];
    static const char *const fills[] = {"zeros", "0xff", "random bytes", "a copy of another part"};
    *what = g_strdup_printf("%s, %zu bytes at %zu overwritten with %s", base->name, length, at,
                            fills[fill]);
    break;
  }
  }
  gchar *path =
      g_strdup_printf("%s/cudafft-sofa-fuzz-%d-%s.sofa", g_get_tmp_dir(), (int)getpid(), label);
  if (!g_file_set_contents(path, (const gchar *)data, (gssize)size, NULL)) {
    g_free(path);
    path = NULL;
  }
  g_free(data);
  return path;
}
