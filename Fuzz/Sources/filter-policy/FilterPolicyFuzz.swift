// Fuzzes SNS filter policies: SNSFilterPolicy.parse on the input (invalid UTF-8 repaired); a policy
// that parses is matched against attribute maps built from it and from the input.
//
// Invariants: no crash; matching is deterministic; a "witness" map built to satisfy the first
// matcher of every condition (the first branch of each `$or`) matches, and stops matching when one
// top-level attribute gets a value none of its matchers accepts; with no conditions, every map
// matches. The same input read as a `MessageBody` policy (nested keys): the input itself matched as
// a body never crashes and is deterministic, and a JSON body holding the witness at each key path
// matches as the witness map does. Uses `@testable import` (debug builds compile PushCore with -enable-testing) to read
// the parsed conditions.
import FuzzSupport

@testable import PushCore

@_cdecl("filter_policy_main")
func filterPolicyMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}

/// A value that `matcher` accepts, or nil when there is none to be had simply (then no witness map).
func witness(for matcher: SNSFilterMatcher) -> String?? {
    switch matcher {
    case .exactString(let text): return .some(text)
    case .exactNumber(let number): return .some(String(number))
    case .prefix(let text): return .some(text + "x")
    case .suffix(let text): return .some("x" + text)
    case .equalsIgnoreCase(let lowered): return .some(lowered)
    case .anythingBut(let strings, _):
        // Not a number, and longer than every excluded string.
        let longest = strings.map(\.utf8.count).max() ?? 0
        return .some(String(repeating: "~", count: longest + 1))
    case .anythingButPrefix(let text):
        guard let first = text.unicodeScalars.first else { return nil }
        return .some(first == "~" ? "!" : "~")
    case .numeric(let bounds):
        let value: Double
        if bounds.count == 2 {
            value = (bounds[0].value + bounds[1].value) / 2
        } else {
            switch bounds[0].op {
            case .equal, .lessOrEqual, .greaterOrEqual: value = bounds[0].value
            case .less: value = bounds[0].value - 1
            case .greater: value = bounds[0].value + 1
            }
        }
        guard bounds.allSatisfy({ $0.holds(for: value) }) else { return nil }  // a range too narrow
        return .some(String(value))
    case .exists(let present): return .some(present ? "x" : nil)
    }
}

/// Adds to `map` what satisfies every condition; false when no simple witness exists.
func addWitness(_ conditions: [SNSFilterPolicy.Condition], to map: inout [String: String?]) -> Bool {
    for condition in conditions {
        switch condition {
        case .attribute(let name, let matchers):
            guard let value = witness(for: matchers[0]) else { return false }
            if let existing = map[name], existing != value { return false }  // two conditions on one name
            map[name] = value
        case .or(let branches):
            guard addWitness(branches[0], to: &map) else { return false }
        }
    }
    return true
}

/// How many conditions anywhere in the policy name `name`.
func occurrences(of name: String, in conditions: [SNSFilterPolicy.Condition]) -> Int {
    conditions.reduce(0) { sum, condition in
        switch condition {
        case .attribute(let other, _): sum + (other == name ? 1 : 0)
        case .or(let branches): sum + branches.reduce(0) { $0 + occurrences(of: name, in: $1) }
        }
    }
}

/// A present value that no matcher of the list accepts, when one is easy to name: a run of `~`
/// longer than every string in the matchers (so not equal to any, and not a number).
func antiWitness(for matchers: [SNSFilterMatcher]) -> String? {
    var longest = 0
    for matcher in matchers {
        switch matcher {
        case .exactString(let text), .prefix(let text), .suffix(let text), .equalsIgnoreCase(let text):
            longest = max(longest, text.utf8.count)
        case .exactNumber, .numeric, .exists(false): break
        case .exists(true), .anythingBut, .anythingButPrefix: return nil
        }
    }
    let anti = String(repeating: "~", count: longest + 1)
    for matcher in matchers {
        switch matcher {
        case .prefix(let text), .suffix(let text):
            if text.utf8.allSatisfy({ $0 == UInt8(ascii: "~") }) { return nil }  // "~~" is a prefix of anti
        default: break
        }
    }
    return anti
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: count)
    let text = String(decoding: input, as: UTF8.self)
    let policy: SNSFilterPolicy
    do throws(ValidationError) {
        policy = try SNSFilterPolicy.parse(text)
    } catch {
        fuzzCheck(error.field == "filter_policy_json", "error field \(error.field)")
        return 0
    }
    let names = policy.attributeNames
    fuzzCheck(names.count <= SNSFilterPolicy.maxNames, "\(names.count) names accepted")
    fuzzCheck(
        SNSFilterPolicy.combinationCount(policy.conditions) <= SNSFilterPolicy.maxCombinations, "too many combinations")

    // Maps from the input: each name gets a slice of the input, a number, or nothing.
    let candidates = ["", "5", "-1.5e3", "abc", "ABC", String(decoding: input.prefix(16), as: UTF8.self)]
    var maps: [[String: String]] = [[:]]
    for (offset, byte) in input.prefix(8).enumerated() {
        var map: [String: String] = [:]
        for (i, name) in names.sorted().enumerated() where (Int(byte) >> i) & 1 == 1 {
            map[name] = candidates[(offset + i) % candidates.count]
        }
        maps.append(map)
    }
    for map in maps {
        let first = policy.matches(map)
        fuzzCheck(policy.matches(map) == first, "matching is not deterministic")
        if policy.conditions.isEmpty { fuzzCheck(first, "an empty policy rejected \(map)") }
    }

    var witnessMap: [String: String?] = [:]
    if addWitness(policy.conditions, to: &witnessMap) {
        let attributes = witnessMap.compactMapValues { $0 }
        fuzzCheck(policy.matches(attributes), "the witness \(attributes) does not match \(text)")
        // Spoiling one top-level condition (AND) must spoil the policy.
        for case .attribute(let name, let matchers) in policy.conditions
        where occurrences(of: name, in: policy.conditions) == 1 {
            guard let anti = antiWitness(for: matchers) else { continue }
            var spoiled = attributes
            spoiled[name] = anti
            fuzzCheck(!policy.matches(spoiled), "\(spoiled) matches \(text) though \(name) fails")
        }
    }
    fuzzBody(text)
    return 0
}

/// The input as a `MessageBody` policy.
func fuzzBody(_ text: String) {
    guard let policy = try? SNSFilterPolicy.parse(text, nested: true) else { return }
    fuzzCheck(policy.attributeNames.count <= SNSFilterPolicy.maxNames, "body policy: too many names accepted")
    let first = policy.matches(body: text)
    fuzzCheck(policy.matches(body: text) == first, "body matching is not deterministic")
    var witnessMap: [String: String?] = [:]
    guard addWitness(policy.conditions, to: &witnessMap) else { return }
    let attributes = witnessMap.compactMapValues { $0 }
    guard let body = jsonBody(attributes) else { return }  // a path both a value and an object
    fuzzCheck(policy.matches(body: body), "the witness body \(body) does not match \(text)")
}

/// A JSON object with each value (as a JSON string) at its key path (keys joined by NUL, as
/// SNSMessageBody joins them); nil when one path is a prefix of another.
func jsonBody(_ values: [String: String]) -> String? {
    indirect enum Node {
        case leaf(String)
        case object([String: Node])
    }
    var root: [String: Node] = [:]
    func insert(_ keys: ArraySlice<String>, _ value: String, into object: inout [String: Node]) -> Bool {
        guard let key = keys.first else { return false }
        if keys.count == 1 {
            guard object[key] == nil else { return false }
            object[key] = .leaf(value)
            return true
        }
        var inner: [String: Node] = [:]
        switch object[key] {
        case .leaf?: return false
        case .object(let existing)?: inner = existing
        case nil: break
        }
        guard insert(keys.dropFirst(), value, into: &inner) else { return false }
        object[key] = .object(inner)
        return true
    }
    for (path, value) in values {
        let keys = path.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
        guard insert(keys[...], value, into: &root) else { return nil }
    }
    func write(_ object: [String: Node]) -> String {
        "{"
            + object.map { key, node in
                let value: String
                switch node {
                case .leaf(let text): value = quoted(text)
                case .object(let inner): value = write(inner)
                }
                return quoted(key) + ":" + value
            }.joined(separator: ",") + "}"
    }
    return write(root)
}

func quoted(_ text: String) -> String {
    var out: [UInt8] = []
    JSONWriter.appendQuoted(text, to: &out)
    return String(decoding: out, as: UTF8.self)
}
