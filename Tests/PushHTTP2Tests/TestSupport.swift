import PushHTTP2

/// One delegate event, as a value the tests can compare.
enum Event: Equatable, CustomStringConvertible {
    case headers(Int32, [HTTP2Header], endStream: Bool)
    case data(Int32, [UInt8], endStream: Bool)
    case closed(Int32, HTTP2ErrorCode)
    case settings
    case goAway(lastStreamID: Int32, HTTP2ErrorCode, debugData: [UInt8])

    var description: String {
        switch self {
        case .headers(let id, let headers, let end): "headers(\(id), \(headers), end: \(end))"
        case .data(let id, let bytes, let end): "data(\(id), \(bytes.count) bytes, end: \(end))"
        case .closed(let id, let code): "closed(\(id), \(code))"
        case .settings: "settings"
        case .goAway(let last, let code, let debug): "goAway(\(last), \(code), \(debug.count) bytes)"
        }
    }
}

/// Records every event; optional hooks let a test react (e.g. a server answering requests)
/// from inside the callback, as real owners do.
final class Recorder: HTTP2SessionDelegate {
    var events: [Event] = []
    /// Body bytes received per stream, concatenated.
    var bodies: [Int32: [UInt8]] = [:]
    var onHeaders: ((HTTP2Session, [HTTP2Header], Int32, Bool) throws -> Void)?
    var onEndStream: ((HTTP2Session, Int32) throws -> Void)?
    var hookErrors: [any Error] = []
    /// Streams whose frames the session could not send (server role).
    var notSent: [Int32] = []
    /// Frames without headers or body bytes received.
    var controlFrames = 0
    /// Server role with manual flow control: what to return of each received chunk (nil: all of it).
    var consumeEachChunk = true

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        events.append(.headers(streamID, headers, endStream: endStream))
        run { try onHeaders?(session, headers, streamID, endStream) }
        if endStream { run { try onEndStream?(session, streamID) } }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        events.append(.data(streamID, Array(data), endStream: endStream))
        bodies[streamID, default: []].append(contentsOf: data)
        if consumeEachChunk { session.consume(streamID: streamID, bytes: data.count) }
        if endStream { run { try onEndStream?(session, streamID) } }
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        events.append(.closed(streamID, errorCode))
    }

    override func http2SessionDidReceiveSettings(_ session: HTTP2Session) {
        events.append(.settings)
    }

    override func http2Session(_ session: HTTP2Session, didNotSendFrameOnStream streamID: Int32, error: HTTP2Error) {
        notSent.append(streamID)
    }

    override func http2SessionDidReceiveControlFrame(_ session: HTTP2Session) {
        controlFrames += 1
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveGoAway lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]
    ) {
        events.append(.goAway(lastStreamID: lastStreamID, errorCode, debugData: debugData))
    }

    private func run(_ hook: () throws -> Void) {
        do { try hook() } catch { hookErrors.append(error) }
    }

    /// Events other than SETTINGS, which every handshake produces.
    var streamEvents: [Event] { events.filter { $0 != .settings } }

    func headerBlocks(on streamID: Int32) -> [[HTTP2Header]] {
        events.compactMap { if case .headers(let id, let headers, _) = $0, id == streamID { headers } else { nil } }
    }

    func closeCode(of streamID: Int32) -> HTTP2ErrorCode? {
        events.lazy.compactMap { if case .closed(let id, let code) = $0, id == streamID { code } else { nil } }.first
    }

    var requestStreamIDs: [Int32] {
        events.compactMap {
            if case .headers(let id, let headers, _) = $0, value(of: ":method", in: headers) != nil { id } else { nil }
        }
    }
}

/// Moves bytes between two sessions, as a socket pair would, until neither has anything to say.
func interactInMemory(_ client: HTTP2Session, _ server: HTTP2Session, maxRounds: Int = 10_000) throws {
    for _ in 0..<maxRounds {
        var toServer: [UInt8] = []
        var toClient: [UInt8] = []
        try client.drainOutput(into: &toServer)
        try server.drainOutput(into: &toClient)
        if toServer.isEmpty && toClient.isEmpty { return }
        if !toServer.isEmpty { try server.receive(toServer) }
        if !toClient.isEmpty { try client.receive(toClient) }
    }
    struct NoQuiescence: Error {}
    throw NoQuiescence()
}

/// A connected client/server pair with recorders, handshake not yet run.
struct Pair {
    let client: HTTP2Session
    let server: HTTP2Session
    let clientEvents: Recorder
    let serverEvents: Recorder

    init(server serverSettings: HTTP2Settings = .serverDefaults, client clientSettings: HTTP2Settings = .clientDefaults)
        throws
    {
        clientEvents = Recorder()
        serverEvents = Recorder()
        client = try HTTP2Session(role: .client, settings: clientSettings, delegate: clientEvents)
        server = try HTTP2Session(role: .server, settings: serverSettings, delegate: serverEvents)
    }

    func interact() throws { try interactInMemory(client, server) }
}

/// HTTP/2 frames (type, flags, stream id, payload) found in a byte stream that starts at a
/// frame boundary, or right after the client preface.
struct Frame {
    var type: UInt8
    var flags: UInt8
    var streamID: UInt32
    var payload: [UInt8]

    static let goAway: UInt8 = 0x7

    static func parse(_ bytes: [UInt8]) -> [Frame] {
        var bytes = bytes[...]
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        if bytes.starts(with: preface) { bytes = bytes.dropFirst(preface.count) }
        var frames: [Frame] = []
        while bytes.count >= 9 {
            let header = Array(bytes.prefix(9))
            let length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
            guard bytes.count >= 9 + length else { break }
            let streamID =
                (UInt32(header[5]) << 24 | UInt32(header[6]) << 16 | UInt32(header[7]) << 8 | UInt32(header[8]))
                & 0x7fff_ffff
            frames.append(
                Frame(
                    type: header[3], flags: header[4], streamID: streamID,
                    payload: Array(bytes.dropFirst(9).prefix(length))))
            bytes = bytes.dropFirst(9 + length)
        }
        return frames
    }

    /// GOAWAY's error code (payload bytes 4..<8).
    var goAwayErrorCode: HTTP2ErrorCode {
        HTTP2ErrorCode(rawValue: payload[4...7].reduce(0) { $0 << 8 | UInt32($1) })
    }
}

func requestHeaders(path: String, method: String = "POST") -> [HTTP2Header] {
    [
        HTTP2Header(":method", method),
        HTTP2Header(":scheme", "https"),
        HTTP2Header(":authority", "example.test"),
        HTTP2Header(name: Array(":path".utf8), value: Array(path.utf8), indexable: false),
        HTTP2Header("content-type", "application/grpc"),
        HTTP2Header("te", "trailers"),
    ]
}

func value(of name: String, in headers: [HTTP2Header]) -> String? {
    headers.first { $0.nameString == name }?.valueString
}
