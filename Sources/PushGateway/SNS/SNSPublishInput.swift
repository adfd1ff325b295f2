import PushAWSQuery
import PushCore

/// What a Publish, or one PublishBatch entry, gives besides its target: the message, subject,
/// structure and attributes, checked by SNS's rules (docs/sns.md).
struct SNSPublishInput {
    /// SNS's 256 KiB, the message and its attributes together (the gRPC Publish's limit too).
    static let maxMessageBytes = SNSMessage.maxPublishBytes
    /// SNS documents no count of its own (10 is SQS's); Pushgate takes this many.
    static let maxAttributes = 100
    static let maxSubjectCharacters = 99

    var message: String
    var structure: String
    var attributes: [String: String]

    /// The parameter names an input takes.
    static let parameterNames: Set<String> = [
        "Message", "Subject", "MessageStructure", "MessageAttributes", "MessageDeduplicationId", "MessageGroupId",
    ]

    init(_ parameters: QueryParameters) throws(SNSError) {
        guard let message = parameters["Message"] else { throw SNSError.missingParameter("Message") }
        guard !message.isEmpty else { throw SNSError.invalidParameter("Empty message") }
        self.message = message
        if let subject = parameters["Subject"] { try Self.checkSubject(subject) }
        structure = parameters["MessageStructure"] ?? ""
        guard structure.isEmpty || structure == "json" else {
            throw SNSError.invalidParameter("MessageStructure", "expected json, got \(TextCap.quoted(structure))")
        }
        // MessageGroupId is taken on a standard topic and reaches no application endpoint, as in SNS;
        // its form is checked as SNS's model gives it: 1-128 of letters, digits and ASCII punctuation.
        if let group = parameters["MessageGroupId"] {
            let bytes = group.utf8
            guard (1...128).contains(bytes.count), bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                throw SNSError.invalidParameter(
                    "MessageGroupId", "must be 1-128 alphanumeric characters and punctuation (no spaces)")
            }
        }
        if parameters["MessageDeduplicationId"] != nil {
            throw SNSError.invalidParameter(
                "MessageDeduplicationId",
                "The request includes MessageDeduplicationId parameter that is not valid for this topic type")
        }
        attributes = try Self.attributes(parameters)
        // SNS counts the attributes' names, types and values with the message.
        let size = message.utf8.count + attributes.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        guard size <= Self.maxMessageBytes else {
            throw SNSError.invalidParameter(
                "Message too long", "\(size) bytes, over the limit of \(Self.maxMessageBytes)")
        }
    }

    /// SNS's subject: ASCII that starts with a letter, digit or punctuation, no line breaks or
    /// control characters, under 100 characters. Mobile endpoints never see it (as in SNS).
    private static func checkSubject(_ subject: String) throws(SNSError) {
        let bytes = Array(subject.utf8)
        guard !bytes.isEmpty else { throw SNSError.invalidParameter("Subject", "must not be empty") }
        guard bytes.count <= maxSubjectCharacters else {
            throw SNSError.invalidParameter("Subject", "must be less than 100 characters long")
        }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }), bytes[0] != 0x20 else {
            throw SNSError.invalidParameter(
                "Subject",
                "must be ASCII text beginning with a letter, number or punctuation mark, without line breaks "
                    + "or control characters")
        }
    }

    /// `MessageAttributes.entry.N.Name` / `.Value.DataType` / `.Value.StringValue`: String and Number
    /// attributes (with or without a custom type suffix) for filter policies and the
    /// `AWS.SNS.MOBILE.*` names.
    private static func attributes(_ parameters: QueryParameters) throws(SNSError) -> [String: String] {
        let entries: [(key: String, value: QueryParameters)]
        do {
            entries = try parameters.structureMap(
                "MessageAttributes", keyName: "Name", valueName: "Value", maxEntries: maxAttributes)
        } catch {
            throw SNSError.invalidParameter("MessageAttributes", error.message)
        }
        var attributes: [String: String] = [:]
        for (name, value) in entries {
            let path = "MessageAttributes.\(name)"
            try checkAttributeName(name)
            for key in value.topLevelNames where !["DataType", "StringValue", "BinaryValue"].contains(key) {
                throw SNSError.invalidParameter(path, "unknown member \(TextCap.quoted(key))")
            }
            guard let type = value["DataType"], !type.isEmpty else {
                throw SNSError.missingParameter("MessageAttributes.\(name).DataType")
            }
            let base = type.split(separator: ".", maxSplits: 1).first.map(String.init) ?? type
            switch base {
            case "String", "Number":
                if type == "String.Array" {
                    throw SNSError.unsupported(path, "the String.Array data type")
                }
                guard let string = value["StringValue"] else {
                    throw SNSError.valueInvalid(
                        "The message attribute '\(name)' with type '\(type)' must use field 'String'.")
                }
                guard !string.isEmpty else {
                    throw SNSError.valueInvalid(
                        "The message attribute '\(name)' must contain non-empty message attribute value for message "
                            + "attribute type '\(base)'.")
                }
                if base == "Number", SNSNumber.parse(string) == nil {
                    throw SNSError.valueInvalid("Could not cast message attribute '\(name)' value to number.")
                }
                attributes[name] = string
            case "Binary":
                throw SNSError.unsupported(path, "Binary message attributes")
            default:
                throw SNSError.valueInvalid(
                    "The message attribute '\(name)' has an invalid message attribute type, the set of supported "
                        + "type prefixes is Binary, Number, and String.")
            }
        }
        return attributes
    }

    /// SNS's attribute names: under 256 bytes of letters, digits, `-`, `_` and `.`, not starting or
    /// ending with `.`, no `..`.
    private static func checkAttributeName(_ name: String) throws(SNSError) {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count < 256 else {
            throw SNSError.valueInvalid("Length of message attribute name must be less than 256 bytes.")
        }
        for byte in bytes {
            let allowed =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            guard allowed else {
                let code = String(byte, radix: 16, uppercase: true)
                throw SNSError.valueInvalid(
                    "Invalid non-alphanumeric character '#x\(code)' was found in the message attribute name. Can only "
                        + "include alphanumeric characters, hyphens, underscores, or dots.")
            }
        }
        if bytes.first == UInt8(ascii: ".") {
            throw SNSError.valueInvalid("Invalid message attribute name starting with character '.' was found.")
        }
        if bytes.last == UInt8(ascii: ".") {
            throw SNSError.valueInvalid("Invalid message attribute name ending with character '.' was found.")
        }
        if name.contains("..") {
            throw SNSError.valueInvalid("Message attribute name can not have successive '.' character.")
        }
    }
}
