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

    /// `message` framed where it is: its first ``prefixSize`` bytes (room left by the encoder, as
    /// `serializedBytes(reservingPrefix:)` does) become the prefix of the bytes after them, so the
    /// message is not copied into a second array.
    ///
    /// - Parameters:
    ///   - message: room for the prefix, then the encoded message (at most `UInt32.max` bytes).
    ///   - compressed: set only when the message was compressed with the call's `grpc-encoding`.
    public static func frame(prefixed message: consuming [UInt8], compressed: Bool = false) -> [UInt8] {
        precondition(message.count >= prefixSize, "a prefixed message starts with room for its prefix")
        precondition(message.count - prefixSize <= Int(UInt32.max), "a gRPC message is limited to 4 GiB")
        let length = UInt32(message.count - prefixSize)
        message.withUnsafeMutableBufferPointer { bytes in
            bytes[0] = compressed ? 1 : 0
            bytes[1] = UInt8(truncatingIfNeeded: length >> 24)
            bytes[2] = UInt8(truncatingIfNeeded: length >> 16)
            bytes[3] = UInt8(truncatingIfNeeded: length >> 8)
            bytes[4] = UInt8(truncatingIfNeeded: length)
        }
        return message
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
