import PushCore
import PushHTTP2
import PushMockSupport

/// The request headers APNs looks at, picked out of a header block field by field: from the
/// fields as nghttp2 decodes them (``add(name:value:values:)``, the mock's hot path) or from a
/// collected block (``init(_:values:)``).
struct APNsRequestHead {
    var method: [UInt8]?
    var path: [UInt8]?
    var authorization: [UInt8]?
    var topic: [UInt8]?
    var pushType: [UInt8]?
    var priority: [UInt8]?
    var expiration: [UInt8]?
    var collapseID: [UInt8]?
    var apnsID: [UInt8]?
    /// `apns-channel-id` (broadcasts).
    var channelID: [UInt8]?
    /// Some header field (any name) appears more than once.
    var hasDuplicate = false
    /// One bit per name below seen so far.
    private var seen: UInt32 = 0
    /// Names outside the table, for the duplicate check (rare: a request has a dozen fields).
    private var otherNames: [[UInt8]] = []

    init() {}

    init(_ headers: [HTTP2Header], values: RepeatedFieldValues) {
        for header in headers {
            header.name.withUnsafeBufferPointer { name in
                header.value.withUnsafeBufferPointer { value in add(name: name, value: value, values: values) }
            }
        }
    }

    /// Takes one field. Values that repeat from request to request (everything but `:path` and
    /// `apns-id`) come from `values`, shared with the previous request's when equal.
    mutating func add(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, values: RepeatedFieldValues)
    {
        let bit: UInt32
        switch name.count {
        case 5 where name.equals(Bytes.path):
            bit = 1 << 0
            path = Array(value)
        case 7 where name.equals(Bytes.method):
            bit = 1 << 1
            method = values.value(value, slot: 0)
        case 7 where name.equals(Bytes.apnsID):
            bit = 1 << 2
            apnsID = Array(value)
        case 7 where name.equals(Bytes.scheme): bit = 1 << 3
        case 10 where name.equals(Bytes.apnsTopic):
            bit = 1 << 4
            topic = values.value(value, slot: 1)
        case 10 where name.equals(Bytes.authority): bit = 1 << 5
        case 13 where name.equals(Bytes.authorization):
            bit = 1 << 6
            authorization = values.value(value, slot: 2)
        case 13 where name.equals(Bytes.apnsPriority):
            bit = 1 << 7
            priority = values.value(value, slot: 3)
        case 14 where name.equals(Bytes.apnsPushType):
            bit = 1 << 8
            pushType = values.value(value, slot: 4)
        case 15 where name.equals(Bytes.apnsExpiration):
            bit = 1 << 9
            expiration = values.value(value, slot: 5)
        case 15 where name.equals(Bytes.apnsChannelID):
            bit = 1 << 16
            channelID = Array(value)
        case 16 where name.equals(Bytes.apnsCollapseID):
            bit = 1 << 10
            collapseID = values.value(value, slot: 6)
        // Not read, but common: named here so that they need no copy for the duplicate check.
        case 14 where name.equals(Bytes.contentLength): bit = 1 << 11
        case 10 where name.equals(Bytes.userAgent): bit = 1 << 12
        case 12 where name.equals(Bytes.contentType): bit = 1 << 13
        case 6 where name.equals(Bytes.accept): bit = 1 << 14
        case 15 where name.equals(Bytes.acceptEncoding): bit = 1 << 15
        default:
            if !hasDuplicate, otherNames.contains(where: { name.equals($0) }) { hasDuplicate = true }
            otherNames.append(Array(name))
            return
        }
        if seen & bit != 0 { hasDuplicate = true }
        seen |= bit
    }
}

/// The last value received for each of a few header fields, per connection: a value equal to the
/// last one is shared (a compare and a retain instead of an allocation and a copy), as a
/// client's requests repeat their method, topic, push type and credential.
final class RepeatedFieldValues {
    private var last: [[UInt8]?] = Array(repeating: nil, count: 8)

    func value(_ value: UnsafeBufferPointer<UInt8>, slot: Int) -> [UInt8] {
        if let previous = last[slot], value.equals(previous) {
            return previous
        }
        let fresh = Array(value)
        last[slot] = fresh
        return fresh
    }
}

/// APNs's request checks (docs/providers.md A.2, A.3, A.6), in an order consistent with APNs's
/// answers (Apple documents the reasons, not their order). Pure: provider-token checks, which need connection state, happen between
/// ``checkRequestLine(_:)`` and ``checkFields(_:)``.
struct APNsRequestValidator {
    /// The device token of a well-formed `/3/device/<token>` path, in lower-case hex bytes.
    enum PathResult {
        case token([UInt8])
        /// `/4/broadcasts/apps/<bundle id>`: a broadcast for that app.
        case broadcast(String)
        case rejected(APNsReason)
    }

    /// Method, path and duplicate headers. Returns the token, or the reason to reject.
    static func checkRequestLine(_ head: APNsRequestHead) -> PathResult {
        guard head.method == Bytes.post else { return .rejected(.methodNotAllowed) }
        guard let path = head.path else { return .rejected(.badPath) }
        if path.starts(with: Bytes.broadcastPrefix) {
            let bundle = path[Bytes.broadcastPrefix.count...]
            guard !bundle.isEmpty, !bundle.contains(UInt8(ascii: "/")) else { return .rejected(.badPath) }
            if head.hasDuplicate { return .rejected(.duplicateHeaders) }
            return .broadcast(String(decoding: bundle, as: UTF8.self))
        }
        if path == Bytes.devicePathBare || path == Bytes.devicePrefix { return .rejected(.missingDeviceToken) }
        let prefixLength = Bytes.devicePrefix.count
        guard path.count > prefixLength, path.starts(with: Bytes.devicePrefix) else {
            return .rejected(.badPath)
        }
        let tokenLength = path.count - prefixLength
        guard DeviceToken.lengthRange.contains(tokenLength) else { return .rejected(.badDeviceToken) }
        // One pass over the token's bytes: check each is hex and copy it lower-cased.
        var invalid: UInt8 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: tokenLength) { out, count in
            path.withUnsafeBufferPointer { source in
                lowerHexTable.withUnsafeBufferPointer { table in
                    for index in 0..<tokenLength {
                        let mapped = table[Int(source[prefixLength + index])]
                        invalid |= mapped == 0 ? 1 : 0
                        out[index] = mapped
                    }
                }
            }
            count = tokenLength
        }
        guard invalid == 0 else { return .rejected(.badDeviceToken) }
        if head.hasDuplicate { return .rejected(.duplicateHeaders) }
        return .token(bytes)
    }

    /// Everything after authentication: topic, push type, topic suffix, priority, expiration,
    /// collapse id, apns-id. On success returns the push type (nil when the header is absent).
    static func checkFields(_ head: APNsRequestHead) -> Result<PushType?, APNsReasonError> {
        guard let topic = head.topic else { return .failure(.init(.missingTopic)) }
        guard !topic.isEmpty, topic.allSatisfy(isTopicByte) else { return .failure(.init(.badTopic)) }
        var pushType: PushType?
        if let value = head.pushType {
            guard let type = pushTypeTable.first(where: { $0.bytes == value })?.type else {
                return .failure(.init(.invalidPushType))
            }
            pushType = type
            if let reason = topicMismatch(topic: topic, type: type) { return .failure(.init(reason)) }
        }
        if let priority = head.priority {
            guard priority == p10 || priority == p5 || priority == p1 else { return .failure(.init(.badPriority)) }
            if pushType == .background && priority == p10 { return .failure(.init(.badPriority)) }
        }
        if let expiration = head.expiration {
            guard (1...19).contains(expiration.count), expiration.allSatisfy(isDecimalDigit) else {
                return .failure(.init(.badExpirationDate))
            }
        }
        if let collapseID = head.collapseID, collapseID.count > 64 { return .failure(.init(.badCollapseId)) }
        if let apnsID = head.apnsID, !isUUID(apnsID) { return .failure(.init(.badMessageId)) }
        return .success(pushType)
    }

    /// Empty body, size limit for the push type, then (optionally) one strict JSON object.
    /// `body` holds at most limit + 1 bytes; `bodyLength` is the full length received.
    static func checkBody(_ body: [UInt8], bodyLength: Int, maxPayloadBytes: Int, validateJSON: Bool) -> APNsReason? {
        if bodyLength == 0 { return .payloadEmpty }
        if bodyLength > maxPayloadBytes { return .payloadTooLarge }
        if validateJSON {
            // Not a JSON object: Apple documents no reason for it; PayloadEmpty is the documented
            // 400 closest in meaning ("no usable payload") and one every client knows.
            guard let value = try? JSONParser.parse(body), value.objectMembers != nil else { return .payloadEmpty }
        }
        return nil
    }

    /// A type whose topic needs a suffix, sent to a topic without it, is a token registered for
    /// another topic (DeviceTokenNotForTopic, what APNs answers e.g. for a VoIP push to the bare
    /// bundle id). A type without a suffix sent to a suffixed topic is TopicDisallowed. MDM topics
    /// are certificate UIDs and are not checked.
    static func topicMismatch(topic: [UInt8], type: PushType) -> APNsReason? {
        switch type {
        case .mdm:
            return nil
        case .alert, .background:
            let suffixed = pushTypeTable.contains { !$0.suffix.isEmpty && hasSuffix(topic, $0.suffix) }
            return suffixed ? .topicDisallowed : nil
        default:
            let suffix = pushTypeTable.first { $0.type == type }!.suffix
            return hasSuffix(topic, suffix) ? nil : .deviceTokenNotForTopic
        }
    }

    // MARK: Byte helpers

    /// Each byte's lower-case hex digit, 0 for a byte that is not a hex digit.
    private static let lowerHexTable: [UInt8] = (0..<256).map { value in
        let byte = UInt8(value)
        guard isHexDigit(byte) else { return 0 }
        return byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F") ? byte | 0x20 : byte
    }

    private static let p10 = Array("10".utf8)
    private static let p5 = Array("5".utf8)
    private static let p1 = Array("1".utf8)
    private static let pushTypeTable: [(type: PushType, bytes: [UInt8], suffix: [UInt8])] =
        PushType.allCases.map { ($0, Array($0.rawValue.utf8), Array($0.topicSuffix.utf8)) }

    /// A non-empty bundle id followed by `suffix`.
    private static func hasSuffix(_ topic: [UInt8], _ suffix: [UInt8]) -> Bool {
        topic.count > suffix.count && topic[(topic.count - suffix.count)...].elementsEqual(suffix)
    }

    /// Bundle ids are letters, digits, '.', '-' (MDM UIDs add '_' and ':' here and there).
    private static func isTopicByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
            UInt8(ascii: ":"):
            true
        default: false
        }
    }

    /// `8-4-4-4-12` hex digits, either case.
    static func isUUID(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else if !isHexDigit(byte) {
                return false
            }
        }
        return true
    }
}

/// An APNs reason as an Error, so checks can return `Result`.
struct APNsReasonError: Error {
    let reason: APNsReason
    init(_ reason: APNsReason) { self.reason = reason }
}
