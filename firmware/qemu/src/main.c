/*
 * main.c - hilrun's QEMU firmware: a command shell on UART0 with the same
 * ideas as hilrun's virtual board (pkg/sim): a millisecond counter, a
 * blink flag, an LED, peek and poke, all reachable by a debugger through
 * the symbols below.
 *
 * SysTick counts milliseconds into counter and, while blink is non-zero,
 * toggles the LED every 500 ms. UART0's receive interrupt queues input;
 * the main loop sleeps (wfi) until input arrives, echoes it, edits the
 * line and runs it when it ends.
 */
#include "board.h"

/*
 * Fixed-address variables. Each gets its own input section, which qemu.ld
 * places first in RAM in this order and checks with ASSERTs. The ".bss."
 * prefix makes the sections NOBITS, so they are zeroed at reset with .bss.
 */
#define FIXED_RAM(name) __attribute__((section(".bss.fixed." #name)))

volatile uint32_t counter FIXED_RAM(counter); /* 0x20000000 ms since boot */
volatile uint32_t blink FIXED_RAM(blink);     /* 0x20000004 non-zero: LED toggles */
volatile uint32_t flag FIXED_RAM(flag);       /* 0x20000008 set by the flag command */
volatile uint32_t flag_at FIXED_RAM(flag_at); /* 0x2000000c uptime_ms when flag was set */

/* Firmware status, STATUS_* bits; written by SysTick. */
volatile uint16_t status_word;

/* Data for the host: tests read and write it by symbol to exercise typed
 * access to a byte array. The firmware's behaviour does not depend on it. */
uint8_t led_pattern[8] = {1, 0, 1, 0, 1, 1, 0, 0};

/* Version string in the image; printed by version and in the banner. */
__attribute__((used)) const char fw_version[] = "hilrun-qemu 1.0.0";

#define PROMPT "qemu> "
#define EOL    "\r\n"

/* Milliseconds since boot. Private, so a debugger writing counter does not
 * disturb the blink rhythm, uptime or a delayed flag. */
static volatile uint32_t ticks;
static volatile uint32_t blink_ms;

/* A flag command with a delay arms these; SysTick sets flag when due. */
static volatile uint32_t flag_armed, flag_value, flag_due;

/*
 * Input queue, filled by rx_drain. head is written by rx_drain only, tail
 * by the main loop only. Likewise ctrl_c_rx counts
 * the Ctrl-C bytes received and ctrl_c_seen those the main loop handled,
 * so a long command can see a Ctrl-C still in the queue and stop early.
 */
#define RXQ_SIZE 256u
static volatile uint8_t rxq[RXQ_SIZE];
static volatile uint32_t rxq_head, rxq_tail;
static volatile uint32_t ctrl_c_rx;
static uint32_t ctrl_c_seen;

static int ctrl_c_pending(void)
{
	return ctrl_c_rx != ctrl_c_seen;
}

/* A peek or poke in progress: a bus fault skips the access (fault()). */
static volatile uint32_t probing, probe_faulted;

#define CTRL_C   0x03u
#define LINE_MAX 128u

void SysTick_Handler(void)
{
	uint16_t status = STATUS_RUNNING;

	counter++;
	ticks++;
	if (blink != 0u) {
		status |= STATUS_BLINKING;
		if (++blink_ms >= BLINK_INTERVAL_MS) {
			blink_ms = 0u;
			FPGAIO_LED0 ^= LED_MASK;
		}
	} else {
		blink_ms = 0u;
	}
	if (flag_armed && ticks == flag_due) {
		flag = flag_value;
		flag_at = ticks;
		flag_armed = 0u;
	}
	if (FPGAIO_LED0 & LED_MASK)
		status |= STATUS_LED_ON;
	status_word = status;
}

/*
 * rx_drain moves received bytes from the UART into the input queue while
 * it has room. A byte that does not fit stays in the UART, which then
 * takes no more (QEMU keeps them in the pty) until the main loop makes
 * room and drains again: input is never dropped. Called by the receive
 * interrupt and, with interrupts masked, by the main loop.
 */
static void rx_drain(void)
{
	while (UART_STATE & UART_STATE_RXFULL) {
		uint32_t next = (rxq_head + 1u) % RXQ_SIZE;
		uint8_t c;

		if (next == rxq_tail)
			return;
		c = (uint8_t)UART_DATA;
		rxq[rxq_head] = c;
		rxq_head = next;
		if (c == CTRL_C)
			ctrl_c_rx++;
	}
}

void UART0_RX_Handler(void)
{
	/* Clear first: a byte that arrives after the drain raises it again. */
	UART_INTSTATUS = UART_INT_RX;
	rx_drain();
}

/* Wait for a byte of input, asleep until an interrupt. */
static uint8_t getc_wait(void)
{
	uint8_t c;

	__asm__ volatile("cpsid i" ::: "memory");
	rx_drain(); /* a byte left waiting while the queue was full */
	while (rxq_tail == rxq_head) {
		/* wfi wakes on a pending interrupt even with interrupts masked,
		 * so none can slip in between the test and the sleep. */
		__asm__ volatile("wfi\n cpsie i\n isb\n cpsid i" ::: "memory");
	}
	__asm__ volatile("cpsie i" ::: "memory");
	c = rxq[rxq_tail];
	rxq_tail = (rxq_tail + 1u) % RXQ_SIZE;
	return c;
}

static void putc_(char c)
{
	while (UART_STATE & UART_STATE_TXFULL)
		;
	UART_DATA = (uint8_t)c;
}

static void puts_(const char *s)
{
	while (*s)
		putc_(*s++);
}

static void put_dec(uint32_t v)
{
	char buf[11];
	unsigned i = sizeof(buf) - 1u;

	buf[i] = '\0';
	do {
		buf[--i] = (char)('0' + v % 10u);
		v /= 10u;
	} while (v != 0u);
	puts_(&buf[i]);
}

/* put_hex prints "0x" and v in digits hex digits. */
static void put_hex(uint32_t v, unsigned digits)
{
	static const char hex[] = "0123456789abcdef";

	puts_("0x");
	while (digits-- > 0u)
		putc_(hex[(v >> (4u * digits)) & 0xfu]);
}

/* Name and value lines, as in "counter: 42". */
static void put_field(const char *name, uint32_t v)
{
	puts_(name);
	puts_(": ");
	put_dec(v);
	puts_(EOL);
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/*
 * parse_u32 reads a decimal number or a "0x" hexadecimal one, all of s,
 * into *v; it returns 0 for anything else, a value over 32 bits included.
 */
static int parse_u32(const char *s, uint32_t *v)
{
	uint32_t base = 10u, n = 0u;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16u;
		s += 2;
	}
	if (*s == '\0')
		return 0;
	for (; *s; s++) {
		uint32_t d;

		if (*s >= '0' && *s <= '9')
			d = (uint32_t)(*s - '0');
		else if (base == 16u && *s >= 'a' && *s <= 'f')
			d = (uint32_t)(*s - 'a' + 10);
		else if (base == 16u && *s >= 'A' && *s <= 'F')
			d = (uint32_t)(*s - 'A' + 10);
		else
			return 0;
		if (n > (0xffffffffu - d) / base)
			return 0;
		n = n * base + d;
	}
	*v = n;
	return 1;
}

/*
 * Memory access that survives a bus fault: the access is one 16-bit
 * instruction, which fault() steps over while probing is set. *faulted
 * tells whether it did.
 */
static uint32_t probe_read(uint32_t addr, uint32_t width, int *faulted)
{
	uint32_t v = 0u;

	probe_faulted = 0u;
	probing = 1u;
	__asm__ volatile("" ::: "memory");
	if (width == 8u)
		__asm__ volatile("ldrb.n %0, [%1]" : "+l"(v) : "l"(addr) : "memory");
	else if (width == 16u)
		__asm__ volatile("ldrh.n %0, [%1]" : "+l"(v) : "l"(addr) : "memory");
	else
		__asm__ volatile("ldr.n %0, [%1]" : "+l"(v) : "l"(addr) : "memory");
	probing = 0u;
	*faulted = (int)probe_faulted;
	return v;
}

static void probe_write(uint32_t addr, uint32_t width, uint32_t v, int *faulted)
{
	probe_faulted = 0u;
	probing = 1u;
	__asm__ volatile("" ::: "memory");
	if (width == 8u)
		__asm__ volatile("strb.n %0, [%1]" : : "l"(v), "l"(addr) : "memory");
	else if (width == 16u)
		__asm__ volatile("strh.n %0, [%1]" : : "l"(v), "l"(addr) : "memory");
	else
		__asm__ volatile("str.n %0, [%1]" : : "l"(v), "l"(addr) : "memory");
	probing = 0u;
	*faulted = (int)probe_faulted;
}

static void reboot(void)
{
	puts_("Rebooting..." EOL);
	__asm__ volatile("dsb" ::: "memory");
	SCB_AIRCR = AIRCR_RESET;
	__asm__ volatile("dsb" ::: "memory");
	for (;;)
		;
}

/*
 * fault is called by HardFault_Handler with the exception frame. During a
 * peek or poke it marks the access failed and steps over it; otherwise it
 * reports the crash on the console and reboots.
 */
void fault(uint32_t *frame)
{
	if (probing) {
		probe_faulted = 1u;
		probing = 0u;
		frame[6] += 2u; /* the faulting 16-bit load or store */
		SCB_CFSR = SCB_CFSR;
		SCB_HFSR = SCB_HFSR;
		return;
	}
	puts_(EOL "HardFault: PC ");
	put_hex(frame[6], 8u);
	puts_(" LR ");
	put_hex(frame[5], 8u);
	puts_(" CFSR ");
	put_hex(SCB_CFSR, 8u);
	puts_(" HFSR ");
	put_hex(SCB_HFSR, 8u);
	puts_(EOL);
	reboot();
}

/* Wait ms milliseconds, or less if Ctrl-C arrives. */
static void sleep_ms(uint32_t ms)
{
	uint32_t start = ticks;

	while (ticks - start < ms && !ctrl_c_pending())
		__asm__ volatile("wfi");
}

static const char *const help_text[] = {
	"help                     list commands",
	"version                  print the firmware version",
	"echo [-n] TEXT           print TEXT (-n: without a line ending)",
	"led on|off               switch the LED",
	"blink on|off             start or stop blinking the LED every 500 ms",
	"status                   print LED, counter, blink, flag and uptime",
	"count                    print the millisecond counter",
	"flag [VALUE [MS]]        print flag, or set it to VALUE (after MS ms)",
	"peek ADDR [WIDTH]        read memory (WIDTH 8, 16 or 32 bits, default 32)",
	"poke ADDR VALUE [WIDTH]  write memory",
	"sleep MS                 wait MS milliseconds (Ctrl-C stops)",
	"reboot                   restart the firmware",
	"panic                    crash (HardFault), then reboot",
	"CMD; CMD                 run commands in turn",
};

static void banner(void)
{
	puts_("hilrun qemu board" EOL);
	puts_(fw_version);
	puts_(EOL "boot: ok" EOL EOL);
}

static void led_set(int on)
{
	if (on)
		FPGAIO_LED0 |= LED_MASK;
	else
		FPGAIO_LED0 &= ~LED_MASK;
}

static int on_off(const char *arg, int *on)
{
	if (arg != 0 && streq(arg, "on"))
		*on = 1;
	else if (arg != 0 && streq(arg, "off"))
		*on = 0;
	else
		return 0;
	return 1;
}

/* parse_width reads the optional WIDTH argument, in bits. */
static int parse_width(const char *arg, uint32_t *width)
{
	if (arg == 0) {
		*width = 32u;
		return 1;
	}
	if (parse_u32(arg, width) && (*width == 8u || *width == 16u || *width == 32u))
		return 1;
	puts_("invalid width: ");
	puts_(arg);
	puts_(" (want 8, 16 or 32)" EOL);
	return 0;
}

static int parse_arg(const char *what, const char *arg, uint32_t *v)
{
	if (parse_u32(arg, v))
		return 1;
	puts_("invalid ");
	puts_(what);
	puts_(": ");
	puts_(arg);
	puts_(EOL);
	return 0;
}

static void peek(int argc, char **argv)
{
	uint32_t addr, width, v;
	int faulted;

	if (argc < 2 || argc > 3) {
		puts_("usage: peek ADDR [WIDTH]" EOL);
		return;
	}
	if (!parse_arg("address", argv[1], &addr) || !parse_width(argc > 2 ? argv[2] : 0, &width))
		return;
	v = probe_read(addr, width, &faulted);
	if (faulted) {
		puts_("bus fault at ");
		put_hex(addr, 8u);
		puts_(EOL);
		return;
	}
	put_hex(addr, 8u);
	puts_(": ");
	put_hex(v, width / 4u);
	puts_(EOL);
}

static void poke(int argc, char **argv)
{
	uint32_t addr, width, v;
	int faulted;

	if (argc < 3 || argc > 4) {
		puts_("usage: poke ADDR VALUE [WIDTH]" EOL);
		return;
	}
	if (!parse_arg("address", argv[1], &addr) || !parse_arg("value", argv[2], &v) ||
	    !parse_width(argc > 3 ? argv[3] : 0, &width))
		return;
	if (width < 32u && v >> width != 0u) {
		puts_("value ");
		puts_(argv[2]);
		puts_(" does not fit in ");
		put_dec(width);
		puts_(" bits" EOL);
		return;
	}
	probe_write(addr, width, v, &faulted);
	if (faulted) {
		puts_("bus fault at ");
		put_hex(addr, 8u);
		puts_(EOL);
		return;
	}
	puts_("ok" EOL);
}

static void flag_cmd(int argc, char **argv)
{
	uint32_t v, ms = 0u;

	if (argc > 3) {
		puts_("usage: flag [VALUE [MS]]" EOL);
		return;
	}
	if (argc == 1) {
		put_field("flag", flag);
		return;
	}
	if (!parse_arg("value", argv[1], &v) || (argc == 3 && !parse_arg("delay", argv[2], &ms)))
		return;
	if (ms == 0u) {
		flag = v;
		flag_at = ticks;
		put_field("flag", v);
		return;
	}
	/* SysTick sets the flag; disarm while changing what it reads. */
	flag_armed = 0u;
	flag_value = v;
	flag_due = ticks + ms;
	flag_armed = 1u;
	puts_("flag: ");
	put_dec(v);
	puts_(" in ");
	put_dec(ms);
	puts_(" ms" EOL);
}

/* run_one runs one command, its words split in argv. */
static void run_one(int argc, char **argv, char *rest)
{
	const char *cmd = argv[0];
	int on;

	if (streq(cmd, "help")) {
		for (unsigned i = 0; i < sizeof(help_text) / sizeof(help_text[0]); i++) {
			puts_(help_text[i]);
			puts_(EOL);
		}
	} else if (streq(cmd, "version")) {
		puts_(fw_version);
		puts_(EOL);
	} else if (streq(cmd, "echo")) {
		if (rest[0] == '-' && rest[1] == 'n' && (rest[2] == '\0' || rest[2] == ' ')) {
			rest += 2;
			while (*rest == ' ')
				rest++;
			puts_(rest);
		} else {
			puts_(rest);
			puts_(EOL);
		}
	} else if (streq(cmd, "led")) {
		if (argc != 2 || !on_off(argv[1], &on)) {
			puts_("usage: led on|off" EOL);
			return;
		}
		led_set(on);
		puts_(on ? "led: on" EOL : "led: off" EOL);
	} else if (streq(cmd, "blink")) {
		if (argc != 2 || !on_off(argv[1], &on)) {
			puts_("usage: blink on|off" EOL);
			return;
		}
		blink = (uint32_t)on;
		if (!on)
			led_set(0);
		put_field("blink", blink);
	} else if (streq(cmd, "status")) {
		puts_(FPGAIO_LED0 & LED_MASK ? "led: on" EOL : "led: off" EOL);
		put_field("counter", counter);
		put_field("blink", blink);
		put_field("flag", flag);
		put_field("uptime_ms", ticks);
	} else if (streq(cmd, "count")) {
		put_field("counter", counter);
	} else if (streq(cmd, "flag")) {
		flag_cmd(argc, argv);
	} else if (streq(cmd, "peek")) {
		peek(argc, argv);
	} else if (streq(cmd, "poke")) {
		poke(argc, argv);
	} else if (streq(cmd, "sleep")) {
		uint32_t ms;

		if (argc != 2) {
			puts_("usage: sleep MS" EOL);
			return;
		}
		if (parse_arg("duration", argv[1], &ms))
			sleep_ms(ms);
	} else if (streq(cmd, "reboot")) {
		reboot();
	} else if (streq(cmd, "panic")) {
		__asm__ volatile("udf #0");
	} else {
		puts_("unknown command: ");
		puts_(cmd);
		puts_(" (try help)" EOL);
	}
}

/*
 * split copies s into buf and splits the copy into words at blanks, after
 * the n words argv already holds; it returns the number of words, at most
 * max.
 */
static int split(const char *s, char *buf, char **argv, int n, int max)
{
	char *p = buf;

	while (*s)
		*p++ = *s++;
	*p = '\0';
	for (p = buf; *p && n < max;) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (*p == '\0')
			break;
		argv[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	return n;
}

/*
 * run_line runs the commands of a line, separated by ';'. It cuts the line
 * in place; echo gets the text after its name unsplit, the other commands
 * its words.
 */
static void run_line(char *line)
{
	static char words[LINE_MAX + 1u];

	while (*line) {
		char *end = line, *rest, *argv[8];
		int last;

		while (*end && *end != ';')
			end++;
		last = *end == '\0';
		*end = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		/* The command's name, then the rest as echo prints it. */
		for (rest = line; *rest && *rest != ' ' && *rest != '\t'; rest++)
			;
		if (*rest) {
			*rest++ = '\0';
			while (*rest == ' ' || *rest == '\t')
				rest++;
		}
		if (*line) {
			argv[0] = line;
			run_one(split(rest, words, argv, 1, 8), argv, rest);
		}
		if (last || ctrl_c_pending())
			return;
		line = end + 1;
	}
}

int main(void)
{
	static char line[LINE_MAX + 1u];
	unsigned len = 0;
	int last_cr = 0;

	UART_BAUDDIV = 16u; /* QEMU's CMSDK UART wants at least 16 */
	UART_CTRL = UART_CTRL_TXEN | UART_CTRL_RXEN | UART_CTRL_RXINTEN;
	NVIC_ISER0 = 1u << UART0_RX_IRQ;
	SYST_RVR = CORE_CLOCK_HZ / TICK_HZ - 1u;
	SYST_CVR = 0u;
	SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;

	banner();
	puts_(PROMPT);
	for (;;) {
		uint8_t c = getc_wait();

		if (c == '\n' && last_cr) {
			last_cr = 0; /* the second half of "\r\n" */
			continue;
		}
		last_cr = c == '\r';
		if (c == CTRL_C) {
			ctrl_c_seen++;
			len = 0;
			puts_("^C" EOL PROMPT);
		} else if (c == '\r' || c == '\n') {
			puts_(EOL);
			line[len] = '\0';
			len = 0;
			run_line(line);
			/* A Ctrl-C still queued prints the prompt when handled. */
			if (!ctrl_c_pending())
				puts_(PROMPT);
		} else if (c == '\b' || c == 0x7fu) {
			if (len > 0u) {
				len--;
				puts_("\b \b");
			}
		} else if (c >= 0x20u && c < 0x7fu) {
			/* Past LINE_MAX the line is full: bytes are dropped, as
			 * on a firmware with a fixed line buffer. */
			if (len < LINE_MAX) {
				line[len++] = (char)c;
				putc_((char)c);
			}
		} else if (c == '\t') {
			if (len < LINE_MAX) {
				line[len++] = ' ';
				putc_(' ');
			}
		}
	}
}
