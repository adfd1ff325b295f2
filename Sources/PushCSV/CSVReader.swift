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
/// `maxRecordBytes` is an error, not a growing buffer. That is what an unclosed quote looks like
/// (it swallows every line after it), so the error names the record's first line alone, and the
/// lines read after it (kept, within the same bound) are read again as records of their own. After
/// a syntax error the reader starts afresh at the next line. Spaces around unquoted fields are
/// kept, as RFC 4180 says (libcsv trims them by default). Blank lines between records are skipped.
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
    /// The record's lines after its first, with their numbers: read again as records if the first
    /// turns out to open a quote that never closes.
    private var laterLines: [(bytes: [UInt8], number: Int)] = []

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
        collector.invalid = false
        recordLine = nil
        recordBytes = 0
        laterLines = []
    }

    /// Feeds input line `number` (with its line ending, if it has one) and answers what it ended:
    /// the records it completed, or errors (a record's error, and what reading the lines after an
    /// unclosed quote's line again gave).
    public func feed(line bytes: UnsafeRawBufferPointer, number: Int) -> [Result<CSVRecord, CSVError>] {
        if recordLine == nil {
            if bytes.allSatisfy({ $0 == 0x0A || $0 == 0x0D }) { return [] }
            recordLine = number
        } else {
            laterLines.append((Array(bytes), number))
        }
        recordBytes += bytes.count
        guard recordBytes <= maxRecordBytes else {
            return unclosed("a quote opened here is not closed within \(maxRecordBytes) bytes")
        }
        let context = Unmanaged.passUnretained(collector).toOpaque()
        let used = csv_parse(&parser, bytes.baseAddress, bytes.count, Self.field, Self.record, context)
        guard used == bytes.count else { return [.failure(failed(number))] }
        return takeRecords()
    }

    /// The end of the input: the last record if it had no line ending, or, when a quote is still
    /// open, that record's error and its later lines read again.
    public func finish(lastLine: Int) -> [Result<CSVRecord, CSVError>] {
        let context = Unmanaged.passUnretained(collector).toOpaque()
        guard csv_fini(&parser, Self.field, Self.record, context) == 0 else {
            guard recordLine != nil else { return [.failure(failed(lastLine))] }
            var results = unclosed("a quote opened here is not closed by the end of the input")
            // What the lines read again left open at the end.
            results += finish(lastLine: lastLine)
            return results
        }
        return takeRecords()
    }

    /// The record being read cannot end: its first line is the error; the lines after it are read
    /// again from a fresh start.
    private func unclosed(_ message: String) -> [Result<CSVRecord, CSVError>] {
        let error = CSVError(line: recordLine ?? 0, message: message)
        let again = laterLines
        restart()
        var results: [Result<CSVRecord, CSVError>] = [.failure(error)]
        for line in again {
            results += line.bytes.withUnsafeBytes { feed(line: $0, number: line.number) }
        }
        return results
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

    private func takeRecords() -> [Result<CSVRecord, CSVError>] {
        guard !collector.records.isEmpty, let line = recordLine else { return [] }
        // Fed a line at a time, a line completes at most one record, and it started on recordLine.
        let records = collector.records.map { CSVRecord(fields: $0, line: line) }
        let invalid = collector.invalid
        collector.records = []
        collector.invalid = false
        recordLine = nil
        recordBytes = 0
        laterLines = []
        return invalid ? [.failure(CSVError(line: line, message: "not valid UTF-8"))] : records.map { .success($0) }
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
