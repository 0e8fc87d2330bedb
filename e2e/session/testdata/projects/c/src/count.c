#include <ctype.h>

#include "count.h"

struct counts count_stream(FILE *f)
{
	struct counts c = {0, 0, 0};
	int ch, in_word = 0;

	while ((ch = getc(f)) != EOF) {
		c.bytes++;
		if (ch == '\n')
			c.lines++;
		if (isspace(ch)) {
			in_word = 0;
		} else if (!in_word) {
			in_word = 1;
			c.words++;
		}
	}
	return c;
}

/* TODO: count UTF-8 characters as well as bytes */
size_t count_words(const char *s)
{
	size_t n = 0;
	int in_word = 0;

	for (; *s; s++) {
		if (isspace((unsigned char)*s)) {
			in_word = 0;
		} else if (!in_word) {
			in_word = 1;
			n++;
		}
	}
	return n;
}
