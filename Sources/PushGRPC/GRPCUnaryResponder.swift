public import PushCore
import PushPosix

/// The answer to one call of an immediate unary method (``GRPCMethod/immediateUnary(_:_:)``):
/// one response message with status OK, or a status alone.
///
/// Usable from any thread. Only the first answer counts, and none once the call has ended (the
/// client cancelled, the deadline passed, the connection closed).
public struct GRPCUnaryResponder: Sendable {
    let call: any GRPCCallTarget

    /// Answers with `message` and status OK.
    public func respond(_ message: [UInt8]) {
        let call = self.call
        if call.loop.inEventLoop {
            // The usual case: the answer joins this turn's flush.
            call.answer(message)
        } else {
            call.loop.execute { call.answer(message) }
        }
    }

    /// Answers with `status` and no message.
    public func fail(_ status: GRPCStatus) {
        let call = self.call
        if call.loop.inEventLoop {
            call.answer(status)
        } else {
            call.loop.execute { call.answer(status) }
        }
    }

    /// `action` runs, once and on the call's loop, if the call ends before it is answered, so the
    /// work behind the answer can stop. At once if the call has already ended unanswered; never
    /// if it was answered.
    public func onCancel(_ action: @escaping @Sendable () -> Void) {
        let call = self.call
        if call.loop.inEventLoop {
            call.setCancelAction(action)
        } else {
            call.loop.execute { call.setCancelAction(action) }
        }
    }
}
