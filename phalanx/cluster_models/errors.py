"""InputError: bad input, reported as one line that names the object and the field.

The shape is "Kind ns/name: field.path: problem", e.g.
    Pod default/w-3: spec.containers[0].resources.requests.cpu: invalid quantity "12x"
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class InputError(ValueError):
    """Input phalanx cannot use. str(error) is the whole report, always a single line."""

    def __init__(self, message: str):
        # A user string (an object name, a bad value) must not break the one-line promise.
        super().__init__(message.replace("\r", "\\r").replace("\n", "\\n"))


def render_value(raw: object) -> str:
    """A manifest value as the user would have written it in JSON: 12x, 3, true, null, ["a"]."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, Decimal):
        return str(raw)
    return json.dumps(raw, ensure_ascii=False, default=str)


def field_path(loc: Sequence[str | int]) -> str:
    """A pydantic error location as a field path: ("spec", "containers", 0, "name") -> spec.containers[0].name.

    Map keys that are not plain identifiers (nvidia.com/gpu, app.kubernetes.io/name) go in brackets so the
    dots inside them are not read as nesting.
    """
    path = ""
    for part in loc:
        if isinstance(part, str) and _PLAIN_KEY.fullmatch(part):
            path += f".{part}" if path else part
        else:
            path += f"[{part}]"
    return path


def member_path(loc: Sequence[str | int], name: Any) -> str:
    """The path of field `name` of the object at `loc`, the name as written after a dot (an unknown field's path,
    kubectl's `spec.containers[0].resources.requets`)."""
    path = field_path(loc)
    return f"{path}.{name}" if path else str(name)


def validation_problem(error: ValidationError) -> str:
    """The first error of a pydantic ValidationError as "field.path: problem" (camelCase manifest names)."""
    first = error.errors(include_url=False)[0]
    kind = first["type"]
    if kind == "missing":
        problem = "field required"
    elif kind == "value_error":
        problem = str(first["ctx"]["error"])
    else:
        problem = first["msg"]
        if problem[:1].isupper() and problem[1:2].islower():
            problem = problem[0].lower() + problem[1:]
        if kind != "quantity":
            problem += given(first.get("input"))
    path = field_path(first["loc"])
    return f"{path}: {problem}" if path else problem


def given(raw: object) -> str:
    """A message's ' (got 5)' naming the value it refuses: a scalar (a text quoted), nothing for a list or a map."""
    if raw is None or isinstance(raw, (str, int, float, Decimal)):
        return f" (got {json.dumps(raw, ensure_ascii=False) if isinstance(raw, str) else render_value(raw)})"
    return ""
