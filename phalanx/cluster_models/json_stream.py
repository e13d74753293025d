"""A large JSON List (`kubectl get pods -o json`, a generated workload) read one item at a time.

jiter parses a whole file at once: for a List of a million pods that is a million decoded dicts alive together
(about 2 KB each), before the first object is made of them. Here the text is cut into its items and each is decoded
by jiter with the options of the whole-file parse, then handed on and dropped, so the peak holds the objects being
made, not the decoded file.

Cutting without a tokenizer: an item ends at a `}` followed by `,` or `]`. A slice of the text that starts at an
item's `{` and decodes as one JSON object *is* that item (a JSON object ends at the brace matching its first one,
and decoding the slice reads the same characters as decoding the whole text would), so a candidate end is tried and,
when the slice stops inside the item ("EOF while parsing"), the next candidate after it. Items of one List are alike:
the first slice tried is as long as the item before, the search starts a little before that length, and from the
item's start when that overshot ("trailing characters", or no candidate).

Anything else (another shape, a key twice, NaN, an escape jiter refuses, an item that does not decode) is not
decided here: `NotStreamable` tells the caller to read the file whole, whose errors and results are the reference.
"""
from __future__ import annotations

import json
import re
from typing import Any

import jiter

# Below this many characters a file is decoded whole: the memory is small, and errors in the JSON are reported before
# any object is checked (in a streamed file, an invalid object before the broken JSON is reported first).
STREAM_MIN_CHARS = 16 << 20

_ITEM_END = re.compile(r"\}[ \t\r\n]*([,\]])")
_AFTER_ITEM = re.compile(r"[ \t\r\n]*([,\]])")
_SPACE = re.compile(r"[ \t\r\n]*")
_SCAN = json.scanner.make_scanner(json.JSONDecoder())     # the end of a small top-level value
# The slice tried for one item may grow to this many times the item before it (plus _GROWTH_SLACK characters)
# before the item is declared undecodable here: a broken item must not cost a decode per candidate to the end.
_GROWTH, _GROWTH_SLACK = 64, 1 << 16
_SEARCH_SLACK = 32        # characters before the previous item's length at which the next end is searched


class NotStreamable(Exception):
    """The text is not a JSON List this module reads item by item; read it whole."""


def decode(text: str | bytes) -> Any:
    """One JSON value as the loader reads it: exact decimals, a key twice refused, no NaN / Infinity (ValueError)."""
    data = text.encode() if isinstance(text, str) else text
    return jiter.from_json(data, allow_inf_nan=False, cache_mode="keys", catch_duplicate_keys=True,
                           float_mode="decimal")


def streamed_list(text: str) -> tuple[dict, StreamedItems] | None:
    """For one JSON object whose `items` is an array and whose `kind` and `apiVersion` (when present) come before it:
    (its other fields, an iterator over the items). None when the text starts differently. The iterator raises
    NotStreamable where the text turns out not to be read here (after items, a key twice, a second document)."""
    head: dict[str, Any] = {}
    pos = _SPACE.match(text).end()
    if text[pos:pos + 1] != "{":
        return None
    pos += 1
    while True:
        try:
            key, pos = _member_key(text, pos)
        except NotStreamable:
            return None
        if key in head:
            return None
        if key == "items":
            if text[pos:pos + 1] != "[":
                return None
            return head, StreamedItems(text, pos + 1, set(head))
        try:
            head[key], pos = _member_value(text, pos)
        except NotStreamable:
            return None
        if text[pos:pos + 1] != ",":
            return None                 # "}": no items
        pos += 1


def _member_key(text: str, pos: int) -> tuple[str, int]:
    """The key of the object member at pos and the position of its value."""
    pos = _SPACE.match(text, pos).end()
    if text[pos:pos + 1] != '"':
        raise NotStreamable
    try:
        key, pos = json.decoder.scanstring(text, pos + 1)
    except ValueError:
        raise NotStreamable from None
    pos = _SPACE.match(text, pos).end()
    if text[pos:pos + 1] != ":":
        raise NotStreamable
    return key, _SPACE.match(text, pos + 1).end()


def _member_value(text: str, pos: int) -> tuple[Any, int]:
    """A small value at pos, decoded as the loader decodes, and the position after it (and its spaces)."""
    try:
        end = _SCAN(text, pos)[1]
        value = decode(text[pos:end])
    except (StopIteration, ValueError, RecursionError):
        raise NotStreamable from None
    return value, _SPACE.match(text, end).end()


class Renamed(str):
    """An item whose text is the adopted template item's with this string in place of its metadata.name."""


class StreamedItems:
    """The items of a streamed List, in order, each decoded on its own.

    adopt(document): the item just read is a template (an object whose replicas differ from it in metadata.name
    only). An item whose text is that item's text with another JSON string where the name was then comes as
    Renamed(name), not decoded: the same characters around the name are the same document around it. Reading it
    is two comparisons of text and the name's."""

    def __init__(self, text: str, pos: int, keys: set[str]):
        self.text = text
        self.pos = _SPACE.match(text, pos).end()       # where the next item starts
        self.closed = text[self.pos:self.pos + 1] == "]"
        if self.closed:
            self.pos += 1
        self.keys = keys                  # the members read before items
        self.last = (0, 0)                # where the item read last starts and ends
        self.template: tuple[str, str] | None = None    # (text before the name, text after it) of the adopted item
        self.finished = False

    def __iter__(self) -> "StreamedItems":
        return self

    def __next__(self) -> Any:
        text, pos = self.text, self.pos
        if self.closed:
            if not self.finished:
                self.finished = True
                self._after_items(pos)
            raise StopIteration
        if text[pos:pos + 1] != "{":
            raise NotStreamable
        renamed = self._renamed_at(pos) if self.template is not None else None
        if renamed is not None:
            return renamed
        item, end, after = _item(text, pos, self.last[1] - self.last[0])
        self._next_at(pos, end, after)
        return item

    def _renamed_at(self, pos: int) -> Renamed | None:
        """The item at pos as Renamed when it is the template's text with another name string; else None."""
        text, (prefix, suffix) = self.text, self.template
        at = pos + len(prefix)
        if not text.startswith(prefix, pos) or text[at:at + 1] != '"':
            return None
        try:
            name, end = json.decoder.scanstring(text, at + 1)
        except ValueError:
            return None
        after = _AFTER_ITEM.match(text, end + len(suffix)) if text.startswith(suffix, end) else None
        if after is None:
            return None
        self._next_at(pos, end + len(suffix), after)
        return Renamed(name)

    def _next_at(self, pos: int, end: int, after: re.Match) -> None:
        """The item at pos ended at end, and `after` is the `,` or `]` that follows it."""
        self.last = (pos, end)
        self.closed = after.group(1) == "]"
        self.pos = _SPACE.match(self.text, after.end()).end()

    def adopt(self, document: dict | None) -> None:
        """The item read last, decoded as `document`, is the template (None: no template from now on). Its name's
        text must occur once in it, and be where metadata.name is read from: the item with another string there
        decodes as the document with that metadata.name and nothing else changed."""
        self.template = None
        if document is None:
            return
        start, end = self.last
        token = json.dumps(document["metadata"]["name"])
        item = self.text[start:end]
        at = item.find(token)
        if at < 0 or item.find(token, at + 1) >= 0:
            return
        prefix, suffix = item[:at], item[at + len(token):]
        probe = "\x00"                  # no valid name: what decodes here is the token's place, not a copy of it
        try:
            placed = decode(prefix + json.dumps(probe) + suffix)
        except ValueError:
            return
        if placed == {**document, "metadata": {**document["metadata"], "name": probe}}:
            self.template = (prefix, suffix)

    def _after_items(self, pos: int) -> None:
        """The object's members after its items, then nothing but spaces."""
        text = self.text
        pos = _SPACE.match(text, pos).end()
        while text[pos:pos + 1] == ",":
            key, pos = _member_key(text, pos + 1)
            if key in self.keys or key in ("items", "kind", "apiVersion"):     # read as the items went: read whole
                raise NotStreamable
            self.keys.add(key)
            pos = _member_value(text, pos)[1]
        if text[pos:pos + 1] != "}" or _SPACE.match(text, pos + 1).end() != len(text):
            raise NotStreamable


def _item(text: str, pos: int, last: int) -> tuple[Any, int, re.Match]:
    """The item starting at pos: (its value, where it ends, the `,` or `]` after it)."""
    end = pos + last                   # first guess: as long as the item before (a List's items are alike)
    if last and text[end - 1:end] == "}":
        after = _AFTER_ITEM.match(text, end)
        if after is not None:
            try:
                return decode(text[pos:end]), end, after
            except ValueError:
                pass
            except RecursionError:
                raise NotStreamable from None
    search = pos + max(last - _SEARCH_SLACK, 1)
    limit = pos + _GROWTH * last + _GROWTH_SLACK
    from_start = search == pos + 1      # the search began at the item's start (a guess that overshot goes back, once)
    while True:
        found = _ITEM_END.search(text, search)
        if found is None or found.start() > limit:
            if from_start:
                raise NotStreamable
            search, from_start = pos + 1, True     # the item is shorter than the guess
            continue
        end = found.start() + 1
        try:
            return decode(text[pos:end]), end, found
        except ValueError as error:
            message = str(error)
        except RecursionError:
            raise NotStreamable from None
        if message.startswith("EOF while parsing"):
            search = end                       # ended inside the item: the next candidate
        elif message.startswith("trailing characters") and not from_start:
            search, from_start = pos + 1, True     # overshot the item
        else:
            raise NotStreamable
