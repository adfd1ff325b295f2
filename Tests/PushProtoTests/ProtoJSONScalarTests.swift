import PushCore
import Testing

@testable import PushProto

/// The scalar forms no message of ours uses yet (bytes, uint64, float, double), and the edges of
/// the integer reading, through the runtime the generated code calls.
@Suite("Proto3 JSON: scalar forms")
struct ProtoJSONScalarTests {
    static func write(_ value: some ProtoJSONCodable) -> String {
        var writer = ProtoJSONWriter()
        value.writeProtoJSON(to: &writer)
        return String(decoding: writer.json.bytes, as: UTF8.self)
    }

    static func message<T: ProtoJSONCodable>(_ type: T.Type, _ json: JSONValue) -> String? {
        do throws(ProtoJSONError) {
            _ = try T(protoJSON: json)
            return nil
        } catch {
            return error.description
        }
    }

    @Test("bytes are written as standard base64 with padding")
    func base64Output() {
        #expect(Self.write(Array("".utf8)) == #""""#)
        #expect(Self.write(Array("f".utf8)) == #""Zg==""#)
        #expect(Self.write(Array("fo".utf8)) == #""Zm8=""#)
        #expect(Self.write(Array("foo".utf8)) == #""Zm9v""#)
        #expect(Self.write([0xFB, 0xFF, 0xBF]) == #""+/+/""#)
    }

    @Test("bytes are read in the standard and URL-safe alphabets, with or without padding")
    func base64Input() throws {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF, 0x61]
        for text in ["+/+/YQ==", "-_-_YQ==", "+/+/YQ", "-_-_YQ"] {
            #expect(try [UInt8](protoJSON: .string(text)) == bytes, "\(text)")
        }
        #expect(try [UInt8](protoJSON: .string("")) == [])
        for length in 0..<40 {
            let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            #expect(try [UInt8](protoJSON: .string(ProtoJSONBase64.encode(data))) == data)
        }
    }

    @Test("bad base64 says where")
    func base64Errors() {
        #expect(Self.message([UInt8].self, .string("Zm9v!")) == "invalid base64: not a base64 character at character 4")
        #expect(Self.message([UInt8].self, .string("Z")) == "invalid base64: a lone last character at character 0")
        #expect(Self.message([UInt8].self, .string("Zg=")) == "invalid base64: wrong padding at character 2")
        #expect(Self.message([UInt8].self, .string("Zg===")) == "invalid base64: wrong padding at character 2")
        #expect(
            Self.message([UInt8].self, .string("Zg==Zg==")) == "invalid base64: not a base64 character at character 2")
        #expect(Self.message([UInt8].self, .number("1")) == "expected a base64 string, got a number")
    }

    @Test("uint64 is a string out, a number or string in, never negative")
    func uint64() throws {
        #expect(Self.write(UInt64.max) == #""18446744073709551615""#)
        #expect(try UInt64(protoJSON: .string("18446744073709551615")) == UInt64.max)
        #expect(try UInt64(protoJSON: .number("1.8446744073709551615e19")) == UInt64.max)
        #expect(
            Self.message(UInt64.self, .number("18446744073709551616"))
                == "18446744073709551616 is out of range for uint64")
        #expect(Self.message(UInt64.self, .number("-1")) == "-1 is out of range for uint64")
        #expect(try UInt64(protoJSON: .number("-0")) == 0)
        #expect(try UInt32(protoJSON: .string("4294967295")) == UInt32.max)
        #expect(Self.write(UInt32.max) == "4294967295")
    }

    @Test("integer text edges: exponents, zeros, JSON number syntax inside strings")
    func integerText() throws {
        #expect(try Int64(protoJSON: .number("0e999999999999999999")) == 0)
        #expect(try Int64(protoJSON: .number("100e-2")) == 1)
        #expect(try Int64(protoJSON: .number("0.00000000000000000000000000001e29")) == 1)
        #expect(
            Self.message(Int64.self, .number("1e-999999999999999999"))
                == "expected int64, got 1e-999999999999999999, which is not a whole number")
        for bad in ["", " 1", "1 ", "+1", "01", "1.", ".5", "0x10", "1e", "--1", "١"] {
            #expect(Self.message(Int32.self, .string(bad))?.hasSuffix("which is not a number") == true, "\(bad)")
        }
    }

    @Test("float and double: numbers, the three special strings, and range")
    func floatingPoint() throws {
        #expect(Self.write(1.5) == "1.5")
        #expect(Self.write(Double.nan) == #""NaN""#)
        #expect(Self.write(-Double.infinity) == #""-Infinity""#)
        #expect(Self.write(Float(0.1)) == "0.1")
        #expect(try Double(protoJSON: .string("Infinity")) == .infinity)
        #expect(try Double(protoJSON: .string("NaN")).isNaN)
        #expect(try Double(protoJSON: .string("1e3")) == 1000)
        #expect(try Double(protoJSON: .number("-2.5E-3")) == -0.0025)
        #expect(Self.message(Float.self, .number("1e39")) == "1e39 is out of range for float")
        #expect(Self.message(Double.self, .string("nan")) == #"expected double, got "nan", which is not a number"#)
        #expect((-0.0).isProtoJSONDefault == false)
        #expect(Double(0).isProtoJSONDefault)
        for value in [0.1, 1e-7, 1e300, -123.456, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude] {
            let text = Self.write(value)
            #expect(try Double(protoJSON: JSONParser.parse(text.utf8)) == value, "\(text)")
        }
    }
}
