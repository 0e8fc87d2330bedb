-- Schema version 1 of warden's fleet store. Never edit a migration that has
-- shipped: add the next file.
--
-- Times are Unix milliseconds (bigint), amounts micro-dollars (bigint).
-- The audit and security-event rows keep their canonical encoding (enc, the
-- exact bytes their hash covers, see package audit) beside columns for SQL
-- queries; the store reads rows back from enc, and Verify checks that the
-- query columns say what enc says.

-- The role the daemons log in with is given warden_writer (GRANT
-- warden_writer TO <login role>): it may read and append, and change only
-- what must change (an approval's answer, a once grant's use, a rate slot's
-- hold), never update or delete a logged row. The tables belong to the role
-- that ran `warden migrate`.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'warden_writer') THEN
		CREATE ROLE warden_writer NOLOGIN;
	END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
	NULL; -- created meanwhile by a migration of another database in the cluster
END
$$;

CREATE FUNCTION warden_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '% is append-only: % is not allowed', TG_TABLE_NAME, TG_OP
		USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TABLE audit (
	seq          bigint PRIMARY KEY CHECK (seq > 0),  -- 1, 2, 3… without gaps
	id           text   NOT NULL UNIQUE,
	trace_id     text   NOT NULL,
	created_at   bigint NOT NULL,                     -- Unix milliseconds, UTC
	capability   text   NOT NULL,
	action       text   NOT NULL,
	resource     text   NOT NULL,
	tool         text   NOT NULL,
	tier         smallint NOT NULL,
	requested_by text   NOT NULL,
	autonomous   boolean NOT NULL,
	session      text   NOT NULL,
	host         text   NOT NULL,
	verdict      text   NOT NULL CHECK (verdict IN ('deny', 'allow', 'sandbox', 'ask')),
	blocked      boolean NOT NULL,
	reason       text   NOT NULL,
	rule         text   NOT NULL,
	enc          bytea  NOT NULL,                     -- audit.AppendEntry: what hash covers
	prev_hash    text   NOT NULL,
	hash         text   NOT NULL
);
CREATE INDEX audit_created_at ON audit (created_at);
CREATE INDEX audit_trace_id ON audit (trace_id);

CREATE TABLE security_events (
	seq        bigint PRIMARY KEY CHECK (seq > 0),
	id         text   NOT NULL UNIQUE,
	trace_id   text   NOT NULL,
	created_at bigint NOT NULL,
	type       text   NOT NULL,
	severity   text   NOT NULL CHECK (severity IN ('info', 'warn', 'error', 'critical')),
	summary    text   NOT NULL,
	enc        bytea  NOT NULL,                       -- audit.AppendEvent
	prev_hash  text   NOT NULL,
	hash       text   NOT NULL
);
CREATE INDEX security_events_created_at ON security_events (created_at);
CREATE INDEX security_events_type ON security_events (type);
CREATE INDEX security_events_trace_id ON security_events (trace_id);

-- Keyed checkpoints of both chains (audit.Checkpoint), every 100 rows of
-- either and when a daemon stops.
CREATE TABLE chain_checkpoints (
	seq        bigint PRIMARY KEY CHECK (seq > 0),
	created_at bigint NOT NULL,
	audit_rows bigint NOT NULL CHECK (audit_rows >= 0),
	audit_head text   NOT NULL,
	event_rows bigint NOT NULL CHECK (event_rows >= 0),
	event_head text   NOT NULL,
	mac        text   NOT NULL
);

-- The spend ledger: one row per debit, dated at its audit entry.
CREATE TABLE spend_ledger (
	seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	created_at    bigint NOT NULL,
	trace_id      text   NOT NULL,
	amount_micros bigint NOT NULL CHECK (amount_micros >= 0)
);
CREATE INDEX spend_ledger_created_at ON spend_ledger (created_at);
CREATE INDEX spend_ledger_trace_id ON spend_ledger (trace_id);

-- Released reservations: the ledger rows of a trace given back, at most once.
CREATE TABLE spend_releases (
	trace_id   text   PRIMARY KEY,
	created_at bigint NOT NULL,
	reason     text   NOT NULL
);

-- Running totals of the ledger per minute (the debits of that minute less
-- their releases), kept by triggers on spend_ledger and spend_releases, so
-- the cap check sums at most 1,440 buckets and the rows of one minute
-- instead of a day of debits. The writer role cannot change them.
CREATE TABLE spend_minutes (
	minute        bigint PRIMARY KEY,                 -- floor(created_at / 60000)
	amount_micros bigint NOT NULL
);

CREATE FUNCTION warden_spend_debited() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	EXECUTE format('INSERT INTO %I.spend_minutes AS m (minute, amount_micros) VALUES ($1, $2)
		ON CONFLICT (minute) DO UPDATE SET amount_micros = m.amount_micros + EXCLUDED.amount_micros', TG_TABLE_SCHEMA)
		USING floor(NEW.created_at / 60000.0)::bigint, NEW.amount_micros;
	RETURN NULL;
END
$$;

CREATE FUNCTION warden_spend_released() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	EXECUTE format('UPDATE %1$I.spend_minutes m SET amount_micros = m.amount_micros - l.amount
		FROM (SELECT floor(created_at / 60000.0)::bigint AS minute, sum(amount_micros) AS amount FROM %1$I.spend_ledger
		      WHERE trace_id = $1 GROUP BY 1) l
		WHERE m.minute = l.minute', TG_TABLE_SCHEMA)
		USING NEW.trace_id;
	RETURN NULL;
END
$$;

CREATE TRIGGER spend_ledger_total AFTER INSERT ON spend_ledger
FOR EACH ROW EXECUTE FUNCTION warden_spend_debited();
CREATE TRIGGER spend_releases_total AFTER INSERT ON spend_releases
FOR EACH ROW EXECUTE FUNCTION warden_spend_released();

-- Rate-limit slots (signing's 10 an hour, 50 a day): a slot's hold becomes
-- spent (hold_until NULL) or is released, never deleted; its key (a request
-- id) is accepted once for all time.
CREATE TABLE rate_slots (
	kind        text   NOT NULL,
	trace_id    text   NOT NULL,
	key         text,
	created_at  bigint NOT NULL,
	hold_until  bigint,                               -- NULL: spent
	released_at bigint,
	reason      text,
	PRIMARY KEY (kind, trace_id)
);
CREATE UNIQUE INDEX rate_slots_key ON rate_slots (kind, key) WHERE key IS NOT NULL;
CREATE INDEX rate_slots_time ON rate_slots (kind, created_at);

CREATE FUNCTION warden_slot_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.kind IS DISTINCT FROM OLD.kind OR NEW.trace_id IS DISTINCT FROM OLD.trace_id
		OR NEW.key IS DISTINCT FROM OLD.key OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
		RAISE EXCEPTION 'a rate slot keeps its kind, trace, key and time' USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER rate_slots_update BEFORE UPDATE ON rate_slots
FOR EACH ROW EXECUTE FUNCTION warden_slot_update();

-- Approvals and grants: an approval ends once, from pending, and only its
-- answer changes; a once grant is used once and nothing else changes.
CREATE TABLE approvals (
	id          text   PRIMARY KEY,
	trace_id    text   NOT NULL,
	request     text   NOT NULL,                      -- JSON, redacted (warden.EncodeStoredRequest)
	decision    text   NOT NULL,                      -- JSON, redacted
	input_hash  text   NOT NULL,
	session     text   NOT NULL,
	created_at  bigint NOT NULL,
	expires_at  bigint NOT NULL,
	channel     text   NOT NULL,
	state       text   NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired')),
	answer      text   NOT NULL CHECK (answer IN ('', 'once', 'deny', 'session', 'always')),
	answered_by text   NOT NULL,
	answered_at bigint NOT NULL,                      -- 0 while pending
	note        text   NOT NULL,
	host        boolean NOT NULL DEFAULT false CHECK (NOT host OR answer = 'once')
);
CREATE INDEX approvals_state ON approvals (state, expires_at);
CREATE INDEX approvals_created_at ON approvals (created_at);
CREATE INDEX approvals_input ON approvals (input_hash, session);

CREATE FUNCTION warden_approval_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.state <> 'pending' OR NEW.state = 'pending'
		OR NEW.id IS DISTINCT FROM OLD.id OR NEW.trace_id IS DISTINCT FROM OLD.trace_id
		OR NEW.request IS DISTINCT FROM OLD.request
		OR NEW.decision IS DISTINCT FROM OLD.decision OR NEW.input_hash IS DISTINCT FROM OLD.input_hash
		OR NEW.session IS DISTINCT FROM OLD.session OR NEW.created_at IS DISTINCT FROM OLD.created_at
		OR NEW.expires_at IS DISTINCT FROM OLD.expires_at OR NEW.channel IS DISTINCT FROM OLD.channel THEN
		RAISE EXCEPTION 'an approval ends once, from pending, and only its answer changes' USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER approvals_update BEFORE UPDATE ON approvals
FOR EACH ROW EXECUTE FUNCTION warden_approval_update();

CREATE TABLE grants (
	id          text   PRIMARY KEY,
	kind        text   NOT NULL CHECK (kind IN ('once', 'session')),
	input_hash  text   NOT NULL,
	session     text   NOT NULL,
	approval_id text   NOT NULL REFERENCES approvals (id),
	granted_by  text   NOT NULL,
	created_at  bigint NOT NULL,
	expires_at  bigint NOT NULL,                      -- 0: no expiry
	used_at     bigint NOT NULL,                      -- 0: unused; once grants only
	host        boolean NOT NULL DEFAULT false CHECK (NOT host OR kind = 'once')
);
CREATE INDEX grants_input ON grants (input_hash, session);

CREATE FUNCTION warden_grant_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF OLD.kind <> 'once' OR OLD.used_at <> 0 OR NEW.used_at = 0
		OR NEW.id IS DISTINCT FROM OLD.id OR NEW.kind IS DISTINCT FROM OLD.kind
		OR NEW.input_hash IS DISTINCT FROM OLD.input_hash OR NEW.session IS DISTINCT FROM OLD.session
		OR NEW.approval_id IS DISTINCT FROM OLD.approval_id OR NEW.granted_by IS DISTINCT FROM OLD.granted_by
		OR NEW.created_at IS DISTINCT FROM OLD.created_at OR NEW.expires_at IS DISTINCT FROM OLD.expires_at
		OR NEW.host IS DISTINCT FROM OLD.host THEN
		RAISE EXCEPTION 'a grant is used once, and nothing else about it changes' USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER grants_update BEFORE UPDATE ON grants
FOR EACH ROW EXECUTE FUNCTION warden_grant_update();

-- The fleet's emergency stop: every engage and release, in order; the
-- newest row is the state.
CREATE TABLE kill_switch (
	seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	created_at bigint NOT NULL,
	engaged    boolean NOT NULL,
	set_by     text   NOT NULL,
	reason     text   NOT NULL
);

-- Append-only, whoever connects: the table owner and superusers included.
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER security_events_append_only BEFORE UPDATE OR DELETE ON security_events FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER security_events_no_truncate BEFORE TRUNCATE ON security_events FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER chain_checkpoints_append_only BEFORE UPDATE OR DELETE ON chain_checkpoints FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER chain_checkpoints_no_truncate BEFORE TRUNCATE ON chain_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER spend_ledger_append_only BEFORE UPDATE OR DELETE ON spend_ledger FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER spend_ledger_no_truncate BEFORE TRUNCATE ON spend_ledger FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER spend_releases_append_only BEFORE UPDATE OR DELETE ON spend_releases FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER spend_releases_no_truncate BEFORE TRUNCATE ON spend_releases FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER rate_slots_no_delete BEFORE DELETE ON rate_slots FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER rate_slots_no_truncate BEFORE TRUNCATE ON rate_slots FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER approvals_no_delete BEFORE DELETE ON approvals FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER approvals_no_truncate BEFORE TRUNCATE ON approvals FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER grants_no_delete BEFORE DELETE ON grants FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER grants_no_truncate BEFORE TRUNCATE ON grants FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER kill_switch_append_only BEFORE UPDATE OR DELETE ON kill_switch FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER kill_switch_no_truncate BEFORE TRUNCATE ON kill_switch FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER spend_minutes_no_delete BEFORE DELETE ON spend_minutes FOR EACH ROW EXECUTE FUNCTION warden_append_only();
CREATE TRIGGER spend_minutes_no_truncate BEFORE TRUNCATE ON spend_minutes FOR EACH STATEMENT EXECUTE FUNCTION warden_append_only();

-- And by privilege: the writer role may not update or delete what it logged.
DO $$
BEGIN
	EXECUTE format('GRANT USAGE ON SCHEMA %I TO warden_writer', current_schema());
END
$$;
REVOKE ALL ON audit, security_events, chain_checkpoints, spend_ledger, spend_releases, spend_minutes,
	rate_slots, approvals, grants, kill_switch, warden_schema FROM PUBLIC;
GRANT SELECT, INSERT ON audit, security_events, chain_checkpoints, spend_ledger, spend_releases, kill_switch TO warden_writer;
GRANT SELECT ON spend_minutes, warden_schema TO warden_writer;
GRANT SELECT, INSERT ON rate_slots, approvals, grants TO warden_writer;
GRANT UPDATE (hold_until, released_at, reason) ON rate_slots TO warden_writer;
GRANT UPDATE (state, answer, answered_by, answered_at, note, host) ON approvals TO warden_writer;
GRANT UPDATE (used_at) ON grants TO warden_writer;
