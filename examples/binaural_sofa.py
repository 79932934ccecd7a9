#!/usr/bin/env python3
"""Headphone virtualisation from an HRTF set (SOFA): a source placed to the left and then to the
right of the listener through cudamatrixconvolve's sofa-location and directions, set from Python.

With sofa-location alone, each input channel takes the standard loudspeaker direction of its
channel position (a 7.1 stream becomes binaural stereo with no other setting); the directions
property places channels anywhere: a Gst.ValueArray of <azimuth, elevation> pairs in degrees, one
per input channel, SOFA's convention (azimuth counter-clockwise from the front: 90 is the left).

    GST_PLUGIN_PATH=build/plugin python3 examples/binaural_sofa.py [backend] [set.sofa]

The set defaults to the one Debian's libmysofa1 installs (MIT's KEMAR, measured at 44.1 kHz: the
element resamples it to the stream's 48 kHz). Filters a second of mono noise from azimuth +90 and
then from -90 and checks what a head does to it: the ear on the source's side gets the louder
signal (by more than 6 dB, the head's shadow), and the two placements mirror each other within
3 dB; a 7.1 stream by its channel positions gives stereo of the input's length plus the
responses'. Exits 1 where not."""
import sys

import gi
import numpy

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

RATE, SAMPLES = 48000, 48000
DEFAULT_SET = "/usr/share/libmysofa/default.sofa"


def directions_value(pairs):
    """[(azimuth, elevation), ...] as the directions property's value."""
    return Gst.ValueArray([Gst.ValueArray([float(a), float(e)]) for a, e in pairs])


def render(backend, sofa, audio, channels, caps_extra="", directions=None):
    """audio (frames x channels, float32) through cudamatrixconvolve: the output, frames x 2."""
    pipeline = Gst.parse_launch(
        f"appsrc name=src format=time caps=audio/x-raw,format=F32LE,layout=interleaved,"
        f"rate={RATE},channels={channels}{caps_extra} ! cudamatrixconvolve name=m "
        f"backend={backend} ! appsink name=out sync=false")
    element = pipeline.get_by_name("m")
    element.set_property("sofa-location", sofa)
    if directions is not None:
        element.set_property("directions", directions_value(directions))
    src, sink = pipeline.get_by_name("src"), pipeline.get_by_name("out")
    pipeline.set_state(Gst.State.PLAYING)
    buffer = Gst.Buffer.new_wrapped(audio.tobytes())
    buffer.pts, buffer.duration = 0, Gst.util_uint64_scale_round(len(audio), Gst.SECOND, RATE)
    src.emit("push-buffer", buffer)
    src.emit("end-of-stream")
    chunks = []
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        ok, info = sample.get_buffer().map(Gst.MapFlags.READ)
        chunks.append(numpy.frombuffer(info.data, numpy.float32).reshape(-1, 2).copy())
        sample.get_buffer().unmap(info)
    bus_error = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if bus_error is not None:
        raise RuntimeError(bus_error.parse_error()[0].message)
    return numpy.concatenate(chunks) if chunks else numpy.zeros((0, 2), numpy.float32)


def level_db(x):
    return 10.0 * numpy.log10(numpy.mean(numpy.square(x.astype(numpy.float64))) + 1e-300)


def main(backend, sofa):
    rng = numpy.random.default_rng()
    mono = rng.uniform(-0.5, 0.5, (SAMPLES, 1)).astype(numpy.float32)
    left = render(backend, sofa, mono, 1, directions=[(90, 0)])
    right = render(backend, sofa, mono, 1, directions=[(-90, 0)])
    ild_left = level_db(left[:, 0]) - level_db(left[:, 1])
    ild_right = level_db(right[:, 1]) - level_db(right[:, 0])
    print(f"source at +90: left ear {ild_left:.1f} dB above the right; "
          f"at -90: right ear {ild_right:.1f} dB above the left")
    if not (ild_left > 6.0 and ild_right > 6.0 and abs(ild_left - ild_right) < 3.0):
        print("the ears' levels are not a head's")
        return False

    surround = rng.uniform(-0.5, 0.5, (SAMPLES, 8)).astype(numpy.float32)
    binaural = render(backend, sofa, surround, 8, ",channel-mask=(bitmask)0xc3f")
    if len(binaural) <= SAMPLES or not numpy.all(numpy.isfinite(binaural)):
        print(f"7.1 to binaural: {len(binaural)} stereo samples for {SAMPLES} of input")
        return False
    print(f"7.1 to binaural: {len(binaural)} stereo samples "
          f"({len(binaural) - SAMPLES + 1} taps of response at {RATE} Hz)")
    return True


if __name__ == "__main__":
    Gst.init(None)
    sys.exit(0 if main(sys.argv[1] if len(sys.argv) > 1 else "auto",
                       sys.argv[2] if len(sys.argv) > 2 else DEFAULT_SET) else 1)
