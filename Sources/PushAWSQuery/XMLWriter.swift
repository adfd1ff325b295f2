/// Writes the XML answers of the Query protocol (`<PublishResponse xmlns="…">…`): element names
/// are trusted (our own constants), text is not and is always escaped.
public struct XMLWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// `<name>`, or `<name xmlns="namespace">`.
    public mutating func open(_ name: String, namespace: String? = nil) {
        bytes.append(UInt8(ascii: "<"))
        bytes += name.utf8
        if let namespace {
            bytes += " xmlns=\"".utf8
            Self.escape(namespace, into: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(UInt8(ascii: ">"))
    }

    /// `</name>`.
    public mutating func close(_ name: String) {
        bytes += "</".utf8
        bytes += name.utf8
        bytes.append(UInt8(ascii: ">"))
    }

    /// `<name>text</name>`, the text escaped.
    public mutating func element(_ name: String, _ text: String) {
        open(name)
        Self.escape(text, into: &bytes)
        close(name)
    }

    /// Text escaped for element content (and attribute values): `& < > " '` as entities; tab, line
    /// feed and carriage return as character references, so a parser's normalization keeps them;
    /// characters XML 1.0 cannot carry at all (the other C0 controls, U+FFFE, U+FFFF) as U+FFFD.
    /// Lone surrogates cannot occur in a Swift String.
    public static func escape(_ text: String, into out: inout [UInt8]) {
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x26: out += "&amp;".utf8
            case 0x3C: out += "&lt;".utf8
            case 0x3E: out += "&gt;".utf8
            case 0x22: out += "&quot;".utf8
            case 0x27: out += "&apos;".utf8
            case 0x09: out += "&#9;".utf8
            case 0x0A: out += "&#10;".utf8
            case 0x0D: out += "&#13;".utf8
            case 0x00..<0x20, 0xFFFE, 0xFFFF: out += "\u{FFFD}".utf8
            default: UTF8.encode(scalar) { out.append($0) }
            }
        }
    }
}
