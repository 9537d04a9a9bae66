/*
 * startup.c - vector table, reset handler and fault entry of hilrun's QEMU
 * firmware. No C library: .data is copied and .bss zeroed by hand.
 */
#include "board.h"

/* Defined by qemu.ld. */
extern uint32_t _estack;        /* top of the RAM in use, initial stack pointer */
extern uint32_t _sidata;        /* load address of .data in the image */
extern uint32_t _sdata, _edata; /* .data in RAM */
extern uint32_t _sbss, _ebss;   /* .bss in RAM, fixed variables first */

void Reset_Handler(void);
void Default_Handler(void);
void HardFault_Handler(void);

/* Every handler but reset and hard fault defaults to Default_Handler; a
 * strong definition in main.c takes its place. */
#define WEAK_HANDLER __attribute__((weak, alias("Default_Handler")))
void NMI_Handler(void) WEAK_HANDLER;
void MemManage_Handler(void) WEAK_HANDLER;
void BusFault_Handler(void) WEAK_HANDLER;
void UsageFault_Handler(void) WEAK_HANDLER;
void SVC_Handler(void) WEAK_HANDLER;
void DebugMon_Handler(void) WEAK_HANDLER;
void PendSV_Handler(void) WEAK_HANDLER;
void SysTick_Handler(void) WEAK_HANDLER;
void UART0_RX_Handler(void) WEAK_HANDLER;

/* An entry of the vector table: the initial stack pointer or a handler. */
typedef union {
	uint32_t *stack;
	void (*handler)(void);
} vector_t;

/*
 * 16 system exceptions and 48 interrupts: 64 words, 0x100 bytes, so
 * Reset_Handler follows at 0x00000100 (qemu.ld checks it). The AN385 has
 * 32 external interrupts; UART0's receive interrupt is number 0 (board.h).
 */
#define VECTORS 64
_Static_assert(UART0_RX_IRQ == 0u, "the vector table below expects UART0 RX at 0");
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
	[16 + UART0_RX_IRQ] = {.handler = UART0_RX_Handler},
	/* UART0_RX_IRQ is 0, so the defaults start right after it. */
	[17 ... VECTORS - 1] = {.handler = Default_Handler},
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

/*
 * Hard fault: hand the exception frame (r0-r3, r12, lr, pc, xpsr) on the
 * stack in use to fault() in main.c. When fault() returns, the exception
 * returns through the frame, with the PC fault() may have moved.
 */
__attribute__((naked)) void HardFault_Handler(void)
{
	__asm__ volatile(
		"tst lr, #4\n"
		"ite eq\n"
		"mrseq r0, msp\n"
		"mrsne r0, psp\n"
		"b fault\n");
}

/* Unexpected exception or interrupt: spin here for the debugger to find. */
void Default_Handler(void)
{
	for (;;)
		;
}
