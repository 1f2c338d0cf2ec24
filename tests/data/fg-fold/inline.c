/* A program whose main() holds two inlined functions, for fg-fold --inline tests. */
#include <stdio.h>
static int counter;
static inline __attribute__((always_inline)) void bump(int i)
{
	counter += i * 3;
	if (counter > 1000000)
		counter = 0;
}
static inline __attribute__((always_inline)) void work(int n)
{
	for (int i = 0; i < n; i++)
		bump(i);
}
int main(int argc, char **argv)
{
	(void)argv;
	work(argc * 1000);
	printf("%d\n", counter);
	return 0;
}
