#!/usr/bin/env python3
"""check-features.py FILE TENSORS VALUES [RANGE]: the main job's check of the float32 tensors
cudamelspectrogram wrote to FILE (filesink: the buffers one after another). Prints the tensor
count and the values' range, and exits 1 where the file is not what the job expects: another size
than TENSORS tensors of VALUES float32 values each, a NaN or infinite value, or, with RANGE, a
tensor whose largest and smallest values lie more than RANGE apart (Whisper's normalisation
floors every window at its maximum - 8 in log10 units, then divides by 4: at most 2.0 apart).
The standard library alone."""
import array
import math
import sys


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    path, tensors, values = argv[1], int(argv[2]), int(argv[3])
    spread = float(argv[4]) if len(argv) == 5 else None
    data = array.array("f")
    with open(path, "rb") as f:
        raw = f.read()
    if sys.byteorder != "little":
        raise SystemExit("check-features.py reads little-endian float32 only")
    if len(raw) != tensors * values * 4:
        print(f"{path}: {len(raw)} bytes, expected {tensors} tensors of {values} float32 values "
              f"({tensors * values * 4} bytes)")
        return 1
    data.frombytes(raw)
    failed = 0
    lows, highs = [], []
    for t in range(tensors):
        part = data[t * values:(t + 1) * values]
        bad = sum(1 for v in part if not math.isfinite(v))
        if bad:
            print(f"{path}: tensor {t} holds {bad} values that are NaN or infinite")
            failed = 1
            continue
        lo, hi = min(part), max(part)
        lows.append(lo)
        highs.append(hi)
        if spread is not None and hi - lo > spread + 1e-6:
            print(f"{path}: tensor {t} spans {lo:.4f} .. {hi:.4f}, more than {spread} apart")
            failed = 1
    if lows:
        print(f"{path}: {tensors} tensors of {values} values, from {min(lows):.4f} to "
              f"{max(highs):.4f}")
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv))
