#include <stdio.h>
#include <string.h>

#include "count.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("wc2 %s\n", WC2_VERSION);
		return 0;
	}
	struct counts c = count_stream(stdin);
	printf("lines: %zu\nwords: %zu\nbytes: %zu\n", c.lines, c.words, c.bytes);
	return 0;
}
