/// One gRPC message taken off the wire by ``GRPCMessageDeframer``.
public struct GRPCMessage: Sendable, Equatable {
    /// Whether the sender set the compressed flag (the bytes are in the call's `grpc-encoding`).
    public var compressed: Bool
    /// The message bytes, without the prefix.
    public var bytes: [UInt8]

    /// Creates a message.
    public init(compressed: Bool = false, bytes: [UInt8]) {
        self.compressed = compressed
        self.bytes = bytes
    }
}
