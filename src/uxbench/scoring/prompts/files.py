"""Prompt template files shipped inside the package: reading (cached), hashing, filling."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from string import Template

from uxbench.errors import ConfigError


class PackageTemplates:
    """The files under `<package>/templates/`, addressed by relative names such as `en/system.txt`."""

    def __init__(self, package: str, what: str) -> None:
        self.package = package
        self.what = what
        """What these templates are, for error messages ("Judge", "Recovery", ...)."""

    def read(self, name: str) -> bytes:
        return _read(self.package, name, self.what)

    def template(self, name: str) -> Template:
        return Template(self.read(name).decode("utf-8"))

    def text(self, name: str, values: Mapping[str, str] | None = None) -> str:
        """A template filled with `values` (every placeholder must have one), stripped."""
        return fill(self.template(name), values or {}, f"{self.what} template '{name}'").strip()

    def hashes(self, names: Iterable[str]) -> dict[str, str]:
        """sha256 (hex) of each file, by name."""
        return {name: hashlib.sha256(self.read(name)).hexdigest() for name in names}


@cache
def _read(package: str, name: str, what: str) -> bytes:
    node = resources.files(package).joinpath("templates")
    for piece in name.split("/"):
        node = node.joinpath(piece)
    try:
        return node.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise ConfigError(f"{what} template '{name}' is missing from the installed package") from None


def fill(template: Template, values: Mapping[str, str], what: str) -> str:
    """Substitute every placeholder; a placeholder without a value is a broken template."""
    try:
        return template.substitute(values)
    except (KeyError, ValueError) as err:
        raise ConfigError(f"{what} has a placeholder with no value or a stray '$': {err}") from None
