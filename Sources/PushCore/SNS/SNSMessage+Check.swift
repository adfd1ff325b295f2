extension SNSMessage {
    /// Checks the payload this message becomes on every platform `target` reaches (a topic: all of
    /// them), before any app is known: what Publish refuses before it commits the message. Each
    /// builder's `check` runs the checks its `build` runs when the fan-out builds the payload per app.
    ///
    /// - Parameter attributes: the publish's message attributes, checked for each platform.
    /// - Throws: the first ``ValidationError``, platforms in the order APNs, APNs sandbox, FCM,
    ///   ADM, Web Push, Huawei.
    public func checkPayloads(
        attributes: [String: String], target: SNSTarget, platforms: Set<PlatformKey> = Set(PlatformKey.allCases)
    ) throws(ValidationError) {
        func reaches(_ key: PlatformKey) -> Bool {
            platforms.contains(key) && (target == .topic || target == .endpoint(key))
        }
        for key in [PlatformKey.apns, .apnsSandbox] where reaches(key) {
            let options = try SNSAttributes.parse(attributes, platformKey: key)
            try SNSAPNsPayload.check(message: self, key: key, options: options)
        }
        if reaches(.gcm) { try SNSFCMPayload.check(message: self, attributes: attributes) }
        if reaches(.adm) { try SNSADMPayload.check(message: self, attributes: attributes) }
        if reaches(.webpush) { try SNSWebPushPayload.check(message: self, attributes: attributes) }
        if reaches(.hms) { try SNSHMSPayload.check(message: self, attributes: attributes) }
    }
}
