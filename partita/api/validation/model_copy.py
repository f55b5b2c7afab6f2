"""A copy of botocore's service model without its documentation, kept between runs.

Why: every server process reads botocore's DynamoDB model on its first
request, for the shape validator. The file is 94 KB gzipped and 556 KB of
JSON, and 357 KB of that JSON is documentation the validator never reads.
Decompressing and parsing it costs 3.5-4.5 ms, about 3 % of a server's whole
start. The same model without documentation is 113 KB and parses in about
1 ms. So the first run writes that copy to the user's cache folder
(`$XDG_CACHE_HOME/partita`, else `~/.cache/partita`), and later runs read it.

The copy is named after the source file's identity (its path, size and
modification time) and this module's format. An upgraded botocore therefore
means a new file, which is read in full once and gets a copy of its own (an
older one stays until the folder is cleared; each is about 113 KB). A copy
that cannot be read or written (a read-only home, a full disk, a damaged
file) costs that run the full read and nothing else: the validator never
depends on the cache. A copy that parses as a JSON object is trusted: this
module only ever writes one whole (a temporary file renamed over it). The
folder is the user's own, like every cache of a user's tools.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from pathlib import Path
from threading import get_ident
from typing import Any

import orjson

#: Keys whose values are prose for people. botocore's models hold them at four places: the
#: model, each operation, each shape and each member; prose anywhere else would simply stay.
_PROSE = ("documentation", "documentationUrl")
#: In every copy's name: a Partita that keeps other parts of the model changes it, so that it
#: never reads a copy written by another.
_FORMAT = 1


def _bare(node: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in node.items() if key not in _PROSE}


def without_prose(model: dict[str, Any]) -> dict[str, Any]:
    """`model` without its documentation: nothing the validator reads is dropped.

    Walks only the four places prose sits (about 2 ms; a generic walk of
    every value took 5), and never touches a name, even a shape or member
    named like a prose key.
    """
    bare = _bare(model)
    if isinstance(model.get("operations"), dict):
        bare["operations"] = {name: _bare(operation) for name, operation in model["operations"].items()}
    if isinstance(model.get("shapes"), dict):
        shapes: dict[str, Any] = {}
        for name, definition in model["shapes"].items():
            shape = shapes[name] = _bare(definition)
            members = shape.get("members")
            if isinstance(members, dict):
                shape["members"] = {member: _bare(field) for member, field in members.items()}
        bare["shapes"] = shapes
    return bare


def cache_folder() -> Path:
    """Where copies are kept: the XDG cache folder's `partita`, as other tools of a user keep theirs."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "partita"


def _copy_path(source: Path, service: str) -> Path | None:
    try:
        stat = source.stat()
    except OSError:
        return None
    identity = zlib.crc32(os.fsencode(source.resolve()))
    return cache_folder() / f"model{_FORMAT}-{service}-{identity:08x}-{stat.st_size}-{stat.st_mtime_ns}.json"


def read(source: Path, service: str, parse: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """The model in `source` (parsed by `parse`), from the kept copy when there is one.

    Without a copy, the model is parsed in full and, when the cache folder
    can be written, a copy is kept for the next run; the caller gets the
    full model then (the validator reads the same parts of both). Stripping
    costs about 2 ms, so a run that cannot keep the copy does not strip.
    """
    copy = _copy_path(source, service)
    if copy is not None:
        try:
            kept = orjson.loads(copy.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            pass
        else:
            if isinstance(kept, dict):
                return kept
    model = parse(source)
    if copy is not None:
        _keep(copy, model)
    return model


def _keep(copy: Path, model: dict[str, Any]) -> None:
    """Write the copy whole or not at all: a temporary file renamed over it, so a reader never sees half."""
    folder = copy.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    if not os.access(folder, os.W_OK):
        return
    temporary = copy.with_name(f"{copy.name}.{os.getpid()}-{get_ident()}.tmp")  # one per writer
    try:
        temporary.write_bytes(orjson.dumps(without_prose(model)))
        os.replace(temporary, copy)
    except OSError:
        try:
            temporary.unlink()
        except OSError:
            pass
