#!/usr/bin/env python3
"""Reads cudaspectrum's levels from Python with PyGObject. The `magnitude-data` field holds them as
float32 bytes (rows of `bands` values, one row per channel with multi-channel), so numpy takes them
in one call. `spectrum`'s own `magnitude` field (a list, or an array of arrays with multi-channel)
is readable too, through the Gst overrides of python3-gst-1.0 (Debian's package):
`list(s.get_value("magnitude"))`, a Python float per band, far slower for many bands; the program
reads both and checks that they agree. message-lists=false leaves the lists out of the messages (a
GValue per band is most of what a message costs to build).

    GST_PLUGIN_PATH=build/plugin python3 examples/spectrum_levels.py [backend]

Prints the loudest band of each channel for a 1 kHz tone on the left and 5 kHz on the right; exits
1 where there is none, or where the list and the bytes disagree."""
import sys

import gi
import numpy

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)
backend = sys.argv[1] if len(sys.argv) > 1 else "auto"
pipeline = Gst.parse_launch(
    "audiotestsrc wave=sine freq=1000 num-buffers=20 ! audio/x-raw,rate=48000,channels=1 ! m.sink_0 "
    "audiotestsrc wave=sine freq=5000 num-buffers=20 ! audio/x-raw,rate=48000,channels=1 ! m.sink_1 "
    "audiointerleave name=m ! audioconvert ! audio/x-raw,format=F32LE,channels=2 "
    f"! cudaspectrum backend={backend} bands=1025 interval=20000000 multi-channel=true "
    "! fakesink")
pipeline.set_state(Gst.State.PLAYING)
bus = pipeline.get_bus()
rate, posted, ok = 48000, 0, True
while True:
    msg = bus.timed_pop_filtered(10 * Gst.SECOND, Gst.MessageType.ELEMENT | Gst.MessageType.EOS
                                 | Gst.MessageType.ERROR)
    if msg is None or msg.type != Gst.MessageType.ELEMENT:
        if msg is not None and msg.type == Gst.MessageType.ERROR:
            print("error:", msg.parse_error()[0].message)
            sys.exit(1)
        break
    s = msg.get_structure()
    if s.get_name() != "spectrum":
        continue
    bands, channels = s.get_value("bands"), s.get_value("channels")
    levels = numpy.frombuffer(s.get_value("magnitude-data").get_data(), numpy.float32)
    levels = levels.reshape(channels, bands)
    # spectrum's field: with multi-channel an array of one array per channel
    listed = numpy.array([list(row) for row in s.get_value("magnitude")], numpy.float32)
    if not numpy.array_equal(listed, levels):
        print("the magnitude list and magnitude-data disagree")
        ok = False
    hz_per_band = rate / 2 / (bands - 1)
    peaks = ", ".join(f"{levels[c].argmax() * hz_per_band:.0f} Hz at {levels[c].max():.1f} dB"
                      for c in range(channels))
    print(f"{s.get_value('timestamp') / Gst.SECOND:6.3f} s: {peaks}")
    posted += 1
pipeline.set_state(Gst.State.NULL)
sys.exit(0 if posted and ok else 1)
