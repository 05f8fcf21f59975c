"""What a published site may say: nothing of the building machine's file system.

Runs record where their data and models came from (`file /home/me/data/task2.jsonl`, `directory … (2 files)`,
`replay:/home/me/answers.jsonl`, and run ids and judge keys embed a slug of such a spec), and messages name run
directories. Before anything is written into a site, every string of it goes through `Publisher.clean`: the
run directories become their run ids, a model spec whose argument is a path keeps the path's last part (in
run ids and judge keys too), a data description becomes the data's file name, and any absolute path left
(POSIX, `~/…` or `C:\\…`) is cut to its last part. Data are told apart by their
fingerprint, which the site shows beside the name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from uxbench.runs.spec_paths import last_part, public_spec

__all__ = ["Publisher", "data_name", "public_spec", "short_fingerprint", "strip_paths"]

_DATA = re.compile(r"^(file|directory) (.+?)( \(\d+ files?\))?$")
_ABSOLUTE = re.compile(r"(?:(?<=^)|(?<=[\s=(\[{,;'\"`<]))(?:~|[A-Za-z]:\\|/)[^\s'\"`()\[\]{},;<>]*")
_PREFIXED = re.compile(r"(?<![\w/])((?:[A-Za-z][\w.+-]*:)+)((?:~|/(?!/))[^\s'\"`()\[\]{},;<>]*)")
"""A path after a spec's prefixes, inside any text: 'scripted:file:/home/me/rules.json' (never a URL's '//')."""
_FILE_URL = re.compile(r"(?i)\bfile://(/[^\s'\"`()\[\]{},;<>]*)")
FINGERPRINT_CHARS = 12
_last = last_part


def strip_paths(text: str) -> str:
    """Every absolute path in `text` cut to its last part, a path after a spec's prefix too."""
    text = _FILE_URL.sub(lambda m: "file:" + _last(m.group(1)), text)
    text = _PREFIXED.sub(lambda m: m.group(1) + _last(m.group(2)), text)
    return _ABSOLUTE.sub(lambda m: _last(m.group(0)) if len(m.group(0)) > 1 else m.group(0), text)


def data_name(description: str | None) -> str | None:
    """'file /a/task2.jsonl' -> 'task2.jsonl'; 'directory /a/task1 (2 files)' -> 'task1/ (2 files)'."""
    if not description:
        return description
    found = _DATA.match(description)
    if not found:
        return strip_paths(description)
    kind, path, files = found.groups()
    return _last(path) + ("/" + (files or "") if kind == "directory" else "")


def short_fingerprint(fingerprint: Any) -> str | None:
    return str(fingerprint)[:FINGERPRINT_CHARS] if fingerprint else None


def _specs(manifest: dict[str, Any]) -> Iterable[str]:
    """The model specs a run's manifest names: the model under test, judges and strategy classifiers; of a
    simulated-session run also the simulator, the assessor and the satisfaction judges ('satisfaction:SPEC')."""
    for role in ("model", "simulator", "assessor"):
        found = manifest.get(role)
        if isinstance(found, dict) and found.get("spec"):
            yield str(found["spec"])
    for block in ("judges", "strategy_classifiers"):
        found = manifest.get(block)
        for info in (found.values() if isinstance(found, dict) else found if isinstance(found, list) else []):
            if isinstance(info, dict) and info.get("spec"):
                yield str(info["spec"])
            elif isinstance(info, str):
                yield info.split(":", 1)[1] if info.startswith("satisfaction:") else info


class Publisher:
    """Cleans the strings of a site built from `runs` ((directory, manifest) pairs): the directories become the
    run ids, and a spec with a path becomes its public form, in run ids and judge keys too (they embed a slug of
    the spec)."""

    def __init__(self, runs: Iterable[tuple[Path, dict[str, Any]]] = ()) -> None:
        from uxbench.runs.manifest import slug

        runs = list(runs)
        names: dict[str, str] = {}
        for _, manifest in runs:
            for spec in _specs(manifest):
                public = public_spec(spec)
                if public != spec:
                    names[spec] = public
                    for limit in (24, 32, 40):  # the slug lengths of run ids, judge and strategy keys
                        names[slug(spec, limit)] = slug(public, limit)
        specs = sorted(names.items(), key=lambda kv: -len(kv[0]))  # the longest first: a slug's tail is in it
        for path, manifest in runs:
            run_id = str(manifest.get("run_id") or path.name)
            for old, new in specs:
                run_id = run_id.replace(old, new)
            for form in {str(path), str(path.resolve()), str(path.absolute())}:
                if len(form) > 1:
                    names[form] = run_id
        self._names = sorted(names.items(), key=lambda kv: -len(kv[0]))  # the longest first

    def text(self, value: str) -> str:
        for old, new in self._names:
            value = value.replace(old, new)
        if _DATA.match(value):
            return data_name(value) or value
        if not any(c.isspace() for c in value):
            value = public_spec(value)  # a spec alone; in a sentence, strip_paths finds it
        return strip_paths(value)

    def clean(self, value: Any) -> Any:
        """`value` (JSON-like: dicts, lists, strings, numbers) with every string cleaned, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.clean(k) if isinstance(k, str) else k: self.clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.clean(v) for v in value]
        return value
