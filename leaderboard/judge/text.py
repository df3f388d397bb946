"""Text helpers shared by the lexical judge and the token estimator.

Self-contained on purpose: the lexical judge's numbers are versioned as
`lexical-v1`, so its tokenisation must not change when another module's
normalisation does.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

# A sentence ends at . ! ? (optionally followed by a closing quote/bracket)
# when whitespace and then a non-lowercase character follow: "25.62 feet",
# "e.g. the" and "U.S. economy" do not split, "… 2010. The …" does.
_SENTENCE_END = re.compile(r"""(?<=[.!?])["')\]]?\s+(?=[^\sa-z])""")
_LINE_BREAKS = re.compile(r"\s*\n+\s*")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_WORD = re.compile(r"\w+")

# Function words carry no fact: a fact is "supported" by its content words.
# Negations (no, not, nor) are deliberately NOT stopwords: "No." is an answer.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "respectively",
        "additionally",
        "however",
        "therefore",
        "thus",
        "overall",
        "including",
        "include",
        "includes",
        "included",
        "according",
    ]
)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`: line breaks and sentence ends split, bullets stripped, empties dropped."""
    out: list[str] = []
    for line in _LINE_BREAKS.split(text.strip()):
        line = _BULLET.sub("", line)
        for sentence in _SENTENCE_END.split(line):
            sentence = sentence.strip()
            if _WORD.search(sentence):
                out.append(sentence)
    return out


def all_words(text: str) -> list[str]:
    """Word tokens of the NFKC-casefolded text (whitespace needs no collapsing to find words)."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


@lru_cache(maxsize=1 << 18)
def _word_trigrams(word: str) -> frozenset[str]:
    # Words repeat across every submission's answers: compute each word's grams once.
    padded = f" {word} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def char_trigrams(words: Iterable[str]) -> frozenset[str]:
    """Character 3-grams of each word padded with spaces, so "grow"/"growth" share grams."""
    return frozenset().union(*map(_word_trigrams, words))


def estimate_tokens(text: str) -> int:
    """Rough token count (about 4 characters per token for English), for dry-run estimates only."""
    return (len(text) + 3) // 4
