/*
 * missing_header.c - broken variant of the hilrun virtual board firmware:
 * includes a header that does not exist, so compiling fails.
 */
#include "board.h"
#include "hilrun_missing.h"

uint32_t missing_header_value(void)
{
	return HILRUN_MISSING_VALUE;
}
