/// A recipient whose provider could not take a message (unreachable, or 5xx/429 after the delivery
/// engine's retries): its chunk holds it and sends to it again each time the chunk resumes, until
/// the fan-out's hold limit; see ``Store/recordChunkProgress(_:policy:cursor:counts:state:holds:now:)``.
public struct FanOutHold: Sendable, Equatable {
    public var endpointID: String
    /// The last failure: the result's reason if the hold runs out.
    public var reason: String

    public init(endpointID: String, reason: String) {
        self.endpointID = endpointID
        self.reason = reason
    }
}

/// A held recipient as its chunk finds it again: the hold and the endpoint as it is now (nil:
/// deleted since).
public struct HeldRecipient: Sendable, Equatable {
    public var hold: FanOutHold
    public var endpoint: EndpointRecord?

    public init(hold: FanOutHold, endpoint: EndpointRecord?) {
        self.hold = hold
        self.endpoint = endpoint
    }
}

/// How a progress record changes a chunk's held recipients.
public struct FanOutHoldChanges: Sendable, Equatable {
    /// Recipients to hold (again: a recipient already held keeps one hold, with this reason).
    public var holding: [FanOutHold]
    /// Endpoint ids whose hold is over (they have a final result now).
    public var releasing: [String]
    /// Set: the chunk parks until then (Unix ms) with its holds, instead of finishing; this claim
    /// ends, and whoever claims the chunk after that time sends to the held recipients again.
    public var parkUntil: Int64?

    public init(holding: [FanOutHold] = [], releasing: [String] = [], parkUntil: Int64? = nil) {
        self.holding = holding
        self.releasing = releasing
        self.parkUntil = parkUntil
    }

    public static var none: Self { Self() }
}
