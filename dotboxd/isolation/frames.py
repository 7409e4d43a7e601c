"""Length-prefixed JSON frames: how the worker talks to the host over a pipe.

Why frames and not "read until EOF, then parse": the host must know, before it reads a byte of the
payload, how much it is being asked to hold, so a hostile job cannot make it buffer gigabytes. A frame
is an 8-byte big-endian length followed by that many bytes of UTF-8 JSON; a length over the cap, a
short read, bad UTF-8, bad JSON or a non-object is malformed - the caller turns that into HostFailure
and never trusts any of it. This module is stdlib-only because the worker's bootstrap imports it too.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

HEADER = struct.Struct(">Q")
MAX_FRAME = 1 << 20
"""1 MiB: the most one frame (the job's result, say) may carry."""


class FrameError(Exception):
    """A frame that is malformed, truncated or over the cap (never trusted)."""


def encode(obj: dict[str, Any], cap: int = MAX_FRAME) -> bytes:
    body = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(body) > cap:
        raise FrameError(f"frame of {len(body)} bytes is over the {cap}-byte cap")
    return HEADER.pack(len(body)) + body


def decode_one(data: bytes, offset: int = 0, cap: int = MAX_FRAME) -> tuple[dict[str, Any], int]:
    """Decode the frame at ``offset`` of ``data``; return it and the offset just past it."""
    if len(data) - offset < HEADER.size:
        raise FrameError("truncated frame header")
    (length,) = HEADER.unpack_from(data, offset)
    if length > cap:
        raise FrameError(f"frame claims {length} bytes, over the {cap}-byte cap")
    start = offset + HEADER.size
    body = data[start : start + length]
    if len(body) != length:
        raise FrameError("truncated frame body")
    try:
        obj = json.loads(body.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise FrameError(f"frame is not JSON: {type(error).__name__}") from error
    if not isinstance(obj, dict):
        raise FrameError("frame is not a JSON object")
    return obj, start + length


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_exact(fd: int, size: int) -> bytes:
    """Exactly ``size`` bytes from the blocking ``fd`` (fewer only at end of file)."""
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, cap: int = MAX_FRAME) -> dict[str, Any] | None:
    """The next frame from the blocking ``fd``; None at a clean end of file (before a header).
    Reads the header first and refuses a length over ``cap`` before it reads the body, so a
    long-lived peer (a pooled worker and its host) never holds more than one capped frame."""
    header = read_exact(fd, HEADER.size)
    if not header:
        return None
    (length,) = HEADER.unpack(header) if len(header) == HEADER.size else (None,)
    if length is None:
        raise FrameError("truncated frame header")
    if length > cap:
        raise FrameError(f"frame claims {length} bytes, over the {cap}-byte cap")
    frame, _ = decode_one(header + read_exact(fd, length), 0, cap)
    return frame
