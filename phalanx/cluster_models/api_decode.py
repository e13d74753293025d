"""What the API server's JSON decoding refuses in a manifest that phalanx's models do not: a value whose JSON type does
not fit its field's Go type (api_types.py, from upstream's OpenAPI), in the fields the models do not read.

The rules are encoding/json's as the API server applies them (sigs.k8s.io/json, then the apimachinery types' own
UnmarshalJSON):
  - null fits every field (it leaves the zero value);
  - string, bool: that JSON type only; int32, int64: a JSON integer in the Go type's range (1.0 is not one; a YAML
    float neither, as phalanx's modelled integers read it);
  - Quantity: a string or a number that resource.ParseQuantity reads (quantity.decode_quantity);
  - IntOrString: a string or an int32; Time: an RFC 3339 string; any (RawExtension, FieldsV1): any JSON;
  - []T: a list; map[string]T: an object; a struct: an object.

A field its struct does not have is an unknown field (kubectl's warning, an error with --strict): in a struct a model
reads, the model's validator has met it (objects.K8sModel, api_fields.py); in one no model reads, the walk lists it
here, by its path, in document order (a map's keys are its own, not fields).

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
from typing import Annotated, Any, NamedTuple, get_args

from pydantic import BaseModel, Strict, StrictBool, StrictStr, TypeAdapter, ValidationError

from .api_types import ROOTS, STRUCTS
from .controllers import IntOrString
from .errors import field_path, given, member_path, validation_problem
from .objects import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, Int32, Int64, Timestamp, rfc3339_seconds
from .quantity import QuantityError, decode_quantity

# Versions the v1.36 API server no longer serves that phalanx reads with the served version's model: their structs
# are the served version's. (A scheduling.k8s.io/v1alpha1 Workload, of another shape, is not checked.)
_SAME_TYPES = {
    "scheduling.k8s.io/v1beta1 PriorityClass": "scheduling.k8s.io/v1 PriorityClass",
    "scheduling.k8s.io/v1alpha1 PriorityClass": "scheduling.k8s.io/v1 PriorityClass",
    "policy/v1beta1 PodDisruptionBudget": "policy/v1 PodDisruptionBudget",
}


class _Kind:
    """A Go type as checked here. `plain`: Python type -> None, or the int range it must be in: a value of such a type
    (in range) fits without a call (most values are strings and numbers); anything else goes to `problem`."""
    __slots__ = ()
    plain: dict[type, tuple[int, int] | None] = {}

    def problem(self, value: Any, unknown: list[tuple]) -> tuple[tuple, str] | None:
        """(the location within `value`, the message) of its first part that does not decode, or None; the location
        within `value` of each unknown field met on the way (its name last) appended to `unknown`."""
        raise NotImplementedError


class _Struct(_Kind):
    __slots__ = ("name", "fields", "known")

    def __init__(self, name: str, known: frozenset[str] | None):
        self.name = name                                   # the Go struct's name, for messages
        self.fields: dict[str, _Kind] = {}                 # json name -> its type, for the fields to check
        self.known = known                                 # all its json names where no model reads it, else None

    def problem(self, value: Any, unknown: list[tuple]) -> tuple[tuple, str] | None:
        if not isinstance(value, dict):
            return (), f"input should be a valid dictionary or instance of {self.name}{given(value)}"
        fields, known = self.fields, self.known
        for key, item in value.items():
            field = fields.get(key)     # None: a field the model checks, one taking anything, or one the struct lacks
            if field is None:
                if known is not None and key not in known:
                    unknown.append((key,))
                continue
            found = _at(key, field, item, unknown)
            if found is not None:
                return found
        return None


class _Items(_Kind):
    """[]T (a list) or map[string]T (an object): each item, or each value, a T."""
    __slots__ = ("item", "container")
    words = {container: TypeAdapter(Annotated[container, Strict()]) for container in (list, dict)}

    def __init__(self, item: _Kind, container: type):
        self.item = item
        self.container = container                        # list or dict

    def problem(self, value: Any, unknown: list[tuple]) -> tuple[tuple, str] | None:
        if not isinstance(value, self.container):
            return (), _refusal(self.words[self.container], value)
        item_kind = self.item
        for key, item in value.items() if self.container is dict else enumerate(value):
            found = _at(key, item_kind, item, unknown)
            if found is not None:
                return found
        return None


def _at(key: str | int, kind: _Kind, value: Any, unknown: list[tuple]) -> tuple[tuple, str] | None:
    """kind.problem(value, unknown), its locations under `key`; a null or plain value looked at without that call."""
    bounds = kind.plain.get(type(value), False)
    if value is None or bounds is None or (bounds and bounds[0] <= value <= bounds[1]):
        return None
    met = len(unknown)
    found = kind.problem(value, unknown)
    if len(unknown) > met:          # rare (a typo): the locations found below made this value's
        unknown[met:] = [(key, *loc) for loc in unknown[met:]]
    return None if found is None else ((key, *found[0]), found[1])


class _Leaf(_Kind):
    """A named leaf type: a value fits it when it is plain, or when `fits(value)` says so (a parse); anything else is
    validated by `annotation`, the type phalanx's models give such a field, whose error is the message."""
    __slots__ = ("plain", "fits", "adapter")

    def __init__(self, annotation: Any, plain: dict[type, tuple[int, int] | None],
                 fits: Callable[[Any], bool] | None = None):
        self.plain = plain
        self.fits = fits
        self.adapter = TypeAdapter(annotation)

    def problem(self, value: Any, unknown: list[tuple]) -> tuple[tuple, str] | None:
        if self.fits is not None and self.fits(value):
            return None
        problem = _refusal(self.adapter, value)
        return None if problem is None else ((), problem)   # None: the models' type takes it (a YAML datetime)


class _Quantity(_Kind):
    """resource.Quantity: a string or a number that parses (quantity.decode_quantity: phalanx's quantity reader)."""
    __slots__ = ()

    def problem(self, value: Any, unknown: list[tuple]) -> tuple[tuple, str] | None:
        if type(value) is str and _quantity_text_fits(value):
            return None
        try:
            decode_quantity(value)
        except QuantityError as error:
            return (), str(error)
        return None


def _refusal(adapter: TypeAdapter, value: Any) -> str | None:
    """The message `adapter` refuses `value` with (errors.validation_problem's words), or None."""
    try:
        adapter.validate_python(value)
    except ValidationError as error:
        return validation_problem(error)
    return None


def _is_time(value: Any) -> bool:
    if type(value) is not str:
        return False
    try:
        rfc3339_seconds(value)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=4096)
def _quantity_text_fits(text: str) -> bool:
    """Quantities repeat ("128Mi"): each text parsed once."""
    try:
        decode_quantity(text)
    except QuantityError:
        return False
    return True


_INT32 = (INT32_MIN, INT32_MAX)
_LEAVES: dict[str, _Kind | None] = {
    "string": _Leaf(StrictStr, {str: None}),
    "bool": _Leaf(StrictBool, {bool: None}),
    "int32": _Leaf(Int32, {int: _INT32}),
    "int64": _Leaf(Int64, {int: (INT64_MIN, INT64_MAX)}),
    "IntOrString": _Leaf(IntOrString, {str: None, int: _INT32}),
    "Time": _Leaf(Timestamp, {}, _is_time),
    "Quantity": _Quantity(),
    "any": None,                   # takes anything: nothing to check
}


@lru_cache(maxsize=None)
def struct_fields(struct: str) -> dict[str, str]:
    """A struct's json field names -> their types, as api_types.py writes them."""
    return dict(field.split(":") for field in STRUCTS[struct].split())


def _type_of(text: str, model: type[BaseModel] | None) -> _Kind | None:
    """The checked type for a table type, None when there is nothing to check; a struct in it is read by `model`
    (None: by no model), so one whose fields that model checks all is nothing to check either."""
    if text.startswith("[]") or text.startswith("map[string]"):
        list_of = text.startswith("[]")
        item = _type_of(text[2:] if list_of else text[11:], model)
        return None if item is None else _Items(item, list if list_of else dict)
    if text in _LEAVES:
        return _LEAVES[text]
    struct = _struct(text, model)
    return None if model is not None and not struct.fields else struct


_STRUCTS: dict[tuple[str, type[BaseModel] | None], _Struct] = {}


def _struct(name: str, model: type[BaseModel] | None) -> _Struct:
    """The fields of struct `name` to check where `model` reads it: those it does not read (all, for None), and the
    structs it reads with nested models, for the fields they leave; where no model reads it, its fields' names, the
    others being unknown (a model's validator tells those of a struct it reads). Made once (structs nest; none
    contains itself)."""
    struct = _STRUCTS.get((name, model))
    if struct is not None:
        return struct
    known = frozenset(struct_fields(name)) if model is None else None
    struct = _STRUCTS[name, model] = _Struct(name.rpartition(".")[2], known)
    read = _read_by(model) if model is not None else {}
    for json_name, text in struct_fields(name).items():
        if json_name in read and read[json_name] is None:
            continue                                   # a value the model's own type checks
        kind = _type_of(text, read.get(json_name))
        if kind is not None:
            struct.fields[json_name] = kind
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


class Decoding(NamedTuple):
    """What decoding a document found: the first field whose value does not decode, as "field.path: problem" (None:
    every field decodes), and the paths of the unknown fields of the structs no model reads, in document order."""
    problem: str | None
    unknown_fields: list[str]


def decode_document(api_version: str, kind: str, document: dict, model: type[BaseModel] | None) -> Decoding:
    """`document` (a `kind` at `api_version`) decoded as the API server decodes it, into its version's structs (an
    untabled version: nothing found). `model`: the class that validated the document as it is (its fields, and the
    unknown fields of the structs its models read, are left to it), or None (all checked here)."""
    key = f"{api_version} {kind}"
    root = ROOTS.get(_SAME_TYPES.get(key, key))
    if root is None:
        return Decoding(None, [])
    unknown: list[tuple] = []
    found = _struct(root, model).problem(document, unknown)
    paths = [member_path(loc[:-1], loc[-1]) for loc in unknown]
    if found is None:
        return Decoding(None, paths)
    loc, problem = found
    return Decoding(f"{field_path(loc)}: {problem}" if loc else problem, paths)
