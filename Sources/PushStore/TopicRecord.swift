/// A topic: a named set of subscriptions that a publish fans out to.
public struct TopicRecord: Sendable, Equatable {
    /// The topic's name, which is also its identity (the caller validates `[A-Za-z0-9_-]{1,256}`).
    public var name: String
    /// Its subscriptions, when the listing counted them; 0 otherwise.
    public var subscribers: Int64

    /// Makes a record.
    public init(name: String, subscribers: Int64 = 0) {
        self.name = name
        self.subscribers = subscribers
    }
}
