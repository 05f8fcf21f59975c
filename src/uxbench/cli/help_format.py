"""How `--help` shows options and arguments, for every command (the conventions of docs/CONTRIBUTING.md):

- a value is shown by what to write, never by a Python type: `TEXT`, `N`, `NUMBER`, `PATH`, `KEY=VALUE` for the
  provider arguments (`-M`, `-J`, ...), `a|b|c` for a fixed choice, and a range in words (`N (at least 1)`);
  typer's own labels (`<str>`, `<list[str]>`, `<int range> [x>=1]`) read as code;
- a flag (an option that takes no value) shows no value at all;
- a default given in words (`show_default="the provider's"`) is shown as `[default: the provider's]`, not in
  parentheses, and said there only (the option's help text does not repeat it);
- an argument is written in capitals in the usage line and its row (`uxbench report [OPTIONS] RUN_DIRS...`),
  as click does, instead of typer's `{run_dirs}...`.
"""

from __future__ import annotations

from typing import Any, get_args

from typer.core import TyperArgument, TyperOption, _get_default_string

_typed_default = _get_default_string
KEY_VALUE = "KEY=VALUE"


def value_label(param: TyperOption) -> str:
    """What the user writes for this option's value, in words a user reads (no Python types)."""
    desc = param.type_descriptor
    if desc.is_choice:
        return "|".join(str(getattr(c, "value", c)) for c in desc.choices or ())
    if desc.is_path:
        return "PATH"
    if desc.is_list and (param.name or "").endswith("_arg"):
        return KEY_VALUE
    element = get_args(desc.annotation)[0] if desc.is_list else desc.annotation
    if element is int:
        return "N" + _range_words(param)
    if element is float:
        return "NUMBER" + _range_words(param)
    return "TEXT"


def _range_words(param: TyperOption) -> str:
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is not None and high is not None:
        return f" ({low} to {high})"
    if low is not None:
        return f" (at least {low})"
    if high is not None:
        return f" (at most {high})"
    return ""


def _option_type(self: TyperOption, ctx: Any) -> str | None:
    if self.is_flag:
        return None
    return self.metavar or value_label(self)


def _no_range_tag(self: TyperOption) -> str | None:
    return None  # the range is in the value label, in words


def _argument_type(self: TyperArgument, ctx: Any) -> str | None:
    return None  # the argument's name (in capitals) already says what to give


def _argument_name(self: TyperArgument) -> str:
    return self.metavar if self.metavar is not None else (self.name or "").upper()


def _argument_usage(self: TyperArgument) -> str:
    name = _argument_name(self)
    if self.nargs != 1:
        name += "..."
    return name if self.required else f"[{name}]"


def _default_string(obj: Any, *, ctx: Any, show_default_is_str: bool, default_value: Any) -> str:
    if show_default_is_str:
        return str(obj.show_default)
    return _typed_default(obj, ctx=ctx, show_default_is_str=False, default_value=default_value)


def _option_default(self: Any, *, ctx: Any, show_default_is_str: bool, default_value: Any) -> str:
    return _default_string(self, ctx=ctx, show_default_is_str=show_default_is_str, default_value=default_value)


def install() -> None:
    """Apply the conventions above to every command's help (idempotent)."""
    TyperOption.display_type_rich = _option_type  # type: ignore[method-assign]
    TyperOption._get_number_range_help_str = _no_range_tag  # type: ignore[method-assign]
    TyperOption._get_default_string = _option_default  # type: ignore[method-assign]
    TyperArgument._get_default_string = _option_default  # type: ignore[method-assign]
    TyperArgument.display_type_rich = _argument_type  # type: ignore[method-assign,assignment]
    TyperArgument.display_name_raw = property(_argument_name)  # type: ignore[assignment,method-assign]
    TyperArgument._usage_display_name = _argument_usage  # type: ignore[method-assign]
