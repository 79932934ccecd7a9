#!/usr/bin/env python3
"""make-response.py OUT.wav CHANNELS SECONDS [INPUTS]: the main job's reverb responses, a 48 kHz
32-bit float WAV (standard library only). Each channel is a room-like response: white noise from
a fixed seed (the same file every run) under an exponential decay that falls 60 dB over SECONDS.
The level is chosen so that a broadband signal leaves as loud as it came in: for a matrix of
INPUTS inputs (default 1; channel i x outputs + j is input i to output j, as cudamatrixconvolve
reads it) every channel has an energy (sum of squares) of 1 / INPUTS, so the responses that feed
one output sum to 1."""
import math
import random
import struct
import sys

RATE = 48000
SEED = 20


def write_float_wav(path, channels, frames):
    body = struct.pack("<%df" % len(frames), *frames)
    fmt = struct.pack("<HHIIHH", 3, channels, RATE, RATE * channels * 4, channels * 4, 32)
    with open(path, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(body)) + b"WAVE")
        f.write(b"fmt " + struct.pack("<I", len(fmt)) + fmt)
        f.write(b"data" + struct.pack("<I", len(body)) + body)


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    out, channels, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    inputs = int(sys.argv[4]) if len(sys.argv) == 5 else 1
    rng = random.Random(SEED)
    length = int(seconds * RATE)
    decay = math.log(1000.0) / length  # 60 dB (a factor of 1000) over the response
    responses = []
    for _ in range(channels):
        taps = [rng.gauss(0.0, 1.0) * math.exp(-decay * n) for n in range(length)]
        scale = math.sqrt(1.0 / inputs / math.fsum(x * x for x in taps))
        responses.append([x * scale for x in taps])
    write_float_wav(out, channels, [r[n] for n in range(length) for r in responses])


if __name__ == "__main__":
    main()
