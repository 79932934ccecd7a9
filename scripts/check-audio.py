#!/usr/bin/env python3
"""check-audio.py FILE.wav FRAMES[:MAX_FRAMES] [CHANNELS]: the main job's check of an audio file it
wrote. Prints the file's length, and each channel's peak and RMS in dBFS (1.0, or an integer
format's full scale, is 0 dBFS), and exits 1 where the file is not what the job expects: a length
other than FRAMES frames (or outside FRAMES..MAX_FRAMES), another channel count, a channel that is
silent (peak below -80 dBFS), a NaN or infinite sample, or one that is clipped: a float sample
above 0 dBFS, or an integer sample at full scale (where a conversion clipped it). Reads the PCM
(8 to 32 bits), IEEE float (32 and 64 bits) and WAVE_FORMAT_EXTENSIBLE files that wavenc writes,
with the standard library alone (Python's wave module reads PCM only)."""
import array
import math
import struct
import sys

SILENT_DBFS = -80.0
FORMAT_PCM, FORMAT_FLOAT, FORMAT_EXTENSIBLE = 1, 3, 0xFFFE


def read_wav(path):
    """Returns (rate, channels, the samples interleaved as floats with 1.0 at full scale, the
    integer format's bits or 0 for float)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("not a RIFF WAVE file")
    fmt = body = None
    at = 12
    while at + 8 <= len(data):
        name, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        chunk = data[at + 8:at + 8 + size]
        if name == b"fmt ":
            fmt = chunk
        elif name == b"data":
            body = chunk
        at += 8 + size + (size & 1)
    if fmt is None or body is None or len(fmt) < 16:
        raise ValueError("no fmt or data chunk")
    tag, channels, rate, _, block, _ = struct.unpack("<HHIIHH", fmt[:16])
    if tag == FORMAT_EXTENSIBLE:
        tag = struct.unpack("<H", fmt[24:26])[0]
    if channels == 0 or block % channels:
        raise ValueError("%d channels in blocks of %d bytes" % (channels, block))
    width = block // channels
    body = body[:len(body) - len(body) % block]
    if sys.byteorder != "little" and width > 1:
        raise ValueError("this reader runs on little-endian hosts only")
    if tag == FORMAT_FLOAT and width in (4, 8):
        return rate, channels, array.array("f" if width == 4 else "d", body), 0
    if tag != FORMAT_PCM or width not in (1, 2, 3, 4):
        raise ValueError("format %d with %d-byte samples: neither PCM nor float" % (tag, width))
    if width == 3:
        ints = [int.from_bytes(body[i:i + 3], "little", signed=True)
                for i in range(0, len(body), 3)]
    elif width == 1:
        ints = [x - 128 for x in body]  # 8-bit WAV is unsigned
    else:
        ints = array.array("h" if width == 2 else "i", body)
    full_scale = float(1 << (8 * width - 1))
    return rate, channels, [x / full_scale for x in ints], 8 * width


def dbfs(x):
    return 20 * math.log10(x) if x > 0 else float("-inf")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    path, frames = sys.argv[1], sys.argv[2].split(":")
    least, most = int(frames[0]), int(frames[-1])
    want_channels = int(sys.argv[3]) if len(sys.argv) == 4 else None
    try:
        rate, channels, samples, bits = read_wav(path)
    except (OSError, ValueError, struct.error) as e:
        print("%s: cannot be read: %s" % (path, e))
        return 1
    count = len(samples) // channels
    problems = []
    if not least <= count <= most:
        problems.append("%d frames, expected %s" % (count, "%d" % least if least == most else
                                                     "%d to %d" % (least, most)))
    if want_channels is not None and channels != want_channels:
        problems.append("%d channels, expected %d" % (channels, want_channels))
    # an integer format's largest value is a step below 1.0: reaching it (or -1.0) is clipping too
    clip_at = 1.0 - 1.0 / (1 << (bits - 1)) if bits else math.nextafter(1.0, 2.0)
    peaks, levels = [], []
    for c in range(channels):
        where = "channel %d" % c
        channel = samples[c::channels]
        if not all(map(math.isfinite, channel)):
            problems.append("%s: NaN or infinite samples" % where)
            channel = [x if math.isfinite(x) else 0.0 for x in channel]
        peak = max(map(abs, channel), default=0.0)
        rms = math.sqrt(math.fsum(x * x for x in channel) / count) if count else 0.0
        if dbfs(peak) < SILENT_DBFS:
            problems.append("%s: silent (peak %.1f dBFS)" % (where, dbfs(peak)))
        if peak >= clip_at:
            problems.append("%s: clipped (peak %+.1f dBFS)" % (where, dbfs(peak)))
        peaks.append("%.1f" % dbfs(peak))
        levels.append("%.1f" % dbfs(rms))
    print("%s: %d frames (%.3f s at %d Hz), %d channel(s), peak %s dBFS, RMS %s dBFS%s" %
          (path, count, count / rate, rate, channels, " / ".join(peaks), " / ".join(levels),
           "" if not problems else ": " + "; ".join(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
