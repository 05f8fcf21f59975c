"""Fonts for the plots: Latin text in DejaVu Sans (matplotlib's own), Chinese, Japanese and Korean text in an
installed CJK font, found once per process.

matplotlib's font list is cached on first use, so a font installed after that (`apt-get install fonts-noto-cjk`)
is not in it: when no known CJK family is listed, the system's font files with a known CJK name are added.
Without any, a chart with CJK text is still drawn (its CJK characters as boxes) and one warning per process
says how to install a font, instead of one "Glyph missing" warning per character.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

CJK_FAMILIES = ("Noto Sans CJK SC", "Source Han Sans SC", "Source Han Sans CN", "Noto Sans SC", "WenQuanYi Micro Hei",
                "WenQuanYi Zen Hei", "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC", "SimHei",
                "Noto Sans CJK JP", "Noto Sans CJK TC", "Droid Sans Fallback", "AR PL UMing CN")
"""In order of preference: simplified-Chinese forms first (the project's data is mostly Chinese)."""
_CJK_FILE = re.compile(r"notosanscjk|notoserifcjk|sourcehansans|notosanssc|wqy|wenquanyi|msyh|pingfang|hiragino|"
                       r"simhei|droidsansfallback|uming|ukai", re.IGNORECASE)
_CJK_TEXT = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
BASE_FAMILY = "DejaVu Sans"
INSTALL_HINT = ("no CJK font is installed, so Chinese text in plots shows as boxes. Install one and draw again: "
                "Debian/Ubuntu `apt-get install fonts-noto-cjk` (or fonts-wqy-microhei), Fedora "
                "`dnf install google-noto-sans-cjk-fonts`, macOS and Windows have one already.")


class MissingFontWarning(UserWarning):
    """A chart has CJK text and no CJK font is installed (said once per process)."""


def _listed(names: set[str]) -> str | None:
    return next((family for family in CJK_FAMILIES if family in names), None)


@lru_cache(maxsize=1)
def cjk_family() -> str | None:
    """The installed CJK font family plots use, or None."""
    from matplotlib import font_manager

    found = _listed({f.name for f in font_manager.fontManager.ttflist})
    if found:
        return found
    for path in font_manager.findSystemFonts():
        if _CJK_FILE.search(Path(path).name):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # an unreadable or unsupported file: the next one
                continue
    return _listed({f.name for f in font_manager.fontManager.ttflist})


def has_cjk(texts: Iterable[Any]) -> bool:
    return any(isinstance(t, str) and _CJK_TEXT.search(t) for t in texts)


_warned = False


@contextmanager
def plot_fonts(texts: Iterable[Any] = ()) -> Iterator[str | None]:
    """Within the block, new figures use DejaVu Sans with the CJK family as fallback (per glyph). `texts`: the
    chart's strings, to warn once when they need a CJK font that is not there. Yields the CJK family."""
    import matplotlib

    global _warned
    family = cjk_family()
    families = [BASE_FAMILY] + ([family] if family else [])
    with matplotlib.rc_context({"font.family": families}), warnings.catch_warnings():
        if family is None:
            if not _warned and has_cjk(texts):
                _warned = True
                warnings.warn(INSTALL_HINT, MissingFontWarning, stacklevel=3)
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font", category=UserWarning)
        yield family
