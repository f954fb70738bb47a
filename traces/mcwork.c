/* mcwork: small workloads for the CID-model captures of cidscope (traces/CAPTURES.md).
 *   mcwork spin1   SECS                  main + 1 thread that pins itself to the last CPU and spins (V3)
 *   mcwork workers N BUSY_US SLEEP_US SECS  N threads: busy BUSY_US, sleep SLEEP_US (V5: 4 300 200 1.0)
 *   mcwork hogs    SECS N                N busy threads
 *   mcwork churn   SECS BATCH            BATCH threads spin 200 us and exit, joined, 5 ms pause, repeat
 *   mcwork migrate SECS                  a busy thread flips its own affinity CPU0 <-> last CPU every
 *                                        100 ms, a sibling sleeps 2 ms / spins 50 us
 *   mcwork forks   SECS NPROC            NPROC child processes (fork, no exec), 2 threads each
 * glibc >= 2.35 registers rseq in every thread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secs;
static struct timespec t0;
static long busy_us = 300, sleep_us_ = 200;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
}

static void spin_for(double s)
{
	double end = now() + s;
	volatile unsigned long x = 0;
	while (now() < end)
		for (int i = 0; i < 200; i++)
			x++;
}

static void sleep_us(long us)
{
	struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&t, NULL);
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static long ncpu(void) { return sysconf(_SC_NPROCESSORS_ONLN); }

static void *spinner(void *a)
{
	(void)a;
	pin(ncpu() - 1);
	spin_for(secs - now());
	return NULL;
}

static void *worker(void *a)
{
	(void)a;
	while (now() < secs) {
		spin_for(busy_us / 1e6);
		sleep_us(sleep_us_);
	}
	return NULL;
}

static void *hog(void *a)
{
	(void)a;
	spin_for(secs - now());
	return NULL;
}

static void *short_lived(void *a)
{
	(void)a;
	spin_for(0.0002);
	return NULL;
}

static void *migrator(void *a)
{
	(void)a;
	int k = 0;
	while (now() < secs) {
		pin(k++ % 2 ? (int)ncpu() - 1 : 0);
		spin_for(0.1);
	}
	return NULL;
}

static void *sleeper(void *a)
{
	long us = (long)a;
	while (now() < secs) {
		spin_for(0.00005);
		sleep_us(us);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	if (argc < 3) {
		fprintf(stderr, "usage: see the comment at the top of mcwork.c\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const char *mode = argv[1];
	if (!strcmp(mode, "workers")) {
		int n = atoi(argv[2]);
		busy_us = atol(argv[3]);
		sleep_us_ = atol(argv[4]);
		secs = atof(argv[5]);
		for (int i = 0; i < n && i < 64; i++)
			pthread_create(&th[i], NULL, worker, NULL);
		for (int i = 0; i < n && i < 64; i++)
			pthread_join(th[i], NULL);
		return 0;
	}
	secs = atof(argv[2]);
	int n = argc > 3 ? atoi(argv[3]) : 4;
	if (n > 64)
		n = 64;
	if (!strcmp(mode, "spin1")) {
		pthread_create(&th[0], NULL, spinner, NULL);
		pthread_join(th[0], NULL);
	} else if (!strcmp(mode, "hogs")) {
		for (int i = 0; i < n; i++)
			pthread_create(&th[i], NULL, hog, NULL);
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	} else if (!strcmp(mode, "churn")) {
		while (now() < secs) {
			for (int i = 0; i < n; i++)
				pthread_create(&th[i], NULL, short_lived, NULL);
			for (int i = 0; i < n; i++)
				pthread_join(th[i], NULL);
			sleep_us(5000);
		}
	} else if (!strcmp(mode, "migrate")) {
		pthread_create(&th[0], NULL, migrator, NULL);
		pthread_create(&th[1], NULL, sleeper, (void *)2000L);
		pthread_join(th[0], NULL);
		pthread_join(th[1], NULL);
	} else if (!strcmp(mode, "forks")) {
		for (int p = 0; p < n; p++) {
			if (fork() == 0) {
				pthread_create(&th[0], NULL, sleeper, (void *)1500L);
				pthread_create(&th[1], NULL, sleeper, (void *)3000L);
				spin_for(secs / 4);
				while (now() < secs)
					sleep_us(5000), spin_for(0.002);
				pthread_join(th[0], NULL);
				pthread_join(th[1], NULL);
				_exit(0);
			}
		}
		while (wait(NULL) > 0)
			;
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
