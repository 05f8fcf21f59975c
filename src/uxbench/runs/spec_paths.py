"""Model specs that name a local file: what of them may leave this machine.

A spec is `PROVIDER:MODEL`, and MODEL may be a path (`replay:/home/me/answers.jsonl`, `hf:/models/qwen`) or hold
one after a further prefix (`scripted:file:/home/me/rules.json`). Run ids and published sites name such a model
by the path's last part (`replay:answers.jsonl`, `scripted:file:rules.json`), so neither carries where the file
lives. A URL (`http://host:8000/v1`) and a hub id (`Qwen/Qwen2.5-0.5B`) are not paths and are kept.
"""

from __future__ import annotations

import re
from pathlib import Path, PureWindowsPath

_SPEC = re.compile(r"^([A-Za-z][\w.+-]*):(.+)$", re.S)
_WINDOWS = re.compile(r"^[A-Za-z]:\\")
_FILE_URL = re.compile(r"^file://", re.I)


def last_part(path: str) -> str:
    """The last part of a path ('/a/b/c.jsonl' -> 'c.jsonl'; '/a/b/' -> 'b'; '/' stays)."""
    text = path.rstrip("/\\")
    if not text:
        return path
    name = PureWindowsPath(text).name if "\\" in text else text.rsplit("/", 1)[-1]
    return name or text


def looks_like_path(value: str) -> bool:
    """An absolute or explicitly relative path, or a relative one that exists here (an 'org/model' hub id
    does not)."""
    if value.startswith("//"):
        return False  # the rest of a URL ('http:' + '//host/v1')
    if value.startswith(("/", "~", "./", "../", ".\\", "..\\")) or _WINDOWS.match(value):
        return True
    if "/" in value or "\\" in value:
        try:
            return Path(value).expanduser().exists()
        except OSError:
            return False
    return False


def public_spec(spec: str) -> str:
    """A spec with any path in it cut to the path's last part: 'replay:/home/me/answers.jsonl' ->
    'replay:answers.jsonl', 'scripted:file:/home/me/rules.json' -> 'scripted:file:rules.json',
    'x:file:///home/me/a.json' -> 'x:file:a.json'. Anything else is returned unchanged."""
    found = _SPEC.match(spec)
    if not found:
        return spec
    prefix, rest = found.groups()
    if _FILE_URL.match(rest):
        return f"{prefix}:file:{last_part(rest[len('file://'):])}"
    if looks_like_path(rest):
        return f"{prefix}:{last_part(rest)}"
    if _SPEC.match(rest) and not rest.split(":", 1)[1].startswith("//"):
        return f"{prefix}:{public_spec(rest)}"  # a further prefix: 'scripted:' + 'file:/home/me/rules.json'
    return spec
