"""Churn gates: the shares of a release's change that say it is broken rather than new (a truncated file, a renamed
column, a crosswalk that drifted). Pure: a diff's figures and the limits in, a verdict with its words out."""

from __future__ import annotations

from dataclasses import dataclass, field

from dagster_project.core.setting_groups import ReleaseSettings

# (figure lost, figure it is a share of, the setting that limits it, what is lost in words)
_RULES: dict[str, list[tuple[str, str, str, str]]] = {
    "pathways": [
        ("pathways_removed", "pathways_before", "churn_max_pathways_lost", "of its pathways"),
        ("members_lost", "members_before", "churn_max_members_lost", "of the gene memberships of kept pathways"),
        ("pathways_renamed", "named_kept", "churn_max_renamed", "of its kept, named pathways to renames"),
    ],
    "genes": [("genes_removed", "genes_before", "churn_max_genes_lost", "of its genes")],
    "associations": [
        (
            "associations_removed",
            "associations_before",
            "churn_max_associations_lost",
            "of its gene-condition associations",
        ),
        ("diseases_removed", "diseases_before", "churn_max_diseases_lost", "of its conditions"),
    ],
    "resolution": [("equivalences_lost", "equivalences_before", "churn_max_equivalences_lost", "of its equivalences")],
}


@dataclass(frozen=True)
class GateVerdict:
    passed: bool
    shares: dict[str, float] = field(default_factory=dict)
    failures: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        return "; ".join(self.failures) if self.failures else "within every churn limit"


def evaluate(kind: str, subject: str, figures: dict[str, int], limits: ReleaseSettings) -> GateVerdict:
    """`kind` is pathways (Reactome, KEGG), genes (HGNC), associations (ClinVar) or resolution. A first release
    (nothing before it) passes: there is nothing it could have lost."""
    shares: dict[str, float] = {}
    failures: list[str] = []
    for lost, base, setting, words in _RULES[kind]:
        if not figures.get(base):
            continue
        share = figures[lost] / figures[base]
        limit = getattr(limits, setting)
        shares[lost + "_share"] = round(share, 4)
        if share > limit:
            failures.append(
                f"{subject} loses {share:.1%} {words} ({figures[lost]} of {figures[base]}; the limit "
                f"is {limit:.0%}, FLUX_{setting.upper()})"
            )
    return GateVerdict(not failures, shares, tuple(failures))
