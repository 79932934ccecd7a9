#!/usr/bin/env python3
"""A matrix of responses set from Python: stereo in, true-stereo reverb out, through
cudamatrixconvolve, checked against numpy.

The matrix property is a Gst.ValueArray of rows, each a Gst.ValueArray of taps, in input-major
order: row i * outputs + j is the response from input i to output j (here L->L, L->R, R->L, R->R).
The audio goes in through appsrc and comes out through appsink; output sample n carries input
sample n's timestamp, and with drain-tail (the default) EOS pushes the responses' tail.

    GST_PLUGIN_PATH=build/plugin python3 examples/matrix_convolve.py [backend]

Filters a second of noise with four random 2000-tap responses and checks every output sample
against numpy's double-precision convolution (1e-5 relative L2) and the timestamps; exits 1 where
not."""
import sys

import gi
import numpy

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

RATE, INPUTS, OUTPUTS, TAPS, SAMPLES, CHUNK = 48000, 2, 2, 2000, 48000, 4800


def matrix_value(responses):
    """responses (entries x taps) as the matrix property's value."""
    return Gst.ValueArray([Gst.ValueArray([float(t) for t in row]) for row in responses])


def main(backend):
    rng = numpy.random.default_rng()
    decay = numpy.exp(-3.0 * numpy.arange(TAPS) / TAPS)
    responses = (rng.uniform(-1, 1, (INPUTS * OUTPUTS, TAPS)) * decay).astype(numpy.float32)
    audio = rng.uniform(-1, 1, (SAMPLES, INPUTS)).astype(numpy.float32)

    pipeline = Gst.parse_launch(
        f"appsrc name=src format=time caps=audio/x-raw,format=F32LE,layout=interleaved,"
        f"rate={RATE},channels={INPUTS} ! cudamatrixconvolve name=m backend={backend} "
        "block-size=256 ! appsink name=out sync=false")
    pipeline.get_by_name("m").set_property("matrix", matrix_value(responses))
    src, sink = pipeline.get_by_name("src"), pipeline.get_by_name("out")
    pipeline.set_state(Gst.State.PLAYING)
    for first in range(0, SAMPLES, CHUNK):
        buffer = Gst.Buffer.new_wrapped(audio[first:first + CHUNK].tobytes())
        buffer.pts = Gst.util_uint64_scale_round(first, Gst.SECOND, RATE)
        end = Gst.util_uint64_scale_round(first + CHUNK, Gst.SECOND, RATE)
        buffer.duration = end - buffer.pts
        src.emit("push-buffer", buffer)
    src.emit("end-of-stream")
    chunks, produced = [], 0
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        buffer = sample.get_buffer()
        if buffer.pts != Gst.util_uint64_scale_round(produced, Gst.SECOND, RATE):
            print(f"a buffer at {buffer.pts} ns, expected sample {produced}'s time")
            return False
        ok, info = buffer.map(Gst.MapFlags.READ)
        chunks.append(numpy.frombuffer(info.data, numpy.float32).reshape(-1, OUTPUTS).copy())
        buffer.unmap(info)
        produced += len(chunks[-1])
    bus_error = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if bus_error is not None:
        print("ERROR:", bus_error.parse_error()[0].message)
        return False
    got = numpy.concatenate(chunks) if chunks else numpy.zeros((0, OUTPUTS))

    # y_j = sum_i h_ij * x_i, in double
    want = numpy.zeros((SAMPLES + TAPS - 1, OUTPUTS))
    for i in range(INPUTS):
        for j in range(OUTPUTS):
            want[:, j] += numpy.convolve(audio[:, i].astype(numpy.float64),
                                         responses[i * OUTPUTS + j].astype(numpy.float64))
    if got.shape != want.shape:
        print(f"{len(got)} output samples, expected {len(want)} (input + responses - 1)")
        return False
    error = numpy.linalg.norm(got - want) / numpy.linalg.norm(want)
    print(f"{len(got)} samples of {OUTPUTS} channels, relative L2 error {error:.2g}")
    return error <= 1e-5


if __name__ == "__main__":
    Gst.init(None)
    sys.exit(0 if main(sys.argv[1] if len(sys.argv) > 1 else "auto") else 1)
