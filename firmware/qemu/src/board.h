/*
 * board.h - the MPS2 AN385 board (Cortex-M3) as QEMU emulates it
 * (qemu-system-arm -M mps2-an385), as far as hilrun's QEMU firmware uses it.
 *
 * Memory map: 4 MiB SSRAM1 at 0x00000000 holds the image (QEMU loads the
 * ELF there; the CPU takes its stack pointer and reset vector from the
 * first two words), 4 MiB SSRAM2/3 at 0x20000000 is RAM (the firmware
 * uses the first 64 KiB), the CMSDK APB UART0 at 0x40004000 is the
 * console, and the FPGA I/O block at 0x40028000 holds the LEDs.
 */
#ifndef HILRUN_QEMU_BOARD_H
#define HILRUN_QEMU_BOARD_H

#include <stdint.h> /* freestanding header: types only, no C library */

#define REG32(addr) (*(volatile uint32_t *)(addr))

/* CMSDK APB UART0. */
#define UART0_BASE     0x40004000u
#define UART_DATA      REG32(UART0_BASE + 0x00u)
#define UART_STATE     REG32(UART0_BASE + 0x04u)
#define UART_CTRL      REG32(UART0_BASE + 0x08u)
#define UART_INTSTATUS REG32(UART0_BASE + 0x0cu) /* write 1 to clear */
#define UART_BAUDDIV   REG32(UART0_BASE + 0x10u)
#define UART_STATE_TXFULL (1u << 0)
#define UART_STATE_RXFULL (1u << 1)
#define UART_CTRL_TXEN    (1u << 0)
#define UART_CTRL_RXEN    (1u << 1)
#define UART_CTRL_RXINTEN (1u << 3)
#define UART_INT_RX       (1u << 1)
#define UART0_RX_IRQ      0u /* external interrupt number */

/* FPGA I/O: LED0 holds the two user LEDs, bit 0 is the firmware's LED. */
#define FPGAIO_BASE 0x40028000u
#define FPGAIO_LED0 REG32(FPGAIO_BASE + 0x00u)
#define LED_MASK    (1u << 0)

/* Cortex-M3 system control space. */
#define SYST_CSR   REG32(0xE000E010u) /* SysTick control and status */
#define SYST_RVR   REG32(0xE000E014u) /* SysTick reload value */
#define SYST_CVR   REG32(0xE000E018u) /* SysTick current value */
#define SYST_CSR_ENABLE    (1u << 0)
#define SYST_CSR_TICKINT   (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2) /* processor clock */
#define NVIC_ISER0 REG32(0xE000E100u)
#define SCB_AIRCR  REG32(0xE000ED0Cu)
#define SCB_CFSR   REG32(0xE000ED28u) /* configurable fault status, write 1 to clear */
#define SCB_HFSR   REG32(0xE000ED2Cu) /* hard fault status, write 1 to clear */
#define SCB_BFAR   REG32(0xE000ED38u) /* bus fault address */
#define AIRCR_RESET (0x05FAu << 16 | 1u << 2) /* VECTKEY, SYSRESETREQ */

/* The AN385 runs its core at 25 MHz. */
#define CORE_CLOCK_HZ 25000000u
#define TICK_HZ       1000u

/* Time between two LED toggles while blink is non-zero. */
#define BLINK_INTERVAL_MS 500u

/* Bits of status_word. */
#define STATUS_RUNNING  (1u << 0) /* the shell is running */
#define STATUS_BLINKING (1u << 1) /* blink is non-zero */
#define STATUS_LED_ON   (1u << 2) /* the LED is on */

/* Shared between startup.c and main.c. */
int main(void);
void fault(uint32_t *frame);

#endif /* HILRUN_QEMU_BOARD_H */
