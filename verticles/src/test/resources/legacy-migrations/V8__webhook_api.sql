-- Webhook DLQ API (issue #9): the listing pages over (failed_at, id), so a dead letter must carry its failed_at. A
-- delivery that becomes failed_permanent without one is stamped with the time of that change, and a delivery that
-- leaves failed_permanent loses it (so a later failure is stamped afresh and lands at the end of the keyset).
CREATE FUNCTION queen.webhook_delivery_stamp_failed_at() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF NEW.status = 'failed_permanent' THEN
        IF NEW.failed_at IS NULL THEN
            NEW.failed_at := clock_timestamp();
        END IF;
    ELSIF TG_OP = 'UPDATE' AND OLD.status = 'failed_permanent' AND NEW.failed_at IS NOT DISTINCT FROM OLD.failed_at THEN
        NEW.failed_at := NULL;
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER webhook_delivery_failed_at
    BEFORE INSERT OR UPDATE OF status, failed_at ON queen.webhook_deliveries
    FOR EACH ROW EXECUTE FUNCTION queen.webhook_delivery_stamp_failed_at();
