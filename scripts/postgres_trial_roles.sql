-- Trial roles for trajcheck's PostgreSQL sandbox (core/run/sandbox.py), installed by
-- scripts/start_postgres.sh as the bootstrap superuser into the database it hands out. For your
-- own database, as a superuser connected to it:
--   psql -v app_role=<the role trajcheck connects as> -v db=<database> -f postgres_trial_roles.sql
--
-- The handed-out role `trajcheck` has no CREATEROLE: before PostgreSQL 16 a CREATEROLE role can
-- grant itself pg_execute_server_program (shell commands as the server's OS user), i.e. it
-- equals superuser. Instead, trial roles are made and dropped by the two functions below,
-- SECURITY DEFINER as the NOLOGIN role `trajcheck_trials`, which no login role is a member of.
-- What a caller controls is a role name and a password, passed only through format's %I / %L;
-- the attributes are fixed, so a caller can make confined roles and nothing else, and can drop
-- only roles these functions made (the table `made`).

-- INHERIT: DROP OWNED BY and DROP SCHEMA need the privileges of the trial role it is a member of
CREATE ROLE trajcheck_trials NOLOGIN NOSUPERUSER NOCREATEDB CREATEROLE INHERIT NOREPLICATION NOBYPASSRLS;
GRANT CREATE ON DATABASE :"db" TO trajcheck_trials;

-- Owned by the superuser: `trajcheck` (the database owner) cannot alter or replace what is in it.
CREATE SCHEMA trajcheck_trials;
REVOKE ALL ON SCHEMA trajcheck_trials FROM PUBLIC;
GRANT USAGE ON SCHEMA trajcheck_trials TO :"app_role", trajcheck_trials;

CREATE TABLE trajcheck_trials.made (role_name name PRIMARY KEY, made_at timestamptz NOT NULL DEFAULT now());
ALTER TABLE trajcheck_trials.made OWNER TO trajcheck_trials;
REVOKE ALL ON trajcheck_trials.made FROM PUBLIC;

CREATE FUNCTION trajcheck_trials.open_trial(role_name text, password text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- a lowercase identifier, as core/run/sandbox.py makes them (schema_prefix + 16 hex digits)
    IF role_name !~ '^[a-z_][a-z0-9_]{16,62}$' THEN
        RAISE EXCEPTION 'open_trial: % is not a trial role name', role_name;
    END IF;
    EXECUTE format('CREATE ROLE %I LOGIN PASSWORD %L NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT '
                   'NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 2', role_name, password);
    INSERT INTO trajcheck_trials.made (role_name) VALUES (role_name);
    -- membership lets the definer make the schema for the role and drop what it owns later
    EXECUTE format('GRANT %I TO trajcheck_trials', role_name);
    EXECUTE format('CREATE SCHEMA %I AUTHORIZATION %I', role_name, role_name);
    EXECUTE format('ALTER ROLE %I SET search_path TO %I', role_name, role_name);
END
$$;

CREATE FUNCTION trajcheck_trials.close_trial(role_name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM trajcheck_trials.made m WHERE m.role_name = close_trial.role_name) THEN
        RAISE EXCEPTION 'close_trial: % was not made by open_trial', role_name;
    END IF;
    EXECUTE format('DROP SCHEMA IF EXISTS %I CASCADE', role_name);
    EXECUTE format('DROP OWNED BY %I', role_name);
    EXECUTE format('DROP ROLE %I', role_name);
    DELETE FROM trajcheck_trials.made m WHERE m.role_name = close_trial.role_name;
END
$$;

ALTER FUNCTION trajcheck_trials.open_trial(text, text) OWNER TO trajcheck_trials;
ALTER FUNCTION trajcheck_trials.close_trial(text) OWNER TO trajcheck_trials;
REVOKE ALL ON FUNCTION trajcheck_trials.open_trial(text, text), trajcheck_trials.close_trial(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION trajcheck_trials.open_trial(text, text), trajcheck_trials.close_trial(text) TO :"app_role";
