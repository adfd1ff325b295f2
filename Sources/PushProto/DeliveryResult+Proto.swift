public import PushCore

extension PushgateV1.Status {
    /// The API's status of a domain result.
    public init(_ status: DeliveryStatus) {
        switch status {
        case .delivered: self = .delivered
        case .rejected: self = .rejected
        case .failed: self = .failed
        }
    }
}

extension PushgateV1.Result {
    /// The API's form of a domain result, field for field.
    public init(_ result: borrowing DeliveryResult) {
        self.init()
        notificationIndex = Int32(result.notificationIndex)
        token = result.token
        status = PushgateV1.Status(result.status)
        httpStatus = Int32(result.httpStatus)
        reason = result.reason
        id = result.providerID
        unregisteredAt = result.unregisteredAt
        attempts = Int32(result.attempts)
        canonicalToken = result.canonicalToken
    }
}

extension PushgateV1.SendResponse {
    /// The encoding of the SendResponse of `results` (one `Result` each, as
    /// ``PushgateV1/Result/init(_:)`` maps it), after `prefix` zero bytes of room for a framing
    /// prefix: the same bytes as `serializedBytes(reservingPrefix:)` of the mapped message.
    ///
    /// Written straight from the results: the answer to every Send is one, and mapping each
    /// result to a `PushgateV1.Result` (a retain per string), then to protobuf-c's struct and
    /// packing that, cost more than the rest of the answer's Swift code together.
    public static func serializedBytes(of results: [DeliveryResult], reservingPrefix prefix: Int) -> [UInt8] {
        precondition(prefix >= 0, "a negative prefix")
        // Each result read where it is in the array (iterating copies it out: a retain per string).
        return results.withUnsafeBufferPointer { results in
            // Most answers hold one result: its size is kept, not computed again to write it.
            let firstSize = results.isEmpty ? 0 : ResultEncoding.size(of: results.baseAddress!)
            var size = results.isEmpty ? 0 : ResultEncoding.entrySize(of: firstSize)
            for index in results.indices.dropFirst() {
                size += ResultEncoding.entrySize(of: ResultEncoding.size(of: results.baseAddress! + index))
            }
            // Written aside and appended to an array reserved to size, not written in place with
            // `[UInt8](unsafeUninitializedCapacity:)`: that one allocates through the standard
            // library's unspecialized path, whose look-up of the storage type's metadata costs more
            // than copying a few dozen bytes.
            var bytes: [UInt8] = []
            bytes.reserveCapacity(prefix + size)
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: prefix + size) { buffer in
                var writer = ProtoWireWriter(buffer.baseAddress!)
                writer.zeros(prefix)
                for index in results.indices {
                    let result = results.baseAddress! + index
                    let size = index == 0 ? firstSize : ResultEncoding.size(of: result)
                    ResultEncoding.write(result, size: size, to: &writer)
                }
                precondition(writer.written == prefix + size, "a SendResponse of \(size) bytes wrote \(writer.written)")
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<writer.written]))
            }
            return bytes
        }
    }
}

/// `pushgate.v1.Result` on the wire (proto/pushgate/v1/push.proto): proto3, so a field at its
/// default is left out, and the fields in number order, as protobuf-c packs them.
private enum ResultEncoding {
    /// Field 1 of SendResponse, `repeated Result results`.
    static let resultsTag: UInt8 = 1 << 3 | ProtoWireWriter.lengthDelimited

    static func entrySize(of size: Int) -> Int {
        1 + ProtoWireWriter.varintSize(UInt64(size)) + size
    }

    static func size(of result: UnsafePointer<DeliveryResult>) -> Int {
        var size = 0
        size += varintField(int32(result.pointee.notificationIndex))
        size += stringField(result.pointee.token)
        size += varintField(UInt64(PushgateV1.Status(result.pointee.status).rawValue))
        size += varintField(int32(result.pointee.httpStatus))
        size += stringField(result.pointee.reason)
        size += stringField(result.pointee.providerID)
        size += varintField(UInt64(bitPattern: result.pointee.unregisteredAt))
        size += varintField(int32(result.pointee.attempts))
        size += stringField(result.pointee.canonicalToken)
        return size
    }

    /// Writes `result` as one entry of `results`, its encoding `size` bytes (``size(of:)``).
    static func write(_ result: UnsafePointer<DeliveryResult>, size: Int, to writer: inout ProtoWireWriter) {
        writer.byte(resultsTag)
        writer.varint(UInt64(size))
        writer.varintField(1, int32(result.pointee.notificationIndex))
        writer.stringField(2, result.pointee.token)
        writer.varintField(3, UInt64(PushgateV1.Status(result.pointee.status).rawValue))
        writer.varintField(4, int32(result.pointee.httpStatus))
        writer.stringField(5, result.pointee.reason)
        writer.stringField(6, result.pointee.providerID)
        writer.varintField(7, UInt64(bitPattern: result.pointee.unregisteredAt))
        writer.varintField(8, int32(result.pointee.attempts))
        writer.stringField(9, result.pointee.canonicalToken)
    }

    /// An `int32` field's varint: a negative value is sign-extended to ten bytes.
    private static func int32(_ value: Int) -> UInt64 {
        UInt64(bitPattern: Int64(Int32(value)))
    }

    /// Field numbers here are below 16: a tag is one byte.
    private static func varintField(_ value: UInt64) -> Int {
        value == 0 ? 0 : 1 + ProtoWireWriter.varintSize(value)
    }

    private static func stringField(_ value: String) -> Int {
        let count = value.utf8.count
        return count == 0 ? 0 : 1 + ProtoWireWriter.varintSize(UInt64(count)) + count
    }
}

/// Writes protobuf's wire format into room its caller sized exactly (fields numbered below 16).
private struct ProtoWireWriter {
    static let varintType: UInt8 = 0
    static let lengthDelimited: UInt8 = 2

    private let base: UnsafeMutablePointer<UInt8>
    private(set) var written = 0

    init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

    static func varintSize(_ value: UInt64) -> Int {
        // 7 bits a byte; 0 still takes one.
        (64 - (value | 1).leadingZeroBitCount + 6) / 7
    }

    mutating func zeros(_ count: Int) {
        (base + written).initialize(repeating: 0, count: count)
        written += count
    }

    mutating func byte(_ value: UInt8) {
        (base + written).initialize(to: value)
        written += 1
    }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            byte(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        byte(UInt8(value))
    }

    /// A varint field, left out at 0.
    mutating func varintField(_ number: UInt8, _ value: UInt64) {
        guard value != 0 else { return }
        byte(number << 3 | Self.varintType)
        varint(value)
    }

    /// A string field, left out when empty.
    mutating func stringField(_ number: UInt8, _ value: String) {
        let count = value.utf8.count
        guard count > 0 else { return }
        byte(number << 3 | Self.lengthDelimited)
        varint(UInt64(count))
        // Contiguous for every native string, small ones too; a bridged one is copied first.
        if value.utf8.withContiguousStorageIfAvailable({ copy($0) }) == nil {
            var value = value
            value.withUTF8 { copy($0) }
        }
    }

    private mutating func copy(_ utf8: UnsafeBufferPointer<UInt8>) {
        if let source = utf8.baseAddress { (base + written).initialize(from: source, count: utf8.count) }
        written += utf8.count
    }
}
