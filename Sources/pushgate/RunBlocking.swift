import Dispatch
import PushSync

/// Runs async work from the synchronous command line and waits for it on the calling thread.
///
/// main.swift stays synchronous on purpose: `serve` must block SIGINT/SIGTERM/SIGHUP before any other
/// thread exists (every thread inherits the mask, so only the main thread's sigwait sees them), and
/// an async top level would start the concurrency runtime's threads first.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Locked<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}
