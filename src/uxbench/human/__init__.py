"""Blind human evaluation (`uxbench human`): a study of cases drawn from a run or a data set, stratified by class,
judged by annotators who each get an unguessable link and never see labels or model names; results per
annotator, Fleiss' kappa between them, and human-judge agreement per judge.

- `study.py`: creating a study and its SQLite file (items, annotators, judgments);
- `results.py`: the figures and the export.
"""
