/* The stall probe on its own: every millisecond, time a fixed piece of register arithmetic and
 * write "begin_ns duration_ns cpu_ns" per piece. Run one per vCPU, pinned, on an idle machine, to see
 * whether the machine itself stalls and whether all vCPUs stall together (scripts/bench/analysis.md).
 *
 *   cc -O2 -o /tmp/stall_probe scripts/bench/models/stall_probe.c
 *   taskset -c 0 /tmp/stall_probe 10 12000 /tmp/cpu0.txt & taskset -c 1 /tmp/stall_probe 10 12000 /tmp/cpu1.txt; wait
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static volatile uint64_t sink;

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s SECONDS ITERATIONS OUTPUT\n", argv[0]);
        return 2;
    }
    int seconds = atoi(argv[1]);
    long iterations = atol(argv[2]);
    FILE *out = fopen(argv[3], "w");
    if (!out) return 1;
    size_t capacity = (size_t)seconds * 1000 + 16, n = 0;
    uint64_t (*pieces)[3] = malloc(sizeof *pieces * capacity);
    uint64_t end = ns(CLOCK_MONOTONIC) + (uint64_t)seconds * 1000000000u;
    while (n < capacity && ns(CLOCK_MONOTONIC) < end) {
        uint64_t cpu0 = ns(CLOCK_THREAD_CPUTIME_ID), begin = ns(CLOCK_MONOTONIC), x = begin;
        for (long i = 0; i < iterations; i++) x = x * 6364136223846793005u + 1442695040888963407u;
        sink = x;
        uint64_t finish = ns(CLOCK_MONOTONIC);
        pieces[n][0] = begin;
        pieces[n][1] = finish - begin;
        pieces[n][2] = ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
        n++;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    for (size_t i = 0; i < n; i++) fprintf(out, "%lu %lu %lu\n", pieces[i][0], pieces[i][1], pieces[i][2]);
    fclose(out);
    free(pieces);
    return 0;
}
