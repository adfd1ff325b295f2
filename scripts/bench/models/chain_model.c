/* A model of `pushgate bench --rate` without Pushgate: three processes chained like the bench
 * (client -> "gateway" -> "mock" -> "gateway" -> client) over Unix stream sockets, the client sending
 * one request every 1/rate s on a fixed schedule, each stage spinning a fixed time per request (no
 * batching, no I/O but the one-byte messages). Prints the request latency percentiles, measured from
 * each request's due time. It shows what latency tail the machine alone allows for a given amount of
 * work per request (scripts/bench/analysis.md).
 *
 *   cc -O2 -o /tmp/chain_model scripts/bench/models/chain_model.c
 *   /tmp/chain_model CLIENT_US GATEWAY_US MOCK_US [SECONDS=8] [RATE=1000]
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double ns_per_step;
static volatile uint64_t sink;

/* xorshift64 steps: dependent register arithmetic the compiler cannot shortcut. */
static void spin(double microseconds) {
    uint64_t steps = (uint64_t)(microseconds * 1000 / ns_per_step), x = 88172645463325252u;
    for (uint64_t i = 0; i < steps; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
    sink = x;
}

static void calibrate(void) {
    uint64_t steps = 20000000, x = 1, start = now_ns();
    for (uint64_t i = 0; i < steps; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
    sink = x;
    ns_per_step = (double)(now_ns() - start) / (double)steps;
}

static void wait_readable(int fd) {
    struct pollfd p = {fd, POLLIN, 0};
    poll(&p, 1, -1);
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s CLIENT_US GATEWAY_US MOCK_US [SECONDS] [RATE]\n", argv[0]);
        return 2;
    }
    double client_us = atof(argv[1]), gateway_us = atof(argv[2]), mock_us = atof(argv[3]);
    int seconds = argc > 4 ? atoi(argv[4]) : 8, rate = argc > 5 ? atoi(argv[5]) : 1000;
    calibrate();
    int front[2], back[2];
    char byte[64];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, front) || socketpair(AF_UNIX, SOCK_STREAM, 0, back)) return 1;
    pid_t mock = fork();
    if (mock == 0) {
        for (;;) {
            wait_readable(back[1]);
            if (read(back[1], byte, sizeof byte) <= 0) _exit(0);
            spin(mock_us);
            if (write(back[1], byte, 1) != 1) _exit(1);
        }
    }
    pid_t gateway = fork();
    if (gateway == 0) {
        /* 60 % of its work before forwarding a request, 40 % after the answer. */
        struct pollfd p[2] = {{front[1], POLLIN, 0}, {back[0], POLLIN, 0}};
        for (;;) {
            poll(p, 2, -1);
            if (p[0].revents) {
                if (read(front[1], byte, sizeof byte) <= 0) _exit(0);
                spin(gateway_us * 0.6);
                if (write(back[0], byte, 1) != 1) _exit(1);
            }
            if (p[1].revents) {
                if (read(back[0], byte, sizeof byte) <= 0) _exit(0);
                spin(gateway_us * 0.4);
                if (write(front[1], byte, 1) != 1) _exit(1);
            }
        }
    }
    int n = seconds * rate;
    uint64_t *latency = malloc(sizeof(uint64_t) * (size_t)n), step = 1000000000u / (uint64_t)rate;
    uint64_t start = now_ns() + 10000000;
    for (int i = 0; i < n; i++) {
        uint64_t due = start + (uint64_t)i * step, t;
        while ((t = now_ns()) < due) {
            if (due - t > 60000) {
                struct timespec pause = {0, (long)(due - t - 50000)};
                nanosleep(&pause, NULL);
            }
        }
        spin(client_us * 0.5);
        if (write(front[0], "x", 1) != 1) return 1;
        wait_readable(front[0]);
        if (read(front[0], byte, sizeof byte) <= 0) return 1;
        spin(client_us * 0.5);
        latency[i] = now_ns() - due;
    }
    qsort(latency, (size_t)n, sizeof(uint64_t), by_value);
    printf("spin client/gateway/mock %.0f/%.0f/%.0f us at %d/s: p50 %.0f us  p90 %.0f  p99 %.0f  p999 %.0f  max %.0f\n",
           client_us, gateway_us, mock_us, rate, latency[n / 2] / 1e3, latency[n * 9 / 10] / 1e3,
           latency[n * 99 / 100] / 1e3, latency[n * 999 / 1000] / 1e3, latency[n - 1] / 1e3);
    kill(mock, SIGTERM);
    kill(gateway, SIGTERM);
    waitpid(mock, NULL, 0);
    waitpid(gateway, NULL, 0);
    free(latency);
    return 0;
}
