import Glibc
import PushHTTP2

// Small helpers for the hot path: byte constants, a fast generator, UUIDs and the wall clock.

/// SplitMix64: one add and a few multiplies per draw. `mix` is also used on its own as a
/// counter-based generator (draw n = mix(seed + n·γ)), which is what makes fault shares
/// reproducible across connections and threads.
struct SplitMix64 {
    static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15
    var state: UInt64

    init(seed: UInt64) { state = seed }

    /// Seeded from the system generator (one getrandom call).
    init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    mutating func next() -> UInt64 {
        state &+= Self.gamma
        return Self.mix(state)
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The nth draw of the counter-based sequence for `seed`, as a double in [0, 1).
    static func unitDouble(seed: UInt64, index: UInt64) -> Double {
        let bits = mix(seed &+ (index &+ 1) &* gamma)
        return Double(bits >> 11) * 0x1p-53
    }
}

private let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

/// A random lowercase UUID v4 (`8-4-4-4-12`), as bytes.
func makeUUIDv4(_ generator: inout SplitMix64) -> [UInt8] {
    var high = generator.next()
    var low = generator.next()
    // Version 4 in the high nibble of byte 6, variant 10 in the top bits of byte 8.
    high = (high & ~(0xF << 12)) | (0x4 << 12)
    low = (low & ~(0xC << 60)) | (0x8 << 60)
    return [UInt8](unsafeUninitializedCapacity: 36) { buffer, count in
        var out = 0
        for index in 0..<16 {
            if index == 4 || index == 6 || index == 8 || index == 10 {
                buffer[out] = UInt8(ascii: "-")
                out += 1
            }
            let word = index < 8 ? high : low
            let byte = UInt8(truncatingIfNeeded: word >> (56 - 8 * UInt64(index % 8)))
            buffer[out] = hexDigits[Int(byte >> 4)]
            buffer[out + 1] = hexDigits[Int(byte & 0xF)]
            out += 2
        }
        count = 36
    }
}

/// Wall-clock time (CLOCK_REALTIME) in milliseconds since the epoch.
func wallClockMillis() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// Wall-clock time in whole seconds since the epoch.
func wallClockSeconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec)
}

/// Nanoseconds in a non-negative Duration (saturating).
func nanoseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return 0 }
    let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? UInt64.max / 4 : whole &+ UInt64(attoseconds / 1_000_000_000)
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

/// ASCII lower-casing of a byte string (copies only when something changes).
func lowercasedASCII(_ bytes: [UInt8]) -> [UInt8] {
    guard bytes.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return bytes }
    return bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 0x20 : $0 }
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
    static let post = Array("POST".utf8)
    static let devicePrefix = Array("/3/device/".utf8)
    static let devicePathBare = Array("/3/device".utf8)
    static let bearer = Array("bearer ".utf8)

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
}
