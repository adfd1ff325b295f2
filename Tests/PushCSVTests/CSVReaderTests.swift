import Testing

@testable import PushCSV

@Suite("CSV records over libcsv")
struct CSVReaderTests {
    /// Feeds `text` a line at a time as a file reader would and collects what comes out.
    private func read(_ text: String, maxRecordBytes: Int = 65_536) -> [Result<CSVRecord, CSVError>] {
        let reader = CSVReader(maxRecordBytes: maxRecordBytes)
        var out: [Result<CSVRecord, CSVError>] = []
        var lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map { Array($0) + [0x0A] }
        if text.utf8.last == 0x0A { lines.removeLast() } else { lines[lines.count - 1].removeLast() }
        for (index, line) in lines.enumerated() {
            switch line.withUnsafeBytes({ reader.feed(line: $0, number: index + 1) }) {
            case .success(let records): out += records.map { .success($0) }
            case .failure(let error): out.append(.failure(error))
            }
        }
        switch reader.finish(lastLine: lines.count) {
        case .success(let records): out += records.map { .success($0) }
        case .failure(let error): out.append(.failure(error))
        }
        return out
    }

    @Test("quoted commas, doubled quotes and line breaks; each record names the line it starts on")
    func quoting() {
        let out = read("a,b,c\n\"x,1\",\"say \"\"hi\"\"\",\"two\nlines\"\n\n  p , q,\nlast,no,newline")
        #expect(
            out == [
                .success(CSVRecord(fields: ["a", "b", "c"], line: 1)),
                .success(CSVRecord(fields: ["x,1", "say \"hi\"", "two\nlines"], line: 2)),
                // Spaces are kept (RFC 4180), an empty last field is a field.
                .success(CSVRecord(fields: ["  p ", " q", ""], line: 5)),
                .success(CSVRecord(fields: ["last", "no", "newline"], line: 6)),
            ])
    }

    @Test("CR LF line endings end records like LF")
    func crlf() {
        #expect(
            read("a,b\r\nc,d\r\n") == [
                .success(CSVRecord(fields: ["a", "b"], line: 1)), .success(CSVRecord(fields: ["c", "d"], line: 2)),
            ])
    }

    @Test("a stray quote is an error naming its line; reading goes on at the next line")
    func strayQuote() {
        let out = read("a,b\nx\"y,1\n\"p\"q,2\nok,3\n")
        #expect(out.count == 4)
        #expect(out[0] == .success(CSVRecord(fields: ["a", "b"], line: 1)))
        guard case .failure(let first) = out[1], case .failure(let second) = out[2] else {
            Issue.record("expected two errors, got \(out)")
            return
        }
        #expect(first.line == 2 && second.line == 3)
        #expect(first.message.contains("malformed CSV"))
        #expect(out[3] == .success(CSVRecord(fields: ["ok", "3"], line: 4)))
    }

    @Test("an unclosed quote ends at the record limit, not at the end of memory; then the next line reads")
    func unclosedQuote() {
        let long = String(repeating: "z", count: 60)
        let out = read("\"open,\(long)\n\(long)\n\(long)\nafter,1\n", maxRecordBytes: 100)
        guard case .failure(let error) = out.first else {
            Issue.record("expected an error first, got \(out)")
            return
        }
        #expect(error.line == 1 && error.message.contains("longer than 100 bytes"))
        #expect(out.last == .success(CSVRecord(fields: ["after", "1"], line: 4)))
    }

    @Test("an unclosed quote at the end of the input is an error")
    func unclosedAtEnd() {
        let out = read("a,b\n\"c,d\n")
        #expect(out.first == .success(CSVRecord(fields: ["a", "b"], line: 1)))
        guard case .failure(let error) = out.last else {
            Issue.record("expected an error last, got \(out)")
            return
        }
        #expect(error.line == 2)
    }

    @Test("a field that is not UTF-8 makes its record an error")
    func invalidUTF8() {
        let reader = CSVReader()
        let bad: [UInt8] = Array("a,".utf8) + [0xFF, 0xFE] + [0x0A]
        let result = bad.withUnsafeBytes { reader.feed(line: $0, number: 7) }
        #expect(result == .failure(CSVError(line: 7, message: "not valid UTF-8")))
        let good = Array("b,c\n".utf8).withUnsafeBytes { reader.feed(line: $0, number: 8) }
        #expect(good == .success([CSVRecord(fields: ["b", "c"], line: 8)]))
    }
}
