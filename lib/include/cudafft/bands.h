/* cudafft/bands.h: frequency bands for spectrum displays, defined once for the whole library (the
 * spectrum scope, cudafft/scope.h) and for its users (cudaspectrum's band layouts): frequency
 * scales, IEC 61260-1 fractional-octave bands, IEC 61672-1 frequency weightings, and how the bins
 * of an FFT become a band. Plain C; no CUDA, GLib or GStreamer types. The formulas themselves are
 * written in lib/common/band_values.h, which the CPU code and the CUDA kernels both compile.
 *
 * Frequency scales (CudafftFrequencyScale), N bands from f_lo to f_hi:
 *
 * - LINEAR, LOG, MEL: with s the scale's coordinate (s(f) = f; ln f; mel(f)), the band centres lie
 *   evenly in s from f_lo to f_hi, both included: s_i = s(f_lo) + i D, D = (s(f_hi) - s(f_lo)) /
 *   (N - 1), i = 0 .. N - 1, and band i spans s_i - D/2 .. s_i + D/2, mapped back to hertz (one
 *   band alone: centred on the middle of the range, spanning all of it). With f_lo = 0, f_hi =
 *   rate / 2 and N = nfft / 2 + 1, the LINEAR bands are the FFT's bins themselves.
 *   mel(f) = 2595 log10(1 + f / 700): O'Shaughnessy's formula, as HTK and most analysers use it.
 * - OCTAVE: the fractional-octave bands of IEC 61260-1:2014 with b bands per octave (1, 3, 6, 12
 *   or 24), base-10 ratio G = 10^(3/10), reference frequency f_r = 1000 Hz. Band x (any integer)
 *   has the exact midband frequency f_m = f_r G^(x / b) for odd b and f_r G^((2x + 1) / (2b)) for
 *   even b, and the edges f_m G^(-1 / (2b)) and f_m G^(1 / (2b)) (clause 5.2 - 5.4). A layout
 *   holds the bands whose midband frequency lies in [f_lo, f_hi], lowest first.
 *
 * Frequency weightings (CudafftWeighting), IEC 61672-1:2013 Annex E, in dB:
 *
 *   C(f) = 20 lg[ f4^2 f^2 / ((f^2 + f1^2) (f^2 + f4^2)) ] - C1000
 *   A(f) = 20 lg[ f4^2 f^4 / ((f^2 + f1^2) (f^2 + f2^2)^1/2 (f^2 + f3^2)^1/2 (f^2 + f4^2)) ] -
 * A1000
 *
 * with the exact pole frequencies of equations (E.1) - (E.6): f_r = 1000 Hz, f_L = 10^1.5 Hz,
 * f_H = 10^3.9 Hz, D^2 = 1/2, b = (f_r^2 + f_L^2 f_H^2 / f_r^2 - D (f_L^2 + f_H^2)) / (1 - D),
 * c = f_L^2 f_H^2, f1 = ((-b - sqrt(b^2 - 4c)) / 2)^1/2 (20.599 Hz), f4 = ((-b + sqrt(b^2 - 4c))
 * / 2)^1/2 (12194.2 Hz), f_A = 10^2.45 Hz, f2 = f_A (3 - sqrt 5) / 2 (107.65 Hz), f3 = f_A (3 +
 * sqrt 5) / 2 (737.86 Hz). C1000 and A1000 are the unnormalised responses at 1 kHz, computed from
 * the same formulas in double precision, so that both weightings are exactly 0 dB at 1 kHz (they
 * round to the standard's -0.062 dB and -2.000 dB). Z is 0 dB everywhere. At 0 Hz A and C are
 * -infinity dB: a gain of 0.
 *
 * From FFT bins to bands: an FFT of nfft points at `rate` has bins k = 0 .. K, K = nfft/2 rounded
 * down (an odd nfft has no bin at rate/2), at f_k = k d, d = rate / nfft; bin k stands for the
 * frequencies f_k - d/2 .. f_k + d/2. A band from lo to hi (width w = hi - lo) takes the power P_k
 * of bins with weights a_k:
 *
 * - w >= d: a_k is the fraction of bin k's width that lies inside the band, |[lo, hi] ∩ [f_k - d/2,
 *   f_k + d/2]| / d: bins inside count whole, the two edge bins in part, and power sums over the
 *   band. Frequencies beyond the outer bins (below -d/2, above f_K + d/2) hold no power.
 * - w < d (a band narrower than a bin): the power density at the band's centre c = (lo + hi) / 2,
 *   interpolated linearly between the two nearest bin centres (held at the outer bins' values
 *   beyond them), times the width: with j = floor(c / d) and t = c / d - j, a_j = (w / d)(1 - t)
 *   and a_(j+1) = (w / d) t. At w = d both rules give the same weights, so levels stay continuous
 *   as bands narrow, and neighbouring narrow bands vary smoothly instead of in steps of a bin.
 *
 * With a weighting, each bin's power is multiplied by the weighting's gain 10^(W(f_k) / 10) at its
 * own frequency before it is summed: band power = sum_k a_k g_k P_k. Weights are computed in double
 * precision and rounded to float once.
 */
#ifndef CUDAFFT_BANDS_H
#define CUDAFFT_BANDS_H

#include <cudafft/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  CUDAFFT_SCALE_LINEAR = 0,
  CUDAFFT_SCALE_LOG,
  CUDAFFT_SCALE_MEL,
  CUDAFFT_SCALE_OCTAVE,
  CUDAFFT_SCALE_COUNT_ /* not a scale */
} CudafftFrequencyScale;

typedef enum {
  CUDAFFT_WEIGHTING_Z = 0, /* flat: 0 dB */
  CUDAFFT_WEIGHTING_A,
  CUDAFFT_WEIGHTING_C,
  CUDAFFT_WEIGHTING_COUNT_ /* not a weighting */
} CudafftWeighting;

/* The lowest frequency of LOG and OCTAVE layouts whose min_frequency is 0 ("automatic"): the
 * bottom of the audible range. */
#define CUDAFFT_BANDS_AUTO_MIN_FREQUENCY 20.0

/* A band layout: which bands, between which frequencies. */
typedef struct {
  CudafftFrequencyScale scale;
  size_t bands;              /* LINEAR, LOG, MEL: how many, >= 1; OCTAVE: unused */
  unsigned bands_per_octave; /* OCTAVE: 1, 3, 6, 12 or 24; others: unused */
  double min_frequency;      /* Hz, >= 0 (> 0 for LOG) */
  double max_frequency;      /* Hz, > min_frequency */
} CudafftBandLayout;

/* The weights of one band over the bins of an FFT: bins first .. last (inclusive), first weighing
 * first_weight, last last_weight and every bin between them 1. When first == last the one bin
 * weighs first_weight. A band that covers no bin has first == last == 0 and weight 0. */
typedef struct {
  unsigned first, last;
  float first_weight, last_weight;
} CudafftBandBins;

/* Fills the automatic frequencies of a layout for a stream of `rate` frames per second:
 * min_frequency 0 becomes CUDAFFT_BANDS_AUTO_MIN_FREQUENCY for LOG and OCTAVE (0 Hz stays for
 * LINEAR and MEL), and max_frequency 0, or one above rate / 2, becomes rate / 2. Then checks the
 * layout: INVALID_VALUE with a message that names the values (an unknown scale, 0 bands, a
 * bands_per_octave other than 1, 3, 6, 12, 24, a negative or non-finite frequency, min not below
 * max, an OCTAVE range that holds no midband frequency). */
CUDAFFT_API CudafftStatus cudafft_band_layout_resolve(CudafftBandLayout *layout, double rate);

/* The number of bands of a resolved layout (0 for an invalid one, with the message recorded). */
CUDAFFT_API size_t cudafft_band_count(const CudafftBandLayout *layout);

/* Each band's lower edge, centre and upper edge in Hz (cudafft_band_count() values each; any may
 * be NULL). The centre of a LINEAR, LOG or MEL band is s_i mapped back to Hz (so the geometric
 * mean of its edges for LOG), of an OCTAVE band its exact midband frequency. */
CUDAFFT_API CudafftStatus cudafft_band_edges(const CudafftBandLayout *layout, double *lower,
                                             double *centre, double *upper);

/* The weights of each band of a resolved layout over the nfft/2 + 1 bins (rounded down) of an
 * nfft-point FFT (nfft >= 2, even or odd) at rate: cudafft_band_count() entries, by the rules
 * above. */
CUDAFFT_API CudafftStatus cudafft_band_bins(const CudafftBandLayout *layout, size_t nfft,
                                            double rate, CudafftBandBins *bins);

/* A weighting's response in dB at f Hz (f >= 0; -infinity at 0 for A and C). */
CUDAFFT_API double cudafft_weighting_db(CudafftWeighting weighting, double frequency);

/* The gains 10^(W(f_k) / 10) of the nfft / 2 + 1 bins (rounded down) of an nfft-point FFT at rate
 * (nfft >= 2; rounded to float once). */
CUDAFFT_API CudafftStatus cudafft_weighting_gains(CudafftWeighting weighting, size_t nfft,
                                                  double rate, float *gains);

/* The exact midband frequency of IEC 61260-1 band x with bands_per_octave (1, 3, 6, 12, 24) bands
 * per octave, and its edges (either pointer may be NULL). */
CUDAFFT_API double cudafft_octave_midband(unsigned bands_per_octave, int x, double *lower,
                                          double *upper);

/* mel(f) = 2595 log10(1 + f / 700), and its inverse. */
CUDAFFT_API double cudafft_mel_from_hz(double hz);
CUDAFFT_API double cudafft_hz_from_mel(double mel);

/* Band levels from bin levels, for spectra that are already in dB (cudaspectrum's messages):
 * band b's level is 10 log10(sum_k a_k g_k 10^(L_k / 10)) over its bins (gains g_k may be NULL:
 * all 1), raised to floor_db where lower (and where the sum is 0). bin_db holds the spectrum's
 * bins (as many as the FFT the weights were made for has). */
CUDAFFT_API void cudafft_band_levels_from_bins(const CudafftBandBins *bands, size_t count,
                                               const float *gains, const float *bin_db,
                                               float floor_db, float *band_db);

#ifdef __cplusplus
}
#endif

#endif /* CUDAFFT_BANDS_H */
