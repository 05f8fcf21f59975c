"""Whether an `hf:` hub model can be had before anything loads: in the local Hugging Face cache, or fetchable
(`-M allow_download=true`: one request to the hub, so that a machine without a network hears so at once rather
than after the hub client's retries of every file)."""

from __future__ import annotations

from uxbench.errors import ConfigError


def in_hub_cache(repo: str) -> bool | None:
    """Whether the hub model `repo` is in the local Hugging Face cache (None: cannot tell, e.g. a malformed id)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None  # transformers brings it; without it the load itself says what is missing
    try:
        return isinstance(try_to_load_from_cache(repo, "config.json"), str)
    except Exception:  # a malformed repo id: the load's own error names it
        return None


def check_hub_cache(repo: str) -> None:
    """A ConfigError unless the hub model `repo` is in the local Hugging Face cache (loads are offline)."""
    if in_hub_cache(repo) is False:
        raise ConfigError(f"hf:{repo} is not in the Hugging Face cache of this machine, and downloads are off: "
                          f"download it first (`huggingface-cli download {repo}`) or pass -M allow_download=true.")


HUB_CHECK_TIMEOUT_S = 10.0


def check_hub_reachable(repo: str, *, offline: bool = False) -> None:
    """With downloads asked for (`-M allow_download=true`) and `repo` not cached: one request to the hub, so that a
    machine without a network hears so at once, not after the hub client's retries of every file (minutes).
    `offline`: $HF_HUB_OFFLINE is set, which turns every download off."""
    import urllib.error
    import urllib.request

    if in_hub_cache(repo) is not False:
        return
    try:
        from huggingface_hub import constants

        endpoint = str(constants.ENDPOINT).rstrip("/")
    except ImportError:
        return
    if offline:
        raise ConfigError(f"-M allow_download=true: hf:{repo} is not in the Hugging Face cache, and $HF_HUB_OFFLINE "
                          "turns downloads off: unset it, or download the model first "
                          f"(`huggingface-cli download {repo}`).")
    try:
        urllib.request.urlopen(f"{endpoint}/api/models/{repo}", timeout=HUB_CHECK_TIMEOUT_S).close()
    except urllib.error.HTTPError:
        return  # the hub answered (a private or gated model, a typo): the load's own error says which
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise ConfigError(f"-M allow_download=true: hf:{repo} is not in the Hugging Face cache, and {endpoint} cannot "
                          f"be reached ({reason}): this machine has no network to the hub. Download the model where "
                          f"there is one (`huggingface-cli download {repo}`, then copy ~/.cache/huggingface), or "
                          "give hf: a local directory.") from None
