import PushCore

/// Checks a send body the way ADM does, as far as the mock models it: a JSON object whose `data`
/// is a map of strings, an optional `consolidationKey` (a string of at most 64 characters), an
/// optional `expiresAfter` (an integer number of seconds, 1 to 2592000) and an optional `md5`
/// (its shape only). Other members are let through (ADM has grown fields, e.g. `notification`).
enum ADMSendValidator {
    /// "up to 6KB": the whole body, in bytes.
    static let maxBodyBytes = 6144
    static let maxConsolidationKeyLength = 64
    /// 30 days.
    static let expiresAfterRange = 1...2_592_000

    /// nil when the body is a valid send, else the reason ADM answers.
    static func validate(_ body: [UInt8]) -> ADMReason? {
        guard let document = try? JSONParser.parse(body), document.objectMembers != nil else { return .invalidData }
        guard let data = document["data"]?.objectMembers,
            data.allSatisfy({ if case .string = $0.1 { true } else { false } })
        else { return .invalidData }
        if let key = document["consolidationKey"] {
            guard case .string(let text) = key, text.unicodeScalars.count <= maxConsolidationKeyLength else {
                return .invalidConsolidationKey
            }
        }
        if let expiresAfter = document["expiresAfter"] {
            // An integer: plain digits, no fraction or exponent.
            guard case .number(let text) = expiresAfter, let seconds = Int(text), expiresAfterRange.contains(seconds)
            else { return .invalidExpiration }
        }
        if let md5 = document["md5"] {
            // Base64 of 16 bytes: 22 characters and "==".
            guard case .string(let text) = md5, text.utf8.count == 24, text.hasSuffix("=="),
                text.dropLast(2).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/") })
            else { return .invalidChecksum }
        }
        return nil
    }
}
