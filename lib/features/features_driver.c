/* features_driver.c: see the header. */
#include "features_driver.h"

#include "errors.h"

void
cudafft_features_driver_reset(CudafftFeaturesDriver *d)
{
  d->utterance = 0;
  d->made = 0;
  d->written = 0;
  d->call_outputs = 0;
}

void
cudafft_features_driver_init(CudafftFeaturesDriver *d, const CudafftFeaturesConfig *config,
                             size_t piece_frames)
{
  d->t = cudafft_features_timeline(config);
  const size_t frames = piece_frames > 0 ? piece_frames : 1;
  d->piece = frames * config->hop;
  cudafft_features_driver_reset(d);
}

/* Frames past those ready that an utterance's end can add (its last spans, the padding). */
static uint64_t
tail_frames(const CudafftFeaturesTimeline *t)
{
  return (uint64_t)((t->span + t->pad_in) / t->hop) + 3;
}

uint64_t
cudafft_features_ring_frames(const CudafftFeaturesConfig *config, size_t piece_frames)
{
  const CudafftFeaturesTimeline t = cudafft_features_timeline(config);
  const uint64_t piece = (uint64_t)(piece_frames > 0 ? piece_frames : 1) + 1;
  uint64_t back;
  switch (t.output) {
  case CUDAFFT_FEATURES_OUTPUT_FRAMES: {
    /* the frames written wait for their look-ahead; their deltas read as far back */
    const uint64_t reach = 2 * (uint64_t)t.delta_reach * (t.delta_order ? t.delta_order : 1);
    back = 2 * reach + 2 * (uint64_t)t.delta_reach + 1;
    break;
  }
  case CUDAFFT_FEATURES_OUTPUT_WINDOWS:
    back = t.window_frames;
    break;
  default:
    back = cudafft_features_chunk_frames(&t);
  }
  return back + piece + tail_frames(&t) + 4;
}

uint64_t
cudafft_features_history_start(const CudafftFeaturesTimeline *t, uint64_t made, uint64_t length)
{
  int64_t start = cudafft_features_window_start(t, made);
  /* a window reaches past the end by the padding at most (a negative pad_in, Kaldi's edges with
   * a hop beyond the span, pads nothing: its frames start later and reach past the end by half a
   * span), and its reflection reads back as far from the end */
  const int64_t end_reach = (int64_t)length - 1 - t->span - (t->pad_in > 0 ? t->pad_in : 0);
  start = end_reach < start ? end_reach : start;
  return start > 0 ? (uint64_t)start : 0;
}

/* Units of the current utterance that can be written: all of them once it has ended. */
static uint64_t
units_due(const CudafftFeaturesDriver *d, int ended)
{
  const CudafftFeaturesTimeline *t = &d->t;
  switch (t->output) {
  case CUDAFFT_FEATURES_OUTPUT_FRAMES:
    return ended ? d->made : cudafft_features_frames_writable(t, d->made);
  case CUDAFFT_FEATURES_OUTPUT_WINDOWS: {
    const uint64_t whole = cudafft_features_windows_in(t, d->made);
    return whole + (ended && t->pad_partial && whole * t->window_stride < d->made);
  }
  default:
    return ended ? 1 : 0;
  }
}

/* Makes the frames the utterance's samples allow and writes the units they complete. */
static CudafftStatus
advance(CudafftFeaturesDriver *d, const CudafftFeaturesOps *ops, int ended)
{
  const uint64_t length = d->utterance;
  const uint64_t target = ended ? cudafft_features_kept_frames(&d->t, length)
                                : cudafft_features_made_frames(&d->t, length);
  if (target > d->made) {
    const CudafftStatus status = ops->make_frames(ops->ctx, d->made, target, length, ended);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    d->made = target;
  }
  const uint64_t due = units_due(d, ended);
  if (due > d->written) {
    const CudafftFeaturesUnits units = {
        .first = d->written,
        .count = due - d->written,
        .kept = ended ? d->made : CUDAFFT_FEATURES_UNKNOWN,
        .made = d->made,
        .out_index = d->call_outputs,
    };
    const CudafftStatus status = ops->write_units(ops->ctx, &units);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    d->call_outputs += (size_t)units.count;
    d->written = due;
  }
  return CUDAFFT_STATUS_OK;
}

/* Ends the current utterance: its last frames and units, then the backend's state. */
static CudafftStatus
end_utterance(CudafftFeaturesDriver *d, const CudafftFeaturesOps *ops)
{
  const CudafftStatus status = advance(d, ops, 1);
  ops->end_utterance(ops->ctx);
  d->utterance = 0;
  d->made = 0;
  d->written = 0;
  return status;
}

/* Appends count samples (in, or zeros) in pieces, advancing after each; a chunk that fills up
 * ends there. */
static CudafftStatus
append_all(CudafftFeaturesDriver *d, const CudafftFeaturesOps *ops, const unsigned char *in,
           size_t count, size_t in_frame_bytes, int in_on_device)
{
  const int chunks = d->t.output == CUDAFFT_FEATURES_OUTPUT_CHUNKS;
  while (count > 0) {
    size_t piece = count < d->piece ? count : d->piece;
    if (chunks && piece > d->t.chunk_samples - d->utterance)
      piece = (size_t)(d->t.chunk_samples - d->utterance);
    CudafftStatus status = ops->append(ops->ctx, in, piece, in_on_device, d->utterance);
    if (status != CUDAFFT_STATUS_OK)
      return status;
    d->utterance += piece;
    count -= piece;
    if (in)
      in += piece * in_frame_bytes;
    if (chunks && d->utterance == d->t.chunk_samples)
      status = end_utterance(d, ops);
    else
      status = advance(d, ops, 0);
    if (status != CUDAFFT_STATUS_OK)
      return status;
  }
  return CUDAFFT_STATUS_OK;
}

CudafftStatus
cudafft_features_drive(CudafftFeaturesDriver *d, const CudafftFeaturesOps *ops, const void *in,
                       size_t samples, size_t in_frame_bytes, int in_on_device, int finish,
                       size_t *outputs)
{
  d->call_outputs = 0;
  CudafftStatus status =
      append_all(d, ops, (const unsigned char *)in, samples, in_frame_bytes, in_on_device);
  if (status == CUDAFFT_STATUS_OK && finish) {
    if (d->t.output == CUDAFFT_FEATURES_OUTPUT_CHUNKS) {
      /* the last chunk, zero-padded to full length (it ends itself once full) */
      if (d->utterance > 0)
        status = append_all(d, ops, NULL, (size_t)(d->t.chunk_samples - d->utterance), 0, 0);
      ops->end_utterance(ops->ctx);
    } else {
      status = end_utterance(d, ops);
    }
  }
  *outputs = d->call_outputs;
  if (status != CUDAFFT_STATUS_OK || finish) {
    if (status != CUDAFFT_STATUS_OK)
      ops->end_utterance(ops->ctx);
    cudafft_features_driver_reset(d);
  }
  return status;
}
