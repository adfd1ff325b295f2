import PushTLS

/// A client and a server connection wired back to back in memory: `pump` moves ciphertext both
/// ways and collects plaintext until nothing moves any more.
struct InMemoryPair {
    let client: TLSConnection
    let server: TLSConnection
    var clientReceived: [UInt8] = []
    var serverReceived: [UInt8] = []

    init(client: TLSConnection, server: TLSConnection) throws {
        self.client = client
        self.server = server
        try client.startHandshake()
    }

    /// Moves bytes until a turn moves none. Errors from either side are thrown (after the
    /// failing side's alert has been delivered, so the other side can report it too).
    mutating func pump(maxTurns: Int = 10_000) throws {
        for _ in 0..<maxTurns {
            var wire: [UInt8] = []
            var moved = client.drainCiphertext(into: &wire)
            wire.withUnsafeBytes { server.receive($0) }
            _ = try server.readPlaintext(into: &serverReceived)
            wire.removeAll(keepingCapacity: true)
            moved += server.drainCiphertext(into: &wire)
            wire.withUnsafeBytes { client.receive($0) }
            _ = try client.readPlaintext(into: &clientReceived)
            if moved == 0 && !client.hasPendingCiphertext && !server.hasPendingCiphertext { return }
        }
        throw TLSError(.connection, "pump did not settle")
    }
}

func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}
