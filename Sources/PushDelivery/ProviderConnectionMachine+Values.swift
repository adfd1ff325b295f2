import PushCore
import PushTransport

// The values the machine takes and gives: its phase, its actions, a request in flight, the time
// of an event, and the settings it reads.
extension ProviderConnectionMachine {
    enum Phase: Equatable {
        /// No connection; one is made when work waits and no reconnect backoff runs.
        case idle
        /// TCP, TLS and the protocol's preface under way.
        case connecting
        case ready
        /// Finishing what is in flight (after a GOAWAY, or our own); nothing new goes on it.
        case draining
    }

    /// What the driver does for the machine.
    enum Action {
        /// Open a new connection; report ``connected(at:)`` or ``connectFailed(_:at:)``.
        case connect
        /// Requests may go out now: take them with ``nextSubmission(at:)`` while it gives some.
        case submit
        /// The request's final result.
        case finish(ProviderRequest, DeliveryResult)
        /// Close the connection without flushing (given up); its close is reported as usual.
        case close(TransportError)
        /// Close gracefully (shutdown): what is buffered goes out first.
        case closeGracefully
        /// Stop using this connection: a GOAWAY of our own, then close once it is drained.
        case goAway
        case ping
        /// The dialect must replace the credential of this generation (it was refused).
        case renewAuthorization(generation: Int64)
        case report(ProviderConnectionReport)
    }

    /// One request on the wire.
    struct InFlight {
        var request: ProviderRequest
        /// Monotonic time it was submitted.
        var submittedAt: UInt64
        /// The generation of the credential it was sent with (0: none).
        var generation: Int64
    }

    /// The time of an event: monotonic nanoseconds (deadlines) and Unix seconds (expirations).
    struct Time {
        var now: UInt64
        var unixSeconds: Int64
    }

    /// What the machine reads of the app's configuration: scalars only, so the machine copies
    /// without retaining anything (the full configuration holds the proxy's strings).
    struct Settings {
        var maxConcurrentStreams: UInt32
        var retry: RetryPolicy
        var maxConnectAttempts: Int
        var connectTimeout: Duration
        var pingInterval: Duration
        var pingTimeout: Duration
        var stallTimeout: Duration

        init(_ configuration: ProviderClientConfiguration) {
            maxConcurrentStreams = configuration.maxConcurrentStreams
            retry = configuration.retry
            maxConnectAttempts = configuration.maxConnectAttempts
            connectTimeout = configuration.connectTimeout
            pingInterval = configuration.pingInterval
            pingTimeout = configuration.pingTimeout
            stallTimeout = configuration.stallTimeout
        }
    }
}
