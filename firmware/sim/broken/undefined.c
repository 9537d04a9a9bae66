/*
 * undefined.c - broken variant of the hilrun virtual board firmware: calls a
 * function that is declared but defined nowhere, so compiling succeeds and
 * linking fails with an undefined reference.
 */
#include "board.h"

void hilrun_undefined_function(uint32_t value);

void undefined_report(void)
{
	hilrun_undefined_function(0x48494C52u);
}
