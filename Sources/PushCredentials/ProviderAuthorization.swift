/// A connection waiting for a credential being fetched.
public protocol AuthorizationWaiter: AnyObject, Sendable {
    /// The credential is there, or could not be had: ask again. Any thread.
    func authorizationDidChange()
}

/// The `authorization` a dialect wants sent.
public enum ProviderAuthorization: Sendable {
    /// No header (APNs certificate auth).
    case none
    /// The full header value (`bearer <jwt>`). `generation` changes whenever the value does, so a
    /// connection re-encodes it only then.
    case credential(String, generation: Int64)
    /// Being fetched; the dialect tells the waiter when that is over.
    case pending
    /// No credential can be had now; what waits is FAILED with this reason.
    case failed(String)
}
