/// SNS's rules for message attribute names (docs/providers.md C.1).
enum SNSAttributeName {
    static let maxLength = 256

    /// Names of the reserved attributes this gateway acts on.
    static let pushType = "AWS.SNS.MOBILE.APNS.PUSH_TYPE"
    static let priority = "AWS.SNS.MOBILE.APNS.PRIORITY"
    static let topic = "AWS.SNS.MOBILE.APNS.TOPIC"
    static let collapseID = "AWS.SNS.MOBILE.APNS.COLLAPSE_ID"

    /// The TTL attribute that applies to deliveries on `key`.
    static func ttl(for key: PlatformKey) -> String {
        switch key {
        case .apns: "AWS.SNS.MOBILE.APNS.TTL"
        case .apnsSandbox: "AWS.SNS.MOBILE.APNS_SANDBOX.TTL"
        case .gcm: "AWS.SNS.MOBILE.FCM.TTL"
        case .adm: "AWS.SNS.MOBILE.ADM.TTL"
        // Pushgate's own, named like SNS's.
        case .webpush: "AWS.SNS.MOBILE.WEBPUSH.TTL"
        case .hms: "AWS.SNS.MOBILE.HMS.TTL"
        }
    }

    /// Every TTL attribute SNS defines (docs/providers.md C.4). All are checked as TTLs; only the one for the
    /// delivery's platform is used. Accepting the others lets one topic publish carry TTLs for
    /// platforms the gateway does not serve, as it may with SNS.
    static let ttlNames: Set<String> = Set(
        [
            "APNS", "APNS_SANDBOX", "APNS_VOIP", "APNS_VOIP_SANDBOX", "APNS_MDM", "APNS_MDM_SANDBOX",
            "APNS_PASSBOOK", "APNS_PASSBOOK_SANDBOX", "FCM", "ADM", "BAIDU", "WNS", "WEBPUSH", "HMS",
        ].map { "AWS.SNS.MOBILE.\($0).TTL" })

    /// True for names SNS reserves: `AWS.` and `Amazon.` in any letter case.
    static func isReserved(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasPrefix("aws.") || lowered.hasPrefix("amazon.")
    }

    /// True when `name` has SNS's shape: 1–256 characters from `A-Za-z0-9_-.`, no leading,
    /// trailing or doubled `.`.
    static func isWellFormed(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        guard bytes.first != UInt8(ascii: "."), bytes.last != UInt8(ascii: ".") else { return false }
        var previousWasDot = false
        for byte in bytes {
            let isDot = byte == UInt8(ascii: ".")
            guard isDot || isNameByte(byte), !(isDot && previousWasDot) else { return false }
            previousWasDot = isDot
        }
        return true
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
