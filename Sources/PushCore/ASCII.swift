// Byte-level ASCII helpers shared by the parsers and validators (no String work in loops).

/// The value of one ASCII hex digit (either case), or nil.
func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// The byte with ASCII `A`–`Z` mapped to `a`–`z`.
func lowercasedASCII(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 0x20 : byte
}

extension String {
    /// `utf8.allSatisfy(predicate)` over the string's contiguous bytes when it has them (a native
    /// string does): stepping through the UTF-8 view costs several times what a buffer does.
    func allUTF8(_ predicate: (UInt8) -> Bool) -> Bool {
        utf8.withContiguousStorageIfAvailable { $0.allSatisfy(predicate) } ?? utf8.allSatisfy(predicate)
    }
}
