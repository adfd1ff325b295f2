import PushCSV
import PushCore
import PushGRPC
public import PushStore

/// The engine of `pushgate import`: input lines in, rows checked as `CreateEndpoint` checks them,
/// batches of good rows committed to the store, bad rows reported by line and skipped.
///
/// The caller feeds lines in order (``feed(line:number:)``), commits when a batch is full
/// (``commitIfFull()``) and at the end (``finish(lastLine:)``). While one batch is written (on the
/// store's own thread), the next is read and checked: the writer's transaction and the parsing run
/// side by side. Memory is two batches, whatever the input's size.
public final class EndpointImporter {
    public struct Summary: Sendable, Equatable {
        /// Rows committed.
        public var rows = 0
        public var bad = 0
        public var counts = ImportCounts()
    }

    private let store: any Store
    private let format: ImportFormat
    private let batchRows: Int
    private let validator: ImportRowValidator
    /// Told of each bad row: its line and what is wrong.
    private let report: (Int, String) -> Void
    private let now: Int64

    private var csv: CSVReader?
    private var csvColumns: ImportCSVColumns?
    private var batch: [EndpointImport] = []
    private var writing: Task<ImportCounts, any Error>?
    private var writingRows = 0
    public private(set) var summary = Summary()

    /// The longest line (JSON Lines) or record (CSV) read, in bytes: a row is one device, and
    /// its largest fields (a Web Push subscription, 2,048 bytes of custom data, 100 topic names)
    /// fit with room to spare.
    public static let maxRowBytes = 65_536

    public init(
        configuration: GatewayConfiguration, store: any Store, format: ImportFormat, batchRows: Int, now: Int64,
        report: @escaping (Int, String) -> Void
    ) {
        self.store = store
        self.format = format
        self.batchRows = batchRows
        self.now = now
        self.report = report
        validator = ImportRowValidator(apps: configuration.apps)
        if format == .csv { csv = CSVReader(maxRecordBytes: Self.maxRowBytes) }
        batch.reserveCapacity(batchRows)
    }

    /// Reads input line `number` (1-based, with its line ending if it has one). Throws only for an
    /// input that cannot be imported at all (a CSV header that names no token column, say).
    public func feed(line given: UnsafeRawBufferPointer, number: Int) throws(ImportInputError) {
        // A byte order mark (what Excel's "CSV UTF-8" starts with) is not part of the first row.
        let line =
            number == 1 && given.starts(with: [0xEF, 0xBB, 0xBF])
            ? UnsafeRawBufferPointer(rebasing: given[3...]) : given
        guard let csv else {
            let content = line.trimmingLineEnd
            guard !content.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) else { return }
            add({ () throws(ImportRowError) in try ImportJSONLine.decode(content) }, line: number)
            return
        }
        try take(csv.feed(line: line, number: number))
    }

    /// A line longer than ``maxRowBytes``: reported as bad without being read.
    public func overlong(number: Int) {
        summary.bad += 1
        report(number, "longer than \(Self.maxRowBytes) bytes")
    }

    private func take(_ results: [Result<CSVRecord, CSVError>]) throws(ImportInputError) {
        for result in results {
            switch result {
            case .failure(let error):
                // Before the header: nothing can be read without it.
                guard csvColumns != nil else { throw ImportInputError(description: error.description) }
                summary.bad += 1
                report(error.line, error.message)
            case .success(let record):
                guard let columns = csvColumns else {
                    csvColumns = try ImportCSVColumns(header: record)
                    continue
                }
                add({ () throws(ImportRowError) in try columns.decode(record) }, line: record.line)
            }
        }
    }

    private func add(_ decode: () throws(ImportRowError) -> ImportRowFields, line: Int) {
        do {
            let row = try validator.validate(try decode())
            batchSubscriptions += row.topics.count
            batch.append(row)
        } catch {
            summary.bad += 1
            report(line, error.description)
        }
    }

    /// Whether a full batch waits to be committed: `batchRows` rows, or ``maxBatchSubscriptions``
    /// subscriptions (rows of many topics: a batch is one transaction, and holds SQLite's write
    /// lock while it is written; a gateway beside the import waits at most 5 s for it, then fails
    /// the call. 50,000 rows with 66,000 subscriptions take ~0.5 s here; subscriptions, appended to
    /// their indexes, cost less than endpoints).
    public var batchIsFull: Bool { batch.count >= batchRows || batchSubscriptions >= Self.maxBatchSubscriptions }

    /// The most subscriptions one batch writes.
    public static let maxBatchSubscriptions = 100_000
    private var batchSubscriptions = 0

    /// Hands the batch to the store once it is full; waits for the one before it first, so at most
    /// one batch is being written while the next is read.
    public func commitIfFull() async throws {
        guard batchIsFull else { return }
        try await commit()
    }

    private func commit() async throws {
        guard !batch.isEmpty else { return try await settle() }
        // Prepared while the batch before is still being written: the store's thread is the import's
        // bottleneck, this one has time to spare.
        let prepared = store.prepareImport(batch, now: now)
        batch = []
        batch.reserveCapacity(batchRows)
        batchSubscriptions = 0
        try await settle()
        let store = store
        writingRows = prepared.count
        writing = Task { try await store.importEndpoints(prepared) }
    }

    /// Waits for the batch being written, and counts it.
    private func settle() async throws {
        guard let writing else { return }
        self.writing = nil
        let counts = try await writing.value
        summary.rows += writingRows
        summary.counts.add(counts)
    }

    /// The end of the input: the last CSV record, then the last batch, then the store settles what
    /// was written (``Store/settleBulkLoad()``: VACUUM on PostgreSQL); answers what was imported.
    public func finish(lastLine: Int) async throws -> Summary {
        if let csv {
            try take(csv.finish(lastLine: lastLine))
            if csvColumns == nil { throw ImportInputError(description: "no header line (the input is empty)") }
        }
        try await commit()
        try await settle()
        let counts = summary.counts
        if counts.created + counts.updated + counts.subscriptionsCreated > 0 { try await store.settleBulkLoad() }
        return summary
    }

    /// Rows committed so far (for a progress line).
    public var committedRows: Int { summary.rows }
}

/// `CreateEndpoint`'s checks on a row: a configured app, a token valid for its platform (normalized
/// as stored), custom data and user id within their limits, valid topic names.
struct ImportRowValidator {
    let apps: [String: AppConfiguration]

    init(apps: [AppConfiguration]) {
        self.apps = Dictionary(apps.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func validate(_ fields: ImportRowFields) throws(ImportRowError) -> EndpointImport {
        guard let name = fields.app, !name.isEmpty else { throw ImportRowError("app", "required") }
        guard let app = apps[name] else {
            throw ImportRowError("app", "unknown app \(TextCap.quoted(name)) (not in the config's apps)")
        }
        guard let token = fields.token, !token.isEmpty else { throw ImportRowError("token", "required") }
        var row = EndpointImport(app: name, token: "")
        do {
            row.token = try RegistryValidation.normalizedToken(token, app: app)
            if let data = fields.customUserData {
                try RegistryValidation.customUserData(data)
                row.customUserData = data
            }
            if let userID = fields.userID {
                try RegistryValidation.userID(userID, allowEmpty: true)
                row.userID = userID
            }
            guard fields.topics.count <= maxTopicsPerRow else {
                throw ImportRowError("topics", "\(fields.topics.count) topics, over the limit of \(maxTopicsPerRow)")
            }
            for topic in fields.topics where !SNSNames.isTopicName(topic) {
                throw ImportRowError(
                    "topics",
                    "\(TextCap.quoted(topic)) is not a topic name (1-256 characters of A-Z, a-z, 0-9, _ and -)")
            }
        } catch let error as ImportRowError {
            throw error
        } catch let status as GRPCStatus {
            throw Self.rowError(status)
        } catch {
            throw ImportRowError("", "\(error)")
        }
        row.enabled = fields.enabled
        row.topics = fields.topics
        return row
    }

    /// The validation's message is "field: what is wrong"; split back into the two.
    private static func rowError(_ status: GRPCStatus) -> ImportRowError {
        let message = status.message
        guard let colon = message.firstIndex(of: ":") else { return ImportRowError("", message) }
        return ImportRowError(
            String(message[..<colon]), String(message[message.index(after: colon)...]).trimmingSpaces)
    }
}

extension UnsafeRawBufferPointer {
    /// Without a trailing LF or CR LF.
    var trimmingLineEnd: UnsafeRawBufferPointer {
        var end = count
        if end > 0, self[end - 1] == 0x0A { end -= 1 }
        if end > 0, self[end - 1] == 0x0D { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: self[0..<end])
    }
}
