import CLibCSV

/// One CSV record: its fields, unquoted, and the input line it starts on.
public struct CSVRecord: Sendable, Equatable {
    public var fields: [String]
    /// 1-based.
    public var line: Int

    public init(fields: [String], line: Int) {
        self.fields = fields
        self.line = line
    }
}

/// A record that could not be read: the line it starts on and why.
public struct CSVError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { "line \(line): \(message)" }
}

/// RFC 4180 records over libcsv (strict: a stray quote is an error, not a guess), fed one input line
/// at a time so that each record knows the line it starts on, and bounded: a record longer than
/// `maxRecordBytes` (an unclosed quote swallowing the file, say) is an error, not a growing buffer.
/// After an error the reader starts afresh at the next line. Spaces around unquoted fields are kept,
/// as RFC 4180 says (libcsv trims them by default). Blank lines between records are skipped.
public final class CSVReader {
    private var parser = csv_parser()
    private let maxRecordBytes: Int
    /// What the callbacks fill (a class so libcsv's `void *` can point at it).
    private final class Collector {
        var fields: [String] = []
        var records: [[String]] = []
        /// A field of the record being read was not UTF-8.
        var invalid = false
    }
    private let collector = Collector()
    /// The line the record being read starts on; nil between records.
    private var recordLine: Int?
    private var recordBytes = 0

    public init(maxRecordBytes: Int = 65_536) {
        self.maxRecordBytes = maxRecordBytes
        start()
    }

    deinit { csv_free(&parser) }

    private func start() {
        // Only fails on a bad option; these are constant.
        _ = csv_init(&parser, UInt8(CSV_STRICT | CSV_STRICT_FINI))
        csv_set_space_func(&parser) { _ in 0 }
    }

    private func restart() {
        csv_free(&parser)
        parser = csv_parser()
        start()
        collector.fields = []
        collector.records = []
        recordLine = nil
        recordBytes = 0
    }

    /// Feeds input line `number` (with its line ending, if it has one) and answers the records it
    /// completed, or the error of the record it ended.
    public func feed(line bytes: UnsafeRawBufferPointer, number: Int) -> Result<[CSVRecord], CSVError> {
        if recordLine == nil {
            if bytes.allSatisfy({ $0 == 0x0A || $0 == 0x0D }) { return .success([]) }
            recordLine = number
        }
        recordBytes += bytes.count
        guard recordBytes <= maxRecordBytes else {
            let line = recordLine ?? number
            restart()
            return .failure(
                CSVError(line: line, message: "record longer than \(maxRecordBytes) bytes (an unclosed quote?)"))
        }
        let context = Unmanaged.passUnretained(collector).toOpaque()
        let used = csv_parse(&parser, bytes.baseAddress, bytes.count, Self.field, Self.record, context)
        guard used == bytes.count else { return .failure(failed(number)) }
        return takeRecords()
    }

    /// The end of the input: the last record if it had no line ending, or the error of an unclosed
    /// quote.
    public func finish(lastLine: Int) -> Result<[CSVRecord], CSVError> {
        let context = Unmanaged.passUnretained(collector).toOpaque()
        guard csv_fini(&parser, Self.field, Self.record, context) == 0 else { return .failure(failed(lastLine)) }
        return takeRecords()
    }

    private func failed(_ number: Int) -> CSVError {
        let code = csv_error(&parser)
        let reason =
            code == CSV_EPARSE
            ? "malformed CSV (a quote inside an unquoted field, or text after a closing quote)"
            : String(cString: csv_strerror(code))
        let error = CSVError(line: recordLine ?? number, message: reason)
        restart()
        return error
    }

    private func takeRecords() -> Result<[CSVRecord], CSVError> {
        guard !collector.records.isEmpty, let line = recordLine else { return .success([]) }
        // Fed a line at a time, a line completes at most one record, and it started on recordLine.
        let records = collector.records.map { CSVRecord(fields: $0, line: line) }
        let invalid = collector.invalid
        collector.records = []
        collector.invalid = false
        recordLine = nil
        recordBytes = 0
        return invalid ? .failure(CSVError(line: line, message: "not valid UTF-8")) : .success(records)
    }

    private static let field: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Void = {
        bytes, count, context in
        guard let context else { return }
        let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
        let text = bytes.map { String(validating: UnsafeRawBufferPointer(start: $0, count: count), as: UTF8.self) }
        if case .some(nil) = text { collector.invalid = true }
        collector.fields.append((text ?? "") ?? "")
    }

    private static let record: @convention(c) (Int32, UnsafeMutableRawPointer?) -> Void = { _, context in
        guard let context else { return }
        let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
        collector.records.append(collector.fields)
        collector.fields = []
    }
}
