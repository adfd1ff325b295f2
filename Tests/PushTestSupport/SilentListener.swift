import Glibc
public import PushPosix

/// A TCP listener on 127.0.0.1 that accepts and never says anything: a TLS handshake that stalls.
public final class SilentListener: Sendable {
    private let listener: TCPServer

    public init(group: EventLoopGroup) throws {
        listener = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in Silent() }
    }

    public var localPort: Int { listener.localPort }

    public func close() { listener.close() }
}

/// Reads and drops whatever arrives.
final class Silent: ConnectionHandler {
    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {}
    func connectionDidClose(_ connection: Connection, error: IOError?) {}
}

/// A port on 127.0.0.1 that nothing listens on (bound, then closed again): connecting is refused.
public func closedPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestSetupError("socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw TestSetupError("bind: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
