"""Shared randomness helpers (ids, timestamps, samples), all from a seeded `random.Random`."""

from __future__ import annotations

import base64
import random



def uuid(rng: random.Random) -> str:
    h = "%032x" % rng.getrandbits(128)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[rng.randrange(4)]}{h[17:20]}-{h[20:32]}"


def hexid(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def b64(rng: random.Random, nbytes: int) -> str:
    return base64.b64encode(bytes(rng.getrandbits(8) for _ in range(nbytes))).decode()


def pick(rng: random.Random, items, k: int):
    return rng.sample(list(items), k)


def ts(seconds: float, day: str = "2025-03-14") -> str:
    """An ISO timestamp `seconds` after midnight UTC."""
    whole = int(seconds)
    micros = int(round((seconds - whole) * 1_000_000))
    return f"{day}T{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}.{micros:06d}Z"


def hms(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def sentence_join(parts):
    return " ".join(p.strip() for p in parts if p and p.strip())


def numbered(lines, start=1):
    width = len(str(start + len(lines) - 1))
    return "\n".join(f"{i:>{width}}\t{line}" for i, line in enumerate(lines, start))
