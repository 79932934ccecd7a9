/* features_util.c: see the header. */
#include "features_util.h"

#include "test_signal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t
read_u32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void
features_ref_load(FeaturesRef *ref, const char *dir, const char *name)
{
  memset(ref, 0, sizeof *ref);
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.cfr", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f)
    test_abort("cannot open the reference %s (made by tests/make_feature_refs.py)", path);
  unsigned char head[40];
  if (fread(head, 1, sizeof head, f) != sizeof head || memcmp(head, "CFFR", 4) != 0 ||
      read_u32(head + 4) != 1)
    test_abort("%s is not a reference file of version 1", path);
  const uint32_t type = read_u32(head + 8);
  ref->ndim = read_u32(head + 12);
  if (ref->ndim < 1 || ref->ndim > 4 || type > 1)
    test_abort("%s: %u dimensions of type %u", path, ref->ndim, type);
  ref->count = 1;
  for (unsigned d = 0; d < ref->ndim; d++) {
    ref->dims[d] = read_u32(head + 16 + 4 * d);
    ref->count *= ref->dims[d];
  }
  ref->full = read_u32(head + 32);
  memcpy(&ref->tail, head + 36, 4);
  ref->values = test_malloc((ref->count ? ref->count : 1) * sizeof *ref->values);
  const size_t bytes = type == 1 ? 2 : 4;
  unsigned char *raw = test_malloc(ref->count * bytes + 1);
  if (fread(raw, bytes, ref->count, f) != ref->count)
    test_abort("%s: fewer values than its %zu", path, ref->count);
  fclose(f);
  if (type == 1) {
    ref->samples = test_malloc(ref->count * sizeof *ref->samples);
    for (size_t i = 0; i < ref->count; i++) {
      ref->samples[i] = (int16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
      ref->values[i] = ref->samples[i];
    }
  } else {
    for (size_t i = 0; i < ref->count; i++) {
      const uint32_t bits = read_u32(raw + 4 * i);
      memcpy(&ref->values[i], &bits, 4);
    }
  }
  free(raw);
}

void
features_ref_clear(FeaturesRef *ref)
{
  free(ref->values);
  free(ref->samples);
  memset(ref, 0, sizeof *ref);
}

float
features_ref_at2(const FeaturesRef *ref, size_t i, size_t j)
{
  const size_t stored = ref->dims[1];
  return j < stored ? ref->values[i * stored + j] : ref->tail;
}

float
features_half_to_float(uint16_t h)
{
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float v;
  if (exponent == 0)
    v = ldexpf((float)mantissa, -24);
  else if (exponent == 31)
    v = mantissa ? NAN : INFINITY;
  else
    v = ldexpf((float)(mantissa | 0x400), exponent - 25);
  return sign ? -v : v;
}

float
features_run_value(const FeaturesRun *run, CudafftFeaturesPrecision precision, size_t o, size_t v)
{
  const unsigned char *at = run->data + o * run->output_bytes;
  if (precision == CUDAFFT_FEATURES_F16) {
    uint16_t h;
    memcpy(&h, at + 2 * v, 2);
    return features_half_to_float(h);
  }
  float f;
  memcpy(&f, at + 4 * v, 4);
  return f;
}

/* Poison: bytes a call must overwrite (or, past its outputs, leave). */
#define POISON 0xA5

static int
check_written(const unsigned char *data, size_t written, size_t guard, const char *label,
              const char *call)
{
  size_t untouched = 0;
  for (size_t i = 0; i < written; i += 2)
    untouched += data[i] == POISON && data[i + 1] == POISON;
  size_t spilled = 0;
  for (size_t i = 0; i < guard; i++)
    spilled += data[written + i] != POISON;
  /* a value may legitimately hold the poison's pattern; a whole output of it cannot */
  if (spilled > 0 || (written > 0 && untouched == written / 2))
    return test_check(0, "%s: %s left %zu of %zu values unwritten, wrote %zu guard bytes", label,
                      call, untouched, written / 2, spilled);
  return 1;
}

void
features_run(FeaturesRun *run, CudafftBackend backend, const CudafftFeaturesConfig *config,
             const void *in, size_t samples, TestRng *rng, size_t max_piece, const char *label)
{
  memset(run, 0, sizeof *run);
  run->ok = 1;
  CudafftFeatures *f = NULL;
  CudafftStatus status = cudafft_features_create(&f, backend, -1, config);
  if (status != CUDAFFT_STATUS_OK) {
    run->ok = test_check(0, "%s: create: %s (%s)", label, cudafft_status_name(status),
                         cudafft_last_error_message());
    return;
  }
  run->output_bytes = cudafft_features_output_bytes(f);
  const size_t in_frame = config->channels * test_sample_bytes(config->format);
  const size_t guard = 64;
  size_t capacity = 16;
  run->data = test_malloc(capacity * run->output_bytes);
  run->stamps = test_malloc(capacity * sizeof *run->stamps);
  unsigned char *buffer = NULL;
  size_t buffer_outputs = 0;
  size_t at = 0;
  for (int last = 0; !last && run->ok;) {
    size_t piece = samples - at;
    if (max_piece > 0 && piece > 0)
      piece = test_rng_range(rng, 1, piece < max_piece ? piece : max_piece);
    last = at + piece == samples;
    for (int finishing = 0; finishing <= last && run->ok; finishing++) {
      const size_t count =
          finishing ? cudafft_features_finish_outputs(f) : cudafft_features_outputs_for(f, piece);
      if (count + 1 > buffer_outputs) {
        free(buffer);
        buffer_outputs = count + 1;
        buffer = test_malloc(buffer_outputs * run->output_bytes + guard);
      }
      memset(buffer, POISON, count * run->output_bytes + guard);
      const uint64_t first = cudafft_features_outputs_done(f);
      size_t got = 12345;
      status = finishing ? cudafft_features_finish(f, buffer, &got)
                         : cudafft_features_push(f, (const unsigned char *)in + at * in_frame,
                                                 piece, buffer, &got);
      const char *call = finishing ? "finish" : "push";
      if (status != CUDAFFT_STATUS_OK || got != count) {
        run->ok = test_check(0,
                             "%s: %s of %zu samples: %s (%s), %zu outputs where %zu were "
                             "announced",
                             label, call, finishing ? 0 : piece, cudafft_status_name(status),
                             cudafft_last_error_message(), got, count);
        break;
      }
      run->ok = check_written(buffer, count * run->output_bytes, guard, label, call);
      if (run->outputs + count > capacity) {
        capacity = 2 * (run->outputs + count);
        run->data = realloc(run->data, capacity * run->output_bytes);
        run->stamps = realloc(run->stamps, capacity * sizeof *run->stamps);
        if (!run->data || !run->stamps)
          test_abort("out of memory for %zu outputs", capacity);
      }
      memcpy(run->data + run->outputs * run->output_bytes, buffer, count * run->output_bytes);
      for (size_t k = 0; k < count && run->ok; k++) {
        CudafftFeaturesStamp *stamp = &run->stamps[run->outputs + k];
        status = cudafft_features_stamp(f, first + k, stamp);
        if (status != CUDAFFT_STATUS_OK || stamp->index != first + k)
          run->ok = test_check(0, "%s: stamp of output %llu: %s", label,
                               (unsigned long long)(first + k), cudafft_status_name(status));
      }
      run->outputs += count;
      if (!finishing && cudafft_features_samples_pushed(f) != at + piece)
        run->ok = test_check(0, "%s: %llu samples pushed, counted %llu", label,
                             (unsigned long long)(at + piece),
                             (unsigned long long)cudafft_features_samples_pushed(f));
    }
    at += piece;
  }
  if (run->ok && (cudafft_features_outputs_done(f) != 0 || cudafft_features_finish_outputs(f)))
    run->ok = test_check(0, "%s: after finish the object still counts outputs", label);
  free(buffer);
  cudafft_features_destroy(f);
}

void
features_config_kaldi_long_hop(CudafftFeaturesConfig *c)
{
  cudafft_features_config_init(c);
  c->channels = 2;
  c->fft_size = 64;
  c->win_length = 50;
  c->hop = 1600;
  c->span = CUDAFFT_FEATURES_SPAN_WINDOW;
  c->edges = CUDAFFT_FEATURES_EDGES_KALDI;
  c->n_mels = 8;
  c->kind = CUDAFFT_FEATURES_LOG_MEL;
  c->log = CUDAFFT_FEATURES_LN_GUARD;
}

void
features_run_clear(FeaturesRun *run)
{
  free(run->data);
  free(run->stamps);
  memset(run, 0, sizeof *run);
}
