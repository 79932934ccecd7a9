#!/usr/bin/env python3
"""Writes an AES69 SOFA file of the SimpleFreeFieldHRIR convention for the tests, from data the
test program made (so that the test knows every tap it filters with), with netCDF4 (Debian's
python3-netcdf4), as the SOFA APIs write them.

    make_sofa.py OUT DATA

DATA is little-endian binary: int32 measurements M, receivers R, taps N, rate; then M x 3 float64
source positions (azimuth and elevation in degrees, distance in metres); then M x R x N float64
taps (Data.IR); then R float64 delays in samples (Data.Delay, one per receiver).
"""
import struct
import sys

import netCDF4
import numpy as np


def main():
    out, data_path = sys.argv[1], sys.argv[2]
    with open(data_path, "rb") as f:
        raw = f.read()
    m, r, n, rate = struct.unpack_from("<4i", raw, 0)
    values = np.frombuffer(raw, dtype="<f8", offset=16)
    positions = values[: m * 3].reshape(m, 3)
    taps = values[m * 3 : m * 3 + m * r * n].reshape(m, r, n)
    delays = values[m * 3 + m * r * n : m * 3 + m * r * n + r].reshape(1, r)

    ds = netCDF4.Dataset(out, "w", format="NETCDF4")
    attributes = {
        "Conventions": "SOFA",
        "Version": "1.0",
        "SOFAConventions": "SimpleFreeFieldHRIR",
        "SOFAConventionsVersion": "1.0",
        "APIName": "gst-cudafft tests/make_sofa.py",
        "APIVersion": "1.0",
        "ApplicationName": "gst-cudafft tests",
        "ApplicationVersion": "1.0",
        "AuthorContact": "none",
        "Comment": "random responses for the tests",
        "DataType": "FIR",
        "History": "none",
        "License": "none",
        "Organization": "none",
        "References": "none",
        "RoomType": "free field",
        "Origin": "none",
        "DateCreated": "2026-01-01 00:00:00",
        "DateModified": "2026-01-01 00:00:00",
        "Title": "test set",
        "DatabaseName": "test",
        "ListenerShortName": "test",
    }
    for key, value in attributes.items():
        ds.setncattr(key, value)
    for name, size in (("I", 1), ("C", 3), ("R", r), ("E", 1), ("N", n), ("M", m)):
        ds.createDimension(name, size)

    def variable(name, dims, value, **attrs):
        v = ds.createVariable(name, "f8", dims)
        v[:] = value
        for key, text in attrs.items():
            v.setncattr(key, text)

    variable("ListenerPosition", ("I", "C"), np.zeros((1, 3)), Type="cartesian", Units="metre")
    variable("ListenerUp", ("I", "C"), np.array([[0.0, 0.0, 1.0]]))
    variable("ListenerView", ("I", "C"), np.array([[1.0, 0.0, 0.0]]), Type="cartesian",
             Units="metre")
    ears = np.zeros((r, 3, 1))
    for k in range(r):
        ears[k, 1, 0] = 0.09 if k == 0 else -0.09
    variable("ReceiverPosition", ("R", "C", "I"), ears, Type="cartesian", Units="metre")
    variable("SourcePosition", ("M", "C"), positions, Type="spherical",
             Units="degree, degree, metre")
    variable("EmitterPosition", ("E", "C", "I"), np.zeros((1, 3, 1)), Type="cartesian",
             Units="metre")
    variable("Data.IR", ("M", "R", "N"), taps)
    variable("Data.SamplingRate", ("I",), np.array([float(rate)]), Units="hertz")
    variable("Data.Delay", ("I", "R"), delays)
    ds.close()


if __name__ == "__main__":
    main()
