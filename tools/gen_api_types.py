"""Writes phalanx/cluster_models/api_types.py: the Go type of every field of every struct reachable from the kinds
phalanx reads, taken from the API's published OpenAPI (kubernetes/kubernetes api/openapi-spec/swagger.json).

    python tools/gen_api_types.py SWAGGER --revision TEXT [--out FILE | --check FILE]

--revision names where SWAGGER came from (it is written into the table's header with the file's sha256); --check
exits 1 when FILE is not what SWAGGER generates (`make api-types-check`).

The OpenAPI says each field's JSON type (string, boolean, integer int32/int64, array, object with
additionalProperties: a map, $ref: a struct) and names the apimachinery types that decode themselves
(UnmarshalJSON): those become the table's named leaf types. Any other shape stops the generator, so a type the
loader's check cannot read (a float, []byte, MicroTime: none is reachable at v1.36) is noticed, not skipped.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phalanx.cluster_models.load import READ_KINDS  # noqa: E402

# apimachinery types with their own UnmarshalJSON -> the table's name for them.
_SELF_DECODING = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "Quantity",        # a string or a number, ParseQuantity
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "IntOrString",   # a string or an int32
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "Time",               # an RFC 3339 string
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "any",             # any JSON, kept as its bytes
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "any",            # likewise
}
_SCALARS = {("string", None): "string", ("boolean", None): "bool", ("integer", "int32"): "int32",
            ("integer", "int64"): "int64"}
_PREFIXES = {"io.k8s.api.": "", "io.k8s.apimachinery.pkg.apis.": ""}


def struct_name(definition: str) -> str:
    """io.k8s.api.core.v1.PodSpec -> core/v1.PodSpec; io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta ->
    meta/v1.ObjectMeta (api_fields.py's names)."""
    for prefix in _PREFIXES:
        if definition.startswith(prefix):
            package, _, name = definition[len(prefix):].rpartition(".")
            group, _, version = package.rpartition(".")
            return f"{group}/{version}.{name}"
    raise SystemExit(f"{definition}: not a k8s.io/api or apimachinery type")


def _ref(schema: dict) -> str | None:
    ref = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref")
    return None if ref is None else ref.rpartition("/")[2]


class _Tables:
    def __init__(self, definitions: dict):
        self.definitions = definitions
        self.structs: dict[str, str] = {}          # struct name -> "field:type field:type ..."
        self._pending: list[str] = []

    def type_of(self, schema: dict, where: str) -> str:
        ref = _ref(schema)
        if ref is not None:
            if ref in _SELF_DECODING:
                return _SELF_DECODING[ref]
            name = struct_name(ref)
            if name not in self.structs:
                self.structs[name] = ""            # reserved: a struct reached twice is read once
                self._pending.append(ref)
            return name
        kind = schema.get("type")
        if kind == "array":
            return "[]" + self.type_of(schema["items"], where)
        if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
            return "map[string]" + self.type_of(schema["additionalProperties"], where)
        scalar = _SCALARS.get((kind, schema.get("format")))
        if scalar is None:
            raise SystemExit(f"{where}: no table type for {json.dumps(schema)[:200]}")
        return scalar

    def read(self, root: str) -> str:
        name = self.type_of({"$ref": root}, root)
        while self._pending:
            definition = self._pending.pop()
            schema = self.definitions[definition]
            if schema.get("type") != "object" or "additionalProperties" in schema:
                raise SystemExit(f"{definition}: neither a struct nor a named leaf type")
            fields = schema.get("properties", {})
            self.structs[struct_name(definition)] = " ".join(
                f"{field}:{self.type_of(fields[field], f'{definition}.{field}')}" for field in sorted(fields))
        return name


def generate(swagger: dict, revision: str, digest: str, kinds: frozenset[str] = READ_KINDS) -> str:
    """The text of api_types.py for this OpenAPI document: the structs reachable from `kinds`."""
    definitions = swagger["definitions"]
    tables = _Tables(definitions)
    roots = {}
    for definition in sorted(definitions):
        for gvk in definitions[definition].get("x-kubernetes-group-version-kind", []):
            if gvk["kind"] in kinds:
                api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
                roots[f"{api_version} {gvk['kind']}"] = tables.read(definition)
    missing = kinds - {key.partition(" ")[2] for key in roots}
    if missing:
        raise SystemExit(f"kinds phalanx reads that the OpenAPI lacks: {', '.join(sorted(missing))}")
    lines = [
        '"""The Go type of every field of every struct reachable from the kinds phalanx reads (cluster_models/load.py)',
        "as the API server decodes JSON into them; cluster_models/api_decode.py checks manifests against it.",
        "",
        *textwrap.wrap(f"Generated by tools/gen_api_types.py (make api-types) from kubernetes/kubernetes "
                       f"api/openapi-spec/swagger.json at {revision}, sha256 {digest}. Do not edit.", 116),
        "",
        "Types: string bool int32 int64; Quantity (a string or a number); IntOrString (a string or an int32); Time (an",
        "RFC 3339 string); any (any JSON: runtime.RawExtension, metav1.FieldsV1); []T; map[string]T; a struct by name.",
        '"""',
        "",
        "# \"apiVersion Kind\" -> the kind's struct",
        "ROOTS: dict[str, str] = {",
        *(f"    {json.dumps(key)}: {json.dumps(value)}," for key, value in sorted(roots.items())),
        "}",
        "",
        "# struct -> its fields as \"jsonName:type\", space-separated",
        "STRUCTS: dict[str, str] = {",
    ]
    for name in sorted(tables.structs):
        fields = tables.structs[name]
        lines.append(f"    {json.dumps(name)}: (" if fields else f"    {json.dumps(name)}: \"\",")
        if fields:
            lines.extend(_wrapped(fields, "        "))
            lines.append("    ),")
    lines += ["}", ""]
    return "\n".join(lines)


def _wrapped(fields: str, indent: str, width: int = 120) -> list[str]:
    """A long fields string as adjacent string literals of at most `width` characters a line."""
    out, line = [], ""
    for field in fields.split(" "):
        piece = field if not line else f"{line} {field}"
        if line and len(indent) + len(piece) + 3 > width:
            out.append(f'{indent}"{line} "')
            line = field
        else:
            line = piece
    out.append(f'{indent}"{line}"')
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("swagger", type=Path)
    parser.add_argument("--revision", required=True, help="where the swagger.json came from, for the header")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", type=Path)
    target.add_argument("--check", type=Path)
    args = parser.parse_args()
    data = args.swagger.read_bytes()
    text = generate(json.loads(data), args.revision, hashlib.sha256(data).hexdigest())
    if args.out is not None:
        args.out.write_text(text)
    elif args.check.read_text() != text:
        raise SystemExit(f"{args.check} is not what {args.swagger} generates: run make api-types")


if __name__ == "__main__":
    main()
