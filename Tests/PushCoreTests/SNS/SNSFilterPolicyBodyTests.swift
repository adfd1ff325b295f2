import Testing

@testable import PushCore

/// `FilterPolicyScope=MessageBody`: nested policies against the message's JSON body.
@Suite("SNS filter policy: message body")
struct SNSFilterPolicyBodyTests {
    func policy(_ json: String) throws -> SNSFilterPolicy { try SNSFilterPolicy.parse(json, nested: true) }

    static let order = #"""
        {"store": "example_corp", "event": "order_placed", "price_usd": 210.75,
         "customer": {"interests": ["soccer", "rugby"], "tier": {"name": "gold"}}, "paid": true}
        """#

    @Test func nestedKeysFollowTheBody() throws {
        #expect(try policy(#"{"customer": {"tier": {"name": ["gold"]}}}"#).matches(body: Self.order))
        #expect(!(try policy(#"{"customer": {"tier": {"name": ["silver"]}}}"#)).matches(body: Self.order))
        #expect(
            try policy(#"{"store": ["example_corp"], "price_usd": [{"numeric": [">", 100]}]}"#).matches(
                body: Self.order))
        #expect(try policy(#"{"paid": ["true"]}"#).matches(body: Self.order))
    }

    @Test func anArrayInTheBodyPassesWhenAnyElementDoes() throws {
        #expect(try policy(#"{"customer": {"interests": ["rugby"]}}"#).matches(body: Self.order))
        #expect(!(try policy(#"{"customer": {"interests": ["tennis"]}}"#)).matches(body: Self.order))
    }

    @Test func existsAndOrWorkOnPaths() throws {
        #expect(try policy(#"{"customer": {"phone": [{"exists": false}]}}"#).matches(body: Self.order))
        #expect(!(try policy(#"{"customer": {"tier": {"name": [{"exists": false}]}}}"#)).matches(body: Self.order))
        // `exists` looks at leaves only (as SNS's): an object is no value.
        #expect(try policy(#"{"customer": {"tier": [{"exists": false}]}}"#).matches(body: Self.order))
        // An empty key is a key like any other, and a policy key may not hold a NUL (paths are joined with it).
        #expect(try policy(#"{"": {"a": ["1"]}}"#).matches(body: #"{"": {"a": "1"}}"#))
        #expect(!(try policy(#"{"a": ["1"]}"#)).matches(body: #"{"": {"a": "1"}}"#))
        #expect(throws: ValidationError.self) { try SNSFilterPolicy.parse(#"{"a\u0000b": ["1"]}"#, nested: true) }
        // A key with a dot is not a path.
        #expect(
            !(try policy(#"{"customer": {"tier": {"name": ["gold"]}}}"#)).matches(
                body: #"{"customer.tier.name": "gold"}"#))
        let either = try policy(#"{"$or": [{"store": ["other"]}, {"customer": {"tier": {"name": ["gold"]}}}]}"#)
        #expect(either.matches(body: Self.order))
    }

    @Test func aBodyThatIsNotAJSONObjectPassesNoPolicy() throws {
        let p = try policy(#"{"store": [{"exists": false}]}"#)
        #expect(!p.matches(body: "hello"))
        #expect(!p.matches(body: "[1, 2]"))
        #expect(p.matches(body: "{}"))
    }

    @Test func nestingIsForTheBodyScopeOnly() throws {
        #expect(throws: ValidationError.self) { try SNSFilterPolicy.parse(#"{"a": {"b": ["x"]}}"#) }
        #expect(throws: ValidationError.self) { try SNSFilterPolicy.parse(#"{"a": {}}"#, nested: true) }
        // The limits count key paths.
        #expect(throws: ValidationError.self) {
            try SNSFilterPolicy.parse(
                #"{"a": {"b": ["1"], "c": ["1"], "d": ["1"]}, "e": ["1"], "f": ["1"], "g": ["1"]}"#, nested: true)
        }
    }
}
