"""The project's own errors. Library code raises these; the CLI prints them without a traceback."""

from __future__ import annotations


class UxbenchError(Exception):
    """Base class: a problem the user can act on. `str(err)` is the complete message."""


class ConfigError(UxbenchError):
    """A bad option, model spec, template name or other configuration."""


class DataError(UxbenchError):
    """Invalid input data. Names the file, line and field when known, and what to do."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.reason = message
        self.source = source
        self.line = line
        self.field = field
        self.hint = hint
        where = []
        if source is not None:
            where.append(str(source))
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        text = (": ".join([", ".join(where), message]) if where else message)
        if hint:
            text += f" ({hint})"
        super().__init__(text)


class ModelError(UxbenchError):
    """A model call failed. `retryable` says whether the runtime may try again."""

    retryable: bool = False
    attempts: int = 1
    """How many attempts were made before this error was final (set by the retry layer)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        if retryable is not None:
            self.retryable = retryable


class RateLimitError(ModelError):
    """429 or an overload answer: back off (honouring Retry-After) and shrink concurrency."""

    retryable = True


class TransientModelError(ModelError):
    """5xx, timeouts, dropped connections, malformed bodies: worth retrying."""

    retryable = True


class ModelTimeoutError(TransientModelError):
    """No answer within the time limit: retried, and taken as a sign of overload (concurrency shrinks)."""


class FatalModelError(ModelError):
    """400, 401, 403, 404 and the like: retrying cannot help."""

    retryable = False


class ContextLengthError(FatalModelError):
    """The request is longer than the model accepts. Retrying as is cannot help; a shorter input can."""


class MissingExtraError(ConfigError):
    """A command needs an extra of pyproject.toml that is not installed (`uxbench.extras.require`)."""


class MissingDependencyError(MissingExtraError):
    """An optional extra's package is needed for what was asked (found missing on import)."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the '{package}' package, which is not installed. "
            f"Install it with: pip install 'uxbench[{extra}]'"
        )
