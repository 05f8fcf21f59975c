"""Provider arguments (`--model-arg KEY=VALUE`): validated into each provider's pydantic model
(`uxbench.models.api.ProviderArgs`), with errors that name the argument and a "did you mean" for an
unknown name. The same function serves every option that configures a model (`--judge-arg` too): the
caller passes its option name so the error says which option to fix."""

from __future__ import annotations

import difflib
import os
import re
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BeforeValidator, ValidationError
from pydantic_core import PydanticUndefined

from uxbench.data import user_files
from uxbench.errors import ConfigError, DataError
from uxbench.models.api import ProviderArgs
from uxbench.redact import REDACTED, remember_args, remember_secret, scrub

A = TypeVar("A", bound=ProviderArgs)

CONCURRENCY_HINT = (
    "concurrency is one setting for the whole run: use --concurrency N (it bounds the parallel calls, "
    "adapts to rate limits and does not change the answers)"
)
# Arguments that moved elsewhere: the error says where, instead of guessing a near name.
_MOVED = {"max_concurrency": CONCURRENCY_HINT, "concurrency": CONCURRENCY_HINT}
_SHOWN_CHARS = 60


def _json_object(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value = user_files.parse_json(value, "the value")
        except DataError as err:
            raise ValueError(f'must be a JSON object, e.g. \'{{"k": "v"}}\' ({err.reason})') from None
    if not isinstance(value, dict):
        raise ValueError(f"must be a JSON object, got {type(value).__name__}")
    return value


def _http_url(value: str) -> str:
    value = value.strip().rstrip("/")
    if not value:
        raise ValueError("is empty (an unset shell variable, such as $GRM_URL?): give the server's address, e.g. "
                         "http://HOST:8000/v1, or leave base_url out for the default")
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_PREFIXES = ("sk-", "sk_", "pk-", "rk-", "aiza", "xox", "ghp_", "gho_", "github_pat_", "hf_", "glpat-", "key-",
                 "bearer ")


def looks_like_key(value: str) -> bool:
    """A value that is probably a credential rather than a name: a known key prefix, or a long run of mixed
    upper case, lower case and digits (variable names are words: OPENAI_API_KEY, MY_GATEWAY_TOKEN)."""
    text = value.strip()
    if text.lower().startswith(_KEY_PREFIXES):
        return True
    classes = sum(bool(re.search(p, text)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    return len(text) >= 20 and classes == 3


def _env_name(value: str) -> str:
    if looks_like_key(value):
        remember_secret(value)  # scrubbed wherever it may still turn up
        raise ValueError("looks like an API key, not the name of an environment variable. A key is never an "
                         "argument: export it (export OPENAI_API_KEY=...) and pass the variable's name, or leave "
                         "api_key_env out for the provider's default")
    if not _ENV_NAME.fullmatch(value):
        raise ValueError("must be the name of an environment variable (letters, digits and _, not starting with a "
                         "digit), e.g. api_key_env=MY_GATEWAY_KEY")
    if value not in os.environ and len(value) >= 12 and all(re.search(p, value) for p in ("[a-z]", "[A-Z]", "[0-9]")):
        remember_secret(value)  # names no variable and reads like a short key: scrubbed wherever it turns up
    return value


def _header_values(value: dict[str, Any]) -> dict[str, Any]:
    for name, item in value.items():
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            kind = "null" if item is None else type(item).__name__.replace("dict", "object")
            raise ValueError(f"the value of header '{name}' is a {kind}: a header value is one text (it would be "
                             f"sent as Python's text for the {kind})")
    return value


EnvVarName = Annotated[str, AfterValidator(_env_name)]
"""The name of an environment variable (`api_key_env`); a key given in its place is refused, never echoed."""
JsonObject = Annotated[dict[str, Any], BeforeValidator(_json_object)]
"""A JSON object given as text (`extra_body='{"top_k": 20}'`)."""
HeaderObject = Annotated[dict[str, Any], BeforeValidator(_json_object), AfterValidator(_header_values)]
"""HTTP headers as a JSON object of texts (a number is sent as written; a list, object, null or boolean is refused)."""
HttpUrl = Annotated[str, AfterValidator(_http_url)]
"""An http(s) URL; a trailing slash is dropped."""


def parse_provider_args(
    model: type[A], args: Mapping[str, Any], *, provider: str, option: str = "--model-arg"
) -> A:
    """`args` validated into `model`; a ConfigError naming `option`, the argument and what to do otherwise.

    Secret values among `args` are remembered for scrubbing first (`uxbench.redact.remember_args`), and no
    error shows the value of an argument whose value could hold one."""
    remember_args(args)
    fields = list(model.model_fields)
    for key in args:
        if key not in model.model_fields:
            raise ConfigError(unknown_arg_message(key, fields, provider=provider, option=option))
    try:
        return model.model_validate(dict(args))
    except ValidationError as err:
        problems = []
        for item in err.errors():
            name = str(item["loc"][0]) if item["loc"] else ""
            message = str(item["msg"]).removeprefix("Value error, ")
            shown = f"{name}={_shown(name, args.get(name))}" if name else "the arguments"
            problems.append(f"{option} {shown}: {message[:1].lower()}{message[1:]}")
        raise ConfigError(f"{'; '.join(problems)} (provider {provider}).") from None


def unknown_arg_message(key: str, known: list[str], *, provider: str, option: str = "--model-arg") -> str:
    if key in _MOVED:
        return f"{option} {key} is not an argument of the {provider} provider: {_MOVED[key]}."
    normal = {k.lower().replace("-", "_"): k for k in known}
    close = [normal[key.lower().replace("-", "_")]] if key.lower().replace("-", "_") in normal else \
        difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    listed = ", ".join(known) if known else "none"
    return (f"Unknown {option} '{key}' for the {provider} provider.{hint} "
            f"Its arguments: {listed} (`uxbench providers` describes them).")


_NEVER_SHOWN = frozenset({"api_key_env"})
"""Arguments whose refused value is never echoed: what is given there by mistake is often the key itself."""


def _shown(name: str, value: Any) -> str:
    if value is None:
        return "''"
    if name in _NEVER_SHOWN:
        return "<not shown>"
    text = str(value)
    if text.lstrip().startswith(("{", "[")):
        return "<JSON>"  # may hold credentials under any name: never echoed
    text = scrub(text)
    if len(text) > _SHOWN_CHARS:
        text = text[:_SHOWN_CHARS] + "..."
    return repr(text) if text != REDACTED else text


def describe_args(model: type[ProviderArgs]) -> list[tuple[str, str, str]]:
    """(name, "type; default", help) of each argument, for `uxbench providers`."""
    rows = []
    for name, info in model.model_fields.items():
        default = info.default
        if default is PydanticUndefined and info.default_factory is not None:
            default = info.default_factory()  # type: ignore[call-arg]
        shown = "" if default in (None, {}, PydanticUndefined) else f"; default {default}"
        rows.append((name, _type_name(info.annotation) + shown, " ".join((info.description or "").split())))
    return rows


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin is Literal:
        return " | ".join(str(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(annotation) if a is not type(None))
    if origin is dict or annotation is dict:
        return "JSON object"
    names = {int: "integer", float: "number", bool: "true | false", str: "text"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))
