import Glibc
import PushSync

/// Resolves host names for connections, off the event loops: getaddrinfo blocks its thread for as
/// long as the system's resolver takes (seconds, when a DNS server is slow), and on a loop that
/// would stall every connection and call the loop serves. Here each lookup runs on a thread of its
/// own (at most ``Configuration/concurrentLookups`` at once, the rest wait their turn), its answer
/// goes back to the asking loop as a task, and only the connections waiting for that name wait.
///
/// Concurrent lookups of one name share one query. Answers are kept for
/// ``Configuration/cacheTime`` (getaddrinfo gives no TTL), for at most
/// ``Configuration/cacheEntries`` names; failures are not kept. A connection waits at most
/// ``Configuration/timeLimit`` for an answer: getaddrinfo cannot be cancelled, so its thread
/// carries on, and what it finds is kept for the next connection.
///
/// The decisions are ``ResolverTable``'s (a plain value); this class runs its threads and timers.
public final class HostResolver: Sendable {
    /// Every default is stated.
    public struct Configuration: Sendable {
        /// How long an answer is reused. Default 60 s.
        public var cacheTime: Duration = .seconds(60)
        /// Names whose answers are kept at once; past it the oldest goes. Default 1024.
        public var cacheEntries = 1024
        /// How long a connection waits for an answer before failing with ETIMEDOUT. Default 5 s.
        public var timeLimit: Duration = .seconds(5)
        /// Lookups running at once, each on its own thread. Default 8.
        public var concurrentLookups = 8

        public init() {}
    }

    /// Looks a name up, blocking the calling thread (a lookup thread): getaddrinfo by default.
    typealias Lookup = @Sendable (String) -> Result<[SocketAddress], IOError>

    /// The resolver every connection uses unless given another.
    public static let shared = HostResolver()

    private let configuration: Configuration
    private let lookup: Lookup
    private let now: @Sendable () -> UInt64
    private let table: Locked<ResolverTable<Waiter>>

    /// Who waits for a name: a loop, and what to run there with the answer.
    private struct Waiter: @unchecked Sendable {
        // @unchecked: `request` is touched only on `loop` (the waiter is created there and its
        // answer is run there, as a task).
        let loop: EventLoop
        let request: PendingResolve
    }

    public convenience init(configuration: Configuration = Configuration()) {
        self.init(configuration: configuration) { name in
            Result { () throws(IOError) in try SocketAddress.lookUp(name) }
        }
    }

    init(
        configuration: Configuration, now: @escaping @Sendable () -> UInt64 = { EventLoop.monotonicNow },
        lookup: @escaping Lookup
    ) {
        self.configuration = configuration
        self.lookup = lookup
        self.now = now
        table = Locked(
            ResolverTable(
                cacheNanoseconds: MonotonicDeadline.nanoseconds(in: configuration.cacheTime),
                maxEntries: configuration.cacheEntries, maxRunning: configuration.concurrentLookups))
    }

    /// Loop thread only. The addresses of `host` with `port`, through `completion` on `loop`: at
    /// once for an IP literal or a kept answer, else when the lookup ends or the time limit passes.
    func resolve(
        host: String, port: Int, on loop: EventLoop, completion: @escaping (Result<[SocketAddress], IOError>) -> Void
    ) {
        loop.preconditionInEventLoop()
        guard (0...65535).contains(port) else {
            completion(.failure(IOError(errno: EINVAL, reason: "port \(port) out of range")))
            return
        }
        if let address = SocketAddress.literal(host, port: port) {
            completion(.success([address]))
            return
        }
        let name = SocketAddress.unbracketed(host).lowercased()
        let request = PendingResolve(port: port, loop: loop, completion: completion)
        let decision = table.withLock { $0.lookUp(name, for: Waiter(loop: loop, request: request), now: now()) }
        switch decision {
        case .answered(let addresses):
            request.finish(.success(addresses))
            return
        case .startLookup:
            start(name)
        case .joined, .queued:
            break
        }
        request.timer = loop.schedule(after: configuration.timeLimit) { [configuration] in
            request.timer = nil
            let reason = "resolving \(host): no answer within \(configuration.timeLimit)"
            request.finish(.failure(IOError(errno: ETIMEDOUT, reason: reason)))
        }
    }

    /// Answers kept and names being looked up (tests).
    var counts: (cached: Int, pending: Int) { table.withLock { ($0.cachedCount, $0.pendingCount) } }

    private func start(_ name: String) {
        var next: String? = name
        while let current = next {
            do {
                let thread = try startThread("resolver") { [self] in runLookups(from: current) }
                pthread_detach(thread)
                return
            } catch {
                let (waiters, following) = table.withLock { $0.notStarted(current) }
                tell(waiters, .failure(IOError(errno: EAGAIN, reason: "resolving \(current): \(error)")))
                next = following
            }
        }
    }

    /// Runs each waiter's answer on its loop, as a task.
    private func tell(_ waiters: [Waiter], _ result: Result<[SocketAddress], IOError>) {
        for waiter in waiters {
            let request = UnsafeTransfer(value: waiter.request)
            waiter.loop.execute { request.value.finish(result) }
        }
    }

    /// A lookup thread: `name`, then queued names while there are any.
    private func runLookups(from name: String) {
        // Named for `top -H` and gdb: a thread blocked in getaddrinfo is a slow DNS server (until
        // here it carries the name of the loop that started it).
        _ = LinuxCalls.setThreadName(pthread_self(), Array("dns-lookup".utf8CString))
        var next: String? = name
        while let current = next {
            let result = lookup(current)
            let (waiters, following) = table.withLock { $0.finished(current, result, now: now()) }
            tell(waiters, result)
            next = following
        }
    }
}

/// One connection's wait for a name: answered once, by the lookup or by its time limit, whichever
/// comes first. Loop thread only (of the loop that asked).
private final class PendingResolve {
    let port: Int
    private var completion: ((Result<[SocketAddress], IOError>) -> Void)?
    var timer: TimerID?
    private let loop: EventLoop

    init(port: Int, loop: EventLoop, completion: @escaping (Result<[SocketAddress], IOError>) -> Void) {
        self.port = port
        self.loop = loop
        self.completion = completion
    }

    var isFinished: Bool { completion == nil }

    func finish(_ result: Result<[SocketAddress], IOError>) {
        guard let completion else { return }
        self.completion = nil
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        completion(result.map { $0.map { $0.withPort(port) } })
    }
}
