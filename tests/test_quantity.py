"""Quantity parsing and int64 conversion against apimachinery resource.Quantity (v0.36) semantics."""
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from phalanx.cluster_models.quantity import (
    INT64_MAX,
    INT64_MIN,
    QuantityError,
    ResourceList,
    decode_quantity,
    milli_value,
    nanos_to_text,
    parse_quantity,
    to_int64,
    value,
)

F = Fraction

# (text, exact value, Value(), MilliValue()), worked out by hand (None: outside int64). Every row also agrees with
# upstream Go except the Value/MilliValue of "-1e-10" and "-9223372036854775808": upstream keeps those in inf.Dec
# form, whose conversion mangles negatives (Value("-1e-10") is +1); phalanx rounds away from zero as upstream's
# int64 form does. The API server admits no negative resource quantity, so the scheduler never sees either.
QUANTITIES = [
    # plain numbers, signs and decimal points
    ("0", F(0), 0, 0),
    ("1", F(1), 1, 1000),
    ("+7", F(7), 7, 7000),
    ("-7", F(-7), -7, -7000),
    ("007", F(7), 7, 7000),
    ("0.5", F(1, 2), 1, 500),             # Value rounds 0.5 up to 1
    (".5", F(1, 2), 1, 500),
    ("5.", F(5), 5, 5000),
    ("1.5", F(3, 2), 2, 1500),
    # decimal SI suffixes: n u m "" k M G T P E
    ("7n", F(7, 10**9), 1, 1),            # 0.000000007: both round up to the next whole unit
    ("7u", F(7, 10**6), 1, 1),
    ("7m", F(7, 1000), 1, 7),
    ("250m", F(1, 4), 1, 250),
    ("7k", F(7000), 7000, 7000000),
    ("7M", F(7 * 10**6), 7 * 10**6, 7 * 10**9),
    ("7G", F(7 * 10**9), 7 * 10**9, 7 * 10**12),
    ("7T", F(7 * 10**12), 7 * 10**12, 7 * 10**15),
    ("7P", F(7 * 10**15), 7 * 10**15, 7 * 10**18),
    ("7E", F(7 * 10**18), 7 * 10**18, None),  # 7e21 millis do not fit int64
    # binary SI suffixes: Ki Mi Gi Ti Pi Ei
    ("1Ki", F(1024), 1024, 1024000),
    ("1.5Ki", F(1536), 1536, 1536000),
    ("1Mi", F(2**20), 2**20, 2**20 * 1000),
    ("200Mi", F(209715200), 209715200, 209715200000),
    ("1.5Gi", F(3 * 2**29), 1610612736, 1610612736000),
    ("1Ti", F(2**40), 2**40, 2**40 * 1000),
    ("1Pi", F(2**50), 2**50, 2**50 * 1000),
    ("1Ei", F(2**60), 2**60, None),
    ("0.3Ki", F(1536, 5), 308, 307200),   # 307.2 bytes: Value rounds up to 308
    # exponents: e / E with optional sign; a bare E is exa
    ("1e3", F(1000), 1000, 1000000),
    ("1E3", F(1000), 1000, 1000000),
    ("1e+3", F(1000), 1000, 1000000),
    ("1E-3", F(1, 1000), 1, 1),
    ("12e-1", F(6, 5), 2, 1200),
    ("1.5e2", F(150), 150, 150000),
    ("1E", F(10**18), 10**18, None),
    # below a nano: ParseQuantity rounds the magnitude up to 1n
    ("0.0001", F(1, 10**4), 1, 1),        # as cpu: 0.1m -> 1m
    ("0.0000000001", F(1, 10**9), 1, 1),
    ("1.5n", F(2, 10**9), 1, 1),
    ("1e-10", F(1, 10**9), 1, 1),
    ("1e-999999999", F(1, 10**9), 1, 1),
    ("-1e-10", F(-1, 10**9), -1, -1),     # away from zero for negatives
    # negative values round away from zero (Value doc: "rounded up to the nearest integer away from 0")
    ("-1.5", F(-3, 2), -2, -1500),
    ("-0.0001", F(-1, 10**4), -1, -1),
    ("-250m", F(-1, 4), -1, -250),
    # the int64 edge
    ("9223372036854775807", F(INT64_MAX), INT64_MAX, None),
    ("9223372036854775807m", F(INT64_MAX, 1000), 9223372036854776, INT64_MAX),
    ("-9223372036854775808", F(INT64_MIN), INT64_MIN, None),
    ("9223372036854775808", F(INT64_MAX + 1), None, None),
    ("16Ei", F(INT64_MAX), INT64_MAX, None),  # 2^64, but BinarySI values are capped at 2^63-1
    ("1e400", F(10**400), None, None),
    # upstream quirks of digit-less text: the int64 fast path turns it into 0
    (".", F(0), 0, 0),
    ("+", F(0), 0, 0),
    ("-", F(0), 0, 0),
    ("m", F(0), 0, 0),
    ("Ki", F(0), 0, 0),
    ("e5", F(0), 0, 0),
    # the exponent is parsed as int64 and then stored in an int32, so 2^32 wraps to 0
    ("1e4294967296", F(1), 1, 1000),
]


@pytest.mark.parametrize("text,exact,whole,milli", QUANTITIES)
def test_quantity_table(text, exact, whole, milli):
    q = parse_quantity(text)
    assert q == exact
    for convert, expected in ((value, whole), (milli_value, milli)):
        if expected is None:
            with pytest.raises(QuantityError, match="out of range"):
                convert(q)
        else:
            assert convert(q) == expected


INVALID = [
    "", " 1", "1 ", "12x", "1.5.5", "1..5", "--1", "+-1", "1e", "1e+", "1E-", "1ki", "1K", "1Ee3", "1e3.5",
    "1e3e", "1m5", "1Ki5", "1e99999999999999999999", "0x10", "1_000", "\u0661", "1,5", "inf", "NaN",
    "Pi",      # digit-less with Pi/Ei leaves the int64 fast path and needs a digit
    "e-10",    # digit-less with an exponent below nano, same reason
]


@pytest.mark.parametrize("text", INVALID)
def test_invalid_quantities(text):
    with pytest.raises(QuantityError) as caught:
        parse_quantity(text)
    assert str(caught.value) == f'invalid quantity "{text}"'


def test_numbers_are_read_through_their_json_text():
    assert parse_quantity(2) == 2
    assert parse_quantity(-3) == -3
    assert parse_quantity(0.5) == F(1, 2)
    assert parse_quantity(1e16) == 10**16              # repr "1e+16"
    assert parse_quantity(0.1) == F(1, 10)             # shortest repr, not the binary float
    assert parse_quantity(Decimal("0.1000000000000000055")) == F(100000001, 10**9)  # exact, then up to 1n


@pytest.mark.parametrize("raw,shown", [(True, "true"), (float("inf"), "inf"), (float("nan"), "nan"),
                                       (Decimal("Infinity"), "Infinity"), ([1], "[1]"), ({"a": 1}, '{"a": 1}')])
def test_non_quantity_values(raw, shown):
    with pytest.raises(QuantityError) as caught:
        parse_quantity(raw)
    assert str(caught.value) == f'invalid quantity "{shown}"'


def test_huge_exponent_is_out_of_range_without_building_it():
    with pytest.raises(QuantityError) as caught:
        parse_quantity("1e999999999")
    assert str(caught.value) == 'quantity "1e999999999" out of range'
    assert parse_quantity("0e999999999") == 0


def test_value_and_milli_value_out_of_range_messages():
    with pytest.raises(QuantityError) as caught:
        value(F(INT64_MAX + 1))
    assert str(caught.value) == 'quantity "9223372036854775808" out of range'
    with pytest.raises(QuantityError) as caught:
        milli_value(F(9223372036854775808, 1000))
    assert str(caught.value) == 'quantity "9223372036854775.808" out of range'


def test_decode_quantity_is_unmarshal_json():
    assert decode_quantity(None) == 0                  # null is the zero quantity
    assert decode_quantity(" 100m\t") == F(1, 10)      # strings.TrimSpace
    assert decode_quantity("\u3000" + "2") == 2        # Go's white space includes the ideographic space
    with pytest.raises(QuantityError):
        decode_quantity("\x1c2")                       # which Python's str.strip() would remove, Go keeps


def test_to_int64_uses_milli_for_cpu_and_units_otherwise():
    assert to_int64("cpu", "0.0001") == 1              # 0.1m rounds up to 1m
    assert to_int64("cpu", "1.5") == 1500
    assert to_int64("cpu", 2) == 2000
    assert to_int64("memory", "1Gi") == 2**30
    assert to_int64("memory", "0.5") == 1
    assert to_int64("nvidia.com/gpu", "2") == 2
    assert to_int64("pods", None) == 0


def test_to_int64_range_errors_quote_the_manifest_text():
    with pytest.raises(QuantityError) as caught:
        to_int64("memory", "1e400")
    assert str(caught.value) == 'quantity "1e400" out of range'
    assert to_int64("memory", "9223372036854776") == 9223372036854776
    with pytest.raises(QuantityError) as caught:
        to_int64("cpu", "9223372036854776")            # fits as bytes, not as millicores
    assert str(caught.value) == 'quantity "9223372036854776" out of range'
    with pytest.raises(QuantityError) as caught:
        to_int64("cpu", 10**19)
    assert str(caught.value) == 'quantity "10000000000000000000" out of range'


# -- properties ------------------------------------------------------------------------------------------------

SCALES = {"n": F(1, 10**9), "u": F(1, 10**6), "m": F(1, 1000), "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
          "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


@given(st.integers(min_value=0, max_value=10**12), st.sampled_from(sorted(SCALES)))
def test_integer_with_suffix_is_exact(number, suffix):
    expected = number * F(SCALES[suffix])
    if suffix.endswith("i"):
        expected = min(expected, F(INT64_MAX))
    assert parse_quantity(f"{number}{suffix}") == expected


@given(st.integers(min_value=-(10**27), max_value=10**27))
def test_nano_text_round_trips(nanos):
    assert parse_quantity(nanos_to_text(nanos)) == F(nanos, 10**9)


@given(st.integers(min_value=0, max_value=10**15), st.integers(min_value=0, max_value=12))
def test_decimal_text_parses_exactly_and_value_is_ceil(digits, places):
    text = f"{digits // 10**places}.{digits % 10**places:0{places}d}" if places else str(digits)
    exact = F(digits, 10**places)
    nano_ceil = -(-exact * 10**9 // 1)                  # ParseQuantity rounds up to whole nanos
    q = parse_quantity(text)
    assert q == F(nano_ceil, 10**9)
    assert value(q) == -(-exact // 1)
    assert milli_value(q) == -(-exact * 1000 // 1)


# -- ResourceList ----------------------------------------------------------------------------------------------

class Holder(BaseModel):
    resources: ResourceList


def test_resource_list_validates_each_entry_with_its_name():
    held = Holder(resources={"cpu": "1.5", "memory": "1.5", "nvidia.com/gpu": 2, "pods": None})
    assert held.resources == {"cpu": 1500, "memory": 2, "nvidia.com/gpu": 2, "pods": 0}
    assert isinstance(held.resources, ResourceList)
    assert held.resources.nanos("memory") == 1_500_000_000   # the exact 1.5 bytes behind the count of 2


def test_resource_list_error_is_located_at_the_key():
    with pytest.raises(ValidationError) as caught:
        Holder(resources={"cpu": "1", "memory": "12x"})
    error = caught.value.errors()[0]
    assert error["loc"] == ("resources", "memory")
    assert error["msg"] == 'invalid quantity "12x"'


def test_remembered_quantities_are_per_resource_and_errors_are_not_remembered():
    # The same text is 1000 millicores of cpu and 1 byte of memory, read from memory or not; a bad text fails each
    # time it is met, at its own key.
    for _ in range(2):
        held = Holder(resources={"cpu": "1", "memory": "1", "example.com/dev": "1"})
        assert held.resources == {"cpu": 1000, "memory": 1, "example.com/dev": 1}
        with pytest.raises(ValidationError) as caught:
            Holder(resources={"cpu": "1", "memory": "12x"})
        assert caught.value.errors()[0]["loc"] == ("resources", "memory")


def test_a_resource_list_read_before_is_a_new_equal_list():
    first = Holder(resources={"cpu": "1.5", "memory": "1.5"}).resources
    second = Holder(resources={"cpu": "1.5", "memory": "1.5"}).resources
    assert second == first == {"cpu": 1500, "memory": 2} and second is not first
    assert second.nanos("memory") == 1_500_000_000
    second.put("cpu", 2 * 10**9)           # each list its own: changing one leaves the other and the next as read
    third = Holder(resources={"cpu": "1.5", "memory": "1.5"}).resources
    assert first["cpu"] == third["cpu"] == 1500 and third.nanos("cpu") == 1_500_000_000


def test_resource_list_keeps_an_existing_resource_list():
    existing = ResourceList({"cpu": 500})
    assert Holder(resources=existing).resources is existing       # 500 stays 500m, not 500 cores


def test_resource_list_count_changed_after_validation_wins():
    held = Holder(resources={"memory": "1.5"})
    held.resources["memory"] = 7
    assert held.resources.nanos("memory") == 7 * 10**9
    assert ResourceList({"cpu": 250}).nanos("cpu") == 250 * 10**6


def test_resource_list_round_up_to_milli_and_copy():
    held = Holder(resources={"cpu": "0.0001", "memory": "1.0000001"})
    twin = held.resources.copy()
    held.resources.round_up_to_milli()
    assert held.resources.nanos("cpu") == 10**6            # 0.1m -> 1m
    assert held.resources.nanos("memory") == 1_001_000_000  # 1.0000001 -> 1.001 (up to a whole milli)
    assert held.resources == {"cpu": 1, "memory": 2}        # the counts do not move
    assert twin.nanos("cpu") == 100_000                     # the copy is independent


def test_resource_list_rejects_negative_amounts():
    # As the API server's validation does for every resource list the scheduler reads.
    with pytest.raises(ValidationError, match="must be greater than or equal to 0"):
        Holder(resources={"memory": "-1Ki"})


def test_resource_list_dumps_quantity_text_that_validates_back():
    held = Holder(resources={"cpu": "0.25", "memory": "1.5", "hugepages-2Mi": "4Mi"})
    dumped = held.model_dump()
    assert dumped == {"resources": {"cpu": "250m", "memory": "1500m", "hugepages-2Mi": "4194304"}}
    assert Holder.model_validate(dumped).resources.nanos("memory") == 1_500_000_000
