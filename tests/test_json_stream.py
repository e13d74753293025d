"""Large JSON Lists read item by item (cluster_models/json_stream.py) load exactly as the whole-file reading does:
the same objects, the same warnings, and for a bad file the same one-line error. Files are streamed here whatever
their size (STREAM_MIN_CHARS lowered)."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phalanx.cluster_models import InputError, load, load_paths
from phalanx.cluster_models.json_stream import NotStreamable, streamed_list
from phalanx.cluster_models.objects import Node, Pod

IMAGE = "registry.k8s.io/pause:3.10"


def _pod(name: str, variant: int, uid: str | None = None) -> dict:
    container = {"name": "c", "image": IMAGE, "resources": {"requests": {"cpu": f"{100 + variant}m"}},
                 # a list of objects inside the item: "}," and "}]" that are not the item's end
                 "env": [{"name": f"E{i}", "value": "x}, {y]"} for i in range(variant % 3)]}
    meta = {"name": name, "namespace": "web", "labels": {"app": f"a{variant % 2}"},
            "annotations": {"note": "caf\u00e9 \u2603"}}
    if uid is not None:
        meta["uid"] = uid
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [container]}}


def _node(name: str, zone: int) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": f"z-{zone}"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _load(tmp_path, text: str, monkeypatch, stream: bool):
    path = tmp_path / "objects.json"
    path.write_text(text)
    monkeypatch.setattr(load, "STREAM_MIN_CHARS", 0 if stream else 1 << 60)
    try:
        return load_paths([path])
    except InputError as error:
        return str(error)


def _same(tmp_path, text: str, monkeypatch):
    streamed = _load(tmp_path, text, monkeypatch, stream=True)
    whole = _load(tmp_path, text, monkeypatch, stream=False)
    if isinstance(whole, str):
        assert streamed == whole
        return whole
    assert streamed.pods == whole.pods and streamed.nodes == whole.nodes
    assert [p.key for p in streamed.pods] == [p.key for p in whole.pods]
    assert [n.metadata.labels for n in streamed.nodes] == [n.metadata.labels for n in whole.nodes]
    assert streamed.warnings == whole.warnings
    return streamed


items = st.lists(st.tuples(st.sampled_from(["pod", "node"]), st.integers(0, 5), st.booleans()), max_size=30)


@settings(max_examples=60, deadline=None)
@given(items=items, indent=st.sampled_from([None, 0, 2]), compact=st.booleans(), kind_last=st.booleans())
def test_a_streamed_list_loads_as_the_whole_file(tmp_path_factory, items, indent, compact, kind_last):
    monkeypatch = pytest.MonkeyPatch()
    try:
        docs = [(_pod(f"p-{'1' * (i % 4)}{i}", variant, "u" if uid else None) if kind == "pod"
                 else _node(f"n-{i}", variant)) for i, (kind, variant, uid) in enumerate(items)]
        top = {"apiVersion": "v1", "kind": "List", "items": docs}
        if kind_last:          # kind after items: read whole
            top = {"items": docs, "apiVersion": "v1", "kind": "List"}
        text = json.dumps(top, indent=indent, separators=(",", ":") if compact else None, ensure_ascii=False)
        _same(tmp_path_factory.mktemp("s"), text, monkeypatch)
        if not kind_last:      # read item by item indeed
            assert list(streamed_list(text)[1]) == docs
    finally:
        monkeypatch.undo()


def test_typed_lists_stream_and_their_items_take_the_lists_kind(tmp_path, monkeypatch):
    docs = [{k: v for k, v in _pod(f"p-{i}", 0).items() if k not in ("kind", "apiVersion")} for i in range(5)]
    loaded = _same(tmp_path, json.dumps({"apiVersion": "v1", "kind": "PodList", "items": docs}), monkeypatch)
    assert [p.key for p in loaded.pods] == [f"web/p-{i}" for i in range(5)]
    nodes = [{k: v for k, v in _node(f"n-{i}", i).items() if k != "kind"} for i in range(3)]
    loaded = _same(tmp_path, json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": nodes}), monkeypatch)
    assert [n.metadata.labels["zone"] for n in loaded.nodes] == ["z-0", "z-1", "z-2"]


BAD = {
    "a key twice in an item": lambda t: t.replace('"namespace": "web"', '"namespace": "web", "namespace": "x"', 1),
    "a key twice at the top": lambda t: t.replace('"kind": "List"', '"kind": "List", "kind": "List"'),
    "NaN in an item": lambda t: t.replace('"variant"', 'NaN'),
    "cut short": lambda t: t[:-40],
    "a second document": lambda t: t + ' {"apiVersion": "v1", "kind": "List", "items": []}',
    "trailing garbage": lambda t: t + " ]",
    "an item not an object": lambda t: t.replace('"items": [', '"items": [3, ', 1),
    "items not a list": lambda t: t.replace('"items": [', '"items": {"a": [', 1) + "}",
    "a trailing comma": lambda t: t[:t.rindex("]")] + ", ]}",
    "an invalid item": lambda t: t.replace('"p-3"', '"P-3"'),
    "an item's bad quantity": lambda t: t.replace('"101m"', '"12x"', 1),
    "a node's bad label value": lambda t: t.replace('"z-1"', '"-z"', 1),
    "kind after items": lambda t: t.replace('"kind": "List", ', "")[:-1] + ', "kind": "List"}',
    "a lone surrogate": lambda t: t.replace("caf\\u00e9", "\\ud800", 1),
    "not a List": lambda t: t.replace('"kind": "List"', '"kind": "Pod"'),
}


@pytest.mark.parametrize("bad", sorted(BAD))
def test_a_bad_file_gets_the_whole_file_readings_answer(tmp_path, monkeypatch, bad):
    docs = [_pod(f"p-{i}", i % 2) for i in range(6)] + [_node(f"n-{i}", i) for i in range(3)]
    docs[2]["metadata"]["annotations"]["x"] = "variant"
    text = BAD[bad](json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    _same(tmp_path, text, monkeypatch)


def test_what_is_not_a_list_of_objects_is_not_streamed():
    assert streamed_list("[1, 2]") is None
    assert streamed_list('{"kind": "List"}') is None
    assert streamed_list('{"kind": "List", "items": 3}') is None
    head, items = streamed_list('{"kind": "List", "apiVersion": "v1", "items": [{"a": 1}, 2]}')
    assert head == {"kind": "List", "apiVersion": "v1"} and next(items) == {"a": 1}
    with pytest.raises(NotStreamable):
        next(items)
    head, items = streamed_list('{"kind": "List", "items": [], "metadata": {}}')
    assert list(items) == []
    head, items = streamed_list('{"kind": "List", "items": [{"b": [{"c": 1}, {"d": "}]"}]}, {"e": 2}]}')
    assert list(items) == [{"b": [{"c": 1}, {"d": "}]"}]}, {"e": 2}]


def test_node_replicas_differ_in_label_values_and_are_the_nodes_validated_alone(tmp_path, monkeypatch):
    docs = [_node(f"n-{i}", i % 3) for i in range(6)]
    docs[4]["metadata"]["labels"]["extra"] = "e"        # other keys: validated as itself
    loaded = _same(tmp_path, json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), monkeypatch)
    alone = [Node.model_validate(d) for d in docs]
    assert [n.model_dump() for n in loaded.nodes] == [n.model_dump() for n in alone]
    assert loaded.nodes[3].status is loaded.nodes[0].status          # a replica shares its template's fields
    docs[0]["metadata"]["labels"]["empty"] = docs[1]["metadata"]["labels"]["empty"] = None     # null reads as ""
    loaded = _same(tmp_path, json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), monkeypatch)
    assert loaded.nodes[1].metadata.labels["empty"] == "" and loaded.nodes[1].metadata.labels["zone"] == "z-1"
    docs[5]["metadata"]["labels"]["zone"] = "bad value!"
    assert _same(tmp_path, json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), monkeypatch).startswith(
        "Node n-5: metadata.labels:")


def test_pod_replicas_in_a_streamed_list_share_their_template(tmp_path, monkeypatch):
    docs = [_pod(f"p-{i}", 0) for i in range(4)]
    loaded = _same(tmp_path, json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), monkeypatch)
    assert all(isinstance(p, Pod) and p.spec is loaded.pods[0].spec for p in loaded.pods)


def test_a_template_name_written_otherwise_is_not_found_elsewhere_in_the_item(tmp_path, monkeypatch):
    # The name written with an escape, and its plain text once elsewhere (a label): that place is not the name's.
    # The second item is the first with the label changed: read whole, a pod named p-0 twice.
    docs = [_pod("p-0", 0), _pod("p-0", 0)]
    docs[0]["metadata"]["labels"]["copy"], docs[1]["metadata"]["labels"]["copy"] = "p-0", "p-1"
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}).replace('"name": "p-0"', '"name": "p\\u002d0"')
    assert _same(tmp_path, text, monkeypatch) == "duplicate Pod web/p-0"


def test_a_template_found_by_its_key_gives_its_replicas_the_documents_uid(tmp_path, monkeypatch):
    # p-2 repeats p-0's template but with a uid: the template for the items after it is p-0's pod with p-2's text.
    docs = [_pod("p-0", 1), _pod("p-1", 0), _pod("p-2", 1, "u"), _pod("p-3", 1, "u")]
    loaded = _same(tmp_path, json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}), monkeypatch)
    assert [p.metadata.uid for p in loaded.pods] == ["", "", "u", "u"]
