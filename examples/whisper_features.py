#!/usr/bin/env python3
"""Whisper's input features from GStreamer into numpy: cudamelspectrogram preset=whisper makes the
80 x 3000 log-mel of every 30 s of 16 kHz audio (openai-whisper's log_mel_spectrogram after
pad_or_trim, normalised as Whisper normalises it), one tensor per buffer. Its caps say the shape
(other/tensors, dimensions innermost first: "3000:80:1" is [1][80][3000]) and the type (float32,
or float16 where the caps ask for it); numpy takes a buffer in one call, ready for a model's
input_features (add the batch axis: tensor[None] for [1, 80, 3000]).

    GST_PLUGIN_PATH=build/plugin python3 examples/whisper_features.py [backend] [file]

With a file (anything decodebin plays) it prints each 30 s window's shape and range. Without
one it reads tests/features_data's speech signal (tests/make_feature_refs.py wrote it, and
openai-whisper's own features for it) where the source tree is there, and checks every value
against Whisper's within 1e-4; elsewhere a tone. It exits 1 where a check fails."""
import os
import struct
import sys

import gi
import numpy

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import Gst, GstApp  # noqa: E402,F401

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "features_data")


def tensor_of(sample):
    """The buffer of a sample as an array of its caps' shape, outermost axis first."""
    s = sample.get_caps().get_structure(0)
    dims = [int(d) for d in s.get_string("dimensions").split(":")][::-1]
    dtype = numpy.float16 if s.get_string("types") == "float16" else numpy.float32
    buffer = sample.get_buffer()
    ok, info = buffer.map(Gst.MapFlags.READ)
    if not ok:
        raise RuntimeError("cannot map a tensor")
    try:
        return numpy.frombuffer(info.data, dtype).reshape(dims).copy()
    finally:
        buffer.unmap(info)


def read_cfr(path):
    """An array of tests/make_feature_refs.py's format (its docstring), its constant tail
    restored."""
    with open(path, "rb") as f:
        head = f.read(40)
        if head[:4] != b"CFFR":
            raise ValueError(f"{path}: not a reference file")
        _, kind, ndim, *dims = struct.unpack("<7I", head[4:32])
        full, tail = struct.unpack("<If", head[32:40])
        shape = dims[:ndim]
        values = numpy.frombuffer(f.read(), "<i2" if kind == 1 else "<f4").reshape(shape)
    if ndim == 2 and full > shape[1]:
        padded = numpy.full((shape[0], full), tail, numpy.float32)
        padded[:, :shape[1]] = values
        return padded
    return values


def features(source, backend):
    """The tensors of a pipeline `source ! cudamelspectrogram preset=whisper ! appsink`."""
    pipeline = Gst.parse_launch(
        f"{source} ! cudamelspectrogram preset=whisper backend={backend} ! "
        "appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    tensors = []
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        tensors.append((sample.get_buffer().pts, tensor_of(sample)))
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if msg is not None:
        raise RuntimeError(msg.parse_error()[0].message)
    return tensors


def check_against_whisper(backend):
    """The speech signal of tests/features_data through the element against openai-whisper's own
    features of it (whisper80_speech): every value within 1e-4."""
    signal = read_cfr(os.path.join(DATA, "signal_speech16k.cfr")).astype(numpy.float32)
    want = read_cfr(os.path.join(DATA, "whisper80_speech.cfr"))
    pipeline_source = ("appsrc name=src format=time caps=audio/x-raw,format=F32LE,rate=16000,"
                       "channels=1,layout=interleaved")
    pipeline = Gst.parse_launch(
        f"{pipeline_source} ! cudamelspectrogram preset=whisper backend={backend} ! "
        "appsink name=sink sync=false")
    src, sink = pipeline.get_by_name("src"), pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    for at in range(0, signal.size, 1600):  # 100 ms buffers
        piece = signal[at:at + 1600]
        buffer = Gst.Buffer.new_wrapped(piece.tobytes())
        buffer.pts = at * Gst.SECOND // 16000
        buffer.duration = piece.size * Gst.SECOND // 16000
        src.emit("push-buffer", buffer)
    src.emit("end-of-stream")
    samples = []
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        samples.append(tensor_of(sample))
    pipeline.set_state(Gst.State.NULL)
    if len(samples) != 1 or samples[0].shape != (1, 80, 3000):
        print(f"expected one tensor of 1 x 80 x 3000, got {[t.shape for t in samples]}")
        return False
    worst = float(numpy.abs(samples[0][0] - want).max())
    print(f"{signal.size / 16000:.2f} s of speech: one tensor of {samples[0].shape}, within "
          f"{worst:.2g} of openai-whisper's own features (bound 1e-4)")
    return worst <= 1e-4


def main():
    Gst.init(None)
    backend = sys.argv[1] if len(sys.argv) > 1 else "auto"
    if len(sys.argv) > 2:
        uri = Gst.filename_to_uri(sys.argv[2])
        source = (f"uridecodebin uri={uri} ! audioconvert ! audioresample ! "
                  "audio/x-raw,rate=16000,channels=1")
    elif os.path.exists(os.path.join(DATA, "whisper80_speech.cfr")):
        return 0 if check_against_whisper(backend) else 1
    else:
        source = "audiotestsrc wave=sine freq=440 num-buffers=200 ! audio/x-raw,rate=16000"
    tensors = features(source, backend)
    for pts, tensor in tensors:
        print(f"{pts / Gst.SECOND:7.1f} s: {tensor.shape} {tensor.dtype}, "
              f"{tensor.min():.3f} to {tensor.max():.3f}")
    return 0 if tensors and all(t.shape == (1, 80, 3000) for _, t in tensors) else 1


if __name__ == "__main__":
    sys.exit(main())
