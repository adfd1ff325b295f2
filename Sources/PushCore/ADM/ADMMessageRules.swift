/// The rules every ADM request body meets, however it was made (built from a notification's
/// fields, given as `payload_json`, or from an SNS `ADM` value), so a mistake fails once, here,
/// instead of once per registration id at ADM.
///
/// The body (Amazon's "Send a Message"): `{"data":{…},"consolidationKey":"…","expiresAfter":N}`,
/// plus the optional `md5`, a base64 MD5 checksum of `data` that ADM verifies (`InvalidChecksum`);
/// it is passed through unchecked. ADM's newer `notification` member is refused on purpose: the
/// gateway sends data messages only (docs/providers.md D.2).
public enum ADMMessageRules {
    /// ADM's message limit, 6 KB. Amazon counts it on `data`; it is checked here on the whole
    /// body, a few dozen bytes stricter, as the mock ADM checks it.
    public static let maxBodyBytes = 6144
    /// The shortest `expiresAfter` sent, in seconds.
    public static let minExpiresAfter: Int64 = 1
    /// The longest `expiresAfter` ADM keeps a message: 30 days.
    public static let maxExpiresAfter: Int64 = 2_592_000
    /// How long ADM keeps a message without `expiresAfter`: one week.
    public static let defaultExpiresAfter: Int64 = 604_800
    /// The longest `consolidationKey`, in bytes; the same as a notification's `collapse_id`
    /// (``NotificationValidator/maxCollapseIDBytes``), which becomes it.
    public static let maxConsolidationKeyBytes = NotificationValidator.maxCollapseIDBytes

    /// The members a body may have, in the order a built body writes them.
    public static let bodyKeys = ["data", "consolidationKey", "expiresAfter", "md5"]

    /// Parses a caller-made body (`payload_json`, an SNS `ADM` value): it must be a JSON object.
    ///
    /// - Parameter field: the body's place, the error's field (`payload_json`, `message.ADM`).
    static func parseBody(_ text: String, field: String) throws(ValidationError) -> [(String, JSONValue)] {
        try JSONParser.parseObject(
            text, field: field, expected: ": the ADM message {\"data\":{…},\"consolidationKey\":…,\"expiresAfter\":…}")
    }

    /// Checks a caller-made body and returns its `expiresAfter`.
    ///
    /// The checks: only ``bodyKeys``; `data` an object of strings; `consolidationKey` a string of
    /// at most ``maxConsolidationKeyBytes`` bytes without control characters; `expiresAfter` whole
    /// seconds in ``minExpiresAfter``...``maxExpiresAfter``; `md5` a string.
    ///
    /// - Parameter field: the body's place (`payload_json`, `message.ADM`); errors name the member
    ///   (`payload_json.data.count`).
    static func checkBody(_ members: [(String, JSONValue)], field: String) throws(ValidationError) -> Int64? {
        var expiresAfter: Int64?
        for (key, value) in members {
            let memberField = "\(field).\(key)"
            switch key {
            case "data":
                _ = try JSONStringMap.members(of: value, field: memberField, why: " (ADM data values are strings)")
            case "consolidationKey": try checkConsolidationKey(value, field: memberField)
            case "expiresAfter": expiresAfter = try checkExpiresAfter(value, field: memberField)
            case "md5":
                guard case .string = value else {
                    throw ValidationError(field: memberField, message: "must be a JSON string (base64 MD5 of data)")
                }
            default:
                throw ValidationError(
                    field: memberField,
                    message: "is not an ADM message field (\(bodyKeys.joined(separator: ", ")))")
            }
        }
        return expiresAfter
    }

    private static func checkConsolidationKey(_ value: JSONValue, field: String) throws(ValidationError) {
        guard case .string(let key) = value else {
            throw ValidationError(field: field, message: "must be a JSON string")
        }
        guard key.utf8.count <= maxConsolidationKeyBytes else {
            throw ValidationError(field: field, message: "must be at most \(maxConsolidationKeyBytes) bytes")
        }
        guard NotificationValidator.isHeaderSafe(key) else {
            throw ValidationError(field: field, message: "must not contain control characters")
        }
    }

    /// `expiresAfter`: a JSON integer (no sign, fraction or exponent) in range.
    private static func checkExpiresAfter(_ value: JSONValue, field: String) throws(ValidationError) -> Int64 {
        guard case .number(let text) = value, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let seconds = Int64(text), (minExpiresAfter...maxExpiresAfter).contains(seconds)
        else {
            throw ValidationError(
                field: field,
                message: "must be a whole number of seconds from \(minExpiresAfter) to \(maxExpiresAfter) (30 days)")
        }
        return seconds
    }

    /// Refuses a body over ``maxBodyBytes``.
    ///
    /// - Parameter field: what to blame: `payload_json`, `message.ADM`, or empty for the whole
    ///   notification.
    static func checkSize(_ body: [UInt8], field: String) throws(ValidationError) {
        guard body.count <= maxBodyBytes else {
            throw ValidationError(
                field: field,
                message: "the ADM message is \(body.count) bytes, over the ADM limit of \(maxBodyBytes) bytes")
        }
    }
}
