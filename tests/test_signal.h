/* test_signal.h: test signals in every sample format of cudafft/common.h (CudafftSampleFormat):
 * the raw interleaved samples an engine or element is given and, for each, the value it must read
 * from them. Used by the library tests and the element tests alike. Plain C. */
#ifndef CUDAFFT_TEST_SIGNAL_H
#define CUDAFFT_TEST_SIGNAL_H

#include "test_random.h"

#include <cudafft/common.h>

#include <stddef.h>
#include <stdint.h>

/* The format's name as GStreamer's caps write it ("S16LE", "S24LE", "S32LE", "F32LE", "F64LE") and
 * the bytes of one sample (2, 3, 4, 4, 8): written here, not asked of the library under test. */
const char *test_format_name(CudafftSampleFormat format);
size_t test_sample_bytes(CudafftSampleFormat format);

/* How an engine reads a sample, as its header says (flags):
 * - integers are divided by 2^(bits - 1) (audioconvert's scale; the STFT's), or with
 *   TEST_READ_SPECTRUM by 2^(bits - 1) - 1 (GStreamer's spectrum's);
 * - F64 samples are exact, or with TEST_READ_F64_AS_FLOAT rounded to float (as the engines that
 *   compute in float hold them, where a reference is to see the samples as they do). */
enum {
  TEST_READ_POW2 = 0,
  TEST_READ_SPECTRUM = 1 << 0,
  TEST_READ_F64_AS_FLOAT = 1 << 1,
};

/* The value of sample i of raw samples in format, read by the TEST_READ_* flags `read`. */
double test_sample_value(CudafftSampleFormat format, const uint8_t *raw, size_t i, int read);

typedef struct {
  CudafftSampleFormat format;
  unsigned channels, rate;
  size_t frames;  /* samples per channel */
  int read;       /* TEST_READ_* flags: how values follow from raw */
  uint8_t *raw;   /* frames x channels samples, interleaved, in format */
  double *values; /* interleaved: the value the engine must read for each raw sample */
} TestSignal;

/* A silent signal (all samples 0). */
void test_signal_alloc(TestSignal *signal, CudafftSampleFormat format, unsigned channels,
                       unsigned rate, size_t frames, int read);
/* Random full-scale samples: every integer code equally likely; floats uniform in [-1, 1) (F32
 * with 24 random bits, exact; F64 with 53, more than a float holds). */
void test_signal_random(TestSignal *signal, TestRng *rng, CudafftSampleFormat format,
                        unsigned channels, unsigned rate, size_t frames, int read);
/* Stores x (about [-1, 1]) as sample (frame, channel): integers x (2^(bits - 1) - 1) rounded and
 * clamped to the format (0 for NaN and infinities), floats rounded to the format. */
void test_signal_set(TestSignal *signal, size_t frame, unsigned channel, double x);
/* Noise: every sample amplitude x a uniform random value in [-1, 1) (53 bits), stored by
 * test_signal_set. */
void test_signal_noise(TestSignal *signal, TestRng *rng, CudafftSampleFormat format,
                       unsigned channels, unsigned rate, size_t frames, int read, double amplitude);
/* The frames [first, first + count) as a signal of their own (a copy). */
void test_signal_slice(TestSignal *slice, const TestSignal *signal, size_t first, size_t count);
void test_signal_clear(TestSignal *signal);
/* Bytes of one frame: channels x test_sample_bytes(format). */
size_t test_signal_frame_bytes(const TestSignal *signal);

#endif
