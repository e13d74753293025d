"""Go's time.Duration as Kubernetes reads and prints it: time.ParseDuration (metav1.Duration fields, a CronJob's
`@every`) and Duration.String (messages and validation errors)."""
from __future__ import annotations

import re

# ParseDuration's units, in nanoseconds.
_UNITS = {"ns": 1, "us": 10**3, "\u00b5s": 10**3, "\u03bcs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
          "h": 3600 * 10**9}
_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")
_LIMIT = 1 << 63


def parse_duration(text: str) -> int:
    """time.ParseDuration: [-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+ in nanoseconds, within int64. ValueError with Go's text
    when it is not one. A fraction is scaled in float64 as Go scales it."""
    invalid = f"time: invalid duration {time_quote(text)}"
    negative = text[:1] == "-"
    rest = text[1:] if text[:1] in ("-", "+") else text
    if rest == "0":
        return 0
    if not rest:
        raise ValueError(invalid)
    total = 0
    while rest:
        match = _PART.match(rest)
        whole, fraction, unit = match.groups()
        if not whole and not fraction:
            raise ValueError(invalid)
        if not unit:
            raise ValueError(f"time: missing unit in duration {time_quote(text)}")
        if unit not in _UNITS:
            raise ValueError(f"time: unknown unit {time_quote(unit)} in duration {time_quote(text)}")
        scale = _UNITS[unit]
        value = int(whole or 0)
        if value > _LIMIT // scale:
            raise ValueError(invalid)
        value *= scale
        if fraction:
            # Go keeps the fraction's leading digits that fit (leadingFraction) and scales them in float64.
            digits, divisor = 0, 1
            for char in fraction:
                longer = digits * 10 + int(char)
                if digits > (_LIMIT - 1) // 10 or longer > _LIMIT:
                    break
                digits, divisor = longer, divisor * 10
            value += int(float(digits) * (float(scale) / divisor))
        total += value
        if total > _LIMIT:
            raise ValueError(invalid)
        rest = rest[match.end():]
    if total == _LIMIT and not negative:
        raise ValueError(invalid)
    return -total if negative else total


def duration_text(nanoseconds: int) -> str:
    """Duration.String: "0s"; below a second in ns, µs or ms; else [h]m s with the seconds' fraction trimmed
    (300 s -> "5m0s", 1.5 ms -> "1.5ms")."""
    if nanoseconds == 0:
        return "0s"
    sign = "-" if nanoseconds < 0 else ""
    size = abs(nanoseconds)
    if size < 10**9:
        scale, unit = (1, "ns") if size < 10**3 else (10**3, "\u00b5s") if size < 10**6 else (10**6, "ms")
        return sign + _decimal(size, scale) + unit
    minutes, ns = divmod(size, 60 * 10**9)
    hours, minutes = divmod(minutes, 60)
    seconds = _decimal(ns, 10**9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}"
    return f"{sign}{minutes}m{seconds}" if minutes else sign + seconds


def _decimal(value: int, scale: int) -> str:
    """value / scale in decimal, trailing zeros of the fraction dropped (scale a power of ten)."""
    whole, part = divmod(value, scale)
    digits = str(part).rjust(len(str(scale)) - 1, "0").rstrip("0") if scale > 1 else ""
    return f"{whole}.{digits}" if digits else str(whole)


def time_quote(text: str) -> str:
    """The time package's quote: non-ASCII and control characters as \\x bytes of their UTF-8."""
    out = []
    for char in text:
        if ord(char) >= 0x80 or char < " ":
            out.append("".join(f"\\x{byte:02x}" for byte in char.encode("utf-8", "replace")))
        else:
            out.append("\\" + char if char in '"\\' else char)
    return '"' + "".join(out) + '"'


def duration_from_json(value) -> int:
    """metav1.Duration.UnmarshalJSON, in nanoseconds: a JSON string through ParseDuration; anything else leaves the
    string empty (its json error is dropped), which ParseDuration refuses."""
    return parse_duration(value if isinstance(value, str) else "")
