"""Chinese labels in plots: drawn in the installed CJK font (named in the figure's text properties, and the file
matplotlib resolves it to is that font), without "Glyph missing" warnings; without a CJK font, one warning that
says how to install one. CI installs fonts-noto-cjk, so the first test runs there."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("plot")

from uxbench.report import plot_fonts  # noqa: E402
from uxbench.report.plot_data import BarChart, Series  # noqa: E402
from uxbench.report.plots import figure, render  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _chart() -> BarChart:
    return BarChart(title="按场景的 Avg-Acc", ylabel="Avg-Acc %", xlabel="", categories=["工作效率", "信息与知识查询",
                                                                                          "情感支持"],
                    series=[Series("模型甲", [50.0, 60.0, 70.0], [40.0, 50.0, 60.0], [60.0, 70.0, 80.0], [10, 20, 30])])


def test_chinese_labels_use_the_installed_cjk_font() -> None:
    from matplotlib import font_manager

    family = plot_fonts.cjk_family()
    if family is None:
        pytest.skip("no CJK font installed here (CI installs fonts-noto-cjk)")
    fig = figure(_chart())
    ax = fig.axes[0]
    assert "按场景" in fig.get_suptitle()
    labels = [*fig.texts, *ax.get_xticklabels()]
    assert all(family in t.get_fontfamily() for t in labels)
    path = font_manager.findfont(font_manager.FontProperties(family=family), fallback_to_default=False)
    assert re.search(r"cjk|wqy|sourcehan|noto", Path(path).name, re.IGNORECASE), path
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = render(_chart(), "png")
        svg = render(_chart(), "svg").decode()
    assert png.startswith(b"\x89PNG")
    assert not [w for w in caught if "missing from font" in str(w.message)], [str(w.message) for w in caught]
    assert f"'{family}'" in svg  # SVG keeps its text as text, naming the font for the browser


def test_without_a_cjk_font_one_warning_says_how_to_install_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plot_fonts, "cjk_family", lambda: None)
    monkeypatch.setattr(plot_fonts, "_warned", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        render(_chart(), "png")
        render(_chart(), "png")
    messages = [str(w.message) for w in caught]
    assert sum("fonts-noto-cjk" in m for m in messages) == 1, messages
    assert not [m for m in messages if "missing from font" in m], messages
    with warnings.catch_warnings(record=True) as latin:
        warnings.simplefilter("always")
        monkeypatch.setattr(plot_fonts, "_warned", False)
        render(BarChart(title="Avg-Acc", ylabel="%", xlabel="", categories=["a"],
                        series=[Series("m", [1.0], [None], [None], [1])]), "png")
    assert not [w for w in latin if issubclass(w.category, plot_fonts.MissingFontWarning)]


def test_ci_installs_a_cjk_font() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install = [line for line in ci.splitlines() if "apt-get install" in line]
    assert install and all(re.search(r"fonts-noto-cjk|fonts-wqy-microhei", line) for line in install)
