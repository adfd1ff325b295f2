import Testing

@testable import PushCore

@Suite("SNS filter policy: matching")
struct SNSFilterPolicyMatchTests {
    func policy(_ json: String) throws -> SNSFilterPolicy { try SNSFilterPolicy.parse(json) }

    @Test("exact strings are case-sensitive and byte-exact")
    func exactString() throws {
        let p = try policy(#"{"store":["example_corp","café"]}"#)
        #expect(p.matches(["store": "example_corp"]))
        #expect(!p.matches(["store": "Example_Corp"]))
        #expect(p.matches(["store": "café"]))
        #expect(!p.matches(["store": "cafe\u{301}"]))  // canonically equal, but not the same bytes
        #expect(!p.matches(["other": "example_corp"]))
    }

    @Test("exact numbers compare numerically; exact strings don't")
    func exactNumber() throws {
        let p = try policy(#"{"price":[100]}"#)
        for value in ["100", "100.0", "1e2", "100.00000"] { #expect(p.matches(["price": value]), "\(value)") }
        for value in ["100.5", "abc", "", " 100", "+100", "0x64"] { #expect(!p.matches(["price": value]), "\(value)") }
        #expect(!(try policy(#"{"price":["100"]}"#)).matches(["price": "100.0"]))
    }

    @Test("prefix, suffix and equals-ignore-case")
    func stringOperators() throws {
        let prefix = try policy(#"{"event":[{"prefix":"order-"}]}"#)
        #expect(prefix.matches(["event": "order-created"]))
        #expect(prefix.matches(["event": "order-"]))
        #expect(!prefix.matches(["event": "Order-created"]))
        let suffix = try policy(#"{"file":[{"suffix":".png"}]}"#)
        #expect(suffix.matches(["file": "a.png"]))
        #expect(!suffix.matches(["file": "a.png.txt"]))
        let ignoreCase = try policy(#"{"name":[{"equals-ignore-case":"ÉCOLE"}]}"#)
        #expect(ignoreCase.matches(["name": "école"]))
        #expect(ignoreCase.matches(["name": "ÉcOlE"]))
        #expect(!ignoreCase.matches(["name": "ecole"]))
    }

    @Test("anything-but: strings, numbers, a single value, and prefix")
    func anythingBut() throws {
        let list = try policy(#"{"state":[{"anything-but":["cancelled","refunded"]}]}"#)
        #expect(list.matches(["state": "paid"]))
        #expect(!list.matches(["state": "cancelled"]))
        #expect(!list.matches([:]))  // a missing key matches nothing but exists:false
        let numbers = try policy(#"{"code":[{"anything-but":[404, 500]}]}"#)
        #expect(numbers.matches(["code": "200"]))
        #expect(!numbers.matches(["code": "404.0"]))
        #expect(numbers.matches(["code": "not a number"]))
        let single = try policy(#"{"state":[{"anything-but":"cancelled"}]}"#)
        #expect(!single.matches(["state": "cancelled"]))
        #expect(single.matches(["state": "open"]))
        let prefix = try policy(#"{"event":[{"anything-but":{"prefix":"test-"}}]}"#)
        #expect(prefix.matches(["event": "order"]))
        #expect(!prefix.matches(["event": "test-order"]))
        #expect(!prefix.matches([:]))
    }

    @Test(
        "numeric comparisons and range edges",
        arguments: [
            (#"["=", 5]"#, ["5": true, "5.0": true, "5.00001": false]),
            (#"["<", 5]"#, ["4.99999": true, "5": false, "-1e9": true]),
            (#"["<=", 5]"#, ["5": true, "5.00001": false]),
            (#"[">", 0]"#, ["0": false, "0.00001": true]),
            (#"[">=", 0]"#, ["0": true, "-0.00001": false, "-0": true]),
            (#"[">", 0, "<=", 150]"#, ["0": false, "0.5": true, "150": true, "150.00001": false, "x": false]),
            (#"[">=", -10, "<", 10]"#, ["-10": true, "9.99999": true, "10": false]),
        ])
    func numeric(bounds: String, cases: [String: Bool]) throws {
        let p = try policy(#"{"n":[{"numeric":"# + bounds + "}]}")
        for (value, expected) in cases { #expect(p.matches(["n": value]) == expected, "\(value)") }
    }

    @Test("exists true and false")
    func exists() throws {
        let present = try policy(#"{"tag":[{"exists":true}]}"#)
        #expect(present.matches(["tag": ""]))
        #expect(!present.matches([:]))
        let absent = try policy(#"{"tag":[{"exists":false}]}"#)
        #expect(absent.matches(["other": "x"]))
        #expect(!absent.matches(["tag": "x"]))
    }

    @Test("exists false OR a value: absent or that value")
    func existsFalseOrValue() throws {
        let p = try policy(#"{"tier":["gold",{"exists":false}]}"#)
        #expect(p.matches([:]))
        #expect(p.matches(["tier": "gold"]))
        #expect(!p.matches(["tier": "silver"]))
    }

    @Test("AND across names, OR within an array")
    func andOr() throws {
        let p = try policy(#"{"store":["a","b"],"price":[{"numeric":[">",10]}]}"#)
        #expect(p.matches(["store": "a", "price": "11"]))
        #expect(p.matches(["store": "b", "price": "11", "extra": "x"]))
        #expect(!p.matches(["store": "c", "price": "11"]))
        #expect(!p.matches(["store": "a", "price": "10"]))
        #expect(!p.matches(["store": "a"]))
    }

    @Test("$or across names, combined with a plain condition")
    func orAcrossNames() throws {
        let p = try policy(
            #"{"source":["app"],"$or":[{"level":["error"]},{"latency":[{"numeric":[">",500]}]}]}"#)
        #expect(p.matches(["source": "app", "level": "error"]))
        #expect(p.matches(["source": "app", "latency": "900"]))
        #expect(!p.matches(["source": "app", "level": "info", "latency": "100"]))
        #expect(!p.matches(["source": "web", "level": "error"]))
    }

    @Test("$or branches may nest $or")
    func nestedOr() throws {
        let p = try policy(#"{"$or":[{"a":["1"]},{"$or":[{"b":["2"]},{"c":["3"]}]}]}"#)
        #expect(p.matches(["c": "3"]))
        #expect(!p.matches(["d": "4"]))
    }

    @Test("an empty policy matches everything")
    func emptyPolicy() throws {
        #expect(try policy("{}").matches([:]))
    }
}

@Suite("SNS filter policy: parsing and limits")
struct SNSFilterPolicyParseTests {
    func error(_ json: String) -> String? {
        do throws(ValidationError) {
            _ = try SNSFilterPolicy.parse(json)
            return nil
        } catch {
            #expect(error.field == "filter_policy_json")
            return error.message
        }
    }

    @Test("bad JSON and non-objects are refused")
    func shape() {
        #expect(error(#"{"a":["x"],}"#) == "not valid JSON: expected a string key at byte 11")
        #expect(error(#"["a"]"#) == "must be a JSON object")
        #expect(error(#"{"a":["x"],"a":["y"]}"#)?.hasPrefix("not valid JSON: duplicate key") == true)
    }

    @Test("a value must be a non-empty array; nesting is body scope only")
    func values() {
        #expect(error(#"{"a":"x"}"#) == #""a": the value must be an array of matchers"#)
        #expect(
            error(#"{"a":{"b":["x"]}}"#)
                == #""a": the value must be an array of matchers (nesting needs the MessageBody scope)"#)
        #expect(error(#"{"a":[]}"#) == #""a": the array must not be empty"#)
    }

    @Test(
        "malformed matchers are refused",
        arguments: [
            (#"[true]"#, "matchers must be strings, numbers or operator objects"),
            (#"[null]"#, "matchers must be strings, numbers or operator objects"),
            (#"[["x"]]"#, "matchers must be strings, numbers or operator objects"),
            (#"[{"cidr":"10.0.0.0/24"}]"#, #"unknown operator "cidr""#),
            (#"[{"Prefix":"x"}]"#, #"unknown operator "Prefix""#),
            (#"[{"prefix":"x","suffix":"y"}]"#, "a matcher object must hold exactly one operator"),
            (#"[{}]"#, "a matcher object must hold exactly one operator"),
            (#"[{"prefix":1}]"#, #""prefix" takes a string"#),
            (#"[{"exists":"true"}]"#, #""exists" takes true or false"#),
            (
                #"[{"anything-but":{"suffix":"x"}}]"#,
                #""anything-but" takes a string, a number, an array of them or {"prefix": string}"#
            ),
            (
                #"[{"anything-but":[true]}]"#,
                #""anything-but" takes a string, a number, an array of them or {"prefix": string}"#
            ),
            (#"[1000000001]"#, "numbers must be between -1000000000 and 1000000000, got 1000000001"),
        ])
    func badMatchers(array: String, message: String) {
        #expect(error(#"{"k":"# + array + "}") == #""k": "# + message)
    }

    @Test(
        "malformed numeric matchers are refused",
        arguments: [
            #"[]"#, #"["="]"#, #"["=", "5"]"#, #"["==", 5]"#, #"[5, "="]"#, #"[">", 0, "<"]"#,
            #"[">", 0, "<", 5, ">", 1]"#, #"">5""#,
        ])
    func badNumericShape(operand: String) {
        #expect(error(#"{"k":[{"numeric":"# + operand + "}]}") == #""k": "# + SNSFilterMatcher.numericShape)
    }

    @Test("numeric ranges need a lower then an upper bound, lower below upper")
    func badRanges() {
        let order = #""k": a numeric range must be a lower bound (> or >=) then an upper bound (< or <=)"#
        #expect(error(#"{"k":[{"numeric":["<", 5, ">", 0]}]}"#) == order)
        #expect(error(#"{"k":[{"numeric":["=", 5, "<", 9]}]}"#) == order)
        #expect(error(#"{"k":[{"numeric":[">", 0, ">", 9]}]}"#) == order)
        #expect(
            error(#"{"k":[{"numeric":[">", 5, "<", 5]}]}"#)
                == #""k": a numeric range's lower bound must be below its upper bound"#)
        #expect(error(#"{"k":[{"numeric":[">", -1000000000, "<", 1000000000]}]}"#) == nil)
        #expect(error(#"{"k":[{"numeric":[">", -1000000000.5]}]}"#)?.contains("between") == true)
    }

    @Test("$or must be a non-empty array of non-empty objects")
    func badOr() {
        #expect(error(#"{"$or":{"a":["x"]}}"#) == #""$or": the value must be a non-empty array of objects"#)
        #expect(error(#"{"$or":[]}"#) == #""$or": the value must be a non-empty array of objects"#)
        #expect(error(#"{"$or":[{"a":["x"]},{}]}"#) == #""$or": each element must be a non-empty object"#)
        #expect(error(#"{"$or":[{"a":"x"}]}"#) == #""a": the value must be an array of matchers"#)
    }

    @Test("at most 5 attribute names, $or branches included")
    func nameLimit() {
        #expect(error(#"{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"]}"#) == nil)
        #expect(
            error(#"{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}"#)
                == "uses 6 attribute names, over the limit of 5")
        #expect(
            error(#"{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"$or":[{"e":["1"]},{"f":["1"]}]}"#)
                == "uses 6 attribute names, over the limit of 5")
        // The same name in two branches counts once.
        #expect(error(#"{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"$or":[{"e":["1"]},{"e":["2"]}]}"#) == nil)
    }

    @Test("at most 150 combinations: the product of array sizes, $or branches summed")
    func combinationLimit() {
        func values(_ n: Int) -> String { "[" + (0..<n).map { "\($0)" }.joined(separator: ",") + "]" }
        #expect(error(#"{"a":"# + values(10) + #","b":"# + values(15) + "}") == nil)
        #expect(
            error(#"{"a":"# + values(10) + #","b":"# + values(16) + "}")
                == "has 160 combinations of values, over the limit of 150")
        // 2 × (50 + 26) = 152.
        let or = #"{"a":[1,2],"$or":[{"b":"# + values(50) + #"},{"c":"# + values(26) + "}]}"
        #expect(error(or) == "has 152 combinations of values, over the limit of 150")
    }

    @Test("a policy over 256 KB is refused before parsing")
    func sizeLimit() {
        let big = #"{"a":[""# + String(repeating: "x", count: SNSFilterPolicy.maxPolicyBytes) + #""]}"#
        #expect(error(big) == "must be at most 262144 bytes")
    }
}
