"""Pairs as lazy sequences, in the order a nested loop would list them: items that share a feature (two pathways
sharing a gene, two genes sharing a pathway), or any row-by-row listing whose rows can be counted cheaply.

On the snapshot such lists hold tens of millions of pairs (gene pairs sharing a pathway, gene-condition pairs ClinVar
does not link, pathway pairs neither under the other); building them took minutes or never finished. The generated
questions sample a few dozen, and `random.Random.sample` reads a sequence through `len` and indexing alone, so a
lazy sequence gives the very pairs the full list would: rows are counted up front, and a pair is found by its index
when it is asked for.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from typing import overload

import numpy as np
from scipy import sparse

ROWS_PER_PRODUCT = 512  # rows multiplied at once: bounds the memory of the co-occurrence counts


class RowPairs(Sequence[tuple[str, str]]):
    """(row, partner) pairs listed row by row: `count(i)` partners for row i, `partners(i)` them in order (only
    called for a row a pair is asked of)."""

    def __init__(self, rows: Sequence[str], count: Callable[[int], int], partners: Callable[[int], list[str]]) -> None:
        self.rows = list(rows)
        self._partners = partners
        self.starts = [0, *accumulate(count(i) for i in range(len(self.rows)))]

    def __len__(self) -> int:
        return self.starts[-1]

    @overload
    def __getitem__(self, index: int) -> tuple[str, str]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, str]]: ...

    def __getitem__(self, index: int | slice) -> tuple[str, str] | list[tuple[str, str]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        row = bisect.bisect_right(self.starts, index) - 1
        return self.rows[row], self._partners(row)[index - self.starts[row]]


class SharedPairs(RowPairs):
    def __init__(self, items: Sequence[str], features: Mapping[str, set[str]]) -> None:
        """`items` in the order pairs are listed; `features[item]`: what an item has (its genes, its pathways)."""
        self.items = list(items)
        columns = {f: n for n, f in enumerate(sorted({f for item in self.items for f in features.get(item, ())}))}
        rows, cols = [], []
        for row, item in enumerate(self.items):
            for feature in features.get(item, ()):
                rows.append(row)
                cols.append(columns[feature])
        shape = (len(self.items), max(1, len(columns)))
        self.matrix = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=shape)
        self.transposed = self.matrix.T.tocsr()
        counts = self._counts()
        super().__init__(self.items, counts.__getitem__, self._partner_items)

    def _counts(self) -> list[int]:
        out: list[int] = []
        for start in range(0, len(self.items), ROWS_PER_PRODUCT):
            block = (self.matrix[start : start + ROWS_PER_PRODUCT] @ self.transposed).tocsr()
            for offset in range(block.shape[0]):
                row = start + offset
                partners = block.indices[block.indptr[offset] : block.indptr[offset + 1]]
                out.append(int(np.count_nonzero(partners > row)))
        return out

    def _partner_items(self, row: int) -> list[str]:
        """The items after `row` that share a feature with it, in order."""
        shared = (self.matrix[row] @ self.transposed).tocsr()
        return [self.items[j] for j in sorted(int(j) for j in shared.indices if j > row)]
