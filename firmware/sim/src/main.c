/*
 * main.c - firmware of the hilrun virtual board.
 *
 * SysTick counts milliseconds into counter; while blink is non-zero the main
 * loop toggles the LED (GPIO pin 5) every 500 ms through BSRR. hilrun's board
 * model (pkg/sim) simulates this behaviour instead of executing the code;
 * this image exists so hilrun's tests have an ELF whose symbols sit where
 * the board model keeps the variables. The code itself is complete and would
 * run on a Cortex-M4 with an STM32-like GPIO port whose clock is enabled.
 */
#include "board.h"

/*
 * Fixed-address variables. Each gets its own input section, which sim.ld
 * places first in RAM in this order and checks with ASSERTs. The ".bss."
 * prefix makes the sections NOBITS, so they are zeroed at reset with .bss.
 */
#define FIXED_RAM(name) __attribute__((section(".bss.fixed." #name)))

volatile uint32_t counter FIXED_RAM(counter); /* 0x20000000 */
volatile uint32_t blink FIXED_RAM(blink);     /* 0x20000004 */

/*
 * Kept across warm resets: .noinit is neither loaded nor zeroed. boot_magic
 * tells a count left by an earlier boot from power-up garbage.
 */
#define BOOT_MAGIC 0xB007C0DEu
volatile uint32_t boot_count __attribute__((section(".noinit.boot_count")));
volatile uint32_t boot_magic __attribute__((section(".noinit.boot_magic")));

/* Firmware status, STATUS_* bits; written by the main loop only. */
volatile uint16_t status_word;

/*
 * Data for the host: tests read and write these by symbol to exercise
 * typed access (a byte array, a struct). The firmware's behaviour does not
 * depend on them.
 */
uint8_t led_pattern[8] = {1, 0, 1, 0, 1, 1, 0, 0};

struct sim_config config = {
	.magic = CONFIG_MAGIC,
	.blink_ms = BLINK_INTERVAL_MS,
	.led_pin = LED_PIN,
	.flags = CONFIG_FLAG_ECHO,
	.baud = 115200u,
	.reserved = 0u,
};

/* Version string in flash; matches what the board's shell prints. */
__attribute__((used)) const char fw_version[] = "hilrun-sim 1.0.0";

/* Milliseconds for the blink timer. Private, so a debugger writing counter
 * does not disturb the blink rhythm. */
static volatile uint32_t ticks;

void SysTick_Handler(void)
{
	counter++;
	ticks++;
}

static void led_init(void)
{
	uint32_t moder = GPIO_MODER;

	moder &= ~(0x3u << (2u * LED_PIN));
	moder |= MODER_OUTPUT << (2u * LED_PIN);
	GPIO_MODER = moder;
	GPIO_BSRR = LED_MASK << 16; /* LED off */
}

/* Toggle through BSRR so the write touches only the LED pin. */
static void led_toggle(void)
{
	if (GPIO_ODR & LED_MASK)
		GPIO_BSRR = LED_MASK << 16;
	else
		GPIO_BSRR = LED_MASK;
}

static void systick_init(void)
{
	SYST_RVR = CORE_CLOCK_HZ / TICK_HZ - 1u;
	SYST_CVR = 0u;
	SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
}

int main(void)
{
	uint32_t since;
	uint16_t status;

	if (boot_magic != BOOT_MAGIC) {
		boot_magic = BOOT_MAGIC;
		boot_count = 0u;
	}
	boot_count++;

	led_init();
	systick_init();

	since = ticks;
	for (;;) {
		uint32_t now = ticks;

		status = STATUS_RUNNING;
		if (blink == 0u) {
			since = now;
		} else {
			status |= STATUS_BLINKING;
			if (now - since >= BLINK_INTERVAL_MS) {
				since += BLINK_INTERVAL_MS;
				led_toggle();
			}
		}
		if (GPIO_ODR & LED_MASK)
			status |= STATUS_LED_ON;
		status_word = status;

		__asm__ volatile("wfi"); /* sleep until the next tick */
	}
}
