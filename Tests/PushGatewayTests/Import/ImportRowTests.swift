import PushCSV
import PushStore
import Testing

@testable import PushGateway

@Suite("Import rows: decoding, checks, export lines")
struct ImportRowTests {
    static let validator = ImportRowValidator(apps: [AppConfiguration(name: "ios", bundleID: "com.example.ios")])
    static let token = String(repeating: "AB", count: 32)

    private func jsonLine(_ text: String) throws -> ImportRowFields {
        try Array(text.utf8).withUnsafeBytes { try ImportJSONLine.decode($0) }
    }

    @Test("a JSON line's members become fields; wrong types and unknown members name the member")
    func jsonLines() throws {
        let fields = try jsonLine(#"{"app":"ios","token":"t","enabled":false,"topics":["a","b"],"user_id":"u"}"#)
        #expect(fields == ImportRowFields(app: "ios", token: "t", userID: "u", enabled: false, topics: ["a", "b"]))
        #expect(throws: ImportRowError("enabled", "must be true or false")) { try jsonLine(#"{"enabled":"true"}"#) }
        #expect(throws: ImportRowError("colour", "unknown member (a row has \(ImportColumn.names))")) {
            try jsonLine(#"{"colour":1}"#)
        }
        #expect(throws: ImportRowError("topics", "must be an array of topic names")) {
            try jsonLine(#"{"topics":[1]}"#)
        }
    }

    @Test("CSV: columns in any order, empty cells not given, TRUE/FALSE as spreadsheets write them, topics by ;")
    func csv() throws {
        let columns = try ImportCSVColumns(header: CSVRecord(fields: ["token", "enabled", "app", "topics"], line: 1))
        let fields = try columns.decode(CSVRecord(fields: ["t", "FALSE", "ios", "a; b;"], line: 2))
        #expect(fields == ImportRowFields(app: "ios", token: "t", enabled: false, topics: ["a", "b"]))
        #expect(try columns.decode(CSVRecord(fields: ["t", "", "ios", ""], line: 3)).enabled == nil)
        #expect(throws: ImportInputError.self) {
            try ImportCSVColumns(header: CSVRecord(fields: ["app;token"], line: 1))
        }
        #expect(throws: ImportInputError.self) { try ImportCSVColumns(header: CSVRecord(fields: ["app"], line: 1)) }
    }

    @Test("rows are checked as CreateEndpoint checks them; the token is normalized")
    func checks() throws {
        let row = try Self.validator.validate(ImportRowFields(app: "ios", token: Self.token, topics: ["news"]))
        #expect(row == EndpointImport(app: "ios", token: Self.token.lowercased(), topics: ["news"]))
        #expect(throws: ImportRowError("app", "unknown app \"tv\" (not in the config's apps)")) {
            try Self.validator.validate(ImportRowFields(app: "tv", token: Self.token))
        }
        #expect(throws: ImportRowError.self) { try Self.validator.validate(ImportRowFields(app: "ios", token: "xyz")) }
        // PostgreSQL's text cannot hold U+0000: refused here rather than failing the batch there.
        #expect(throws: ImportRowError("custom_user_data", "must not contain the NUL character (U+0000)")) {
            try Self.validator.validate(ImportRowFields(app: "ios", token: Self.token, customUserData: "a\u{0}b"))
        }
        #expect(
            throws: ImportRowError(
                "topics", "\"bad name!\" is not a topic name (1-256 characters of A-Z, a-z, 0-9, _ and -)")
        ) { try Self.validator.validate(ImportRowFields(app: "ios", token: Self.token, topics: ["bad name!"])) }
    }

    @Test("export lines: CSV quoting where needed; more topics than a row holds go on several rows")
    func exportLines() {
        let endpoint = EndpointRecord(
            id: "e", app: "ios", token: "t", enabled: false, customUserData: "a,\"b\"\nc", createdAt: 0,
            disabledReason: "")
        var out: [UInt8] = []
        ImportRowWriter.append(ExportedEndpoint(endpoint: endpoint, topics: ["x", "y"]), format: .csv, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "ios,t,,\"a,\"\"b\"\"\nc\",false,x;y\r\n")
        out = []
        let topics = (0..<250).map { "t\($0)" }
        ImportRowWriter.append(ExportedEndpoint(endpoint: endpoint, topics: topics), format: .jsonl, to: &out)
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.contains(#""token":"t""#) })
    }
}
