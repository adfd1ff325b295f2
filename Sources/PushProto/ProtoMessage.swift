/// A protobuf message that Pushgate reads and writes through protobuf-c.
///
/// The conformances are generated (`scripts/gen-swift-proto.py`): decoding unpacks with protobuf-c,
/// copies the fields into Swift values and releases the C struct's arena; encoding builds the C
/// struct in a ``ProtoCArena``, packs it and releases the arena. No C struct outlives the call.
public protocol ProtoMessage: Sendable, Equatable {
    /// Decodes the protobuf wire format.
    /// - Throws: ``ProtoDecodingError`` when protobuf-c cannot unpack the bytes.
    init(serializedBytes bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError)

    /// Encodes the message in the protobuf wire format.
    func serializedBytes() -> [UInt8]

    /// `prefix` zero bytes and then the message's encoding, in one array: a gRPC message's 5-byte
    /// prefix (`GRPCMessageFramer.prefixSize`) can be written over them, where framing
    /// ``serializedBytes()`` copied the message into a second array.
    func serializedBytes(reservingPrefix prefix: Int) -> [UInt8]
}

extension ProtoMessage {
    /// Decodes the protobuf wire format from an array.
    ///
    /// Inlinable, so that callers in other modules get it specialized for their message type:
    /// unspecialized, it looked up the metadata of `Result<Self, ProtoDecodingError>` at run time
    /// on every call.
    @inlinable
    public init(serializedBytes bytes: [UInt8]) throws(ProtoDecodingError) {
        let decoded: Result<Self, ProtoDecodingError> = bytes.withUnsafeBytes { raw in
            do throws(ProtoDecodingError) {
                return .success(try Self(serializedBytes: raw))
            } catch {
                return .failure(error)
            }
        }
        self = try decoded.get()
    }
}

/// The bytes are not a valid encoding of the message.
public struct ProtoDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The full proto name of the message that was expected, e.g. `pushgate.v1.SendRequest`.
    public let messageName: String
    /// What is wrong, when known (e.g. a string field that is not valid UTF-8); empty otherwise.
    public var detail: String

    public init(messageName: String, detail: String = "") {
        self.messageName = messageName
        self.detail = detail
    }

    public var description: String {
        "the request is not a valid \(messageName) message" + (detail.isEmpty ? "" : ": \(detail)")
    }
}
