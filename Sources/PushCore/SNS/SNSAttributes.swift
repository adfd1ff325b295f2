/// Checks a publish's message attributes and reads the reserved mobile ones (docs/providers.md C.4).
///
/// Non-reserved attributes are only for subscription filter policies: their names are checked
/// here, and they are never delivered to devices (nor are the reserved ones).
public enum SNSAttributes {
    /// Checks every attribute and returns the delivery options for `platformKey`.
    ///
    /// Attributes are checked in name order, so the same request always gives the same error.
    /// APNs attributes are checked even for a `GCM` delivery: a topic publish serves both, and a
    /// bad value should fail the publish the same way whoever subscribes.
    ///
    /// - Throws: ``ValidationError`` whose field is `attributes["<name>"]`.
    public static func parse(
        _ attributes: [String: String], platformKey: PlatformKey
    ) throws(ValidationError) -> SNSDeliveryOptions {
        var options = SNSDeliveryOptions()
        let ttlName = SNSAttributeName.ttl(for: platformKey)
        for name in attributes.keys.sorted() {
            let value = attributes[name]!
            do throws(ValidationError) {
                try apply(name: name, value: value, ttlName: ttlName, to: &options)
            } catch {
                throw ValidationError(field: "attributes[\"\(name)\"]", message: error.message)
            }
        }
        return options
    }

    /// Checks one attribute; errors carry only a message, the caller adds the field.
    private static func apply(
        name: String, value: String, ttlName: String, to options: inout SNSDeliveryOptions
    ) throws(ValidationError) {
        switch name {
        case SNSAttributeName.pushType: options.pushType = try pushType(value)
        case SNSAttributeName.priority: options.priority = try priority(value)
        case SNSAttributeName.topic: options.topic = try headerValue(value, maxBytes: nil, printable: true)
        case SNSAttributeName.collapseID:
            options.collapseID = try headerValue(
                value, maxBytes: NotificationValidator.maxCollapseIDBytes, printable: false)
        case _ where SNSAttributeName.ttlNames.contains(name):
            let ttl = try ttlSeconds(value)
            if name == ttlName { options.ttlSeconds = ttl }
        case _ where SNSAttributeName.isReserved(name):
            throw invalid("names starting with \"AWS.\" or \"Amazon.\" are reserved")
        default:
            guard SNSAttributeName.isWellFormed(name) else {
                throw invalid(
                    "name must be 1-256 characters from A-Za-z0-9_-. without a leading, trailing or doubled '.'")
            }
        }
    }

    private static func invalid(_ message: String) -> ValidationError {
        ValidationError(field: "", message: message)
    }

    private static func pushType(_ value: String) throws(ValidationError) -> PushType {
        guard let type = PushType(rawValue: value) else {
            let known = PushType.allCases.map(\.rawValue).joined(separator: ", ")
            throw invalid("unknown push type \"\(value)\", expected one of \(known)")
        }
        return type
    }

    private static func priority(_ value: String) throws(ValidationError) -> Int {
        switch value {
        case "1": 1
        case "5": 5
        case "10": 10
        default: throw invalid("must be \"1\", \"5\" or \"10\"")
        }
    }

    /// A value that becomes an APNs header: non-empty, no control characters, within `maxBytes`;
    /// `printable` also forbids spaces and non-ASCII (topics are bundle ids or MDM UIDs).
    private static func headerValue(_ value: String, maxBytes: Int?, printable: Bool) throws(ValidationError)
        -> String
    {
        guard !value.isEmpty else { throw invalid("must not be empty") }
        if let maxBytes, value.utf8.count > maxBytes { throw invalid("must be at most \(maxBytes) bytes") }
        if printable, !value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            throw invalid("must be printable ASCII without spaces")
        }
        guard NotificationValidator.isHeaderSafe(value) else { throw invalid("must not contain control characters") }
        return value
    }

    /// A TTL: decimal seconds, `0` or more, within Int64.
    static func ttlSeconds(_ value: String) throws(ValidationError) -> Int64 {
        // Int64(_:) alone would also take "+5" and "-0"; SNS wants plain digits.
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let seconds = Int64(value)
        else { throw invalid("must be a whole number of seconds, 0 or more") }
        return seconds
    }
}
