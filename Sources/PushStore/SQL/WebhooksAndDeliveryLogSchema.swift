/// Schema step 8, the same on both engines: the webhooks' durable outbox and the delivery log.
///
/// - `webhook_outbox`: events waiting for a webhook, in the order written (`seq`). `event` is the
///   event's JSON as sent; a message's final event is stored as its id (`finished_message`) and
///   rendered when sent, from the message's counts then (final by then); `event` `cancelled` with
///   a `finished_message` is a message's cancel, rendered likewise. `batch` is the
///   `Pushgate-Delivery` id once the row is in a batch: a batch sent again is the same rows. Indexed
///   by (webhook, batch, seq): a batch's rows, the formed batch, and the oldest unbatched rows are
///   each one range, however long the backlog.
/// - `webhook_senders`: which instance sends a webhook's batches (a lease), so that with several
///   instances on one database each batch goes out once at a time; the batch being sent (its id,
///   when it was formed, and the drops it reports), and the events dropped since (`max_pending`,
///   `max_age_hours`) that the next batch reports. Drops are a count here, not rows in the outbox,
///   so reporting them never takes room under `max_pending`.
/// - `messages.notify`: the webhooks told when the message finishes, fixed when it is published
///   (newline-separated), so whichever path finishes it (its last chunk, a cancel, a claim ending a
///   dead holder's chunk) writes the same events.
/// - `delivery_log`: Publish recipients' outcomes that were not plain successes (and sampled
///   successes), listed by message or endpoint newest first, purged by `time`.
enum WebhooksAndDeliveryLogSchema {
    static let sqlite = sql(seq: "INTEGER PRIMARY KEY")
    static let postgres = sql(seq: "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY")

    private static func sql(seq: String) -> String {
        """
        ALTER TABLE messages ADD COLUMN notify text NOT NULL DEFAULT '';
        CREATE TABLE webhook_outbox (
            seq \(seq),
            webhook text NOT NULL,
            event text NOT NULL,
            finished_message text NOT NULL,
            created_at bigint NOT NULL,
            batch text NOT NULL DEFAULT ''
        );
        CREATE INDEX webhook_outbox_batch ON webhook_outbox (webhook, batch, seq);
        CREATE TABLE webhook_senders (
            webhook text PRIMARY KEY,
            owner text NOT NULL,
            lease_expires_at bigint NOT NULL,
            batch text NOT NULL DEFAULT '',
            batch_at bigint NOT NULL DEFAULT 0,
            batch_dropped bigint NOT NULL DEFAULT 0,
            dropped bigint NOT NULL DEFAULT 0
        );
        CREATE TABLE delivery_log (
            seq \(seq),
            message_id text NOT NULL,
            endpoint_id text NOT NULL,
            app text NOT NULL,
            token text NOT NULL,
            status text NOT NULL CHECK (status IN ('delivered', 'rejected', 'failed')),
            reason text NOT NULL,
            http_status integer NOT NULL,
            provider_id text NOT NULL,
            attempts integer NOT NULL,
            time bigint NOT NULL
        );
        CREATE INDEX delivery_log_message ON delivery_log (message_id, seq);
        CREATE INDEX delivery_log_endpoint ON delivery_log (endpoint_id, seq);
        CREATE INDEX delivery_log_time ON delivery_log (time);
        """
    }
}
