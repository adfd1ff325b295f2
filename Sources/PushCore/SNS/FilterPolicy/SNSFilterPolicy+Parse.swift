// Parsing a filter policy's JSON and checking SNS's limits.
extension SNSFilterPolicy {
    /// Parses and checks a policy.
    ///
    /// - Throws: ``ValidationError`` naming `filter_policy_json`: bad JSON, not an object, a value
    ///   that is not an array, an unknown operator, a malformed matcher, more than 5 attribute
    ///   names (distinct names anywhere in the policy, `$or` branches included) or more than 150
    ///   combinations (the product of the array sizes, each `$or` adding up its branches').
    public static func parse(_ json: String) throws(ValidationError) -> SNSFilterPolicy {
        guard json.utf8.count <= maxPolicyBytes else { throw invalid("must be at most \(maxPolicyBytes) bytes") }
        let document: JSONValue
        do throws(JSONError) {
            document = try JSONParser.parse(json.utf8)
        } catch {
            throw invalid("not valid JSON: \(error)")
        }
        guard let members = document.objectMembers else { throw invalid("must be a JSON object") }
        let policy = SNSFilterPolicy(conditions: try conditions(members))
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

    /// The conditions of one object: the whole policy or one `$or` branch.
    private static func conditions(_ members: [(String, JSONValue)]) throws(ValidationError) -> [Condition] {
        var result: [Condition] = []
        for (name, value) in members {
            if name == "$or" {
                result.append(try orCondition(value))
                continue
            }
            guard case .array(let elements) = value else {
                let nested = value.objectMembers != nil ? " (nesting needs the MessageBody scope)" : ""
                throw invalid("\"\(name)\": the value must be an array of matchers\(nested)")
            }
            guard !elements.isEmpty else { throw invalid("\"\(name)\": the array must not be empty") }
            var matchers: [SNSFilterMatcher] = []
            for element in elements {
                do throws(ValidationError) {
                    matchers.append(try SNSFilterMatcher.parse(element))
                } catch {
                    throw invalid("\"\(name)\": \(error.message)")
                }
            }
            result.append(.attribute(name: name, matchers: matchers))
        }
        return result
    }

    /// `"$or": [{…}, {…}]`: an array of non-empty policy objects.
    private static func orCondition(_ value: JSONValue) throws(ValidationError) -> Condition {
        guard case .array(let elements) = value, !elements.isEmpty else {
            throw invalid("\"$or\": the value must be a non-empty array of objects")
        }
        var branches: [[Condition]] = []
        for element in elements {
            guard let members = element.objectMembers, !members.isEmpty else {
                throw invalid("\"$or\": each element must be a non-empty object")
            }
            branches.append(try conditions(members))
        }
        return .or(branches)
    }
}
