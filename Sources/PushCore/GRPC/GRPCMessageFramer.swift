/// Writes gRPC `Length-Prefixed-Message`s: a compressed flag byte, a 4-byte big-endian length,
/// then the message bytes (gRPC PROTOCOL-HTTP2, "Length-Prefixed-Message").
public struct GRPCMessageFramer {
    /// The size of the prefix in front of every message.
    public static let prefixSize = 5

    /// Returns `message` with its 5-byte prefix.
    ///
    /// - Parameters:
    ///   - message: the encoded message; at most `UInt32.max` bytes.
    ///   - compressed: set only when the message was compressed with the call's `grpc-encoding`.
    public static func frame(_ message: [UInt8], compressed: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(prefixSize + message.count)
        append(message, compressed: compressed, to: &out)
        return out
    }

    /// Appends `message` with its prefix to `buffer`, so several responses can share one buffer.
    public static func append(_ message: [UInt8], compressed: Bool = false, to buffer: inout [UInt8]) {
        precondition(message.count <= Int(UInt32.max), "a gRPC message is limited to 4 GiB")
        let length = UInt32(message.count)
        buffer.append(compressed ? 1 : 0)
        buffer.append(UInt8(truncatingIfNeeded: length >> 24))
        buffer.append(UInt8(truncatingIfNeeded: length >> 16))
        buffer.append(UInt8(truncatingIfNeeded: length >> 8))
        buffer.append(UInt8(truncatingIfNeeded: length))
        buffer.append(contentsOf: message)
    }
}
