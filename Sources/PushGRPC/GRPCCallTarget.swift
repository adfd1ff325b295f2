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
    /// Returns once at most `limit` response bytes of the call wait for the client, or it ended
    /// (see the extension).
    func waitForDrain(limit: Int) async
    /// Ends the call with `status` (its handler task returned or threw); ignored once it ended.
    func finish(_ status: GRPCStatus)
    /// More than `limit` response bytes of the call wait for the client (never once it ended).
    func isBackedUp(limit: Int) -> Bool
    /// Parks a handler waiting for the call's output to drain below `limit`, on this loop: it is
    /// resumed at once if the call no longer is backed up, else by a flush or the call's end.
    func parkDrainWaiter(limit: Int, _ continuation: CheckedContinuation<Void, Never>)
}

extension GRPCCallTarget {
    /// Runs a task handler on the call's loop (the loop is a TaskExecutor: no hop to the
    /// cooperative pool and back for each await, and its writes need no cross-thread handoff);
    /// what it returns or throws ends the call.
    func runHandler(
        _ handler: @escaping GRPCHandler, requests: GRPCRequestStream, context: GRPCCallContext
    ) -> Task<Void, Never> {
        let writer = GRPCResponseWriter(call: self)
        return Task(executorPreference: loop) { [self] in
            let status: GRPCStatus
            do {
                try await handler(requests, writer, context)
                status = .ok
            } catch let error as GRPCStatus {
                status = error
            } catch {
                status = GRPCStatus(.internalError, "\(error)")
            }
            if loop.inEventLoop {
                // Usually so (the task prefers this loop): the end joins this turn's flush, in
                // the same write as the last message, instead of a turn, a write and a client
                // wake-up of their own.
                finish(status)
            } else {
                loop.execute { self.finish(status) }
            }
        }
    }

    /// Returns once at most `limit` response bytes of this call wait for the client, or the call
    /// has ended. A wait that cannot end at once is parked (``parkDrainWaiter(limit:_:)``) and
    /// woken by the connection's flushes, not by polling.
    func waitForDrain(limit: Int) async {
        if loop.inEventLoop && !isBackedUp(limit: limit) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if loop.inEventLoop {
                parkDrainWaiter(limit: limit, continuation)
            } else {
                loop.execute { [self] in parkDrainWaiter(limit: limit, continuation) }
            }
        }
    }
}

/// A handler waiting in ``GRPCResponseWriter/send(_:)`` for the client to take its call's
/// response bytes; kept by the call, resumed after a flush that drained it, or at the call's end.
struct GRPCDrainWait {
    /// A class: every call has the optional field and few ever wait, and an optional tuple
    /// holding a continuation (a type of another module, of unknown layout) was set to nil and
    /// destroyed through type metadata per call.
    private final class Waiter {
        let limit: Int
        let continuation: CheckedContinuation<Void, Never>

        init(limit: Int, continuation: CheckedContinuation<Void, Never>) {
            self.limit = limit
            self.continuation = continuation
        }
    }

    private var waiter: Waiter?

    /// Keeps `continuation` until the call's output is at most `limit` bytes.
    mutating func park(limit: Int, _ continuation: CheckedContinuation<Void, Never>) {
        waiter = Waiter(limit: limit, continuation: continuation)
    }

    /// After a flush: resumes the waiter once the call is no longer backed up past its limit.
    /// Returns whether it still waits.
    mutating func flushed(isBackedUp: (Int) -> Bool) -> Bool {
        guard let waiter else { return false }
        guard !isBackedUp(waiter.limit) else { return true }
        self.waiter = nil
        waiter.continuation.resume()
        return false
    }

    /// The call ended: an ended call waits for nothing (its handler's sends are dropped).
    mutating func resume() {
        guard let waiter else { return }
        self.waiter = nil
        waiter.continuation.resume()
    }
}

extension GRPCServerCall: GRPCCallTarget {}
