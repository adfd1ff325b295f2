import Testing

@testable import PushCore

@Suite("JSONWriter")
struct JSONWriterTests {
    private func text(_ writer: JSONWriter) -> String { String(decoding: writer.bytes, as: UTF8.self) }

    @Test("objects and arrays get commas in the right places")
    func structure() {
        var w = JSONWriter()
        w.beginObject()
        w.key("a")
        w.int(1)
        w.key("b")
        w.beginArray()
        w.string("x")
        w.bool(true)
        w.null()
        w.beginObject()
        w.endObject()
        w.beginArray()
        w.endArray()
        w.endArray()
        w.key("c")
        w.stringArray([])
        w.endObject()
        #expect(text(w) == #"{"a":1,"b":["x",true,null,{},[]],"c":[]}"#)
    }

    @Test("strings escape quotes, backslashes and controls; other UTF-8 passes through")
    func escaping() {
        var w = JSONWriter()
        w.string("q\"b\\s/\n\r\t\u{08}\u{0C}\u{01}\u{1F} é😀")
        #expect(text(w) == #""q\"b\\s/\n\r\t\b\f\u0001\u001f é😀""#)
    }

    @Test(
        "integers cover the full 64-bit range",
        arguments: [
            (Int64(0), "0"), (7, "7"), (-7, "-7"), (1_000_000, "1000000"),
            (Int64.max, "9223372036854775807"), (Int64.min, "-9223372036854775808"),
        ])
    func integers(value: Int64, expected: String) {
        var w = JSONWriter()
        w.int(value)
        #expect(text(w) == expected)
        var small = JSONWriter()
        small.int(Int32.min)
        #expect(text(small) == "-2147483648")
    }

    @Test(
        "parse then write round-trips strings with every escape",
        arguments: [
            "", "plain", "\"quoted\"", "back\\slash", "\u{0}\u{1}\u{1F}\u{7F}", "tab\tnl\n", "é ☃ 😀 \u{FFFF}",
        ])
    func stringRoundTrip(string: String) throws {
        var w = JSONWriter()
        w.string(string)
        #expect(try JSONParser.parse(w.bytes) == .string(string))
    }

    @Test("a parsed document is written back compactly with numbers verbatim")
    func valueRoundTrip() throws {
        let source = #"{ "b" : [1.50, -0, 2E+3, true, null], "a": {"\u00e9": "\ud83d\ude00"} }"#
        let value = try JSONParser.parse(source.utf8)
        let bytes = JSONWriter.encode(value)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"b":[1.50,-0,2E+3,true,null],"a":{"é":"😀"}}"#)
        #expect(try JSONParser.parse(bytes) == value)
    }
}
