/* scope_reference.h: an independent model of the spectrum scope (cudafft/scope.h) in double
 * precision: its own history, the FFT schedule, FFTW double with a Hann window computed in double,
 * the documented power normalisation, bands, smoothing, levels and peaks, and the drawing rules
 * (lanes, rows, columns, gaps, anti-aliased bars and markers, colormap interpolation, rounding to
 * bytes) re-derived from the header's text. Only the band weights and weighting gains come from
 * the library's public cudafft/bands.h, whose definitions test_bands.c checks against the IEC
 * tables and formulas of its own; and the colormap tables, which are data. Plain C. */
#ifndef CUDAFFT_SCOPE_REFERENCE_H
#define CUDAFFT_SCOPE_REFERENCE_H

#include <cudafft/scope.h>

#include <stddef.h>
#include <stdint.h>

typedef struct ScopeRef ScopeRef;

/* A model of a scope made with config (its options included), with a silent history. NULL
 * (after a failed check) where the options' layout is invalid. */
ScopeRef *scope_ref_new(const CudafftScopeConfig *config);
void scope_ref_free(ScopeRef *ref);

/* New options from the next frame on, with the header's rules for what starts afresh. */
void scope_ref_set_options(ScopeRef *ref, const CudafftScopeOptions *options);

/* Forgets the history and the display, as cudafft_scope_reset(). */
void scope_ref_reset(ScopeRef *ref);

/* One frame: appends frames x channels values (interleaved, as the scope reads the samples) and
 * draws into pixels (height rows of the config's stride; bytes past each row's last pixel are not
 * touched). */
void scope_ref_render(ScopeRef *ref, const double *values, size_t frames, uint8_t *pixels);

/* The last frame's levels and peaks (dB): lanes x bands, lane-major; and their shape. */
const double *scope_ref_levels(const ScopeRef *ref);
const double *scope_ref_peaks(const ScopeRef *ref);
unsigned scope_ref_lanes(const ScopeRef *ref);
unsigned scope_ref_bands(const ScopeRef *ref);
unsigned scope_ref_lane_height(const ScopeRef *ref);

/* The band of row r (from the top) of a lane (spectrogram) or of column x (bars; -1 for a gap). */
int scope_ref_band_of_row(const ScopeRef *ref, unsigned r);
int scope_ref_band_of_column(const ScopeRef *ref, unsigned x);

#endif
