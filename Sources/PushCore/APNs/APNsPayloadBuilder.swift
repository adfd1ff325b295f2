/// Builds the APNs JSON body of a notification, once per notification (never per token).
///
/// Output is compact and its key order fixed, so equal requests give identical bytes:
/// `{"aps":{"alert":{…},"badge":N,"sound":…,"thread-id":…,"category":…,"content-available":1,
/// "mutable-content":1,"interruption-level":…},<data_json members>}`. Only set fields appear.
public struct APNsPayloadBuilder {
    /// The payload for `n`: `payload_json` verbatim when set, else built from the fields.
    ///
    /// - Throws: ``ValidationError`` with a field relative to the notification (`data_json`,
    ///   `payload_json`, `sound`, …; empty for "nothing to send"). Field values are not checked
    ///   here (see ``NotificationValidator``).
    public static func build(_ n: NotificationRequest) throws(ValidationError) -> [UInt8] {
        try prepare(n).bytes
    }

    /// `"aps":`.
    private static var apsKey: JSONWriter.Key { .init(quoted: "\"aps\":") }

    /// A built payload plus what validation needs to know about it without re-parsing.
    struct Built {
        var bytes: [UInt8]
        var inferredPushType: PushType
    }

    static func prepare(_ n: NotificationRequest) throws(ValidationError) -> Built {
        if !n.payloadJSON.isEmpty { return try verbatim(n) }
        let data = try parseDataJSON(n.dataJSON)
        guard !n.apsIsEmpty || !(data?.isEmpty ?? true) else {
            throw ValidationError(
                field: "",
                message: "notification has nothing to send: set alert, badge, sound, content_available, "
                    + "data_json or payload_json")
        }
        var writer = JSONWriter(reservingCapacity: 256 + n.dataJSON.utf8.count)
        writer.beginObject()
        writer.key(Self.apsKey)
        writeAPS(n, to: &writer)
        for (key, value) in data ?? [] {
            writer.key(key)
            writer.value(value)
        }
        writer.endObject()
        // Same rule as PushType.infer over these bytes: data_json can't add to `aps`.
        let background = n.contentAvailable && n.apsIsEmptyIgnoringContentAvailable
        return Built(bytes: writer.bytes, inferredPushType: background ? .background : .alert)
    }

    private static func verbatim(_ n: NotificationRequest) throws(ValidationError) -> Built {
        if let field = n.firstPayloadBuildingField {
            throw ValidationError(field: field, message: "must be empty when payload_json is set")
        }
        let payload: JSONValue
        do {
            payload = try JSONParser.parse(n.payloadJSON.utf8)
        } catch {
            throw ValidationError(field: "payload_json", message: error.description)
        }
        guard case .object = payload else {
            throw ValidationError(field: "payload_json", message: "must be a JSON object")
        }
        return Built(bytes: Array(n.payloadJSON.utf8), inferredPushType: PushType.infer(fromPayload: payload))
    }

    /// The members of `data_json`, or nil when it is empty.
    private static func parseDataJSON(_ text: String) throws(ValidationError) -> [(String, JSONValue)]? {
        guard !text.isEmpty else { return nil }
        let value: JSONValue
        do {
            value = try JSONParser.parse(text.utf8)
        } catch {
            throw ValidationError(field: "data_json", message: error.description)
        }
        guard let members = value.objectMembers else {
            throw ValidationError(field: "data_json", message: "must be a JSON object")
        }
        if members.contains(where: { $0.0 == "aps" }) {
            throw ValidationError(
                field: "data_json", message: "must not contain \"aps\"; use the notification's fields")
        }
        return members
    }
}
