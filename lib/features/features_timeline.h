/* features_timeline.h: where frames and outputs fall in an utterance (cudafft/features.h, steps
 * 2 and 10, Output, Finishing): the counts the front end sizes calls and stamps with and the
 * backends compute by, written once so that they cannot disagree. Pure functions of the
 * configuration and the samples pushed; host code only (C and the CUDA backend's host side).
 * Internal to the library.
 *
 * Words: an utterance holds N samples; F_rule(N) is the edge rule's frame count, F(N) =
 * F_rule(N) - drop_last the frames it keeps. Before the utterance ends only frames whose samples
 * have all arrived can be made ("ready"), and only frames that will exist whatever comes later can
 * be written ("kept": F_rule never falls as N grows, so frame f < F(N) stays). */
#ifndef CUDAFFT_FEATURES_TIMELINE_H
#define CUDAFFT_FEATURES_TIMELINE_H

#include <cudafft/features.h>

#include <stdint.h>

/* What the counts need of a configuration, derived once. */
typedef struct {
  CudafftFeaturesEdges edges;
  CudafftFeaturesPad pad;
  CudafftFeaturesOutput output;
  CudafftFeaturesDeltas delta_style;
  int64_t span;   /* S */
  int64_t pad_in; /* P: samples before the first sample where frame 0's span starts */
  int64_t offset; /* o: where the window starts in the span */
  int64_t length; /* L */
  int64_t hop;
  int drop_last;
  unsigned delta_order, delta_reach; /* reach N = (width - 1) / 2 */
  uint64_t window_frames, window_stride, chunk_samples;
  int pad_partial;
} CudafftFeaturesTimeline;

static inline CudafftFeaturesTimeline
cudafft_features_timeline(const CudafftFeaturesConfig *c)
{
  CudafftFeaturesTimeline t;
  t.edges = c->edges;
  t.pad = c->pad;
  t.output = c->output;
  t.delta_style = c->delta_style;
  t.length = (int64_t)(c->win_length ? c->win_length : c->fft_size);
  t.span = c->span == CUDAFFT_FEATURES_SPAN_FFT ? (int64_t)c->fft_size : t.length;
  t.offset = c->span == CUDAFFT_FEATURES_SPAN_FFT ? ((int64_t)c->fft_size - t.length) / 2 : 0;
  t.hop = (int64_t)c->hop;
  switch (c->edges) {
  case CUDAFFT_FEATURES_EDGES_CENTER:
    t.pad_in = t.span / 2;
    break;
  case CUDAFFT_FEATURES_EDGES_KALDI:
    t.pad_in = t.span / 2 - t.hop / 2;
    break;
  default:
    t.pad_in = 0;
  }
  t.drop_last = c->drop_last != 0;
  t.delta_order = c->delta_order;
  t.delta_reach = c->delta_order ? (c->delta_width - 1) / 2 : 0;
  t.window_frames = c->window_frames;
  t.window_stride = c->window_stride;
  t.chunk_samples = c->chunk_samples;
  t.pad_partial = c->pad_partial != 0;
  return t;
}

/* The edge rule's frame count for an utterance of n samples (step 2). */
static inline uint64_t
cudafft_features_rule_frames(const CudafftFeaturesTimeline *t, uint64_t n)
{
  const int64_t s = t->span, hop = t->hop, len = (int64_t)n;
  if (n == 0)
    return 0;
  switch (t->edges) {
  case CUDAFFT_FEATURES_EDGES_CENTER:
    return len + 2 * t->pad_in < s ? 0 : (uint64_t)(1 + (len + 2 * t->pad_in - s) / hop);
  case CUDAFFT_FEATURES_EDGES_SNIP:
    return len < s ? 0 : (uint64_t)(1 + (len - s) / hop);
  case CUDAFFT_FEATURES_EDGES_KALDI:
    return (uint64_t)((len + hop / 2) / hop);
  default:
    return len <= s ? 1 : (uint64_t)(1 + (len - s + hop - 1) / hop);
  }
}

/* F(n): the frames an utterance of n samples keeps. */
static inline uint64_t
cudafft_features_kept_frames(const CudafftFeaturesTimeline *t, uint64_t n)
{
  const uint64_t frames = cudafft_features_rule_frames(t, n);
  return frames > (uint64_t)t->drop_last ? frames - (uint64_t)t->drop_last : 0;
}

/* The first sample frame f's window reads: a(f) + o (may be negative). */
static inline int64_t
cudafft_features_window_start(const CudafftFeaturesTimeline *t, uint64_t f)
{
  return (int64_t)f * t->hop - t->pad_in + t->offset;
}

/* Samples an utterance must hold before frame f can be made without its end: its span, and
 * the samples the padding before the first sample reflects. */
static inline int64_t
cudafft_features_frame_needs(const CudafftFeaturesTimeline *t, uint64_t f)
{
  const int64_t span_end = (int64_t)f * t->hop - t->pad_in + t->span;
  const int64_t w0 = cudafft_features_window_start(t, f);
  int64_t reflected = 0;
  if (w0 < 0 && t->pad == CUDAFFT_FEATURES_PAD_REFLECT)
    reflected = -w0 + 1;
  else if (w0 < 0 && t->pad == CUDAFFT_FEATURES_PAD_SYMMETRIC)
    reflected = -w0;
  return span_end > reflected ? span_end : reflected;
}

/* Frames 0 .. ready - 1 can be made from the first n samples before the utterance ends. */
static inline uint64_t
cudafft_features_ready_frames(const CudafftFeaturesTimeline *t, uint64_t n)
{
  const int64_t len = (int64_t)n;
  if (len + t->pad_in < t->span)
    return 0;
  uint64_t ready = (uint64_t)((len + t->pad_in - t->span) / t->hop) + 1;
  const uint64_t rule = cudafft_features_rule_frames(t, n);
  ready = ready < rule ? ready : rule;
  /* only the first frames can need more than their span (the reflection), at most a sample */
  while (ready > 0 && cudafft_features_frame_needs(t, ready - 1) > len)
    ready--;
  return ready;
}

/* Frames that can be made and will be kept, before the utterance ends. */
static inline uint64_t
cudafft_features_made_frames(const CudafftFeaturesTimeline *t, uint64_t n)
{
  const uint64_t ready = cudafft_features_ready_frames(t, n);
  const uint64_t kept = cudafft_features_kept_frames(t, n);
  return ready < kept ? ready : kept;
}

/* Frames after frame f whose values its deltas read (FRAMES output: across the stream). */
static inline uint64_t
cudafft_features_lookahead(const CudafftFeaturesTimeline *t)
{
  if (t->delta_order == 0)
    return 0;
  if (t->delta_style == CUDAFFT_FEATURES_DELTAS_REGRESSION)
    return (uint64_t)t->delta_reach * t->delta_order;
  return t->delta_reach;
}

/* FRAMES output: frames that can be written from `made` frames made before the utterance ends
 * (their deltas' later frames made; SAVGOL's first frames need the first width). */
static inline uint64_t
cudafft_features_frames_writable(const CudafftFeaturesTimeline *t, uint64_t made)
{
  const uint64_t ahead = cudafft_features_lookahead(t);
  if (t->delta_order && t->delta_style == CUDAFFT_FEATURES_DELTAS_SAVGOL &&
      made < 2 * (uint64_t)t->delta_reach + 1)
    return 0;
  return made > ahead ? made - ahead : 0;
}

/* WINDOWS output: complete windows among `frames` frames. */
static inline uint64_t
cudafft_features_windows_in(const CudafftFeaturesTimeline *t, uint64_t frames)
{
  return frames < t->window_frames ? 0 : (frames - t->window_frames) / t->window_stride + 1;
}

/* Outputs complete once the stream holds n samples (n counted from create/reset/finish; an
 * utterance for FRAMES and WINDOWS, chunks of it for CHUNKS), before it ends. */
static inline uint64_t
cudafft_features_outputs_ready(const CudafftFeaturesTimeline *t, uint64_t n)
{
  switch (t->output) {
  case CUDAFFT_FEATURES_OUTPUT_FRAMES:
    return cudafft_features_frames_writable(t, cudafft_features_made_frames(t, n));
  case CUDAFFT_FEATURES_OUTPUT_WINDOWS:
    return cudafft_features_windows_in(t, cudafft_features_made_frames(t, n));
  default:
    return n / t->chunk_samples;
  }
}

/* Outputs of a stream of n samples once it has ended (finish). */
static inline uint64_t
cudafft_features_outputs_final(const CudafftFeaturesTimeline *t, uint64_t n)
{
  const uint64_t frames = cudafft_features_kept_frames(t, n);
  switch (t->output) {
  case CUDAFFT_FEATURES_OUTPUT_FRAMES:
    return frames;
  case CUDAFFT_FEATURES_OUTPUT_WINDOWS: {
    const uint64_t whole = cudafft_features_windows_in(t, frames);
    return whole + (t->pad_partial && whole * t->window_stride < frames);
  }
  default:
    return (n + t->chunk_samples - 1) / t->chunk_samples;
  }
}

/* CHUNKS: the frames of one chunk (an utterance of chunk_samples samples). */
static inline uint64_t
cudafft_features_chunk_frames(const CudafftFeaturesTimeline *t)
{
  return cudafft_features_kept_frames(t, t->chunk_samples);
}

#endif
