import PushCore
import PushHTTP2
import PushMockSupport

/// The request headers APNs looks at, picked out of a header block in one pass over the bytes.
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
    /// Some header field (any name) appears more than once.
    var hasDuplicate = false

    init(_ headers: [HTTP2Header]) {
        var seen: UInt16 = 0
        for (index, header) in headers.enumerated() {
            let name = header.name
            let bit: UInt16
            switch name.count {
            case 5 where name == Bytes.path: bit = 1 << 0; path = header.value
            case 7 where name == Bytes.method: bit = 1 << 1; method = header.value
            case 7 where name == Bytes.apnsID: bit = 1 << 2; apnsID = header.value
            case 7 where name == Bytes.scheme: bit = 1 << 3
            case 10 where name == Bytes.apnsTopic: bit = 1 << 4; topic = header.value
            case 10 where name == Bytes.authority: bit = 1 << 5
            case 13 where name == Bytes.authorization: bit = 1 << 6; authorization = header.value
            case 13 where name == Bytes.apnsPriority: bit = 1 << 7; priority = header.value
            case 14 where name == Bytes.apnsPushType: bit = 1 << 8; pushType = header.value
            case 15 where name == Bytes.apnsExpiration: bit = 1 << 9; expiration = header.value
            case 16 where name == Bytes.apnsCollapseID: bit = 1 << 10; collapseID = header.value
            default:
                // Any other name: compare with the earlier fields (a request has a dozen at most).
                if !hasDuplicate, headers[..<index].contains(where: { $0.name == name }) { hasDuplicate = true }
                continue
            }
            if seen & bit != 0 { hasDuplicate = true }
            seen |= bit
        }
    }
}

/// APNs's request checks (protocols.md A.2, A.3, A.6), in the order APNs applies them as far as
/// it is documented. Pure: provider-token checks, which need connection state, happen between
/// ``checkRequestLine(_:)`` and ``checkFields(_:)``.
struct APNsRequestValidator {
    /// The device token of a well-formed `/3/device/<token>` path, in lower-case hex bytes.
    enum PathResult {
        case token([UInt8])
        case rejected(APNsReason)
    }

    /// Method, path and duplicate headers. Returns the token, or the reason to reject.
    static func checkRequestLine(_ head: APNsRequestHead) -> PathResult {
        guard head.method == Bytes.post else { return .rejected(.methodNotAllowed) }
        guard let path = head.path else { return .rejected(.badPath) }
        if path == Bytes.devicePathBare || path == Bytes.devicePrefix { return .rejected(.missingDeviceToken) }
        guard path.count > Bytes.devicePrefix.count, path.starts(with: Bytes.devicePrefix) else {
            return .rejected(.badPath)
        }
        let token = path[Bytes.devicePrefix.count...]
        guard DeviceToken.lengthRange.contains(token.count), token.allSatisfy(isHexDigit) else {
            return .rejected(.badDeviceToken)
        }
        if head.hasDuplicate { return .rejected(.duplicateHeaders) }
        return .token(lowercasedASCII(Array(token)))
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
    static func checkBody(_ body: [UInt8], bodyLength: Int, pushType: PushType?, validateJSON: Bool) -> APNsReason? {
        if bodyLength == 0 { return .payloadEmpty }
        if bodyLength > (pushType ?? .alert).maxPayloadBytes { return .payloadTooLarge }
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
