/*
 * startup.c - vector table and reset handler of the hilrun virtual board
 * firmware. No C library: .data is copied and .bss zeroed by hand.
 */
#include "board.h"

/* Defined by sim.ld. */
extern uint32_t _estack;           /* top of RAM, initial stack pointer */
extern uint32_t _sidata;           /* load address of .data in flash */
extern uint32_t _sdata, _edata;    /* .data in RAM */
extern uint32_t _sbss, _ebss;      /* .bss in RAM, fixed variables first */

void Reset_Handler(void);
void Default_Handler(void);

/* Every handler but reset defaults to Default_Handler; a strong definition
 * elsewhere (SysTick_Handler in main.c) takes its place. */
#define WEAK_HANDLER __attribute__((weak, alias("Default_Handler")))
void NMI_Handler(void) WEAK_HANDLER;
void HardFault_Handler(void) WEAK_HANDLER;
void MemManage_Handler(void) WEAK_HANDLER;
void BusFault_Handler(void) WEAK_HANDLER;
void UsageFault_Handler(void) WEAK_HANDLER;
void SVC_Handler(void) WEAK_HANDLER;
void DebugMon_Handler(void) WEAK_HANDLER;
void PendSV_Handler(void) WEAK_HANDLER;
void SysTick_Handler(void) WEAK_HANDLER;

/* An entry of the vector table: the initial stack pointer or a handler. */
typedef union {
	uint32_t *stack;
	void (*handler)(void);
} vector_t;

/*
 * 16 system exceptions and 48 interrupts: 64 words, 0x100 bytes, so
 * Reset_Handler follows at 0x08000100 (sim.ld checks it). hilrun's board
 * model powers up with flash holding exactly these first two words:
 * stack pointer 0x20010000, reset vector 0x08000101.
 */
#define VECTORS 64
__attribute__((section(".isr_vector"), used))
const vector_t vector_table[VECTORS] = {
	[0] = {.stack = &_estack},
	[1] = {.handler = Reset_Handler},
	[2] = {.handler = NMI_Handler},
	[3] = {.handler = HardFault_Handler},
	[4] = {.handler = MemManage_Handler},
	[5] = {.handler = BusFault_Handler},
	[6] = {.handler = UsageFault_Handler},
	/* 7-10 reserved */
	[11] = {.handler = SVC_Handler},
	[12] = {.handler = DebugMon_Handler},
	/* 13 reserved */
	[14] = {.handler = PendSV_Handler},
	[15] = {.handler = SysTick_Handler},
	[16 ... VECTORS - 1] = {.handler = Default_Handler},
};

void Reset_Handler(void)
{
	const uint32_t *src = &_sidata;
	uint32_t *dst;

	for (dst = &_sdata; dst < &_edata;)
		*dst++ = *src++;
	for (dst = &_sbss; dst < &_ebss;)
		*dst++ = 0u;

	main();
	for (;;)
		;
}

/* Unexpected exception or interrupt: spin here for the debugger to find. */
void Default_Handler(void)
{
	for (;;)
		;
}
