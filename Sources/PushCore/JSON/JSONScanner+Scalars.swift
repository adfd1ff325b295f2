// Strings and numbers: the byte-level parts of the scanner.
extension JSONScanner {
    /// Parses a string starting at its opening quote. Strings without escapes are decoded straight
    /// from the input; only escaped strings go through a scratch buffer.
    mutating func parseString() throws(JSONError) -> String {
        index += 1
        let start = index
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            case UInt8(ascii: "\\"):
                var scratch = Array(bytes[start..<index])
                return try parseEscapedString(into: &scratch, openingQuote: start - 1)
            default:
                try consumeStringByte(byte)
            }
        }
        throw error("unterminated string", at: start - 1)
    }

    /// Continues a string after its first backslash, collecting decoded bytes in `scratch`.
    mutating func parseEscapedString(into scratch: inout [UInt8], openingQuote: Int) throws(JSONError) -> String {
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &scratch, openingQuote: openingQuote)
            default:
                let start = index
                try consumeStringByte(byte)
                scratch.append(contentsOf: bytes[start..<index])
            }
        }
        throw error("unterminated string", at: openingQuote)
    }

    /// Steps over one unescaped character (1–4 bytes), checking it is allowed and valid UTF-8.
    mutating func consumeStringByte(_ byte: UInt8) throws(JSONError) {
        if byte < 0x20 { throw error("unescaped control character in string") }
        if byte < 0x80 {
            index += 1
            return
        }
        guard let length = utf8SequenceLength(at: index) else { throw error("invalid UTF-8") }
        index += length
    }

    /// The length of the valid UTF-8 sequence at `i` (Unicode Table 3-7), or nil.
    func utf8SequenceLength(at i: Int) -> Int? {
        func continuation(_ j: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            j < bytes.count && range.contains(bytes[j])
        }
        switch bytes[i] {
        case 0xC2...0xDF: return continuation(i + 1) ? 2 : nil
        case 0xE0: return continuation(i + 1, 0xA0...0xBF) && continuation(i + 2) ? 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF: return continuation(i + 1) && continuation(i + 2) ? 3 : nil
        case 0xED: return continuation(i + 1, 0x80...0x9F) && continuation(i + 2) ? 3 : nil
        case 0xF0: return continuation(i + 1, 0x90...0xBF) && continuation(i + 2) && continuation(i + 3) ? 4 : nil
        case 0xF1...0xF3: return continuation(i + 1) && continuation(i + 2) && continuation(i + 3) ? 4 : nil
        case 0xF4: return continuation(i + 1, 0x80...0x8F) && continuation(i + 2) && continuation(i + 3) ? 4 : nil
        default: return nil
        }
    }

    /// Decodes one escape sequence starting at its backslash.
    mutating func parseEscape(into scratch: inout [UInt8], openingQuote: Int) throws(JSONError) {
        let start = index
        index += 1
        guard let byte = current else { throw error("unterminated string", at: openingQuote) }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let scalar = try parseUnicodeEscape(start: start)
            appendUTF8(scalar, to: &scratch)
        default: throw error("invalid escape sequence", at: start)
        }
    }

    /// Decodes `\uXXXX` (the `\u` already consumed), pairing a high surrogate with the `\uXXXX`
    /// low surrogate that must follow it.
    mutating func parseUnicodeEscape(start: Int) throws(JSONError) -> UInt32 {
        let first = try parseHex4(escapeStart: start)
        switch first {
        case 0xD800...0xDBFF:
            let lowStart = index
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                bytes[index + 1] == UInt8(ascii: "u")
            else { throw error("unpaired surrogate in \\u escape", at: start) }
            index += 2
            let second = try parseHex4(escapeStart: lowStart)
            guard (0xDC00...0xDFFF).contains(second) else {
                throw error("unpaired surrogate in \\u escape", at: start)
            }
            return 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        case 0xDC00...0xDFFF:
            throw error("unpaired surrogate in \\u escape", at: start)
        default:
            return first
        }
    }

    mutating func parseHex4(escapeStart: Int) throws(JSONError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = hexValue(byte) else {
                throw error("invalid \\u escape, expected 4 hex digits", at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        // Surrogates were rejected above, so every value here is a valid scalar.
        for unit in UTF8.encode(Unicode.Scalar(scalar)!)! { out.append(unit) }
    }

    /// Parses `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` and returns its text.
    mutating func parseNumber() throws(JSONError) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
            if let byte = current, isDigit(byte) { throw error("leading zeros are not allowed", at: start) }
        } else {
            try digits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            try digits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            try digits()
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// One or more digits.
    mutating func digits() throws(JSONError) {
        guard let byte = current, isDigit(byte) else { throw error("expected a digit") }
        while let byte = current, isDigit(byte) { index += 1 }
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
