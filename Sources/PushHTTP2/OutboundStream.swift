import CNGHTTP2

/// The trailers that end a body: a header list, or a template prepared once (gRPC's OK trailers).
enum OutboundTrailers {
    case headers([HTTP2Header])
    case template(HTTP2HeaderTemplate)

    func withNVs(_ body: (UnsafePointer<nghttp2_nv>?, Int) -> Int32) -> Int32 {
        switch self {
        case .headers(let headers): headers.withNghttp2NVs { body($0, $1) }
        case .template(let template): template.withNVs { body($0, $1) }
        }
    }
}

/// The body still to be sent on one stream: a queue of shared `[UInt8]` chunks that nghttp2's
/// data source read callback drains into its own frame buffer (the only copy of body bytes).
struct OutboundStream {
    enum ReadResult {
        /// Bytes written into nghttp2's buffer; `eof` = nothing more will follow.
        case bytes(Int, eof: Bool)
        /// Queue empty but the stream is not finished: nghttp2 parks the stream until resumed.
        case deferred
    }

    /// The chunk being sent, and the ones queued after it: a body submitted whole (a request, a
    /// unary answer) is `current` alone, with no array of arrays allocated for it.
    private var current: [UInt8]
    private var later: [[UInt8]]
    /// Index of the first chunk of `later` not yet taken into `current`; taken chunks are
    /// dropped lazily so dequeueing is O(1).
    private var head = 0
    /// Bytes of `current` already sent.
    private var offset = 0
    /// No data may be added after the queued chunks.
    private(set) var endQueued: Bool
    /// Trailers to send instead of END_STREAM on the last DATA frame.
    // swift-format-ignore: UseShorthandTypeNames
    private(set) var trailers: Optional<OutboundTrailers>
    /// The read callback returned NGHTTP2_ERR_DEFERRED; new data must call resume_data.
    var deferred = false
    /// Bytes queued and not yet handed to nghttp2 (for the owner's backpressure).
    private(set) var queuedBytes: Int

    // Every field that holds references is set by this one initializer, without a default and
    // with `trailers` spelled `Optional<…>` (a `T?` starts as nil): with initial values, the stores
    // were assignments and the optimizer built the stream aside and copied it out, a retain and a
    // release per field on every request and answer (as `PreparedNotification` found).
    private init(current: [UInt8], trailers: OutboundTrailers?, endQueued: Bool) {
        self.current = current
        self.later = []
        self.trailers = trailers
        self.endQueued = endQueued
        self.queuedBytes = current.count
    }

    init() {
        self.init(current: [], trailers: nil, endQueued: false)
    }

    init(body: [UInt8]) {
        self.init(current: body, trailers: nil, endQueued: true)
    }

    /// The whole body and then `trailers`: a response submitted at once.
    init(body: [UInt8], trailers: OutboundTrailers) {
        self.init(current: body, trailers: trailers, endQueued: false)
    }

    var isFinished: Bool { endQueued || trailers != nil }

    mutating func append(_ bytes: [UInt8], endStream: Bool) {
        if !bytes.isEmpty {
            if offset == current.count, head == later.count {
                current = bytes
                offset = 0
            } else {
                later.append(bytes)
            }
        }
        queuedBytes += bytes.count
        if endStream { endQueued = true }
    }

    mutating func finish(trailers: [HTTP2Header]) {
        self.trailers = .headers(trailers)
    }

    /// Copies as much queued data as fits into `buffer`.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        var written = 0
        while written < buffer.count {
            if offset == current.count {
                guard head < later.count else { break }
                current = later[head]
                head += 1
                offset = 0
                continue
            }
            let n = current.withUnsafeBytes { chunk in
                let n = Swift.min(buffer.count - written, chunk.count - offset)
                buffer.baseAddress!.advanced(by: written)
                    .copyMemory(from: chunk.baseAddress!.advanced(by: offset), byteCount: n)
                return n
            }
            written += n
            offset += n
            queuedBytes -= n
        }
        if offset == current.count, head == later.count {
            // All sent: nothing kept for longer than it is needed.
            current = []
            offset = 0
            // Most bodies are one chunk and never use `later`: emptying it anyway would check its
            // uniqueness and make an empty buffer for nothing.
            if !later.isEmpty {
                later.removeAll(keepingCapacity: true)
                head = 0
            }
            if isFinished { return .bytes(written, eof: true) }
            if written == 0 {
                deferred = true
                return .deferred
            }
        } else if head > 32 {
            later.removeFirst(head)
            head = 0
        }
        return .bytes(written, eof: false)
    }
}
