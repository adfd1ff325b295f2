/* LD_PRELOAD into `pushgate serve` by test_webpush_addresses.py: a system resolver that takes 3 s
 * for any name ending in ".slow.test" (answering 127.0.0.1), and logs each such lookup to the file
 * SLOW_DNS_LOG names, one name a line. Every other name goes to glibc's getaddrinfo. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*getaddrinfo_fn)(const char *, const char *, const struct addrinfo *, struct addrinfo **);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res) {
    getaddrinfo_fn real = (getaddrinfo_fn)dlsym(RTLD_NEXT, "getaddrinfo");
    static const char suffix[] = ".slow.test";
    size_t length = node ? strlen(node) : 0, suffix_length = sizeof suffix - 1;
    if (length < suffix_length || strcmp(node + length - suffix_length, suffix) != 0) {
        return real(node, service, hints, res);
    }
    const char *log = getenv("SLOW_DNS_LOG");
    if (log) {
        int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd >= 0) {
            dprintf(fd, "%s\n", node);
            close(fd);
        }
    }
    sleep(3);
    return real("127.0.0.1", service, hints, res);
}
