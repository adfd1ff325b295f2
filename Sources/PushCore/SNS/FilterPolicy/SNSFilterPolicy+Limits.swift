// What SNS's 5-name and 150-combination limits count.
extension SNSFilterPolicy {
    /// The distinct attribute names anywhere in the policy.
    var attributeNames: Set<String> {
        var names = Set<String>()
        func collect(_ conditions: [Condition]) {
            for condition in conditions {
                switch condition {
                case .attribute(let name, _): names.insert(name)
                case .or(let branches): branches.forEach(collect)
                }
            }
        }
        collect(conditions)
        return names
    }

    /// How many single-value policies this one expands to: the product of the array sizes, with
    /// each `$or` contributing the sum of its branches. Saturates rather than overflowing.
    static func combinationCount(_ conditions: [Condition]) -> Int {
        var product = 1
        for condition in conditions {
            let factor: Int
            switch condition {
            case .attribute(_, let matchers): factor = matchers.count
            case .or(let branches):
                factor = branches.reduce(0) { sum, branch in
                    let (total, overflow) = sum.addingReportingOverflow(combinationCount(branch))
                    return overflow ? Int.max : total
                }
            }
            let (next, overflow) = product.multipliedReportingOverflow(by: factor)
            product = overflow ? Int.max : next
        }
        return product
    }
}
