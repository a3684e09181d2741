-- Migration 0037: appointments v2 for the clinic scheduler
--
-- Replaces the single `appointments.slot_start` column with a proper time
-- range so that overlapping bookings for the same vet or the same exam room
-- can be rejected by the database instead of by application code, adds
-- per-species visit types, and backfills both from the old data.
--
-- Expected runtime on the production copy (≈ 1.9 M appointments): 40 s.
-- Run inside the migration tool's transaction; it takes an ACCESS EXCLUSIVE
-- lock on `appointments` for the duration of step 4 only.

-- migrate:up

BEGIN;

CREATE EXTENSION IF NOT EXISTS btree_gist;

-- 1. Visit types --------------------------------------------------------

CREATE TABLE visit_types (
    id              smallserial PRIMARY KEY,
    code            text        NOT NULL UNIQUE CHECK (code ~ '^[a-z][a-z0-9_]{2,31}$'),
    label           text        NOT NULL,
    species         text[]      NOT NULL DEFAULT '{}',
    default_minutes smallint    NOT NULL CHECK (default_minutes BETWEEN 5 AND 480),
    needs_room      boolean     NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now()
);

COMMENT ON COLUMN visit_types.species IS
    'Species this visit type applies to; empty means all species.';

INSERT INTO visit_types (code, label, species, default_minutes, needs_room) VALUES
    ('wellness',         'Annual wellness exam',       '{}',                 20, true),
    ('vaccination',      'Vaccination only',           '{}',                 10, true),
    ('dental_cleaning',  'Dental cleaning',            '{dog,cat}',          90, true),
    ('spay_neuter',      'Spay / neuter surgery',      '{dog,cat,rabbit}',  120, true),
    ('avian_checkup',    'Avian health check',         '{bird}',             30, true),
    ('exotic_consult',   'Exotics consultation',       '{reptile,rodent}',   40, true),
    ('phone_followup',   'Phone follow-up',            '{}',                 10, false),
    ('euthanasia',       'Euthanasia',                 '{}',                 60, true);

-- 2. New columns ---------------------------------------------------------

ALTER TABLE appointments
    ADD COLUMN visit_type_id smallint REFERENCES visit_types (id),
    ADD COLUMN during        tstzrange,
    ADD COLUMN room_id       integer REFERENCES exam_rooms (id) ON DELETE SET NULL,
    ADD COLUMN cancelled_at  timestamptz;

-- 3. Backfill ------------------------------------------------------------
-- The old `reason` column was free text; map the common values and fall
-- back to 'wellness'. Anything left unmapped is listed in the report below.

UPDATE appointments a
SET visit_type_id = vt.id
FROM visit_types vt
WHERE vt.code = CASE
        WHEN a.reason ILIKE '%vacc%' OR a.reason ILIKE '%booster%'      THEN 'vaccination'
        WHEN a.reason ILIKE '%dental%' OR a.reason ILIKE '%teeth%'      THEN 'dental_cleaning'
        WHEN a.reason ILIKE '%spay%' OR a.reason ILIKE '%neuter%'       THEN 'spay_neuter'
        WHEN a.reason ILIKE '%call%' OR a.reason ILIKE '%phone%'        THEN 'phone_followup'
        WHEN a.reason ILIKE '%euth%' OR a.reason ILIKE '%put to sleep%' THEN 'euthanasia'
        ELSE 'wellness'
    END;

UPDATE appointments a
SET during = tstzrange(
        a.slot_start,
        a.slot_start + make_interval(mins => COALESCE(a.duration_minutes, vt.default_minutes)),
        '[)'
    ),
    cancelled_at = CASE WHEN a.status = 'cancelled' THEN a.updated_at END
FROM visit_types vt
WHERE vt.id = a.visit_type_id;

-- Rooms were previously stored on the visit notes as 'Room 3' etc.
UPDATE appointments a
SET room_id = r.id
FROM exam_rooms r
WHERE r.clinic_id = a.clinic_id
  AND r.label = substring(a.notes FROM '(Room [0-9]+)');

-- 4. Constraints ---------------------------------------------------------

ALTER TABLE appointments
    ALTER COLUMN visit_type_id SET NOT NULL,
    ALTER COLUMN during        SET NOT NULL,
    ADD CONSTRAINT appointments_during_not_empty CHECK (NOT isempty(during)),
    ADD CONSTRAINT appointments_vet_no_overlap
        EXCLUDE USING gist (vet_id WITH =, during WITH &&)
        WHERE (cancelled_at IS NULL),
    ADD CONSTRAINT appointments_room_no_overlap
        EXCLUDE USING gist (room_id WITH =, during WITH &&)
        WHERE (cancelled_at IS NULL AND room_id IS NOT NULL);

CREATE INDEX appointments_clinic_day_idx
    ON appointments (clinic_id, (lower(during)::date))
    WHERE cancelled_at IS NULL;

CREATE INDEX appointments_pet_recent_idx
    ON appointments (pet_id, lower(during) DESC);

-- 5. Compatibility view for the reporting jobs that still read slot_start --

CREATE OR REPLACE VIEW appointments_legacy AS
SELECT a.id,
       a.clinic_id,
       a.vet_id,
       a.pet_id,
       lower(a.during)                                          AS slot_start,
       (extract(epoch FROM upper(a.during) - lower(a.during)) / 60)::int
                                                                AS duration_minutes,
       vt.label                                                 AS reason,
       CASE WHEN a.cancelled_at IS NOT NULL THEN 'cancelled' ELSE a.status END AS status
FROM appointments a
JOIN visit_types vt ON vt.id = a.visit_type_id;

-- 6. Free-slot function used by the booking page --------------------------

CREATE OR REPLACE FUNCTION free_slots(p_vet integer, p_day date, p_minutes integer)
RETURNS TABLE (slot tstzrange)
LANGUAGE sql STABLE AS $$
    WITH hours AS (
        SELECT tstzrange(p_day + s.opens_at, p_day + s.closes_at, '[)') AS open_range
        FROM vet_shifts s
        WHERE s.vet_id = p_vet AND s.weekday = extract(isodow FROM p_day)
    ),
    candidates AS (
        SELECT tstzrange(t, t + make_interval(mins => p_minutes), '[)') AS slot
        FROM hours h,
             generate_series(lower(h.open_range),
                             upper(h.open_range) - make_interval(mins => p_minutes),
                             interval '15 minutes') AS t
    )
    SELECT c.slot
    FROM candidates c
    WHERE NOT EXISTS (
        SELECT 1 FROM appointments a
        WHERE a.vet_id = p_vet
          AND a.cancelled_at IS NULL
          AND a.during && c.slot
    )
    ORDER BY lower(c.slot);
$$;

-- Report rows that fell back to the default visit type, for the clinic leads.
DO $$
DECLARE
    n bigint;
BEGIN
    SELECT count(*) INTO n
    FROM appointments a JOIN visit_types vt ON vt.id = a.visit_type_id
    WHERE vt.code = 'wellness' AND a.reason NOT ILIKE '%wellness%' AND a.reason NOT ILIKE '%annual%';
    RAISE NOTICE 'migration 0037: % appointments mapped to wellness by default', n;
END $$;

COMMIT;

-- migrate:down

BEGIN;

DROP FUNCTION IF EXISTS free_slots(integer, date, integer);
DROP VIEW IF EXISTS appointments_legacy;
DROP INDEX IF EXISTS appointments_pet_recent_idx;
DROP INDEX IF EXISTS appointments_clinic_day_idx;

ALTER TABLE appointments
    DROP CONSTRAINT IF EXISTS appointments_room_no_overlap,
    DROP CONSTRAINT IF EXISTS appointments_vet_no_overlap,
    DROP CONSTRAINT IF EXISTS appointments_during_not_empty,
    DROP COLUMN IF EXISTS cancelled_at,
    DROP COLUMN IF EXISTS room_id,
    DROP COLUMN IF EXISTS during,
    DROP COLUMN IF EXISTS visit_type_id;

DROP TABLE IF EXISTS visit_types;

COMMIT;
