"""The kept copy of botocore's service model (partita/api/validation/model_copy.py).

The shape validator's model is read on every server's first request; a copy
without documentation, kept in the user's cache folder, makes that read
cheaper. These tests pin what makes the copy safe: it drops only prose, a
changed source is never answered from an old copy, and a copy that cannot be
read or written only costs the full read.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from partita.api.validation.model_copy import cache_folder, read, without_prose
from partita.api.validation.shapes import parse_file as _parse

_PROSE_KEYS = ("documentation", "documentationUrl")


def _fields(node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in _PROSE_KEYS}


def _prose_free(node: Any) -> Any:
    """The generic answer: every prose key removed, wherever it is."""
    if isinstance(node, dict):
        return {k: _prose_free(v) for k, v in _fields(node).items()}
    if isinstance(node, list):
        return [_prose_free(v) for v in node]
    return node


def _botocore_source(service: str) -> Path:
    import botocore

    folder = Path(botocore.__file__).parent / "data" / service
    return max(folder.glob("*/service-2.json*"), key=lambda path: path.parent.name)


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of botocore's DynamoDB model, and a private cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    original = _botocore_source("dynamodb")
    own = tmp_path / "model" / original.name
    own.parent.mkdir()
    shutil.copy2(original, own)
    return own


@pytest.mark.parametrize("service", ["dynamodb", "dynamodbstreams"])
def test_the_copy_drops_only_prose(service: str) -> None:
    full = _parse(_botocore_source(service))
    bare = without_prose(full)
    assert bare == _prose_free(full)  # botocore keeps prose only where without_prose looks
    assert b"documentation" not in orjson.dumps(bare)
    assert bare["operations"].keys() == full["operations"].keys()
    assert bare["shapes"].keys() == full["shapes"].keys()


names = st.sampled_from(["documentation", "documentationUrl", "shape", "members", "TableName", "x"])
leaf = st.dictionaries(names, st.text(max_size=3), max_size=4)
shape = st.dictionaries(names, st.text(max_size=3), max_size=3).flatmap(
    lambda fields: st.dictionaries(names, leaf, max_size=3).map(lambda members: {**fields, "members": members}))


@given(operations=st.dictionaries(names, leaf, max_size=3), shapes_=st.dictionaries(names, shape, max_size=3),
       top=st.dictionaries(st.sampled_from(["documentation", "version", "metadata"]), st.text(max_size=3)))
def test_names_are_never_taken_for_prose(operations: dict[str, Any], shapes_: dict[str, Any],
                                          top: dict[str, Any]) -> None:
    """Operations, shapes and members named `documentation` stay; only prose fields go."""
    model = {**top, "operations": operations, "shapes": shapes_}
    bare = without_prose(model)
    assert bare["operations"].keys() == operations.keys()
    assert bare["shapes"].keys() == shapes_.keys()
    assert bare == {
        **_fields(top),
        "operations": {name: _fields(operation) for name, operation in operations.items()},
        "shapes": {name: {**_fields(definition),
                          "members": {member: _fields(field) for member, field in definition["members"].items()}}
                   for name, definition in shapes_.items()},
    }


def test_first_read_keeps_a_copy_that_later_reads_answer_from(source: Path) -> None:
    full = _parse(source)
    assert read(source, "dynamodb", _parse) == full
    copies = list(cache_folder().iterdir())
    assert len(copies) == 1 and copies[0].suffix == ".json"
    assert orjson.loads(copies[0].read_bytes()) == without_prose(full)
    copies[0].write_bytes(b'{"kept": true}')  # what is read now can only come from the copy
    assert read(source, "dynamodb", _parse) == {"kept": True}


def test_a_changed_source_is_read_again_not_answered_from_the_old_copy(source: Path) -> None:
    read(source, "dynamodb", _parse)
    (old,) = cache_folder().iterdir()
    old.write_bytes(b'{"stale": true}')
    stat = source.stat()
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # as an upgrade would
    assert read(source, "dynamodb", _parse) == _parse(source)
    assert len(list(cache_folder().iterdir())) == 2  # the new source has a copy of its own


@pytest.mark.parametrize("damage", [b"", b'{"truncated": ', b"[1, 2]"])
def test_a_damaged_copy_costs_only_the_full_read(source: Path, damage: bytes) -> None:
    read(source, "dynamodb", _parse)
    (copy,) = cache_folder().iterdir()
    copy.write_bytes(damage)
    assert read(source, "dynamodb", _parse) == _parse(source)
    assert orjson.loads(copy.read_bytes()) == without_prose(_parse(source))  # and it is written again


def test_a_cache_folder_that_cannot_be_written_costs_only_the_full_read(
        source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert read(source, "dynamodb", _parse) == _parse(source)
    assert blocker.read_text() == "not a folder"
