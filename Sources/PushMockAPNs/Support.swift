import PushCore
import PushHTTP2
import PushMockSupport

// Small helpers for the hot path: byte constants and UUIDs. The generator, clocks and ASCII
// lower-casing live in PushMockSupport (shared with the mock FCM server).

/// A random lowercase UUID v4 (`8-4-4-4-12`), as bytes.
func makeUUIDv4(_ generator: inout SplitMix64) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: 36) { buffer, count in
        writeUUIDv4(&generator, into: UnsafeMutableRawBufferPointer(buffer))
        count = 36
    }
}

/// Writes a random lowercase UUID v4 into the first 36 bytes of `buffer` (no allocation: the
/// mock answers every request with one).
func writeUUIDv4(_ generator: inout SplitMix64, into buffer: UnsafeMutableRawBufferPointer) {
    precondition(buffer.count >= 36)
    var high = generator.next()
    var low = generator.next()
    // Version 4 in the high nibble of byte 6, variant 10 in the top bits of byte 8.
    high = (high & ~(0xF << 12)) | (0x4 << 12)
    low = (low & ~(0xC << 60)) | (0x8 << 60)
    var out = 0
    for index in 0..<16 {
        if index == 4 || index == 6 || index == 8 || index == 10 {
            buffer[out] = UInt8(ascii: "-")
            out += 1
        }
        let word = index < 8 ? high : low
        let byte = UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64(index % 8)))
        buffer[out] = hexDigit(byte >> 4)
        buffer[out + 1] = hexDigit(byte & 0xF)
        out += 2
    }
}

@inline(__always)
private func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
}

@inline(__always)
func isHexDigit(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
        || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
}

@inline(__always)
func isDecimalDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
}

/// Header names and values the mock reads or writes, built once.
enum Bytes {
    static let method = Array(":method".utf8)
    static let path = Array(":path".utf8)
    static let scheme = Array(":scheme".utf8)
    static let authority = Array(":authority".utf8)
    static let authorization = Array("authorization".utf8)
    static let apnsTopic = Array("apns-topic".utf8)
    static let apnsPushType = Array("apns-push-type".utf8)
    static let apnsPriority = Array("apns-priority".utf8)
    static let apnsExpiration = Array("apns-expiration".utf8)
    static let apnsCollapseID = Array("apns-collapse-id".utf8)
    static let apnsID = Array("apns-id".utf8)
    static let apnsChannelID = Array("apns-channel-id".utf8)
    static let broadcastPrefix = Array("/4/broadcasts/apps/".utf8)
    static let post = Array("POST".utf8)
    static let devicePrefix = Array("/3/device/".utf8)
    static let devicePathBare = Array("/3/device".utf8)
    static let bearer = Array("bearer ".utf8)
    static let contentLength = Array("content-length".utf8)
    static let userAgent = Array("user-agent".utf8)
    static let contentType = Array("content-type".utf8)
    static let accept = Array("accept".utf8)
    static let acceptEncoding = Array("accept-encoding".utf8)

    static let status200 = HTTP2Header(name: Array(":status".utf8), value: Array("200".utf8))
    static let contentTypeJSON = HTTP2Header(name: Array("content-type".utf8), value: Array("application/json".utf8))
    static let shutdownDebugData = Array(#"{"reason":"Shutdown"}"#.utf8)

    /// `:status` for the statuses APNs uses, prebuilt; others are built on demand.
    static func status(_ code: Int) -> HTTP2Header {
        switch code {
        case 200: status200
        case 400: status400
        case 403: status403
        case 404: status404
        case 405: status405
        case 410: status410
        case 413: status413
        case 429: status429
        case 500: status500
        case 503: status503
        default: HTTP2Header(":status", String(code))
        }
    }

    private static let status400 = HTTP2Header(":status", "400")
    private static let status403 = HTTP2Header(":status", "403")
    private static let status404 = HTTP2Header(":status", "404")
    private static let status405 = HTTP2Header(":status", "405")
    private static let status410 = HTTP2Header(":status", "410")
    private static let status413 = HTTP2Header(":status", "413")
    private static let status429 = HTTP2Header(":status", "429")
    private static let status500 = HTTP2Header(":status", "500")
    private static let status503 = HTTP2Header(":status", "503")

    /// An `apns-id` response header around the given value; not HPACK-indexed (unique per response).
    static func apnsIDHeader(_ value: [UInt8]) -> HTTP2Header {
        HTTP2Header(name: apnsID, value: value, indexable: false)
    }

    /// The 200 answer, `:status: 200` and `apns-id`, prepared once; entry ``ok200IDIndex`` takes
    /// each answer's id.
    static let ok200 = HTTP2HeaderTemplate([status200, apnsIDHeader(Array(repeating: UInt8(ascii: "0"), count: 36))])
    static let ok200IDIndex = 1
}
