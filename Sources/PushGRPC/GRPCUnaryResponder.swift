public import PushCore
import PushPosix

/// The answer to one call of an immediate unary method (``GRPCMethod/immediateUnary(_:_:)``):
/// one response message with status OK, or a status alone. For an ordered stream
/// (``GRPCMethod/orderedStream(_:window:_:)``), the answer to one of its request messages: a
/// response message, or a status that ends the call once the answers before it are out.
///
/// Usable from any thread. Only the first answer counts, and none once the call has ended (the
/// client cancelled, the deadline passed, the connection closed).
public struct GRPCUnaryResponder: Sendable {
    let call: any GRPCCallTarget
    /// An ordered stream's request index (0 for a unary call).
    let slot: Int

    init(call: any GRPCCallTarget, slot: Int = 0) {
        self.call = call
        self.slot = slot
    }

    /// Answers with `message` and status OK.
    public func respond(_ message: [UInt8]) {
        let (call, slot) = (self.call, self.slot)
        if call.loop.inEventLoop {
            // The usual case: the answer joins this turn's flush.
            call.answer(message, slot: slot)
        } else {
            call.loop.execute { call.answer(message, slot: slot) }
        }
    }

    /// Answers with the message after the first ``GRPCMessageFramer/prefixSize`` bytes of
    /// `message` (room for the gRPC prefix, as `serializedBytes(reservingPrefix:)` leaves) and
    /// status OK: the prefix is written there, so the message is not copied to be framed.
    public func respond(prefixed message: consuming [UInt8]) {
        let (call, slot) = (self.call, self.slot)
        if call.loop.inEventLoop {
            call.answer(prefixed: message, slot: slot)
        } else {
            call.loop.execute { [message] in call.answer(prefixed: message, slot: slot) }
        }
    }

    /// Answers with `status` and no message.
    public func fail(_ status: GRPCStatus) {
        let (call, slot) = (self.call, self.slot)
        if call.loop.inEventLoop {
            call.answer(status, slot: slot)
        } else {
            call.loop.execute { call.answer(status, slot: slot) }
        }
    }

    /// `action` runs, once and on the call's loop, if the call ends before it is answered, so the
    /// work behind the answer can stop. At once if the call has already ended unanswered; never
    /// if it was answered.
    public func onCancel(_ action: @escaping @Sendable () -> Void) {
        let (call, slot) = (self.call, self.slot)
        if call.loop.inEventLoop {
            call.setCancelAction(action, slot: slot)
        } else {
            call.loop.execute { call.setCancelAction(action, slot: slot) }
        }
    }
}
