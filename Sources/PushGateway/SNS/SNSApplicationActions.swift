import PushAWSQuery
import PushCore

/// ListPlatformApplications and GetPlatformApplicationAttributes: the configured apps as SNS
/// platform applications. Their attributes never include a credential.
enum SNSApplicationActions {
    static let pageSize = 100

    static let actions: [SNSAction] = [
        SNSAction("ListPlatformApplications", parameters: ["NextToken"]) { call throws(SNSError) in
            let apps = call.configuration.apps
            let offset = try offset(call.optional("NextToken"), count: apps.count)
            let page = apps.dropFirst(offset).prefix(pageSize)
            let next = offset + page.count < apps.count ? "o\(offset + page.count)" : nil
            return { xml in
                xml.open("PlatformApplications")
                for app in page {
                    xml.open("member")
                    xml.element(
                        "PlatformApplicationArn", call.arns.application(platform: app.platformKey, app: app.name))
                    xml.attributes(attributes(app))
                    xml.close("member")
                }
                xml.close("PlatformApplications")
                xml.nextToken(next)
            }
        },
        SNSAction("GetPlatformApplicationAttributes", parameters: ["PlatformApplicationArn"]) { call throws(SNSError) in
            let app = try call.application("PlatformApplicationArn")
            return { xml in xml.attributes(attributes(app)) }
        },
    ]

    /// What SNS shows of a platform application that Pushgate has: `Enabled`; for APNs and FCM the
    /// `AuthenticationMethod`; for APNs the bundle id and, with token authentication, the team id.
    static func attributes(_ app: AppConfiguration) -> [(key: String, value: String)] {
        var attributes = [(key: "Enabled", value: "true")]
        switch app.keys {
        case .apns(let apns):
            attributes.append(("AuthenticationMethod", apns.certFile.isEmpty ? "Token" : "Certificate"))
            if !apns.bundleID.isEmpty { attributes.append(("ApplePlatformBundleID", apns.bundleID)) }
            if !apns.teamID.isEmpty { attributes.append(("ApplePlatformTeamID", apns.teamID)) }
        case .fcm: attributes.append(("AuthenticationMethod", "Token"))
        case .hms(let hms): attributes.append(("AuthenticationMethod", hms.api == .v3 ? "Token" : "Credentials"))
        case .adm, .webpush: break
        }
        return attributes
    }

    /// A NextToken of this listing (`o` and an offset into the configured apps).
    private static func offset(_ token: String?, count: Int) throws(SNSError) -> Int {
        guard let token, !token.isEmpty else { return 0 }
        guard token.hasPrefix("o"), let offset = Int(token.dropFirst()), offset >= 0, offset <= count else {
            throw SNSError.invalidParameter("NextToken", "not a NextToken of this listing")
        }
        return offset
    }
}
