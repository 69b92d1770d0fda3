"""Tuning presets: the algorithm constants (BM25, RRF, HNSW, top-k, thresholds, token caps, churn limits) as typed,
versioned JSON files, one per profile, beside the operator's environment variables.

An operator sets where things run (ports, URLs, folders, keys) with `FLUX_` variables; how Flux ranks, chunks and
gates comes from the profile `FLUX_TUNING_PRESET` names (`default`: the values in setting_groups.py; a bundled
profile under `presets/`; or a path to a .json file). A preset holds only tuning constants, each checked against its
setting's type and bounds; its version is raised whenever a value changes, and every scorecard run records the
preset, its version and a digest of the values in effect (evals/report.py). A `FLUX_<KEY>` variable still
overrides one constant for an experiment, and is recorded in the digest like any other value.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from dagster_project.core.setting_groups import GROUP_OF, GROUPS

PRESETS_DIR = Path(__file__).resolve().parent / "presets"
DEFAULT_PRESET = "default"

# The settings a preset may set: how Flux computes, never where it runs or with which credentials.
TUNING_KEYS: frozenset[str] = frozenset(
    {
        # index
        "chunk_min_chars",
        "chunk_max_chars",
        "hnsw_m",
        "hnsw_ef_construction",
        "hnsw_ef_search",
        "embedding_batch_size",
        # retrieval
        "dense_top_k",
        "bm25_top_k",
        "rerank_keep",
        "graph_top_k",
        "bm25_k1",
        "bm25_b",
        "rrf_k",
        "rrf_cosine_weight",
        "judge_max_attempts",
        "judge_min_confidence",
        "grounding_min_coverage",
        "grounding_broaden_factor",
        "context_budget_chars",
        "semantic_cache_threshold",
        # the LLM's sampling and token caps
        "llm_temperature",
        "llm_max_tokens_screen",
        "llm_max_tokens_plan",
        "llm_max_tokens_rewrite",
        "llm_max_tokens_judge",
        "llm_max_tokens_answer",
        # gates
        "eval_tolerance",
        "max_quarantine_rate",
        "churn_max_pathways_lost",
        "churn_max_members_lost",
        "churn_max_renamed",
        "churn_max_genes_lost",
        "churn_max_equivalences_lost",
        "churn_max_associations_lost",
        "churn_max_diseases_lost",
    }
)


class TuningPresetError(ValueError):
    """A preset that is missing, malformed, or sets what is not a tuning constant."""


class TuningPreset(BaseModel):
    """One profile: its name, its version (raised on every change of a value) and the constants it sets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: int = Field(ge=1)
    description: str
    values: dict[str, Any]

    @field_validator("values")
    @classmethod
    def _typed_tuning_constants(cls, values: dict[str, Any]) -> dict[str, Any]:
        not_tuning = sorted(set(values) - TUNING_KEYS)
        if not_tuning:
            raise ValueError(f"not tuning constants (set these as FLUX_ environment variables): {not_tuning}")
        checked: dict[str, Any] = {}
        for name, value in values.items():
            info = GROUPS[GROUP_OF[name]].model_fields[name]
            field_type: Any = Annotated[info.annotation, info]  # the setting's type with its bounds
            try:
                checked[name] = TypeAdapter(field_type).validate_python(value)
            except ValidationError as exc:
                raise ValueError(f"{name}={value!r}: {exc.errors()[0]['msg']}") from None
        return checked


def bundled_presets() -> list[str]:
    return [DEFAULT_PRESET, *sorted(path.stem for path in PRESETS_DIR.glob("*.json"))]


def load_preset(name_or_path: str) -> TuningPreset:
    """The preset named (bundled) or at a path ending in .json; `default` is the code's own values."""
    if name_or_path == DEFAULT_PRESET:
        return TuningPreset(name=DEFAULT_PRESET, version=1, description="the defaults in setting_groups.py", values={})
    path = Path(name_or_path) if name_or_path.endswith(".json") else PRESETS_DIR / f"{name_or_path}.json"
    if not path.is_file():
        raise TuningPresetError(
            f"no tuning preset {name_or_path!r}: bundled ones are {', '.join(bundled_presets())}, or give a path "
            "to a .json file"
        )
    try:
        return TuningPreset.model_validate_json(path.read_text())
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise TuningPresetError(f"tuning preset {path}: {where}: {error['msg']}") from None


def tuning_values(settings: Any) -> dict[str, Any]:
    """The tuning constants in effect, by flat name."""
    return {name: getattr(getattr(settings, GROUP_OF[name]), name) for name in sorted(TUNING_KEYS)}


def tuning_record(settings: Any) -> dict[str, str]:
    """What a scorecard run records of its tuning: the preset, its version, and a digest of every value in effect
    (so an environment override shows as a digest that differs from the preset's)."""
    preset = load_preset(settings.tuning_preset)
    values = json.dumps(tuning_values(settings), sort_keys=True, default=str)
    return {
        "tuning_preset": preset.name,
        "tuning_preset_version": str(preset.version),
        "tuning_digest": hashlib.sha256(values.encode()).hexdigest()[:16],
    }
