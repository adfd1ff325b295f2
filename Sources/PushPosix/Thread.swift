public import CLinux
import Glibc

/// Starts a POSIX thread running `body`. The closure is kept alive by the thread until it returns.
/// - Throws: `IOError` when the thread cannot be created (`what` names it in the message).
public func startThread(_ what: String, _ body: @escaping () -> Void) throws -> pthread_t {
    final class Start {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Start(body)).toOpaque()
    let rc = pthread_create(
        &thread, nil,
        { context in
            Unmanaged<Start>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
    guard rc == 0 else {
        Unmanaged<Start>.fromOpaque(context).release()
        throw IOError(errno: rc, reason: "pthread_create(\(what))")
    }
    return thread
}
