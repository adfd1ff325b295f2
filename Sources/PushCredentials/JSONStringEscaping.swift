// Writing JSON strings for the tokens and assertions made here, without Foundation.

// Writing JSON strings without Foundation or PushCore (this module depends only on OpenSSL).

/// Appends `value` as a quoted JSON string: `"` and `\` escaped, control characters as `\n`,
/// `\t`… or `\u00XX`; everything else (non-ASCII included) as UTF-8.
func appendJSONString(_ value: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    for byte in value.utf8 {
        switch byte {
        case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
        case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
        case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
        case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
        case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            out += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
        default: out.append(byte)
        }
    }
    out.append(UInt8(ascii: "\""))
}

/// A flat JSON object from members in order: strings quoted, integers as decimal text.
func flatJSONObject(_ members: [(String, FlatJSONObject.Value)]) -> [UInt8] {
    var out: [UInt8] = [UInt8(ascii: "{")]
    for (index, (key, value)) in members.enumerated() {
        if index > 0 { out.append(UInt8(ascii: ",")) }
        appendJSONString(key, to: &out)
        out.append(UInt8(ascii: ":"))
        switch value {
        case .string(let text): appendJSONString(text, to: &out)
        case .integer(let number): out += Array(String(number).utf8)
        case .other: out += Array("null".utf8)
        }
    }
    out.append(UInt8(ascii: "}"))
    return out
}
