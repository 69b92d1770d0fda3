"""Router rules (docs/answers.md, step 2), in the order they apply, and how each strategy turns a
question into retrieval queries: clause splitting, lexicon-backed expansion, compression, LLM rewrites."""

from __future__ import annotations

import pytest

from retrieval.model.genes import GeneLexicon
from retrieval.model.terms import QUESTION_STOPWORDS, words
from retrieval.model.types import Strategy
from retrieval.question.router import MAX_QUERIES, choose_strategy, route, split_clauses, unexplained_acronyms

TP53_NAME = "tumor protein p53"
PIK3CA_NAME = "phosphatidylinositol-4,5-bisphosphate 3-kinase catalytic subunit alpha"


@pytest.fixture(scope="module")
def lexicon() -> GeneLexicon:
    return GeneLexicon(
        [
            ("HGNC:11998", "TP53", TP53_NAME, ["p53", "LFS1"], []),
            ("HGNC:8975", "PIK3CA", PIK3CA_NAME, ["PI3K", "p110-alpha"], []),
            ("HGNC:1100", "BRCA1", "BRCA1 DNA repair associated", ["RNF53"], []),
            ("HGNC:1101", "BRCA2", "BRCA2 DNA repair associated", ["FANCD1"], []),
            # Real genes whose symbols or aliases are common words or function words.
            ("HGNC:1516", "CAT", "catalase", [], []),
            ("HGNC:10760", "SET", "SET nuclear proto-oncogene", [], []),
            ("HGNC:99991", "FAKE1", "made-up gene with a common-word alias", ["DNA"], []),
            ("HGNC:1681", "CD44", "CD44 molecule (IN blood group)", ["IN"], []),
            ("HGNC:726", "ART4", "ADP-ribosyltransferase 4 (DO blood group)", [], ["DO"]),
        ]
    )


def n_words(text: str) -> int:
    return len(words(text))


class FakeProvider:
    """Stands in for an LLM that rewrites questions; records what it was asked."""

    name = "fake"

    def __init__(self, reply: list[str] | None) -> None:
        self.reply = reply
        self.calls: list[tuple[str, Strategy]] = []

    def rewrite(self, question: str, strategy: Strategy) -> list[str] | None:
        self.calls.append((question, strategy))
        return self.reply


# --- the rules, in order -------------------------------------------------------------------------------------------

LONG_31 = (
    "Which enzymes of the glycolytic pathway are most strongly regulated by insulin in the liver of mice that "
    "were fasted overnight and then fed a diet rich in fat for weeks?"
)
Q_25 = (
    "Which enzymes of the glycolytic pathway are most strongly regulated by insulin in the liver of mice that "
    "were fasted overnight before being fed sugar?"
)
Q_26 = (
    "Which enzymes of the glycolytic pathway are most strongly regulated by insulin in the liver of mice that "
    "were fasted overnight before being fed sugar again?"
)
Q_30 = (
    "Which enzymes of the glycolytic pathway are most strongly regulated by insulin in the liver of mice that "
    "were fasted overnight before being fed a diet rich in sugar today?"
)


def test_word_count_fixtures_have_the_sizes_the_rules_are_about() -> None:
    assert [n_words(q) for q in (Q_25, Q_26, Q_30, LONG_31)] == [25, 26, 30, 31]


def test_over_30_words_decomposes() -> None:
    assert choose_strategy(LONG_31)[0] == "decompose"
    assert "31 words" in choose_strategy(LONG_31)[1]


def test_over_30_words_wins_over_later_rules(lexicon: GeneLexicon) -> None:
    # An acronym (expand) and error text (compress) are there too; the first rule decides.
    question = LONG_31.replace("insulin", "PI3K signalling").rstrip("?") + " ValueError: bad row?"
    assert n_words(question) > 30
    assert choose_strategy(question)[0] == "decompose"


def test_more_than_one_question_mark_decomposes_even_when_short(lexicon: GeneLexicon) -> None:
    question = "What is glycolysis? Which genes are in it?"
    assert n_words(question) < 30
    plan = route(question, lexicon)
    assert plan.strategy == "decompose"
    assert "2 question marks" in plan.reason
    assert plan.queries == [question, "What is glycolysis?", "Which genes are in it?"]


def test_one_question_mark_alone_is_not_a_decomposition() -> None:
    assert choose_strategy("Which genes take part in glycolysis in human liver cells?")[0] == "direct"


@pytest.mark.parametrize(
    ("question", "clauses"),
    [
        (
            "Which pathways are involved in glycolysis, and which genes are shared with gluconeogenesis?",
            ["Which pathways are involved in glycolysis?", "which genes are shared with gluconeogenesis?"],
        ),
        (
            "Which genes take part in glycolysis in human liver cells and which of them are found in gluconeogenesis?",
            [
                "Which genes take part in glycolysis in human liver cells?",
                "which of them are found in gluconeogenesis?",
            ],
        ),
        (
            "Which genes take part in glycolysis in human liver cells or how is the pathway regulated by insulin?",
            ["Which genes take part in glycolysis in human liver cells?", "how is the pathway regulated by insulin?"],
        ),
        (
            "Which enzymes catalyse the first steps of glycolysis in muscle as well as what regulates them"
            " during fasting?",
            ["Which enzymes catalyse the first steps of glycolysis in muscle?", "what regulates them during fasting?"],
        ),
    ],
)
def test_clauses_joined_by_a_conjunction_decompose_into_one_query_per_clause(
    lexicon: GeneLexicon, question: str, clauses: list[str]
) -> None:
    assert n_words(question) <= 30 and question.count("?") == 1
    plan = route(question, lexicon)
    assert plan.strategy == "decompose"
    assert plan.queries == [question, *clauses]
    assert plan.rewritten_by == "rules"


def test_noun_conjunction_is_not_a_clause_split(lexicon: GeneLexicon) -> None:
    assert split_clauses("What roles do BRCA1 and BRCA2 play in DNA repair?") == [
        "What roles do BRCA1 and BRCA2 play in DNA repair?"
    ]
    question = "How do tumour suppressor genes and oncogenes cooperate in the repair of damaged chromosomes?"
    assert route(question, lexicon).strategy == "direct"
    # With gene symbols in it the acronym rule applies, but it is still not a decomposition.
    assert (
        route("What roles do BRCA1 and BRCA2 play in DNA repair of double strand breaks?", lexicon).strategy == "expand"
    )


def test_under_8_words_expands_and_8_does_not() -> None:
    seven = "Which genes take part in hepatic glycolysis?"
    eight = "Which genes take part in glycolysis in hepatocytes?"
    assert (n_words(seven), n_words(eight)) == (7, 8)
    assert choose_strategy(seven)[0] == "expand"
    assert choose_strategy(eight)[0] == "direct"


@pytest.mark.parametrize("acronym", ["PI3K", "p53"])
def test_unexplained_acronym_in_a_long_enough_question_expands(acronym: str) -> None:
    question = f"How does {acronym} signalling regulate cell growth in human cancers?"
    assert n_words(question) >= 8
    strategy, reason = choose_strategy(question)
    assert strategy == "expand"
    assert acronym in reason


def test_explained_acronym_is_not_a_reason_to_expand() -> None:
    question = "How does PI3K (phosphoinositide 3-kinase) signalling regulate cell growth in human cancers?"
    assert unexplained_acronyms(question) == []
    assert choose_strategy(question)[0] == "direct"


def test_acronym_rule_comes_before_the_length_compress_rule() -> None:
    question = Q_26.replace("insulin", "PI3K")
    assert n_words(question) == 26
    assert choose_strategy(question)[0] == "expand"


def test_26_to_30_words_without_clauses_compress_and_25_is_direct() -> None:
    assert choose_strategy(Q_25)[0] == "direct"
    for question in (Q_26, Q_30):
        assert split_clauses(question) == [question]
        strategy, reason = choose_strategy(question)
        assert strategy == "compress"
        assert f"{n_words(question)} words" in reason


@pytest.mark.parametrize(
    "question",
    [
        "Why does my loader fail with ValueError: could not convert string to float while parsing?",
        'Why does the loader stop at File "/srv/flux/parse.py", line 12, in load_rows when reading pathways?',
        "Why does the loader stop with Traceback (most recent call last) when reading the pathway files?",
    ],
)
def test_error_text_compresses(lexicon: GeneLexicon, question: str) -> None:
    assert 8 <= n_words(question) <= 25
    plan = route(question, lexicon)
    assert plan.strategy == "compress"
    assert plan.reason == "contains error text"
    assert plan.queries[0] == question
    assert len(plan.queries) == 2


def test_the_same_question_without_error_text_is_direct() -> None:
    assert choose_strategy("Why does my loader fail with a conversion problem while parsing pathway files?")[0] == (
        "direct"
    )


def test_compressed_query_keeps_the_error_and_drops_stack_frames_and_function_words(lexicon: GeneLexicon) -> None:
    question = (
        "Why does loading the pathways fail?\nTraceback (most recent call last):\n"
        '  File "/srv/flux/parse.py", line 12, in load_rows\nValueError: could not convert string to float'
    )
    plan = route(question, lexicon)
    assert plan.strategy == "compress"
    compressed = plan.queries[1]
    assert "ValueError" in compressed.split()
    assert "srv" not in compressed and "load_rows" not in compressed
    assert not {w.lower() for w in words(compressed)} & QUESTION_STOPWORDS
    assert n_words(compressed) <= 16


def test_plain_question_is_direct_and_only_the_question_is_retrieved(lexicon: GeneLexicon) -> None:
    question = "Which genes take part in glycolysis in human liver cells?"
    plan = route(question, lexicon)
    assert (plan.strategy, plan.queries, plan.expansions, plan.rewritten_by) == ("direct", [question], {}, "rules")


# --- expansion comes from the lexicon ------------------------------------------------------------------------------


def test_symbol_expands_to_its_approved_name(lexicon: GeneLexicon) -> None:
    question = "What does TP53 do?"
    plan = route(question, lexicon)
    assert plan.strategy == "expand"
    assert plan.expansions == {"TP53": TP53_NAME}
    assert plan.queries == [question, f"{question} (TP53: {TP53_NAME})"]


def test_alias_expands_to_symbol_and_name(lexicon: GeneLexicon) -> None:
    plan = route("What is the role of p53 in apoptosis?", lexicon)
    assert plan.expansions == {"p53": f"TP53 {TP53_NAME}"}
    assert f"TP53 {TP53_NAME}" in plan.queries[1]


def test_pi3k_alias_expands_to_pik3ca(lexicon: GeneLexicon) -> None:
    plan = route("How does PI3K signalling regulate cell growth in human cancers?", lexicon)
    assert plan.expansions == {"PI3K": f"PIK3CA {PIK3CA_NAME}"}


def test_token_not_in_the_lexicon_is_not_expanded(lexicon: GeneLexicon) -> None:
    question = "What does MTOR do in autophagy?"
    plan = route(question, lexicon)
    assert plan.strategy == "expand"
    assert plan.expansions == {}
    assert plan.queries == [question]


def test_common_upper_case_words_are_not_genes(lexicon: GeneLexicon) -> None:
    for word in ("DNA", "CAT", "SET"):
        assert lexicon.lookup(word) is None
    plan = route("Does DNA damage change CAT and SET levels?", lexicon)
    assert unexplained_acronyms("Does DNA damage change CAT and SET levels?") == []
    assert plan.strategy == "direct"  # 8 words and no acronym that needs explaining
    assert plan.expansions == {}


def test_capitalised_function_words_are_not_gene_aliases(lexicon: GeneLexicon) -> None:
    # CD44 has the alias IN and ART4 the previous symbol DO; a capital at the start of a question is not a gene.
    assert lexicon.lookup("IN") is None and lexicon.lookup("Do") is None
    assert route("Do p53 mutations change glycolysis?", lexicon).expansions == {"p53": f"TP53 {TP53_NAME}"}
    assert [m.gene.symbol for m in lexicon.find("In which cells is TP53 active?")] == ["TP53"]


# --- LLM rewrites and bounds -------------------------------------------------------------------------------------


def test_provider_sub_questions_are_used_when_given(lexicon: GeneLexicon) -> None:
    question = "Which pathways are involved in glycolysis, and which genes are shared with gluconeogenesis?"
    provider = FakeProvider(["Which pathways involve glycolysis?", "Genes shared by glycolysis and gluconeogenesis"])
    plan = route(question, lexicon, provider)
    assert provider.calls == [(question, "decompose")]
    assert plan.rewritten_by == "llm"
    assert plan.queries == [question, *provider.reply]


def test_provider_none_falls_back_to_the_rules(lexicon: GeneLexicon) -> None:
    question = "Which pathways are involved in glycolysis, and which genes are shared with gluconeogenesis?"
    provider = FakeProvider(None)
    plan = route(question, lexicon, provider)
    assert provider.calls == [(question, "decompose")]
    assert plan.rewritten_by == "rules"
    assert plan.queries == route(question, lexicon).queries


def test_provider_expansion_replaces_the_rules_expansion(lexicon: GeneLexicon) -> None:
    provider = FakeProvider(["TP53 tumour suppressor function"])
    plan = route("What does TP53 do?", lexicon, provider)
    assert provider.calls == [("What does TP53 do?", "expand")]
    assert plan.queries == ["What does TP53 do?", "TP53 tumour suppressor function"]
    assert plan.rewritten_by == "llm"


def test_provider_is_not_asked_for_a_direct_question(lexicon: GeneLexicon) -> None:
    provider = FakeProvider(["should not be used"])
    plan = route("Which genes take part in glycolysis in human liver cells?", lexicon, provider)
    assert provider.calls == []
    assert plan.queries == ["Which genes take part in glycolysis in human liver cells?"]


def test_provider_queries_drop_blanks_duplicates_and_the_question_itself(lexicon: GeneLexicon) -> None:
    question = "What is glycolysis? Which genes are in it?"
    provider = FakeProvider([question, "  ", "glycolysis genes", "glycolysis genes"])
    assert route(question, lexicon, provider).queries == [question, "glycolysis genes"]


def test_provider_queries_are_bounded(lexicon: GeneLexicon) -> None:
    question = "What is glycolysis? Which genes are in it?"
    provider = FakeProvider([f"sub-question number {i}" for i in range(10)])
    plan = route(question, lexicon, provider)
    assert len(plan.queries) == MAX_QUERIES + 1
    assert plan.queries[0] == question
    assert plan.queries[1:] == provider.reply[:MAX_QUERIES]


def test_rule_queries_are_bounded(lexicon: GeneLexicon) -> None:
    question = (
        "What is glycolysis? What is gluconeogenesis? What is the TCA cycle? What is fermentation? "
        "What is beta oxidation? What is ketogenesis?"
    )
    assert len(split_clauses(question)) == 6
    plan = route(question, lexicon)
    assert len(plan.queries) == MAX_QUERIES + 1
    assert plan.queries[:3] == [question, "What is glycolysis?", "What is gluconeogenesis?"]
