#!/usr/bin/env python3
"""make-sweep.py OUT.wav [SECONDS]: the main job's test signal for cudaspectrumscope, a 48 kHz
stereo 16-bit WAV (standard library only). Both channels: a logarithmic sweep from 40 Hz to 20 kHz
at -12 dBFS, repeated every 4 s. Left: a steady 440 Hz tone at -24 dBFS. Right: 1 kHz and 5 kHz
tones at -18 dBFS, each on for a quarter second in every half second, and noise at -60 dBFS."""
import math
import random
import struct
import sys
import wave

RATE = 48000


def sample(t, phase, channel, rng):
    sweep = 10 ** (-12 / 20) * math.sin(phase)
    if channel == 0:
        return sweep + 10 ** (-24 / 20) * math.sin(2 * math.pi * 440 * t)
    gate_a = 1.0 if (t % 0.5) < 0.25 else 0.0
    gate_b = 1.0 - gate_a
    tones = 10 ** (-18 / 20) * (gate_a * math.sin(2 * math.pi * 1000 * t) +
                                gate_b * math.sin(2 * math.pi * 5000 * t))
    return sweep + tones + 10 ** (-60 / 20) * rng.uniform(-1.0, 1.0)


def main():
    out = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 8.0
    rng = random.Random(17)
    lo, hi, period = 40.0, 20000.0, 4.0
    phase = 0.0
    frames = bytearray()
    for n in range(int(seconds * RATE)):
        t = n / RATE
        f = lo * (hi / lo) ** ((t % period) / period)
        phase += 2 * math.pi * f / RATE
        for channel in (0, 1):
            x = max(-1.0, min(1.0, sample(t, phase, channel, rng)))
            frames += struct.pack("<h", int(round(x * 32767)))
    with wave.open(out, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(bytes(frames))


if __name__ == "__main__":
    main()
