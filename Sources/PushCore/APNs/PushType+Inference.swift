extension PushType {
    /// The push type for a payload sent without an explicit one.
    ///
    /// `background` only when the top-level `aps` object holds nothing but `content-available`
    /// equal to the number `1`; `alert` otherwise (no `aps`, other `aps` keys, any other value).
    /// Keys beside `aps` don't matter.
    ///
    /// SNS (docs/providers.md C.5) is looser in two ways that this rule deliberately doesn't copy:
    /// it reportedly also accepts a boolean `content-available`, and it only names `alert`, `badge`
    /// and `sound` as keys that make a push an alert. Apple's background push is `aps` with only
    /// `content-available: 1`, and anything else sent as background may be dropped silently, so
    /// the stricter rule errs toward `alert`, which APNs always delivers.
    public static func infer(fromPayload payload: JSONValue) -> PushType {
        guard let aps = payload["aps"]?.objectMembers, aps.count == 1,
            aps[0].0 == "content-available", aps[0].1 == .number("1")
        else { return .alert }
        return .background
    }
}
