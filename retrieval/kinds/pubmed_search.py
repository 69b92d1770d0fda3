"""`pubmed_search`: literature questions answered from the literature itself — how many PubMed articles, the newest
or most relevant ones on a topic, facts about given PMIDs, the articles citing or similar to them.

In live mode the question's request goes to PubMed through Flux's E-utilities client (retrieval/pubmed/): each
search is checked against its translation and refined at most twice, and the answer shows the exact Entrez query,
NCBI's translation and the count, and cites the PMIDs it names. With live search off (demo and snapshot modes) the
answer says so and gives what Flux's own abstracts hold, labelled as the index's (retrieval/pubmed/indexed.py).
An answer that cannot say what was asked — an error, a translation that still fails the check, a PubMed-wide
question in an offline mode — has confidence 0.
"""

from __future__ import annotations

from dagster_project.core.settings import get_settings
from retrieval.answering.typed_answer import listing
from retrieval.kinds.base import QuestionKind, Statement, Stores, table
from retrieval.model.answer import DataTable
from retrieval.model.literature import Article, PubMedSearchData, SearchTrail
from retrieval.model.plan import Plan
from retrieval.pubmed.indexed import indexed_answer
from retrieval.pubmed.live import LiveIdentityError, memory_for, tools_for
from retrieval.question.literature_questions import read_request
from retrieval.question.reaction_questions import written
from retrieval.question.reading import Read

LINK_WORDS = {"cited_by": "cite", "similar": "are similar to", "references": "are cited by"}


def recognise(read: Read) -> Plan | None:
    question = written(read)
    request = read_request(question)
    if request is None:
        return None
    request = request.model_copy(update={"asked": question})
    return Plan(
        kind="pubmed_search",
        operation="search",
        literature=request,
        reason=f"a literature-tools question: {request.describe()}",
    )


def accepts(plan: Plan) -> bool:
    return plan.operation == "search" and plan.literature is not None and plan.literature.operation != "summary"


def facts(plan: Plan, stores: Stores) -> PubMedSearchData:
    request = plan.literature
    assert request is not None
    settings = stores.settings or get_settings()
    mode = settings.sources.source_mode
    if mode != "live":
        return indexed_answer(stores.engine, request, mode)
    try:
        tools = tools_for(settings)
    except LiveIdentityError as exc:
        return PubMedSearchData(request=request, source_mode=mode, live=True, error=str(exc))
    return tools.answer(request.asked, request, memory_for(stores.engine))


# --- statements -------------------------------------------------------------------------------------------------
def statements(data: PubMedSearchData) -> list[Statement]:
    return _live(data) if data.live else _offline(data)


def _cited(article: Article, with_mesh: bool = False) -> Statement:
    mesh = f"; MeSH: {listing(article.mesh, 8)}" if with_mesh and article.mesh else ""
    return f"PMID {article.pmid}: {article.byline()}{mesh}.", [f"PMID:{article.pmid}"]


def _trail(trail: SearchTrail | None) -> list[Statement]:
    if trail is None or trail.final is None:
        return []
    final = trail.final
    out: list[Statement] = [
        (
            f"Entrez query: {final.term} — translated by NCBI as: {final.translation or '—'}"
            + (f" ({final.count:,} records)." if final.count is not None else "."),
            [],
        )
    ]
    if trail.reused_strategy:
        out.append(("The query reuses a stored strategy for a question worded like this one.", []))
    for attempt in trail.attempts[1:]:
        if attempt.changed:
            out.append((f"Refined: {'; '.join(attempt.changed)}.", []))
    if trail.refinements:
        first = trail.attempts[0]
        out.append(
            (
                f"The first query, {first.term}, was translated as {first.translation or '—'}"
                + (f" ({first.count:,} records)" if first.count is not None else "")
                + ".",
                [],
            )
        )
    return out


def _live(data: PubMedSearchData) -> list[Statement]:
    request = data.request
    if data.error:
        return [(f"Flux could not answer this from PubMed: {data.error}.", []), *_trail(data.trail)]
    out: list[Statement] = [(f"Note: {data.corrected}.", [])] if data.corrected else []
    if request.operation == "count":
        out.append((f"PubMed holds {data.count:,} articles for {request.describe().removeprefix('count ')}.", []))
        out += _trail(data.trail)
        if data.articles:
            out.append((f"The first {len(data.articles)} of them:", []))
    elif request.operation == "articles":
        which = "newest" if request.sort == "pub_date" else "most relevant"
        out.append(
            (
                f"The {len(data.articles)} {which} of PubMed's {data.count:,} articles for "
                f"{request.describe().removeprefix('articles ')}:",
                [],
            )
        )
        out += _trail(data.trail)
    elif request.operation == "links":
        assert request.link is not None
        shown = f"; the newest {len(data.articles)}:" if data.articles else "."
        out.append(
            (
                f"{data.linked_total:,} PubMed articles {LINK_WORDS[request.link]} PMID "
                f"{', '.join(request.pmids)} (PubMed's ELink){shown}",
                [],
            )
        )
    out += [_cited(a, request.operation == "facts") for a in data.articles]
    out += [(f"PubMed holds no record with PMID {pmid}.", []) for pmid in data.missing]
    return out


def _offline(data: PubMedSearchData) -> list[Statement]:
    request = data.request
    out: list[Statement] = [
        (
            f"Live literature search is off (FLUX_SOURCE_MODE={data.source_mode}); Flux's index "
            f"holds {data.indexed_abstracts:,} PubMed abstracts.",
            [],
        )
    ]
    if data.error:
        return [*out, (f"Flux could not read them: {data.error}.", [])]
    if request.operation in ("count", "articles"):
        out.append(
            (
                f"PubMed's own count needs live mode (FLUX_SOURCE_MODE=live). In Flux's index (not PubMed), "
                f"{data.indexed_count:,} of those abstracts match "
                f"{request.describe().split(' ', 1)[1]}" + (":" if data.articles else "."),
                [],
            )
        )
    elif request.operation == "links":
        out.append(("Citing and similar articles come from PubMed's ELink, which Flux calls only in live mode.", []))
    out += [_cited(a, True) for a in data.articles]
    out += [
        (f"Flux's index holds no abstract with PMID {pmid}; live mode would ask PubMed.", []) for pmid in data.missing
    ]
    return out


def articles_table(data: PubMedSearchData) -> DataTable | None:
    if not data.articles:
        return None
    where = "PubMed" if data.live else "Flux's index"
    return table(
        f"Articles ({where})",
        ["PMID", "title", "journal", "date", "MeSH"],
        [[a.pmid, a.title, a.journal, a.date, "; ".join(a.mesh[:6])] for a in data.articles],
        of="article",
    )


KIND = QuestionKind(
    name="pubmed_search",
    recognisers=((5, recognise),),
    accepts=accepts,
    facts=facts,
    statements=statements,
    table=articles_table,
    needs_graph=False,
    holds_nothing=lambda data: not data.answered,
    read_live=lambda data: data.live,
)
