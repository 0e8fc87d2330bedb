"""python3 -m textstats FILE: print the word count and the top words."""

import sys

from .core import top_words, word_count


def main(argv):
    if len(argv) != 2:
        print("usage: python3 -m textstats FILE", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    print(f"words: {word_count(text)}")
    for word, count in top_words(text):
        print(f"{word}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
