"""Eval scorecards: question sets, the four scorecards, their storage, the regression gate and reports."""
