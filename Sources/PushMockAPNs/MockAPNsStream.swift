import PushCore
import PushHTTP2

#if canImport(Glibc)
    import Glibc
#endif

/// One request on a connection, from its HEADERS to the answer.
///
/// Takes its own header fields as nghttp2 decodes them (an ``HTTP2HeaderFieldSink``), picking out
/// what APNs reads without collecting the block, unless requests are recorded (then the session
/// collects the block and ``headers`` keeps it).
final class MockAPNsStream: HTTP2HeaderFieldSink {
    let streamID: Int32
    var head = APNsRequestHead()
    /// Every field as received; only when requests are recorded.
    var headers: [HTTP2Header] = []
    private let values: RepeatedFieldValues
    /// Device token bytes (lower-case hex); empty when the path was rejected.
    var token: [UInt8] = []
    /// The request's apns-id when it is a UUID, else nil (a generated one is used).
    var requestAPNsID: [UInt8]?
    var pushType: PushType?
    /// Why the headers were rejected, if they were.
    var headerRejection: APNsReason?
    /// The status of ``headerRejection`` when not the reason's own (a broadcast's 404).
    var rejectionStatus: Int?
    /// A broadcast (`/4/broadcasts/apps/<bundle>`): ``token`` is the channel id.
    var isBroadcast = false
    /// The first (limit + 1) body bytes; `bodyLength` counts all of them. While the bytes
    /// received equal the start of `bodyReference` (the last body that passed the checks), they
    /// are only compared, not copied: `body` stays empty and `matchedBytes` counts them.
    var body: [UInt8] = []
    var bodyLength = 0
    var bodyKeepLimit: Int
    var bodyReference: [UInt8]
    var matchedBytes = 0
    /// The answer was decided (possibly queued behind the response delay).
    var answered = false
    /// The answer was handed to the session.
    var responded = false
    var closed = false

    init(streamID: Int32, values: RepeatedFieldValues, bodyReference: [UInt8], bodyKeepLimit: Int) {
        self.streamID = streamID
        self.values = values
        self.bodyReference = bodyReference
        self.bodyKeepLimit = bodyKeepLimit
    }

    override func headerField(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {
        head.add(name: name, value: value, values: values)
    }

    /// Takes body bytes, up to `bodyKeepLimit` of them.
    func appendBody(_ data: UnsafeRawBufferPointer) {
        defer { bodyLength += data.count }
        if body.isEmpty, bodyLength == matchedBytes {
            let end = matchedBytes + data.count
            if end <= bodyReference.count,
                bodyReference.withUnsafeBytes({
                    memcmp($0.baseAddress! + matchedBytes, data.baseAddress!, data.count) == 0
                })
            {
                matchedBytes = end
                return
            }
            // Different after all: copy what matched so far, then go on copying.
            body.append(contentsOf: bodyReference[..<matchedBytes])
        }
        let room = bodyKeepLimit - body.count
        if room > 0 { body.append(contentsOf: data.prefix(room)) }
    }

    /// Whether the body is exactly the reference body (so it needs no checks beyond its size).
    var bodyIsReference: Bool {
        body.isEmpty && bodyLength == matchedBytes && matchedBytes == bodyReference.count && bodyLength > 0
    }

    /// The body bytes kept (the reference itself when equal to it).
    var keptBody: [UInt8] { bodyIsReference ? bodyReference : body }
}
