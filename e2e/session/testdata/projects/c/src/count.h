#ifndef WC2_COUNT_H
#define WC2_COUNT_H

#include <stddef.h>
#include <stdio.h>

#define WC2_VERSION "1.0"

struct counts {
	size_t lines;
	size_t words;
	size_t bytes;
};

/* count_stream counts the lines, words and bytes of f. */
struct counts count_stream(FILE *f);

/* count_words counts the words of a string. */
size_t count_words(const char *s);

#endif
