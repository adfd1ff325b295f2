/// The declarative form of a Web Push message (Declarative Web Push: the Push API's "declarative
/// push message", shipped in Safari 18.4; docs/providers.md, Web Push): JSON a browser shows by
/// itself, without a service worker, still encrypted per subscriber (RFC 8291):
///
/// `{"web_push":8030,"notification":{"title":…,"body":…,"navigate":…,"lang":…,"dir":…,"silent":true,
/// "mutable":true,"image":…,"data":…},"app_badge":N}`
///
/// | Field                       | Declarative member                                       |
/// |-----------------------------|----------------------------------------------------------|
/// | `alert.title` (required)    | `notification.title`                                     |
/// | `alert.body`, `alert.image` | `notification.body`, `notification.image`               |
/// | `webpush.navigate` (required, an https URL) | `notification.navigate`: opened on a click |
/// | `webpush.lang`, `.dir`, `.silent`, `.mutable` | `notification.lang`, `.dir`, `.silent`, `.mutable` (only when set) |
/// | `data_json`                 | `notification.data`                                      |
/// | `badge`                     | `app_badge` (top level, as the Push API and WebKit since May 2025 read it) |
enum WebPushDeclarativeMessage {
    static let directions: Set<String> = ["auto", "ltr", "rtl"]
    static let maxNavigateBytes = 2048

    static func build(_ n: NotificationRequest, _ options: NotificationRequest.WebPushOptions) throws(ValidationError)
        -> [UInt8]
    {
        guard n.payloadJSON.isEmpty else {
            throw ValidationError(
                field: "payload_json", message: "must be empty with webpush.declarative: Pushgate builds the 8030 JSON")
        }
        if n.contentAvailable {
            throw ValidationError(
                field: "content_available", message: "has no place in a declarative message (it is always shown)")
        }
        let alert = n.alert ?? NotificationRequest.Alert()
        guard !alert.title.isEmpty else {
            throw ValidationError(field: "alert.title", message: "is required for a declarative message")
        }
        try checkNavigate(options.navigate)
        if !options.dir.isEmpty, !directions.contains(options.dir) {
            throw ValidationError(field: "webpush.dir", message: "must be auto, ltr or rtl")
        }
        if !options.lang.isEmpty, !isLanguageTag(options.lang) {
            throw ValidationError(
                field: "webpush.lang", message: "must be a BCP 47 language tag (letters, digits and -, at most 35)")
        }
        var data: JSONValue?
        if !n.dataJSON.isEmpty {
            do throws(JSONError) {
                data = try JSONParser.parse(n.dataJSON.utf8)
            } catch {
                throw ValidationError(field: "data_json", message: error.description)
            }
        }
        var writer = JSONWriter(reservingCapacity: 256 + n.dataJSON.utf8.count)
        writer.beginObject()
        writer.key("web_push")
        writer.int(8030)
        writer.key("notification")
        writer.beginObject()
        writer.member("title", string: alert.title)
        writer.member("body", nonEmpty: alert.body)
        writer.member("navigate", string: options.navigate)
        writer.member("lang", nonEmpty: options.lang)
        writer.member("dir", nonEmpty: options.dir)
        if options.silent {
            writer.key("silent")
            writer.value(.bool(true))
        }
        if options.mutable {
            writer.key("mutable")
            writer.value(.bool(true))
        }
        writer.member("image", nonEmpty: alert.image)
        if let data {
            writer.key("data")
            writer.value(data)
        }
        writer.endObject()
        if let badge = n.badge {
            writer.key("app_badge")
            writer.int(badge)
        }
        writer.endObject()
        return writer.bytes
    }

    /// An absolute https URL: the page a click opens (Pushgate does not know the subscription's
    /// origin, so the relative URLs the Push API also allows are refused).
    static func checkNavigate(_ url: String) throws(ValidationError) {
        guard !url.isEmpty else {
            throw ValidationError(field: "webpush.navigate", message: "is required for a declarative message")
        }
        let bytes = url.utf8
        let scheme = "https://".utf8
        guard bytes.count <= maxNavigateBytes, bytes.starts(with: scheme), bytes.count > scheme.count,
            bytes.dropFirst(scheme.count).first != UInt8(ascii: "/"),
            bytes.allSatisfy({ $0 > 0x20 && $0 != 0x7F })
        else {
            throw ValidationError(
                field: "webpush.navigate",
                message: "must be an absolute https URL (https://host/...), at most \(maxNavigateBytes) bytes")
        }
    }

    static func isLanguageTag(_ text: String) -> Bool {
        let bytes = text.utf8
        return bytes.count <= 35 && bytes.first.map(TokenShape.isAlphanumeric) == true
            && bytes.allSatisfy { TokenShape.isAlphanumeric($0) || $0 == UInt8(ascii: "-") }
    }
}
