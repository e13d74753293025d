"""What the API server's JSON decoding refuses in a manifest that phalanx's models do not: a value whose JSON type does
not fit its field's Go type (api_types.py, from upstream's OpenAPI), in the fields the models do not read.

The rules are encoding/json's as the API server applies them (sigs.k8s.io/json, then the apimachinery types' own
UnmarshalJSON):
  - null fits every field (it leaves the zero value);
  - string, bool: that JSON type only; int32, int64: a JSON integer in the Go type's range (1.0 is not one; a YAML
    float neither, as phalanx's modelled integers read it);
  - Quantity: a string or a number that resource.ParseQuantity reads (quantity.decode_quantity);
  - IntOrString: a string or an int32; Time: an RFC 3339 string; any (RawExtension, FieldsV1): any JSON;
  - []T: a list; map[string]T: an object; a struct: an object. A field the struct does not have is not this
    module's business (api_fields.py: a warning, an error with --strict).

A field the object's model reads with a type of its own (a string, an Int32, a nested model) is the model's: pydantic
has validated it, with its messages, before this check runs, and it is not looked at again (the walk goes on into a
nested model's struct for the fields that model leaves). A field a model holds unchecked (typed Any or dict) is
checked here like one it does not read.

Each message is the one phalanx gives a modelled field of that type: the leaf types are validated by the very types
the models use (objects.Int32, controllers.IntOrString, objects.Timestamp, ...) and worded by
errors.validation_problem, so `spec.hostname: input should be a valid string (got 5)` reads as
`spec.nodeName: ...` does.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Annotated, Any, get_args

from pydantic import BaseModel, Strict, StrictBool, StrictStr, TypeAdapter, ValidationError

from .api_types import ROOTS, STRUCTS
from .controllers import IntOrString
from .errors import field_path, given, validation_problem
from .objects import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, Int32, Int64, Timestamp, rfc3339_seconds
from .quantity import QuantityError, decode_quantity

# Versions the v1.36 API server no longer serves that phalanx reads with the served version's model: their structs
# are the served version's. (A scheduling.k8s.io/v1alpha1 Workload, of another shape, is not checked.)
_SAME_TYPES = {
    "scheduling.k8s.io/v1beta1 PriorityClass": "scheduling.k8s.io/v1 PriorityClass",
    "scheduling.k8s.io/v1alpha1 PriorityClass": "scheduling.k8s.io/v1 PriorityClass",
    "policy/v1beta1 PodDisruptionBudget": "policy/v1 PodDisruptionBudget",
}


class _Struct:
    __slots__ = ("name", "fields", "plain")

    def __init__(self, name: str):
        self.name = name                                   # the Go struct's name, for messages
        self.fields: dict[str, Any] = {}                   # json name -> its type
        # (json name, Python type) -> the int range, or None: a field of this Go type given a value of this Python
        # type needs no other look (most fields are plain strings and numbers: no call made for them).
        self.plain: dict[tuple[str, type], tuple[int, int] | None] = {}


class _List:
    __slots__ = ("item",)

    def __init__(self, item: Any):
        self.item = item


class _Map:
    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


class _Leaf:
    """A named leaf type: `fits(value)` says yes quickly for the usual values; anything else is validated by
    `adapter`, the type phalanx's models give such a field, whose error is the message. `plain`: the Python type of a
    value that fits without a call when it is in `bounds` (None: a value of any type is looked at)."""
    __slots__ = ("fits", "adapter", "plain", "bounds")

    def __init__(self, fits: Callable[[Any], bool], annotation: Any, plain: type | None = None,
                 bounds: tuple[int, int] | None = None):
        self.fits = fits
        self.adapter = TypeAdapter(annotation)
        self.plain = plain
        self.bounds = bounds

    def problem(self, value: Any) -> str | None:
        if self.fits(value):
            return None
        try:
            self.adapter.validate_python(value)
        except ValidationError as error:
            return validation_problem(error)
        return None


def _is_int(low: int, high: int) -> Callable[[Any], bool]:
    return lambda value: type(value) is int and low <= value <= high


def _is_time(value: Any) -> bool:
    if type(value) is not str:
        return False           # a YAML datetime too: objects.Timestamp takes it
    try:
        rfc3339_seconds(value)
    except ValueError:
        return False
    return True


def _quantity_problem(value: Any) -> str | None:
    if type(value) is str and _quantity_text_fits(value):
        return None
    try:
        decode_quantity(value)
    except QuantityError as error:
        return str(error)
    return None


@lru_cache(maxsize=4096)
def _quantity_text_fits(text: str) -> bool:
    """Quantities repeat ("128Mi"): each text parsed once."""
    try:
        decode_quantity(text)
    except QuantityError:
        return False
    return True


_LEAVES: dict[str, Any] = {
    "string": _Leaf(lambda value: type(value) is str, StrictStr, str),
    "bool": _Leaf(lambda value: type(value) is bool, StrictBool, bool),
    "int32": _Leaf(_is_int(INT32_MIN, INT32_MAX), Int32, int, (INT32_MIN, INT32_MAX)),
    "int64": _Leaf(_is_int(INT64_MIN, INT64_MAX), Int64, int, (INT64_MIN, INT64_MAX)),
    "IntOrString": _Leaf(lambda value: type(value) is str or (type(value) is int and INT32_MIN <= value <= INT32_MAX),
                         IntOrString),
    "Time": _Leaf(_is_time, Timestamp),
    "Quantity": _quantity_problem,
    "any": None,
}
_LIST_WORDS = TypeAdapter(Annotated[list, Strict()])      # a list or a map where none is: pydantic's message
_MAP_WORDS = TypeAdapter(Annotated[dict, Strict()])


def _words(adapter: TypeAdapter, value: Any) -> str:
    try:
        adapter.validate_python(value)
    except ValidationError as error:
        return validation_problem(error)
    raise AssertionError(f"{value!r} passed {adapter}")


@lru_cache(maxsize=None)
def struct_fields(struct: str) -> dict[str, str]:
    """A struct's json field names -> their types, as api_types.py writes them."""
    return dict(field.split(":") for field in STRUCTS[struct].split())


def _type_of(text: str, model: type[BaseModel] | None) -> Any:
    """The checked type for a table type; a struct in it is read by `model` (None: by no model)."""
    if text.startswith("[]"):
        return _List(_type_of(text[2:], model))
    if text.startswith("map[string]"):
        return _Map(_type_of(text[11:], model))
    return _LEAVES[text] if text in _LEAVES else _struct(text, model)


_STRUCTS: dict[tuple[str, type[BaseModel] | None], _Struct] = {}


def _struct(name: str, model: type[BaseModel] | None) -> _Struct:
    """The fields of struct `name` to check where `model` reads it: those it does not read (all, for None), and the
    structs it reads with nested models, for the fields they leave. Made once (structs nest; none contains itself)."""
    struct = _STRUCTS.get((name, model))
    if struct is not None:
        return struct
    struct = _STRUCTS[name, model] = _Struct(name.rpartition(".")[2])
    read = _read_by(model) if model is not None else {}
    for json_name, text in struct_fields(name).items():
        if json_name in read and read[json_name] is None:
            continue                                   # a value the model's own type checks
        kind = struct.fields[json_name] = _type_of(text, read.get(json_name))
        if type(kind) is _Leaf and kind.plain is not None:
            struct.plain[json_name, kind.plain] = kind.bounds
    return struct


@lru_cache(maxsize=None)
def _read_by(model: type[BaseModel]) -> dict[str, type[BaseModel] | None]:
    """The json names of the fields `model` validates -> the model that reads their values (in a list or a map, or
    alone), or None for a value its own type checks. A field typed Any or dict is held unchecked: not listed."""
    read = {}
    for name, field in model.model_fields.items():
        if not _unchecked(field.annotation):
            models = _models_in(field.annotation)
            read[field.alias or name] = models[0] if models else None
    return read


def _unchecked(annotation: Any) -> bool:
    if annotation is Any or annotation is dict or annotation is list:
        return True
    return any(_unchecked(arg) for arg in get_args(annotation))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _models_in(arg)]


def decode_problem(api_version: str, kind: str, document: dict, model: type[BaseModel] | None) -> str | None:
    """"field.path: problem" for the first field of `document` (a `kind` at `api_version`) whose value the API server
    cannot decode into the field's Go type, or None when every field decodes (or the version is not tabled).
    `model`: the class that validated the document as it is (its fields are left to it), or None (all checked)."""
    key = f"{api_version} {kind}"
    root = ROOTS.get(_SAME_TYPES.get(key, key))
    if root is None:
        return None
    found = _problem(_struct(root, model), document)
    if found is None:
        return None
    loc, problem = found
    return f"{field_path(loc)}: {problem}" if loc else problem


def _problem(kind: Any, value: Any) -> tuple[tuple, str] | None:
    """(the location within `value`, the message) of its first value that does not decode into `kind`, or None."""
    if value is None or kind is None:
        return None
    kind_type = type(kind)
    if kind_type is _Struct:
        if not isinstance(value, dict):
            return (), f"input should be a valid dictionary or instance of {kind.name}{given(value)}"
        fields, plain = kind.fields, kind.plain
        for key, item in value.items():
            bounds = plain.get((key, type(item)), False)
            if bounds is None or (bounds and bounds[0] <= item <= bounds[1]):
                continue
            field = fields.get(key)
            if field is None or item is None:
                continue           # a field the struct lacks (api_fields' warning), or one the model has checked
            found = _problem(field, item)
            if found is not None:
                return (key, *found[0]), found[1]
        return None
    if kind_type is _List:
        if not isinstance(value, list):
            return (), _words(_LIST_WORDS, value)
        item_kind = kind.item
        for index, item in enumerate(value):
            found = _problem(item_kind, item)
            if found is not None:
                return (index, *found[0]), found[1]
        return None
    if kind_type is _Map:
        if not isinstance(value, dict):
            return (), _words(_MAP_WORDS, value)
        value_kind = kind.value
        for key, item in value.items():
            found = _problem(value_kind, item)
            if found is not None:
                return (key, *found[0]), found[1]
        return None
    problem = kind.problem(value) if kind_type is _Leaf else kind(value)
    return None if problem is None else ((), problem)
