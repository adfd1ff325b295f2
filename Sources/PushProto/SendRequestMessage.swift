import CProtobufC
import CPushgateProto
public import PushCore

/// A `pushgate.v1.SendRequest` read where protobuf-c unpacked it: Send maps each notification
/// straight from the C message to its ``NotificationRequest`` (``assign(_:to:)``), checking each
/// string's UTF-8 as it becomes a Swift string. Not decoded into ``PushgateV1/SendRequest`` first:
/// that would make every field a Swift value twice (in the proto value, then in the domain one)
/// and destroy both.
///
/// Only valid inside the closure that gives it (``unpack(_:_:)``, ``with(_:_:)``): its memory is
/// the decoding arena's, released when the closure returns. Noncopyable, so it cannot be kept.
public struct SendRequestMessage: ~Copyable {
    private let message: UnsafePointer<Pushgate__V1__SendRequest>

    private init(_ message: UnsafePointer<Pushgate__V1__SendRequest>) {
        self.message = message
    }

    static let messageName = "pushgate.v1.SendRequest"

    /// Unpacks `bytes` and calls `body` with the message.
    /// - Throws: INVALID_ARGUMENT when `bytes` are not a SendRequest (as a decoded request's
    ///   failure reads), and whatever `body` throws.
    public static func unpack<Result>(
        _ bytes: [UInt8], _ body: (borrowing SendRequestMessage) throws(GRPCStatus) -> Result
    ) throws(GRPCStatus) -> Result {
        let unpacking = { (allocator: UnsafeMutablePointer<ProtobufCAllocator>) in
            bytes.withUnsafeBytes { bytes in
                ProtoC.withInput(bytes) { pushgate__v1__send_request__unpack(allocator, $0, $1) }
            }
        }
        return try ProtoC.withUnpacked(unpacking: unpacking) { (unpacked) throws(GRPCStatus) in
            guard let unpacked else {
                throw GRPCStatus(.invalidArgument, ProtoDecodingError(messageName: messageName).description)
            }
            return try body(SendRequestMessage(unpacked))
        }
    }

    /// `request` as its C message, for a request built in Swift (gorush's endpoint, tests): the
    /// same reading as a received one.
    public static func with<Result>(
        _ request: PushgateV1.SendRequest, _ body: (borrowing SendRequestMessage) throws(GRPCStatus) -> Result
    ) throws(GRPCStatus) -> Result {
        try ProtoCArena.with { arena throws(GRPCStatus) in
            try body(SendRequestMessage(request.cMessage(in: arena)))
        }
    }

    /// The number of notifications.
    public var count: Int { message.pointee.n_notifications }

    private func notification(_ index: Int) -> UnsafePointer<Pushgate__V1__Notification> {
        precondition(index >= 0 && index < count, "notification \(index) of \(count)")
        return UnsafePointer(message.pointee.notifications[index]!)
    }

    /// The number of tokens of notification `index`.
    public func tokenCount(_ index: Int) -> Int { notification(index).pointee.n_tokens }

    /// The `app` of notification `index`.
    /// - Throws: INVALID_ARGUMENT when it is not valid UTF-8.
    public func app(_ index: Int) throws(GRPCStatus) -> String {
        do throws(ProtoDecodingError) {
            return try ProtoC.string(notification(index).pointee.app, field: "app")
        } catch {
            throw Self.invalid(error)
        }
    }

    /// The wire number of notification `index`'s push type.
    public func pushTypeNumber(_ index: Int) -> Int32 {
        Int32(truncatingIfNeeded: notification(index).pointee.push_type.rawValue)
    }

    /// Sets every field of `n` (a value made with `init()`) from notification `index`; false when
    /// its push type is a number no ``PushType`` has, and then nothing is set.
    /// - Throws: INVALID_ARGUMENT naming the first string field that is not valid UTF-8.
    public func assign(_ index: Int, to n: inout NotificationRequest) throws(GRPCStatus) -> Bool {
        do throws(ProtoDecodingError) {
            return try n.assign(c: notification(index))
        } catch {
            throw Self.invalid(error)
        }
    }

    private static func invalid(_ error: ProtoDecodingError) -> GRPCStatus {
        GRPCStatus(.invalidArgument, ProtoDecodingError(messageName: messageName, detail: error.detail).description)
    }
}
