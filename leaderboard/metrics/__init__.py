"""The shared metric module: pure functions, no I/O, no pandas.

Every number on the board comes from here; tracks only map their gold and
submission formats onto these functions.
"""

from .ngram import char_ngram_recall, multi_part_recall, ngram_set, normalise
from .ranking import ndcg_at_k, ndcg_at_k_many
from .retrieval import page_hits_batch, page_precision_recall, repeat_flags, same_candidate
from .selection import selection_entropy
from .stats import BootstrapPlan, paired_test

__all__ = [
    "BootstrapPlan",
    "char_ngram_recall",
    "multi_part_recall",
    "ndcg_at_k",
    "ndcg_at_k_many",
    "ngram_set",
    "normalise",
    "page_hits_batch",
    "page_precision_recall",
    "paired_test",
    "repeat_flags",
    "same_candidate",
    "selection_entropy",
]
