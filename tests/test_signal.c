/* test_signal.c: see test_signal.h. */
#include "test_signal.h"
#include "test_harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *
test_format_name(CudafftSampleFormat format)
{
  static const char *const names[CUDAFFT_SAMPLE_COUNT_] = {[CUDAFFT_SAMPLE_S16] = "S16LE",
                                                           [CUDAFFT_SAMPLE_S24] = "S24LE",
                                                           [CUDAFFT_SAMPLE_S32] = "S32LE",
                                                           [CUDAFFT_SAMPLE_F32] = "F32LE",
                                                           [CUDAFFT_SAMPLE_F64] = "F64LE"};
  return (unsigned)format < CUDAFFT_SAMPLE_COUNT_ ? names[format] : "(bad format)";
}

size_t
test_sample_bytes(CudafftSampleFormat format)
{
  static const size_t bytes[CUDAFFT_SAMPLE_COUNT_] = {[CUDAFFT_SAMPLE_S16] = 2,
                                                      [CUDAFFT_SAMPLE_S24] = 3,
                                                      [CUDAFFT_SAMPLE_S32] = 4,
                                                      [CUDAFFT_SAMPLE_F32] = 4,
                                                      [CUDAFFT_SAMPLE_F64] = 8};
  return (unsigned)format < CUDAFFT_SAMPLE_COUNT_ ? bytes[format] : 0;
}

size_t
test_signal_frame_bytes(const TestSignal *signal)
{
  return test_sample_bytes(signal->format) * signal->channels;
}

static void *
alloc_zeros(size_t count, size_t size)
{
  void *p = calloc(count + 1, size);
  if (!p)
    test_abort("test_signal: cannot allocate %zu x %zu bytes", count, size);
  return p;
}

void
test_signal_alloc(TestSignal *signal, CudafftSampleFormat format, unsigned channels, unsigned rate,
                  size_t frames, int read)
{
  const size_t count = frames * channels;
  signal->format = format;
  signal->channels = channels;
  signal->rate = rate;
  signal->frames = frames;
  signal->read = read;
  signal->raw = alloc_zeros(count, test_sample_bytes(format));
  signal->values = alloc_zeros(count, sizeof(double));
}

/* The value of the integer code v of a bits-bit format. */
static double
integer_value(int64_t v, int bits, int read)
{
  const double scale = (double)((int64_t)1 << (bits - 1));
  return (double)v / (read & TEST_READ_SPECTRUM ? scale - 1.0 : scale);
}

double
test_sample_value(CudafftSampleFormat format, const uint8_t *raw, size_t i, int read)
{
  const uint8_t *p = raw + i * test_sample_bytes(format);
  switch (format) {
  case CUDAFFT_SAMPLE_S16: {
    int16_t v;
    memcpy(&v, p, 2);
    return integer_value(v, 16, read);
  }
  case CUDAFFT_SAMPLE_S24: {
    int32_t v = (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16));
    if (v >= 0x800000)
      v -= 0x1000000;
    return integer_value(v, 24, read);
  }
  case CUDAFFT_SAMPLE_S32: {
    int32_t v;
    memcpy(&v, p, 4);
    return integer_value(v, 32, read);
  }
  case CUDAFFT_SAMPLE_F32: {
    float v;
    memcpy(&v, p, 4);
    return v;
  }
  default: {
    double v;
    memcpy(&v, p, 8);
    return read & TEST_READ_F64_AS_FLOAT ? (double)(float)v : v;
  }
  }
}

/* Sample i as raw bytes from its integer code (integers) or value (floats); values[i] follows. */
static void
store(TestSignal *signal, size_t i, int64_t code, double x)
{
  uint8_t *p = signal->raw + i * test_sample_bytes(signal->format);
  switch (signal->format) {
  case CUDAFFT_SAMPLE_S16: {
    const int16_t v = (int16_t)code;
    memcpy(p, &v, 2);
    break;
  }
  case CUDAFFT_SAMPLE_S24: {
    const uint32_t u = (uint32_t)(int32_t)code;
    p[0] = (uint8_t)(u & 0xff);
    p[1] = (uint8_t)((u >> 8) & 0xff);
    p[2] = (uint8_t)((u >> 16) & 0xff);
    break;
  }
  case CUDAFFT_SAMPLE_S32: {
    const int32_t v = (int32_t)code;
    memcpy(p, &v, 4);
    break;
  }
  case CUDAFFT_SAMPLE_F32: {
    const float v = (float)x;
    memcpy(p, &v, 4);
    break;
  }
  default:
    memcpy(p, &x, 8);
    break;
  }
  signal->values[i] = test_sample_value(signal->format, signal->raw, i, signal->read);
}

void
test_signal_random(TestSignal *signal, TestRng *rng, CudafftSampleFormat format, unsigned channels,
                   unsigned rate, size_t frames, int read)
{
  test_signal_alloc(signal, format, channels, rate, frames, read);
  for (size_t i = 0; i < frames * channels; i++) {
    const uint64_t r = test_rng_u64(rng);
    switch (format) {
    case CUDAFFT_SAMPLE_S16:
      store(signal, i, (int16_t)(uint16_t)(r >> 48), 0.0);
      break;
    case CUDAFFT_SAMPLE_S24: {
      const int64_t u = (int64_t)(r >> 40); /* 24 bits */
      store(signal, i, u >= 0x800000 ? u - 0x1000000 : u, 0.0);
      break;
    }
    case CUDAFFT_SAMPLE_S32:
      store(signal, i, (int32_t)(uint32_t)(r >> 32), 0.0);
      break;
    case CUDAFFT_SAMPLE_F32:
      store(signal, i, 0, (double)(r >> 40) * (2.0 / 16777216.0) - 1.0);
      break;
    default:
      store(signal, i, 0, (double)(r >> 11) * (2.0 / 9007199254740992.0) - 1.0);
      break;
    }
  }
}

void
test_signal_set(TestSignal *signal, size_t frame, unsigned channel, double x)
{
  const size_t i = frame * signal->channels + channel;
  int bits = 0;
  switch (signal->format) {
  case CUDAFFT_SAMPLE_S16:
    bits = 16;
    break;
  case CUDAFFT_SAMPLE_S24:
    bits = 24;
    break;
  case CUDAFFT_SAMPLE_S32:
    bits = 32;
    break;
  default:
    store(signal, i, 0, x);
    return;
  }
  const int64_t max = ((int64_t)1 << (bits - 1)) - 1;
  int64_t code = 0;
  if (isfinite(x)) {
    const double scaled = x * (double)max;
    code = scaled >= (double)max ? max : scaled <= (double)(-max - 1) ? -max - 1 : llround(scaled);
  }
  store(signal, i, code, x);
}

void
test_signal_noise(TestSignal *signal, TestRng *rng, CudafftSampleFormat format, unsigned channels,
                  unsigned rate, size_t frames, int read, double amplitude)
{
  test_signal_alloc(signal, format, channels, rate, frames, read);
  for (size_t f = 0; f < frames; f++)
    for (unsigned c = 0; c < channels; c++)
      test_signal_set(signal, f, c, amplitude * test_rng_uniform53(rng));
}

void
test_signal_slice(TestSignal *slice, const TestSignal *signal, size_t first, size_t count)
{
  const size_t frame_bytes = test_signal_frame_bytes(signal);
  test_signal_alloc(slice, signal->format, signal->channels, signal->rate, count, signal->read);
  memcpy(slice->raw, signal->raw + first * frame_bytes, count * frame_bytes);
  memcpy(slice->values, signal->values + first * signal->channels,
         count * signal->channels * sizeof(double));
}

void
test_signal_clear(TestSignal *signal)
{
  free(signal->raw);
  free(signal->values);
  memset(signal, 0, sizeof *signal);
}
