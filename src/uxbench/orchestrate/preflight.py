"""The checks before a run: every model it will call (the model under test, the judge, a strategy model) is
built and asked whether its calls can work (`ModelAPI.preflight`: API key, server reachable, device present),
before a run directory is created or weights are loaded. Without it, such a mistake showed as every sample
failing one by one after the model loaded, and left an empty run directory behind."""

from __future__ import annotations

from uxbench.errors import ConfigError, FatalModelError

Role = tuple[str, str, dict[str, str]]
"""(the option that named the model, PROVIDER:MODEL, its provider arguments)."""


async def check_models(roles: list[Role]) -> None:
    """Raise one `ConfigError` naming the role and what to do, for the first model whose calls cannot work."""
    from uxbench.models.registry import create_model_api

    for option, spec, args in roles:
        api = create_model_api(spec, args)
        try:
            await api.preflight()
        except FatalModelError as err:
            raise ConfigError(f"{option} {spec}: {err}") from None
        except ConfigError as err:
            raise ConfigError(f"{option} {spec}: {err}") from None
        finally:
            await api.aclose()
