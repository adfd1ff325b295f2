import Dispatch
import Glibc
import PushPosix
import PushSync

/// Waits for a semaphore with a deadline so a broken test fails instead of hanging.
func waitFor(_ semaphore: DispatchSemaphore, seconds: Double = 10) -> Bool {
    semaphore.wait(timeout: .now() + seconds) == .success
}

/// A value shared between the loop thread and the test thread, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Locked<Value>
    init(_ value: Value) { storage = Locked(value) }
    var value: Value { storage.withLock { $0 } }
    func update<R>(_ body: (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
}

/// Server side: writes back whatever arrives.
final class EchoHandler: ConnectionHandler {
    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        connection.write(bytes)
    }
    func connectionDidClose(_ connection: Connection, error: IOError?) {}
}

/// Collects received bytes and close notifications; signals `done` once `expected` bytes have
/// arrived and `closed` on connectionDidClose. Its state is read by the test thread only after
/// a semaphore handshake, and written only on the connection's loop thread.
final class Collector: ConnectionHandler, @unchecked Sendable {
    let expected: Int
    let done = DispatchSemaphore(value: 0)
    let closed = DispatchSemaphore(value: 0)
    let drained = DispatchSemaphore(value: 0)
    private let state = Locked(State())

    struct State {
        var received: [UInt8] = []
        var closeCount = 0
        var closeError: IOError?
        var drainCount = 0
    }

    init(expected: Int) { self.expected = expected }

    var received: [UInt8] { state.withLock { $0.received } }
    var closeCount: Int { state.withLock { $0.closeCount } }
    var closeError: IOError? { state.withLock { $0.closeError } }
    var drainCount: Int { state.withLock { $0.drainCount } }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        let reached = state.withLock { s -> Bool in
            let before = s.received.count
            s.received.append(contentsOf: bytes)
            return before < expected && s.received.count >= expected
        }
        if reached { done.signal() }
    }

    func connectionDidDrain(_ connection: Connection) {
        state.withLock { $0.drainCount += 1 }
        drained.signal()
    }

    func connectionDidClose(_ connection: Connection, error: IOError?) {
        state.withLock {
            $0.closeCount += 1
            $0.closeError = error
        }
        closed.signal()
    }
}

/// Connects and waits for the result (on the test thread).
func connectAndWait(
    host: String = "127.0.0.1", port: Int, loop: EventLoop, handler: any ConnectionHandler & Sendable
) -> Result<Connection, any Error>? {
    let result = Shared<Result<Connection, any Error>?>(nil)
    let semaphore = DispatchSemaphore(value: 0)
    Connection.connect(host: host, port: port, on: loop, handler: handler, timeout: .seconds(5)) { outcome in
        result.update { $0 = outcome }
        semaphore.signal()
    }
    guard waitFor(semaphore) else { return nil }
    return result.value
}

/// Runs `body` on the loop and waits for it to finish.
func onLoop<R: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> R) -> R? {
    let result = Shared<R?>(nil)
    let semaphore = DispatchSemaphore(value: 0)
    loop.execute {
        let value = body()
        result.update { $0 = value }
        semaphore.signal()
    }
    guard waitFor(semaphore) else { return nil }
    return result.value
}

/// A port nothing listens on: bind an ephemeral port, then close it.
func unusedPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            _ = bind(fd, $0, length)
            _ = getsockname(fd, $0, &length)
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Names of this process's threads (/proc/self/task/*/comm).
func threadNames() -> [String] {
    guard let dir = opendir("/proc/self/task") else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let tid = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard tid != ".", tid != ".." else { continue }
        guard let file = fopen("/proc/self/task/\(tid)/comm", "r") else { continue }
        var buffer = [CChar](repeating: 0, count: 64)
        if fgets(&buffer, 64, file) != nil {
            let bytes = buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }
            names.append(String(decoding: bytes, as: UTF8.self))
        }
        fclose(file)
    }
    return names
}
