/* spectrum_reference.h: an independent model of GStreamer's spectrum analysis (1.22, as
 * cudafft/spectrum.h restates it) in double precision, for the library's spectrum tests and the
 * cudaspectrum element's alike: its own history of the last nfft frames and transform_ip's loop
 * (frames_todo with the interval carry, an FFT after every nfft frames of an interval and one at
 * its end when none ran), FFTW double for the transforms, levels clamped per FFT and averaged in
 * double. Settings changed while an interval is open apply from the next interval, as spectrum's
 * do. Plain C. */
#ifndef CUDAFFT_SPECTRUM_REFERENCE_H
#define CUDAFFT_SPECTRUM_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* What an analysis is set to: spectrum's properties. */
typedef struct {
  size_t bands;      /* nfft = 2 bands - 2 */
  int multi_channel; /* one spectrum per channel, else one of the channels' mean */
  uint64_t interval_ns;
  int threshold; /* dB */
  int phase;     /* whether the interval's phases are posted */
} SpectrumRefSettings;

/* One closed interval, as handed to the emit callback (valid during the call only). Arrays hold
 * rows x bands values, row 0 first; a window that held a NaN or Inf gives NaN in every band of
 * its row, and so in level, lo, hi and phase. */
typedef struct {
  SpectrumRefSettings settings; /* the interval's */
  size_t first;                 /* its first frame, counted from the model's start or reset */
  size_t frames, ffts;
  int partial;   /* closed by spectrum_ref_finish */
  unsigned rows; /* channels with multi_channel, else 1 */
  size_t bands;
  const double *level; /* mean of the FFTs' levels, each clamped to the threshold */
  /* The same means for |X| - e and |X| + e, e the float result's absolute error (see
   * SpectrumRefErrorFn): the interval a float analysis's level can lie in. */
  const double *lo, *hi;
  const double *phase;       /* mean phase */
  const double *min_level;   /* the FFTs' lowest level before clamping */
  const double *max_level;   /* and highest */
  const double *phase_error; /* the largest e / |X|: about the error of a float phase */
  const unsigned char *wrap; /* whether an FFT's phase came within 1e-3 of +-pi */
} SpectrumRefInterval;

typedef void (*SpectrumRefEmit)(void *context, const SpectrumRefInterval *interval);

/* The relative L2 error of a float analysis's spectrum at nfft (its FFT's and its samples'
 * roundings): e is 10 times that times the rms of the FFT's magnitudes (the error spread over the
 * bands, with room for the largest of a million), or times the L2 norm of the windowed channels'
 * mean magnitudes where that is larger (a mix that cancels). NULL: e = 0, lo = hi = level. */
typedef double (*SpectrumRefErrorFn)(size_t nfft);

typedef struct SpectrumRef SpectrumRef;

/* A model with no history, for `channels` channels at `rate`. */
SpectrumRef *spectrum_ref_new(unsigned channels, unsigned rate, const SpectrumRefSettings *settings,
                              SpectrumRefErrorFn error);
void spectrum_ref_free(SpectrumRef *ref);

/* Feeds frames (values: frames x channels, interleaved, as the analysis reads the samples);
 * every interval they close goes to emit. */
void spectrum_ref_push(SpectrumRef *ref, const double *values, size_t frames, SpectrumRefEmit emit,
                       void *context);
/* Closes the open interval, if it has frames (with its one FFT if none ran), as `partial`; the
 * framing starts afresh (the history stays). */
void spectrum_ref_finish(SpectrumRef *ref, SpectrumRefEmit emit, void *context);
/* Forgets the history and the open interval. */
void spectrum_ref_reset(SpectrumRef *ref);
/* New settings: at once where no interval is open, else from the next interval. A change of
 * interval_ns starts its frame count and carry afresh. */
void spectrum_ref_set_settings(SpectrumRef *ref, const SpectrumRefSettings *settings);

/* Frames in the open interval, and frames until it closes. */
size_t spectrum_ref_frames_pending(const SpectrumRef *ref);
size_t spectrum_ref_frames_left(const SpectrumRef *ref);

#endif
