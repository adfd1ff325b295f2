// Parsing a filter policy's JSON and checking SNS's limits.
extension SNSFilterPolicy {
    /// Parses and checks a policy.
    ///
    /// - Throws: ``ValidationError`` naming `filter_policy_json`: bad JSON, not an object, a value
    ///   that is not an array, an unknown operator, a malformed matcher, more than 5 attribute
    ///   names (distinct names anywhere in the policy, `$or` branches included) or more than 150
    ///   combinations (the product of the array sizes, each `$or` adding up its branches').
    /// `nested`: the `MessageBody` scope, where an object value is a key of the body whose own
    /// keys the object's members name (each condition's name is the dotted key path).
    public static func parse(_ json: String, nested: Bool = false) throws(ValidationError) -> SNSFilterPolicy {
        guard json.utf8.count <= maxPolicyBytes else { throw invalid("must be at most \(maxPolicyBytes) bytes") }
        let document: JSONValue
        do throws(JSONError) {
            document = try JSONParser.parse(json.utf8)
        } catch {
            throw invalid("not valid JSON: \(error)")
        }
        guard let members = document.objectMembers else { throw invalid("must be a JSON object") }
        let policy = SNSFilterPolicy(conditions: try conditions(members, path: nil, nested: nested))
        let names = policy.attributeNames
        guard names.count <= maxNames else {
            throw invalid("uses \(names.count) attribute names, over the limit of \(maxNames)")
        }
        let combinations = combinationCount(policy.conditions)
        guard combinations <= maxCombinations else {
            throw invalid("has \(combinations) combinations of values, over the limit of \(maxCombinations)")
        }
        return policy
    }

    static func invalid(_ message: String) -> ValidationError {
        ValidationError(field: "filter_policy_json", message: message)
    }

    /// The conditions of one object: the whole policy, one `$or` branch, or (`nested`) one key of
    /// the body at `path`.
    private static func conditions(
        _ members: [(String, JSONValue)], path: String?, nested: Bool
    ) throws(ValidationError) -> [Condition] {
        var result: [Condition] = []
        for (key, value) in members {
            if key == "$or" {
                result.append(try orCondition(value, path: path, nested: nested))
                continue
            }
            // A NUL would make a key and a path of keys the same name (SNSMessageBody joins with it).
            if nested && key.contains(SNSMessageBody.separator) {
                throw invalid("a key must not contain the NUL character")
            }
            let name = path.map { $0 + SNSMessageBody.separator + key } ?? key
            if nested, let inner = value.objectMembers {
                guard !inner.isEmpty else { throw invalid("\"\(shown(name))\": an object must not be empty") }
                result += try conditions(inner, path: name, nested: true)
                continue
            }
            guard case .array(let elements) = value else {
                let hint = value.objectMembers != nil ? " (nesting needs the MessageBody scope)" : ""
                throw invalid("\"\(shown(name))\": the value must be an array of matchers\(hint)")
            }
            guard !elements.isEmpty else { throw invalid("\"\(shown(name))\": the array must not be empty") }
            var matchers: [SNSFilterMatcher] = []
            for element in elements {
                do throws(ValidationError) {
                    matchers.append(try SNSFilterMatcher.parse(element))
                } catch {
                    throw invalid("\"\(shown(name))\": \(error.message)")
                }
            }
            result.append(.attribute(name: name, matchers: matchers))
        }
        return result
    }

    /// A condition's name as messages show it: a body path's keys joined with `.`.
    private static func shown(_ name: String) -> String {
        String(name.map { String($0) == SNSMessageBody.separator ? "." : $0 })
    }

    /// `"$or": [{…}, {…}]`: an array of non-empty policy objects.
    private static func orCondition(_ value: JSONValue, path: String?, nested: Bool) throws(ValidationError)
        -> Condition
    {
        guard case .array(let elements) = value, !elements.isEmpty else {
            throw invalid("\"$or\": the value must be a non-empty array of objects")
        }
        var branches: [[Condition]] = []
        for element in elements {
            guard let members = element.objectMembers, !members.isEmpty else {
                throw invalid("\"$or\": each element must be a non-empty object")
            }
            branches.append(try conditions(members, path: path, nested: nested))
        }
        return .or(branches)
    }
}
