import Glibc

/// The eventfd other threads write to pull a loop out of epoll_wait when they queue a task.
/// Writes from any thread are safe: the descriptor lives as long as the EventLoop object.
final class Wakeup: Selectable, @unchecked Sendable {
    // @unchecked: `fd` is immutable; `handleEvents` runs on the loop thread only.
    let fd: Int32

    init() throws(IOError) {
        fd = try syscallChecked("eventfd") {
            LinuxCalls.eventfd(0, LinuxCalls.nonBlocking | LinuxCalls.closeOnExec)
        }
    }

    deinit { closeDescriptor(fd) }

    /// Any thread. EAGAIN means the counter is saturated, i.e. a wake-up is already pending,
    /// which is all we need; any other failure would be a bug (EBADF), so it is fatal rather
    /// than a silently lost wake-up.
    func signal() {
        var one: UInt64 = 1
        do {
            _ = try syscall("write(eventfd)") { Glibc.write(fd, &one, 8) }
        } catch {
            fatalError("PushPosix: \(error)")
        }
    }

    /// Loop thread: reset the counter so level-triggered epoll stops reporting it. The queued
    /// tasks are run by the loop at the end of the turn, not here.
    func handleEvents(_ events: UInt32) {
        var value: UInt64 = 0
        _ = try? syscall("read(eventfd)") { Glibc.read(fd, &value, 8) }
    }

    func closeForShutdown() {}
}
