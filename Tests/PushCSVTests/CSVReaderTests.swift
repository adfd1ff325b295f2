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
            out += line.withUnsafeBytes { reader.feed(line: $0, number: index + 1) }
        }
        return out + reader.finish(lastLine: lines.count)
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

    @Test("an unclosed quote is its first line's error at the record limit; the lines after it are read again")
    func unclosedQuote() {
        let long = String(repeating: "z", count: 60)
        let out = read("\"open,\(long)\n\(long),1\n\(long),2\nafter,3\n", maxRecordBytes: 100)
        #expect(
            out == [
                .failure(CSVError(line: 1, message: "a quote opened here is not closed within 100 bytes")),
                .success(CSVRecord(fields: [long, "1"], line: 2)), .success(CSVRecord(fields: [long, "2"], line: 3)),
                .success(CSVRecord(fields: ["after", "3"], line: 4)),
            ])
    }

    @Test("a quote still open at the end of the input is its first line's error; the lines after it are read again")
    func unclosedAtEnd() {
        let out = read("a,b\n\"c,d\ne,f\ng,h\n")
        #expect(
            out == [
                .success(CSVRecord(fields: ["a", "b"], line: 1)),
                .failure(CSVError(line: 2, message: "a quote opened here is not closed by the end of the input")),
                .success(CSVRecord(fields: ["e", "f"], line: 3)), .success(CSVRecord(fields: ["g", "h"], line: 4)),
            ])
    }

    @Test("a field that is not UTF-8 makes its record an error")
    func invalidUTF8() {
        let reader = CSVReader()
        let bad: [UInt8] = Array("a,".utf8) + [0xFF, 0xFE] + [0x0A]
        let result = bad.withUnsafeBytes { reader.feed(line: $0, number: 7) }
        #expect(result == [.failure(CSVError(line: 7, message: "not valid UTF-8"))])
        let good = Array("b,c\n".utf8).withUnsafeBytes { reader.feed(line: $0, number: 8) }
        #expect(good == [.success(CSVRecord(fields: ["b", "c"], line: 8))])
    }
}
