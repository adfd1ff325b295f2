import PushCore
import PushPosix

/// What a method's handler answers through (``GRPCUnaryResponder``, ``GRPCResponseWriter``): the
/// call on its transport, a gRPC call on an HTTP/2 stream (``GRPCServerCall``) or a Connect call
/// (``ConnectCall``). Every method is confined to `loop`.
protocol GRPCCallTarget: AnyObject, Sendable {
    var loop: EventLoop { get }
    /// An immediate unary method's answer (or an ordered stream's, to its request `slot`);
    /// ignored once the call ended.
    func answer(_ message: [UInt8], slot: Int)
    /// As `answer(_:slot:)`, for a message after ``GRPCMessageFramer/prefixSize`` bytes of room
    /// for its prefix (`serializedBytes(reservingPrefix:)`).
    func answer(prefixed message: consuming [UInt8], slot: Int)
    /// An immediate unary method's failure (or an ordered stream's request's); ignored once the
    /// call ended.
    func answer(_ status: GRPCStatus, slot: Int)
    /// What to do if the call ends before the answer (to `slot`) is given.
    func setCancelAction(_ action: @escaping @Sendable () -> Void, slot: Int)
    /// One response message of a streaming method.
    func sendMessage(_ message: [UInt8])
    /// Returns once at most `limit` response bytes of the call wait for the client, or it ended.
    func waitForDrain(limit: Int) async
}

extension GRPCServerCall: GRPCCallTarget {}
