import CLinux
import Glibc

/// The Linux calls and constants PushPosix uses beyond Glibc, from the `CLinux` shim (Swift's Glibc
/// module leaves out epoll, eventfd, signalfd and the _GNU_SOURCE calls).
enum LinuxCalls {
    static func epollCreate1(_ flags: Int32) -> Int32 { epoll_create1(flags) }

    static func epollCtl(_ epfd: Int32, _ op: Int32, _ fd: Int32, _ event: UnsafeMutablePointer<epoll_event>?) -> Int32
    {
        epoll_ctl(epfd, op, fd, event)
    }

    static func epollWait(
        _ epfd: Int32, _ events: UnsafeMutablePointer<epoll_event>?, _ capacity: Int32, _ timeout: Int32
    ) -> Int32 {
        epoll_wait(epfd, events, capacity, timeout)
    }

    static func epollWait(
        _ epfd: Int32, _ events: UnsafeMutablePointer<epoll_event>?, _ capacity: Int32,
        _ timeout: UnsafePointer<timespec>
    ) -> Int32 {
        epoll_pwait2(epfd, events, capacity, timeout, nil)
    }

    static func eventfd(_ initial: UInt32, _ flags: Int32) -> Int32 { CLinux.eventfd(initial, flags) }

    static func signalfd(_ fd: Int32, _ mask: UnsafePointer<sigset_t>, _ flags: Int32) -> Int32 {
        CLinux.signalfd(fd, mask, flags)
    }

    static func accept4(
        _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: UnsafeMutablePointer<socklen_t>?,
        _ flags: Int32
    ) -> Int32 {
        CLinux.accept4(fd, address, length, flags)
    }

    static func setThreadName(_ thread: pthread_t, _ name: UnsafePointer<CChar>?) -> Int32 {
        pthread_setname_np(thread, name)
    }

    static let epollIn = CLinux.EPOLLIN.rawValue
    static let epollOut = CLinux.EPOLLOUT.rawValue
    static let epollErr = CLinux.EPOLLERR.rawValue
    static let epollHup = CLinux.EPOLLHUP.rawValue
    static let epollCtlAdd = CLinux.EPOLL_CTL_ADD
    static let epollCtlDel = CLinux.EPOLL_CTL_DEL
    static let epollCtlMod = CLinux.EPOLL_CTL_MOD
    // O_CLOEXEC / O_NONBLOCK are the values epoll_create1, eventfd, signalfd and accept4 take.
    static let closeOnExec: Int32 = O_CLOEXEC
    static let nonBlocking: Int32 = O_NONBLOCK

    static let signalfdSiginfoSize = MemoryLayout<signalfd_siginfo>.size
}
