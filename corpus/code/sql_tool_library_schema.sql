-- Tool library: schema and the queries behind the volunteer desk app.
--
-- Members borrow tools (drills, ladders, a tile cutter) for up to a week.
-- Each physical item is a copy of a catalogue tool; a loan is one copy to
-- one member. Fines are not charged: late returns lower a member's limit.
--
-- Target: PostgreSQL 15. Run inside one transaction.

BEGIN;

CREATE SCHEMA IF NOT EXISTS toollib;
SET search_path = toollib, public;

-- ---------------------------------------------------------------- members

CREATE TABLE member (
    member_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    card_number   text        NOT NULL UNIQUE CHECK (card_number ~ '^TL-[0-9]{5}$'),
    full_name     text        NOT NULL,
    email         text        UNIQUE,
    phone         text,
    postcode      text        NOT NULL,
    joined_at     date        NOT NULL DEFAULT current_date,
    -- How many items may be out at once; lowered after late returns.
    loan_limit    smallint    NOT NULL DEFAULT 3 CHECK (loan_limit BETWEEN 0 AND 6),
    waiver_signed boolean     NOT NULL DEFAULT false,
    notes         text
);

COMMENT ON COLUMN member.waiver_signed IS
    'Safety waiver for power tools; required before any tool with needs_waiver.';

-- ---------------------------------------------------------------- catalogue

CREATE TYPE tool_condition AS ENUM ('good', 'worn', 'needs_repair', 'retired');

CREATE TABLE tool (
    tool_id       integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text     NOT NULL,
    category      text     NOT NULL,
    needs_waiver  boolean  NOT NULL DEFAULT false,
    max_days      smallint NOT NULL DEFAULT 7 CHECK (max_days > 0),
    deposit_pence integer  NOT NULL DEFAULT 0,
    UNIQUE (name, category)
);

CREATE TABLE tool_copy (
    copy_id     integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tool_id     integer        NOT NULL REFERENCES tool ON DELETE RESTRICT,
    barcode     text           NOT NULL UNIQUE,
    condition   tool_condition NOT NULL DEFAULT 'good',
    donated_by  text,
    acquired_on date
);

CREATE INDEX tool_copy_tool_idx ON tool_copy (tool_id) WHERE condition <> 'retired';

-- ---------------------------------------------------------------- loans

CREATE TABLE loan (
    loan_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    copy_id     integer     NOT NULL REFERENCES tool_copy,
    member_id   bigint      NOT NULL REFERENCES member,
    out_at      timestamptz NOT NULL DEFAULT now(),
    due_on      date        NOT NULL,
    returned_at timestamptz,
    returned_condition tool_condition,
    CHECK (returned_at IS NULL OR returned_at >= out_at),
    CHECK ((returned_at IS NULL) = (returned_condition IS NULL))
);

-- A copy can be out on at most one loan at a time.
CREATE UNIQUE INDEX loan_one_open_per_copy ON loan (copy_id) WHERE returned_at IS NULL;
CREATE INDEX loan_member_open_idx ON loan (member_id) WHERE returned_at IS NULL;
CREATE INDEX loan_due_idx ON loan (due_on) WHERE returned_at IS NULL;

CREATE TABLE reservation (
    reservation_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tool_id        integer     NOT NULL REFERENCES tool,
    member_id      bigint      NOT NULL REFERENCES member,
    created_at     timestamptz NOT NULL DEFAULT now(),
    fulfilled_loan bigint      REFERENCES loan,
    cancelled_at   timestamptz
);

CREATE UNIQUE INDEX reservation_one_active
    ON reservation (tool_id, member_id)
    WHERE fulfilled_loan IS NULL AND cancelled_at IS NULL;

-- ---------------------------------------------------------------- rules

-- Refuse a loan that breaks the member's limit or the waiver rule.
CREATE FUNCTION check_loan_allowed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    m        member%ROWTYPE;
    open_n   integer;
    waiver   boolean;
BEGIN
    SELECT * INTO m FROM member WHERE member_id = NEW.member_id;
    SELECT count(*) INTO open_n FROM loan
     WHERE member_id = NEW.member_id AND returned_at IS NULL;
    IF open_n >= m.loan_limit THEN
        RAISE EXCEPTION 'member % already has % of % items out',
            m.card_number, open_n, m.loan_limit
            USING ERRCODE = 'check_violation';
    END IF;

    SELECT t.needs_waiver INTO waiver
      FROM tool_copy c JOIN tool t USING (tool_id)
     WHERE c.copy_id = NEW.copy_id;
    IF waiver AND NOT m.waiver_signed THEN
        RAISE EXCEPTION 'member % has not signed the power-tool waiver', m.card_number
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER loan_allowed BEFORE INSERT ON loan
    FOR EACH ROW EXECUTE FUNCTION check_loan_allowed();

COMMIT;

-- ================================================================ queries
-- Named queries used by the desk app (sqlc-style annotations).

-- name: AvailableCopies :many
-- Copies of a tool that are on the shelf and usable, best condition first.
SELECT c.copy_id, c.barcode, c.condition
  FROM tool_copy c
 WHERE c.tool_id = $1
   AND c.condition IN ('good', 'worn')
   AND NOT EXISTS (SELECT 1 FROM loan l WHERE l.copy_id = c.copy_id AND l.returned_at IS NULL)
 ORDER BY c.condition, c.copy_id;

-- name: CheckOut :one
INSERT INTO loan (copy_id, member_id, due_on)
SELECT $1, $2, current_date + t.max_days
  FROM tool_copy c JOIN tool t USING (tool_id)
 WHERE c.copy_id = $1
RETURNING loan_id, due_on;

-- name: CheckIn :exec
UPDATE loan
   SET returned_at = now(), returned_condition = $2
 WHERE loan_id = $1 AND returned_at IS NULL;

-- name: OverdueLoans :many
-- For the Saturday phone round: who has what, how late, and how to reach them.
SELECT m.card_number,
       m.full_name,
       coalesce(m.phone, m.email)         AS contact,
       t.name                             AS tool,
       c.barcode,
       l.due_on,
       current_date - l.due_on            AS days_late
  FROM loan l
  JOIN member m    USING (member_id)
  JOIN tool_copy c USING (copy_id)
  JOIN tool t      USING (tool_id)
 WHERE l.returned_at IS NULL
   AND l.due_on < current_date
 ORDER BY days_late DESC, m.full_name;

-- name: MostWantedTools :many
-- Tools with the most loans and reservations over the last 90 days, with the
-- share of days at least one copy was out: candidates for buying a second copy.
WITH days AS (
    SELECT generate_series(current_date - 89, current_date, interval '1 day')::date AS d
),
busy AS (
    SELECT c.tool_id, d.d
      FROM days d
      JOIN loan l ON l.out_at::date <= d.d AND coalesce(l.returned_at::date, current_date) >= d.d
      JOIN tool_copy c USING (copy_id)
     GROUP BY c.tool_id, d.d
)
SELECT t.name,
       t.category,
       (SELECT count(*) FROM tool_copy c WHERE c.tool_id = t.tool_id AND c.condition <> 'retired') AS copies,
       (SELECT count(*) FROM loan l JOIN tool_copy c USING (copy_id)
         WHERE c.tool_id = t.tool_id AND l.out_at > now() - interval '90 days')                 AS loans_90d,
       (SELECT count(*) FROM reservation r
         WHERE r.tool_id = t.tool_id AND r.created_at > now() - interval '90 days')             AS reservations_90d,
       round(100.0 * count(b.d) / 90, 1)                                                        AS pct_days_out
  FROM tool t
  LEFT JOIN busy b USING (tool_id)
 GROUP BY t.tool_id
HAVING count(b.d) > 0
 ORDER BY pct_days_out DESC, loans_90d DESC
 LIMIT 15;

-- name: LowerLimitsForLateReturns :exec
-- Monthly job: members with two or more returns over 3 days late in the last
-- six months lose one from their limit (never below 1).
UPDATE member m
   SET loan_limit = greatest(1, m.loan_limit - 1),
       notes = concat_ws(E'\n', m.notes, format('%s: limit lowered for late returns', current_date))
 WHERE (SELECT count(*) FROM loan l
         WHERE l.member_id = m.member_id
           AND l.returned_at > now() - interval '6 months'
           AND l.returned_at::date - l.due_on > 3) >= 2;
