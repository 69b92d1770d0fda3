"""The analysts' page in a real browser: Debian's chromium driven by Playwright, against a real service (uvicorn) on
the demo platform. Screenshots go to <FLUX_HOME>/screenshots (`.flux/test/screenshots` under `make test`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dagster_project.core.settings import FluxSettings
from serving.api import create_app
from serving.security import key_hash
from tests.support.browser import chromium
from tests.support.live_server import live_server
from tests.support.ports import free_port

KINDS = {
    "members": "members",
    "gene pathways": "gene_pathways",
    "counterpart": "counterpart",
    "shared genes": "shared_genes",
    "compare": "compare",
    "hierarchy": "hierarchy",
    "gene facts": "gene_facts",
    "count": "members",
    "compounds": "compound_pathways",
    "difference": "difference",
    "release changes": "release_changes",
    "yes/no": "check",
    "connection": "connection",
    "not held": "scope",
    "literature": "literature",
}
KEY = "flux_browser_test_key"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def _serve(settings: FluxSettings) -> Any:
    # No caches: every question does its real work, so its steps arrive over time, not as one cached burst.
    return live_server(create_app(settings.evolve(log_queries_to_mlflow=False, cache_enabled=False)))


@pytest.fixture(scope="module")
def service(demo_platform: FluxSettings) -> Iterator[str]:
    with _serve(demo_platform) as base:
        yield base


@pytest.fixture(scope="module")
def shots(demo_platform: FluxSettings) -> Path:
    folder = demo_platform.home / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    tab = context.new_page()
    tab.set_default_timeout(120_000)
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def ask(page: Any, question: str, mode: str = "thinking") -> Any:
    """Type a question, submit it, wait for its turn to finish; the turn (newest first on the page)."""
    before = page.locator("article.turn").count()
    page.check(f'input[name="mode"][value="{mode}"]')
    page.fill("#question", question)
    page.click("#ask-button")
    return finished_turn(page, before)


def finished_turn(page: Any, before: int) -> Any:
    # Locator assertions, not wait_for_function: the page's CSP forbids the eval that the latter needs.
    from playwright.sync_api import expect

    expect(page.locator("article.turn")).to_have_count(before + 1, timeout=120_000)
    turn = page.locator("article.turn").first  # the newest
    expect(turn).to_have_attribute("aria-busy", "false", timeout=120_000)
    return turn


def test_one_question_of_each_kind_streams_its_steps_and_answers_with_citations(
    page: Any, service: str, shots: Path
) -> None:
    from playwright.sync_api import expect

    page.goto(service)
    expect(page.locator("#status-banner")).to_have_attribute("data-status", "ok")  # every store is up: no banner
    assert not page.locator("#status-banner").is_visible()
    page.screenshot(path=shots / "01-empty.png", full_page=True)
    # When did each step and the answer reach the page? (Streaming: the steps come first, not with the answer.)
    page.evaluate("""() => { window.seen = []; new MutationObserver((records) => { for (const r of records)
        for (const n of r.addedNodes) if (n.nodeType === 1 && (n.matches('li[data-step]') || n.matches('.badges')))
          window.seen.push([n.matches('.badges') ? 'answer' : n.dataset.step, performance.now()]); })
        .observe(document.getElementById('turns'), {childList: true, subtree: true}); }""")
    examples = page.locator("#examples button")
    assert examples.count() == len(KINDS)
    for index, (label, kind) in enumerate(KINDS.items()):
        page.evaluate("() => { window.seen = []; }")
        button = examples.nth(index)
        assert label in button.inner_text().lower()
        button.click()
        turn = finished_turn(page, index)
        steps = turn.locator("ol.steps li").all_inner_texts()
        assert f"Question read as {kind}:" in steps[0], steps
        if kind == "literature":  # retrieved from text: the route, each retrieval and the judge's verdict
            judged = [i for i, s in enumerate(steps) if s.startswith("Judge")]
            assert judged, f"thinking mode shows the judge's verdict: {steps}"
            assert steps[1].startswith("Route:") and steps[2].startswith("Retrieved for") and judged[0] > 2, steps
        else:  # read from the graph: its facts are the evidence
            assert any(s.startswith("Evidence:") for s in steps), steps
        assert turn.locator(".turn-status").inner_text() == "Answered"
        assert turn.locator("ol.sources li").count() >= 1, f"{kind}: an answer cites its evidence"
        if kind != "literature":
            assert turn.locator(".data table tbody tr").count() >= 1, f"{kind}: the structured data as a table"
        seen = page.evaluate("() => window.seen")
        first_step = min(t for name, t in seen if name != "answer")
        answered = next(t for name, t in seen if name == "answer")
        assert first_step < answered, f"{kind}: the steps were not streamed before the answer: {seen}"
        turn.screenshot(path=shots / f"02-kind-{kind}.png")
    assert page.locator("#history li").count() == len(KINDS)
    page.screenshot(path=shots / "03-all-kinds.png", full_page=True)


def test_a_citation_opens_its_evidence_with_a_link_to_the_source(page: Any, service: str, shots: Path) -> None:
    page.goto(service)
    turn = ask(page, "Which KEGG pathway corresponds to Reactome's glycolysis?", mode="quick")
    turn.locator("button.cite").first.click()
    panel = page.locator("#evidence-panel")
    assert panel.is_visible()
    assert panel.locator("blockquote").inner_text().strip(), "the evidence snippet is shown"
    link = panel.locator("a").first.get_attribute("href")
    assert link.startswith(
        (
            "https://reactome.org/",
            "https://www.kegg.jp/",
            "https://www.genenames.org/",
            "https://pubmed.ncbi.nlm.nih.gov/",
            "https://openalex.org/",
        )
    ), link
    page.screenshot(path=shots / "04-evidence.png", full_page=False)
    page.keyboard.press("Escape")
    assert not panel.is_visible()


def test_a_follow_up_continues_the_conversation_and_exports_as_markdown_and_json(
    page: Any, service: str, shots: Path
) -> None:
    page.goto(service)
    ask(page, "Which genes belong to the Reactome glycolysis pathway?", mode="quick")
    follow_up = ask(page, "which of those are kinases?", mode="quick")
    assert "Answered as: Which genes of R-HSA-70171 are kinases?" in follow_up.inner_text()
    assert page.locator("#history li").all_inner_texts() == [
        "Which genes belong to the Reactome glycolysis pathway?",
        "which of those are kinases?",
    ]
    with page.expect_download() as markdown_download:
        follow_up.get_by_role("button", name="Export Markdown").click()
    report = Path(markdown_download.value.path()).read_text()
    assert report.startswith("# which of those are kinases?") and "*Answered as:* Which genes of R-HSA-70171" in report
    with page.expect_download() as json_download:
        follow_up.get_by_role("button", name="Export JSON").click()
    exported = json.loads(Path(json_download.value.path()).read_text())
    assert exported["asked_as"] == "Which genes of R-HSA-70171 are kinases?" and exported["conversation_id"]
    follow_up.locator("details.details summary").click()
    assert exported["index_version"] in follow_up.locator("details.details").inner_text()
    page.screenshot(path=shots / "05-follow-up.png", full_page=True)
    page.click("#new-conversation")
    assert page.locator("#history li").count() == 0 and page.locator("article.turn").count() == 0


def test_tables_sort_and_copy(page: Any, service: str) -> None:
    page.goto(service)
    turn = ask(page, "Which genes belong to the KEGG pathway 'Mismatch repair'?", mode="quick")
    column = turn.locator(".data th").first
    symbols = turn.locator(".data tbody tr td:first-child")
    column.locator("button").click()
    assert column.get_attribute("aria-sort") == "ascending"
    ascending = symbols.all_inner_texts()
    assert ascending == sorted(ascending) and len(ascending) >= 2
    column.locator("button").click()
    assert column.get_attribute("aria-sort") == "descending" and symbols.all_inner_texts() == ascending[::-1]
    turn.get_by_role("button", name="Copy table").click()
    copied = page.evaluate("() => navigator.clipboard.readText()").splitlines()
    assert copied[0].split("\t") == ["symbol", "HGNC id", "name"] and len(copied) == len(ascending) + 1
    assert copied[1].split("\t")[0] == ascending[-1]  # in the order shown


def test_graph_nodes_are_drawn_and_ask_about_themselves(page: Any, service: str, shots: Path) -> None:
    page.goto(service)
    turn = ask(page, "Which KEGG pathway corresponds to Reactome's glycolysis?", mode="quick")
    nodes = turn.locator(".graph svg g.node")
    nodes.first.wait_for()
    assert nodes.count() >= 3 and turn.locator(".graph svg line").count() >= 2
    assert turn.locator(".graph svg g.node.seed").count() >= 1
    turn.locator(".graph").screenshot(path=shots / "06-graph.png")
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=shots / "page.png", full_page=True)  # the README's picture (docs/page.png)
    gene = turn.locator(".graph svg g.node.gene").first
    symbol = gene.locator("text").text_content()
    before = page.locator("article.turn").count()
    gene.focus()
    page.keyboard.press("Enter")  # keyboard, not only the mouse
    asked = finished_turn(page, before)
    assert asked.locator("h3").inner_text() == f"Which pathways contain {symbol}?"
    assert "Question read as gene_pathways:" in asked.locator("ol.steps li").first.inner_text()


def test_with_api_keys_the_page_asks_for_one_and_keeps_it_for_the_tab_only(
    browser: Any, demo_platform: FluxSettings, shots: Path
) -> None:
    context = browser.new_context()
    try:
        with _serve(demo_platform.evolve(api_keys=key_hash(KEY))) as base:
            tab = context.new_page()
            tab.set_default_timeout(120_000)
            tab.goto(base)
            tab.fill("#question", "Which genes belong to the KEGG pathway 'Mismatch repair'?")
            tab.click("#ask-button")
            dialog = tab.locator("#key-dialog")
            dialog.wait_for(state="visible")
            tab.screenshot(path=shots / "07-api-key.png")
            tab.fill("#api-key", "not-the-key")
            tab.keyboard.press("Enter")
            dialog.wait_for(state="visible")  # refused: asked again
            tab.fill("#api-key", KEY)
            tab.keyboard.press("Enter")
            turn = finished_turn(tab, 0)
            assert turn.locator(".turn-status").inner_text() == "Answered"
            assert tab.evaluate("() => sessionStorage.getItem('flux-api-key')") == KEY
            assert tab.evaluate("() => localStorage.length") == 0, "the key must not outlive the tab"
            other_tab = context.new_page()
            other_tab.goto(base)
            assert other_tab.evaluate("() => sessionStorage.getItem('flux-api-key')") is None
    finally:
        context.close()


def test_the_banner_says_when_neo4j_is_down_and_answers_still_come(
    browser: Any, demo_platform: FluxSettings, shots: Path
) -> None:
    # Neo4j as the service sees it when the server is stopped: nothing answers at its address.
    dead_graph = demo_platform.evolve(neo4j_uri=f"bolt://127.0.0.1:{free_port()}")
    context = browser.new_context()
    try:
        with _serve(dead_graph) as base:
            tab = context.new_page()
            tab.set_default_timeout(120_000)
            tab.goto(base)
            banner = tab.locator("#status-banner")
            banner.wait_for(state="visible")
            text = banner.inner_text()
            assert text.startswith("Degraded.") and "Neo4j" in text, text
            turn = ask(tab, "Which genes belong to the KEGG pathway 'Mismatch repair'?", mode="quick")
            assert turn.locator(".turn-status").inner_text() == "Answered"
            assert "knowledge graph is unavailable" in turn.locator(".warnings").inner_text()
            tab.screenshot(path=shots / "08-degraded.png", full_page=True)
    finally:
        context.close()


def test_every_control_has_a_name_and_the_page_works_from_the_keyboard(page: Any, service: str) -> None:
    page.goto(service)
    unnamed = page.evaluate("""() => [...document.querySelectorAll('button, input, textarea, select, a[href]')]
        .filter((c) => !(c.getAttribute('aria-label') || (c.labels && [...c.labels].some((l) => l.textContent.trim()))
                         || c.textContent.trim()))
        .map((c) => c.outerHTML.slice(0, 80))""")
    assert not unnamed, f"controls without an accessible name: {unnamed}"
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    page.keyboard.type("Which genes belong to the KEGG pathway 'Mismatch repair'?")
    page.keyboard.press("Control+Enter")
    turn = finished_turn(page, 0)
    assert turn.locator(".turn-status").inner_text() == "Answered"
