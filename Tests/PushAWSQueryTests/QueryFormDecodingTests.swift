import PushAWSQuery
import Testing

@Suite("AWS Query form bodies")
struct QueryFormDecodingTests {
    private static func decode(_ body: String, limits: QueryFormLimits = .init()) throws(QueryFormError)
        -> QueryParameters
    {
        try QueryParameters.decode(form: Array(body.utf8), limits: limits)
    }

    private static func failure(_ body: [UInt8], limits: QueryFormLimits = .init()) -> String? {
        do {
            _ = try QueryParameters.decode(form: body, limits: limits)
            return nil
        } catch {
            return error.message
        }
    }

    private static func failure(_ body: String, limits: QueryFormLimits = .init()) -> String? {
        failure(Array(body.utf8), limits: limits)
    }

    @Test("a Publish body as botocore writes it: order kept, + and %XX decoded")
    func publish() throws {
        let parameters = try Self.decode(
            "Action=Publish&Version=2010-03-31&TopicArn=arn%3Aaws%3Asns%3Aus-east-1%3A123456789012%3Anews"
                + "&Message=Hello+world%21%20%e2%9c%93")
        #expect(parameters.count == 4)
        #expect(parameters.pairs.map(\.name) == ["Action", "Version", "TopicArn", "Message"])
        #expect(parameters["Action"] == "Publish")
        #expect(parameters["TopicArn"] == "arn:aws:sns:us-east-1:123456789012:news")
        #expect(parameters["Message"] == "Hello world! ✓")
        #expect(parameters["Subject"] == nil)
    }

    @Test("empty fields are skipped, a field without = has an empty value, = in a value is kept")
    func shapes() throws {
        let parameters = try Self.decode("&&A&B=&C==x=&&")
        #expect(parameters.pairs.map(\.name) == ["A", "B", "C"])
        #expect(parameters["A"] == "")
        #expect(parameters["B"] == "")
        #expect(parameters["C"] == "=x=")
        #expect(try Self.decode("").count == 0)
    }

    @Test("a bad percent-escape names the field and the text, never the whole value")
    func badEscapes() {
        #expect(Self.failure("A=1&B=x%zzsecret") == "field 2: \"%zz\" is not a percent-escape (% and two hex digits)")
        #expect(Self.failure("A=1%4") == "field 1: \"%4\" is not a percent-escape (% and two hex digits)")
        #expect(Self.failure("A%") == "field 1: \"%\" is not a percent-escape (% and two hex digits)")
    }

    @Test("decoded bytes must be UTF-8")
    func utf8() {
        #expect(Self.failure("A=%ff%fe") == "parameter \"A\": the value is not UTF-8")
        #expect(Self.failure("%c3=1") == "field 1: the name is not UTF-8")
        #expect(
            Self.failure([UInt8(ascii: "A"), UInt8(ascii: "="), 0xc3]) == "parameter \"A\": the value is not UTF-8")
    }

    @Test("empty names, long names, too many fields and repeated names are refused")
    func limits() {
        #expect(Self.failure("=x") == "field 1 has an empty name")
        #expect(Self.failure("A=1&%3D=") == nil)
        let long = String(repeating: "N", count: 257)
        #expect(
            Self.failure(long + "=1")
                == "field 1: the name \"NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN…\" is longer than 256 bytes")
        #expect(Self.failure("A=1&B=2&C=3", limits: .init(maxFields: 2)) == "the form has more than 2 fields")
        #expect(Self.failure("A=1&&B=2", limits: .init(maxFields: 2)) == nil)
        #expect(Self.failure("Action=Publish&Action=Subscribe") == "parameter \"Action\" appears twice")
        #expect(Self.failure("Action=Publish&Act%69on=x") == "parameter \"Action\" appears twice")
    }

    @Test("quoted text in errors is cut and escaped so a log line stays one line")
    func quoting() {
        #expect(Self.failure("A%0a%22B=1&A%0a%22B=2") == "parameter \"A\\n\\\"B\" appears twice")
    }

    @Test("formBody encodes so that decoding gives the same pairs")
    func roundTrip() throws {
        let original = QueryParameters([("Action", "Publish"), ("Message", "a b+c&d=e%f ✓\n"), ("Empty", "")])
        let body = original.formBody
        #expect(
            String(decoding: body, as: UTF8.self)
                == "Action=Publish&Message=a%20b%2Bc%26d%3De%25f%20%E2%9C%93%0A&Empty=")
        let decoded = try QueryParameters.decode(form: body)
        #expect(decoded.pairs.map(\.name) == original.pairs.map(\.name))
        #expect(decoded.pairs.map(\.value) == original.pairs.map(\.value))
    }

    @Test("top-level names are the first dotted components")
    func topLevelNames() throws {
        let parameters = try Self.decode(
            "Action=CreateTopic&Name=t&Attributes.entry.1.key=A&Attributes.entry.1.value=1&Tags.member.1.Key=k")
        #expect(parameters.topLevelNames == ["Action", "Name", "Attributes", "Tags"])
    }
}
