-- Delivered outbox rows are trimmed by the relay sweep after their retention (services/outbox.py):
-- the sweep's look-up of a tenant's delivered rows, oldest first.
CREATE INDEX IF NOT EXISTS outbox_delivered ON outbox (tenant_id, sent_at) WHERE sent_at IS NOT NULL;
