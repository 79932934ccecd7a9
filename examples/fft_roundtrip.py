#!/usr/bin/env python3
"""Frames edited in Python: cudafft ! appsink, numpy, then appsrc ! cudaifft, back to the same
samples at the same times.

An application cannot carry the GstAudioClippingMeta that marks the zeros cudafft puts around a run
(PyGObject hands it over as a bare Gst.Meta, and appsink's buffers are not writable), and it need
not: cudaifft takes the lead from the framing (fft-size - hop zeros before every run) and the end
from the timestamps (cudafft's frames last as long as the input samples they complete). What the
application keeps is each buffer's PTS, duration and offsets, and the caps (fft_frames.py's
frames_buffer() does it). Frames without timestamps get a WARNING from cudaifft: where the audio
ends is then unknown.

    GST_PLUGIN_PATH=build/plugin python3 examples/fft_roundtrip.py [backend]

Halves every bin (any edit goes there), resynthesises, and checks that the output is half the
input, sample for sample (within 1e-5 relative L2) and with the input's timestamps; exits 1 where
not."""
import os
import sys

import gi
import numpy

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fft_frames import FrameFormat, frames_buffer, read_frames  # noqa: E402

RATE, CHANNELS, SAMPLES = 48000, 2, 48000


def pull_all(sink):
    """Every sample an appsink got, to EOS."""
    samples = []
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            return samples
        samples.append(sample)


def audio_of(samples):
    """The F32 audio of raw samples as (frames, channels), and the first PTS."""
    data = []
    for sample in samples:
        buffer = sample.get_buffer()
        ok, info = buffer.map(Gst.MapFlags.READ)
        data.append(numpy.frombuffer(info.data, numpy.float32).copy())
        buffer.unmap(info)
    audio = numpy.concatenate(data).reshape(-1, CHANNELS) if data else numpy.zeros((0, CHANNELS))
    return audio, samples[0].get_buffer().pts if samples else None


def main(backend):
    # the input, and cudafft's frames of it
    analysis = Gst.parse_launch(
        f"audiotestsrc wave=pink-noise num-buffers={SAMPLES // 1000} samplesperbuffer=1000 "
        f"timestamp-offset={Gst.SECOND // 4} ! "
        f"audio/x-raw,format=F32LE,rate={RATE},channels={CHANNELS} ! tee name=t "
        "t. ! queue ! appsink name=raw sync=false "
        f"t. ! queue ! cudafft backend={backend} fft-size=1024 hop=256 ! "
        "appsink name=frames sync=false")
    analysis.set_state(Gst.State.PLAYING)
    frames = pull_all(analysis.get_by_name("frames"))
    raw = pull_all(analysis.get_by_name("raw"))
    analysis.set_state(Gst.State.NULL)
    if not frames or not raw:
        print("no frames or no audio came out")
        return False
    caps = frames[0].get_caps()
    fmt = FrameFormat(caps)

    # the edit, and the frames back into GStreamer through appsrc
    synthesis = Gst.parse_launch(
        f"appsrc name=src format=time ! cudaifft backend={backend} ! "
        "appsink name=out sync=false")
    src = synthesis.get_by_name("src")
    src.set_property("caps", caps)
    synthesis.set_state(Gst.State.PLAYING)
    for sample in frames:
        buffer = sample.get_buffer()
        edited = read_frames(buffer, fmt) * numpy.float32(0.5)
        src.emit("push-buffer", frames_buffer(edited, buffer))
    src.emit("end-of-stream")
    out = pull_all(synthesis.get_by_name("out"))
    messages = []
    bus = synthesis.get_bus()
    while (msg := bus.pop_filtered(Gst.MessageType.WARNING | Gst.MessageType.ERROR)) is not None:
        messages.append(msg.parse_warning()[0].message if msg.type == Gst.MessageType.WARNING
                        else msg.parse_error()[0].message)
    synthesis.set_state(Gst.State.NULL)

    want, start = audio_of(raw)
    got, out_start = audio_of(out)
    print(f"{len(frames)} frame buffers of {fmt.fft_size}-point frames every {fmt.hop} samples; "
          f"{want.shape[0]} samples in, {got.shape[0]} out; first at {start / Gst.SECOND:.6f} s "
          f"in, {(out_start or 0) / Gst.SECOND:.6f} s out")
    # every output buffer at the time of its first sample
    at, stamped = 0, True
    for sample in out:
        buffer = sample.get_buffer()
        stamped &= buffer.pts == start + Gst.util_uint64_scale_round(at, Gst.SECOND, RATE)
        at += buffer.get_size() // (4 * CHANNELS)
    ok = not messages and got.shape == want.shape and out_start == start and stamped
    if ok:
        error = numpy.linalg.norm(got - 0.5 * want) / numpy.linalg.norm(0.5 * want)
        print(f"relative L2 error of the halved signal: {error:.2e}")
        ok = error < 1e-5
    for message in messages:
        print("message:", message)
    return ok


if __name__ == "__main__":
    Gst.init(None)
    sys.exit(0 if main(sys.argv[1] if len(sys.argv) > 1 else "auto") else 1)
