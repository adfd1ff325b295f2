import PushCore
public import PushStore

/// `pushgate export`'s rows, in the format `pushgate import` reads: every column, so that an export
/// imported elsewhere gives the same endpoints.
public enum ImportRowWriter {
    /// The CSV header line (with its line end).
    public static let csvHeader = "app,token,user_id,custom_user_data,enabled,topics\r\n"

    /// One endpoint as a line (with its line end) appended to `out`; an endpoint of more topics than
    /// a row may list as several lines (the import merges rows of the same token).
    public static func append(_ exported: ExportedEndpoint, format: ImportFormat, to out: inout [UInt8]) {
        guard exported.topics.count > maxTopicsPerRow else { return appendRow(exported, format: format, to: &out) }
        for start in stride(from: 0, to: exported.topics.count, by: maxTopicsPerRow) {
            var part = exported
            part.topics = Array(exported.topics[start..<min(start + maxTopicsPerRow, exported.topics.count)])
            appendRow(part, format: format, to: &out)
        }
    }

    private static func appendRow(_ exported: ExportedEndpoint, format: ImportFormat, to out: inout [UInt8]) {
        let endpoint = exported.endpoint
        switch format {
        case .jsonl:
            var writer = JSONWriter(reservingCapacity: 256 + endpoint.token.utf8.count)
            writer.beginObject()
            writer.member("app", string: endpoint.app)
            writer.member("token", string: endpoint.token)
            writer.member("user_id", nonEmpty: endpoint.userID)
            writer.member("custom_user_data", nonEmpty: endpoint.customUserData)
            writer.key("enabled")
            writer.bool(endpoint.enabled)
            writer.member("topics", nonEmpty: exported.topics)
            writer.endObject()
            out += writer.bytes
            out.append(0x0A)
        case .csv:
            // RFC 4180 line ends (CR LF); cells quoted only where they must be.
            let cells = [
                endpoint.app, endpoint.token, endpoint.userID, endpoint.customUserData,
                endpoint.enabled ? "true" : "false",
                exported.topics.joined(separator: ";"),
            ]
            for (index, cell) in cells.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                appendCSV(cell, to: &out)
            }
            out += [0x0D, 0x0A]
        }
    }

    private static func appendCSV(_ cell: String, to out: inout [UInt8]) {
        let needsQuotes = cell.utf8.contains { $0 == UInt8(ascii: ",") || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }
        guard needsQuotes else {
            out += cell.utf8
            return
        }
        out.append(0x22)
        for byte in cell.utf8 {
            if byte == 0x22 { out.append(0x22) }
            out.append(byte)
        }
        out.append(0x22)
    }
}
