import Glibc

/// Linux calls that Swift's Glibc module does not import: its umbrella header leaves out
/// <sys/epoll.h>, <sys/eventfd.h>, <sys/signalfd.h>, and `accept4`/`pthread_setname_np` sit
/// behind _GNU_SOURCE. PushPosix may not depend on a C target, so we look the symbols up in
/// the already-loaded libc once and call them through correctly typed C function pointers
/// (exactly the C ABI, unlike `@_silgen_name`). Constants are the Linux UAPI values.
enum LinuxCalls {
    typealias EpollCreate1 = @convention(c) (Int32) -> Int32
    typealias EpollCtl = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias EpollWait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    typealias EventFD = @convention(c) (UInt32, Int32) -> Int32
    typealias SignalFD = @convention(c) (Int32, UnsafePointer<sigset_t>?, Int32) -> Int32
    typealias Accept4 = @convention(c) (
        Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32
    typealias SetThreadName = @convention(c) (pthread_t, UnsafePointer<CChar>?) -> Int32

    // `static let` initialisation is lazy and thread-safe (swift_once); C function pointers
    // are plain immutable addresses, so sharing them is safe.
    nonisolated(unsafe) static let epollCreate1: EpollCreate1 = symbol("epoll_create1")
    nonisolated(unsafe) static let epollCtl: EpollCtl = symbol("epoll_ctl")
    nonisolated(unsafe) static let epollWait: EpollWait = symbol("epoll_wait")
    nonisolated(unsafe) static let eventfd: EventFD = symbol("eventfd")
    nonisolated(unsafe) static let signalfd: SignalFD = symbol("signalfd")
    nonisolated(unsafe) static let accept4: Accept4 = symbol("accept4")
    nonisolated(unsafe) static let setThreadName: SetThreadName = symbol("pthread_setname_np")

    // <sys/epoll.h>
    static let EPOLLIN: UInt32 = 0x001
    static let EPOLLOUT: UInt32 = 0x004
    static let EPOLLERR: UInt32 = 0x008
    static let EPOLLHUP: UInt32 = 0x010
    static let EPOLL_CTL_ADD: Int32 = 1
    static let EPOLL_CTL_DEL: Int32 = 2
    static let EPOLL_CTL_MOD: Int32 = 3
    // O_CLOEXEC / O_NONBLOCK are shared by epoll_create1, eventfd, signalfd and accept4.
    static let CLOEXEC: Int32 = O_CLOEXEC
    static let NONBLOCK: Int32 = O_NONBLOCK

    /// sizeof(struct signalfd_siginfo); `ssi_signo` is its first field (uint32).
    static let signalfdSiginfoSize = 128

    private static func symbol<F>(_ name: String) -> F {
        // dlopen(NULL) is the main program plus everything already loaded, i.e. libc.
        guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, name) else {
            fatalError("PushPosix: libc symbol \(name) not found")
        }
        return unsafeBitCast(address, to: F.self)
    }
}
