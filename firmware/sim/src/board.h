/*
 * board.h - the hilrun virtual board as the firmware sees it.
 *
 * The memory map matches hilrun's board model (pkg/sim/memory.go):
 * 128 KiB flash at 0x08000000, 64 KiB RAM at 0x20000000 and one GPIO port
 * at 0x48000000 laid out like an STM32 GPIO port, with the LED on pin 5.
 */
#ifndef HILRUN_SIM_BOARD_H
#define HILRUN_SIM_BOARD_H

#include <stdint.h> /* freestanding header: types only, no C library */

#define FLASH_BASE 0x08000000u
#define RAM_BASE   0x20000000u
#define RAM_SIZE   (64u * 1024u)
#define GPIO_BASE  0x48000000u

/* GPIO port registers. */
#define REG32(addr) (*(volatile uint32_t *)(addr))
#define GPIO_MODER  REG32(GPIO_BASE + 0x00u) /* pin modes, 2 bits a pin */
#define GPIO_IDR    REG32(GPIO_BASE + 0x10u) /* input data (read-only) */
#define GPIO_ODR    REG32(GPIO_BASE + 0x14u) /* output data */
#define GPIO_BSRR   REG32(GPIO_BASE + 0x18u) /* bit set (low 16) / reset (high 16) */

#define MODER_OUTPUT 0x1u
#define LED_PIN      5u
#define LED_MASK     (1u << LED_PIN)

/* Cortex-M SysTick, used for the 1 ms tick. */
#define SYST_CSR REG32(0xE000E010u) /* control and status */
#define SYST_RVR REG32(0xE000E014u) /* reload value */
#define SYST_CVR REG32(0xE000E018u) /* current value */
#define SYST_CSR_ENABLE    (1u << 0)
#define SYST_CSR_TICKINT   (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2) /* processor clock */

/* Core clock after reset (internal 16 MHz oscillator, no PLL). */
#define CORE_CLOCK_HZ 16000000u
#define TICK_HZ       1000u

/* Time between two LED toggles while blink is non-zero. */
#define BLINK_INTERVAL_MS 500u

/* Bits of status_word. */
#define STATUS_RUNNING  (1u << 0) /* main loop reached */
#define STATUS_BLINKING (1u << 1) /* blink is non-zero */
#define STATUS_LED_ON   (1u << 2) /* LED pin driven high */

/* Configuration block, 16 bytes. */
struct sim_config {
	uint32_t magic;     /* CONFIG_MAGIC when the block is valid */
	uint16_t blink_ms;  /* blink half-period in ms */
	uint8_t led_pin;    /* GPIO pin of the LED */
	uint8_t flags;      /* CONFIG_FLAG_* */
	uint32_t baud;      /* console baud rate */
	uint32_t reserved;  /* 0 */
};

#define CONFIG_MAGIC        0x48494C52u /* "HILR" read as a big-endian word */
#define CONFIG_FLAG_ECHO    (1u << 0)
#define CONFIG_FLAG_VERBOSE (1u << 1)

/*
 * The firmware's variables (counter, blink, ...) are defined in main.c and
 * deliberately not declared here: with no extern declaration in scope, each
 * one gets a single DWARF entry holding its name, type and address, which is
 * simpler for hilrun's tests to read.
 */
int main(void);

#endif /* HILRUN_SIM_BOARD_H */
