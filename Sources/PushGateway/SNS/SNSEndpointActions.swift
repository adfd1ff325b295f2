import PushAWSQuery
import PushCore
import PushStore

/// The platform endpoint actions, on the registry the gRPC API's Registry keeps: an endpoint made
/// here is the one `GetEndpoint` shows (its id is the ARN's last part), and the reverse.
enum SNSEndpointActions {
    static let pageSize = 100

    static let actions: [SNSAction] = [
        SNSAction(
            "CreatePlatformEndpoint", parameters: ["PlatformApplicationArn", "Token", "CustomUserData", "Attributes"],
            run: create),
        SNSAction("GetEndpointAttributes", parameters: ["EndpointArn"]) { call throws(SNSError) in
            let endpoint = try await call.endpoint("EndpointArn")
            return { xml in xml.attributes(attributes(endpoint)) }
        },
        SNSAction("SetEndpointAttributes", parameters: ["EndpointArn", "Attributes"], run: setAttributes),
        SNSAction("DeleteEndpoint", parameters: ["EndpointArn"]) { call throws(SNSError) in
            try call.requireAdmin()
            // Idempotent, as in SNS: an endpoint that is not there (or not under that ARN) is gone already.
            let endpoint: EndpointRecord
            do throws(SNSError) {
                endpoint = try await call.endpoint("EndpointArn")
            } catch  where error.code == "NotFound" {
                return nil
            }
            try await call.store("EndpointArn") { () async throws(StoreError) in
                try await call.store.deleteEndpoint(id: endpoint.id)
            }
            return nil
        },
        SNSAction("ListEndpointsByPlatformApplication", parameters: ["PlatformApplicationArn", "NextToken"]) {
            call throws(SNSError) in
            let app = try call.application("PlatformApplicationArn")
            let page = try await call.store("NextToken") { () async throws(StoreError) in
                try await call.store.listEndpoints(app: app.name, cursor: call.optional("NextToken"), limit: pageSize)
            }
            return { xml in
                xml.open("Endpoints")
                for endpoint in page.items {
                    xml.open("member")
                    xml.element("EndpointArn", call.arn(of: endpoint))
                    xml.attributes(attributes(endpoint))
                    xml.close("member")
                }
                xml.close("Endpoints")
                xml.nextToken(page.nextCursor)
            }
        },
    ]

    /// SNS's endpoint attributes: `CustomUserData` (when set), `Enabled` and `Token`.
    static func attributes(_ endpoint: EndpointRecord) -> [(key: String, value: String)] {
        var attributes: [(key: String, value: String)] = []
        if !endpoint.customUserData.isEmpty { attributes.append(("CustomUserData", endpoint.customUserData)) }
        attributes.append(("Enabled", endpoint.enabled ? "true" : "false"))
        attributes.append(("Token", endpoint.token))
        return attributes
    }

    /// Idempotent as in SNS: the same token with the same attributes answers the existing endpoint
    /// (even a disabled one, which stays disabled); with other attributes it is InvalidParameter
    /// naming the endpoint that has the token.
    @Sendable static func create(_ call: SNSCall) async throws(SNSError) -> SNSResult {
        try call.requireAdmin()
        let app = try call.application("PlatformApplicationArn")
        let given = try call.required("Token")
        let token = try await call.shared("Token") { () throws(GRPCStatus) in
            try RegistryValidation.normalizedToken(given, app: app, field: "Token")
        }
        let settings = try EndpointSettings(call.map("Attributes"), allowed: ["CustomUserData", "Enabled", "Token"])
        if let attribute = settings.token, attribute != given {
            throw SNSError.invalidParameter("Attributes", "Token: differs from the Token parameter")
        }
        // Given both ways, the attribute wins (as in SNS).
        let customUserData = settings.customUserData ?? call.optional("CustomUserData") ?? ""
        try await call.shared("CustomUserData") { () throws(GRPCStatus) in
            try RegistryValidation.customUserData(customUserData, field: "CustomUserData")
        }
        let made: (endpoint: EndpointRecord, created: Bool)
        do {
            // `Enabled` goes into the same insert, and is compared with an existing endpoint's.
            made = try await call.store.createEndpoint(
                app: app.name, normalizedToken: token, customUserData: customUserData, enabled: settings.enabled,
                now: unixMilliseconds())
        } catch  where error.code == .alreadyExists && error.existingID != nil {
            throw conflict(call.endpointARN(app: app.name, id: error.existingID!))
        } catch {
            throw SNSError(GRPCStatus(error, field: "Token"), parameter: "Token")
        }
        let arn = call.arn(of: made.endpoint)
        return { xml in xml.element("EndpointArn", arn) }
    }

    private static func conflict(_ arn: String) -> SNSError {
        SNSError.invalidParameter(
            "Token", "Endpoint \(arn) already exists with the same Token, but different attributes.")
    }

    @Sendable static func setAttributes(_ call: SNSCall) async throws(SNSError) -> SNSResult {
        try call.requireAdmin()
        let endpoint = try await call.endpoint("EndpointArn")
        let entries = try call.map("Attributes")
        guard !entries.isEmpty else { throw SNSError.missingParameter("Attributes") }
        let settings = try EndpointSettings(entries, allowed: ["CustomUserData", "Enabled", "Token"])
        var token: String?
        if let given = settings.token {
            let app = call.configuration.app(named: endpoint.app) ?? AppConfiguration(name: endpoint.app)
            token = try await call.shared("Token") { () throws(GRPCStatus) in
                try RegistryValidation.normalizedToken(given, app: app, field: "Token")
            }
        }
        if let data = settings.customUserData {
            try await call.shared("CustomUserData") { () throws(GRPCStatus) in
                try RegistryValidation.customUserData(data, field: "CustomUserData")
            }
        }
        do {
            _ = try await call.store.updateEndpoint(
                id: endpoint.id, normalizedToken: token, enabled: settings.enabled,
                customUserData: settings.customUserData)
        } catch  where error.code == .alreadyExists {
            let other = error.existingID.map { call.endpointARN(app: endpoint.app, id: $0) }
            throw SNSError.invalidParameter("Token", "Endpoint \(other ?? "of this app") already has this Token.")
        } catch  where error.code == .notFound {
            throw SNSError.notFound("Endpoint does not exist")
        } catch {
            throw SNSError(GRPCStatus(error, field: "Attributes"), parameter: "Attributes")
        }
        return nil
    }
}

/// An endpoint's `Attributes` map, read: `CustomUserData`, `Enabled` (true/false) and `Token`.
struct EndpointSettings {
    var customUserData: String?
    var enabled: Bool?
    var token: String?

    init(_ entries: [(key: String, value: String)], allowed: Set<String>) throws(SNSError) {
        for (key, value) in entries {
            guard allowed.contains(key) else {
                throw SNSError.invalidParameter(
                    "Attributes", "Invalid attribute name: \(TextCap.prefix(key, maxBytes: 128))")
            }
            switch key {
            case "CustomUserData": customUserData = value
            case "Token": token = value
            default:
                switch value.lowercased() {
                case "true": enabled = true
                case "false": enabled = false
                default:
                    throw SNSError.invalidParameter(
                        "Attributes", "Enabled: expected true or false, got \(TextCap.quoted(value))")
                }
            }
        }
    }
}
