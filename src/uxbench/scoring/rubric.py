"""Multi-dimensional rubrics: a judge scores a reply on each dimension, code folds the scores into good / bad.

Bundled (in our own wording, under `prompts/templates/rubrics/`): `mt_bench` (one overall score 1-10), `flask`
(twelve skills 1-5, those that may not apply marked optional), `helpsteer2` (five attributes 0-4; complexity and
verdict-neutral verbosity weigh 0) and `ux_general` (uxbench's failure dimensions, 1-5). A rubric file of one's own
(YAML or JSON) has the same fields (`Rubric`).

**The aggregation rule** (one for every rubric): each scored dimension is rescaled to [0, 1],
(score - low) / (high - low); the reply's score is the weighted mean over the dimensions that were scored
(an optional dimension answered N/A is left out; a weight of 0 keeps a dimension out of the verdict but in the
record); the reply is **good when that score is strictly above the rubric's `threshold`** (default 0.5, the middle of
the scale, so a middling reply is bad, as with Likert: a like is an active preference). A missing required
dimension, or a score outside its scale, leaves the reply unscored (its note says which), never guessed.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from uxbench.data import user_files
from uxbench.errors import ConfigError, DataError

Lang = Literal["zh", "en"]
BUNDLED_RUBRICS: tuple[str, ...] = ("mt_bench", "flask", "helpsteer2", "ux_general")


class Localised(BaseModel):
    """A text in both template languages."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: str
    zh: str

    def get(self, lang: Lang) -> str:
        return self.en if lang == "en" else self.zh


class RubricDimension(BaseModel):
    """One dimension: an integer score from `low` to `high`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    """Identifier the judge answers with (snake_case)."""
    name: Localised
    description: Localised
    """What the dimension asks, with its scale's anchors, in the judge's words."""
    low: int = 1
    high: int = 5
    weight: float = Field(default=1.0, ge=0.0, le=1e6, allow_inf_nan=False)
    """Weight in the verdict, a finite number (relative to the others); 0 = asked and recorded, not part of the
    verdict (a descriptive attribute)."""
    optional: bool = False
    """The judge may answer N/A where the dimension does not apply to the reply."""

    @model_validator(mode="after")
    def _check_scale(self) -> RubricDimension:
        if self.high <= self.low:
            raise ValueError(f"dimension '{self.key}': high ({self.high}) must be above low ({self.low})")
        return self


class Rubric(BaseModel):
    """A rubric: its dimensions and the threshold of its good / bad rule."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    title: Localised
    source: str = ""
    """Where the dimensions come from (a citation, or 'hand-written', or a persona's id and version)."""
    threshold: float = Field(default=0.5, ge=0.0, lt=1.0)
    """A reply is good when its rescaled weighted mean is strictly above this."""
    dimensions: tuple[RubricDimension, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _check_dimensions(self) -> Rubric:
        keys = [d.key for d in self.dimensions]
        duplicated = sorted({k for k in keys if keys.count(k) > 1})
        if duplicated:
            raise ValueError(f"dimension keys must be unique, repeated: {', '.join(duplicated)}")
        if not any(d.weight > 0 for d in self.dimensions):
            raise ValueError("at least one dimension needs a weight above 0 (the verdict is built from them)")
        return self

    def digest(self) -> str:
        """sha256 of the rubric's content (canonical JSON): enters the run identity."""
        return hashlib.sha256(json.dumps(self.model_dump(mode="json"), sort_keys=True,
                                         ensure_ascii=False).encode("utf-8")).hexdigest()


class RubricScore(BaseModel):
    """A reply's scores on a rubric and the verdict they give."""

    scores: dict[str, int | None]
    """Per dimension: the judge's integer, None for N/A."""
    value: float | None
    """The weighted mean of the rescaled scores in [0, 1]; None when no weighted dimension was scored."""
    label: Literal["good", "bad"] | None


def aggregate(rubric: Rubric, scores: dict[str, int | None]) -> RubricScore:
    """Fold per-dimension scores into one value and a verdict (the module's rule). Raises ValueError on a missing
    required dimension or a score outside its scale."""
    total = weight = 0.0
    for dim in rubric.dimensions:
        if dim.key not in scores:
            raise ValueError(f"no score for '{dim.key}'")
        value = scores[dim.key]
        if value is None:
            if not dim.optional:
                raise ValueError(f"'{dim.key}' may not be N/A")
            continue
        if not dim.low <= value <= dim.high:
            raise ValueError(f"'{dim.key}' = {value} is outside {dim.low}-{dim.high}")
        total += dim.weight * (value - dim.low) / (dim.high - dim.low)
        weight += dim.weight
    if weight == 0:
        return RubricScore(scores=scores, value=None, label=None)
    mean = total / weight
    return RubricScore(scores=scores, value=mean, label="good" if mean > rubric.threshold else "bad")


def _parse_rubric(text: str, where: str) -> Rubric:
    raw = user_files.parse_yaml(text, where)  # YAML or JSON (JSON is YAML), with the limits of a user's file
    try:
        return Rubric.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        more = f" ({err.error_count()} problems in all)" if err.error_count() > 1 else ""
        raise DataError(f"{first['msg']}{more}", source=where, field=field,
                        hint="the bundled rubrics in uxbench/scoring/prompts/templates/rubrics/ show the fields"
                        ) from None


@cache
def _bundled(name: str) -> Rubric:
    from uxbench.scoring.prompts.templates_io import read_template_file

    return _parse_rubric(read_template_file(f"rubrics/{name}.yaml").decode("utf-8"), f"bundled rubric '{name}'")


@cache
def _from_file(path: str, mtime_ns: int, size: int) -> Rubric:
    where = f"rubric file {path}"
    return _parse_rubric(user_files.read_text(path, where, limits=user_files.YAML_LIMITS), where)


def load_rubric(name: str) -> Rubric:
    """A bundled rubric by name, or a YAML / JSON rubric file by path."""
    if name in BUNDLED_RUBRICS:
        return _bundled(name)
    path = Path(name).expanduser()
    if path.is_file():
        stat = path.stat()
        return _from_file(str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    import difflib

    close = difflib.get_close_matches(name, BUNDLED_RUBRICS, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    raise ConfigError(f"Unknown rubric '{name}': not a bundled rubric ({', '.join(BUNDLED_RUBRICS)}) and no such "
                      f"file.{hint}")


def render_dimensions(rubric: Rubric, lang: Lang) -> str:
    """The numbered list of dimensions a judge reads."""
    na = {"en": "optional: write N/A if it does not apply", "zh": "可选：不适用时填 N/A"}[lang]
    out = []
    for number, dim in enumerate(rubric.dimensions, start=1):
        extra = f"; {na}" if dim.optional else ""
        sep = "：" if lang == "zh" else ": "
        out.append(f"{number}. {dim.key} ({dim.name.get(lang)}, {dim.low}-{dim.high}{extra}){sep}"
                   f"{dim.description.get(lang).strip()}")
    return "\n".join(out)


def answer_skeleton(rubric: Rubric) -> str:
    """The JSON object the judge is asked to write: `{"key": <low-high>, ...}`."""
    return "{" + ", ".join(f'"{d.key}": <{d.low}-{d.high}{" or N/A" if d.optional else ""}>'
                           for d in rubric.dimensions) + "}"
