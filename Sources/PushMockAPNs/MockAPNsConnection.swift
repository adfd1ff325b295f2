import PushCore
import PushCredentials
import PushHTTP2
import PushMockSupport
import PushPosix
import PushTLS
import PushTransport

/// One client connection: TLS + HTTP/2 via ``HTTPTransport``, APNs semantics on its streams.
///
/// Confined to its loop (every entry point is a loop callback or a task the server hops onto the
/// loop), hence `@unchecked Sendable`.
final class MockAPNsConnection: HTTP2SessionDelegate, HTTPTransportOwner, @unchecked Sendable {
    let id: Int
    let loop: EventLoop
    let shared: MockAPNsShared
    var configuration: MockAPNsConfiguration { shared.configuration }
    private(set) var transport: HTTPTransport!
    var session: HTTP2Session { transport.session }

    var streams: [Int32: MockAPNsStream] = [:]
    private var streamsSeen = 0
    var isClosed = false
    private var wasReady = false
    /// Set once a GOAWAY is submitted: streams above this id are refused, never answered (the
    /// client treats them as unprocessed, and nghttp2 still delivers those that arrive in the
    /// same read as the stream that triggered the GOAWAY).
    var goAwayLastStreamID: Int32?
    var dropped = false
    /// Gone silent (``MockAPNsConfiguration/stallAfterStreams``): nothing is read or answered.
    var stalled = false
    /// The highest stream id answered so far (the last-stream-id of ``goAwayBelowInFlight()``).
    var highestAnsweredStreamID: Int32 = 0
    /// Whether the per-connection faults apply to this connection.
    private var isFaulty: Bool { configuration.faultyConnections.map { id <= $0 } ?? true }

    // Provider tokens.
    private var limitRaised: Bool
    private var cachedIssuedAt: Int64 = 0

    // Response delay: answers in deadline order (the delay is constant), one timer at a time.
    private let delayNanos: UInt64
    var delayed: [(deadline: UInt64, stream: MockAPNsStream)] = []
    var delayedHead = 0
    var delayTimerArmed = false
    /// The last body that passed the payload checks (see bodyOrPolicyRejection).
    private var lastValidBody: [UInt8] = []
    /// Header values repeated from request to request, shared (see ``RepeatedFieldValues``).
    private let fieldValues = RepeatedFieldValues()
    /// The stream whose header block is being received field by field (the session asks for a
    /// sink as a block begins and reports the block once it is complete).
    private var incoming: MockAPNsStream?
    /// The `authorization` value that last passed verification (shared with the requests that
    /// repeat it, so a check is mostly a buffer-identity compare).
    private var verifiedAuthorization: [UInt8]?

    // Stats, merged once per turn.
    var delta = StatsDelta()
    var statsFlushScheduled = false
    private var maxInFlight = 0

    var generator = SplitMix64()

    static func serve(_ connection: Connection, id: Int, shared: MockAPNsShared) throws -> HTTPTransport {
        let server = MockAPNsConnection(id: id, loop: connection.loop, shared: shared)
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams =
            server.limitRaised ? shared.configuration.maxConcurrentStreams : shared.configuration.streamsBeforeAuth
        let transport = try HTTPTransport(
            loop: connection.loop, tls: try TLSConnection(context: shared.tls), role: .server, settings: settings,
            sessionDelegate: server, owner: server)
        server.transport = transport
        shared.connections.register(server, id: id)
        server.delta.connectionsOpened += 1
        server.scheduleStatsFlush()
        transport.attach(connection)
        return transport
    }

    private init(id: Int, loop: EventLoop, shared: MockAPNsShared) {
        self.id = id
        self.loop = loop
        self.shared = shared
        limitRaised =
            !(shared.configuration.verifiesTokens && shared.configuration.streamsBeforeAuth != nil)
            || shared.configuration.clientCAPEM != nil
        delayNanos = nanoseconds(shared.configuration.responseDelay)
    }

    /// Server shutdown: GOAWAY (Shutdown), answer what is in flight, then close.
    func shutDownGracefully() {
        guard !isClosed else { return }
        if goAwayLastStreamID == nil { sendGoAway(lastStreamID: session.lastProcessedStreamID) }
        transport.setNeedsFlush()
    }

    // MARK: Transport events

    func transportDidBecomeReady(_ transport: HTTPTransport) {
        wasReady = true
        if let reason = shared.configuration.certificateGoAwayReason, shared.configuration.clientCAPEM != nil {
            // APNs's way with a certificate it will not take (sideshow/apns2#93: "GOAWAY
            // LastStreamID=0 ErrCode=NO_ERROR Debug={"reason":"BadCertificateEnvironment"}"): no
            // stream is processed; the transport closes once the GOAWAY is out.
            goAwayLastStreamID = 0
            let debugData = Array(#"{"reason":"\#(reason)"}"#.utf8)
            try? session.goAway(errorCode: .noError, lastStreamID: 0, debugData: debugData)
            delta.goAwaysSent += 1
            scheduleStatsFlush()
            transport.setNeedsFlush()
        }
    }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        isClosed = true
        for stream in streams.values where !stream.responded { delta.streamsCancelled += 1 }
        streams.removeAll()
        delayed.removeAll()
        delayedHead = 0
        delta.connectionsClosed += 1
        if !wasReady { delta.handshakeFailures += 1 }
        flushStats()
        shared.connections.unregister(id: id)
    }

    // MARK: HTTP/2 events

    override func http2Session(
        _ session: HTTP2Session, headerFieldSinkForStream streamID: Int32
    ) -> HTTP2HeaderFieldSink? {
        // Recording keeps every field as received, so the session collects the block then.
        guard !shared.recordsRequests, !dropped, !stalled, streams[streamID] == nil else { return nil }
        let stream = newStream(streamID)
        incoming = stream
        return stream
    }

    private func newStream(_ streamID: Int32) -> MockAPNsStream {
        MockAPNsStream(
            streamID: streamID, values: fieldValues, bodyReference: lastValidBody,
            bodyKeepLimit: PushType.voip.maxPayloadBytes + 1)
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        let received = incoming
        incoming = nil
        guard !dropped, !stalled else { return }
        if let stream = streams[streamID] {
            // Trailers: allowed by HTTP/2, meaningless to APNs.
            if endStream { finish(stream) }
            return
        }
        if let last = goAwayLastStreamID, streamID > last {
            try? session.resetStream(streamID: streamID, errorCode: .refusedStream)
            return
        }
        streamsSeen += 1
        if let limit = configuration.dropConnectionAfterStreams, streamsSeen > limit, isFaulty {
            dropConnection()
            return
        }
        delta.streamsOpened += 1
        let stream: MockAPNsStream
        if let received, received.streamID == streamID {
            stream = received
        } else {
            stream = newStream(streamID)
            stream.head = APNsRequestHead(headers, values: fieldValues)
            stream.headers = headers
        }
        streams[streamID] = stream
        maxInFlight = max(maxInFlight, streams.count)
        delta.maxInFlight = maxInFlight
        scheduleStatsFlush()
        checkHeaders(stream)
        stream.bodyKeepLimit = Self.maxPayloadBytes(stream) + 1
        if let limit = configuration.goAwayAfterStreams, streamsSeen == limit, goAwayLastStreamID == nil, isFaulty {
            if configuration.goAwayBelowInFlight {
                goAwayBelowInFlight()
            } else {
                sendGoAway(lastStreamID: streamID)
            }
        }
        if let limit = configuration.lowerStreamsAfter, streamsSeen == limit, isFaulty {
            var settings = HTTP2Settings.serverDefaults
            settings.maxConcurrentStreams = 1
            try? session.sendSettings(settings)
            delta.streamLimitsLowered += 1
        }
        if let limit = configuration.stallAfterStreams, streamsSeen == limit, isFaulty {
            stall()
            return
        }
        if endStream { finish(stream) }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard !dropped, !stalled, let stream = streams[streamID], !stream.answered else { return }
        if data.count > 0 {
            stream.appendBody(data)
            if stream.bodyLength > configuration.maxBodyBytes {
                // Don't wait for (or keep) the rest: answer now and reset once the answer is out.
                decide(stream)
                if !endStream { transport.resetAfterFlush(streamID) }
                return
            }
        }
        if endStream { finish(stream) }
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard let stream = streams.removeValue(forKey: streamID) else {
            if errorCode == .refusedStream {
                delta.streamsRefused += 1
                scheduleStatsFlush()
            }
            return
        }
        stream.closed = true
        if errorCode == .refusedStream {
            delta.streamsRefused += 1
            scheduleStatsFlush()
        } else if !stream.responded {
            delta.streamsCancelled += 1
            scheduleStatsFlush()
        }
    }

    // MARK: Requests

    private func checkHeaders(_ stream: MockAPNsStream) {
        let head = stream.head
        if let apnsID = head.apnsID, APNsRequestValidator.isUUID(apnsID) { stream.requestAPNsID = apnsID }
        var broadcastBundleID: String?
        switch APNsRequestValidator.checkRequestLine(head) {
        case .rejected(let reason):
            stream.headerRejection = reason
            return
        case .token(let token):
            stream.token = token
        case .broadcast(let bundleID):
            broadcastBundleID = bundleID
            stream.token = head.channelID ?? []
        }
        if let reason = providerTokenRejection(head.authorization) {
            stream.headerRejection = reason
            return
        }
        if let bundleID = broadcastBundleID {
            stream.isBroadcast = true
            if let (status, reason) = shared.channels.broadcastRejection(bundleID: bundleID, head: head) {
                stream.headerRejection = reason
                stream.rejectionStatus = status
            } else {
                stream.pushType = .liveactivity
            }
            return
        }
        switch APNsRequestValidator.checkFields(head) {
        case .failure(let error):
            stream.headerRejection = error.reason
        case .success(let pushType):
            stream.pushType = pushType
        }
    }

    /// The END_STREAM of a request: decide and answer (or queue the answer behind the delay).
    private func finish(_ stream: MockAPNsStream) {
        guard !stream.answered else { return }
        decide(stream)
    }

    private func decide(_ stream: MockAPNsStream) {
        stream.answered = true
        let reason = stream.headerRejection ?? bodyOrPolicyRejection(stream)
        stream.headerRejection = reason  // now the final verdict (nil = 200)
        if delayNanos == 0 {
            respond(stream)
            return
        }
        // The delay stands in for a network round trip, so it counts from when the request's bytes
        // arrived, not from when this loop got round to them in a large read.
        let deadline = transport.lastReceivedAt &+ delayNanos
        delayed.append((deadline, stream))
        if !delayTimerArmed { armDelayTimer(deadline) }
    }

    /// A broadcast may carry 5,120 bytes; a token push its push type's limit.
    private static func maxPayloadBytes(_ stream: MockAPNsStream) -> Int {
        stream.isBroadcast
            ? NotificationValidator.maxBroadcastPayloadBytes : (stream.pushType ?? .alert).maxPayloadBytes
    }

    private func bodyOrPolicyRejection(_ stream: MockAPNsStream) -> APNsReason? {
        if stream.bodyLength > configuration.maxBodyBytes { return .payloadTooLarge }
        // A body equal to one that passed is valid again (a notification's payload is the same
        // bytes for all of its tokens): skip re-parsing the JSON.
        let known = stream.bodyIsReference || stream.body == lastValidBody
        if let reason = APNsRequestValidator.checkBody(
            stream.keptBody, bodyLength: stream.bodyLength, maxPayloadBytes: Self.maxPayloadBytes(stream),
            validateJSON: configuration.validatePayloadJSON && !known)
        {
            return reason
        }
        if !known { lastValidBody = stream.body }
        if shared.injectsFaults {
            let draw = shared.nextFaultDraw()
            if draw < shared.fail500Threshold { return .internalServerError }
            if draw < shared.fail503Threshold { return .serviceUnavailable }
            if draw < shared.fail429Threshold { return .tooManyRequests }
            if draw < shared.expiredTokenThreshold { return .expiredProviderToken }
        }
        if shared.hasTokenRules {
            if let reason = shared.rejections[stream.token] { return reason }
            if shared.badTokens.contains(stream.token) { return .badDeviceToken }
            if shared.unregisteredTokens.contains(stream.token) { return .unregistered }
        }
        return nil
    }

    // MARK: Provider tokens

    /// nil when the request may proceed (verification off, a client certificate that verified, or
    /// a valid, fresh token).
    private func providerTokenRejection(_ authorization: [UInt8]?) -> APNsReason? {
        guard configuration.verifiesTokens else { return nil }
        // Certificate auth: the handshake verified the client's certificate (it would not have
        // completed otherwise); a request without a token is APNs's usual certificate-auth request.
        if configuration.clientCAPEM != nil, authorization?.isEmpty ?? true { return nil }
        guard let authorization, !authorization.isEmpty else { return .missingProviderToken }
        // The same value as the last one verified (mostly the very same buffer): only its age
        // needs checking again.
        if authorization != verifiedAuthorization {
            guard authorization.count > Bytes.bearer.count,
                lowercasedASCII(Array(authorization[..<Bytes.bearer.count])) == Bytes.bearer,
                let issuedAt = configuration.providerTokenIssuedAt(
                    String(decoding: authorization[Bytes.bearer.count...], as: UTF8.self))
            else { return .invalidProviderToken }
            verifiedAuthorization = authorization
            cachedIssuedAt = issuedAt
        }
        if wallClockSeconds() - cachedIssuedAt > configuration.tokenMaxAgeSeconds { return .expiredProviderToken }
        if !limitRaised {
            limitRaised = true
            var settings = HTTP2Settings.serverDefaults
            settings.maxConcurrentStreams = configuration.maxConcurrentStreams
            try? session.sendSettings(settings)
            delta.authenticatedConnections += 1
        }
        return nil
    }

}
