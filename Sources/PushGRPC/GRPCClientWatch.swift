/// When a server connection gives up on its client: unread answers past a limit, none of them
/// taken for a write timeout, or a flood of control frames. A plain value: the connection tells it
/// what happened (with the counts and the time) and does what it answers (arm a timer, drop the
/// client); so every case is tested without sockets.
struct GRPCClientWatch {
    enum Reason: Equatable {
        /// Unsent response bytes went over the limit.
        case unsentOverLimit(Int)
        /// The client took none of its `unsent` bytes for the write timeout.
        case noProgress(unsent: Int)
        /// The limit's worth of control frames came within a second.
        case controlFrameFlood(frames: Int)
    }

    enum Action: Equatable {
        case none
        /// Call ``writeTimerFired(unsent:progress:)`` after this long.
        case armWriteTimer(after: Duration)
        /// GOAWAY and close.
        case drop(Reason)
    }

    let maxUnsentBytes: Int
    /// nil: never.
    let writeTimeout: Duration?
    let maxControlFramesPerSecond: Int

    private var dropped = false
    private var writeTimerArmed = false
    /// The client's output progress (bytes it took, as the transport counts) when the timer was armed.
    private var progressAtTimer = 0
    private var controlFrames = 0
    private var controlFramesSince: UInt64 = 0
    /// Streams that ended since the count began: each one earns ``controlFramesPerStream`` more.
    private var streamsEnded = 0

    /// Control frames a client may send for each of its streams, beyond the limit: a well-behaved
    /// client answers the data of every call with WINDOW_UPDATEs (stream and connection), and
    /// grpc's clients add BDP PINGs. Without it, grpcio at ~9,000 1-token Sends a second went past
    /// 10,000 such frames and was dropped as a flood. A flood without calls earns nothing, and
    /// calls cost the client as much as they cost us.
    static let controlFramesPerStream = 4

    /// `now`: when the connection began (nanoseconds), where the first count of control frames starts.
    init(maxUnsentBytes: Int, writeTimeout: Duration?, maxControlFramesPerSecond: Int, now: UInt64) {
        self.maxUnsentBytes = maxUnsentBytes
        self.writeTimeout = writeTimeout
        self.maxControlFramesPerSecond = maxControlFramesPerSecond
        controlFramesSince = now
    }

    /// A call queued response bytes; `unsent` are all the connection's unsent bytes now.
    mutating func responseQueued(unsent: Int, progress: Int) -> Action {
        guard !dropped else { return .none }
        if unsent > maxUnsentBytes { return drop(.unsentOverLimit(unsent)) }
        return armIfNeeded(unsent: unsent, progress: progress)
    }

    /// The write timer went off.
    mutating func writeTimerFired(unsent: Int, progress: Int) -> Action {
        writeTimerArmed = false
        guard !dropped, unsent > 0 else { return .none }
        if progress == progressAtTimer { return drop(.noProgress(unsent: unsent)) }
        return armIfNeeded(unsent: unsent, progress: progress)
    }

    /// A frame without headers or body bytes arrived at `now` (nanoseconds). The count restarts
    /// whenever it reaches the limit (plus what the streams ended since earned) more than a
    /// second after it began.
    mutating func controlFrame(now: UInt64) -> Action {
        guard !dropped else { return .none }
        controlFrames += 1
        guard controlFrames >= maxControlFramesPerSecond + streamsEnded * Self.controlFramesPerStream else {
            return .none
        }
        if now &- controlFramesSince < 1_000_000_000 {
            return drop(.controlFrameFlood(frames: controlFrames))
        }
        controlFrames = 0
        streamsEnded = 0
        controlFramesSince = now
        return .none
    }

    /// One of the client's streams ended (answered, reset or refused).
    mutating func streamEnded() {
        streamsEnded += 1
    }

    private mutating func armIfNeeded(unsent: Int, progress: Int) -> Action {
        guard let writeTimeout, unsent > 0, !writeTimerArmed else { return .none }
        writeTimerArmed = true
        progressAtTimer = progress
        return .armWriteTimer(after: writeTimeout)
    }

    private mutating func drop(_ reason: Reason) -> Action {
        dropped = true
        return .drop(reason)
    }
}
