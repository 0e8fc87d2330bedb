import unittest

from textstats import top_words, word_count, words


class CoreTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(words("Hello, hello WORLD"), ["hello", "hello", "world"])

    def test_word_count(self):
        self.assertEqual(word_count("one two  three"), 3)
        self.assertEqual(word_count(""), 0)

    def test_top_words(self):
        self.assertEqual(top_words("b a b c b a", 2), [("b", 3), ("a", 2)])


if __name__ == "__main__":
    unittest.main()
