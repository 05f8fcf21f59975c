"""The checks before a run: every model it will call (the model under test, the judge, a strategy model) is
built and asked whether its calls can work (`ModelAPI.preflight`: API key, server reachable, device present),
before a run directory is created or weights are loaded. Without it, such a mistake showed as every sample
failing one by one after the model loaded, and left an empty run directory behind."""

from __future__ import annotations

import re

from uxbench.errors import ConfigError, FatalModelError

Role = tuple[str, str, dict[str, str]]
"""(the option that named the model, PROVIDER:MODEL, its provider arguments)."""

ARG_OPTIONS = {"--model": ("-M", "--model-arg"), "--judge": ("-J", "--judge-arg"),
               "--strategy-model": ("--strategy-arg", "--strategy-arg"),
               "--deid-model": ("--deid-model-arg", "--deid-model-arg"), "--simulator": ("-S", "--simulator-arg"),
               "--assessor": ("--assessor-arg", "--assessor-arg"),
               "--reference": ("--reference-arg", "--reference-arg"), "--against": ("--against-arg", "--against-arg")}
"""The option that takes each role's provider arguments (short form, long form)."""
_SHORT_M = re.compile(r"(?<![\w-])-M(?= )")


def for_role(text: str, option: str) -> str:
    """A provider's message names its arguments as `--model` takes them (`-M base_url=...`); for another role,
    the option that role takes (`-J base_url=...` for a judge)."""
    short, long = ARG_OPTIONS.get(option, ARG_OPTIONS["--model"])
    return _SHORT_M.sub(short, text).replace("--model-arg", long)


async def check_models(roles: list[Role]) -> None:
    """Raise one `ConfigError` naming the role and what to do, for the first model whose calls cannot work."""
    from uxbench.models.registry import create_model_api

    for option, spec, args in roles:
        api = create_model_api(spec, args)
        try:
            await api.preflight()
        except (FatalModelError, ConfigError) as err:
            raise ConfigError(f"{option} {spec}: {for_role(str(err), option)}") from None
        finally:
            await api.aclose()
