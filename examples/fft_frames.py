#!/usr/bin/env python3
"""numpy views of cudafft's audio/x-fft frames, and buffers of them for cudaifft (a module the other
examples import, and a demo).

A buffer of cudafft holds whole frames; a frame holds each channel's fft-size / 2 + 1 bins in turn
(channel-major), as float32: (re, im) pairs for representation=complex, one value per bin for
magnitude, power and db (all of the unnormalised DFT of the windowed frame). The caps say the rest
(fft-size, hop, window, bins, rate, channels). read_frames() gives an array of shape
(frames, channels, bins), complex64 or float32; frames_buffer() makes a new buffer of such an array
with the timestamps and offsets of another, which is all cudaifft needs to put every sample back at
its time (docs/elements.md, cudaifft).

    GST_PLUGIN_PATH=build/plugin python3 examples/fft_frames.py [backend]

The demo analyses a 1 kHz tone and prints the loudest bin of each frame; it exits 1 where that is
not the tone's."""
import sys

import gi
import numpy

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402


class FrameFormat:
    """What the caps of an audio/x-fft stream say."""

    def __init__(self, caps):
        s = caps.get_structure(0)
        if s.get_name() != "audio/x-fft":
            raise ValueError(f"not audio/x-fft: {caps.to_string()}")
        self.representation = s.get_string("representation")
        self.window = s.get_string("window")
        self.fft_size = s.get_value("fft-size")
        self.hop = s.get_value("hop")
        self.bins = s.get_value("bins")
        self.rate = s.get_value("rate")
        self.channels = s.get_value("channels")
        self.complex = self.representation == "complex"

    def frame_floats(self):
        return self.channels * self.bins * (2 if self.complex else 1)


def read_frames(buffer, fmt):
    """The frames of `buffer` as a new array (frames, channels, bins): complex64 for complex frames,
    float32 for the others."""
    ok, info = buffer.map(Gst.MapFlags.READ)
    if not ok:
        raise RuntimeError("cannot map the buffer")
    try:
        values = numpy.frombuffer(info.data, numpy.float32).copy()
    finally:
        buffer.unmap(info)
    frames = values.size // fmt.frame_floats()
    if fmt.complex:
        return values.view(numpy.complex64).reshape(frames, fmt.channels, fmt.bins)
    return values.reshape(frames, fmt.channels, fmt.bins)


def frames_buffer(array, like):
    """A new buffer of `array` (as read_frames() gives them) with the PTS, duration, OFFSET and
    OFFSET_END of `like`: what cudaifft reads besides the caps."""
    data = numpy.ascontiguousarray(array, numpy.complex64 if numpy.iscomplexobj(array)
                                   else numpy.float32)
    out = Gst.Buffer.new_wrapped(data.tobytes())
    out.pts, out.duration = like.pts, like.duration
    out.offset, out.offset_end = like.offset, like.offset_end
    return out


def demo(backend):
    pipeline = Gst.parse_launch(
        "audiotestsrc wave=sine freq=1000 num-buffers=10 ! "
        "audio/x-raw,format=F32LE,rate=48000,channels=2 ! "
        f"cudafft backend={backend} fft-size=4096 hop=1024 representation=magnitude ! "
        "appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    frames, ok = 0, True
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        fmt = FrameFormat(sample.get_caps())
        for frame in read_frames(sample.get_buffer(), fmt):
            peak_hz = frame.argmax(axis=1) * fmt.rate / fmt.fft_size
            if frames >= fmt.fft_size // fmt.hop and not all(abs(peak_hz - 1000) < 12):
                ok = False
            frames += 1
        print(f"{sample.get_buffer().pts / Gst.SECOND:6.3f} s: loudest bins at "
              f"{', '.join(f'{hz:.0f} Hz' for hz in peak_hz)}")
    pipeline.set_state(Gst.State.NULL)
    return ok and frames > 0


if __name__ == "__main__":
    Gst.init(None)
    sys.exit(0 if demo(sys.argv[1] if len(sys.argv) > 1 else "auto") else 1)
