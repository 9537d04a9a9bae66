/*
 * overflow.c - broken variant of the hilrun virtual board firmware: a buffer
 * larger than the board's 64 KiB RAM, so linking with sim.ld fails because
 * the RAM region overflows.
 */
#include "board.h"

uint8_t overflow_buffer[RAM_SIZE + 1024u];

uint8_t overflow_first(void)
{
	return overflow_buffer[0];
}
