/* Linux calls that Swift's Glibc module leaves out: its umbrella header has no <sys/epoll.h>,
 * <sys/eventfd.h>, <sys/signalfd.h> or <sys/random.h> (getrandom), and accept4 / pthread_setname_np sit behind _GNU_SOURCE
 * (which the already-built Glibc module was compiled without, so they are declared here). */
#pragma once
/* Glibc's module first: the headers it already has (<sys/socket.h>, <pthread.h>, the types the
 * others include) then belong to it alone. Included again here, `sockaddr` and its kin were also
 * CLinux's, and which of the two modules a file's compiler took them from depended on how the
 * build split the files (MemberImportVisibility then failed a clean build of PushPosix). */
#pragma clang module import SwiftGlibc
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <pthread.h>

int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
int pthread_setname_np(pthread_t thread, const char *name);
