"""The CLI's side of answering: one session (pipeline, answer store, MLflow logger) per command, and rendering an
answer for people: the answer text with numbered citations, then the citation list."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from dagster_project.core.settings import FluxConfigError, FluxSettings
from retrieval.conversation import UnknownConversation, ask_in_conversation
from retrieval.model.answer import FinalAnswer
from retrieval.model.types import Mode
from retrieval.pipeline import Pipeline
from retrieval.question.guardrails import install_log_redaction
from serving.answer_store import AnswerStore
from serving.export import markdown, numbered
from serving.tracking import QueryLogger


def print_plan(console: Console, answer: FinalAnswer) -> None:
    """The plan the question was read as, and how: `flux ask --explain`."""
    plan = answer.plan
    if plan is None:
        console.print("[bold]Plan:[/bold] none (refused, or answered from the cache)")
        return
    console.print(f"[bold]Plan:[/bold] {escape(plan.explain())}", soft_wrap=True)
    console.print(f"  why: {escape(plan.reason)}", soft_wrap=True)
    console.print(escape(plan.model_dump_json(indent=2, exclude_defaults=True)), soft_wrap=True)


def print_answer(console: Console, answer: FinalAnswer) -> None:
    text, numbers = numbered(answer)
    console.print(f"[bold]Q:[/bold] {escape(answer.question)}")
    console.print(f"[bold]A:[/bold] {escape(text)}", soft_wrap=True)
    if numbers:
        console.print("\n[bold]Citations[/bold]")
        for citation in answer.citations:
            title = f" — {citation.title}" if citation.title else ""
            console.print(
                f"  [{numbers[citation.id]}] {escape(citation.id)} ({citation.kind}, "
                f"{escape(citation.source)}){escape(title)}",
                soft_wrap=True,
            )
    cached = f", cached: {answer.cached}" if answer.cached else ""
    console.print(
        f"\nconfidence {answer.confidence:.2f} · retrieval {answer.retrieval_quality} · mode {answer.mode}"
        f" · route {answer.route} · re-retrievals {answer.attempts} · reranker {answer.reranker}"
        f" · provider {answer.provider}{cached} · {answer.timings_ms.get('total', 0):.0f} ms"
    )
    console.print(f"index {answer.index_version} (run {answer.dagster_run_id}) · pipeline {answer.pipeline_version}")
    for warning in answer.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)


class Session:
    """What `flux ask` and `flux chat` hold for their lifetime."""

    def __init__(self, settings: FluxSettings, pipeline: Pipeline, store: AnswerStore, status: Console) -> None:
        self.settings, self.pipeline, self.store, self.status = settings, pipeline, store, status
        self.tracker = QueryLogger(settings)

    @classmethod
    def open(cls, settings: FluxSettings, status: Console) -> Session:
        from dagster_project.core.stores import engine_for
        from dagster_project.stack.checks import check_postgres

        install_log_redaction()
        check_postgres(settings)  # Neo4j may be down: answers then come from text evidence, with a warning
        with status.status("loading models and connecting…"):
            pipeline = Pipeline.from_settings(settings)
        return cls(
            settings,
            pipeline,
            AnswerStore(
                engine_for(settings.resolved_serving_database_url), settings.serving.conversation_retention_days
            ),
            status,
        )

    def ask(
        self,
        question: str,
        mode: Mode | None,
        conversation: str | None,
        output: str,
        out: Console,
        explain: bool = False,
    ) -> str:
        """Answer, store and print one question; returns the conversation id for the next."""
        with self.status.status("answering…") as progress:
            try:
                answer = ask_in_conversation(
                    self.pipeline,
                    self.store,
                    question,
                    mode,
                    None,
                    conversation,
                    on_event=lambda step, _payload: progress.update(f"{step}…"),
                )
            except UnknownConversation:
                raise FluxConfigError("--conversation", f"no conversation {conversation!r}") from None
            self.tracker.submit(answer, "cli")
        if output == "json":
            print(answer.model_dump_json(indent=2))
        elif output == "md":
            print(markdown(answer), end="")
        else:
            print_answer(out, answer)
            out.print(f"answer {answer.answer_id} · conversation {answer.conversation_id}")
        if explain and output != "json":
            print_plan(self.status if output == "md" else out, answer)
        return answer.conversation_id

    def close(self) -> None:
        with self.status.status("logging to MLflow…"):
            if not self.tracker.flush(timeout=120) or self.tracker.failed:
                self.status.print("flux: warning: an MLflow run for these queries was not logged")
        self.pipeline.close()
