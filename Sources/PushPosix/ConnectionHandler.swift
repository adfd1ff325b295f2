/// A readiness/IO callback target. All calls happen on the connection's loop.
///
/// Handlers may call `write`, `close`, `pauseReading` etc. from inside any callback.
/// `connectionDidClose` is never delivered re-entrantly: if a handler closes the connection
/// inside `didReceive`, the close happens at once (no further reads or writes) and
/// `connectionDidClose` runs right after the current callback returns.
public protocol ConnectionHandler: AnyObject {
    /// Bytes read from the socket (the buffer is only valid during the call).
    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer)
    /// The outbound buffer became empty after having held data (for backpressure: the handler
    /// may produce more).
    func connectionDidDrain(_ connection: Connection)
    /// The connection is closed (peer EOF, error, or close()). Called exactly once. error nil
    /// for a clean EOF/local close. Afterwards the connection drops its `handler` reference,
    /// which breaks the usual handler <-> connection retain cycle.
    func connectionDidClose(_ connection: Connection, error: IOError?)
    /// The peer shut its sending side (EOF) and the connection is still open. True keeps it open
    /// for writing, half-closed: reading stops for good and the handler closes it when it has
    /// answered (an HTTP/1.1 client may send its request, shut its side, and wait for the
    /// answer). False (the default) closes it as any EOF: ``connectionDidClose(_:error:)`` with nil.
    func connectionDidReceiveEnd(_ connection: Connection) -> Bool
}

extension ConnectionHandler {
    public func connectionDidDrain(_ connection: Connection) {}
    public func connectionDidReceiveEnd(_ connection: Connection) -> Bool { false }
}
