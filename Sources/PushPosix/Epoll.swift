import CLinux
import Glibc
import Synchronization

/// An epoll instance. Each registration carries a 64-bit id (not the fd) in `epoll_data`, so
/// an event queued for a descriptor that was closed during this turn, and whose number was
/// reused, can never reach the new owner: the loop simply no longer knows the old id.
struct Epoll {
    let fd: Int32

    init() throws(IOError) {
        fd = try syscallChecked("epoll_create1") { LinuxCalls.epollCreate1(LinuxCalls.closeOnExec) }
    }

    func add(fd target: Int32, id: UInt64, events: UInt32) throws(IOError) {
        try control(LinuxCalls.epollCtlAdd, target, id, events, "epoll_ctl(ADD)")
    }

    func modify(fd target: Int32, id: UInt64, events: UInt32) throws(IOError) {
        try control(LinuxCalls.epollCtlMod, target, id, events, "epoll_ctl(MOD)")
    }

    func remove(fd target: Int32) throws(IOError) {
        try control(LinuxCalls.epollCtlDel, target, 0, 0, "epoll_ctl(DEL)")
    }

    private func control(
        _ op: Int32, _ target: Int32, _ id: UInt64, _ events: UInt32, _ reason: String
    ) throws(IOError) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = id
        _ = try syscallChecked(reason) { LinuxCalls.epollCtl(fd, op, target, &event) }
    }

    /// Whether `epoll_pwait2` (Linux 5.11) may be used; off for good, in every loop, once it has
    /// failed with ENOSYS or EPERM (an older kernel, or a seccomp profile that does not know it).
    private static let nanosecondWait = Atomic(true)

    /// Waits up to `timeoutNanos` (-1 = forever). A timer is due to the nanosecond, not rounded up
    /// to the next millisecond as `epoll_wait` would have it (a mock told to delay 20 ms answered
    /// after 20-21). An EINTR returns 0 events so the caller recomputes its timeout rather than
    /// sleeping for the stale one.
    func wait(into buffer: EpollEvents, timeoutNanos: Int64) -> Int {
        var n: Int32
        if timeoutNanos > 0 && Self.nanosecondWait.load(ordering: .relaxed) {
            var timeout = timespec(
                tv_sec: Int(timeoutNanos / 1_000_000_000), tv_nsec: Int(timeoutNanos % 1_000_000_000))
            n = LinuxCalls.epollWait(fd, buffer.storage.baseAddress, Int32(buffer.capacity), &timeout)
            if n < 0 && (Glibc.errno == ENOSYS || Glibc.errno == EPERM) {
                Self.nanosecondWait.store(false, ordering: .relaxed)
                return wait(into: buffer, timeoutNanos: timeoutNanos)
            }
        } else {
            // Rounded up so that the loop never wakes before its timer is due and spins.
            let millis =
                timeoutNanos <= 0
                ? Int32(timeoutNanos < 0 ? -1 : 0)
                : Int32(clamping: (timeoutNanos + 999_999) / 1_000_000)
            n = LinuxCalls.epollWait(fd, buffer.storage.baseAddress, Int32(buffer.capacity), millis)
        }
        if n >= 0 { return Int(n) }
        let code = Glibc.errno
        if code == EINTR { return 0 }
        // EBADF/EFAULT/EINVAL can only come from a bug in this module; carrying on would spin.
        fatalError("PushPosix: \(IOError(errno: code, reason: "epoll_wait"))")
    }
}

/// The array `epoll_wait` fills (`struct epoll_event` is packed on x86_64; Swift imports it with
/// the C layout through CLinux).
struct EpollEvents {
    let storage: UnsafeMutableBufferPointer<epoll_event>
    var capacity: Int { storage.count }

    init(capacity: Int) {
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: epoll_event())
    }

    func deallocate() { storage.deallocate() }

    func events(at index: Int) -> UInt32 { storage[index].events }

    func id(at index: Int) -> UInt64 { storage[index].data.u64 }
}
