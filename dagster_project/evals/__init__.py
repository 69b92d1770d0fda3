"""Eval scorecards: question sets, the three scorecards, their storage, the regression gate and reports."""
