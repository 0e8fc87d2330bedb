"""The counting functions."""

import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z']+")


def words(text):
    """Return the words of text, lower-cased."""
    return [w.lower() for w in _WORD.findall(text)]


def word_count(text):
    """Return how many words text holds."""
    return len(words(text))


def top_words(text, n=3):
    """Return the n most frequent words with their counts."""
    # TODO: ignore stop words such as "the" and "a"
    return Counter(words(text)).most_common(n)
