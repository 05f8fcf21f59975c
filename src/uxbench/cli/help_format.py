"""How `--help` shows options: a flag (an option that takes no value) gets no `<bool>` type tag, since there is
no value to type. Typer labels every option with its Python type; for a flag that reads as if it wanted one."""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption

_typed = TyperOption.display_type_rich


def _display_type(self: TyperOption, ctx: Any) -> str | None:
    return None if self.is_flag else _typed(self, ctx)


def install() -> None:
    """Hide the type tag of flags in every command's help (idempotent)."""
    TyperOption.display_type_rich = _display_type  # type: ignore[method-assign]
