/*
 * The floor of the serial scenarios: the least any client pays on this
 * machine to talk to the virtual board. hilbench compiles it with the
 * system's cc and runs it as one more side.
 *
 *   floor rtt PATH N WARMUP          write "echo ping-I", poll and read until
 *                                    "ping-I\r\nsim> "; samples_ns
 *   floor delay PATH DELAY_US N WARMUP
 *                                    write "echo aI", sleep to an absolute
 *                                    deadline, write "echo bI", read the reply;
 *                                    sleep_ns
 *   floor every PATH PERIOD_US N     write "echo pI" at t0 + I*PERIOD for
 *                                    I in 0..N-1, sleeping to each absolute
 *                                    deadline, draining what the board
 *                                    prints; sent_ns says when each write
 *                                    returned
 *
 * Sleeps are clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) with a timer
 * slack of 1 ns. Output is one JSON object on stdout, as the other sides
 * print.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int fd;
static char buf[1 << 16];
static size_t have;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(long long t)
{
	struct timespec ts = {t / 1000000000LL, t % 1000000000LL};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
	}
}

static void die(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(const char *s)
{
	size_t n = strlen(s), done = 0;
	while (done < n) {
		ssize_t k = write(fd, s + done, n - done);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die("write");
		}
		done += (size_t)k;
	}
}

/* expect reads until want is in what was read since the last match, then
 * drops everything up to its end. */
static void expect(const char *want)
{
	size_t wl = strlen(want);
	for (;;) {
		if (have >= wl) {
			char *m = memmem(buf, have, want, wl);
			if (m) {
				size_t end = (size_t)(m - buf) + wl;
				memmove(buf, buf + end, have - end);
				have -= end;
				return;
			}
		}
		if (have == sizeof buf) { /* keep the last wl-1 bytes */
			memmove(buf, buf + have - (wl - 1), wl - 1);
			have = wl - 1;
		}
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 10000) <= 0)
			die("poll (no reply within 10 s)");
		ssize_t k = read(fd, buf + have, sizeof buf - have);
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die("read");
		}
		if (k == 0) {
			errno = EIO;
			die("read");
		}
		have += (size_t)k;
	}
}

static void drain(void)
{
	char tmp[4096];
	while (read(fd, tmp, sizeof tmp) > 0) {
	}
	have = 0;
}

static void print(const char *key, long long *v, int n)
{
	printf("{\"%s\":[", key);
	for (int i = 0; i < n; i++)
		printf(i ? ",%lld" : "%lld", v[i]);
	printf("]}\n");
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return fprintf(stderr, "usage: floor rtt|delay|every PATH ...\n"), 2;
	const char *mode = argv[1];
	fd = open(argv[2], O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		die(argv[2]);
	struct termios t;
	if (tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		tcsetattr(fd, TCSANOW, &t);
	}
	prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	put("echo sync\n");
	expect("sync\r\nsim> ");
	char line[64], want[64];
	if (strcmp(mode, "rtt") == 0) {
		int n = atoi(argv[3]), warmup = atoi(argv[4]);
		long long *out = calloc((size_t)n + 1, sizeof *out);
		for (int i = 0; i < warmup + n; i++) {
			snprintf(line, sizeof line, "echo ping-%d\n", i);
			snprintf(want, sizeof want, "ping-%d\r\nsim> ", i);
			long long t0 = now_ns();
			put(line);
			expect(want);
			long long t1 = now_ns();
			if (i >= warmup)
				out[i - warmup] = t1 - t0;
		}
		print("samples_ns", out, n);
		return 0;
	}
	if (strcmp(mode, "delay") == 0 && argc >= 6) {
		long long d = atoll(argv[3]) * 1000;
		int n = atoi(argv[4]), warmup = atoi(argv[5]);
		long long *out = calloc((size_t)n + 1, sizeof *out);
		for (int i = 0; i < warmup + n; i++) {
			snprintf(line, sizeof line, "echo a%d\n", i);
			put(line);
			long long t0 = now_ns();
			sleep_until(t0 + d);
			long long t1 = now_ns();
			snprintf(line, sizeof line, "echo b%d\n", i);
			put(line);
			snprintf(want, sizeof want, "b%d\r\nsim> ", i);
			expect(want);
			if (i >= warmup)
				out[i - warmup] = t1 - t0;
		}
		print("sleep_ns", out, n);
		return 0;
	}
	if (strcmp(mode, "every") == 0) {
		long long p = atoll(argv[3]) * 1000;
		int n = atoi(argv[4]);
		long long *out = calloc((size_t)n + 1, sizeof *out);
		long long t0 = now_ns();
		for (int i = 0; i < n; i++) {
			sleep_until(t0 + i * p);
			snprintf(line, sizeof line, "echo p%d\n", i);
			put(line);
			out[i] = now_ns() - t0; /* when the write returned */
			drain();
		}
		snprintf(line, sizeof line, "echo end\n");
		put(line);
		expect("end\r\nsim> ");
		print("sent_ns", out, n);
		return 0;
	}
	fprintf(stderr, "floor: unknown mode %s\n", mode);
	return 2;
}
