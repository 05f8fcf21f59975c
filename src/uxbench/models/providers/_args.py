"""Parsing of `--model-arg key=value` strings, with errors that name the argument."""

from __future__ import annotations

from typing import Any

import orjson

from uxbench.errors import ConfigError


def number_arg(args: dict[str, str], name: str, default: float, *, positive: bool = True) -> float:
    raw = args.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"--model-arg {name}={raw!r} is not a number") from None
    if positive and value <= 0:
        raise ConfigError(f"--model-arg {name} must be positive, got {raw}")
    if not positive and value < 0:
        raise ConfigError(f"--model-arg {name} must not be negative, got {raw}")
    return value


def int_arg(args: dict[str, str], name: str, default: int, *, positive: bool = True) -> int:
    value = number_arg(args, name, float(default), positive=positive)
    if value != int(value):
        raise ConfigError(f"--model-arg {name} must be a whole number, got {args.get(name)}")
    return int(value)


def bool_arg(args: dict[str, str], name: str, default: bool) -> bool:
    raw = args.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"--model-arg {name}={raw!r} must be true or false")


def json_object_arg(args: dict[str, str], name: str) -> dict[str, Any]:
    raw = args.get(name)
    if not raw:
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise ConfigError(
            f'--model-arg {name} must be a JSON object, e.g. {name}=\'{{"k": "v"}}\': {err}'
        ) from None
    if not isinstance(value, dict):
        raise ConfigError(f"--model-arg {name} must be a JSON object, got {type(value).__name__}")
    return value
