import PushAWSQuery
import Testing

@Suite("AWS Query lists and maps")
struct QueryCollectionsTests {
    private static func parameters(_ body: String) throws -> QueryParameters {
        try QueryParameters.decode(form: Array(body.utf8))
    }

    private static func failure(_ body: String, _ read: (QueryParameters) throws(QueryFormError) -> Void) -> String? {
        do {
            try read(try QueryParameters.decode(form: Array(body.utf8)))
            return nil
        } catch {
            return error.message
        }
    }

    @Test("a list of structures, members in any order, numbered 1...N")
    func structureList() throws {
        let parameters = try Self.parameters(
            "Action=TagResource&Tags.member.2.Key=team&Tags.member.1.Key=env&Tags.member.1.Value=prod"
                + "&Tags.member.2.Value=push")
        let tags = try parameters.list("Tags", maxMembers: 50)
        #expect(tags.count == 2)
        #expect(tags[0]["Key"] == "env")
        #expect(tags[0]["Value"] == "prod")
        #expect(tags[1]["Key"] == "team")
        #expect(tags[1]["Value"] == "push")
    }

    @Test("a list of scalars: each member's value under the empty name")
    func scalarList() throws {
        let parameters = try Self.parameters("TagKeys.member.1=env&TagKeys.member.2=team")
        #expect(try parameters.list("TagKeys", maxMembers: 50).map { $0[""] } == ["env", "team"])
    }

    @Test("an absent list and botocore's empty list (name=) are empty")
    func emptyLists() throws {
        #expect(try Self.parameters("Action=X").list("Tags", maxMembers: 5).isEmpty)
        #expect(try Self.parameters("Action=X&Tags=").list("Tags", maxMembers: 5).isEmpty)
        // A name that only starts like the list is another parameter.
        #expect(try Self.parameters("TagsExtra.member.1=x").list("Tags", maxMembers: 5).isEmpty)
    }

    @Test("gaps, too many members, bad numbers and stray names are errors that name the list or parameter")
    func listErrors() {
        #expect(
            Self.failure("L.member.1=a&L.member.3=c") { p throws(QueryFormError) in _ = try p.list("L", maxMembers: 5) }
                == "list \"L\" has no member 2")
        #expect(
            Self.failure("L.member.2=a") { p throws(QueryFormError) in _ = try p.list("L", maxMembers: 5) }
                == "list \"L\" has no member 1")
        #expect(
            Self.failure("L.member.1=a&L.member.2=b&L.member.3=c") { p throws(QueryFormError) in
                _ = try p.list("L", maxMembers: 2)
            } == "list \"L\" has more than 2 members")
        #expect(
            Self.failure("L.member.99999999999999999999999=a") { p throws(QueryFormError) in
                _ = try p.list("L", maxMembers: 2)
            } == "list \"L\" has more than 2 members")
        for bad in [
            "L.member.01=a", "L.member.0=a", "L.member.=a", "L.member.1x=a", "L.member.1.=a", "L.entry.1=a", "L.x=a",
        ] {
            let name = String(bad.prefix(while: { $0 != "=" }))
            #expect(
                Self.failure(bad) { p throws(QueryFormError) in _ = try p.list("L", maxMembers: 5) }
                    == "parameter \"\(name)\" is not \"L.member.N\"")
        }
        #expect(
            Self.failure("L=value") { p throws(QueryFormError) in _ = try p.list("L", maxMembers: 5) }
                == "parameter \"L\" must be a list, not a value")
    }

    @Test("a map with SNS's default key and value names")
    func attributesMap() throws {
        let parameters = try Self.parameters(
            "Action=SetTopicAttributes&Attributes.entry.1.key=DisplayName&Attributes.entry.1.value=News"
                + "&Attributes.entry.2.value=%7B%7D&Attributes.entry.2.key=Policy&Attributes.entry.3.key=Empty")
        let attributes = try parameters.map("Attributes", maxEntries: 10)
        #expect(attributes.map(\.key) == ["DisplayName", "Policy", "Empty"])
        #expect(attributes.map(\.value) == ["News", "{}", ""])
    }

    @Test("map errors: a missing key, a repeated key, anything else under the name")
    func mapErrors() {
        #expect(
            Self.failure("M.entry.1.value=v") { p throws(QueryFormError) in _ = try p.map("M", maxEntries: 5) }
                == "map \"M\": entry 1 has no key")
        #expect(
            Self.failure("M.entry.1.key=a&M.entry.2.key=a") { p throws(QueryFormError) in
                _ = try p.map("M", maxEntries: 5)
            } == "map \"M\" has the key \"a\" twice")
        #expect(
            Self.failure("M.entry.1.key=a&M.entry.1.Value=v") { p throws(QueryFormError) in
                _ = try p.map("M", maxEntries: 5)
            } == "parameter \"M.entry.1.Value\" is not \"M.entry.N.key or .value\"")
        #expect(
            Self.failure("M.member.1.key=a") { p throws(QueryFormError) in _ = try p.map("M", maxEntries: 5) }
                == "parameter \"M.member.1.key\" is not \"M.entry.N\"")
        #expect(
            Self.failure("M.entry.1.key=a&M.entry.2.key=b") { p throws(QueryFormError) in
                _ = try p.map("M", maxEntries: 1)
            } == "map \"M\" has more than 1 entries")
    }

    @Test("MessageAttributes: a map of structures under Name and Value")
    func messageAttributes() throws {
        let parameters = try Self.parameters(
            "MessageAttributes.entry.1.Name=store&MessageAttributes.entry.1.Value.DataType=String"
                + "&MessageAttributes.entry.1.Value.StringValue=example_corp"
                + "&MessageAttributes.entry.2.Name=AWS.SNS.MOBILE.APNS.TTL"
                + "&MessageAttributes.entry.2.Value.DataType=Number&MessageAttributes.entry.2.Value.StringValue=60")
        let attributes = try parameters.structureMap(
            "MessageAttributes", keyName: "Name", valueName: "Value", maxEntries: 10)
        #expect(attributes.map(\.key) == ["store", "AWS.SNS.MOBILE.APNS.TTL"])
        #expect(attributes[0].value["DataType"] == "String")
        #expect(attributes[0].value["StringValue"] == "example_corp")
        #expect(attributes[1].value.pairs.map(\.name) == ["DataType", "StringValue"])
        #expect(
            Self.failure("MA.entry.1.Name=a&MA.entry.1.Other=x") { p throws(QueryFormError) in
                _ = try p.structureMap("MA", keyName: "Name", valueName: "Value", maxEntries: 5)
            } == "parameter \"MA.entry.1.Other\" is not \"MA.entry.N.Name or .Value.…\"")
    }
}
