"""Kubernetes resource quantities, read exactly as k8s.io/apimachinery/pkg/api/resource (v0.36) reads them.

- parse_quantity is ParseQuantity: the full grammar (signs, ".5", "5.", binary Ki..Ei, decimal n..E,
  exponents e3/E-3), the value rounded up (away from zero) to a whole nano, BinarySI values capped at
  2^63-1, and upstream's quirks for digit-less input ("", "e5" and "Ki" are 0; "Pi" and "e-10" are invalid).
- value / milli_value are Quantity.Value / MilliValue: round away from zero to an integer (so ceil for the
  non-negative quantities the API server admits), and unlike upstream they refuse results outside int64
  instead of wrapping.
- decode_quantity is Quantity.UnmarshalJSON: what a manifest value (string, number or null) means.
- ResourceList is a validated resource-name -> quantity map holding the int64 amounts the scheduler
  counts with, plus each quantity's exact value, since upstream adds quantities exactly and rounds once.
"""
from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Any, NamedTuple

from pydantic_core import PydanticCustomError, core_schema

from .errors import render_value

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
NANO = 10**9
_NANOS_PER_UNIT = {"cpu": 10**6}  # the scheduler counts cpu in millicores, everything else in units

_DIGITS = frozenset("0123456789")
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
# A value with more integer digits than this is astronomically outside int64; refusing it here keeps
# "1e999999999" from building a billion-digit integer.
_MAX_INTEGER_DIGITS = 1000
# Go's strings.TrimSpace set (unicode.IsSpace); Python's str.strip() would also eat \x1c-\x1f.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"


class QuantityError(ValueError):
    """A quantity Kubernetes would reject, or one whose integer value does not fit int64."""


def _invalid(text: str) -> QuantityError:
    return QuantityError(f'invalid quantity "{text}"')


def _out_of_range(text: str) -> QuantityError:
    return QuantityError(f'quantity "{text}" out of range')


def parse_quantity(s: str | int | float | Decimal) -> Fraction:
    """The exact value of a quantity, as resource.ParseQuantity reads it.

    Numbers are read through their JSON text, as they reach the API server. Raises QuantityError
    'invalid quantity "..."', or 'quantity "..." out of range' when the value has over 1000 integer digits.
    """
    text = _quantity_text(s)
    negative, whole, fraction, suffix = _split(text)
    binary_exponent = _BINARY_SI.get(suffix)
    decimal_exponent = None if binary_exponent is not None else _decimal_exponent(suffix)
    if decimal_exponent is None and binary_exponent is None:
        raise _invalid(text)
    if not whole and not fraction and not _fits_int64_fast_path(decimal_exponent, binary_exponent):
        # Upstream hands such text to inf.Dec.SetString, which needs at least one digit.
        raise _invalid(text)
    digits = (whole + fraction).lstrip("0")
    if binary_exponent is not None:
        nanos = _binary_nanos(digits, len(fraction), binary_exponent)
    else:
        nanos = _decimal_nanos(digits, decimal_exponent - len(fraction), text)
    return Fraction(-nanos if negative else nanos, NANO)


def _quantity_text(s: object) -> str:
    if isinstance(s, str):
        return s
    if isinstance(s, bool):
        raise _invalid(render_value(s))
    if isinstance(s, int):
        return str(s)
    if isinstance(s, float):
        if s != s or s in (float("inf"), float("-inf")):
            raise _invalid(repr(s))
        return repr(s)  # shortest round-trip digits, as Go's JSON encoding writes a float64
    if isinstance(s, Decimal):
        if not s.is_finite():
            raise _invalid(str(s))
        return str(s)
    raise _invalid(render_value(s))


def _split(text: str) -> tuple[bool, str, str, str]:
    """(negative, digits before ".", digits after ".", suffix); the scan of parseQuantityString."""
    end = len(text)
    if end == 0:
        raise _invalid(text)
    pos = 1 if text[0] in "+-" else 0
    negative = text[0] == "-"
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    whole = text[start:pos]
    fraction = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        fraction = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise _invalid(text)
    return negative, whole, fraction, text[suffix_start:]


def _decimal_exponent(suffix: str) -> int | None:
    """Power of ten of a decimal SI suffix or an e/E exponent; None when the suffix is not one."""
    if suffix in _DECIMAL_SI:
        return _DECIMAL_SI[suffix]
    if len(suffix) < 2 or suffix[0] not in "eE":
        return None
    number = suffix[1:]
    unsigned = number[1:] if number[0] in "+-" else number
    if not unsigned or not set(unsigned) <= _DIGITS:
        return None
    exponent = int(number)
    if not INT64_MIN <= exponent <= INT64_MAX:  # strconv.ParseInt(..., 10, 64)
        return None
    return (exponent + (1 << 31)) % (1 << 32) - (1 << 31)  # then stored as int32, wrapping


def _fits_int64_fast_path(decimal_exponent: int | None, binary_exponent: int | None) -> bool:
    """Whether ParseQuantity keeps a digit-less number ("", ".", "+") on its int64 path.

    Decimal: when the scale stays at or above nano. Binary: when its precision estimate
    15 - 1 - exponent*3/10 - 1 is not negative, i.e. Ki..Ti but not Pi or Ei.
    """
    if binary_exponent is not None:
        return 13 - binary_exponent * 3 // 10 >= 0
    return decimal_exponent >= -9


def _decimal_nanos(digits: str, exponent: int, text: str) -> int:
    """ceil(int(digits) * 10^exponent * 10^9), from the digit string so huge exponents stay cheap."""
    if not digits:
        return 0
    if len(digits) + exponent > _MAX_INTEGER_DIGITS:
        raise _out_of_range(text)
    shift = exponent + 9
    if shift >= 0:
        return int(digits) * 10**shift
    kept = len(digits) + shift
    if kept <= 0:
        return 1  # non-zero but below one nano: upstream rounds it up to 1n
    return int(digits[:kept]) + (digits[kept:].strip("0") != "")


def _binary_nanos(digits: str, fraction_digits: int, exponent: int) -> int:
    """ceil(int(digits) / 10^fraction_digits * 2^exponent * 10^9), capped at 2^63-1 units like upstream."""
    if not digits:
        return 0
    if len(digits) - fraction_digits > 20:  # >= 10^19 > 2^63 before the (>= 1) binary factor
        return INT64_MAX * NANO
    numerator = int(Decimal(digits)) << exponent  # int(Decimal) has no 4300-digit str limit
    nanos = -(-numerator * NANO // 10**fraction_digits)
    return min(nanos, INT64_MAX * NANO)


def decode_quantity(raw: object) -> Fraction:
    """A manifest value as Quantity.UnmarshalJSON reads it: null is 0, text is trimmed of white space."""
    if raw is None:
        return Fraction(0)
    if isinstance(raw, str):
        raw = raw.strip(_GO_SPACE)
    return parse_quantity(raw)


def _round_away_from_zero(numerator: int, denominator: int) -> int:
    whole = numerator // denominator
    return whole + 1 if numerator >= 0 and whole * denominator != numerator else whole


def _checked_int64(value: int, q: Fraction) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise _out_of_range(_decimal_text(q))
    return value


def value(q: Fraction) -> int:
    """Quantity.Value(): q rounded up, away from zero, to an integer. QuantityError outside int64."""
    return _checked_int64(_round_away_from_zero(q.numerator, q.denominator), q)


def milli_value(q: Fraction) -> int:
    """Quantity.MilliValue(): q*1000 rounded up, away from zero. QuantityError outside int64."""
    return _checked_int64(_round_away_from_zero(q.numerator * 1000, q.denominator), q)


def _decimal_text(q: Fraction) -> str:
    nanos = q * NANO
    if nanos.denominator != 1:
        return str(q)
    sign = "-" if nanos < 0 else ""
    whole, part = divmod(abs(nanos.numerator), NANO)
    return f"{sign}{whole}.{part:09d}".rstrip("0").rstrip(".")


def nanos_to_int64(resource_name: str, nanos: int) -> int:
    """An exact amount in nano-units as the scheduler's int64 count: millicores for cpu, units otherwise."""
    count = _round_away_from_zero(nanos, _NANOS_PER_UNIT.get(resource_name, NANO))
    if INT64_MIN <= count <= INT64_MAX:       # the common case, without building the Fraction for the message
        return count
    return _checked_int64(count, Fraction(nanos, NANO))


def int64_to_nanos(resource_name: str, amount: int) -> int:
    """Inverse of nanos_to_int64 for an amount that is already a whole count."""
    return amount * _NANOS_PER_UNIT.get(resource_name, NANO)


def nanos_to_text(nanos: int) -> str:
    """An exact amount as a quantity string that parses back to it: 2, 1500m, 250u, 7n."""
    for suffix, scale in (("", NANO), ("m", 10**6), ("u", 10**3)):
        if nanos % scale == 0:
            return f"{nanos // scale}{suffix}"
    return f"{nanos}n"


def _measure(resource_name: str, raw: object) -> tuple[int, int]:
    """(int64 count, exact nano-units) of one manifest quantity."""
    exact = decode_quantity(raw)
    nanos = exact.numerator * (NANO // exact.denominator)  # parse_quantity values are whole nanos
    try:
        return nanos_to_int64(resource_name, nanos), nanos
    except QuantityError:
        raise _out_of_range(render_value(raw)) from None


# Manifests repeat a few quantity strings (every node of a pool, every replica): parsing one is ~10 us of Python.
# Only successful parses are remembered (lru_cache does not keep exceptions), so an error still names its field.
_measure_text = lru_cache(maxsize=4096)(_measure)


def to_int64(resource_name: str, raw: object) -> int:
    """A manifest quantity as the scheduler counts it: MilliValue for "cpu", Value for any other resource."""
    return _measure(resource_name, raw)[0]


class _Entry(NamedTuple):
    name: object
    raw: object


def _measure_entry(entry: _Entry) -> tuple[int, int]:
    try:
        raw = entry.raw
        count, nanos = _measure_text(entry.name, raw) if type(raw) is str else _measure(entry.name, raw)
    except QuantityError as error:
        raise PydanticCustomError("quantity", "{problem}", {"problem": str(error)}) from None
    # API validation (ValidateResourceQuantityValue / ValidateNonnegativeQuantity) rejects negative amounts in
    # every resource list the scheduler reads: node capacity and allocatable, requests, limits, overhead.
    if nanos < 0:
        raise PydanticCustomError("quantity", "{problem}", {"problem": "must be greater than or equal to 0"})
    return count, nanos


# Resource lists of quantity text validated before: the items -> (counts, exact nano-units). Only lists that
# validated are kept, so a bad one still fails at its key each time.
_TEXT_LISTS: dict[tuple, tuple[dict[str, int], dict[str, int]]] = {}
_TEXT_LISTS_KEPT = 4096


def _exact_nanos(name: str, count: int, exact: int | None) -> int:
    """The exact amount validated (`exact`) while the count still is its rounding; the count's otherwise (a count
    changed after validation wins)."""
    if exact is not None and nanos_to_int64(name, exact) == count:
        return exact
    return int64_to_nanos(name, count)


class ResourceList(dict):
    """Resource name -> int64 count as the scheduler uses it (millicores for cpu, units otherwise).

    As a pydantic field it validates a manifest mapping with to_int64 per entry, so a bad value is
    reported at its key (requests.cpu: invalid quantity "12x"). An existing ResourceList passes
    through unchanged; any other mapping is read as manifest quantities (a bare 2 under cpu is 2 cores).

    Beside the counts it keeps each quantity's exact value in nano-units (nanos), because upstream adds
    container quantities exactly and rounds once: two containers asking 1.5 bytes need 3 bytes, not 4.
    A count changed after validation wins over the remembered exact value. It serializes (model_dump) to
    quantity strings, so a dumped object validates back to an equal one.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._exact: dict[str, int] = {}

    def nanos(self, name: str) -> int:
        """The exact quantity of `name` in nano-units (all_nanos: every name's)."""
        return _exact_nanos(name, self[name], self._exact.get(name))

    def all_nanos(self) -> dict[str, int]:
        """{name: nanos(name)} for every name (intake reads every list of every new pod spec this way)."""
        exact = self._exact
        return {name: _exact_nanos(name, count, exact.get(name)) for name, count in self.items()}

    def key(self) -> tuple:
        """Hashable, and equal for two lists only if every nanos() of theirs is (the counts and the exact values
        they were validated from)."""
        return tuple(self.items()), tuple(self._exact.items())

    def put(self, name: str, nanos: int) -> None:
        """Set `name` from an exact amount in nano-units."""
        self[name] = nanos_to_int64(name, nanos)
        self._exact[name] = nanos

    def copy(self) -> ResourceList:
        twin = ResourceList(self)
        twin._exact = dict(self._exact)
        return twin

    def round_up_to_milli(self) -> None:
        """SetDefaults_ResourceList: the API server rounds every stored quantity up (away from zero) to 1m.

        The int64 counts cannot change (they are already rounded to 1m or coarser); the exact values can.
        """
        for name in self:
            self._exact[name] = _round_away_from_zero(self.nanos(name), 10**6) * 10**6

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        entries = core_schema.dict_schema(
            keys_schema=core_schema.str_schema(),
            values_schema=core_schema.no_info_plain_validator_function(_measure_entry))
        return core_schema.no_info_wrap_validator_function(
            cls._validate, entries, serialization=core_schema.plain_serializer_function_ser_schema(cls._as_text))

    @staticmethod
    def _as_text(resources: Mapping[str, int]) -> dict[str, str]:
        if not isinstance(resources, ResourceList):  # a plain dict of counts assigned after validation
            resources = ResourceList(resources)
        return {name: nanos_to_text(resources.nanos(name)) for name in resources}

    @classmethod
    def _validate(cls, raw: Any, validate_entries: Any) -> ResourceList:
        if isinstance(raw, ResourceList):
            return raw
        text = None
        if type(raw) is dict and all(type(q) is str for q in raw.values()):
            # A pool's nodes and a controller's replicas repeat one capacity or request list, as text.
            text = tuple(raw.items())
            known = _TEXT_LISTS.get(text)
            if known is not None:
                resources = cls(known[0])
                resources._exact = dict(known[1])
                return resources
        if isinstance(raw, Mapping):
            # Each value needs its key: cpu converts with MilliValue, everything else with Value.
            raw = {name: _Entry(name, quantity) for name, quantity in raw.items()}
        measured = validate_entries(raw)
        resources = cls({name: count for name, (count, _) in measured.items()})
        resources._exact = {name: nanos for name, (_, nanos) in measured.items()}
        if text is not None:
            if len(_TEXT_LISTS) >= _TEXT_LISTS_KEPT:
                _TEXT_LISTS.clear()
            _TEXT_LISTS[text] = (dict(resources), dict(resources._exact))
        return resources
