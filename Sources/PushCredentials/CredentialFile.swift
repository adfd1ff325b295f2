import PushPosix
import PushTLS

/// Reading a provider's service-account key file (Google's, Huawei's): the file's bytes, its flat
/// JSON object and its required members, every error naming the file (`source`) and the field,
/// never a value.
enum CredentialFile {
    /// The bytes of the file at `path`; `source` is how errors name it.
    static func read(_ path: String, source: String) throws(TLSError) -> [UInt8] {
        do {
            return try FileContents.read(path)
        } catch {
            throw TLSError(.invalidInput, "\(source): cannot be read (\(error.description))")
        }
    }

    /// The file's flat JSON object.
    static func object(_ json: [UInt8], source: String) throws(TLSError) -> FlatJSONObject {
        guard let object = FlatJSONObject(json) else {
            throw TLSError(.invalidInput, "\(source): not a flat JSON object of strings")
        }
        return object
    }

    /// Member `name`, a non-empty string.
    static func required(_ name: String, of object: FlatJSONObject, source: String) throws(TLSError) -> String {
        switch object.fields[name] {
        case nil: throw TLSError(.invalidInput, "\(source): \(name) is missing")
        case .string(let value)?:
            guard !value.isEmpty else { throw TLSError(.invalidInput, "\(source): \(name) is empty") }
            return value
        default: throw TLSError(.invalidInput, "\(source): \(name) must be a string")
        }
    }
}
