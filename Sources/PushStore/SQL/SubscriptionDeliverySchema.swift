/// PostgreSQL's schema step 9, its own: each subscription carries a copy of what a delivery needs
/// from its endpoint (id, app, token, enabled), so a fan-out page is one range scan of the topic's
/// subscriptions, with no lookup of an endpoint per recipient. On PostgreSQL that lookup was most
/// of a page: 1,000 index probes into `endpoints` (a nested loop, 4 buffer hits each) took the
/// backend ~2.6 ms of CPU a page, ~1.2 ms with the copies; over a 1M fan-out on one machine,
/// PostgreSQL's CPU went from 3.1-3.7 s to 1.8-2.0 s and the fan-out from 6.3-7.4 s to 5.5-5.8 s.
///
/// SQLite keeps the join: there the lookup is an in-process B-tree probe (a page of 1,000 cost
/// about the same with copies), and the copies (~105 bytes a subscription) made its import ~10 %
/// slower and its file ~37 % larger (`scripts/bench/analysis.md`);
/// `SQLEngine.subscriptionsCopyEndpoints` says which engine has them.
///
/// The copies are written when a subscription is inserted, read from its endpoint's row in the
/// same statement under a share lock (an endpoint changing meanwhile waits, then its trigger sees
/// the new subscription), and kept by a trigger on `endpoints`, so no path that changes an endpoint
/// (an update, a provider's rejection disabling it, an import) can leave them behind. An insert
/// without them (an instance older than this step, still running beside a newer one) gets them
/// from a trigger that reads the endpoint the same way; this build's inserts give them and skip
/// it (its `WHEN` is checked without calling the function). Listings and lookups still join
/// `endpoints`: only the fan-out reads the copies.
enum SubscriptionDeliverySchema {
    /// The step first takes `endpoints` in a mode that lets it be read but not changed: an older
    /// instance's disable or token change during the backfill would otherwise be read before it
    /// was made and never copied (the trigger that copies changes comes last). Endpoints before
    /// subscriptions, the order every transaction that writes both takes them in.
    static let postgres = """
        LOCK TABLE endpoints IN SHARE ROW EXCLUSIVE MODE;
        ALTER TABLE subscriptions ADD COLUMN endpoint_id text NOT NULL DEFAULT '',
            ADD COLUMN endpoint_app text NOT NULL DEFAULT '', ADD COLUMN endpoint_token text NOT NULL DEFAULT '',
            ADD COLUMN endpoint_enabled integer NOT NULL DEFAULT 1;
        UPDATE subscriptions s SET endpoint_id = e.id, endpoint_app = e.app, endpoint_token = e.token,
            endpoint_enabled = e.enabled
        FROM endpoints e WHERE e.seq = s.endpoint_seq;
        CREATE FUNCTION pushgate_endpoint_to_subscriptions() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE subscriptions SET endpoint_id = NEW.id, endpoint_app = NEW.app, endpoint_token = NEW.token,
                endpoint_enabled = NEW.enabled
            WHERE endpoint_seq = NEW.seq;
            RETURN NULL;
        END
        $$;
        CREATE FUNCTION pushgate_subscription_copies_endpoint() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            endpoint record;
        BEGIN
            SELECT e.id, e.app, e.token, e.enabled INTO endpoint
                FROM endpoints e WHERE e.seq = NEW.endpoint_seq FOR SHARE;
            -- No endpoint: the row goes on as it is, for the foreign key to refuse it.
            IF FOUND THEN
                NEW.endpoint_id := endpoint.id;
                NEW.endpoint_app := endpoint.app;
                NEW.endpoint_token := endpoint.token;
                NEW.endpoint_enabled := endpoint.enabled;
            END IF;
            RETURN NEW;
        END
        $$;
        CREATE TRIGGER subscriptions_copy_endpoint BEFORE INSERT ON subscriptions
        FOR EACH ROW WHEN (NEW.endpoint_id = '')
        EXECUTE FUNCTION pushgate_subscription_copies_endpoint();
        CREATE TRIGGER endpoints_to_subscriptions AFTER UPDATE OF id, app, token, enabled ON endpoints
        FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.app IS DISTINCT FROM NEW.app
            OR OLD.token IS DISTINCT FROM NEW.token OR OLD.enabled IS DISTINCT FROM NEW.enabled)
        EXECUTE FUNCTION pushgate_endpoint_to_subscriptions();
        """
}
