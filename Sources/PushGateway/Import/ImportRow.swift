import PushCSV
import PushCore

/// The file formats of `pushgate import` and `pushgate export` (docs/import.md).
public enum ImportFormat: String, Sendable, CaseIterable {
    /// JSON Lines: one object a line.
    case jsonl
    /// RFC 4180 CSV with a header line of column names.
    case csv

    /// The format a file's name says (`.csv`; `.jsonl`, `.ndjson`, `.json`), or nil.
    public init?(fileName: String) {
        let lower = fileName.lowercased()
        if lower.hasSuffix(".csv") {
            self = .csv
        } else if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") || lower.hasSuffix(".json") {
            self = .jsonl
        } else {
            return nil
        }
    }
}

/// The columns of a row: JSON Lines members and CSV header names alike.
enum ImportColumn: String, CaseIterable, Sendable {
    case app
    case token
    case userID = "user_id"
    case customUserData = "custom_user_data"
    case enabled
    case topics

    static let names = allCases.map(\.rawValue).joined(separator: ", ")
}

/// A row as read from the input, before its values are checked against the apps.
struct ImportRowFields: Sendable, Equatable {
    var app: String?
    var token: String?
    var userID: String?
    var customUserData: String?
    var enabled: Bool?
    var topics: [String] = []
}

/// Why a row was not imported: the field at fault (empty: the row as a whole) and what is wrong.
public struct ImportRowError: Error, Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var message: String

    init(_ field: String, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { field.isEmpty ? message : "\(field): \(message)" }
}

/// An input that cannot be imported at all (a CSV header without `token`, say): nothing is imported.
public struct ImportInputError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// The most topics one row may list (a row is one device; this bounds a row's work and memory).
let maxTopicsPerRow = 100

/// JSON Lines rows: `{"app": …, "token": …, "user_id": …, "custom_user_data": …, "enabled": …,
/// "topics": [...]}`, members in any order, only `app` and `token` required.
enum ImportJSONLine {
    /// The most values a line may hold: its members and a row's topics, with room to spare.
    static let maxValues = 4 * maxTopicsPerRow

    static func decode(_ line: UnsafeRawBufferPointer) throws(ImportRowError) -> ImportRowFields {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line.bindMemory(to: UInt8.self), maxDepth: 3, maxValues: maxValues)
        } catch {
            throw ImportRowError("", "not a JSON object: \(error)")
        }
        guard let members = value.objectMembers else { throw ImportRowError("", "not a JSON object") }
        var fields = ImportRowFields()
        for (name, member) in members {
            guard let column = ImportColumn(rawValue: name) else {
                throw ImportRowError(
                    name, "unknown member (a row has \(ImportColumn.names))")
            }
            switch column {
            case .app: fields.app = try string(member, name)
            case .token: fields.token = try string(member, name)
            case .userID: fields.userID = try string(member, name)
            case .customUserData: fields.customUserData = try string(member, name)
            case .enabled:
                guard case .bool(let flag) = member else { throw ImportRowError(name, "must be true or false") }
                fields.enabled = flag
            case .topics:
                guard case .array(let items) = member else {
                    throw ImportRowError(name, "must be an array of topic names")
                }
                fields.topics = try items.map { item throws(ImportRowError) in
                    guard case .string(let topic) = item else {
                        throw ImportRowError(name, "must be an array of topic names")
                    }
                    return topic
                }
            }
        }
        return fields
    }

    private static func string(_ value: JSONValue, _ name: String) throws(ImportRowError) -> String {
        guard case .string(let text) = value else { throw ImportRowError(name, "must be a string") }
        return text
    }
}

/// CSV rows: which column holds which field, from the header line.
struct ImportCSVColumns: Sendable {
    private let columns: [ImportColumn]

    init(header: CSVRecord) throws(ImportInputError) {
        var columns: [ImportColumn] = []
        for name in header.fields {
            let trimmed = name.trimmingSpaces
            guard let column = ImportColumn(rawValue: trimmed) else {
                // A spreadsheet set to another list separator writes the header as one column.
                let hint = trimmed.contains(";") ? "; fields must be separated by commas" : ""
                throw ImportInputError(
                    description:
                        "line \(header.line): unknown column \(TextCap.quoted(trimmed)) (columns are \(ImportColumn.names))\(hint)"
                )
            }
            guard !columns.contains(column) else {
                throw ImportInputError(description: "line \(header.line): column \(trimmed) appears twice")
            }
            columns.append(column)
        }
        for required in [ImportColumn.app, .token] where !columns.contains(required) {
            throw ImportInputError(description: "line \(header.line): the header has no \(required.rawValue) column")
        }
        self.columns = columns
    }

    /// An empty cell is a field not given; `enabled` is `true` or `false`; `topics` are names
    /// separated by `;`.
    func decode(_ record: CSVRecord) throws(ImportRowError) -> ImportRowFields {
        guard record.fields.count == columns.count else {
            throw ImportRowError(
                "",
                "\(record.fields.count) fields, the header has \(columns.count) (\(columns.map(\.rawValue).joined(separator: ",")))"
            )
        }
        var fields = ImportRowFields()
        for (column, cell) in zip(columns, record.fields) where !cell.isEmpty {
            switch column {
            case .app: fields.app = cell
            case .token: fields.token = cell
            case .userID: fields.userID = cell
            case .customUserData: fields.customUserData = cell
            case .enabled:
                // Spreadsheets write TRUE and FALSE.
                switch cell.lowercased() {
                case "true": fields.enabled = true
                case "false": fields.enabled = false
                default: throw ImportRowError(column.rawValue, "must be true or false, not \(TextCap.quoted(cell))")
                }
            case .topics:
                fields.topics = cell.split(separator: ";", omittingEmptySubsequences: true).map {
                    String($0).trimmingSpaces
                }
            }
        }
        return fields
    }
}
