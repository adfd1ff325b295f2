import PushCore

/// URI encoding as AWS defines it for Signature Version 4 (and as SDKs write Query bodies): every
/// byte except the unreserved `A-Z a-z 0-9 - _ . ~` becomes `%XX` with upper-case hex.
enum AWSPercentEncoding {
    static func encode(_ bytes: some Sequence<UInt8>, into out: inout [UInt8]) {
        let hexDigits = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0f)])
            }
        }
    }

    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        encode(bytes, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// A query-string name or value decoded: `%XX` escapes, and `+` as a space (botocore writes a
    /// space in a query value as `+` and signs it as `%20`); a `%` without two hex digits after it
    /// is kept as it is, so that any text decodes.
    static func decodeQueryComponent(_ bytes: some Collection<UInt8>) -> [UInt8] {
        LenientPercentDecoding.decode(bytes, plusIsSpace: true)
    }
}
