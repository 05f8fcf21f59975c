"""What `--system-prompt VALUE` means: `none`, a preset name, a file, or literal text.

A single word that is neither a preset nor a file is almost always a typo of a preset (`helpfull`): sent as the
system prompt it would silently run another ablation than the one asked. So it is an error with a "did you
mean", and literal text is either several words or marked `text:...`.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from uxbench.errors import ConfigError

LITERAL_PREFIX = "text:"
NONE_WORDS = ("", "none")


def resolve_system_prompt(value: str | None, presets: tuple[str, ...]) -> str | None:
    """The `system_prompt` task option for `--system-prompt value`: None, a preset name, or the text to send."""
    if value is None or value.strip().lower() in NONE_WORDS:
        return None
    if value.startswith(LITERAL_PREFIX):
        text = value[len(LITERAL_PREFIX):]
        if not text.strip():
            raise ConfigError("--system-prompt text: is empty; give the text after it, or --system-prompt none.")
        return text
    if value in presets:
        return value
    path = Path(value).expanduser()
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--system-prompt {value}: cannot read the file ({exc}).") from None
        if not text.strip():
            raise ConfigError(f"--system-prompt {value}: the file is empty.")
        return text
    choices = ", ".join((*presets, "none"))
    if path.suffix.lower() in (".txt", ".md", ".jinja") or "/" in value or "\\" in value:
        raise ConfigError(f"--system-prompt {value}: no such file. Presets: {choices}; literal text: "
                          f"{LITERAL_PREFIX}YOUR TEXT.")
    if len(value.split()) == 1:
        close = difflib.get_close_matches(value.lower(), (*presets, "none"), n=1, cutoff=0.6)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise ConfigError(f"--system-prompt {value!r} is neither a preset ({choices}) nor a file.{hint} To send "
                          f"it as the system prompt itself, write --system-prompt '{LITERAL_PREFIX}{value}'.")
    return value
