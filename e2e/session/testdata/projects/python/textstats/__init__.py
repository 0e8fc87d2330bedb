"""Word counts and frequencies for plain text."""

from .core import top_words, word_count, words

__version__ = "0.1.0"
__all__ = ["top_words", "word_count", "words"]
