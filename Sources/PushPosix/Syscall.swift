import Glibc

/// What a non-blocking call did: it made progress (with its result), or the kernel had
/// nothing for us yet (EAGAIN/EWOULDBLOCK) and we should wait for readiness.
enum IOResult<T> {
    case processed(T)
    case wouldBlock
}

/// Runs a syscall-style body (negative result plus `errno` on failure), retrying EINTR here
/// so no caller has to, mapping EAGAIN to `.wouldBlock`, and throwing everything else.
@inline(__always)
func syscall<T: FixedWidthInteger>(
    _ reason: @autoclosure () -> String, _ body: () -> T
) throws(IOError) -> IOResult<T> {
    while true {
        let result = body()
        if result >= 0 { return .processed(result) }
        let code = Glibc.errno
        switch code {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK: return .wouldBlock
        default: throw IOError(errno: code, reason: reason())
        }
    }
}

/// For calls that never legitimately return EAGAIN (socket, bind, epoll_ctl...): EINTR is
/// retried, any failure throws.
@inline(__always)
func syscallChecked<T: FixedWidthInteger>(
    _ reason: @autoclosure () -> String, _ body: () -> T
) throws(IOError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw IOError(errno: code, reason: reason())
    }
}

/// close(2) is the exception to "retry EINTR": on Linux the descriptor is released even when
/// close reports EINTR, and retrying could close a descriptor another thread just got.
/// Errors are ignored because there is nothing useful left to do with the descriptor.
@inline(__always)
func closeDescriptor(_ fd: Int32) {
    guard fd >= 0 else { return }
    _ = Glibc.close(fd)
}
