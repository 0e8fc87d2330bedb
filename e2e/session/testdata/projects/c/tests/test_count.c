#include <stdio.h>

#include "count.h"

static int failures;

static void expect(const char *s, size_t want)
{
	size_t got = count_words(s);
	if (got != want) {
		printf("count_words(\"%s\") = %zu, want %zu\n", s, got, want);
		failures++;
	}
}

int main(void)
{
	expect("", 0);
	expect("one", 1);
	expect("  two words ", 2);
	expect("a\tb\nc", 3);
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("all tests passed\n");
	return 0;
}
